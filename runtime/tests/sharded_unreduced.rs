//! Values that become unreduced without being partial results: a
//! replicated value (the first device of each group keeps it, the others
//! hold zeros: Shardy's `sdy.replicated_to_unreduced`), a value whose
//! dimensions lose their last axes (each device keeps its block in a
//! larger zero block: `sdy.sharded_to_unreduced`, uneven blocks
//! included), max-partials (copies are already partials), and axes that
//! shard a dimension but not last (gathered first). Each runs on 8 CPU
//! devices against the unsharded program; none moves data to become
//! unreduced.

use meshrun_compiler::partition::global::GStepKind;
use meshrun_compiler::partition::{CollectiveKind, PartitionedProgram};
use meshrun_kernels::HostTensor;

#[path = "common/sharded.rs"]
mod sharded;
use sharded::{collectives, run_both};

fn wavy(shape: &[usize]) -> HostTensor {
    let n: usize = shape.iter().product();
    let v = (0..n)
        .map(|i| ((i * 37 % 101) as f32) * 0.125 - 6.0)
        .collect();
    HostTensor::from_vec(shape, v).unwrap()
}

/// `value` (an expression of `%t`, tanh of the sharded argument) through
/// a constraint to `unreduced`, negated there, then reduced to `end`.
fn through_unreduced(shape: &str, arg: &str, unreduced: &str, end: &str) -> String {
    format!(
        r#"
  func.func @main(%arg0: tensor<{shape}xf32> {{sdy.sharding = #sdy.sharding<@mesh, {arg}>}}) -> tensor<{shape}xf32> {{
    %t = stablehlo.tanh %arg0 {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, {arg}>]>}} : tensor<{shape}xf32>
    %u = sdy.sharding_constraint %t <@mesh, {unreduced}> : tensor<{shape}xf32>
    %n = stablehlo.negate %u {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, {unreduced}>]>}} : tensor<{shape}xf32>
    %r = sdy.sharding_constraint %n <@mesh, {end}> : tensor<{shape}xf32>
    return %r : tensor<{shape}xf32>
  }}"#
    )
}

fn to_unreduced_steps(p: &PartitionedProgram) -> Vec<Vec<String>> {
    p.global
        .steps
        .iter()
        .filter_map(|s| match &s.kind {
            GStepKind::ToUnreduced { axes } => Some(axes.iter().map(|a| a.to_string()).collect()),
            _ => None,
        })
        .collect()
}

fn kinds(p: &PartitionedProgram) -> Vec<CollectiveKind> {
    collectives(p).into_iter().map(|(k, _)| k).collect()
}

#[test]
fn replicated_value_is_kept_by_one_device_per_group() {
    let text = through_unreduced(
        "8x12",
        r#"[{}, {"model"}]"#,
        r#"[{}, {"model"}], unreduced={"data"}"#,
        r#"[{}, {"model"}]"#,
    );
    let p = run_both(&text, &[wavy(&[8, 12])]);
    assert_eq!(to_unreduced_steps(&p), vec![vec!["\"data\"".to_string()]]);
    // The only data moved is the final reduction.
    assert_eq!(kinds(&p), vec![CollectiveKind::AllReduce]);
}

#[test]
fn scalar_becomes_unreduced_over_every_axis() {
    let text = r#"
  func.func @main(%arg0: tensor<f32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
    %t = stablehlo.tanh %arg0 : tensor<f32>
    %u = sdy.sharding_constraint %t <@mesh, [], unreduced={"data", "model"}> : tensor<f32>
    %n = stablehlo.negate %u {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [], unreduced={"data", "model"}>]>} : tensor<f32>
    %r = sdy.sharding_constraint %n <@mesh, []> : tensor<f32>
    %b = stablehlo.broadcast_in_dim %r, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %s = stablehlo.add %b, %arg1 : tensor<4xf32>
    return %s : tensor<4xf32>
  }"#;
    let p = run_both(
        text,
        &[
            HostTensor::from_vec(&[], vec![0.75f32]).unwrap(),
            wavy(&[4]),
        ],
    );
    assert_eq!(to_unreduced_steps(&p).len(), 1);
}

#[test]
fn trailing_axes_become_unreduced_in_place_with_uneven_blocks() {
    // 14 columns on "model"=4: blocks of 4, 4, 4 and 2 (and 2 of padding).
    let text = through_unreduced(
        "8x14",
        r#"[{"data"}, {"model"}]"#,
        r#"[{}, {}], unreduced={"data", "model"}"#,
        r#"[{"model"}, {}]"#,
    );
    let p = run_both(&text, &[wavy(&[8, 14])]);
    assert_eq!(to_unreduced_steps(&p).len(), 1);
    // Becoming unreduced (the constraint at line 6) moves nothing.
    let moved = collectives(&p);
    assert!(
        moved
            .iter()
            .all(|(_, why)| !why.starts_with("sdy.reshard at 6:")),
        "{moved:?}"
    );
    assert!(moved
        .iter()
        .any(|(_, why)| why.starts_with("sdy.reshard at 8:")));
}

#[test]
fn one_dimension_loses_its_axis_the_other_keeps_its_own() {
    let text = through_unreduced(
        "8x12",
        r#"[{"data"}, {"model"}]"#,
        r#"[{}, {"model"}], unreduced={"data"}"#,
        r#"[{}, {"model"}]"#,
    );
    let p = run_both(&text, &[wavy(&[8, 12])]);
    assert_eq!(to_unreduced_steps(&p).len(), 1);
    assert_eq!(kinds(&p), vec![CollectiveKind::AllReduce]);
}

#[test]
fn an_axis_before_another_on_its_dimension_is_gathered_first() {
    // "data" shards dim 0 before "model": it cannot end the dimension's
    // list, so the block is gathered along it first.
    let text = through_unreduced(
        "16x4",
        r#"[{"data", "model"}, {}]"#,
        r#"[{"model"}, {}], unreduced={"data"}"#,
        r#"[{"model"}, {}]"#,
    );
    let p = run_both(&text, &[wavy(&[16, 4])]);
    assert_eq!(to_unreduced_steps(&p).len(), 1);
}

#[test]
fn max_partials_are_copies() {
    let text = through_unreduced(
        "8x12",
        r#"[{"data"}, {"model"}]"#,
        r#"[{"data"}, {}], unreduced=max{"model"}"#,
        r#"[{"data"}, {}]"#,
    )
    .replace("stablehlo.negate", "stablehlo.exponential");
    let p = run_both(&text, &[wavy(&[8, 12])]);
    // Copies of a value are its max-partials: no zeros, no mask.
    assert!(to_unreduced_steps(&p).is_empty());
}

#[test]
fn partial_maxima_become_partial_sums_through_their_maximum() {
    let text = r#"
  func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], unreduced=max{"data"}>}) -> tensor<8x4xf32> {
    %u = sdy.reshard %arg0 <@mesh, [{}, {}], unreduced={"data", "model"}> : tensor<8x4xf32>
    %n = stablehlo.negate %u {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}], unreduced={"data", "model"}>]>} : tensor<8x4xf32>
    %r = sdy.reshard %n <@mesh, [{"model"}, {}]> : tensor<8x4xf32>
    return %r : tensor<8x4xf32>
  }"#;
    let p = run_both(text, &[wavy(&[8, 4])]);
    // The maxima are reduced (copies: no bytes), then summed partials made.
    assert_eq!(to_unreduced_steps(&p).len(), 1);
}
