//! Bad input gives a diagnostic that names the op (and where it is), never
//! a panic.

use meshrun_compiler::diag::DiagKind;
use meshrun_compiler::partition::partition;
use meshrun_compiler::text::parse_module;
use meshrun_compiler::Diagnostic;

fn partition_text(text: &str) -> Result<(), Diagnostic> {
    let m = parse_module(text).expect("test module parses");
    partition(&m).map(|_| ())
}

fn expect_error(text: &str, line: u32, needles: &[&str]) -> Diagnostic {
    let e = partition_text(text).expect_err("must be rejected");
    assert_eq!(e.pos.line, line, "wrong line in: {e}");
    for n in needles {
        assert!(e.message.contains(n), "expected `{n}` in: {}", e.message);
    }
    e
}

#[test]
fn op_sharding_of_the_wrong_rank() {
    let text = r#"module @m {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}
"#;
    let e = expect_error(text, 4, &["stablehlo.negate", "1 dimension", "rank 2"]);
    assert_eq!(e.kind, DiagKind::Sharding);
}

#[test]
fn axis_used_for_two_dimensions_of_one_result() {
    let text = r#"module @m {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = stablehlo.dot %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"x"}]>]>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}
"#;
    expect_error(text, 4, &["stablehlo.dot", "\"x\""]);
}

#[test]
fn unknown_axis_and_unknown_mesh() {
    let text = r#"module @m {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"q"}]>]>} : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
"#;
    expect_error(text, 4, &["stablehlo.negate", "\"q\""]);
    let text = text.replace("<@mesh, [{\"q\"}]>", "<@nomesh, [{\"x\"}]>");
    let e = expect_error(&text, 4, &["stablehlo.negate", "@nomesh"]);
    assert_eq!(e.kind, DiagKind::UndefinedName);
}

#[test]
fn reshard_between_meshes_over_different_devices() {
    let text = r#"module @m {
  sdy.mesh @mesh = <["x"=4]>
  sdy.mesh @big = <["x"=8]>
  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
    %0 = sdy.reshard %arg0 <@big, [{"x"}]> : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
"#;
    let e = expect_error(text, 5, &["sdy.reshard", "@mesh", "@big", "same devices"]);
    assert_eq!(e.kind, DiagKind::Sharding);
}

#[test]
fn argument_on_a_mesh_the_program_does_not_run_on() {
    let text = r#"module @m {
  sdy.mesh @mesh = <["x"=4]>
  sdy.mesh @big = <["x"=8]>
  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@big, [{"x"}]>}) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}
"#;
    expect_error(text, 4, &["argument 0", "@big", "8 devices"]);
}

#[test]
fn reshape_whose_shardings_fit_no_factor_is_resharded_not_rejected() {
    // 8x4 on [x, y] -> 32 on [y]: the result's sharding cannot be the
    // operand's factors; the partitioner reshards instead of failing.
    let text = r#"module @m {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<32xf32> {
    %0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}]>]>} : (tensor<8x4xf32>) -> tensor<32xf32>
    return %0 : tensor<32xf32>
  }
}
"#;
    partition_text(text).expect("partitions");
}
