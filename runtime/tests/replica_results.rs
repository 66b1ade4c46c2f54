//! Simulated devices take the results a replica made from the same
//! blocks (`replica_results`): a data-parallel weight update is computed
//! once per group of replicas, with the bits every replica would have
//! computed.

use std::sync::Arc;

use meshrun_compiler::text::parse_module;
use meshrun_kernels::HostTensor;
use meshrun_runtime::pipeline::compile;
use meshrun_runtime::random_inputs::random_inputs;
use meshrun_runtime::{CpuBackend, CpuExecutor, ExecOptions, Executor};

/// One SGD step of a 512x512 layer on a data=4 x model=2 mesh: `w` is
/// replicated and its gradient summed over `data` (one block every
/// member of a `data` group holds); `b` is sharded on `model`.
const STEP: &str = r#"module @step {
  sdy.mesh @mesh = <["data"=4, "model"=2]>
  func.func public @main(%x: tensor<64x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %dy: tensor<64x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %w: tensor<512x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %b: tensor<1024x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}) -> (tensor<512x512xf32>, tensor<1024x512xf32>) {
    %g = stablehlo.dot_general %x, %dy, contracting_dims = [0] x [0] : (tensor<64x512xf32>, tensor<64x512xf32>) -> tensor<512x512xf32>
    %lr = stablehlo.constant dense<0.01> : tensor<f32>
    %l = stablehlo.broadcast_in_dim %lr, dims = [] : (tensor<f32>) -> tensor<512x512xf32>
    %s = stablehlo.multiply %l, %g : tensor<512x512xf32>
    %w2 = stablehlo.subtract %w, %s : tensor<512x512xf32>
    %l2 = stablehlo.broadcast_in_dim %lr, dims = [] : (tensor<f32>) -> tensor<1024x512xf32>
    %e = stablehlo.exponential %b : tensor<1024x512xf32>
    %b2 = stablehlo.multiply %l2, %e : tensor<1024x512xf32>
    return %w2, %b2 : tensor<512x512xf32>, tensor<1024x512xf32>
  }
}"#;

/// Each device's output blocks, and the gathered outputs (replicas
/// checked bitwise).
fn run(executor: CpuExecutor, share: bool) -> (Vec<Vec<Arc<HostTensor>>>, Vec<HostTensor>) {
    let module = parse_module(STEP).expect("parses");
    let f = module.func("main").expect("@main");
    let types: Vec<_> = f.args.iter().map(|&a| f.ty(a).clone()).collect();
    let inputs = random_inputs(&types, 3).expect("inputs");
    let program = compile(&module).expect("compiles");
    let exec = Executor::new(&program.device).expect("executor");
    let backend = CpuBackend::new()
        .with_executor(executor)
        .with_shared_results(share);
    let placed = exec.place(&backend, &inputs).expect("placed");
    let outs = exec
        .run(&backend, &placed, &ExecOptions::default())
        .expect("runs");
    let blocks = outs.per_device.clone();
    (blocks, exec.gather(&backend, outs, true).expect("gathered"))
}

fn bits(ts: &[HostTensor]) -> Vec<Vec<u64>> {
    ts.iter()
        .map(|t| t.to_f64_vec().iter().map(|v| v.to_bits()).collect())
        .collect()
}

#[test]
fn replicas_share_an_update_with_the_bits_of_computing_it_each() {
    for executor in [CpuExecutor::Lockstep, CpuExecutor::Threads] {
        replicas_share_an_update(executor);
    }
}

fn replicas_share_an_update(executor: CpuExecutor) {
    let (shared, with) = run(executor, true);
    let (own, without) = run(executor, false);
    assert_eq!(bits(&with), bits(&without));
    // Devices 0..8 are (data, model) = (d, m) at 2d + m. Within each
    // `model` half the devices hold the same `w`, the same summed
    // gradient (each half's all-reduce builds its own) and the same `b`
    // block, so one of them computes both updates.
    for m in 0..2 {
        for d in 1..4 {
            let dev = 2 * d + m;
            for out in 0..2 {
                assert!(
                    Arc::ptr_eq(&shared[m][out], &shared[dev][out]),
                    "output {out} on {dev}"
                );
                assert!(
                    !Arc::ptr_eq(&own[m][out], &own[dev][out]),
                    "unshared: {out} on {dev}"
                );
            }
        }
    }
    assert!(!Arc::ptr_eq(&shared[0][1], &shared[1][1]), "other halves");
}
