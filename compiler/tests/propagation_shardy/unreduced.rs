//! Unreduced axes through propagation, from `propagation_pipeline.mlir`,
//! `aggressive_propagation.mlir`, `op_priority_propagation.mlir` and
//! `user_priority_propagation.mlir`: a `dot_general` annotated with an
//! unreduced result keeps its contracting axes out of the result's
//! dimensions, the all-reduce is delayed to where a use needs the full
//! value (fully or partially), and `unreduced=max{...}` names a reduction
//! other than a sum.

use meshrun_compiler::partition::global::explicit_reshards::insert_explicit_reshards;
use meshrun_compiler::partition::global::{GStepKind, GlobalProgram};
use meshrun_compiler::propagation::Strategy;
use meshrun_compiler::text::parse_module;

use crate::propagation_support::{expect, run, run_ok};

fn module(func: &str) -> String {
    format!("module @m {{\n  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2, \"c\"=2]>\n  {func}\n}}\n")
}

/// The collectives and computations of the global program, in order:
/// `all_reduce {"b"} -> <sharding>`, `reshard -> <sharding>`,
/// `compute stablehlo.add`.
fn steps(p: &GlobalProgram) -> Vec<String> {
    p.steps
        .iter()
        .map(|s| {
            let out = &p.value(s.results[0]).sharding;
            match &s.kind {
                GStepKind::AllReduce { axes, reduction } => {
                    let axes: Vec<String> = axes.iter().map(|a| a.to_string()).collect();
                    format!("all_reduce {reduction:?} {{{}}} -> {out}", axes.join(", "))
                }
                GStepKind::Reshard => format!("reshard -> {out}"),
                GStepKind::Compute(kind) => format!("compute {}", kind.name()),
                other => format!("{other:?}"),
            }
        })
        .collect()
}

/// `dot_general_with_unreduced_result`: the dot's result is unreduced
/// along "b" and its dimensions take no "b"; the constraint to `[{"a"},
/// {}]` needs the full value, so the all-reduce comes right after the dot,
/// and the add behind it is sharded like the function result (a local
/// slice of the reduced value).
#[test]
fn an_unreduced_dot_result_is_reduced_where_it_is_used() {
    let src = module(
        r#"func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>}, %arg1: tensor<8x16xf32>) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"b"}]>}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {?}], unreduced={"b"}>]>} : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %1 = sdy.reshard %0 <@mesh, [{"a"}, {}]> : tensor<8x16xf32>
    %2 = stablehlo.add %1, %1 : tensor<8x16xf32>
    return %2 : tensor<8x16xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::Full);
    expect(
        &m,
        &[
            ("%arg0", r#"<@mesh, [{"a"}, {"b"}]>"#),
            ("%arg1", r#"<@mesh, [{"b"}, {}]>"#),
            ("%0", r#"<@mesh, [{"a"}, {}], unreduced={"b"}>"#),
            ("%3", r#"<@mesh, [{"a"}, {"b"}]>"#),
            ("result0", r#"<@mesh, [{"a"}, {"b"}]>"#),
        ],
    );
    let p = insert_explicit_reshards(&m).expect("partitions");
    assert_eq!(
        steps(&p),
        [
            "compute stablehlo.dot_general",
            r#"all_reduce Add {"b"} -> <@mesh, [{"a"}, {}]>"#,
            r#"reshard -> <@mesh, [{"a"}, {"b"}]>"#,
            "compute stablehlo.add",
        ]
    );
}

/// `dot_general_with_unreduced_result_fully_delayed`: the add is annotated
/// unreduced along both contracting axes, so it runs on the partial sums
/// and one all-reduce over {"b", "c"} comes after it.
#[test]
fn the_reduction_is_delayed_past_an_unreduced_add() {
    let src = module(
        r#"func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b", "c"}]>}, %arg1: tensor<8x16xf32>) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"b", "c"}]>}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {?}], unreduced={"b", "c"}>]>} : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %1 = stablehlo.add %0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {?}], unreduced={"b", "c"}>]>} : tensor<8x16xf32>
    %2 = sdy.reshard %1 <@mesh, [{"a"}, {}]> : tensor<8x16xf32>
    return %2 : tensor<8x16xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::Full);
    let partial = r#"<@mesh, [{"a"}, {}], unreduced={"b", "c"}>"#;
    expect(
        &m,
        &[
            ("%arg1", r#"<@mesh, [{"b", "c"}, {}]>"#),
            ("%0", partial),
            ("%1", partial),
            ("result0", r#"<@mesh, [{"a"}, {"b", "c"}]>"#),
        ],
    );
    let p = insert_explicit_reshards(&m).expect("partitions");
    let s = steps(&p);
    assert_eq!(
        s[..3],
        [
            "compute stablehlo.dot_general",
            "compute stablehlo.add",
            r#"all_reduce Add {"b", "c"} -> <@mesh, [{"a"}, {}]>"#,
        ],
        "{s:#?}"
    );
}

/// `dot_general_with_unreduced_result_partially_delayed`: a reshard that
/// keeps "c" unreduced reduces over "b" only; the add runs on the partial
/// sums over "c", reduced at the final reshard.
#[test]
fn the_reduction_is_split_where_a_reshard_keeps_some_axes_unreduced() {
    let src = module(
        r#"func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b", "c"}]>}, %arg1: tensor<8x16xf32>) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"b", "c"}]>}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {?}], unreduced={"b", "c"}>]>} : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %1 = sdy.reshard %0 <@mesh, [{"a"}, {}], unreduced={"c"}> : tensor<8x16xf32>
    %2 = stablehlo.add %1, %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {?}], unreduced={"c"}>]>} : tensor<8x16xf32>
    %3 = sdy.reshard %2 <@mesh, [{"a"}, {}]> : tensor<8x16xf32>
    return %3 : tensor<8x16xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::Full);
    expect(
        &m,
        &[
            ("%0", r#"<@mesh, [{"a"}, {}], unreduced={"b", "c"}>"#),
            ("%2", r#"<@mesh, [{"a"}, {}], unreduced={"c"}>"#),
            ("result0", r#"<@mesh, [{"a"}, {"b", "c"}]>"#),
        ],
    );
    let p = insert_explicit_reshards(&m).expect("partitions");
    let s = steps(&p);
    assert_eq!(
        s[..4],
        [
            "compute stablehlo.dot_general",
            r#"all_reduce Add {"b"} -> <@mesh, [{"a"}, {}], unreduced={"c"}>"#,
            "compute stablehlo.add",
            r#"all_reduce Add {"c"} -> <@mesh, [{"a"}, {}]>"#,
        ],
        "{s:#?}"
    );
}

/// `unreduced_axes_block_bwd_propagation` (aggressive and op-priority):
/// the add's "b" on its columns does not flow back into the dot's result,
/// which is unreduced along "b"; the rows' "a" does.
#[test]
fn unreduced_axes_block_backward_propagation() {
    let src = module(
        r#"func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>}, %arg1: tensor<8x16xf32>) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"b"}]>}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {?}], unreduced={"b"}>]>} : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %1 = stablehlo.add %0, %0 : tensor<8x16xf32>
    return %1 : tensor<8x16xf32>
  }"#,
    );
    for strategy in [Strategy::Aggressive, Strategy::OpPriority] {
        let m = run_ok(&src, strategy);
        expect(
            &m,
            &[
                ("%arg1", r#"<@mesh, [{"b", ?}, {?}]>"#),
                ("%0", r#"<@mesh, [{"a", ?}, {?}], unreduced={"b"}>"#),
                ("%1", r#"<@mesh, [{"a", ?}, {"b", ?}]>"#),
                ("result0", r#"<@mesh, [{"a", ?}, {"b"}]>"#),
            ],
        );
    }
}

/// `unreduced_custom_reduction_op` (user priorities): `unreduced=max{...}`
/// is read, kept through propagation and printed back; the priorities
/// decide the rest as in Shardy (p0 first: the rhs's "a" shards the
/// contracting dimension, so the lhs's p1 "a" cannot shard the add's rows).
#[test]
fn an_unreduced_max_is_kept_through_propagation() {
    let src = module(
        r#"func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}p1, {?}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}p0, {"b", ?}p0]>}) -> tensor<8x8xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>
    %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}p0, {?}], unreduced=max{"c"}>]>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    return %1 : tensor<8x8xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::UserPriority);
    expect(
        &m,
        &[
            ("%arg0", r#"<@mesh, [{"a", ?}, {?}]>"#),
            ("%arg1", r#"<@mesh, [{"a", ?}, {"b", ?}]>"#),
            ("%0", r#"<@mesh, [{?}, {"a", ?}]>"#),
            ("%1", r#"<@mesh, [{?}, {"b", ?}], unreduced=max{"c"}>"#),
            ("result0", r#"<@mesh, [{?}, {"b", ?}]>"#),
        ],
    );
}

/// A reduce-max whose reduced dimension is sharded leaves partial maxima:
/// annotated `unreduced=max{...}` they stay partial and the reshard that
/// needs the full value all-reduces them with a maximum, not a sum.
#[test]
fn partial_maxima_are_reduced_with_a_maximum() {
    let src = r#"module @m {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}], unreduced=max{"x"}>]>} : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
    %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>]>} : tensor<8xf32>
    return %1 : tensor<8xf32>
  }
}"#;
    let p = insert_explicit_reshards(&parse_module(src).expect("parses")).expect("partitions");
    let s = steps(&p);
    let reduce_at = s
        .iter()
        .position(|x| x == "compute stablehlo.reduce")
        .unwrap_or_else(|| panic!("{s:#?}"));
    assert_eq!(
        s[reduce_at + 1..reduce_at + 3],
        [
            r#"all_reduce Maximum {"x"} -> <@mesh, [{}]>"#,
            "compute stablehlo.negate"
        ],
        "{s:#?}"
    );
}

/// A dot's partial results are sums: annotated `unreduced=max` (as
/// propagation may leave a constraint's sharding on the op that computes
/// its value), they are summed first and the whole value's copies are its
/// partial maxima; no wrong all-reduce, no error.
#[test]
fn a_dot_annotated_with_unreduced_max_is_summed_then_copied() {
    let src = module(
        r#"func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"c"}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"c"}, {}]>}) -> tensor<8x8xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}], unreduced=max{"c"}>]>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }"#,
    );
    let p = insert_explicit_reshards(&parse_module(&src).expect("parses")).expect("partitions");
    let s = steps(&p);
    let dot_at = s
        .iter()
        .position(|x| x == "compute stablehlo.dot_general")
        .unwrap_or_else(|| panic!("{s:#?}"));
    assert!(
        s[dot_at + 1].starts_with(r#"all_reduce Add {"c"}"#),
        "{s:#?}"
    );
    // Its copies are the partial maxima: reducing them moves nothing.
    assert!(
        !s.iter().any(|x| x.starts_with("all_reduce Maximum")),
        "{s:#?}"
    );
    assert!(run(&src, Strategy::Basic).is_ok());
}
