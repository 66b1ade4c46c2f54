//! Control flow that differs between devices, run by the lockstep
//! executor: a `case` on `partition_id` inside a shard_map sends devices
//! down different branches; each set of devices runs its branch in
//! lockstep and they rejoin after it. A collective inside a branch works
//! when each of its groups took that branch whole, and is an error naming
//! the missing device when a group is split (a thread per device would
//! wait for that device forever).

#[path = "common/branching.rs"]
mod branching;

use branching::{branching_program, iota8, looping_program, psum_odd};
use meshrun_compiler::Module;
use meshrun_runtime::pipeline::compile;
use meshrun_runtime::{CpuBackend, CpuExecutor, ExecOptions, Executor};

fn run(m: &Module, executor: CpuExecutor) -> Result<Vec<f32>, String> {
    let program = compile(m).map_err(|d| d.message)?;
    let exec = Executor::new(&program.device).map_err(|e| e.to_string())?;
    let backend = CpuBackend::new().with_executor(executor);
    let out = exec
        .run_global(&backend, &iota8(), &ExecOptions::default())
        .map_err(|e| e.to_string())?;
    Ok(out[0].to_f64_vec().iter().map(|&v| v as f32).collect())
}

fn both_executors_give(m: &Module, want: &[f32]) {
    for executor in [CpuExecutor::Lockstep, CpuExecutor::Threads] {
        assert_eq!(run(m, executor).expect("runs"), want, "{executor:?}");
    }
}

#[test]
fn devices_take_their_own_branches_and_rejoin() {
    let m = branching_program("%m = stablehlo.multiply %arg1, %arg1 : tensor<2xf32>");
    let want = vec![-0.0f32, -1.0, 4.0, 9.0, -4.0, -5.0, 36.0, 49.0];
    both_executors_give(&m, &want);
}

#[test]
fn a_collective_in_a_branch_its_groups_took_whole_runs() {
    let m = branching_program(&psum_odd("dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>"));
    let want = vec![-0.0f32, -1.0, 8.0, 10.0, -4.0, -5.0, 8.0, 10.0];
    both_executors_give(&m, &want);
}

#[test]
fn a_collective_whose_group_is_split_between_branches_is_an_error() {
    let m = branching_program(&psum_odd("dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>"));
    let err = run(&m, CpuExecutor::Lockstep).expect_err("a split group");
    assert!(
        err.contains("device 0 of this collective is not on this device's control path"),
        "{err}"
    );
    assert!(!err.contains('\n'), "{err}");
}

/// A loop whose trip count is the device's `partition_id`: devices leave
/// the loop one by one while the others run on.
#[test]
fn devices_leave_a_loop_after_their_own_trip_counts() {
    let m = looping_program();
    // Device d holds elements 2d and 2d+1, doubled d times.
    let want: Vec<f32> = (0..8).map(|i| (i as f32) * (1 << (i / 2)) as f32).collect();
    both_executors_give(&m, &want);
}
