//! Cases of `basic_propagation.mlir` and `propagation_pipeline.mlir` about
//! what a sharding can say: sub-axes that cannot coexist, meshes written
//! inline, maximal (single-device) shardings, and values propagation
//! skips (tokens, dynamic shapes).

use meshrun_compiler::propagation::Strategy;

use crate::propagation_support::{expect, run_ok};

/// `sub_axes_cannot_coexist`: on "w"=6 the result's "w":(3)2 (the minor 2
/// of 3x2) and the argument's "w":(1)2 (the major 2 of 2x3) come from
/// different splits of the axis, so one tensor cannot hold both: the cos
/// takes the result's sub-axis only.
#[test]
fn sub_axes_from_different_splits_do_not_meet() {
    let src = r#"module @m {
  sdy.mesh @six = <["w"=6]>
  func.func @main(%arg0: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@six, [{"w":(1)2}, {}]>}) -> (tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@six, [{}, {"w":(3)2}]>}) {
    %0 = stablehlo.cosine %arg0 : tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
}"#;
    let m = run_ok(src, Strategy::Basic);
    expect(&m, &[("%0", r#"<@six, [{?}, {"w":(3)2, ?}]>"#)]);
}

/// `inlined_mesh` (full pipeline): a mesh written inside a sharding becomes
/// the module mesh `@mesh`, and everything propagated refers to it.
#[test]
fn an_inline_mesh_becomes_a_named_one() {
    let src = r#"module @m {
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<mesh<["u"=2, "v"=4]>, [{"u"}, {"v"}]>}, %arg1: tensor<8x16xf32>, %arg2: tensor<16x4xf32>) -> tensor<8x4xf32> {
    %0 = stablehlo.subtract %arg0, %arg1 : tensor<8x16xf32>
    %1 = stablehlo.dot_general %0, %arg2, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    return %1 : tensor<8x4xf32>
  }
}"#;
    let m = run_ok(src, Strategy::Full);
    let meshes: Vec<String> = m
        .meshes
        .iter()
        .map(|d| format!("@{} = {}", d.name, d.mesh))
        .collect();
    assert_eq!(meshes, [r#"@mesh = <["u"=2, "v"=4]>"#]);
    let both = r#"<@mesh, [{"u"}, {"v"}]>"#;
    expect(
        &m,
        &[
            ("%arg0", both),
            ("%arg1", both),
            ("%arg2", r#"<@mesh, [{"v"}, {}]>"#),
            ("%0", both),
            ("%1", r#"<@mesh, [{"u"}, {}]>"#),
            ("result0", r#"<@mesh, [{"u"}, {}]>"#),
        ],
    );
}

/// `maximal_mesh_not_replaced`: an argument on a maximal mesh (no axes,
/// one device) is on another mesh than its partner, so nothing
/// propagates through the op they meet in, and the maximal sharding stays.
#[test]
fn a_maximal_sharding_meets_nothing() {
    let src = r#"module @m {
  sdy.mesh @one = <[], device_ids=[3]>
  sdy.mesh @grid = <["x"=2, "y"=2]>
  func.func @main(%arg0: tensor<4x16xf32> {sdy.sharding = #sdy.sharding<@grid, [{"x"}, {"y"}]>}, %arg1: tensor<4x16xf32> {sdy.sharding = #sdy.sharding<@one, []>}) -> tensor<4x16xf32> {
    %0 = stablehlo.multiply %arg0, %arg1 : tensor<4x16xf32>
    return %0 : tensor<4x16xf32>
  }
}"#;
    for strategy in [Strategy::Basic, Strategy::OpPriority] {
        let m = run_ok(src, strategy);
        expect(
            &m,
            &[("%arg1", "<@one, []>"), ("%0", "none"), ("result0", "none")],
        );
    }
}

/// `do_not_propagate_along_maximal_mesh`, with meshrun's ops: a value
/// marked for one device (there a `recv`, here a negate) neither gives its
/// sharding to its users nor takes theirs; the users still take the
/// function result's sharding.
#[test]
fn propagation_does_not_follow_a_maximal_sharding() {
    let src = r#"module @m {
  sdy.mesh @one = <[], device_ids=[0]>
  sdy.mesh @grid = <["x"=2, "y"=2]>
  func.func @main(%arg0: tensor<4x16xf32> {sdy.sharding = #sdy.sharding<@grid, [{"x"}, {"y"}]>}) -> (tensor<4x16xf32> {sdy.sharding = #sdy.sharding<@grid, [{"y"}, {"x"}]>}) {
    %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@one, []>]>} : tensor<4x16xf32>
    %1 = stablehlo.abs %0 : tensor<4x16xf32>
    %2 = stablehlo.add %1, %1 : tensor<4x16xf32>
    return %2 : tensor<4x16xf32>
  }
}"#;
    let m = run_ok(src, Strategy::Basic);
    let cols = r#"<@grid, [{"y", ?}, {"x", ?}]>"#;
    expect(
        &m,
        &[
            ("%0", "<@one, []>"),
            ("%1", cols),
            ("%2", cols),
            ("%arg0", r#"<@grid, [{"x"}, {"y"}]>"#),
        ],
    );
}
