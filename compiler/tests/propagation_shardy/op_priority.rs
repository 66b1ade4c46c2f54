//! `op_priority_propagation.mlir`: the five op-priority schedules, in
//! particular the deferral of pass-through ops whose operands have several
//! uses.

use meshrun_compiler::propagation::Strategy;

use crate::propagation_support::{expect, run_ok};

fn module(func: &str) -> String {
    format!("module @m {{\n  sdy.mesh @grid = <[\"x\"=2, \"y\"=4]>\n  {func}\n}}\n")
}

/// `element_wise_over_dot_general_flipped_op_order`: element-wise ops
/// before the dot carry each argument's sharding to it first, so the dot's
/// result takes the rhs's column sharding, not the lhs's rows.
#[test]
fn element_wise_ops_before_a_dot_decide_its_operands() {
    let src = module(
        r#"func.func @main(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@grid, [{"y", ?}, {?}]>}, %arg1: tensor<16x16xf32>) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@grid, [{?}, {"y", ?}]>}) {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<16x16xf32>
    %1 = stablehlo.subtract %arg1, %arg1 : tensor<16x16xf32>
    %2 = stablehlo.dot_general %0, %1, contracting_dims = [1] x [0] : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    return %2 : tensor<16x16xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::OpPriority);
    expect(
        &m,
        &[
            ("%arg1", r#"<@grid, [{?}, {"y", ?}]>"#),
            ("%0", r#"<@grid, [{"y", ?}, {?}]>"#),
            ("%1", r#"<@grid, [{?}, {"y", ?}]>"#),
            ("%2", r#"<@grid, [{?}, {"y", ?}]>"#),
        ],
    );
}

/// `defer_forward_propagation_for_multi_use_ops`: the sine's result is
/// used twice, so its row sharding does not flow into its two users in the
/// first schedule; the results' column sharding reaches them first, and
/// only the sine keeps rows (one reshard instead of two).
#[test]
fn multi_use_value_does_not_push_its_sharding_to_every_user_first() {
    let src = module(
        r#"func.func @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@grid, [{"x"}, {}]>}) -> (tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@grid, [{}, {"x"}]>}, tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@grid, [{}, {"x"}]>}) {
    %0 = stablehlo.sine %arg0 : tensor<16x32xf32>
    %1 = stablehlo.multiply %0, %0 : tensor<16x32xf32>
    %2 = stablehlo.subtract %0, %0 : tensor<16x32xf32>
    %3 = stablehlo.exponential %1 : tensor<16x32xf32>
    %4 = stablehlo.exponential %2 : tensor<16x32xf32>
    return %3, %4 : tensor<16x32xf32>, tensor<16x32xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::OpPriority);
    expect(
        &m,
        &[
            ("%0", r#"<@grid, [{"x", ?}, {?}]>"#),
            ("%1", r#"<@grid, [{?}, {"x", ?}]>"#),
            ("%2", r#"<@grid, [{?}, {"x", ?}]>"#),
            ("%3", r#"<@grid, [{?}, {"x", ?}]>"#),
            ("%4", r#"<@grid, [{?}, {"x", ?}]>"#),
        ],
    );
}

/// `defer_backwards_propagation_for_op_with_multi_use_operand`: both adds
/// read the argument twice; the second add's column sharding (from its
/// result) must not reach the argument in the first schedule, so the
/// argument takes the rows that the sine chain brings back.
#[test]
fn op_with_a_multi_use_operand_does_not_propagate_backward_first() {
    let src = module(
        r#"func.func @main(%arg0: tensor<16x32xf32>) -> (tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@grid, [{}, {"y"}]>}, tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@grid, [{"y"}, {}]>}) {
    %0 = stablehlo.maximum %arg0, %arg0 : tensor<16x32xf32>
    %1 = stablehlo.minimum %arg0, %arg0 : tensor<16x32xf32>
    %2 = stablehlo.tanh %0 : tensor<16x32xf32>
    return %1, %2 : tensor<16x32xf32>, tensor<16x32xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::OpPriority);
    expect(
        &m,
        &[
            ("%arg0", r#"<@grid, [{"y", ?}, {?}]>"#),
            ("%0", r#"<@grid, [{"y", ?}, {?}]>"#),
            ("%1", r#"<@grid, [{?}, {"y", ?}]>"#),
            ("%2", r#"<@grid, [{"y", ?}, {?}]>"#),
        ],
    );
}

/// `chained_dot_generals`: dots are propagated too (after the
/// pass-through ops): the first dot keeps the lhs rows, the second one
/// takes the result's columns.
#[test]
fn chained_dots_are_propagated() {
    let src = module(
        r#"func.func @main(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@grid, [{"x", ?}, {?}]>}, %arg1: tensor<16x16xf32>) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@grid, [{?}, {"x", ?}]>}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    %1 = stablehlo.dot_general %0, %0, contracting_dims = [1] x [0] : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    %2 = stablehlo.negate %1 : tensor<16x16xf32>
    %3 = stablehlo.abs %2 : tensor<16x16xf32>
    return %3 : tensor<16x16xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::OpPriority);
    expect(
        &m,
        &[
            ("%arg1", "none"),
            ("%0", r#"<@grid, [{"x", ?}, {?}]>"#),
            ("%1", r#"<@grid, [{?}, {"x", ?}]>"#),
            ("%2", r#"<@grid, [{?}, {"x", ?}]>"#),
            ("%3", r#"<@grid, [{?}, {"x", ?}]>"#),
        ],
    );
}

/// `unknown_op`: an op none of the early schedules names (here a
/// concatenate) is still propagated through in the last ones, along its
/// non-concatenated dimensions.
#[test]
fn ops_outside_the_early_schedules_still_propagate() {
    let src = module(
        r#"func.func @main(%arg0: tensor<8x2x64xf32> {sdy.sharding = #sdy.sharding<@grid, [{"y", ?}, {?}, {?}]>}, %arg1: tensor<8x2x64xf32>, %arg2: tensor<8x3x64xf32>) -> tensor<8x7x64xf32> {
    %0 = stablehlo.concatenate %arg0, %arg1, %arg2, dim = 1 : (tensor<8x2x64xf32>, tensor<8x2x64xf32>, tensor<8x3x64xf32>) -> tensor<8x7x64xf32>
    return %0 : tensor<8x7x64xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::OpPriority);
    let rows = r#"<@grid, [{"y", ?}, {?}, {?}]>"#;
    expect(
        &m,
        &[
            ("%arg1", rows),
            ("%arg2", rows),
            ("%0", rows),
            ("result0", rows),
        ],
    );
}

/// `defer_forward_propagation_for_multi_use_dynamic_slice`: a dynamic
/// slice counts as a pass-through op (forward only) in the first
/// schedules; its result has two users, so its row sharding waits, and the
/// result's column sharding reaches both users first.
#[test]
fn multi_use_dynamic_slice_does_not_push_its_sharding_first() {
    let src = module(
        r#"func.func @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@grid, [{"x"}, {}]>}, %arg1: tensor<i32>, %arg2: tensor<i32>) -> (tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@grid, [{}, {"x"}]>}) {
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %arg2, sizes = [16, 4] : (tensor<16x32xf32>, tensor<i32>, tensor<i32>) -> tensor<16x4xf32>
    %1 = stablehlo.multiply %0, %0 : tensor<16x4xf32>
    %2 = stablehlo.subtract %0, %0 : tensor<16x4xf32>
    %3 = stablehlo.add %1, %2 : tensor<16x4xf32>
    return %3 : tensor<16x4xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::OpPriority);
    let cols = r#"<@grid, [{?}, {"x", ?}]>"#;
    expect(
        &m,
        &[
            ("%0", r#"<@grid, [{"x", ?}, {?}]>"#),
            ("%1", cols),
            ("%2", cols),
            ("%3", cols),
        ],
    );
}

/// `defer_backwards_propagation_dynamic_slice`: a dynamic slice never
/// propagates backward in the first schedules, so its result's rows do
/// not reach the argument before the add's columns do.
#[test]
fn dynamic_slice_does_not_propagate_backward_first() {
    let src = module(
        r#"func.func @main(%arg0: tensor<16x32xf32>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> (tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@grid, [{"y"}, {}]>}, tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@grid, [{}, {"y"}]>}) {
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %arg2, sizes = [16, 4] : (tensor<16x32xf32>, tensor<i32>, tensor<i32>) -> tensor<16x4xf32>
    %1 = stablehlo.negate %arg0 : tensor<16x32xf32>
    return %0, %1 : tensor<16x4xf32>, tensor<16x32xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::OpPriority);
    expect(
        &m,
        &[
            ("%arg0", r#"<@grid, [{?}, {"y", ?}]>"#),
            ("%0", r#"<@grid, [{"y", ?}, {?}]>"#),
            ("%1", r#"<@grid, [{?}, {"y", ?}]>"#),
        ],
    );
}
