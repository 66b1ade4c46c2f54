//! Each strategy on small programs (several follow Shardy's own tests):
//! what basic, aggressive, op-priority and user-priority propagation each
//! infer, with open dimensions left open as Shardy's single passes leave
//! them.

mod propagation_support;

use meshrun_compiler::propagation::Strategy;
use propagation_support::{expect, run_ok};

const MESH_AB: &str = r#"sdy.mesh @mesh = <["a"=2, "b"=2]>"#;

fn module(mesh: &str, func: &str) -> String {
    format!("module @m {{\n  {mesh}\n  {func}\n}}\n")
}

#[test]
fn basic_propagates_forward_and_backward_through_a_matmul() {
    let src = module(
        MESH_AB,
        r#"func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>}, %arg1: tensor<8x8xf32>, %arg2: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
    %1 = stablehlo.dot_general %0, %arg2, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    return %1 : tensor<8x16xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::Basic);
    expect(
        &m,
        &[
            ("%arg0", r#"<@mesh, [{"a"}, {"b"}]>"#),
            ("%arg1", r#"<@mesh, [{"a", ?}, {"b", ?}]>"#),
            ("%arg2", r#"<@mesh, [{"b", ?}, {?}]>"#),
            ("%0", r#"<@mesh, [{"a", ?}, {"b", ?}]>"#),
            ("%1", r#"<@mesh, [{"a", ?}, {?}]>"#),
            ("result0", r#"<@mesh, [{"a", ?}, {?}]>"#),
        ],
    );
}

/// `lhs` on `a` (rows), `rhs` on `a` (columns): "a" is wanted by two
/// factors of the dot.
const CONFLICT: &str = r#"func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, %arg1: tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"a"}]>}) -> tensor<8x32xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
    return %0 : tensor<8x32xf32>
  }"#;

#[test]
fn basic_leaves_a_conflict_unresolved() {
    let m = run_ok(&module(MESH_AB, CONFLICT), Strategy::Basic);
    expect(&m, &[("%0", "none"), ("result0", "none")]);
}

#[test]
fn aggressive_resolves_a_conflict_for_the_larger_source() {
    // The rhs (8x32) is larger than the lhs (8x8): its factor wins "a".
    let m = run_ok(&module(MESH_AB, CONFLICT), Strategy::Aggressive);
    expect(
        &m,
        &[
            ("%0", r#"<@mesh, [{?}, {"a", ?}]>"#),
            ("result0", r#"<@mesh, [{?}, {"a", ?}]>"#),
        ],
    );
}

#[test]
fn op_priority_propagates_element_wise_ops_first() {
    // Without op priorities the dot would hand "a" to its result's rows
    // first; the element-wise adds carry the result's "a" on columns back
    // to the dot first.
    let src = module(
        MESH_AB,
        r#"func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}, {?}]>}, %arg1: tensor<8x8xf32>) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"a", ?}]>}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = stablehlo.add %0, %0 : tensor<8x8xf32>
    %2 = stablehlo.add %1, %1 : tensor<8x8xf32>
    return %2 : tensor<8x8xf32>
  }"#,
    );
    let with_priorities = run_ok(&src, Strategy::OpPriority);
    expect(
        &with_priorities,
        &[
            ("%arg1", r#"<@mesh, [{?}, {"a", ?}]>"#),
            ("%0", r#"<@mesh, [{?}, {"a", ?}]>"#),
            ("%1", r#"<@mesh, [{?}, {"a", ?}]>"#),
            ("%2", r#"<@mesh, [{?}, {"a", ?}]>"#),
        ],
    );
    let without = run_ok(&src, Strategy::Aggressive);
    expect(&without, &[("%0", r#"<@mesh, [{"a", ?}, {?}]>"#)]);
}

#[test]
fn op_priority_treats_sharding_constraints_as_element_wise() {
    let src = module(
        MESH_AB,
        r#"func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}, {?}]>}, %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = stablehlo.add %0, %0 : tensor<8x8xf32>
    %2 = stablehlo.add %1, %1 : tensor<8x8xf32>
    %3 = sdy.sharding_constraint %2 <@mesh, [{?}, {"a", ?}]> : tensor<8x8xf32>
    return %3 : tensor<8x8xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::OpPriority);
    expect(
        &m,
        &[
            ("%0", r#"<@mesh, [{?}, {"a", ?}]>"#),
            ("%2", r#"<@mesh, [{?}, {"a", ?}]>"#),
            ("%arg1", r#"<@mesh, [{?}, {"a", ?}]>"#),
        ],
    );
}

#[test]
fn op_priority_prefers_pass_through_factors_to_reduction_factors() {
    let src = module(
        MESH_AB,
        r#"func.func @main(%arg0: tensor<32x1024xf32>, %arg1: tensor<1024x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}, {"b", ?}]>}) -> (tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}, {"b", ?}]>}) {
    %0 = stablehlo.dot %arg0, %arg1, precision = [DEFAULT, DEFAULT] : (tensor<32x1024xf32>, tensor<1024x16xf32>) -> tensor<32x16xf32>
    return %0 : tensor<32x16xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::OpPriority);
    expect(
        &m,
        &[
            ("%0", r#"<@mesh, [{"a", ?}, {"b", ?}]>"#),
            ("%arg0", r#"<@mesh, [{"a", ?}, {?}]>"#),
        ],
    );
}

#[test]
fn op_priority_propagates_broadcasts_backward_before_forward() {
    let src = module(
        MESH_AB,
        r#"func.func @main(%arg0: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}) -> (tensor<32x16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"a"}, {}]>}) {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0] : (tensor<32xf32>) -> tensor<32x16xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<32x16xf32>) -> tensor<32x16x8xf32>
    return %1 : tensor<32x16x8xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::OpPriority);
    expect(
        &m,
        &[
            ("%0", r#"<@mesh, [{?}, {"a", ?}]>"#),
            ("%1", r#"<@mesh, [{?}, {"a", ?}, {?}]>"#),
        ],
    );
}

const MESH_ABC: &str = r#"sdy.mesh @mesh = <["a"=2, "b"=2, "c"=2]>"#;

#[test]
fn user_priority_lower_numbers_win() {
    // The op's "c" (p0) is propagated before the argument's "a" (p1); "a"
    // can then no longer take dimension 0 anywhere, "b" still fits.
    let src = module(
        MESH_ABC,
        r#"func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}p1, {"b"}p1]>}, %arg1: tensor<8x8xf32>, %arg2: tensor<8x8xf32>, %arg3: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
    %1 = stablehlo.add %0, %arg2 : tensor<8x8xf32>
    %2 = stablehlo.divide %1, %arg3 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"c"}p0, {?}]>]>} : tensor<8x8xf32>
    return %2 : tensor<8x8xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::UserPriority);
    expect(
        &m,
        &[
            ("%arg0", r#"<@mesh, [{"a", ?}, {"b"}]>"#),
            ("%arg1", r#"<@mesh, [{"c", ?}, {"b", ?}]>"#),
            ("%0", r#"<@mesh, [{"c", ?}, {"b", ?}]>"#),
            ("%1", r#"<@mesh, [{"c", ?}, {"b", ?}]>"#),
            ("%2", r#"<@mesh, [{"c"}, {"b", ?}]>"#),
            ("result0", r#"<@mesh, [{"c", ?}, {"b", ?}]>"#),
        ],
    );
}

#[test]
fn user_priority_result_before_argument() {
    let src = module(
        MESH_ABC,
        r#"func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"c", ?}p1, {?}]>}, %arg1: tensor<8x8xf32>, %arg2: tensor<8x8xf32>, %arg3: tensor<8x8xf32>) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}p0, {"b"}p0]>}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
    %1 = stablehlo.add %0, %arg2 : tensor<8x8xf32>
    %2 = stablehlo.divide %1, %arg3 : tensor<8x8xf32>
    return %2 : tensor<8x8xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::UserPriority);
    expect(
        &m,
        &[
            ("%arg0", r#"<@mesh, [{"c", ?}, {"b", ?}]>"#),
            ("%arg1", r#"<@mesh, [{"a", ?}, {"b", ?}]>"#),
            ("%0", r#"<@mesh, [{"a", ?}, {"b", ?}]>"#),
            ("result0", r#"<@mesh, [{"a"}, {"b"}]>"#),
        ],
    );
}

#[test]
fn single_strategies_do_not_run_import_or_export_passes() {
    // A sharding constraint stays a constraint, open dimensions stay open.
    let src = module(
        MESH_AB,
        r#"func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = stablehlo.tanh %arg0 : tensor<8x8xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"a"}, {}]> : tensor<8x8xf32>
    return %1 : tensor<8x8xf32>
  }"#,
    );
    for strategy in [
        Strategy::Basic,
        Strategy::Aggressive,
        Strategy::OpPriority,
        Strategy::UserPriority,
    ] {
        let m = run_ok(&src, strategy);
        let f = m.entry().unwrap();
        assert!(
            f.ops_in_order()
                .any(|(_, op)| op.kind.name() == "sdy.sharding_constraint"),
            "{strategy}"
        );
        expect(
            &m,
            &[
                ("%0", r#"<@mesh, [{"a", ?}, {?}]>"#),
                ("%arg0", r#"<@mesh, [{"a", ?}, {?}]>"#),
            ],
        );
    }
    let full = run_ok(&src, Strategy::Full);
    let f = full.entry().unwrap();
    assert!(f
        .ops_in_order()
        .any(|(_, op)| op.kind.name() == "sdy.reshard"));
    // The constraint is fully closed and applies to its input at import.
    expect(
        &full,
        &[
            ("%0", r#"<@mesh, [{"a"}, {}]>"#),
            ("%arg0", r#"<@mesh, [{"a"}, {}]>"#),
        ],
    );
}
