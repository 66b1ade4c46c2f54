//! The α-β model against hand-computed times (each collective kind on each
//! built-in topology, and groups that cross nodes), and its consistency
//! with the partitioner's `bytes_per_device`.
//!
//! Hand values: `MiB = 1048576`; a link of `B` GB/s and `α` µs gives
//! `bus_bytes / (B·1e3) + steps · α` µs.

use meshrun::compiler::ir::{ElemType, ReduceKind};
use meshrun::compiler::partition::collective_bytes;
use meshrun::compiler::partition::{lower_reshard, Collective, CollectiveKind};
use meshrun::compiler::sharding::{AxisRef, DimSharding, Mesh, TensorSharding};
use meshrun::cost::model::{
    alpha_beta_seconds, bus_factor, estimate_collective, latency_steps, nccl_size_bytes,
};
use meshrun::cost::Topology;

const MIB: f64 = 1_048_576.0;

/// One dimension per string, axes separated by spaces.
fn sharding(dims: &[&str]) -> TensorSharding {
    TensorSharding::new(
        "mesh",
        dims.iter()
            .map(|d| DimSharding::closed(d.split_whitespace().map(AxisRef::full).collect()))
            .collect(),
    )
}

/// The one collective of a reshard.
fn only(mesh: &Mesh, shape: &[i64], from: &[&str], to: &[&str]) -> Collective {
    let cs = lower_reshard(mesh, shape, ElemType::F32, &sharding(from), &sharding(to))
        .expect("reshard lowers");
    assert_eq!(cs.len(), 1, "one collective: {cs:?}");
    cs.into_iter().next().expect("one")
}

/// A partial value over `axes`, replicated otherwise.
fn partial(rank: usize, axes: &[&str]) -> TensorSharding {
    let mut s = TensorSharding::replicated("mesh", rank);
    s.unreduced = axes.iter().map(|a| AxisRef::full(*a)).collect();
    s
}

fn all_reduce(mesh: &Mesh, shape: &[i64], axes: &[&str]) -> Collective {
    let refs: Vec<AxisRef> = axes.iter().map(|a| AxisRef::full(*a)).collect();
    Collective::all_reduce(
        mesh,
        shape,
        ElemType::F32,
        &partial(shape.len(), axes),
        &refs,
        ReduceKind::Add,
    )
    .expect("all-reduce")
}

/// Reduce over `dim0_axes` and split dimension 0 by them.
fn try_reduce_scatter(mesh: &Mesh, shape: &[i64], dim0_axes: &[&str]) -> Option<Collective> {
    let dim_axes = vec![
        dim0_axes.iter().map(|a| AxisRef::full(*a)).collect(),
        Vec::new(),
    ];
    Collective::reduce_scatter(
        mesh,
        shape,
        ElemType::F32,
        &partial(shape.len(), dim0_axes),
        &dim_axes,
        ReduceKind::Add,
    )
    .ok()
}

fn reduce_scatter(mesh: &Mesh, shape: &[i64], dim0_axes: &[&str]) -> Collective {
    try_reduce_scatter(mesh, shape, dim0_axes).expect("reduce-scatter")
}

/// One collective of each kind on 8 devices (`x`=4, `y`=2), f32:
/// all-gather of 4096x1024 over x (in 4 MiB, S 16 MiB), reduce-scatter of
/// the same (out 4 MiB, S 16 MiB), all-reduce of 1024x1024 over x (S 4 MiB),
/// all-to-all of 4096x1024 dim 0 -> 1 over x (chunk 1 MiB, S 4 MiB) and a
/// collective-permute swapping x:2 and y on 1024x1024 (block 1 MiB).
fn eight_device_collectives() -> Vec<(&'static str, Collective)> {
    let m42 = Mesh::new(&[("x", 4), ("y", 2)]);
    let m222 = Mesh::new(&[("x", 2), ("y", 2), ("z", 2)]);
    vec![
        ("ag", only(&m42, &[4096, 1024], &["x", ""], &["", ""])),
        ("rs", reduce_scatter(&m42, &[4096, 1024], &["x"])),
        ("ar", all_reduce(&m42, &[1024, 1024], &["x"])),
        ("a2a", only(&m42, &[4096, 1024], &["x", ""], &["", "x"])),
        ("perm", only(&m222, &[1024, 1024], &["x", "y"], &["y", "x"])),
    ]
}

fn us(c: &Collective, topo: &Topology) -> f64 {
    estimate_collective(c, topo).expect("estimate").seconds * 1e6
}

fn assert_close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= 1e-6 * want.abs().max(1e-9),
        "{what}: got {got}, want {want}"
    );
}

#[test]
fn the_test_collectives_have_the_intended_kinds_and_sizes() {
    let kinds: Vec<(CollectiveKind, f64, usize)> = eight_device_collectives()
        .iter()
        .map(|(_, c)| (c.kind, nccl_size_bytes(c), c.group_size()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (CollectiveKind::AllGather, 16.0 * MIB, 4),
            (CollectiveKind::ReduceScatter, 16.0 * MIB, 4),
            (CollectiveKind::AllReduce, 4.0 * MIB, 4),
            (CollectiveKind::AllToAll, 4.0 * MIB, 4),
            (CollectiveKind::CollectivePermute, MIB, 2),
        ]
    );
}

#[test]
fn each_kind_on_each_topology_matches_hand_computed_times() {
    // µs per kind: ag = rs = 0.75·16 MiB / B + 3α; ar = 1.5·4 MiB / B + 6α;
    // a2a = 0.75·4 MiB / B + 3α; perm = 1 MiB / B + α.
    let table: &[(&str, [f64; 5])] = &[
        // 360 GB/s, α 1 µs
        (
            "h100-nvlink-8",
            [37.952533, 37.952533, 23.476267, 11.738133, 3.912711],
        ),
        // 230 GB/s, α 1.5 µs
        (
            "a100-nvlink-8",
            [59.208313, 59.208313, 36.354157, 18.177078, 6.059026],
        ),
        // 20 GB/s, α 3 µs
        ("pcie4-8", [638.1456, 638.1456, 332.5728, 166.2864, 55.4288]),
        // devices 0..8 are all on node 0: NVLink, as on h100-nvlink-8
        (
            "2x8-h100-ib400",
            [37.952533, 37.952533, 23.476267, 11.738133, 3.912711],
        ),
    ];
    let collectives = eight_device_collectives();
    for (name, want) in table {
        let topo = Topology::builtin(name).expect("built-in");
        for ((kind, c), w) in collectives.iter().zip(want) {
            let got = us(c, &topo);
            assert!(
                (got - w).abs() < 1e-5,
                "{name} {kind}: got {got} µs, want {w} µs"
            );
        }
    }
}

#[test]
fn groups_that_cross_nodes_pay_the_network_link() {
    let topo = Topology::builtin("2x8-h100-ib400").expect("built-in");
    let m = Mesh::new(&[("node", 2), ("gpu", 8)]);

    // Over "node": groups {d, d+8} cross; 2·(1/2)·4 MiB / 45 GB/s + 2·5 µs.
    let across = all_reduce(&m, &[1024, 1024], &["node"]);
    let e = estimate_collective(&across, &topo).expect("estimate");
    assert!(e.crosses_nodes);
    assert_eq!(e.link.name, "InfiniBand NDR 400 Gb/s");
    assert_close(e.seconds * 1e6, 103.206756, "all-reduce over node");

    // Over "gpu": groups stay in a node; 2·(7/8)·4 MiB / 360 GB/s + 14·1 µs.
    let inside = all_reduce(&m, &[1024, 1024], &["gpu"]);
    let e = estimate_collective(&inside, &topo).expect("estimate");
    assert!(!e.crosses_nodes);
    assert_close(e.seconds * 1e6, 34.388978, "all-reduce over gpu");

    // One group of all 16: 15/16 · 16 MiB / 45 GB/s + 15·5 µs.
    let gather = only(&m, &[4096, 1024], &["node gpu", ""], &["", ""]);
    assert_eq!(gather.kind, CollectiveKind::AllGather);
    assert_close(us(&gather, &topo), 424.525333, "all-gather over 16");

    // A permute swapping "node" with an in-node axis: pairs cross nodes,
    // 1 MiB / 45 GB/s + 5 µs; swapping two in-node axes stays on NVLink.
    let m4 = Mesh::new(&[("node", 2), ("a", 2), ("c", 2), ("b", 2)]);
    let swap_nodes = only(&m4, &[1024, 1024], &["node", "a"], &["a", "node"]);
    assert_eq!(swap_nodes.kind, CollectiveKind::CollectivePermute);
    assert_close(us(&swap_nodes, &topo), 28.301689, "permute across nodes");
    let swap_inside = only(&m4, &[1024, 1024], &["a", "c"], &["c", "a"]);
    assert_eq!(swap_inside.kind, CollectiveKind::CollectivePermute);
    assert_close(us(&swap_inside, &topo), 3.912711, "permute inside a node");

    // The same 16-device collective does not fit an 8-device machine.
    let small = Topology::builtin("h100-nvlink-8").expect("built-in");
    let err = estimate_collective(&across, &small).expect_err("device 8 is not there");
    assert!(err.to_string().contains("has 8 devices"), "{err}");
}

#[test]
fn factors_and_steps_follow_nccl_tests() {
    use CollectiveKind::*;
    assert_eq!(bus_factor(AllGather, 8), 7.0 / 8.0);
    assert_eq!(bus_factor(ReduceScatter, 4), 3.0 / 4.0);
    assert_eq!(bus_factor(AllToAll, 2), 0.5);
    assert_eq!(bus_factor(AllReduce, 8), 14.0 / 8.0);
    assert_eq!(bus_factor(CollectivePermute, 2), 1.0);
    assert_eq!(bus_factor(AllSlice, 8), 0.0);
    assert_eq!(bus_factor(AllReduce, 1), 0.0);
    assert_eq!(latency_steps(AllGather, 8), 7.0);
    assert_eq!(latency_steps(AllToAll, 8), 7.0);
    assert_eq!(latency_steps(AllReduce, 8), 14.0);
    assert_eq!(latency_steps(CollectivePermute, 2), 1.0);
    assert_eq!(latency_steps(AllSlice, 4), 0.0);
    // An all-reduce costs exactly an all-gather plus a reduce-scatter.
    let link = Topology::builtin("pcie4-8").expect("built-in").intra_node;
    let s = 3.0 * MIB;
    let ar = alpha_beta_seconds(AllReduce, 8, s, &link);
    let ag = alpha_beta_seconds(AllGather, 8, s, &link);
    let rs = alpha_beta_seconds(ReduceScatter, 8, s, &link);
    assert!((ar - (ag + rs)).abs() < 1e-15);
}

#[test]
fn a_permute_where_nothing_moves_costs_nothing_and_slices_are_free() {
    let topo = Topology::builtin("h100-nvlink-8").expect("built-in");
    let m = Mesh::new(&[("x", 4), ("y", 2)]);
    let mut c = only(&m, &[1024, 1024], &["x", ""], &["", ""]);
    // A permute of self-pairs only moves nothing.
    c.kind = CollectiveKind::CollectivePermute;
    c.groups = (0..8).map(|d| vec![d, d]).collect();
    let e = estimate_collective(&c, &topo).expect("estimate");
    assert_eq!((e.seconds, e.bus_bytes), (0.0, 0.0));

    let slice = lower_reshard(
        &m,
        &[1024, 1024],
        ElemType::F32,
        &sharding(&["", ""]),
        &sharding(&["x", ""]),
    )
    .expect("lowers");
    assert!(slice.iter().all(|c| c.kind == CollectiveKind::AllSlice));
    for c in &slice {
        assert_eq!(us(c, &topo), 0.0);
    }
}

/// Collectives of many reshards (padded ones included) and partial sums.
fn many_collectives() -> Vec<(Mesh, Collective)> {
    let meshes = [
        Mesh::new(&[("x", 4), ("y", 2)]),
        Mesh::new(&[("x", 2), ("y", 2), ("z", 2)]),
        Mesh::new(&[("x", 8)]),
    ];
    let dims = ["", "x", "y", "z", "x y", "y x", "y z"];
    let shapes: [&[i64]; 3] = [&[16, 32], &[7, 10], &[9, 3]];
    let mut out = Vec::new();
    for m in &meshes {
        let usable: Vec<&str> = dims
            .iter()
            .copied()
            .filter(|d| d.split_whitespace().all(|a| m.axis(a).is_some()))
            .collect();
        for shape in shapes {
            for a in &usable {
                for b in &usable {
                    for c in &usable {
                        for d in &usable {
                            let (from, to) = ([*a, *b], [*c, *d]);
                            if let Ok(cs) = lower_reshard(
                                m,
                                shape,
                                ElemType::BF16,
                                &sharding(&from),
                                &sharding(&to),
                            ) {
                                out.extend(cs.into_iter().map(|c| (m.clone(), c)));
                            }
                        }
                    }
                }
            }
            for axes in [&["x"][..], &["y"], &["x", "y"]] {
                if axes.iter().all(|a| m.axis(a).is_some()) {
                    out.push((m.clone(), all_reduce(m, shape, axes)));
                    if let Some(rs) = try_reduce_scatter(m, shape, axes) {
                        out.push((m.clone(), rs));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn bus_bytes_equal_the_partitioners_bytes_per_device() {
    let all = many_collectives();
    let mut seen = std::collections::HashSet::new();
    for (mesh, c) in &all {
        seen.insert(c.kind);
        let n = mesh.num_devices() as usize;
        let bytes = collective_bytes(c, n);
        let g = c.group_size();
        let s = nccl_size_bytes(c);
        let want = if c.kind == CollectiveKind::CollectivePermute {
            // bytes_per_device averages the moving blocks over all devices.
            let moving = c.groups.iter().filter(|p| p.first() != p.last()).count();
            s * moving as f64 / n as f64
        } else {
            bus_factor(c.kind, g) * s
        };
        assert!(
            (bytes - want).abs() < 1e-9 * bytes.max(1.0),
            "{c}: partitioner {bytes} bytes, model {want} (S = {s}, G = {g})"
        );
        // The bandwidth term of the estimate is those bytes (the slowest
        // device's, for a permute).
        let topo = Topology::builtin("pcie4-8").expect("built-in");
        let e = estimate_collective(c, &topo).expect("estimate");
        if c.kind != CollectiveKind::CollectivePermute {
            assert!((e.bus_bytes - bytes).abs() < 1e-9 * bytes.max(1.0), "{c}");
        }
    }
    for kind in [
        CollectiveKind::AllGather,
        CollectiveKind::ReduceScatter,
        CollectiveKind::AllReduce,
        CollectiveKind::AllToAll,
        CollectiveKind::CollectivePermute,
    ] {
        assert!(
            seen.contains(&kind),
            "no {kind} among {} collectives",
            all.len()
        );
    }
}
