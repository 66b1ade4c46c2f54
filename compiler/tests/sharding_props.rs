//! Property tests of the sharding model over random meshes (1-3 axes, some
//! split into sub-axes, some with permuted `device_ids`), random valid
//! shardings and random shapes (including non-divisible dimensions):
//!
//! (a) the devices' valid blocks tile the global tensor, each element held by
//!     exactly `replication_factor` devices;
//! (b) every block is `shard * local` with extent at most the local shape;
//! (c) generated shardings validate, and each kind of mutation that breaks
//!     an invariant is rejected with the matching error.

use std::collections::HashMap;

use meshrun_compiler::sharding::layout::TensorLayout;
use meshrun_compiler::sharding::validate::{
    sort_in_mesh_order, validate_mesh, validate_sharding, AxisPlace, ShardingError,
};
use meshrun_compiler::sharding::{AxisRef, DimSharding, Mesh, TensorSharding};
use proptest::prelude::*;
use proptest::strategy::ValueTree;

/// Axis sizes to draw from: small primes and composites (the composites are
/// what sub-axes are made of).
const SIZES: [i64; 7] = [1, 2, 3, 4, 6, 8, 4];
const NAMES: [&str; 3] = ["a", "b", "c"];

/// Raw random choices; `build` turns them into a mesh, a valid sharding and a
/// shape. Keeping the choices flat lets proptest shrink each one.
#[derive(Debug, Clone)]
struct Recipe {
    axis_sizes: Vec<usize>,
    permute_devices: bool,
    device_keys: Vec<u32>,
    split_choice: Vec<usize>,
    /// Where each piece of each axis goes: 0 unused, 1 replicated,
    /// 2 unreduced, otherwise a dimension.
    piece_dest: Vec<u8>,
    piece_order: Vec<u32>,
    dim_open: Vec<bool>,
    dim_priority: Vec<Option<i64>>,
    shape: Vec<i64>,
}

struct Case {
    mesh: Mesh,
    sharding: TensorSharding,
    shape: Vec<i64>,
}

fn recipe(axis_sizes: BoxedStrategy<Vec<usize>>) -> impl Strategy<Value = Recipe> {
    (
        axis_sizes,
        any::<bool>(),
        prop::collection::vec(any::<u32>(), 512),
        prop::collection::vec(0usize..4, 3),
        prop::collection::vec(0u8..8, 9),
        prop::collection::vec(any::<u32>(), 9),
        prop::collection::vec(any::<bool>(), 3),
        prop::collection::vec(prop::option::of(0i64..3), 3),
        prop::collection::vec(1i64..=13, 1..=3),
    )
        .prop_map(
            |(
                axis_sizes,
                permute_devices,
                device_keys,
                split_choice,
                piece_dest,
                piece_order,
                dim_open,
                dim_priority,
                shape,
            )| Recipe {
                axis_sizes,
                permute_devices,
                device_keys,
                split_choice,
                piece_dest,
                piece_order,
                dim_open,
                dim_priority,
                shape,
            },
        )
}

fn any_mesh_sizes() -> BoxedStrategy<Vec<usize>> {
    prop::collection::vec(0..SIZES.len(), 1..=3).boxed()
}

/// Meshes whose first axis has a composite size, so sub-axes of it exist.
fn composite_first_axis() -> BoxedStrategy<Vec<usize>> {
    (
        prop::sample::select(vec![3usize, 4, 5]),
        prop::collection::vec(0..SIZES.len(), 0..=2),
    )
        .prop_map(|(first, mut rest)| {
            rest.insert(0, first);
            rest
        })
        .boxed()
}

/// Ordered factorizations of `n` into factors > 1 (`[n]` first).
fn factorizations(n: i64) -> Vec<Vec<i64>> {
    if n == 1 {
        return vec![vec![1]];
    }
    let mut out = vec![vec![n]];
    for f in 2..n {
        if n % f == 0 {
            for mut rest in factorizations(n / f) {
                rest.insert(0, f);
                out.push(rest);
            }
        }
    }
    out
}

/// `"x":(m)k` then `"x":(m*k)l` → one (sub-)axis.
fn try_merge(a: &AxisRef, b: &AxisRef, mesh: &Mesh) -> Option<AxisRef> {
    let (sa, sb) = (a.sub?, b.sub?);
    if a.name != b.name || sa.pre_size * sa.size != sb.pre_size {
        return None;
    }
    let size = sa.size * sb.size;
    if sa.pre_size == 1 && mesh.axis_size(&a.name) == Some(size) {
        Some(AxisRef::full(a.name.clone()))
    } else {
        Some(AxisRef::sub(a.name.clone(), sa.pre_size, size))
    }
}

/// Merge adjacent mergeable sub-axes until none are left (Shardy's
/// "sub-axes are maximal" form).
fn merge_adjacent(axes: &mut Vec<AxisRef>, mesh: &Mesh) {
    let mut i = 0;
    while i + 1 < axes.len() {
        if let Some(m) = try_merge(&axes[i], &axes[i + 1], mesh) {
            axes[i] = m;
            axes.remove(i + 1);
            i = i.saturating_sub(1);
        } else {
            i += 1;
        }
    }
}

fn build(r: &Recipe) -> Case {
    let axes: Vec<(&str, i64)> = r
        .axis_sizes
        .iter()
        .enumerate()
        .map(|(i, &s)| (NAMES[i], SIZES[s]))
        .collect();
    let mut mesh = Mesh::new(&axes);
    let n = mesh.num_devices() as usize;
    if r.permute_devices {
        let mut ids: Vec<i64> = (0..n as i64).collect();
        ids.sort_by_key(|&d| r.device_keys[d as usize]);
        if ids.windows(2).any(|w| w[0] > w[1]) {
            mesh = mesh.with_device_ids(ids);
        }
    }

    let rank = r.shape.len();
    let mut dims: Vec<Vec<(u32, AxisRef)>> = vec![Vec::new(); rank];
    let mut replicated = Vec::new();
    let mut unreduced = Vec::new();
    let mut piece = 0;
    for (i, &(name, size)) in axes.iter().enumerate() {
        let options = factorizations(size);
        let factors = &options[r.split_choice[i] % options.len()];
        let mut pre = 1;
        for &k in factors {
            let axis = if factors.len() == 1 {
                AxisRef::full(name)
            } else {
                AxisRef::sub(name, pre, k)
            };
            pre *= k;
            match r.piece_dest[piece] {
                0 => {}
                1 => replicated.push(axis),
                2 => unreduced.push(axis),
                d => dims[(d as usize - 3) % rank].push((r.piece_order[piece], axis)),
            }
            piece += 1;
        }
    }
    let dims = dims
        .into_iter()
        .enumerate()
        .map(|(i, mut keyed)| {
            keyed.sort_by_key(|(k, _)| *k);
            let mut axes: Vec<AxisRef> = keyed.into_iter().map(|(_, a)| a).collect();
            merge_adjacent(&mut axes, &mesh);
            let is_closed = !r.dim_open[i];
            let priority = r.dim_priority[i].filter(|_| !(is_closed && axes.is_empty()));
            DimSharding {
                axes,
                is_closed,
                priority,
            }
        })
        .collect();
    for list in [&mut replicated, &mut unreduced] {
        sort_in_mesh_order(&mesh, list);
        merge_adjacent(list, &mesh);
    }
    let sharding = TensorSharding {
        replicated,
        unreduced,
        ..TensorSharding::new("mesh", dims)
    };
    Case {
        mesh,
        sharding,
        shape: r.shape.clone(),
    }
}

fn used_refs(s: &TensorSharding) -> Vec<AxisRef> {
    s.dim_axes()
        .chain(&s.replicated)
        .chain(&s.unreduced)
        .cloned()
        .collect()
}

fn smallest_prime_factor(n: i64) -> i64 {
    (2..=n).find(|p| n % p == 0).unwrap_or(n)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    #[test]
    fn blocks_tile_the_tensor_replication_factor_times(r in recipe(any_mesh_sizes())) {
        let case = build(&r);
        let layout = TensorLayout::new(&case.mesh, &case.sharding, &case.shape)
            .map_err(|e| TestCaseError::fail(format!("{e}")))?;
        let rf = layout.replication_factor();
        let shards: i64 = layout.dims().iter().map(|d| d.shards).product();
        prop_assert_eq!(rf * shards, case.mesh.num_devices());

        let volume: i64 = case.shape.iter().product();
        let mut held = vec![0i64; volume as usize];
        let slices = layout.slices();
        prop_assert_eq!(slices.len() as i64, case.mesh.num_devices());
        for s in &slices {
            // Every element of the block, as a linear index of the global tensor.
            let mut index = s.offset.clone();
            let block: i64 = s.extent.iter().product();
            for _ in 0..block {
                let linear = index
                    .iter()
                    .zip(&case.shape)
                    .fold(0, |acc, (i, d)| acc * d + i);
                held[linear as usize] += 1;
                for d in (0..index.len()).rev() {
                    index[d] += 1;
                    if index[d] < s.offset[d] + s.extent[d] {
                        break;
                    }
                    index[d] = s.offset[d];
                }
            }
        }
        prop_assert!(held.iter().all(|&h| h == rf), "held {:?}, rf {}", held, rf);
    }

    #[test]
    fn blocks_start_at_shard_times_local_and_fit_the_local_shape(r in recipe(any_mesh_sizes())) {
        let case = build(&r);
        let layout = TensorLayout::new(&case.mesh, &case.sharding, &case.shape)
            .map_err(|e| TestCaseError::fail(format!("{e}")))?;
        let local = layout.local_shape();
        for (d, dim) in layout.dims().iter().enumerate() {
            prop_assert_eq!(dim.global, case.shape[d]);
            prop_assert_eq!(dim.shards, case.sharding.dims[d].num_shards(&case.mesh));
            prop_assert_eq!(dim.local * dim.shards, dim.global + dim.padding);
            prop_assert!(dim.padding >= 0 && dim.padding < dim.shards);
        }
        let mut previous = None;
        for s in layout.slices() {
            prop_assert!(previous < Some(s.device), "slices are in device-id order");
            previous = Some(s.device);
            prop_assert_eq!(layout.shard_index(s.device), Some(s.shard.clone()));
            prop_assert_eq!(s.shard.len(), local.len());
            for (d, dim) in layout.dims().iter().enumerate() {
                let (shard, offset, extent) = (s.shard[d], s.offset[d], s.extent[d]);
                prop_assert!(0 <= shard && shard < dim.shards);
                prop_assert_eq!(offset, shard * local[d]);
                prop_assert!(0 <= extent && extent <= local[d]);
                prop_assert_eq!(extent, (dim.global - offset).clamp(0, local[d]));
            }
        }
    }

    #[test]
    fn device_ids_only_move_blocks(r in recipe(any_mesh_sizes())) {
        let case = build(&r);
        let plain = Mesh { device_ids: None, ..case.mesh.clone() };
        let moved = TensorLayout::new(&case.mesh, &case.sharding, &case.shape)
            .map_err(|e| TestCaseError::fail(format!("{e}")))?;
        let fixed = TensorLayout::new(&plain, &case.sharding, &case.shape)
            .map_err(|e| TestCaseError::fail(format!("{e}")))?;
        // The device at mesh position p holds what device p holds without
        // device_ids.
        for (p, id) in case.mesh.device_list().into_iter().enumerate() {
            prop_assert_eq!(moved.shard_index(id), fixed.shard_index(p as i64));
        }
    }

    #[test]
    fn sub_axes_keep_data_in_place_across_reshape(
        r in recipe(composite_first_axis()),
        split in any::<prop::sample::Index>(),
        per_device in 1i64..=3,
    ) {
        // SPEC §2: `tensor<N>` on `[{"a"}]` reshaped to `k1 x N/k1` is
        // `[{"a":(1)k1}, {"a":(k1)k2}]` with every element left in place.
        let case = build(&r);
        let n = case.mesh.axes[0].size;
        let splits: Vec<i64> = (2..n).filter(|k| n % k == 0).collect();
        let k1 = *split.get(&splits);
        let k2 = n / k1;
        let total = n * per_device;
        let flat = TensorLayout::new(
            &case.mesh,
            &TensorSharding::new("mesh", vec![DimSharding::closed(vec![AxisRef::full("a")])]),
            &[total],
        )
        .map_err(|e| TestCaseError::fail(format!("{e}")))?;
        let folded = TensorLayout::new(
            &case.mesh,
            &TensorSharding::new(
                "mesh",
                vec![
                    DimSharding::closed(vec![AxisRef::sub("a", 1, k1)]),
                    DimSharding::closed(vec![AxisRef::sub("a", k1, k2)]),
                ],
            ),
            &[k1, total / k1],
        )
        .map_err(|e| TestCaseError::fail(format!("{e}")))?;
        for (a, b) in flat.slices().into_iter().zip(folded.slices()) {
            prop_assert_eq!(a.device, b.device);
            let first_flat = a.offset[0];
            let first_folded = b.offset[0] * (total / k1) + b.offset[1];
            prop_assert_eq!(first_flat, first_folded, "device {}", a.device);
            prop_assert_eq!(a.extent[0], b.extent[0] * b.extent[1]);
        }
    }

    #[test]
    fn generated_shardings_are_valid(r in recipe(any_mesh_sizes())) {
        let case = build(&r);
        prop_assert_eq!(validate_mesh(&case.mesh), Ok(()));
        prop_assert_eq!(
            validate_sharding(&case.sharding, &case.mesh, case.shape.len()),
            Ok(())
        );
        let wrong_rank = validate_sharding(&case.sharding, &case.mesh, case.shape.len() + 1);
        prop_assert!(
            matches!(wrong_rank, Err(ShardingError::RankMismatch { .. })),
            "got {:?}",
            wrong_rank
        );
    }

    #[test]
    fn duplicated_axis_is_rejected(r in recipe(any_mesh_sizes()), pick in any::<prop::sample::Index>(), dim in any::<prop::sample::Index>()) {
        let mut case = build(&r);
        let refs = used_refs(&case.sharding);
        prop_assume!(!refs.is_empty());
        let copy = pick.get(&refs).clone();
        let d = dim.index(case.shape.len());
        case.sharding.dims[d].axes.push(copy.clone());
        let err = validate_sharding(&case.sharding, &case.mesh, case.shape.len());
        match err {
            Err(ShardingError::DuplicateAxis { axis, first, second }) => {
                prop_assert_eq!(axis, copy.to_string());
                prop_assert!(first == AxisPlace::Dim(d) || second == AxisPlace::Dim(d));
            }
            other => prop_assert!(false, "expected DuplicateAxis, got {:?}", other),
        }
    }

    #[test]
    fn unknown_axis_is_rejected(r in recipe(any_mesh_sizes()), dim in any::<prop::sample::Index>(), at in any::<prop::sample::Index>()) {
        let mut case = build(&r);
        let axes = &mut case.sharding.dims[dim.index(case.shape.len())].axes;
        let pos = at.index(axes.len() + 1);
        axes.insert(pos, AxisRef::full("nope"));
        let err = validate_sharding(&case.sharding, &case.mesh, case.shape.len());
        prop_assert!(
            matches!(&err, Err(ShardingError::UnknownAxis { axis, .. }) if axis == "\"nope\""),
            "got {:?}", err
        );
    }

    #[test]
    fn overlapping_sub_axes_are_rejected(r in recipe(composite_first_axis())) {
        let mut case = build(&r);
        let n = case.mesh.axes[0].size;
        let p = smallest_prime_factor(n);
        prop_assert!(p < n, "first axis {} is composite", n);
        let uses: Vec<AxisRef> = used_refs(&case.sharding)
            .into_iter()
            .filter(|a| a.name == "a")
            .collect();
        let last = case.shape.len() - 1;
        if uses.is_empty() {
            case.sharding.dims[0].axes.push(AxisRef::full("a"));
            case.sharding.dims[last].axes.push(AxisRef::sub("a", 1, p));
        } else if uses.iter().any(|a| a.sub.is_none()) {
            case.sharding.dims[last].axes.push(AxisRef::sub("a", 1, p));
        } else {
            case.sharding.dims[0].axes.push(AxisRef::full("a"));
        }
        let err = validate_sharding(&case.sharding, &case.mesh, case.shape.len());
        prop_assert!(
            matches!(&err, Err(ShardingError::OverlappingSubAxes { axis_name, .. }) if axis_name == "a"),
            "got {:?}", err
        );
    }

    #[test]
    fn split_axis_must_be_merged(mut r in recipe(composite_first_axis())) {
        // Axis "a" whole (first factorization) and in some dimension.
        r.split_choice[0] = 0;
        r.piece_dest[0] = r.piece_dest[0].max(3);
        let mut case = build(&r);
        let n = case.mesh.axes[0].size;
        let p = smallest_prime_factor(n);
        // Replace every full use of "a" in a dimension by its two halves.
        let mut split = false;
        for d in &mut case.sharding.dims {
            if let Some(i) = d.axes.iter().position(|a| *a == AxisRef::full("a")) {
                d.axes.splice(i..=i, [AxisRef::sub("a", 1, p), AxisRef::sub("a", p, n / p)]);
                split = true;
            }
        }
        prop_assert!(split, "axis \"a\" shards a dimension");
        let err = validate_sharding(&case.sharding, &case.mesh, case.shape.len());
        prop_assert!(
            matches!(&err, Err(ShardingError::NonMaximalSubAxes { merged, .. }) if merged == "\"a\""),
            "got {:?}", err
        );
    }

    #[test]
    fn replicated_out_of_mesh_order_is_rejected(
        mut r in recipe(any_mesh_sizes()),
        to_replicated in prop::collection::vec(prop::bool::weighted(0.75), 9),
    ) {
        // Send most pieces to `replicated`, so it usually has two or more.
        for (dest, yes) in r.piece_dest.iter_mut().zip(to_replicated) {
            if yes {
                *dest = 1;
            }
        }
        let mut case = build(&r);
        prop_assume!(case.sharding.replicated.len() >= 2);
        case.sharding.replicated.reverse();
        let err = validate_sharding(&case.sharding, &case.mesh, case.shape.len());
        prop_assert!(matches!(err, Err(ShardingError::NotInMeshOrder { .. })), "got {:?}", err);
    }
}

/// The generator reaches the interesting corners, so the properties above
/// are not vacuous: sub-axes, permuted devices, padding, replication,
/// explicitly replicated and unreduced axes.
#[test]
fn generator_covers_sub_axes_padding_and_device_orders() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = recipe(any_mesh_sizes());
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for _ in 0..400 {
        let r = strategy
            .new_tree(&mut runner)
            .expect("strategy generates")
            .current();
        let case = build(&r);
        let layout =
            TensorLayout::new(&case.mesh, &case.sharding, &case.shape).expect("generated valid");
        let mut note = |k| *seen.entry(k).or_default() += 1;
        if case.sharding.dim_axes().any(|a| a.sub.is_some()) {
            note("dim sub-axis");
        }
        if case.sharding.replicated.iter().any(|a| a.sub.is_some()) {
            note("replicated sub-axis");
        }
        if case.mesh.device_ids.is_some() {
            note("device_ids");
        }
        if layout.is_padded() {
            note("padded");
        }
        if layout.slices().iter().any(|s| s.is_empty()) {
            note("empty block");
        }
        if layout.replication_factor() > 1 {
            note("replicated data");
        }
        if !case.sharding.unreduced.is_empty() {
            note("unreduced");
        }
        if case.sharding.dims.iter().any(|d| d.axes.len() >= 2) {
            note("multi-axis dim");
        }
    }
    for k in [
        "dim sub-axis",
        "replicated sub-axis",
        "device_ids",
        "padded",
        "empty block",
        "replicated data",
        "unreduced",
        "multi-axis dim",
    ] {
        assert!(seen.get(k).copied().unwrap_or(0) >= 10, "{k}: {seen:?}");
    }
}
