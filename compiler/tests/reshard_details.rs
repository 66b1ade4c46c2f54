//! Reshard lowering details: typed errors and their diagnostics, the
//! printed notation, device groups and permute pairs, the cost model, the
//! partial-sum collectives, and the simulator catching wrong lowerings.

mod reshard_common;

use meshrun_compiler::diag::{DiagKind, Diagnostic};
use meshrun_compiler::ir::{ElemType, ReduceKind};
use meshrun_compiler::partition::reshard::simulate::{apply, compare, layout_blocks, run};
use meshrun_compiler::partition::{
    check_reshard, device_groups, lower_reshard, lower_reshard_between_meshes, Collective,
    CollectiveKind, ReshardError, Side, SimError,
};
use meshrun_compiler::sharding::{Mesh, TensorSharding};
use reshard_common::{axis, mesh, sharding};

fn m3() -> Mesh {
    mesh(&[("x", 2), ("y", 2), ("z", 2)])
}

fn lower(m: &Mesh, shape: &[i64], from: &[&str], to: &[&str]) -> Vec<Collective> {
    lower_reshard(
        m,
        shape,
        ElemType::F32,
        &sharding("mesh", from),
        &sharding("mesh", to),
    )
    .expect("lowers")
}

// ---- errors ---------------------------------------------------------------

#[test]
fn meshes_over_different_devices_are_an_error() {
    let four = mesh(&[("x", 4)]);
    let eight = mesh(&[("x", 2), ("y", 4)]);
    let e = lower_reshard_between_meshes(
        &four,
        &eight,
        &[8],
        ElemType::F32,
        &sharding("a", &["x"]),
        &sharding("b", &["y"]),
    )
    .unwrap_err();
    assert_eq!(
        e,
        ReshardError::DifferentDeviceSets {
            from: "[0, 1, 2, 3]".into(),
            to: "[0, 1, 2, 3, 4, 5, 6, 7]".into()
        }
    );
    assert!(e.to_string().contains("same devices"), "{e}");
    // Two single-device meshes on different devices.
    let on3 = Mesh::new(&[]).with_device_ids(vec![3]);
    let on5 = Mesh::new(&[]).with_device_ids(vec![5]);
    let empty = TensorSharding::new("m", vec![]);
    assert!(matches!(
        lower_reshard_between_meshes(&on3, &on5, &[4], ElemType::F32, &empty, &empty),
        Err(ReshardError::DifferentDeviceSets { .. })
    ));
    // ... but the same device is fine, and needs nothing.
    let again = lower_reshard_between_meshes(&on3, &on3, &[4], ElemType::F32, &empty, &empty);
    assert_eq!(again, Ok(vec![]));
}

#[test]
fn rank_mismatch_says_which_side() {
    let m = m3();
    let e = lower_reshard(
        &m,
        &[8, 8, 8],
        ElemType::F32,
        &sharding("mesh", &["x", ""]),
        &sharding("mesh", &["x", "", ""]),
    )
    .unwrap_err();
    assert_eq!(
        e,
        ReshardError::RankMismatch {
            side: Side::Source,
            dims: 2,
            rank: 3
        }
    );
    assert_eq!(
        e.to_string(),
        "the source sharding has 2 dimension shardings but the tensor has rank 3"
    );
}

#[test]
fn unknown_axis_names_the_axis_and_the_mesh_axes() {
    let e = lower_reshard(
        &m3(),
        &[8],
        ElemType::F32,
        &sharding("mesh", &["x"]),
        &sharding("mesh", &["q"]),
    )
    .unwrap_err();
    assert!(
        matches!(&e, ReshardError::UnknownAxis { side: Side::Target, axis, .. } if axis == "\"q\"")
    );
    assert_eq!(
        e.to_string(),
        r#"axis "q" of the target sharding is not in its mesh (axes: "x", "y", "z")"#
    );
}

#[test]
fn other_invalid_inputs_are_errors_not_panics() {
    let m = m3();
    let s = |d: &[&str]| sharding("mesh", d);
    let used_twice = lower_reshard(&m, &[8, 8], ElemType::F32, &s(&["x", "x"]), &s(&["", ""]));
    assert!(matches!(
        used_twice,
        Err(ReshardError::InvalidSharding {
            side: Side::Source,
            ..
        })
    ));
    let negative = lower_reshard(&m, &[-2], ElemType::F32, &s(&[""]), &s(&["x"]));
    assert_eq!(
        negative,
        Err(ReshardError::NegativeDimSize { dim: 0, size: -2 })
    );
    let bad_mesh = Mesh::new(&[("x", 2), ("x", 2)]);
    assert!(matches!(
        lower_reshard(&bad_mesh, &[4], ElemType::F32, &s(&[""]), &s(&[""])),
        Err(ReshardError::InvalidMesh { .. })
    ));
    let bad_sub = lower_reshard(&m, &[8], ElemType::F32, &s(&[""]), &s(&["x:(1)4"]));
    assert!(matches!(
        bad_sub,
        Err(ReshardError::InvalidSharding {
            side: Side::Target,
            ..
        })
    ));
}

#[test]
fn unreduced_axes_must_match_and_map_to_unsupported() {
    let m = m3();
    let from = sharding("mesh", &["x"]);
    let mut to = from.clone();
    to.unreduced = vec![axis("y")];
    let e = lower_reshard(&m, &[8], ElemType::F32, &from, &to).unwrap_err();
    assert!(matches!(e, ReshardError::UnreducedMismatch { .. }));
    let d: Diagnostic = e.into();
    assert_eq!(d.kind, DiagKind::Unsupported);
    assert!(d
        .message
        .starts_with("cannot lower reshard: unreduced axes differ ({} -> {\"y\"})"));
    // Matching unreduced axes are carried through every step.
    let mut from_u = from.clone();
    from_u.unreduced = vec![axis("y")];
    let mut to_u = sharding("mesh", &[""]);
    to_u.unreduced = vec![axis("y")];
    let cs = lower_reshard(&m, &[8], ElemType::F32, &from_u, &to_u).unwrap();
    assert_eq!(cs.len(), 1);
    assert_eq!(cs[0].out_sharding.unreduced, vec![axis("y")]);
}

#[test]
fn errors_become_sharding_diagnostics_with_a_position() {
    let e = ReshardError::RankMismatch {
        side: Side::Target,
        dims: 1,
        rank: 2,
    };
    let d = e.to_diagnostic(meshrun_compiler::SrcPos::new(4, 9));
    assert_eq!(d.kind, DiagKind::Sharding);
    assert_eq!((d.pos.line, d.pos.col), (4, 9));
    assert!(d
        .message
        .contains("target sharding has 1 dimension shardings"));
}

// ---- notation, groups, pairs, cost ---------------------------------------

#[test]
fn spec_all_to_all_prints_groups_and_costs() {
    let cs = lower(&m3(), &[8, 8, 8], &["x", "y", ""], &["", "y", "x"]);
    assert_eq!(cs.len(), 1);
    let c = &cs[0];
    assert_eq!(
        c.to_string(),
        r#"sdy.all_to_all [{"x"}: 0->2] %x out_sharding=<@mesh, [{}, {"y"}, {"x"}]> : tensor<8x8x8xf32>"#
    );
    assert_eq!(c.to_sdy("%arg0").split(' ').nth(3), Some("%arg0"));
    // Devices 4 apart differ only along "x" (the major axis).
    assert_eq!(
        c.groups,
        vec![vec![0, 4], vec![1, 5], vec![2, 6], vec![3, 7]]
    );
    assert_eq!(c.in_local_shape, vec![4, 4, 8]);
    assert_eq!(c.out_local_shape, vec![8, 4, 4]);
    // (G-1)/G of the 128-element (512-byte) block leaves each device.
    assert_eq!(c.bytes_per_device(), 256.0);
}

#[test]
fn spec_permute_keeps_blocks_that_are_already_in_place() {
    let cs = lower(&m3(), &[8, 8], &["x y", ""], &["z", ""]);
    let permute = &cs[0];
    assert_eq!(permute.kind, CollectiveKind::CollectivePermute);
    // Device (x, y, z) moves block 2x+y to the device with z = x: the
    // devices with x == z keep theirs.
    assert_eq!(
        permute.groups,
        vec![
            vec![0, 0],
            vec![1, 4],
            vec![2, 2],
            vec![3, 6],
            vec![4, 1],
            vec![5, 5],
            vec![6, 3],
            vec![7, 7]
        ]
    );
    // Local block 2x8 f32 = 64 bytes; half of the devices receive one.
    assert_eq!(permute.bytes_per_device(), 32.0);
    let gather = &cs[1];
    assert_eq!(
        gather.groups,
        vec![vec![0, 2], vec![1, 3], vec![4, 6], vec![5, 7]]
    );
    assert_eq!(gather.bytes_per_device(), 64.0);
    // JAX/XLA (fixtures/jax/collective_permute_reshard) moves 6 of 8
    // blocks in its permute: 48 + 64 = 112 bytes per device. We move less.
    let total: f64 = cs.iter().map(Collective::bytes_per_device).sum();
    assert!(total <= 112.0, "{total}");
}

#[test]
fn groups_follow_sub_axes_and_device_ids() {
    let m = mesh(&[("x", 4), ("y", 2)]).with_device_ids(vec![7, 6, 5, 4, 3, 2, 1, 0]);
    // Minor half of x: positions (x, y) with x = 2a + b, group over b.
    assert_eq!(
        device_groups(&m, &[axis("x:(2)2")]).unwrap(),
        vec![vec![7, 5], vec![6, 4], vec![3, 1], vec![2, 0]]
    );
    let cs = lower(&m, &[8], &["x"], &["x:(1)2"]);
    assert_eq!(cs.len(), 1);
    assert_eq!(
        cs[0].groups,
        vec![vec![7, 5], vec![6, 4], vec![3, 1], vec![2, 0]]
    );
}

#[test]
fn padded_collectives_carry_padded_local_shapes() {
    // 13 split 2 ways is 7 + 6 (padded to 7); the all-to-all pads the new
    // split dimension of 8 too (4 per shard).
    let m = mesh(&[("x", 2)]);
    let cs = lower(&m, &[13, 8], &["x", ""], &["", "x"]);
    assert_eq!(cs.len(), 1);
    assert_eq!(cs[0].in_local_shape, vec![7, 8]);
    assert_eq!(cs[0].out_local_shape, vec![13, 4]);
    // All-gather of 7 over 4 devices: blocks of 2, cut to 7 after gathering.
    let m4 = mesh(&[("x", 4)]);
    let cs = lower(&m4, &[7], &["x"], &[""]);
    assert_eq!(
        (cs[0].in_local_shape.clone(), cs[0].out_local_shape.clone()),
        (vec![2], vec![7])
    );
    // The ring moves 3 whole padded blocks of 2.
    assert_eq!(cs[0].bytes_per_device(), 24.0);
}

#[test]
fn bytes_per_device_formulas() {
    let m = mesh(&[("x", 4)]);
    let gather = &lower(&m, &[16, 4], &["x", ""], &["", ""])[0];
    // out - in = (16*4 - 4*4) * 4 bytes.
    assert_eq!(gather.bytes_per_device(), 192.0);
    let slice = &lower(&m, &[16, 4], &["", ""], &["x", ""])[0];
    assert_eq!(slice.bytes_per_device(), 0.0);
    assert!(!slice.communicates());
    let a2a = &lower(&m, &[16, 4], &["x", ""], &["", "x"])[0];
    // (G-1)/G * in = 3/4 * 16 elements * 4 bytes.
    assert_eq!(a2a.bytes_per_device(), 48.0);
    let mut partial = sharding("mesh", &["", ""]);
    partial.unreduced = vec![axis("x")];
    let ar = Collective::all_reduce(
        &m,
        &[16, 4],
        ElemType::BF16,
        &partial,
        &[axis("x")],
        ReduceKind::Add,
    )
    .unwrap();
    // 2(G-1)/G * 64 elements * 2 bytes.
    assert_eq!(ar.bytes_per_device(), 192.0);
    assert_eq!(
        ar.to_string(),
        r#"sdy.all_reduce {"x"} %x out_sharding=<@mesh, [{}, {}]> : tensor<16x4xbf16>"#
    );
    let rs = Collective::reduce_scatter(
        &m,
        &[16, 4],
        ElemType::F32,
        &partial,
        &[vec![axis("x")], vec![]],
        ReduceKind::Add,
    )
    .unwrap();
    // in - out = (64 - 16) * 4 bytes.
    assert_eq!(rs.bytes_per_device(), 192.0);
    assert_eq!(
        rs.to_string(),
        r#"sdy.reduce_scatter [{"x"}, {}] %x out_sharding=<@mesh, [{"x"}, {}]> : tensor<16x4xf32>"#
    );
}

// ---- partial sums ----------------------------------------------------------

/// Blocks of a partial result: every device holds its (local) partial.
fn partial_blocks(
    m: &Mesh,
    s: &TensorSharding,
    shape: &[i64],
) -> meshrun_compiler::partition::reshard::simulate::Blocks {
    layout_blocks(m, s, shape).unwrap()
}

/// Expected blocks with every element summing `parts` partials.
fn summed(
    m: &Mesh,
    s: &TensorSharding,
    shape: &[i64],
    parts: u32,
) -> meshrun_compiler::partition::reshard::simulate::Blocks {
    let mut b = layout_blocks(m, s, shape).unwrap();
    for block in b.values_mut() {
        for c in block.cells.iter_mut().filter(|c| !c.is_pad()) {
            c.parts = parts;
        }
    }
    b
}

#[test]
fn all_reduce_sums_the_partials_of_its_group() {
    let m = mesh(&[("x", 2), ("y", 4)]);
    let mut partial = sharding("mesh", &["x", ""]);
    partial.unreduced = vec![axis("y")];
    let ar = Collective::all_reduce(
        &m,
        &[6, 3],
        ElemType::F32,
        &partial,
        &[axis("y")],
        ReduceKind::Maximum,
    )
    .unwrap();
    assert_eq!(ar.reduction, Some(ReduceKind::Maximum));
    assert!(ar.out_sharding.unreduced.is_empty());
    let sim = run(
        partial_blocks(&m, &partial, &[6, 3]),
        std::slice::from_ref(&ar),
    )
    .unwrap();
    compare(&sim.blocks, &summed(&m, &ar.out_sharding, &[6, 3], 4)).unwrap();
}

#[test]
fn reduce_scatter_sums_then_slices() {
    let m = mesh(&[("x", 2), ("y", 4)]);
    let mut partial = sharding("mesh", &["", ""]);
    partial.unreduced = vec![axis("y")];
    let rs = Collective::reduce_scatter(
        &m,
        &[7, 2],
        ElemType::F32,
        &partial,
        &[vec![axis("y")], vec![]],
        ReduceKind::Add,
    )
    .unwrap();
    assert_eq!(rs.out_local_shape, vec![2, 2]);
    let sim = run(
        partial_blocks(&m, &partial, &[7, 2]),
        std::slice::from_ref(&rs),
    )
    .unwrap();
    compare(&sim.blocks, &summed(&m, &rs.out_sharding, &[7, 2], 4)).unwrap();
}

// ---- the simulator catches wrong lowerings --------------------------------

#[test]
fn simulator_rejects_a_gather_over_the_wrong_axis() {
    let m = m3();
    let (from, to) = (sharding("mesh", &["x", ""]), sharding("mesh", &["", ""]));
    let mut cs = lower_reshard(&m, &[8, 8], ElemType::F32, &from, &to).unwrap();
    cs[0].groups = device_groups(&m, &[axis("y")]).unwrap();
    let e = check_reshard(&m, &m, &[8, 8], &from, &to, &cs).unwrap_err();
    assert!(matches!(e, SimError::WrongCell { .. }), "{e}");
}

#[test]
fn simulator_rejects_swapped_all_to_all_dims_and_missing_steps() {
    let m = m3();
    let (from, to) = (
        sharding("mesh", &["x", "y", ""]),
        sharding("mesh", &["", "y", "x"]),
    );
    let mut cs = lower_reshard(&m, &[8, 8, 8], ElemType::F32, &from, &to).unwrap();
    // Dropping the collective leaves the source blocks in place.
    let e = check_reshard(&m, &m, &[8, 8, 8], &from, &to, &[]).unwrap_err();
    assert!(matches!(e, SimError::FinalShape { .. }), "{e}");
    // A permute that swaps the blocks of devices differing along "x" is
    // caught cell by cell (one differing along "z", unused, would not be).
    let mut wrong = cs.clone();
    wrong.push(Collective {
        kind: CollectiveKind::CollectivePermute,
        groups: (0..8).map(|d| vec![d, d ^ 4]).collect(),
        in_sharding: cs[0].out_sharding.clone(),
        in_local_shape: cs[0].out_local_shape.clone(),
        ..cs[0].clone()
    });
    assert!(matches!(
        check_reshard(&m, &m, &[8, 8, 8], &from, &to, &wrong),
        Err(SimError::WrongCell { .. })
    ));
    if let Some(d) = cs[0].all_to_all.as_mut() {
        std::mem::swap(&mut d.src_dim, &mut d.tgt_dim);
    }
    assert!(check_reshard(&m, &m, &[8, 8, 8], &from, &to, &cs).is_err());
}

#[test]
fn simulator_rejects_malformed_groups() {
    let m = m3();
    let from = sharding("mesh", &["x", ""]);
    let cs = lower_reshard(
        &m,
        &[8, 8],
        ElemType::F32,
        &from,
        &sharding("mesh", &["", ""]),
    )
    .unwrap();
    let blocks = layout_blocks(&m, &from, &[8, 8]).unwrap();
    let mut missing = cs[0].clone();
    missing.groups.pop();
    assert!(matches!(
        apply(&blocks, &missing, 0),
        Err(SimError::Malformed { step: 0, .. })
    ));
    let mut twice = cs[0].clone();
    twice.groups[1] = twice.groups[0].clone();
    assert!(apply(&blocks, &twice, 0).is_err());
    let mut bad_factors = cs[0].clone();
    bad_factors.dim_factors = vec![4, 1];
    assert!(apply(&blocks, &bad_factors, 0).is_err());
}

#[test]
fn padding_never_reaches_a_valid_position() {
    // 13 over x=2,y=2 back to x: the padded extent changes (16 -> 14), so
    // the lowering regathers; the simulation checks element 7 ends on the
    // x=1 devices although it starts on (x=0, y=1).
    let m = mesh(&[("x", 2), ("y", 2)]);
    let (from, to) = (sharding("mesh", &["x y"]), sharding("mesh", &["x"]));
    let cs = lower_reshard(&m, &[13], ElemType::F32, &from, &to).unwrap();
    let sim = check_reshard(&m, &m, &[13], &from, &to, &cs).unwrap();
    let on_x1: Vec<i64> = sim.blocks[&2].cells.iter().map(|c| c.index).collect();
    assert_eq!(on_x1, vec![7, 8, 9, 10, 11, 12, -1]);
}

/// Padding selectors (major target pieces that leave the block size as it
/// is) are sliced in at the end; where an axis of theirs is still held by
/// a dimension the plan gathers last, the slice must wait for that gather:
/// 2x3 from [{"b"}, {"c"}] to [{"c", "b"}, {"a"}] sliced "c" into dim 0
/// while "c":(2)2 still held dim 1, so the gather then fetched dim 1's
/// other half from devices that had just dropped dim 0's row (found by the
/// differential test, index seed 31842).
#[test]
fn selectors_wait_for_the_gather_that_frees_their_axis() {
    let m = mesh(&[("a", 2), ("b", 3), ("c", 4)]);
    for (shape, from, to) in [
        (vec![2, 3, 1], ["b", "c", ""], ["c b", "a", ""]),
        (vec![2, 5, 3], ["b", "c", ""], ["c b", "a", ""]),
    ] {
        let (f, t) = (sharding("mesh", &from), sharding("mesh", &to));
        let cs = lower(&m, &shape, &from, &to);
        check_reshard(&m, &m, &shape, &f, &t, &cs).unwrap_or_else(|e| {
            let steps: Vec<String> = cs.iter().map(|c| c.to_sdy("%x")).collect();
            panic!("{e}\n{}", steps.join("\n"))
        });
    }
}
