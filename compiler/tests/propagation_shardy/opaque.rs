//! Custom calls meshrun cannot run and `!stablehlo.token` values, which
//! propagation must carry as Shardy does (`basic_propagation.mlir`:
//! `custom_call_custom_rule`, `blocked_propagation_factor`,
//! `cx64_combine_used_then_rng_bit_generator`, `token_func_output_skipped`;
//! `propagation_pipeline.mlir`: `case_token_result_skipped`): a call with
//! a rule the program writes propagates by that rule, one without a rule
//! stops propagation (its operands and results keep what their other uses
//! give them), and a token gets no dimension sharding.

use meshrun_compiler::propagation::Strategy;

use crate::propagation_support::{expect, run_ok};

fn module(func: &str) -> String {
    format!("module @m {{\n  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2, \"c\"=2]>\n  {func}\n}}\n")
}

/// `custom_call_custom_rule`: the written pass-through rule carries the
/// argument's axes to the result (and on to the function result).
#[test]
fn custom_call_propagates_by_its_written_rule() {
    let src = module(
        r#"func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "b", ?}]>}) -> tensor<8xf32> {
    %0 = stablehlo.custom_call @foo(%arg0) {sdy.sharding_rule = #sdy.op_sharding_rule<([i])->([i]) {i=8}, custom>} : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::Basic);
    expect(
        &m,
        &[
            ("%0", r#"<@mesh, [{"a", "b", ?}]>"#),
            ("result0", r#"<@mesh, [{"a", "b", ?}]>"#),
        ],
    );
}

/// `blocked_propagation_factor`: of a written rule's factors, the blocked
/// ones (i, k) carry nothing; j carries "b".
#[test]
fn custom_call_written_rule_blocks_its_blocked_factors() {
    let src = module(
        r#"func.func @main(%arg0: tensor<8x8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}, {"c"}]>}) -> tensor<8x8x8xf32> {
    %0 = stablehlo.custom_call @foo(%arg0) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k])->([i, j, k]) {i=8, j=8, k=8} need_replication={j, k} blocked_propagation={i, k}, custom>} : (tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
    return %0 : tensor<8x8x8xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::Basic);
    expect(&m, &[("%0", r#"<@mesh, [{?}, {"b", ?}, {?}]>"#)]);
}

/// `cx64_combine_used_then_rng_bit_generator`: a call without a rule
/// stops propagation: its result gets nothing from its operands, while
/// the rng_bit_generator after it still takes the function result's axes.
#[test]
fn custom_call_without_rule_stops_propagation() {
    let src = module(
        r#"func.func @main(%arg0: tensor<2xui32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}, %arg1: tensor<2xui32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}) -> (tensor<4x1000xui32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>}, tensor<2xui64>) {
    %0 = stablehlo.custom_call @X64Combine(%arg0, %arg1) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui64>
    %output_state, %output = stablehlo.rng_bit_generator %0, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4x1000xui32>)
    return %output, %0 : tensor<4x1000xui32>, tensor<2xui64>
  }"#,
    );
    let m = run_ok(&src, Strategy::Basic);
    expect(
        &m,
        &[("%0", "none"), ("%1#1", r#"<@mesh, [{"a", ?}, {"b", ?}]>"#)],
    );
}

/// `token_func_output_skipped`: a token argument and result get no
/// sharding while the tensor beside them propagates.
#[test]
fn token_arguments_and_results_are_skipped() {
    let src = module(
        r#"func.func @main(%arg0: !stablehlo.token, %arg1: tensor<8x16xf32>) -> (!stablehlo.token, tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>}) {
    %0 = stablehlo.add %arg1, %arg1 : tensor<8x16xf32>
    %1 = stablehlo.after_all %arg0 : !stablehlo.token
    return %1, %0 : !stablehlo.token, tensor<8x16xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::Basic);
    expect(
        &m,
        &[
            ("%arg0", "none"),
            ("%arg1", r#"<@mesh, [{"a", ?}, {"b", ?}]>"#),
            ("%0", r#"<@mesh, [{"a", ?}, {"b", ?}]>"#),
            ("result0", "none"),
        ],
    );
}

/// `case_token_result_skipped`: a case returning a token and a tensor;
/// the tensor result takes its branch's sharding, the token result the
/// empty one Shardy gives it.
#[test]
fn case_token_result_is_skipped() {
    let src = module(
        r#"func.func @main(%arg0: tensor<i32>, %arg1: !stablehlo.token, %arg2: !stablehlo.token, %arg3: tensor<4xi64> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}, %arg4: tensor<4xi64>) -> (!stablehlo.token, tensor<4xi64>) {
    %0:2 = "stablehlo.case"(%arg0) ({
      stablehlo.return %arg1, %arg3 : !stablehlo.token, tensor<4xi64>
    }, {
      stablehlo.return %arg2, %arg4 : !stablehlo.token, tensor<4xi64>
    }) : (tensor<i32>) -> (!stablehlo.token, tensor<4xi64>)
    return %0#0, %0#1 : !stablehlo.token, tensor<4xi64>
  }"#,
    );
    let m = run_ok(&src, Strategy::Full);
    expect(
        &m,
        &[
            ("%0#0", "<@mesh, []>"),
            ("%0#1", r#"<@mesh, [{"a"}]>"#),
            ("%arg4", r#"<@mesh, [{"a"}]>"#),
        ],
    );
}
