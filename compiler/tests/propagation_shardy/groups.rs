//! `sharding_group_propagation.mlir` and the group cases of
//! `propagation_pipeline.mlir`: members of a sharding group share one
//! sharding; when members already disagree, each gets an open sharding
//! constraint instead of an error, and propagation fills the group.

use meshrun_compiler::ir::OpKind;
use meshrun_compiler::propagation::Strategy;
use meshrun_compiler::Module;

use crate::propagation_support::{expect, run_ok};
use meshrun_compiler::ir::ops::reshard::Reshard;
use meshrun_compiler::ir::ops::sharding_constraint::ShardingConstraint;
use meshrun_compiler::ir::ops::sharding_group::ShardingGroup;

fn module(func: &str) -> String {
    format!(
        "module @m {{\n  sdy.mesh @mesh = <[\"p\"=2, \"q\"=2, \"r\"=2, \"s\"=2]>\n  {func}\n}}\n"
    )
}

/// The printed form of every op of the entry function, in order.
fn ops(m: &Module) -> Vec<String> {
    let f = m.entry().expect("entry");
    f.ops_in_order()
        .map(|(_, op)| match &op.kind {
            OpKind::ShardingConstraint(ShardingConstraint { sharding }) => {
                format!("constraint {sharding}")
            }
            OpKind::Reshard(Reshard { sharding }) => format!("reshard {sharding}"),
            OpKind::ShardingGroup(ShardingGroup { group_id }) => format!("group {group_id}"),
            k => k.name(),
        })
        .collect()
}

/// `shard_as_reflects_user_priority`: the group ties the three adds; the
/// p0 argument's sharding wins over the p1 one for all of them.
#[test]
fn a_group_takes_the_sharding_of_highest_priority() {
    let src = module(
        r#"func.func @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"q", ?}p0, {"r", ?}]>}, %arg1: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"r", "q", ?}p1, {"p", ?}]>}) -> tensor<16x8xf32> {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<16x8xf32>
    %1 = stablehlo.multiply %arg1, %arg1 : tensor<16x8xf32>
    %2 = stablehlo.subtract %0, %1 : tensor<16x8xf32>
    sdy.sharding_group %0 group_id = 4 : tensor<16x8xf32>
    sdy.sharding_group %1 group_id = 4 : tensor<16x8xf32>
    sdy.sharding_group %2 group_id = 4 : tensor<16x8xf32>
    return %2 : tensor<16x8xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::UserPriority);
    let want = r#"<@mesh, [{"q", ?}, {"r", ?}]>"#;
    expect(&m, &[("%0", want), ("%1", want), ("%2", want)]);
}

/// `different_group_ids_greater_group_id_first`: two groups, written with
/// the larger id first, each take their own member's sharding.
#[test]
fn two_groups_stay_apart() {
    let src = module(
        r#"func.func @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"p", ?}, {?}]>}, %arg1: tensor<16x8xf32>, %arg2: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"s", ?}]>}, %arg3: tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) {
    sdy.sharding_group %arg0 group_id=7 : tensor<16x8xf32>
    sdy.sharding_group %arg1 group_id=7 : tensor<16x8xf32>
    sdy.sharding_group %arg2 group_id=2 : tensor<16x8xf32>
    sdy.sharding_group %arg3 group_id=2 : tensor<16x8xf32>
    return %arg0, %arg1, %arg2, %arg3 : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::Basic);
    let rows = r#"<@mesh, [{"p", ?}, {?}]>"#;
    let cols = r#"<@mesh, [{?}, {"s", ?}]>"#;
    expect(
        &m,
        &[
            ("%arg1", rows),
            ("%arg3", cols),
            ("result0", rows),
            ("result1", rows),
            ("result2", cols),
            ("result3", cols),
        ],
    );
}

/// `set_existing_shardings_for_sharding_group_members`: before
/// propagation, a member without a sharding (a constant) takes the one
/// the others agree on.
#[test]
fn members_without_a_sharding_take_the_agreed_one() {
    let src = module(
        r#"func.func @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"q"}, {"p"}]>}, %arg1: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"q"}, {"p"}]>}) {
    %0 = stablehlo.constant dense<1.5> : tensor<16x8xf32>
    sdy.sharding_group %arg0 group_id = 0 : tensor<16x8xf32>
    sdy.sharding_group %arg1 group_id = 0 : tensor<16x8xf32>
    sdy.sharding_group %0 group_id = 0 : tensor<16x8xf32>
    return
  }"#,
    );
    let m = run_ok(&src, Strategy::Basic);
    expect(&m, &[("%0", r#"<@mesh, [{"q"}, {"p"}]>"#)]);
}

/// `add_extra_sharding_constraint_for_incompatible_shardings_in_sharding_group`:
/// two arguments on different axes in one group. Each gets an open
/// constraint (put at the start of the body, so the later argument's comes
/// first); the group is then the two constraints, and the first one
/// visited gives both its sharding.
#[test]
fn disagreeing_arguments_get_open_constraints() {
    let src = module(
        r#"func.func @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"p"}, {}]>}, %arg1: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"r"}, {}]>}) {
    sdy.sharding_group %arg0 group_id = 5 : tensor<16x8xf32>
    sdy.sharding_group %arg1 group_id = 5 : tensor<16x8xf32>
    return
  }"#,
    );
    let m = run_ok(&src, Strategy::Basic);
    let both = r#"<@mesh, [{"r", ?}, {?}]>"#;
    assert_eq!(
        ops(&m),
        [
            format!("constraint {both}"),
            format!("constraint {both}"),
            "group 5".into(),
            "group 5".into(),
        ]
    );
    // The arguments keep their own shardings.
    expect(
        &m,
        &[
            ("%arg0", r#"<@mesh, [{"p"}, {}]>"#),
            ("%arg1", r#"<@mesh, [{"r"}, {}]>"#),
        ],
    );
    let f = m.entry().unwrap();
    let operand = |i: usize| f.op(f.body[i]).operands[0];
    assert_eq!(operand(0), f.args[1]);
    assert_eq!(operand(1), f.args[0]);
}

/// `add_extra_sharding_constraint_for_incompatible_shardings_with_sharding_constraint`:
/// an argument and a constrained value disagree; the constraint after the
/// argument replaces it in the add, and propagation gives the group (and
/// the add) both axes.
#[test]
fn a_member_and_a_constrained_value_that_disagree() {
    let src = module(
        r#"func.func @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"q"}, {}]>}) {
    %0 = stablehlo.maximum %arg0, %arg0 : tensor<16x8xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"s"}]> : tensor<16x8xf32>
    sdy.sharding_group %arg0 group_id = 0 : tensor<16x8xf32>
    sdy.sharding_group %1 group_id = 0 : tensor<16x8xf32>
    return
  }"#,
    );
    let m = run_ok(&src, Strategy::Basic);
    let both = r#"<@mesh, [{"q", ?}, {"s", ?}]>"#;
    assert_eq!(
        ops(&m),
        [
            format!("constraint {both}"),
            "stablehlo.maximum".into(),
            r#"constraint <@mesh, [{}, {"s"}]>"#.into(),
            format!("constraint {both}"),
            "group 0".into(),
            "group 0".into(),
        ]
    );
    expect(&m, &[("%1", both)]);
}

/// `add_extra_sharding_constraint_for_partially_closed_replicated_sharding`:
/// `[{}, {?}]` says something (its first dimension is closed), so it
/// disagrees with `[{"p"}, {?}]`.
#[test]
fn a_partly_closed_replicated_member_disagrees() {
    let src = module(
        r#"func.func @main(%arg0: tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>) {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{}, {?}]> : tensor<16x8xf32>
    sdy.sharding_group %0 group_id=0 : tensor<16x8xf32>
    %1 = sdy.sharding_constraint %arg0 <@mesh, [{"p"}, {?}]> : tensor<16x8xf32>
    sdy.sharding_group %1 group_id=0 : tensor<16x8xf32>
    return %0, %1 : tensor<16x8xf32>, tensor<16x8xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::Basic);
    let rows = r#"<@mesh, [{"p", ?}, {?}]>"#;
    assert_eq!(
        ops(&m),
        [
            r#"constraint <@mesh, [{}, {?}]>"#.to_string(),
            format!("constraint {rows}"),
            "group 0".into(),
            r#"constraint <@mesh, [{"p"}, {?}]>"#.into(),
            format!("constraint {rows}"),
            "group 0".into(),
        ]
    );
}

/// `add_extra_sharding_constraint_for_fully_open_replicated_sharding`: a
/// fully open member says nothing; the group takes the other's sharding
/// with no extra constraint.
#[test]
fn a_fully_open_member_takes_the_others_sharding() {
    let src = module(
        r#"func.func @main(%arg0: tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>) {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{?}, {?}]> : tensor<16x8xf32>
    sdy.sharding_group %0 group_id=0 : tensor<16x8xf32>
    %1 = sdy.sharding_constraint %arg0 <@mesh, [{"p"}, {?}]> : tensor<16x8xf32>
    sdy.sharding_group %1 group_id=0 : tensor<16x8xf32>
    return %0, %1 : tensor<16x8xf32>, tensor<16x8xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::Basic);
    let rows = r#"constraint <@mesh, [{"p"}, {?}]>"#;
    assert_eq!(
        ops(&m),
        [
            rows.to_string(),
            "group 0".into(),
            rows.into(),
            "group 0".into()
        ]
    );
}

/// `add_extra_sharding_constraint_for_incompatible_group_member_shardings`
/// (the full pipeline): the constraints become reshards, and both results
/// end up on the group's sharding.
#[test]
fn the_full_pipeline_turns_the_extra_constraints_into_reshards() {
    let src = module(
        r#"func.func @main(%arg0: tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>) {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{}, {"s", ?}]> : tensor<16x8xf32>
    sdy.sharding_group %0 group_id=61 : tensor<16x8xf32>
    %1 = sdy.sharding_constraint %arg0 <@mesh, [{"q"}, {?}]> : tensor<16x8xf32>
    sdy.sharding_group %1 group_id=61 : tensor<16x8xf32>
    return %0, %1 : tensor<16x8xf32>, tensor<16x8xf32>
  }"#,
    );
    let m = run_ok(&src, Strategy::Full);
    let both = r#"<@mesh, [{"q"}, {"s"}]>"#;
    assert_eq!(
        ops(&m),
        [
            r#"reshard <@mesh, [{}, {"s"}]>"#.to_string(),
            format!("reshard {both}"),
            format!("reshard {both}"),
            format!("reshard {both}"),
        ]
    );
    expect(&m, &[("%arg0", both), ("result0", both), ("result1", both)]);
}
