//! Bad input gives a diagnostic that says where and what, never a panic:
//! constraints on unknown axes or that cannot hold, conflicting sharding
//! groups, calls that cannot be inlined.

mod propagation_support;

use meshrun_compiler::propagation::Strategy;
use propagation_support::{parse, run};

fn module(body: &str) -> String {
    format!(
        r#"module @m {{
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x16xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}]>}}, %arg1: tensor<8x16xf32>) -> tensor<8x16xf32> {{
{body}
  }}
}}"#
    )
}

/// Propagation of `src` fails at line `line` with every needle in the
/// message.
fn assert_fails(src: &str, line: u32, needles: &[&str]) {
    for strategy in [Strategy::Full, Strategy::Basic] {
        let err = run(src, strategy).expect_err("bad input must be rejected");
        assert_eq!(err.pos.line, line, "{strategy}: {err}");
        for n in needles {
            assert!(
                err.message.contains(n),
                "{strategy}: `{n}` not in: {}",
                err.message
            );
        }
    }
}

#[test]
fn constraint_on_an_unknown_axis() {
    let src = module(
        r#"    %0 = stablehlo.tanh %arg0 : tensor<8x16xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"q"}, {}]> : tensor<8x16xf32>
    return %1 : tensor<8x16xf32>"#,
    );
    assert_fails(
        &src,
        5,
        &["sdy.sharding_constraint", "\"q\"", "stablehlo.tanh"],
    );
}

#[test]
fn constraint_on_an_unknown_mesh() {
    let src = module(
        r#"    %1 = sdy.sharding_constraint %arg1 <@nowhere, [{"x"}, {}]> : tensor<8x16xf32>
    return %1 : tensor<8x16xf32>"#,
    );
    assert_fails(&src, 4, &["sdy.sharding_constraint", "%arg1", "@nowhere"]);
}

#[test]
fn constraint_that_cannot_be_satisfied() {
    // Three dimension shardings for a rank-2 tensor, and an axis used for
    // two dimensions: no sharding of %arg1 can be both.
    let src = module(
        r#"    %1 = sdy.sharding_constraint %arg1 <@mesh, [{"x"}, {}, {}]> : tensor<8x16xf32>
    return %1 : tensor<8x16xf32>"#,
    );
    assert_fails(&src, 4, &["cannot be satisfied", "%arg1"]);
    let src = module(
        r#"    %1 = sdy.sharding_constraint %arg1 <@mesh, [{"y"}, {"y"}]> : tensor<8x16xf32>
    return %1 : tensor<8x16xf32>"#,
    );
    assert_fails(&src, 4, &["cannot be satisfied", "%arg1", "\"y\""]);
}

#[test]
fn sharding_group_of_different_shapes() {
    let src = r#"module @m {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%arg0: tensor<8x16xf32>, %arg1: tensor<16x8xf32>) -> tensor<8x16xf32> {
    sdy.sharding_group %arg0 group_id=0 : tensor<8x16xf32>
    sdy.sharding_group %arg1 group_id=0 : tensor<16x8xf32>
    return %arg0 : tensor<8x16xf32>
  }
}"#;
    let err = run(src, Strategy::Full).expect_err("shapes differ");
    assert_eq!(err.pos.line, 5, "{err}");
    assert!(err.message.contains("same shape"), "{err}");
}

#[test]
fn recursive_calls_cannot_be_inlined() {
    let src = r#"module @m {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = call @f(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
  func.func private @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = call @f(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}"#;
    let err = run(src, Strategy::Full).expect_err("recursion");
    assert_eq!(err.pos.line, 8, "{err}");
    assert!(err.message.contains("recursive"), "{err}");
}

#[test]
fn programs_without_shardings_or_meshes_propagate_to_nothing() {
    // Nothing to propagate is not an error.
    let src = r#"module @m {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.tanh %arg0 : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}"#;
    for strategy in Strategy::ALL {
        let m = run(src, strategy).expect("propagates");
        assert_eq!(m, parse(src), "{strategy}");
    }
}
