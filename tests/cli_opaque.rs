//! Custom calls meshrun has no kernel for and `!stablehlo.token` values:
//! every command but `run` accepts them (as Shardy and XLA carry them),
//! and `run` refuses them with one line naming the op and its position,
//! before any device starts.

mod common;

use common::{arg, assert_error, run_ok};

/// A callback between two sharded ops, ordered by tokens, and a kernel
/// with a rule the program writes.
const PROGRAM: &str = r#"module @m {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: !stablehlo.token) -> (tensor<8x16xf32>, !stablehlo.token) {
    %0 = stablehlo.tanh %arg0 : tensor<8x16xf32>
    %1 = stablehlo.after_all %arg1 : !stablehlo.token
    %2:2 = stablehlo.custom_call @xla_python_cpu_callback(%0, %1) {api_version = 2 : i32, has_side_effect = true} : (tensor<8x16xf32>, !stablehlo.token) -> (tensor<8xf32>, !stablehlo.token)
    %3 = stablehlo.custom_call @my_kernel(%0) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}, custom>} : (tensor<8x16xf32>) -> tensor<8x16xf32>
    return %3, %2#1 : tensor<8x16xf32>, !stablehlo.token
  }
}
"#;

const TOKENS_ONLY: &str = r#"module @m {
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8xf32>, !stablehlo.token) {
    %0 = stablehlo.create_token : !stablehlo.token
    %1 = stablehlo.after_all %0 : !stablehlo.token
    return %arg0, %1 : tensor<8xf32>, !stablehlo.token
  }
}
"#;

#[test]
fn every_command_but_run_accepts_opaque_calls_and_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("opaque.mlir");
    std::fs::write(&path, PROGRAM).unwrap();
    let p = arg(&path);
    let parsed = run_ok(&["parse", p]);
    assert!(
        parsed.contains("stablehlo.custom_call @xla_python_cpu_callback(%0, %1)")
            && parsed.contains("!stablehlo.token"),
        "{parsed}"
    );
    let propagated = run_ok(&["propagate", p]);
    // The written rule carries the tanh's sharding through @my_kernel.
    assert!(
        propagated.contains(r#"stablehlo.custom_call @my_kernel(%0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>"#),
        "{propagated}"
    );
    let global = run_ok(&["partition", p]);
    // The callback has no rule: it gets its operand whole (an all-gather).
    assert!(
        global.contains("sdy.all_gather") && global.contains("xla_python_cpu_callback"),
        "{global}"
    );
    let local = run_ok(&["partition", "--device", "3", p]);
    assert!(
        local.contains("call_target_name = \"my_kernel\""),
        "{local}"
    );
    run_ok(&["show", p]);
    let cost = run_ok(&["cost", p]);
    assert!(cost.contains("all-gather"), "{cost}");
    run_ok(&["partition", "--json", p]);
    assert_error(
        &["run", p],
        &[
            &format!("{p}:6:"),
            "custom_call target '@xla_python_cpu_callback' cannot run",
        ],
    );
}

#[test]
fn run_refuses_tokens_naming_the_op() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.mlir");
    std::fs::write(&path, TOKENS_ONLY).unwrap();
    let p = arg(&path);
    run_ok(&["partition", p]);
    assert_error(
        &["run", p],
        &[
            "@main's signature",
            "!stablehlo.token values, which cannot run",
        ],
    );
}
