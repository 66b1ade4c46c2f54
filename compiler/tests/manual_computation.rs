//! `sdy.manual_computation` (what `jax.shard_map` lowers to) and the
//! user's collectives inside it: JAX 0.10.2's printed programs round trip,
//! the generic forms read the same ops, and bad input gets one-line errors
//! naming op and position. The verifier cases follow Shardy's
//! `manual_computation_verification.mlir`.

use meshrun_compiler::ir::ops::collectives::reduction_of;
use meshrun_compiler::ir::{verify_module, OpKind, ReduceKind};
use meshrun_compiler::partition::global::explicit_reshards::manual::WRITTEN_IN_SHARD_MAP;
use meshrun_compiler::partition::{partition, CollectiveKind, Instr};
use meshrun_compiler::text::{parse_module, print_module};
use meshrun_compiler::Module;

fn roundtrip(src: &str) -> Module {
    let m = parse_module(src).unwrap_or_else(|e| panic!("{e}\n--- in ---\n{src}"));
    verify_module(&m).unwrap_or_else(|e| panic!("verify: {e}\n--- in ---\n{src}"));
    let printed = print_module(&m);
    let again = parse_module(&printed).unwrap_or_else(|e| panic!("reparse: {e}\n{printed}"));
    assert!(m == again, "round trip changed the module:\n{printed}");
    assert_eq!(
        print_module(&again),
        printed,
        "printing is not a fixed point"
    );
    m
}

fn error(src: &str) -> String {
    let e = match parse_module(src) {
        Err(e) => e,
        Ok(m) => match verify_module(&m) {
            Err(e) => e,
            Ok(()) => panic!("no error for\n{src}"),
        },
    };
    e.to_string()
}

/// Every op name of `m`'s `@main`, regions included, in walk order.
fn op_names(m: &Module) -> Vec<String> {
    let f = m.func("main").expect("@main");
    f.all_ops().iter().map(|&id| f.op(id).kind.name()).collect()
}

#[test]
fn jax_full_shard_map_round_trips() {
    let src = include_str!("data/jax_shard_map_full.mlir");
    let m = roundtrip(src);
    let names = op_names(&m);
    for want in [
        "sdy.manual_computation",
        "stablehlo.all_reduce",
        "stablehlo.all_gather",
        "stablehlo.reduce_scatter",
        "stablehlo.partition_id",
        "stablehlo.collective_permute",
        "stablehlo.all_to_all",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} missing: {names:?}");
    }
    let printed = print_module(&m);
    // Shardy's pretty form, as JAX prints it.
    assert!(
        printed.contains(
            "sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"x\"}, {\"y\"}]>] \
             out_shardings=[<@mesh, [{\"x\"}, {\"y\"}]>] manual_axes={\"x\", \"y\"} \
             (%arg1: tensor<16x8xf32>) {"
        ),
        "{printed}"
    );
    assert!(
        printed.contains("stablehlo.partition_id : tensor<ui32>"),
        "{printed}"
    );
    assert!(printed.contains("use_global_device_ids}>"), "{printed}");
    assert!(printed.contains("    sdy.return %"), "{printed}");
    // The two all-reduces: a sum and a max.
    let f = m.func("main").unwrap();
    let kinds: Vec<ReduceKind> = f
        .all_ops()
        .iter()
        .filter_map(|&id| match &f.op(id).kind {
            OpKind::AllReduce(a) => reduction_of(&a.body),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, [ReduceKind::Add, ReduceKind::Maximum]);
}

#[test]
fn jax_partly_manual_shard_map_round_trips() {
    // manual_axes={"x"}; axis_index as a nested manual computation over
    // "y"; sdy.sharding_constraint inside the all-reduce body.
    let m = roundtrip(include_str!("data/jax_shard_map_partial.mlir"));
    let names = op_names(&m);
    let manual = names
        .iter()
        .filter(|n| *n == "sdy.manual_computation")
        .count();
    assert_eq!(manual, 2, "{names:?}");
    let f = m.func("main").unwrap();
    let reductions: Vec<_> = f
        .all_ops()
        .iter()
        .filter_map(|&id| match &f.op(id).kind {
            OpKind::AllReduce(a) => Some(reduction_of(&a.body)),
            _ => None,
        })
        .collect();
    assert_eq!(reductions, [Some(ReduceKind::Add)]);
}

const MESH: &str = "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n";

fn func(body: &str) -> String {
    format!(
        "{MESH}func.func @main(%arg0: tensor<16x32xf32>) -> tensor<16x32xf32> {{\n{body}\n  return %0 : tensor<16x32xf32>\n}}\n"
    )
}

#[test]
fn generic_form_reads_the_same_op() {
    let pretty = func(
        "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"a\"}, {}]>] out_shardings=[<@mesh, [{\"a\"}, {}]>] manual_axes={\"a\"} (%arg1: tensor<8x32xf32>) {\n    sdy.return %arg1 : tensor<8x32xf32>\n  } : (tensor<16x32xf32>) -> tensor<16x32xf32>",
    );
    let generic = func(
        "  %0 = \"sdy.manual_computation\"(%arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{\"a\"}, {}]>]>, manual_axes = #sdy<manual_axes{\"a\"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{\"a\"}, {}]>]>}> ({\n  ^bb0(%arg1: tensor<8x32xf32>):\n    \"sdy.return\"(%arg1) : (tensor<8x32xf32>) -> ()\n  }) : (tensor<16x32xf32>) -> tensor<16x32xf32>",
    );
    let a = roundtrip(&pretty);
    let b = parse_module(&generic).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(print_module(&a), print_module(&b));
}

#[test]
fn nested_manual_computations_verify() {
    let src = func(
        "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"a\"}, {}]>] out_shardings=[<@mesh, [{\"a\"}, {}]>] manual_axes={\"a\"} (%arg1: tensor<8x32xf32>) {
    %1 = sdy.manual_computation(%arg1) in_shardings=[<@mesh, [{}, {\"b\"}]>] out_shardings=[<@mesh, [{}, {\"b\"}]>] manual_axes={\"b\"} (%arg2: tensor<8x16xf32>) {
      %2 = stablehlo.partition_id : tensor<ui32>
      sdy.return %arg2 : tensor<8x16xf32>
    } : (tensor<8x32xf32>) -> tensor<8x32xf32>
    sdy.return %1 : tensor<8x32xf32>
  } : (tensor<16x32xf32>) -> tensor<16x32xf32>",
    );
    roundtrip(&src);
}

/// A manual computation over `manual_axes` of `%arg0` with body argument
/// type `local`, returning its argument.
fn identity(in_sharding: &str, out_sharding: &str, axes: &str, local: &str) -> String {
    func(&format!(
        "  %0 = sdy.manual_computation(%arg0) in_shardings=[{in_sharding}] out_shardings=[{out_sharding}] manual_axes={axes} (%arg1: {local}) {{\n    sdy.return %arg1 : {local}\n  }} : (tensor<16x32xf32>) -> tensor<16x32xf32>"
    ))
}

#[test]
fn verifier_errors_name_op_and_position() {
    let unknown_axis = identity(
        "<@mesh, [{\"a\"}, {}]>",
        "<@mesh, [{\"a\"}, {}]>",
        "{\"a\", \"c\"}",
        "tensor<8x32xf32>",
    );
    let e = error(&unknown_axis);
    assert!(
        e.starts_with("3:8:")
            && e.contains("sdy.manual_computation")
            && e.contains("manual axis \"c\" is not in mesh @mesh"),
        "{e}"
    );

    let wrong_local = identity(
        "<@mesh, [{\"a\"}, {}]>",
        "<@mesh, [{\"a\"}, {}]>",
        "{\"a\"}",
        "tensor<16x32xf32>",
    );
    let e = error(&wrong_local);
    assert!(
        e.starts_with("3:8:")
            && e.contains("operand 0: the body's local type must be tensor<8x32xf32>"),
        "{e}"
    );

    // A free axis is not divided out of the body's type.
    let free = identity(
        "<@mesh, [{\"a\"}, {\"b\"}]>",
        "<@mesh, [{\"a\"}, {\"b\"}]>",
        "{\"a\"}",
        "tensor<8x32xf32>",
    );
    roundtrip(&free);

    let manual_after_free = identity(
        "<@mesh, [{\"b\", \"a\"}, {}]>",
        "<@mesh, [{\"a\"}, {}]>",
        "{\"a\"}",
        "tensor<8x32xf32>",
    );
    assert!(
        error(&manual_after_free).contains("manual axis \"a\" comes after a free axis"),
        "{}",
        error(&manual_after_free)
    );

    let count = func(
        "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{}, {}]>, <@mesh, [{}, {}]>] out_shardings=[<@mesh, [{}, {}]>] manual_axes={} (%arg1: tensor<16x32xf32>) {\n    sdy.return %arg1 : tensor<16x32xf32>\n  } : (tensor<16x32xf32>) -> tensor<16x32xf32>",
    );
    assert!(
        error(&count)
            .contains("operand shardings don't match number of values: 2 shardings vs 1 values"),
        "{}",
        error(&count)
    );

    let rank = identity(
        "<@mesh, [{}, {}, {}]>",
        "<@mesh, [{}, {}]>",
        "{}",
        "tensor<16x32xf32>",
    );
    assert!(
        error(&rank).contains("sharding doesn't match tensor rank: 3 != 2"),
        "{}",
        error(&rank)
    );

    let twice = func(
        "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"a\"}, {}]>] out_shardings=[<@mesh, [{\"a\"}, {}]>] manual_axes={\"a\"} (%arg1: tensor<8x32xf32>) {
    %1 = sdy.manual_computation(%arg1) in_shardings=[<@mesh, [{}, {}]>] out_shardings=[<@mesh, [{}, {}]>] manual_axes={\"a\"} (%arg2: tensor<8x32xf32>) {
      sdy.return %arg2 : tensor<8x32xf32>
    } : (tensor<8x32xf32>) -> tensor<8x32xf32>
    sdy.return %1 : tensor<8x32xf32>
  } : (tensor<16x32xf32>) -> tensor<16x32xf32>",
    );
    let e = error(&twice);
    assert!(
        e.starts_with("4:10:") && e.contains("axis \"a\" is already manual"),
        "{e}"
    );
}

/// `%0` of `@main` is computed by `op` inside a manual computation over
/// both axes (the body sees a `tensor<8x16xf32>` block).
fn in_full_manual(op: &str) -> String {
    func(&format!(
        "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{{\"a\"}}, {{\"b\"}}]>] out_shardings=[<@mesh, [{{\"a\"}}, {{\"b\"}}]>] manual_axes={{\"a\", \"b\"}} (%arg1: tensor<8x16xf32>) {{\n{op}\n    sdy.return %1 : tensor<8x16xf32>\n  }} : (tensor<16x32xf32>) -> tensor<16x32xf32>"
    ))
}

const ADD_BODY: &str = "({\n    ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n      %s = stablehlo.add %x, %y : tensor<f32>\n      stablehlo.return %s : tensor<f32>\n    })";

#[test]
fn collectives_check_their_device_groups() {
    let good = in_full_manual(&format!(
        "    %1 = \"stablehlo.all_reduce\"(%arg1) <{{replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>, use_global_device_ids}}> {ADD_BODY} : (tensor<8x16xf32>) -> tensor<8x16xf32>"
    ));
    roundtrip(&good);

    let overlapping = in_full_manual(&format!(
        "    %1 = \"stablehlo.all_reduce\"(%arg1) <{{replica_groups = dense<[[0, 2], [1, 2]]> : tensor<2x2xi64>, use_global_device_ids}}> {ADD_BODY} : (tensor<8x16xf32>) -> tensor<8x16xf32>"
    ));
    let e = error(&overlapping);
    assert!(
        e.starts_with("4:10:")
            && e.contains("stablehlo.all_reduce")
            && e.contains("replica groups name device 2 twice"),
        "{e}"
    );

    let missing = in_full_manual(
        "    %1 = \"stablehlo.all_gather\"(%arg1) <{all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<8x16xf32>) -> tensor<16x16xf32>
    %2 = stablehlo.slice %1 [0:8, 0:16] : (tensor<16x16xf32>) -> tensor<8x16xf32>",
    )
    .replace("sdy.return %1", "sdy.return %2");
    let e = error(&missing);
    assert!(
        e.contains("replica groups do not partition the 4 devices: device 2 is in no group"),
        "{e}"
    );

    let pairs = in_full_manual(
        "    %1 = \"stablehlo.collective_permute\"(%arg1) <{source_target_pairs = dense<[[0, 1], [2, 1]]> : tensor<2x2xi64>}> : (tensor<8x16xf32>) -> tensor<8x16xf32>",
    );
    assert!(
        error(&pairs).contains("device 1 is the target of two pairs"),
        "{}",
        error(&pairs)
    );

    let bad_split = in_full_manual(
        "    %1 = \"stablehlo.all_to_all\"(%arg1) <{concat_dimension = 1 : i64, replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>, split_count = 2 : i64, split_dimension = 0 : i64}> : (tensor<8x16xf32>) -> tensor<8x16xf32>",
    );
    assert!(
        error(&bad_split).contains("the operands and attributes give tensor<4x32xf32>"),
        "{}",
        error(&bad_split)
    );
}

#[test]
fn manual_only_ops_outside_manual_computations_are_errors() {
    let outside = func(&format!(
        "  %0 = \"stablehlo.all_reduce\"(%arg0) <{{replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}}> {ADD_BODY} : (tensor<16x32xf32>) -> tensor<16x32xf32>"
    ));
    let e = error(&outside);
    assert!(
        e.starts_with("3:8:") && e.contains("must be inside an sdy.manual_computation"),
        "{e}"
    );

    // "b" is still automatic where partition_id is.
    let partly = func(
        "  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"a\"}, {}]>] out_shardings=[<@mesh, [{\"a\"}, {}]>] manual_axes={\"a\"} (%arg1: tensor<8x32xf32>) {
    %1 = stablehlo.partition_id : tensor<ui32>
    sdy.return %arg1 : tensor<8x32xf32>
  } : (tensor<16x32xf32>) -> tensor<16x32xf32>",
    );
    let e = error(&partly);
    assert!(
        e.starts_with("4:10:")
            && e.contains("stablehlo.partition_id")
            && e.contains("automatic here: \"b\""),
        "{e}"
    );
}

/// The partitioner inlines the body in local shapes: the user's
/// collectives become collectives on their replica groups (partition ids
/// = devices here) with the reason "written in shard_map", the
/// replicated operand is only sliced to its `in_shardings` blocks, and
/// `partition_id` is each device's mesh position.
#[test]
fn partitioned_body_runs_the_users_collectives() {
    let m = roundtrip(include_str!("data/jax_shard_map_full.mlir"));
    let p = partition(&m).unwrap_or_else(|e| panic!("{e}"));
    let user: Vec<(CollectiveKind, Vec<Vec<i64>>)> = p
        .device
        .collectives()
        .filter(|(c, cause)| c.communicates() || cause.reason == WRITTEN_IN_SHARD_MAP)
        .map(|(c, cause)| {
            assert_eq!(cause.reason, WRITTEN_IN_SHARD_MAP, "{c}");
            (c.kind, c.groups.clone())
        })
        .collect();
    let x_groups = vec![vec![0, 2, 4, 6], vec![1, 3, 5, 7]];
    let y_groups = vec![vec![0, 1], vec![2, 3], vec![4, 5], vec![6, 7]];
    let ring: Vec<Vec<i64>> = [
        [0, 2],
        [2, 4],
        [4, 6],
        [6, 0],
        [1, 3],
        [3, 5],
        [5, 7],
        [7, 1],
    ]
    .iter()
    .map(|p| p.to_vec())
    .collect();
    assert_eq!(
        user,
        [
            (CollectiveKind::AllReduce, x_groups.clone()),
            (CollectiveKind::AllGather, y_groups.clone()),
            (CollectiveKind::ReduceScatter, y_groups.clone()),
            (CollectiveKind::CollectivePermute, ring),
            (CollectiveKind::AllReduce, x_groups),
            (CollectiveKind::AllToAll, y_groups),
        ]
    );
    let offsets: Vec<Vec<i64>> = p
        .device
        .instrs
        .iter()
        .filter_map(|i| match i {
            Instr::Iota { offset, .. } => Some(offset.0.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(offsets, [(0..8).collect::<Vec<i64>>()]);
    // The body's values are the local blocks: the body's result 8x16 is
    // relabelled as the 32x32 result's block.
    let dev = &p.device;
    assert_eq!(dev.values[dev.outputs[0].value].ty.shape, [8, 16]);
}

// Propagation through manual computations: Shardy's cases are ported in
// propagation_shardy/manual_computation.rs.

/// Every manual computation of `m`, in walk order: its in/out shardings
/// as printed and whether it carries an op-level `sdy.sharding`.
fn manual_signatures(m: &Module) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for f in &m.funcs {
        for id in f.all_ops() {
            let op = f.op(id);
            if let OpKind::ManualComputation(mc) = &op.kind {
                let list = |v: &[meshrun_compiler::sharding::TensorSharding]| {
                    v.iter()
                        .map(|s| s.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                out.push((
                    format!(
                        "in [{}] out [{}]",
                        list(&mc.in_shardings),
                        list(&mc.out_shardings)
                    ),
                    op.shardings.is_some(),
                ));
            }
        }
    }
    out
}

/// `meshrun propagate` on each shard_map fixture prints its manual
/// computations as Shardy does (`propagated.mlir`, JAX 0.10.2): the same
/// closed in/out shardings and no `sdy.sharding` of the op's own (its
/// results' shardings are `out_shardings`).
#[test]
fn propagated_manual_computations_print_as_shardys() {
    use meshrun_compiler::propagation::{propagate, PropagationOptions};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/jax_shard_map");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .expect("fixtures/jax_shard_map")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("propagated.mlir").exists())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 5, "{} fixtures", dirs.len());
    for dir in dirs {
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).expect(f);
        let input = parse_module(&read("input.mlir")).expect("input.mlir");
        let shardy = parse_module(&read("propagated.mlir")).expect("propagated.mlir");
        let ours = propagate(&input, &PropagationOptions::default()).expect("propagates");
        let want = manual_signatures(&shardy);
        assert!(!want.is_empty(), "{}", dir.display());
        assert!(want.iter().all(|(_, attr)| !attr), "{}", dir.display());
        assert_eq!(manual_signatures(&ours), want, "{}", dir.display());
        // Printed and read back, the same manual computations.
        let printed = print_module(&ours);
        assert!(!printed.contains("} {sdy.sharding"), "{printed}");
        let again = parse_module(&printed).expect("reparse");
        assert_eq!(manual_signatures(&again), want, "{}", dir.display());
    }
}

/// JAX >= 0.11 (`jax_use_rgv3`) writes a collective's groups as mesh axes
/// of a second, identical mesh: they round trip in that form, mean the
/// dense groups JAX 0.10.2 wrote (first axis most significant), take
/// sub-axes and inlined meshes, and name what is wrong in one line.
#[test]
fn mesh_axes_replica_groups() {
    let mesh_0 = "sdy.mesh @mesh_0 = <[\"a\"=2, \"b\"=2]>\n";
    let groups =
        |axes: &str| format!("#stablehlo.replica_group_mesh_axes<mesh = @mesh_0, axes = [{axes}]>");
    let all_reduce = |groups: &str| {
        format!(
            "{mesh_0}{}",
            in_full_manual(&format!(
                "    %1 = \"stablehlo.all_reduce\"(%arg1) <{{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = {groups}, use_global_device_ids}}> {ADD_BODY} : (tensor<8x16xf32>) -> tensor<8x16xf32>"
            ))
        )
    };
    let rows_of = |m: &Module| {
        let f = m.func("main").unwrap();
        f.all_ops()
            .iter()
            .find_map(|&id| match &f.op(id).kind {
                OpKind::AllReduce(a) => Some(a.attrs.replica_groups.rows.clone()),
                _ => None,
            })
            .expect("an all_reduce")
    };
    // b major, a minor, as JAX lists axes ("b", "a").
    let m = roundtrip(&all_reduce(&groups(
        "#stablehlo.axis_ref<name = \"b\">, #stablehlo.axis_ref<name = \"a\">",
    )));
    assert_eq!(rows_of(&m), [[0, 2, 1, 3]]);
    let printed = print_module(&m);
    assert!(
        printed.contains("replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh_0"),
        "{printed}"
    );
    let m = roundtrip(&all_reduce(&groups("#stablehlo.axis_ref<name = \"a\">")));
    assert_eq!(rows_of(&m), [[0, 2], [1, 3]]);
    // An inlined mesh with a sub-axis: "a":(1)2 of a=4 on 4 devices.
    let inline = "#stablehlo.replica_group_mesh_axes<mesh = #stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = \"a\", size = 4>]>, axes = [#stablehlo.axis_ref<name = \"a\", sub_axis_info = (1)2>]>";
    let m = roundtrip(&all_reduce(inline));
    assert_eq!(rows_of(&m), [[0, 2], [1, 3]]);

    for (bad, want) in [
        (
            groups("#stablehlo.axis_ref<name = \"q\">"),
            "axis \"q\" is not in the mesh",
        ),
        (
            groups("#stablehlo.axis_ref<name = \"a\", sub_axis_info = (2)2>"),
            "does not fit axis \"a\"",
        ),
        (
            "#stablehlo.replica_group_mesh_axes<mesh = @nowhere, axes = []>".to_string(),
            "mesh @nowhere is not defined",
        ),
        (
            "#stablehlo.replica_group_mesh_axes<mesh = @mesh_0>".to_string(),
            "has no 'axes'",
        ),
    ] {
        let e = error(&all_reduce(&bad));
        assert!(
            e.contains("stablehlo.all_reduce") && e.contains(want),
            "{bad}: {e}"
        );
        assert!(!e.contains('\n'), "{e}");
    }
}

/// Propagation merges the identical `@mesh_0` into `@mesh` (Shardy's
/// import does the same), renaming the groups' mesh with it, and a
/// partial-manual shard_map's `lax.axis_index` (a `partition_id` in a
/// manual computation nested in another) sees the enclosing manual axes.
#[test]
fn propagation_renames_merged_meshes_and_counts_enclosing_manual_axes() {
    use meshrun_compiler::propagation::{propagate, PropagationOptions};
    let src = r#"module @m {
  sdy.mesh @mesh = <["data"=2, "model"=2]>
  sdy.mesh @mesh_0 = <["data"=2, "model"=2]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) -> tensor<8x4xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{?}, {"model", ?}]>] out_shardings=[<@mesh, [{?}, {?}]>] manual_axes={"model"} (%arg1: tensor<8x4xf32>) {
      %1 = sdy.manual_computation() in_shardings=[] out_shardings=[<@mesh, []>] manual_axes={"data"} () {
        %c = stablehlo.constant dense<2> : tensor<ui32>
        %5 = stablehlo.partition_id : tensor<ui32>
        %6 = stablehlo.remainder %5, %c : tensor<ui32>
        %7 = stablehlo.convert %6 : (tensor<ui32>) -> tensor<f32>
        sdy.return %7 : tensor<f32>
      } : () -> tensor<f32>
      %2 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<8x4xf32>
      %3 = stablehlo.multiply %arg1, %2 : tensor<8x4xf32>
      %4 = "stablehlo.all_reduce"(%3) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh_0, axes = [#stablehlo.axis_ref<name = "model">]>, use_global_device_ids}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
      }) : (tensor<8x4xf32>) -> tensor<8x4xf32>
      sdy.return %4 : tensor<8x4xf32>
    } : (tensor<8x8xf32>) -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }
}"#;
    let m = roundtrip(src);
    let p = propagate(&m, &PropagationOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let text = print_module(&p);
    assert!(!text.contains("@mesh_0"), "{text}");
    assert!(
        text.contains(
            "replica_group_mesh_axes<mesh = @mesh, axes = [#stablehlo.axis_ref<name = \"model\">]>"
        ),
        "{text}"
    );
    let program = partition(&p).unwrap_or_else(|e| panic!("{e}"));
    let user: Vec<_> = program
        .device
        .collectives()
        .filter(|(_, cause)| cause.reason == WRITTEN_IN_SHARD_MAP)
        .map(|(c, _)| (c.kind, c.groups.clone()))
        .collect();
    assert_eq!(
        user,
        [(CollectiveKind::AllReduce, vec![vec![0, 1], vec![2, 3]])]
    );
}
