//! Shared helpers for the reshard tests: a compact sharding notation, and
//! `lower_and_check`, which lowers a reshard and checks it against the
//! simulator (the ground truth), the cost model and the no-growth rule.
#![allow(dead_code)]

use meshrun_compiler::ir::ElemType;
use meshrun_compiler::partition::{
    check_reshard, plan_reshard, Collective, CollectiveKind, ReshardPlan, ReshardStrategy,
};
use meshrun_compiler::sharding::{AxisRef, DimSharding, Mesh, TensorSharding};
use meshrun_compiler::splitmix::SplitMix64;

pub fn mesh(axes: &[(&str, i64)]) -> Mesh {
    Mesh::new(axes)
}

/// `"x"`, `"x:(2)2"`.
pub fn axis(text: &str) -> AxisRef {
    match text.split_once(":(") {
        None => AxisRef::full(text),
        Some((name, rest)) => {
            let (pre, size) = rest.split_once(')').expect("x:(m)k");
            AxisRef::sub(name, pre.parse().expect("pre"), size.parse().expect("size"))
        }
    }
}

/// One dimension per string, axes separated by spaces: `&["x y", "", "z:(1)2"]`.
pub fn sharding(mesh_name: &str, dims: &[&str]) -> TensorSharding {
    TensorSharding::new(
        mesh_name,
        dims.iter()
            .map(|d| DimSharding::closed(d.split_whitespace().map(axis).collect()))
            .collect(),
    )
}

/// A collective without its operand and result type:
/// `sdy.all_to_all [{"x"}: 0->2]`, `sdy.collective_permute`.
pub fn head(c: &Collective) -> String {
    let s = c.to_sdy("%x");
    s.split(" %x").next().unwrap_or_default().to_string()
}

pub fn elems(shape: &[i64]) -> i64 {
    shape.iter().product()
}

/// Lowers `from -> to`, then checks: the simulation ends in exactly the
/// target blocks; consecutive collectives chain (shardings and local
/// shapes); `bytes_per_device` equals the simulated traffic for gathers,
/// all-to-alls and permutes; and, for the greedy strategy, the tensor is
/// never less sharded (and, without padding, never larger locally) before
/// the last collective whenever the plan says it is monotone. With
/// `expect_monotone`, the plan must be.
pub fn lower_and_check(
    from_mesh: &Mesh,
    to_mesh: &Mesh,
    shape: &[i64],
    from: &TensorSharding,
    to: &TensorSharding,
    expect_monotone: bool,
) -> ReshardPlan {
    let elem = ElemType::F32;
    let plan = plan_reshard(from_mesh, to_mesh, shape, elem, from, to)
        .unwrap_or_else(|e| panic!("lowering {from} -> {to} failed: {e}"));
    let cs = &plan.collectives;
    let listing = || {
        cs.iter()
            .map(|c| format!("  {c}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let sim = check_reshard(from_mesh, to_mesh, shape, from, to, cs).unwrap_or_else(|e| {
        panic!(
            "{from} -> {to} on {shape:?}: simulation failed: {e}\n{}",
            listing()
        )
    });
    for w in cs.windows(2) {
        assert_eq!(
            w[0].out_sharding,
            w[1].in_sharding,
            "shardings chain\n{}",
            listing()
        );
        assert_eq!(
            w[0].out_local_shape, w[1].in_local_shape,
            "local shapes chain"
        );
    }
    for (i, c) in cs.iter().enumerate() {
        if matches!(
            c.kind,
            CollectiveKind::AllGather
                | CollectiveKind::AllToAll
                | CollectiveKind::CollectivePermute
        ) {
            let counted = sim.avg_received(i) * elem.byte_size() as f64;
            assert!(
                (c.bytes_per_device() - counted).abs() < 1e-9,
                "step {i} ({c}): bytes_per_device {} but the simulation received {counted}",
                c.bytes_per_device()
            );
        }
        if c.kind == CollectiveKind::AllSlice {
            assert_eq!(c.bytes_per_device(), 0.0);
            assert_eq!(sim.avg_received(i), 0.0);
        }
    }
    if expect_monotone {
        assert_eq!(
            plan.strategy,
            ReshardStrategy::Monotone,
            "monotone plan\n{}",
            listing()
        );
    }
    if plan.strategy == ReshardStrategy::Monotone && cs.len() > 1 {
        let mesh_of = |s: &TensorSharding| {
            if s.mesh == to.mesh {
                to_mesh
            } else {
                from_mesh
            }
        };
        let shards = |s: &TensorSharding| -> Vec<i64> {
            s.dims.iter().map(|d| d.num_shards(mesh_of(s))).collect()
        };
        let divisible = |s: &TensorSharding| shards(s).iter().zip(shape).all(|(&n, &d)| d % n == 0);
        // Blocks laid out over a padded extent (a dimension planned as
        // longer than it is, see `partition::reshard::padded`) may grow by padding.
        let real_local = |s: &TensorSharding| -> Vec<i64> {
            shards(s)
                .iter()
                .zip(shape)
                .map(|(&n, &d)| (d + n - 1) / n.max(1))
                .collect()
        };
        for c in &cs[..cs.len() - 1] {
            let (a, b) = (shards(&c.in_sharding), shards(&c.out_sharding));
            assert!(
                b.iter().product::<i64>() >= a.iter().product::<i64>(),
                "{c} makes the tensor less sharded before the last step\n{}",
                listing()
            );
            let unpadded = c.in_local_shape == real_local(&c.in_sharding)
                && c.out_local_shape == real_local(&c.out_sharding);
            if unpadded && divisible(&c.in_sharding) && divisible(&c.out_sharding) {
                assert!(
                    elems(&c.out_local_shape) <= elems(&c.in_local_shape),
                    "{c} grows the local tensor before the last step\n{}",
                    listing()
                );
            }
        }
    }
    if let Some(last) = cs.last() {
        assert_eq!(
            last.out_sharding
                .dims
                .iter()
                .map(|d| &d.axes)
                .collect::<Vec<_>>(),
            to.dims.iter().map(|d| &d.axes).collect::<Vec<_>>(),
            "the last collective produces the target sharding"
        );
    }
    plan
}

/// Randomized cases reproducible from one seed (SplitMix64).
pub struct CaseRng(SplitMix64);

impl CaseRng {
    pub fn new(seed: u64) -> CaseRng {
        CaseRng(SplitMix64::new(seed))
    }

    pub fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn coin(&mut self) -> bool {
        self.below(2) == 0
    }

    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }
}

/// Device ids in a random order half of the time.
fn maybe_permuted(rng: &mut CaseRng, m: Mesh) -> Mesh {
    if rng.coin() {
        let mut ids: Vec<i64> = (0..m.num_devices()).collect();
        rng.shuffle(&mut ids);
        m.with_device_ids(ids)
    } else {
        m
    }
}

/// 1-3 axes named from `names`, sizes 1-4, maybe a custom device order.
pub fn random_mesh(rng: &mut CaseRng, names: &[&str]) -> Mesh {
    let n = 1 + rng.below(names.len() as u64) as usize;
    let axes: Vec<(&str, i64)> = names[..n]
        .iter()
        .map(|&name| (name, 1 + rng.below(4) as i64))
        .collect();
    maybe_permuted(rng, Mesh::new(&axes))
}

/// A mesh over `devices` devices with other axes (1-3 factors), maybe in a
/// custom device order.
pub fn random_mesh_over(rng: &mut CaseRng, devices: i64, names: &[&str]) -> Mesh {
    let mut sizes = Vec::new();
    let mut left = devices;
    for i in 0..names.len() {
        if i + 1 == names.len() {
            sizes.push(left);
            break;
        }
        let divisors: Vec<i64> = (1..=left).filter(|d| left % d == 0).collect();
        let d = divisors[rng.below(divisors.len() as u64) as usize];
        sizes.push(d);
        left /= d;
        if left == 1 && rng.coin() {
            break;
        }
    }
    let axes: Vec<(&str, i64)> = names.iter().copied().zip(sizes).collect();
    maybe_permuted(rng, Mesh::new(&axes))
}

/// Dimension sizes 1-16, often multiples of the common axis sizes.
pub fn random_shape(rng: &mut CaseRng, rank: usize) -> Vec<i64> {
    (0..rank)
        .map(|_| match rng.below(3) {
            0 => 1 + rng.below(16) as i64,
            1 => 8 * (1 + rng.below(2) as i64),
            _ => 12,
        })
        .collect()
}

/// A valid random sharding on `m`: each axis (or each half of an axis of
/// size 4) unused or sharding a random dimension, in random order.
pub fn random_sharding(
    rng: &mut CaseRng,
    m: &Mesh,
    mesh_name: &str,
    rank: usize,
) -> TensorSharding {
    let mut per_dim: Vec<Vec<AxisRef>> = vec![Vec::new(); rank];
    for a in &m.axes {
        let parts = if a.size == 4 && rng.coin() {
            vec![
                AxisRef::sub(a.name.clone(), 1, 2),
                AxisRef::sub(a.name.clone(), 2, 2),
            ]
        } else {
            vec![AxisRef::full(a.name.clone())]
        };
        for p in parts {
            let d = rng.below(rank as u64 + 1) as usize;
            if d < rank {
                per_dim[d].push(p);
            }
        }
    }
    for dim in &mut per_dim {
        rng.shuffle(dim);
        // Adjacent halves in order must be written as the whole axis.
        let mut merged: Vec<AxisRef> = Vec::new();
        for a in dim.drain(..) {
            if let (Some(last), Some(s)) = (merged.last(), a.sub) {
                if let Some(l) = last.sub {
                    if last.name == a.name && l.pre_size * l.size == s.pre_size {
                        let name = a.name.clone();
                        merged.pop();
                        merged.push(AxisRef::full(name));
                        continue;
                    }
                }
            }
            merged.push(a);
        }
        *dim = merged;
    }
    TensorSharding::new(
        mesh_name,
        per_dim.into_iter().map(DimSharding::closed).collect(),
    )
}

/// 1-3 axes of sizes 1, 2 or 4, maybe in a custom device order.
pub fn random_pow2_mesh(rng: &mut CaseRng, names: &[&str]) -> Mesh {
    let n = 1 + rng.below(names.len() as u64) as usize;
    let axes: Vec<(&str, i64)> = names[..n]
        .iter()
        .map(|&name| (name, [1, 2, 4][rng.below(3) as usize]))
        .collect();
    maybe_permuted(rng, Mesh::new(&axes))
}

/// A mesh over the same devices as `m`: half of the time the same axes in
/// another device order, otherwise other axes.
pub fn random_other_mesh(rng: &mut CaseRng, m: &Mesh) -> Mesh {
    if rng.coin() {
        let mut ids: Vec<i64> = (0..m.num_devices()).collect();
        rng.shuffle(&mut ids);
        Mesh {
            axes: m.axes.clone(),
            device_ids: Some(ids),
        }
    } else {
        random_mesh_over(rng, m.num_devices(), &["p", "q", "r"])
    }
}

/// A rank (1-3) and shape whose every dimension is a multiple of the
/// number of devices `n` (so no sharding pads), kept small enough to
/// simulate quickly.
pub fn random_divisible_shape(rng: &mut CaseRng, n: i64) -> Vec<i64> {
    let rank = if n > 16 {
        1 + rng.below(2)
    } else {
        1 + rng.below(3)
    } as usize;
    (0..rank).map(|_| n * (1 + rng.below(2) as i64)).collect()
}
