//! `propagation_pipeline.mlir`: the cases of ops with data-flow edges
//! (`stablehlo.case`, `stablehlo.while`), restated with their own
//! programs. A case result is tied to what every branch returns; a loop
//! operand, the cond and body block arguments, what the body yields and
//! the loop result share one sharding, which the `while` op's
//! `sdy.sharding` holds. Where Shardy leaves a value without a sharding,
//! meshrun's export makes the replicated sharding explicit (`[{}]`).
//!
//! Not ported: `case_token_result_skipped` and
//! `while_body_token_block_arg_skipped` (meshrun has no token type),
//! `while_body_propagate_block_arg` and `while_body_propagate_return_op`
//! (they block one direction with a `custom_call` that has no sharding
//! rule; meshrun has no such op).

use meshrun_compiler::propagation::Strategy;
use meshrun_compiler::text::print_module;

use crate::propagation_support::run_ok;

const MESHES: &str = r#"sdy.mesh @ab = <["a"=2, "b"=2]>
  sdy.mesh @abc = <["a"=2, "b"=2, "c"=2]>"#;

/// The full pipeline's result for `func`, printed.
fn propagated(func: &str) -> String {
    let src = format!("module @m {{\n  {MESHES}\n  {func}\n}}\n");
    print_module(&run_ok(&src, Strategy::Full))
}

/// `text` has a line containing every fragment of `fragments`, in order.
fn assert_line(text: &str, fragments: &[&str]) {
    let found = text.lines().any(|line| {
        let mut rest = line;
        fragments.iter().all(|frag| match rest.find(frag) {
            Some(i) => {
                rest = &rest[i + frag.len()..];
                true
            }
            None => false,
        })
    });
    assert!(found, "no line with {fragments:?} in\n{text}");
}

fn case_of(arms: &[&str], ty: &str, attrs: &str) -> String {
    let branches: Vec<String> = arms
        .iter()
        .map(|r| format!("{{\n    stablehlo.return {r} : {ty}\n  }}"))
        .collect();
    format!(
        "\"stablehlo.case\"(%arg0) ({}) {attrs}: (tensor<i32>) -> ({ty})",
        branches.join(", ")
    )
}

/// `case_single_result_func_args_single_sharding`: one branch's sharding
/// reaches the result and, back through the other branch, its argument.
#[test]
fn case_result_takes_the_branch_sharding() {
    let t = propagated(&format!(
        r#"func.func @main(%arg0: tensor<i32>, %arg1: tensor<4xi64> {{sdy.sharding = #sdy.sharding<@ab, [{{"a"}}]>}}, %arg2: tensor<4xi64>) -> tensor<4xi64> {{
    %0 = {}
    return %0 : tensor<4xi64>
  }}"#,
        case_of(&["%arg1", "%arg2"], "tensor<4xi64>", "")
    ));
    assert_line(
        &t,
        &[r#"%arg2: tensor<4xi64> {sdy.sharding = #sdy.sharding<@ab, [{"a"}]>}"#],
    );
    assert_line(
        &t,
        &[r#"-> (tensor<4xi64> {sdy.sharding = #sdy.sharding<@ab, [{"a"}]>})"#],
    );
    assert_line(
        &t,
        &["}) {sdy.sharding = #sdy.sharding_per_value<[<@ab, [{\"a\"}]>]>}"],
    );
}

/// `case_scalars`: scalars have no factors; nothing moves, the case is
/// replicated.
#[test]
fn case_of_scalars_stays_replicated() {
    let t = propagated(&format!(
        r#"func.func @main(%arg0: tensor<i32>, %arg1: tensor<i64> {{sdy.sharding = #sdy.sharding<@ab, [], replicated={{"a"}}>}}, %arg2: tensor<i64>) -> tensor<i64> {{
    %0 = {}
    return %0 : tensor<i64>
  }}"#,
        case_of(&["%arg1", "%arg2"], "tensor<i64>", "")
    ));
    assert_line(
        &t,
        &["}) {sdy.sharding = #sdy.sharding_per_value<[<@ab, []>]>}"],
    );
}

/// `case_single_result_func_args_conflict`: the branches agree on "a"
/// only; the result gets that common prefix.
#[test]
fn case_branches_in_conflict_give_the_common_prefix() {
    let t = propagated(&format!(
        r#"func.func @main(%arg0: tensor<i32>, %arg1: tensor<8xi64> {{sdy.sharding = #sdy.sharding<@abc, [{{"a", "b"}}]>}}, %arg2: tensor<8xi64> {{sdy.sharding = #sdy.sharding<@abc, [{{"a", "c"}}]>}}) -> tensor<8xi64> {{
    %0 = {}
    return %0 : tensor<8xi64>
  }}"#,
        case_of(&["%arg1", "%arg2"], "tensor<8xi64>", "")
    ));
    assert_line(
        &t,
        &["}) {sdy.sharding = #sdy.sharding_per_value<[<@abc, [{\"a\"}]>]>}"],
    );
    assert_line(
        &t,
        &[r#"-> (tensor<8xi64> {sdy.sharding = #sdy.sharding<@abc, [{"a"}]>})"#],
    );
}

/// `case_single_result_func_first_sharding_best_ignored`: ["a","b","c"]
/// and ["c"] have no common major axis, so the result stays replicated
/// even though the first branch alone would shard it fully.
#[test]
fn case_branches_without_a_common_prefix_leave_the_result_replicated() {
    let t = propagated(&format!(
        r#"func.func @main(%arg0: tensor<i32>, %arg1: tensor<8xi64> {{sdy.sharding = #sdy.sharding<@abc, [{{"a", "b", "c"}}]>}}, %arg2: tensor<8xi64> {{sdy.sharding = #sdy.sharding<@abc, [{{"c"}}]>}}) -> tensor<8xi64> {{
    %0 = {}
    return %0 : tensor<8xi64>
  }}"#,
        case_of(&["%arg1", "%arg2"], "tensor<8xi64>", "")
    ));
    assert_line(
        &t,
        &["}) {sdy.sharding = #sdy.sharding_per_value<[<@abc, [{}]>]>}"],
    );
    assert_line(
        &t,
        &[r#"%arg2: tensor<8xi64> {sdy.sharding = #sdy.sharding<@abc, [{"c"}]>}"#],
    );
}

/// `case_multiple_results_different_sharding`: each result has its own
/// edge; open argument shardings grow to the edge's sharding.
#[test]
fn case_results_are_separate_edges() {
    let t = propagated(&format!(
        r#"func.func @main(%arg0: tensor<i32>,
      %arg1: tensor<8xi64> {{sdy.sharding = #sdy.sharding<@abc, [{{"a", ?}}]>}},
      %arg2: tensor<8xi64> {{sdy.sharding = #sdy.sharding<@abc, [{{"c", ?}}]>}},
      %arg3: tensor<8xi64> {{sdy.sharding = #sdy.sharding<@abc, [{{"a", "b", ?}}]>}},
      %arg4: tensor<8xi64> {{sdy.sharding = #sdy.sharding<@abc, [{{"c", ?}}]>}}) -> (tensor<8xi64>, tensor<8xi64>) {{
    %0:2 = {}
    return %0#0, %0#1 : tensor<8xi64>, tensor<8xi64>
  }}"#,
        case_of(
            &["%arg1, %arg2", "%arg3, %arg4"],
            "tensor<8xi64>, tensor<8xi64>",
            ""
        )
    ));
    assert_line(
        &t,
        &["}) {sdy.sharding = #sdy.sharding_per_value<[<@abc, [{\"a\", \"b\"}]>, <@abc, [{\"c\"}]>]>}"],
    );
    assert_line(
        &t,
        &[r#"%arg1: tensor<8xi64> {sdy.sharding = #sdy.sharding<@abc, [{"a", "b"}]>}"#],
    );
    assert_line(
        &t,
        &[r#"%arg4: tensor<8xi64> {sdy.sharding = #sdy.sharding<@abc, [{"c"}]>}"#],
    );
}

/// `case_multiple_dim_most_compatible`: an axis a branch uses on another
/// dimension cannot be taken; ["a"] on dimension 0 and ["b"] on 1 win
/// over ["a","b"] on dimension 0 (equal size, first seen).
#[test]
fn case_most_compatible_axes_across_dimensions() {
    let t = propagated(&format!(
        r#"func.func @main(%arg0: tensor<i32>,
      %arg1: tensor<8x8xi64> {{sdy.sharding = #sdy.sharding<@abc, [{{?}}, {{"b", ?}}]>}},
      %arg2: tensor<8x8xi64> {{sdy.sharding = #sdy.sharding<@abc, [{{"a", "b", ?}}, {{?}}]>}}) -> tensor<8x8xi64> {{
    %0 = {}
    return %0 : tensor<8x8xi64>
  }}"#,
        case_of(&["%arg1", "%arg2"], "tensor<8x8xi64>", "")
    ));
    assert_line(
        &t,
        &["}) {sdy.sharding = #sdy.sharding_per_value<[<@abc, [{\"a\"}, {\"b\"}]>]>}"],
    );
    assert_line(
        &t,
        &[r#"%arg1: tensor<8x8xi64> {sdy.sharding = #sdy.sharding<@abc, [{"a"}, {"b"}]>}"#],
    );
    assert_line(
        &t,
        &[r#"%arg2: tensor<8x8xi64> {sdy.sharding = #sdy.sharding<@abc, [{"a", "b"}, {}]>}"#],
    );
}

/// `case_multiple_results_different_sharding_conflicts`: the second
/// result's branches (["b"] and ["a"]) conflict; it stays replicated while
/// the first result gets ["a","b"].
#[test]
fn case_conflict_on_one_result_leaves_the_other() {
    let t = propagated(&format!(
        r#"func.func @main(%arg0: tensor<i32>,
      %arg1: tensor<8xi64> {{sdy.sharding = #sdy.sharding<@abc, [{{"a", ?}}]>}},
      %arg2: tensor<8xi64> {{sdy.sharding = #sdy.sharding<@abc, [{{"b", ?}}]>}},
      %arg3: tensor<8xi64> {{sdy.sharding = #sdy.sharding<@abc, [{{"a", "b", ?}}]>}},
      %arg4: tensor<8xi64> {{sdy.sharding = #sdy.sharding<@abc, [{{"a", ?}}]>}}) -> (tensor<8xi64>, tensor<8xi64>) {{
    %0:2 = {}
    return %0#0, %0#1 : tensor<8xi64>, tensor<8xi64>
  }}"#,
        case_of(
            &["%arg1, %arg2", "%arg3, %arg4"],
            "tensor<8xi64>, tensor<8xi64>",
            ""
        )
    ));
    assert_line(
        &t,
        &["}) {sdy.sharding = #sdy.sharding_per_value<[<@abc, [{\"a\", \"b\"}]>, <@abc, [{}]>]>}"],
    );
    assert_line(
        &t,
        &[r#"%arg2: tensor<8xi64> {sdy.sharding = #sdy.sharding<@abc, [{"b"}]>}"#],
    );
    assert_line(
        &t,
        &[r#"%arg4: tensor<8xi64> {sdy.sharding = #sdy.sharding<@abc, [{"a"}]>}"#],
    );
}

/// `case_closed_sharding`: a closed ["a"] branch does not stop the other
/// branch's ["a","b"] from reaching the result.
#[test]
fn case_closed_branch_does_not_cap_the_result() {
    let t = propagated(&format!(
        r#"func.func @main(%arg0: tensor<i32>, %arg1: tensor<8xi64> {{sdy.sharding = #sdy.sharding<@abc, [{{"a"}}]>}}, %arg2: tensor<8xi64> {{sdy.sharding = #sdy.sharding<@abc, [{{"a", "b"}}]>}}) -> tensor<8xi64> {{
    %0 = {}
    return %0 : tensor<8xi64>
  }}"#,
        case_of(&["%arg1", "%arg2"], "tensor<8xi64>", "")
    ));
    assert_line(
        &t,
        &["}) {sdy.sharding = #sdy.sharding_per_value<[<@abc, [{\"a\", \"b\"}]>]>}"],
    );
    assert_line(
        &t,
        &[r#"%arg1: tensor<8xi64> {sdy.sharding = #sdy.sharding<@abc, [{"a"}]>}"#],
    );
}

/// `case_not_func_args_or_directly_returned`: branches return op results
/// and the case result feeds another op; all agree on ["a","b"].
#[test]
fn case_between_ops() {
    let t = propagated(&format!(
        r#"func.func @main(%arg0: tensor<i32>, %arg1: tensor<8xi64> {{sdy.sharding = #sdy.sharding<@abc, [{{"a"}}]>}}, %arg2: tensor<8xi64> {{sdy.sharding = #sdy.sharding<@abc, [{{"a", "b"}}]>}}) -> tensor<8xi64> {{
    %0 = stablehlo.add %arg1, %arg1 : tensor<8xi64>
    %1 = stablehlo.add %arg2, %arg2 : tensor<8xi64>
    %2 = {}
    %3 = stablehlo.add %2, %2 : tensor<8xi64>
    return %3 : tensor<8xi64>
  }}"#,
        case_of(&["%0", "%1"], "tensor<8xi64>", "")
    ));
    let ab = r#"{sdy.sharding = #sdy.sharding_per_value<[<@abc, [{"a", "b"}]>]>}"#;
    assert_line(&t, &["%0 = stablehlo.add %arg1, %arg1 ", ab]);
    assert_line(&t, &["%1 = stablehlo.add %arg2, %arg2 ", ab]);
    assert_line(&t, &["}) ", ab]);
    assert_line(&t, &["%3 = stablehlo.add %2, %2 ", ab]);
}

/// `case_propagate_from_func_result`: the function result's ["a","b"]
/// flows back through the case into both branches' arguments.
#[test]
fn case_from_the_function_result() {
    let t = propagated(&format!(
        r#"func.func @main(%arg0: tensor<i32>, %arg1: tensor<8xi64>, %arg2: tensor<8xi64> {{sdy.sharding = #sdy.sharding<@ab, [{{"a", ?}}]>}}) -> (tensor<8xi64> {{sdy.sharding = #sdy.sharding<@ab, [{{"a", "b", ?}}]>}}) {{
    %0 = {}
    return %0 : tensor<8xi64>
  }}"#,
        case_of(&["%arg1", "%arg2"], "tensor<8xi64>", "")
    ));
    assert_line(
        &t,
        &["}) {sdy.sharding = #sdy.sharding_per_value<[<@ab, [{\"a\", \"b\"}]>]>}"],
    );
    assert_line(
        &t,
        &[r#"%arg1: tensor<8xi64> {sdy.sharding = #sdy.sharding<@ab, [{"a", "b"}]>}"#],
    );
    assert_line(
        &t,
        &[r#"%arg2: tensor<8xi64> {sdy.sharding = #sdy.sharding<@ab, [{"a", "b"}]>}"#],
    );
}

/// `case_propagate_from_case_op_result`: an open sharding written on the
/// case itself is the edge's starting point.
#[test]
fn case_from_its_own_sharding() {
    let t = propagated(&format!(
        r#"func.func @main(%arg0: tensor<i32>, %arg1: tensor<8xi64>, %arg2: tensor<8xi64> {{sdy.sharding = #sdy.sharding<@ab, [{{"a", ?}}]>}}) -> tensor<8xi64> {{
    %0 = {}
    return %0 : tensor<8xi64>
  }}"#,
        case_of(
            &["%arg1", "%arg2"],
            "tensor<8xi64>",
            "{sdy.sharding = #sdy.sharding_per_value<[<@ab, [{\"a\", \"b\", ?}]>]>} "
        )
    ));
    assert_line(
        &t,
        &["}) {sdy.sharding = #sdy.sharding_per_value<[<@ab, [{\"a\", \"b\"}]>]>}"],
    );
    assert_line(
        &t,
        &[r#"%arg1: tensor<8xi64> {sdy.sharding = #sdy.sharding<@ab, [{"a", "b"}]>}"#],
    );
    assert_line(
        &t,
        &[r#"-> (tensor<8xi64> {sdy.sharding = #sdy.sharding<@ab, [{"a", "b"}]>})"#],
    );
}

/// `case_propagate_mulitple_uses`: every user of the case result gets
/// the edge's sharding.
#[test]
fn case_result_with_several_users() {
    let t = propagated(&format!(
        r#"func.func @main(%arg0: tensor<i32>, %arg1: tensor<8xi64>, %arg2: tensor<8xi64> {{sdy.sharding = #sdy.sharding<@ab, [{{"a", "b", ?}}]>}}) -> tensor<8xi64> {{
    %0 = {}
    %1 = stablehlo.add %0, %0 : tensor<8xi64>
    %2 = stablehlo.subtract %0, %0 : tensor<8xi64>
    %3 = stablehlo.divide %2, %1 : tensor<8xi64>
    return %3 : tensor<8xi64>
  }}"#,
        case_of(&["%arg1", "%arg2"], "tensor<8xi64>", "")
    ));
    let ab = r#"{sdy.sharding = #sdy.sharding_per_value<[<@ab, [{"a", "b"}]>]>}"#;
    for op in [
        "}) ",
        "stablehlo.add %0, %0 ",
        "stablehlo.subtract %0, %0 ",
        "stablehlo.divide %2, %1 ",
    ] {
        assert_line(&t, &[op, ab]);
    }
}

/// A counting loop over one 32x96 value: `pre` runs before the loop,
/// `post` after it (on `%3#0`, returned as `%ret`).
fn while_loop(
    args: &str,
    result: &str,
    pre: &str,
    init: &str,
    body_add: &str,
    post: &str,
) -> String {
    format!(
        r#"func.func @main({args}) -> {result} {{
    %0 = sdy.constant dense<0> : tensor<i32>
    %1 = sdy.constant dense<1> : tensor<i32>
    %2 = sdy.constant dense<32> : tensor<i32>
    {pre}
    %3:2 = stablehlo.while(%iterArg = {init}, %iterArg_0 = %0) : tensor<32x96xf32>, tensor<i32>
    cond {{
      %4 = stablehlo.compare LT, %iterArg_0, %2 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %4 : tensor<i1>
    }} do {{
      %4 = stablehlo.add %iterArg_0, %1 : tensor<i32>
      %5 = stablehlo.add %iterArg, %iterArg {body_add}: tensor<32x96xf32>
      stablehlo.return %5, %4 : tensor<32x96xf32>, tensor<i32>
    }}
    {post}
  }}"#
    )
}

const AB_AB: &str = r#"<@ab, [{"a"}, {"b"}]>"#;

fn assert_loop_sharded(t: &str) {
    assert_line(
        t,
        &[
            "stablehlo.while(",
            &format!("{{sdy.sharding = #sdy.sharding_per_value<[{AB_AB}, <@ab, []>]>}}"),
        ],
    );
    assert_line(
        t,
        &[
            "stablehlo.add %iterArg, %iterArg ",
            &format!("{{sdy.sharding = #sdy.sharding_per_value<[{AB_AB}]>}}"),
        ],
    );
    assert_line(
        t,
        &[&format!(
            "%arg0: tensor<32x96xf32> {{sdy.sharding = #sdy.sharding{}}}",
            AB_AB
        )],
    );
}

/// `while_func_return`: from the function result back through the loop
/// into its body and its operand.
#[test]
fn while_from_the_function_result() {
    let t = propagated(&while_loop(
        "%arg0: tensor<32x96xf32>",
        &format!("(tensor<32x96xf32> {{sdy.sharding = #sdy.sharding{AB_AB}}})"),
        "",
        "%arg0",
        "",
        "return %3#0 : tensor<32x96xf32>",
    ));
    assert_loop_sharded(&t);
}

/// `while_func_return_directly_on_func_operand`: an open argument and an
/// open result sharding combine through the loop.
#[test]
fn while_combines_open_argument_and_result() {
    let t = propagated(&while_loop(
        r#"%arg0: tensor<32x96xf32> {sdy.sharding = #sdy.sharding<@ab, [{"a", ?}, {?}]>}"#,
        r#"(tensor<32x96xf32> {sdy.sharding = #sdy.sharding<@ab, [{?}, {"b", ?}]>})"#,
        "",
        "%arg0",
        "",
        "return %3#0 : tensor<32x96xf32>",
    ));
    assert_loop_sharded(&t);
    assert_line(
        &t,
        &[&format!(
            "-> (tensor<32x96xf32> {{sdy.sharding = #sdy.sharding{AB_AB}}})"
        )],
    );
}

/// `while_result_use`: from a user of the loop result.
#[test]
fn while_from_a_user_of_the_result() {
    let t = propagated(&while_loop(
        "%arg0: tensor<32x96xf32>",
        "tensor<32x96xf32>",
        "",
        "%arg0",
        "",
        &format!(
            "%6 = stablehlo.add %3#0, %3#0 {{sdy.sharding = #sdy.sharding_per_value<[{AB_AB}]>}} : tensor<32x96xf32>\n    return %6 : tensor<32x96xf32>"
        ),
    ));
    assert_loop_sharded(&t);
}

/// `while_body_non_func_operand_result_use`: from an op inside the body,
/// out through the block argument and the yield to the ops before and
/// after the loop.
#[test]
fn while_from_inside_the_body() {
    let t = propagated(&while_loop(
        "%arg0: tensor<32x96xf32>",
        "tensor<32x96xf32>",
        "%7 = stablehlo.add %arg0, %arg0 : tensor<32x96xf32>",
        "%7",
        &format!("{{sdy.sharding = #sdy.sharding_per_value<[{AB_AB}]>}} "),
        "%8 = stablehlo.add %3#0, %3#0 : tensor<32x96xf32>\n    return %8 : tensor<32x96xf32>",
    ));
    assert_loop_sharded(&t);
    let ab = format!("{{sdy.sharding = #sdy.sharding_per_value<[{AB_AB}]>}}");
    assert_line(&t, &["stablehlo.add %arg0, %arg0 ", &ab]);
    // The printer renumbers: the loop is %4 once the add before it is %3.
    assert_line(&t, &["stablehlo.add %4#0, %4#0 ", &ab]);
}

/// `while_func_operand`: from the function argument into the body and
/// out to the result.
#[test]
fn while_from_the_function_argument() {
    let t = propagated(&while_loop(
        &format!("%arg0: tensor<32x96xf32> {{sdy.sharding = #sdy.sharding{AB_AB}}}"),
        "tensor<32x96xf32>",
        "",
        "%arg0",
        "",
        "return %3#0 : tensor<32x96xf32>",
    ));
    assert_loop_sharded(&t);
    assert_line(
        &t,
        &[&format!(
            "-> (tensor<32x96xf32> {{sdy.sharding = #sdy.sharding{AB_AB}}})"
        )],
    );
}

/// `sharding_group_on_while_result`: a loop result in a sharding group
/// with a constrained value takes the constraint's sharding, and so do
/// the loop's operand and body.
#[test]
fn while_result_in_a_sharding_group() {
    let t = propagated(
        r#"func.func @main(%arg0: tensor<16x16xf32>, %arg1: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
    %0 = stablehlo.constant dense<0> : tensor<i32>
    %inc = stablehlo.constant dense<1> : tensor<i32>
    %comp = stablehlo.constant dense<32> : tensor<i32>
    %1:2 = stablehlo.while(%iterArg = %arg0, %iterArg_2 = %0) : tensor<16x16xf32>, tensor<i32>
    cond {
      %3 = stablehlo.compare LT, %iterArg_2, %comp : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %3 : tensor<i1>
    } do {
      %3 = stablehlo.add %iterArg_2, %inc : tensor<i32>
      %4 = stablehlo.add %iterArg, %iterArg : tensor<16x16xf32>
      stablehlo.return %4, %3 : tensor<16x16xf32>, tensor<i32>
    }
    sdy.sharding_group %1#0 group_id = 50 : tensor<16x16xf32>
    %2 = sdy.sharding_constraint %arg1 <@ab, [{"a"}, {}]> : tensor<16x16xf32>
    sdy.sharding_group %2 group_id = 50 : tensor<16x16xf32>
    return %1#0, %2 : tensor<16x16xf32>, tensor<16x16xf32>
  }"#,
    );
    assert_line(
        &t,
        &[
            "stablehlo.while(",
            r#"{sdy.sharding = #sdy.sharding_per_value<[<@ab, [{"a"}, {}]>, <@ab, []>]>}"#,
        ],
    );
    assert_line(
        &t,
        &[r#"%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@ab, [{"a"}, {}]>}"#],
    );
}
