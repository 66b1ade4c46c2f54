//! Shard_map programs whose devices take different paths (a `case` on
//! `partition_id`, a `while` whose trip count is `partition_id`), shared
//! by the reference interpreter's tests and the lockstep executor's
//! (include with `#[path]`).

use meshrun_compiler::ir::Module;
use meshrun_compiler::text::parse_module;
use meshrun_kernels::HostTensor;

/// A shard_map over `x` = 4 whose body branches on the device
/// (`partition_id` mod 2): even devices negate their block, odd ones run
/// `odd` on it (it defines `%m` from `%arg1`).
pub fn branching_program(odd: &str) -> Module {
    let text = format!(
        r#"module @branching {{
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {{
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{{"x"}}]>] out_shardings=[<@mesh, [{{"x"}}]>] manual_axes={{"x"}} (%arg1: tensor<2xf32>) {{
      %1 = stablehlo.partition_id : tensor<ui32>
      %2 = stablehlo.convert %1 : (tensor<ui32>) -> tensor<i32>
      %3 = stablehlo.constant dense<2> : tensor<i32>
      %4 = stablehlo.remainder %2, %3 : tensor<i32>
      %5 = "stablehlo.case"(%4) ({{
        %n = stablehlo.negate %arg1 : tensor<2xf32>
        stablehlo.return %n : tensor<2xf32>
      }}, {{
        {odd}
        stablehlo.return %m : tensor<2xf32>
      }}) : (tensor<i32>) -> tensor<2xf32>
      sdy.return %5 : tensor<2xf32>
    }} : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }}
}}"#
    );
    parse_module(&text).unwrap_or_else(|d| panic!("{d}"))
}

/// A shard_map over `x` = 4 whose `while` runs `partition_id` times:
/// each device doubles its block that many times (device 0 not at all),
/// the loop ending per device.
pub fn looping_program() -> Module {
    let text = r#"module @looping {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%arg1: tensor<2xf32>) {
      %1 = stablehlo.partition_id : tensor<ui32>
      %n = stablehlo.convert %1 : (tensor<ui32>) -> tensor<i32>
      %c0 = stablehlo.constant dense<0> : tensor<i32>
      %r:2 = stablehlo.while(%i = %c0, %x = %arg1) : tensor<i32>, tensor<2xf32>
      cond {
        %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %p : tensor<i1>
      } do {
        %d = stablehlo.add %x, %x : tensor<2xf32>
        %one = stablehlo.constant dense<1> : tensor<i32>
        %i1 = stablehlo.add %i, %one : tensor<i32>
        stablehlo.return %i1, %d : tensor<i32>, tensor<2xf32>
      }
      sdy.return %r#1 : tensor<2xf32>
    } : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}"#;
    parse_module(text).unwrap_or_else(|d| panic!("{d}"))
}

pub fn psum_odd(groups: &str) -> String {
    format!(
        r#"%m = "stablehlo.all_reduce"(%arg1) <{{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = {groups}, use_global_device_ids}}> ({{
        ^bb0(%a: tensor<f32>, %b: tensor<f32>):
          %s = stablehlo.add %a, %b : tensor<f32>
          stablehlo.return %s : tensor<f32>
        }}) : (tensor<2xf32>) -> tensor<2xf32>"#
    )
}

pub fn iota8() -> Vec<HostTensor> {
    vec![HostTensor::from_vec(&[8], (0..8).map(|i| i as f32).collect::<Vec<_>>()).unwrap()]
}
