//! The worked examples of the design docs (SPEC §2 and §5, seeds 000-002)
//! as tests. The factor-table example of SPEC §5 is in
//! `propagation_factors.rs` (`spec_factor_table_example`), where factor
//! shardings can be written down directly.

mod propagation_support;

use meshrun_compiler::propagation::Strategy;
use propagation_support::{expect, run_ok};

#[test]
fn reshape_of_an_axis_splits_it_into_sub_axes() {
    // SPEC §2: tensor<8> on {"x"} (x=4) reshaped to 2x4 keeps the data in
    // place as [{"x":(1)2}, {"x":(2)2}].
    let src = r#"module @m {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<2x4xf32> {
    %0 = stablehlo.reshape %arg0 : (tensor<8xf32>) -> tensor<2x4xf32>
    return %0 : tensor<2x4xf32>
  }
}"#;
    for strategy in [Strategy::Basic, Strategy::Full] {
        let m = run_ok(src, strategy);
        let want = if strategy == Strategy::Full {
            r#"<@mesh, [{"x":(1)2}, {"x":(2)2}]>"#
        } else {
            r#"<@mesh, [{"x":(1)2, ?}, {"x":(2)2, ?}]>"#
        };
        expect(&m, &[("%0", want)]);
    }
    // The function result got the same sharding during propagation, but
    // Shardy's export removes sub-axes from open dimensions of the entry
    // function's results (they were never written by the user).
    let m = run_ok(src, Strategy::Full);
    expect(&m, &[("result0", r#"<@mesh, [{}, {}]>"#)]);
}

/// A two-layer MLP annotated for three rounds: batch parallelism (p0),
/// then Megatron (p1), then ZeRO (p2).
const PRIORITIES: &str = r#"module @m {
  sdy.mesh @mesh = <["batch"=2, "model"=2, "zero"=2]>
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"batch"}p0, {?}]>},
                  %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"zero", ?}p2, {"model"}p1]>},
                  %arg2: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}p1, {"zero", ?}p2]>}) -> tensor<8x16xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %1 = stablehlo.tanh %0 : tensor<8x32xf32>
    %2 = stablehlo.dot_general %1, %arg2, contracting_dims = [1] x [0] : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
    return %2 : tensor<8x16xf32>
  }
}"#;

#[test]
fn priorities_batch_then_megatron_then_zero() {
    let m = run_ok(PRIORITIES, Strategy::UserPriority);
    expect(
        &m,
        &[
            // Round p0: the batch dimension everywhere.
            // Round p1: the hidden dimension on "model" (columns of w1,
            // rows of w2).
            ("%0", r#"<@mesh, [{"batch", ?}, {"model", ?}]>"#),
            ("%1", r#"<@mesh, [{"batch", ?}, {"model", ?}]>"#),
            // Round p2: ZeRO shards the weights' other dimension on
            // "zero"; it reaches x's contracting dimension and the
            // output's columns, where nothing earlier claimed them.
            ("%arg0", r#"<@mesh, [{"batch"}, {"zero", ?}]>"#),
            ("%arg1", r#"<@mesh, [{"zero", ?}, {"model"}]>"#),
            ("%arg2", r#"<@mesh, [{"model"}, {"zero", ?}]>"#),
            ("%2", r#"<@mesh, [{"batch", ?}, {"zero", ?}]>"#),
        ],
    );
}

#[test]
fn a_lower_priority_never_overrides_a_higher_one() {
    // Without priorities, "a" on the (larger) weight's columns beats "a"
    // on the batch; with the batch at p0 and the weight at p1, the batch
    // keeps it.
    let with = |p: &str| {
        format!(
            r#"module @m {{
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @main(%arg0: tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"a"}}p0, {{?}}]>}}, %arg1: tensor<8x16xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{?}}, {{"a"}}{p}]>}}) -> tensor<8x16xf32> {{
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    return %0 : tensor<8x16xf32>
  }}
}}"#
        )
    };
    let prioritized = run_ok(&with("p1"), Strategy::UserPriority);
    expect(&prioritized, &[("%0", r#"<@mesh, [{"a", ?}, {?}]>"#)]);
    let flat = run_ok(&with("p0"), Strategy::UserPriority);
    expect(&flat, &[("%0", r#"<@mesh, [{?}, {"a", ?}]>"#)]);
}

#[test]
fn explicit_replication_blocks_an_open_dimension() {
    // %0 is open in both dimensions but explicitly replicated on "x": it
    // takes "y" from its operand, never "x", and so neither does %1.
    let src = r#"module @m {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8x8xf32> {
    %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {?}], replicated={"x"}>]>} : tensor<8x8xf32>
    %1 = stablehlo.exponential %0 : tensor<8x8xf32>
    return %1 : tensor<8x8xf32>
  }
}"#;
    let m = run_ok(src, Strategy::OpPriority);
    expect(
        &m,
        &[
            ("%0", r#"<@mesh, [{?}, {"y", ?}], replicated={"x"}>"#),
            ("%1", r#"<@mesh, [{?}, {"y", ?}]>"#),
        ],
    );
    // Without the replication, "x" goes through.
    let open = src.replace(r#", replicated={"x"}"#, "");
    let m = run_ok(&open, Strategy::OpPriority);
    expect(&m, &[("%1", r#"<@mesh, [{"x", ?}, {"y", ?}]>"#)]);
}
