//! The passes around propagation in the full pipeline (calls, constant
//! splitting and merging, sharding constraints and groups, argument and
//! result fixes, closing) and provenance (`--explain`).

mod propagation_support;

use meshrun_compiler::ir::ops::call::Call;
use meshrun_compiler::ir::{Module, OpKind};
use meshrun_compiler::propagation::explain::explain;
use meshrun_compiler::propagation::{propagate_with_provenance, PropagationOptions, Strategy};
use propagation_support::{expect, parse, run_ok};

fn op_names(m: &Module) -> Vec<String> {
    m.entry()
        .unwrap()
        .ops_in_order()
        .map(|(_, op)| op.kind.name())
        .collect()
}

/// Calls stay calls (Shardy's conservative pipeline): both call sites
/// had their own copy of `@twice` during propagation, ended up with one
/// signature, and call one function again.
#[test]
fn calls_are_kept_with_their_signature_shardings() {
    let src = r#"module @m {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8x4xf32> {
    %0 = call @twice(%arg0) : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %1 = call @twice(%0) : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %1 : tensor<8x4xf32>
  }
  func.func private @twice(%arg0: tensor<8x4xf32>) -> tensor<8x4xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }
}"#;
    let m = run_ok(src, Strategy::Full);
    assert_eq!(m.funcs.len(), 2);
    assert_eq!(op_names(&m), ["func.call", "func.call"]);
    let xy = r#"<@mesh, [{"x"}, {"y"}]>"#;
    expect(&m, &[("%0", xy), ("%1", xy), ("result0", xy)]);
    let main = m.entry().unwrap();
    for (_, op) in main.ops_in_order() {
        assert_eq!(op.kind, OpKind::Call(Call::new("twice")));
    }
    let twice = m.func("twice").expect("the callee is kept");
    let sharding =
        |s: &Option<meshrun_compiler::sharding::TensorSharding>| s.as_ref().map(|s| s.to_string());
    assert_eq!(sharding(&twice.arg_attrs[0].sharding).as_deref(), Some(xy));
    assert_eq!(
        sharding(&twice.result_attrs[0].sharding).as_deref(),
        Some(xy)
    );
    let add = twice.ops_in_order().next().expect("the add").1;
    assert_eq!(
        add.shardings.as_ref().map(|s| s[0].to_string()).as_deref(),
        Some(xy)
    );
}

#[test]
fn constants_are_split_per_use_and_merged_back() {
    // One broadcast constant feeds two differently sharded adds: each use
    // gets its own copy (sharded like its user); identical copies merge.
    let src = r#"module @m {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, %arg2: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
    %1 = stablehlo.add %arg0, %0 : tensor<8x8xf32>
    %2 = stablehlo.add %arg1, %0 : tensor<8x8xf32>
    %3 = stablehlo.add %arg2, %0 : tensor<8x8xf32>
    return %1, %2, %3 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
  }
}"#;
    let m = run_ok(src, Strategy::Full);
    assert_eq!(
        op_names(&m),
        [
            // Shardy's import writes every constant as `sdy.constant`.
            "sdy.constant",
            "stablehlo.broadcast_in_dim",
            "stablehlo.broadcast_in_dim",
            "stablehlo.add",
            "stablehlo.add",
            "stablehlo.add"
        ]
    );
    expect(
        &m,
        &[
            ("%1", r#"<@mesh, [{"x"}, {}]>"#),
            ("%2", r#"<@mesh, [{}, {"y"}]>"#),
            ("%3", r#"<@mesh, [{"x"}, {}]>"#),
            ("%4", r#"<@mesh, [{}, {"y"}]>"#),
            ("%5", r#"<@mesh, [{"x"}, {}]>"#),
            // The scalar constant is never split or sharded.
            ("%0", "<@mesh, []>"),
        ],
    );
}

#[test]
fn constraints_apply_to_their_input_and_become_reshards() {
    let src = r#"module @m {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = stablehlo.tanh %arg0 : tensor<8x8xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {"y"}]> : tensor<8x8xf32>
    %2 = sdy.sharding_constraint %1 <@mesh, [{?}, {}]> : tensor<8x8xf32>
    %3 = stablehlo.exponential %2 : tensor<8x8xf32>
    return %3 : tensor<8x8xf32>
  }
}"#;
    let m = run_ok(src, Strategy::Full);
    assert_eq!(
        op_names(&m),
        [
            "stablehlo.tanh",
            "sdy.reshard",
            "sdy.reshard",
            "stablehlo.exponential"
        ]
    );
    expect(
        &m,
        &[
            // The closed constraint applies to tanh, and backward to %arg0.
            ("%arg0", r#"<@mesh, [{"x"}, {"y"}]>"#),
            ("%0", r#"<@mesh, [{"x"}, {"y"}]>"#),
            ("%1", r#"<@mesh, [{"x"}, {"y"}]>"#),
            // The open dimension of the second constraint took "x".
            ("%2", r#"<@mesh, [{"x"}, {}]>"#),
            ("%3", r#"<@mesh, [{"x"}, {}]>"#),
        ],
    );
}

#[test]
fn sharding_groups_share_one_sharding_and_disappear() {
    let src = r#"module @m {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %0 = stablehlo.sine %arg0 : tensor<8x16xf32>
    sdy.sharding_group %0 group_id=0 : tensor<8x16xf32>
    %1 = stablehlo.cosine %arg1 : tensor<8x16xf32>
    sdy.sharding_group %1 group_id=0 : tensor<8x16xf32>
    %2 = stablehlo.multiply %0, %1 : tensor<8x16xf32>
    return %2 : tensor<8x16xf32>
  }
}"#;
    let m = run_ok(src, Strategy::Full);
    assert!(!op_names(&m).iter().any(|n| n == "sdy.sharding_group"));
    expect(
        &m,
        &[
            ("%0", r#"<@mesh, [{"x"}, {}]>"#),
            ("%1", r#"<@mesh, [{"x"}, {}]>"#),
            ("%arg1", r#"<@mesh, [{"x"}, {}]>"#),
        ],
    );
}

#[test]
fn non_divisible_arguments_and_results_shrink() {
    // 12 rows constrained onto x=8: the ops keep "x" (padded), the
    // argument and result shrink to what divides 12 evenly ("x":(1)4),
    // and open dimensions of the entry function drop sub-axes.
    let src = r#"module @m {
  sdy.mesh @mesh = <["x"=8]>
  func.func @main(%arg0: tensor<12x16xf32>) -> tensor<12x16xf32> {
    %0 = stablehlo.exponential %arg0 : tensor<12x16xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<12x16xf32>
    %2 = stablehlo.negate %1 : tensor<12x16xf32>
    return %2 : tensor<12x16xf32>
  }
}"#;
    let m = run_ok(src, Strategy::Full);
    expect(
        &m,
        &[
            ("%0", r#"<@mesh, [{"x"}, {}]>"#),
            ("%2", r#"<@mesh, [{"x"}, {}]>"#),
            ("%arg0", r#"<@mesh, [{}, {}]>"#),
            ("result0", r#"<@mesh, [{}, {}]>"#),
        ],
    );
    // A closed annotation keeps its evenly dividing sub-axis.
    let closed = src.replace(
        "%arg0: tensor<12x16xf32>)",
        r#"%arg0: tensor<12x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})"#,
    );
    let m = run_ok(&closed, Strategy::Full);
    expect(&m, &[("%arg0", r#"<@mesh, [{"x":(1)4}, {}]>"#)]);
}

#[test]
fn every_value_ends_with_a_closed_explicit_sharding() {
    let src = r#"module @m {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}, %arg1: tensor<8xf32>) -> (tensor<8x8xf32>, tensor<8xf32>) {
    %0 = stablehlo.tanh %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {?}], replicated={"y"}>]>} : tensor<8x8xf32>
    %1 = stablehlo.negate %arg1 : tensor<8xf32>
    return %0, %1 : tensor<8x8xf32>, tensor<8xf32>
  }
}"#;
    let m = run_ok(src, Strategy::Full);
    expect(
        &m,
        &[
            ("%arg0", r#"<@mesh, [{"x"}, {}]>"#),
            // Explicitly replicated axes are dropped when closing.
            ("%0", r#"<@mesh, [{"x"}, {}]>"#),
            ("%arg1", r#"<@mesh, [{}]>"#),
            ("%1", r#"<@mesh, [{}]>"#),
            ("result1", r#"<@mesh, [{}]>"#),
        ],
    );
    let f = m.entry().unwrap();
    for (_, op) in f.ops_in_order() {
        let shardings = op.shardings.as_ref().expect("every op has a sharding");
        assert!(shardings.iter().all(|s| s.dims.iter().all(|d| d.is_closed)));
    }
}

#[test]
fn explain_names_the_op_factor_and_source_of_every_axis() {
    let src = r#"module @m {
  sdy.mesh @mesh = <["data"=4, "model"=2]>
  func.func @main(%arg0: tensor<16x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<128x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) -> tensor<16x256xf32> {
    %0 = stablehlo.tanh %arg0 : tensor<16x128xf32>
    %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0] : (tensor<16x128xf32>, tensor<128x256xf32>) -> tensor<16x256xf32>
    return %1 : tensor<16x256xf32>
  }
}"#;
    let p = propagate_with_provenance(&parse(src), &PropagationOptions::default()).unwrap();
    let text = explain(&p, None, "%1").unwrap();
    assert!(
        text.starts_with(r#"%1 : tensor<16x256xf32> sharded <@mesh, [{"data"}, {"model"}]>"#),
        "{text}"
    );
    assert!(
        text.contains(r#"dim 0 "data": propagated through stablehlo.dot_general at 5:10 along factor i, from %0"#),
        "{text}"
    );
    assert!(
        text.contains(r#"dim 1 "model": propagated through stablehlo.dot_general at 5:10 along factor j, from %arg1"#),
        "{text}"
    );
    let text = explain(&p, None, "%arg0").unwrap();
    assert!(
        text.contains(r#"dim 0 "data": written in the program"#),
        "{text}"
    );
    let text = explain(&p, None, "result0").unwrap();
    assert!(text.contains(r#"dim 1 "model""#), "{text}");
    assert!(explain(&p, None, "%9").is_err());
}

#[test]
fn propagation_is_deterministic() {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/mlp_seed.input.mlir"
    ))
    .unwrap();
    let m = parse(&src);
    let a = meshrun_compiler::propagation::propagate(&m, &PropagationOptions::default()).unwrap();
    let b = meshrun_compiler::propagation::propagate(&m, &PropagationOptions::default()).unwrap();
    assert_eq!(
        meshrun_compiler::text::print_module(&a),
        meshrun_compiler::text::print_module(&b)
    );
    // Propagating a propagated module changes nothing.
    let c = meshrun_compiler::propagation::propagate(&a, &PropagationOptions::default()).unwrap();
    assert_eq!(
        meshrun_compiler::text::print_module(&a),
        meshrun_compiler::text::print_module(&c)
    );
    assert!(a
        .entry()
        .unwrap()
        .ops_in_order()
        .all(|(_, op)| !matches!(op.kind, OpKind::Call(_))));
}

/// In a callee propagation kept, an axis that came through the call says
/// so, and axes propagated inside the callee name the callee's ops.
#[test]
fn explain_follows_axes_into_kept_callees() {
    let src = r#"module @m {
  sdy.mesh @mesh = <["data"=4, "model"=2]>
  func.func @main(%arg0: tensor<16x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<128x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) -> tensor<16x256xf32> {
    %0 = call @layer(%arg0, %arg1) : (tensor<16x128xf32>, tensor<128x256xf32>) -> tensor<16x256xf32>
    return %0 : tensor<16x256xf32>
  }
  func.func private @layer(%arg0: tensor<16x128xf32>, %arg1: tensor<128x256xf32>) -> tensor<16x256xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<16x128xf32>, tensor<128x256xf32>) -> tensor<16x256xf32>
    %1 = stablehlo.tanh %0 : tensor<16x256xf32>
    return %1 : tensor<16x256xf32>
  }
}"#;
    let p = propagate_with_provenance(&parse(src), &PropagationOptions::default()).unwrap();
    let text = explain(&p, Some("layer"), "%arg0").unwrap();
    assert!(
        text.contains(r#"dim 0 "data": from the caller of @layer, through the call"#),
        "{text}"
    );
    let text = explain(&p, Some("layer"), "%1").unwrap();
    assert!(
        text.contains(
            r#"dim 1 "model": propagated through stablehlo.tanh at 9:10 along factor j, from %0"#
        ),
        "{text}"
    );
    assert!(
        text.contains(r#"dim 0 "data": propagated through"#),
        "{text}"
    );
}

/// A sharding constraint whose result nothing reads has done its work in
/// propagation (the abs takes "x" from it); its reshard is dropped at
/// export, and so is a reshard that only fed it. Constraints that are
/// read stay reshards.
#[test]
fn reshards_nobody_reads_are_dropped() {
    let src = r#"module @m {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%arg0: tensor<8x4xf32>) -> tensor<8x4xf32> {
    %0 = stablehlo.abs %arg0 : tensor<8x4xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<8x4xf32>
    %2 = sdy.reshard %0 <@mesh, [{}, {"y"}]> : tensor<8x4xf32>
    %3 = sdy.reshard %2 <@mesh, [{"y"}, {}]> : tensor<8x4xf32>
    %4 = sdy.sharding_constraint %0 <@mesh, [{}, {"x"}]> : tensor<8x4xf32>
    return %4 : tensor<8x4xf32>
  }
}"#;
    let m = run_ok(src, Strategy::Full);
    assert_eq!(op_names(&m), ["stablehlo.abs", "sdy.reshard"]);
    expect(&m, &[("%0", r#"<@mesh, [{"x"}, {}]>"#)]);
}
