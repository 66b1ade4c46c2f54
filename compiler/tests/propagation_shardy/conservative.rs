//! `basic_propagation_conservative.mlir` (and the conservative rules of
//! `op_sharding_rule_registry_conservative.mlir`, seen through
//! propagation): with `conservative`, no sub-axis is propagated, so a
//! sharding never moves into a dimension that a reshape splits or merges,
//! and sliced, padded and concatenated dimensions are blocked.

use meshrun_compiler::propagation::{propagate, PropagationOptions, Strategy};
use meshrun_compiler::Module;

use crate::propagation_support::{expect, parse};

fn basic(src: &str, conservative: bool) -> Module {
    let opts = PropagationOptions {
        strategy: Strategy::Basic,
        close: false,
        conservative,
        ..PropagationOptions::default()
    };
    propagate(&parse(src), &opts).unwrap_or_else(|e| panic!("propagation failed: {e}"))
}

fn module(mesh: &str, func: &str) -> String {
    format!("module @m {{\n  sdy.mesh @m = <[{mesh}]>\n  {func}\n}}\n")
}

/// `reshape_split_dim`: 16 split into 2x8 on "x"=4 would need the
/// sub-axis "x":(1)2 on the new major dimension: nothing propagates.
#[test]
fn a_split_dimension_takes_no_sub_axis() {
    let src = module(
        r#""x"=4, "y"=2"#,
        r#"func.func @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@m, [{"x"}]>}) -> tensor<2x8xf32> {
    %0 = stablehlo.reshape %arg0 : (tensor<16xf32>) -> tensor<2x8xf32>
    return %0 : tensor<2x8xf32>
  }"#,
    );
    expect(&basic(&src, true), &[("%0", "none"), ("result0", "none")]);
    // Without conservative propagation the axis is split across both
    // dimensions.
    expect(
        &basic(&src, false),
        &[("%0", r#"<@m, [{"x":(1)2, ?}, {"x":(2)2, ?}]>"#)],
    );
}

/// `multi_axis_major_dim_uses_all_axes`: "x","y" (8 devices) fit the new
/// major dimension of 16 whole, so they move without any sub-axis.
#[test]
fn whole_axes_that_fit_the_major_dimension_move() {
    let src = module(
        r#""x"=4, "y"=2"#,
        r#"func.func @main(%arg0: tensor<64xf32> {sdy.sharding = #sdy.sharding<@m, [{"x", "y"}]>}) -> tensor<16x4xf32> {
    %0 = stablehlo.reshape %arg0 : (tensor<64xf32>) -> tensor<16x4xf32>
    return %0 : tensor<16x4xf32>
  }"#,
    );
    expect(
        &basic(&src, true),
        &[("%0", r#"<@m, [{"x", "y", ?}, {?}]>"#)],
    );
}

/// `multi_axis_major_dim_not_fully_sharded`: "p" (2) fits the major
/// dimension of 4, "q" (8) would have to be cut to "q":(1)2: only "p"
/// moves.
#[test]
fn propagation_stops_where_an_axis_would_be_cut() {
    let src = module(
        r#""p"=2, "q"=8"#,
        r#"func.func @main(%arg0: tensor<32xf32> {sdy.sharding = #sdy.sharding<@m, [{"p", "q"}]>}) -> tensor<4x8xf32> {
    %0 = stablehlo.reshape %arg0 : (tensor<32xf32>) -> tensor<4x8xf32>
    return %0 : tensor<4x8xf32>
  }"#,
    );
    expect(&basic(&src, true), &[("%0", r#"<@m, [{"p", ?}, {?}]>"#)]);
}

/// `multi_axes_split_fully_sharded`: each axis is exactly one of the new
/// dimensions.
#[test]
fn axes_that_are_exactly_the_new_dimensions_move() {
    let src = module(
        r#""p"=8, "q"=4"#,
        r#"func.func @main(%arg0: tensor<32xf32> {sdy.sharding = #sdy.sharding<@m, [{"p", "q"}]>}) -> tensor<8x4xf32> {
    %0 = stablehlo.reshape %arg0 : (tensor<32xf32>) -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }"#,
    );
    expect(
        &basic(&src, true),
        &[("%0", r#"<@m, [{"p", ?}, {"q", ?}]>"#)],
    );
}

/// `slice`: the sliced dimensions are blocked, the untouched one is not.
#[test]
fn sliced_dimensions_are_blocked() {
    let src = module(
        r#""p"=8, "q"=2"#,
        r#"func.func @main(%arg0: tensor<16x6x12xf32> {sdy.sharding = #sdy.sharding<@m, [{"p"}, {}, {"q"}]>}) -> tensor<16x2x3xf32> {
    %0 = stablehlo.slice %arg0 [0:16, 2:4, 0:12:4] : (tensor<16x6x12xf32>) -> tensor<16x2x3xf32>
    return %0 : tensor<16x2x3xf32>
  }"#,
    );
    expect(
        &basic(&src, true),
        &[("%0", r#"<@m, [{"p", ?}, {?}, {?}]>"#)],
    );
    expect(
        &basic(&src, false),
        &[("%0", r#"<@m, [{"p", ?}, {?}, {"q", ?}]>"#)],
    );
}

/// The registry's `pad` (conservative): a padded dimension is blocked in
/// both directions.
#[test]
fn padded_dimensions_are_blocked_both_ways() {
    let src = module(
        r#""p"=2, "q"=4"#,
        r#"func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@m, [{"p"}, {"q"}]>}, %arg1: tensor<f32>, %arg2: tensor<12x16xf32>) -> (tensor<12x16xf32> {sdy.sharding = #sdy.sharding<@m, [{"q"}, {}]>}, tensor<10x16xf32>) {
    %0 = stablehlo.pad %arg0, %arg1, low = [1, 0], high = [1, 0], interior = [0, 0] : (tensor<8x16xf32>, tensor<f32>) -> tensor<10x16xf32>
    %1 = stablehlo.pad %arg2, %arg1, low = [0, 0], high = [0, 0], interior = [0, 0] : (tensor<12x16xf32>, tensor<f32>) -> tensor<12x16xf32>
    return %1, %0 : tensor<12x16xf32>, tensor<10x16xf32>
  }"#,
    );
    let m = basic(&src, true);
    // Forward: the rows' "p" stays behind, the columns' "q" moves.
    expect(&m, &[("%0", r#"<@m, [{?}, {"q", ?}]>"#)]);
    // A pad that changes no size is all pass-through.
    expect(&m, &[("%arg2", r#"<@m, [{"q", ?}, {?}]>"#)]);
}

/// The registry's `concat` (conservative): the concatenated dimension
/// shares no factor, the others propagate.
#[test]
fn concatenated_dimension_shares_nothing() {
    let src = module(
        r#""p"=2, "q"=4"#,
        r#"func.func @main(%arg0: tensor<4x3x64xf32> {sdy.sharding = #sdy.sharding<@m, [{"p"}, {}, {"q"}]>}, %arg1: tensor<4x5x64xf32>) -> tensor<4x8x64xf32> {
    %0 = stablehlo.concatenate %arg0, %arg1, dim = 1 : (tensor<4x3x64xf32>, tensor<4x5x64xf32>) -> tensor<4x8x64xf32>
    return %0 : tensor<4x8x64xf32>
  }"#,
    );
    let m = basic(&src, true);
    expect(
        &m,
        &[
            ("%0", r#"<@m, [{"p", ?}, {?}, {"q", ?}]>"#),
            ("%arg1", r#"<@m, [{"p", ?}, {?}, {"q", ?}]>"#),
        ],
    );
}
