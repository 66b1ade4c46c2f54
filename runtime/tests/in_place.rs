//! Ops that write into their first operand's block when it dies with
//! them (reshape, scatter, dynamic_update_slice: `Device::op_into`):
//! results equal the reference interpreter's, and a block someone else
//! still holds is never written. The program scatters into and updates a
//! program input (the caller keeps it: a second run on the same placed
//! inputs must give the same results), a value that is read again later,
//! values that die (a broadcast of zeros, a loop carry updated each
//! iteration), on 1 and 8 devices, with both executors.

use meshrun_compiler::text::parse_module;
use meshrun_kernels::{HostTensor, Parallelism};
use meshrun_runtime::compare::mismatch;
use meshrun_runtime::pipeline::compile;
use meshrun_runtime::reference::run_function;
use meshrun_runtime::{CpuBackend, CpuExecutor, ExecOptions, Executor};

fn program(mesh: &str, sharding: &str) -> String {
    format!(
        r#"module @m {{
  sdy.mesh @mesh = <[{mesh}]>
  func.func public @main(%x: tensor<8x16xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{sharding}, {{}}]>}}, %i: tensor<4x1xi32>, %u: tensor<4x16xf32>) -> (tensor<8x16xf32>, tensor<128xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {{
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %zeros = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %s0 = "stablehlo.scatter"(%zeros, %i, %u) <{{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}}> ({{
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %t = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }}) : (tensor<8x16xf32>, tensor<4x1xi32>, tensor<4x16xf32>) -> tensor<8x16xf32>
    %s1 = "stablehlo.scatter"(%x, %i, %u) <{{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}}> ({{
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %t = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }}) : (tensor<8x16xf32>, tensor<4x1xi32>, tensor<4x16xf32>) -> tensor<8x16xf32>
    %flat = stablehlo.reshape %s1 : (tensor<8x16xf32>) -> tensor<128xf32>
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %row = stablehlo.slice %u [0:1, 0:16] : (tensor<4x16xf32>) -> tensor<1x16xf32>
    %d = stablehlo.dynamic_update_slice %x, %row, %c1, %c0 : (tensor<8x16xf32>, tensor<1x16xf32>, tensor<i32>, tensor<i32>) -> tensor<8x16xf32>
    %again = stablehlo.add %s1, %d : tensor<8x16xf32>
    %c4 = stablehlo.constant dense<4> : tensor<i32>
    %r:2 = stablehlo.while(%k = %c0, %acc = %s0) : tensor<i32>, tensor<8x16xf32>
    cond {{
      %p = stablehlo.compare LT, %k, %c4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }} do {{
      %two = stablehlo.constant dense<2> : tensor<i32>
      %at = stablehlo.multiply %k, %two : tensor<i32>
      %next = stablehlo.dynamic_update_slice %acc, %row, %at, %c0 : (tensor<8x16xf32>, tensor<1x16xf32>, tensor<i32>, tensor<i32>) -> tensor<8x16xf32>
      %k1 = stablehlo.add %k, %c1 : tensor<i32>
      stablehlo.return %k1, %next : tensor<i32>, tensor<8x16xf32>
    }}
    return %s0, %flat, %again, %r#1, %x : tensor<8x16xf32>, tensor<128xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
  }}
}}"#
    )
}

fn inputs() -> Vec<HostTensor> {
    let x: Vec<f32> = (0..128).map(|k| k as f32 * 0.25 - 7.0).collect();
    let u: Vec<f32> = (0..64).map(|k| 100.0 + k as f32).collect();
    vec![
        HostTensor::from_vec(&[8, 16], x).unwrap(),
        // Row 5 twice: the updates add up.
        HostTensor::from_vec(&[4, 1], vec![5i32, 0, 5, 7]).unwrap(),
        HostTensor::from_vec(&[4, 16], u).unwrap(),
    ]
}

#[test]
fn ops_writing_into_dying_operands_give_the_reference_results_and_spare_held_blocks() {
    for (mesh, sharding) in [
        (r#""x"=1"#, r#"{"x"}"#),
        (r#""x"=8"#, r#"{"x"}"#),
        (r#""x"=8"#, "{}"),
    ] {
        let text = program(mesh, sharding);
        let module = parse_module(&text).unwrap_or_else(|d| panic!("{d}\n{text}"));
        let ins = inputs();
        let want = run_function(&module, "main", &ins, Parallelism::None).expect("reference");
        // The input comes back unchanged as the last output.
        assert_eq!(want[4], ins[0]);
        let program = compile(&module).unwrap_or_else(|d| panic!("compile: {d}"));
        let exec = Executor::new(&program.device).expect("plan");
        for executor in [CpuExecutor::Lockstep, CpuExecutor::Threads] {
            let backend = CpuBackend::new().with_executor(executor);
            let placed = exec.place(&backend, &ins).expect("place");
            // Twice on the same placed inputs: a run that wrote into an
            // input's block would change the second run's results.
            for round in 0..2 {
                let outs = exec
                    .run(&backend, &placed, &ExecOptions::default())
                    .expect("runs");
                let got = exec.gather(&backend, outs, false).expect("gather");
                for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                    if let Some(m) = mismatch(g, w, 0.0) {
                        panic!("{mesh} {sharding} {executor:?} run {round}, output {k}: {m}");
                    }
                }
            }
        }
    }
}
