//! `basic_propagation.mlir: blocked_propagation_factor` and the blocked
//! factors of `op_sharding_rule_registry.mlir` (dynamic_slice, sort): a
//! factor in a rule's `blocked_propagation` never moves between tensors —
//! not from operands to results, not back, not between operands — under
//! every strategy, while the op's other factors propagate as usual.

use meshrun_compiler::propagation::Strategy;

use crate::propagation_support::{expect, run_ok};

const STRATEGIES: [Strategy; 5] = [
    Strategy::Basic,
    Strategy::Aggressive,
    Strategy::OpPriority,
    Strategy::UserPriority,
    Strategy::Full,
];

fn module(func: &str) -> String {
    format!("module @m {{\n  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2, \"c\"=2]>\n  {func}\n}}\n")
}

/// Open dimensions of the single-pass strategies read `{?}` / `{"a", ?}`;
/// the full pipeline closes them.
fn closed(strategy: Strategy, s: &str) -> String {
    if strategy == Strategy::Full {
        s.replace(", ?}", "}").replace("{?}", "{}")
    } else {
        s.to_string()
    }
}

/// A dynamic_slice that keeps dimension 0 whole and slices dimension 1:
/// the sliced dimension's factor is blocked, so only "a" reaches the
/// result.
#[test]
fn dynamic_slice_forward_keeps_the_sliced_dimension_unsharded() {
    let src = module(
        r#"func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>}, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<8x2xf32> {
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %arg2, sizes = [8, 2] : (tensor<8x8xf32>, tensor<i32>, tensor<i32>) -> tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }"#,
    );
    for strategy in STRATEGIES {
        let m = run_ok(&src, strategy);
        expect(
            &m,
            &[("%0", &closed(strategy, r#"<@mesh, [{"a", ?}, {?}]>"#))],
        );
    }
}

/// The same op seen from its result: a result sharded on both dimensions
/// gives the operand only the unblocked one.
#[test]
fn dynamic_slice_backward_keeps_the_sliced_dimension_unsharded() {
    let src = module(
        r#"func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> (tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>}) {
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %arg2, sizes = [8, 2] : (tensor<8x8xf32>, tensor<i32>, tensor<i32>) -> tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }"#,
    );
    for strategy in STRATEGIES {
        let m = run_ok(&src, strategy);
        expect(
            &m,
            &[("%arg0", &closed(strategy, r#"<@mesh, [{"a", ?}, {?}]>"#))],
        );
    }
}

/// A one-dimensional sort of two operands: the sorted dimension is the
/// only one, so its factor is blocked: neither the results nor the other
/// operand get the first operand's axis.
#[test]
fn sort_of_one_dimension_propagates_nothing() {
    let src = module(
        r#"func.func @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}, %arg1: tensor<16xi32>) -> (tensor<16xf32>, tensor<16xi32>) {
    %0:2 = "stablehlo.sort"(%arg0, %arg1) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
      %1 = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    }) : (tensor<16xf32>, tensor<16xi32>) -> (tensor<16xf32>, tensor<16xi32>)
    return %0#0, %0#1 : tensor<16xf32>, tensor<16xi32>
  }"#,
    );
    for strategy in STRATEGIES {
        let m = run_ok(&src, strategy);
        let none_or_replicated = |name: &str| {
            let s = crate::propagation_support::sharding(&m, name);
            assert!(
                s == "none" || !s.contains('"'),
                "{strategy:?}: {name} got {s}"
            );
        };
        none_or_replicated("%arg1");
        none_or_replicated("%0#0");
        none_or_replicated("%0#1");
    }
}

/// A sort of a 2-D operand along dimension 1 is not blocked (dimension 0
/// could carry the sharding): the sorted dimension's axis still moves,
/// as in Shardy (the partitioner then reshards it).
#[test]
fn sort_with_a_batch_dimension_is_not_blocked() {
    let src = module(
        r#"func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>}) -> tensor<8x16xf32> {
    %0 = "stablehlo.sort"(%arg0) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %1 = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    }) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    return %0 : tensor<8x16xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::Basic);
    expect(&m, &[("%0", r#"<@mesh, [{"a", ?}, {"b", ?}]>"#)]);
}
