//! Property tests of reshard lowering on random meshes (1-3 axes of sizes
//! 1-4, custom device orders), random shapes and random source/target
//! shardings. `lower_and_check` runs each lowering through the simulator
//! (the result must be exactly the target's blocks, padding included),
//! checks that the collectives chain, that `bytes_per_device` equals the
//! traffic the simulation counted (gathers, all-to-alls, permutes), and
//! that a plan labelled monotone never makes the tensor less sharded (nor,
//! without padding, larger locally) before its last collective.

mod reshard_common;

use meshrun_compiler::ir::ElemType;
use meshrun_compiler::partition::{lower_reshard, plan_reshard, CollectiveKind, ReshardStrategy};
use proptest::prelude::*;
use reshard_common::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Any reshard on one mesh lowers to collectives that produce exactly
    /// the target blocks.
    #[test]
    fn same_mesh_lowering_reaches_the_target(seed in any::<u64>()) {
        let mut rng = CaseRng::new(seed);
        let m = random_mesh(&mut rng, &["a", "b", "c"]);
        let rank = 1 + rng.below(3) as usize;
        let shape = random_shape(&mut rng, rank);
        let from = random_sharding(&mut rng, &m, "m", rank);
        let to = random_sharding(&mut rng, &m, "m", rank);
        lower_and_check(&m, &m, &shape, &from, &to, false);
    }

    /// With axis sizes that are powers of two and no padding, the greedy
    /// lowering always succeeds monotonically: slices first, gathers last.
    #[test]
    fn power_of_two_divisible_reshards_never_grow_before_the_end(seed in any::<u64>()) {
        let mut rng = CaseRng::new(seed);
        let m = random_pow2_mesh(&mut rng, &["a", "b", "c"]);
        let shape = random_divisible_shape(&mut rng, m.num_devices());
        let from = random_sharding(&mut rng, &m, "m", shape.len());
        let to = random_sharding(&mut rng, &m, "m", shape.len());
        lower_and_check(&m, &m, &shape, &from, &to, true);
    }

    /// Power-of-two meshes with any shapes: correct, and the plan's
    /// monotone label is honest (checked inside `lower_and_check`).
    #[test]
    fn power_of_two_padded_reshards_are_exact(seed in any::<u64>()) {
        let mut rng = CaseRng::new(seed);
        let m = random_pow2_mesh(&mut rng, &["a", "b", "c"]);
        let rank = 1 + rng.below(3) as usize;
        let shape = random_shape(&mut rng, rank);
        let from = random_sharding(&mut rng, &m, "m", rank);
        let to = random_sharding(&mut rng, &m, "m", rank);
        lower_and_check(&m, &m, &shape, &from, &to, false);
    }

    /// Between two meshes over the same devices (another device order, or
    /// other axes): still exactly the target blocks.
    #[test]
    fn cross_mesh_lowering_reaches_the_target(seed in any::<u64>()) {
        let mut rng = CaseRng::new(seed);
        let m = random_mesh(&mut rng, &["a", "b", "c"]);
        let other = random_other_mesh(&mut rng, &m);
        let rank = 1 + rng.below(3) as usize;
        let shape = random_shape(&mut rng, rank);
        let from = random_sharding(&mut rng, &m, "m", rank);
        let to = random_sharding(&mut rng, &other, "o", rank);
        lower_and_check(&m, &other, &shape, &from, &to, false);
    }

    /// Across power-of-two meshes without padding the lowering is monotone
    /// too (a permute onto the target mesh, then the greedy steps).
    #[test]
    fn cross_mesh_power_of_two_divisible_is_monotone(seed in any::<u64>()) {
        let mut rng = CaseRng::new(seed);
        let m = random_pow2_mesh(&mut rng, &["a", "b", "c"]);
        let other = random_other_mesh(&mut rng, &m);
        let shape = random_divisible_shape(&mut rng, m.num_devices());
        let from = random_sharding(&mut rng, &m, "m", shape.len());
        let to = random_sharding(&mut rng, &other, "o", shape.len());
        lower_and_check(&m, &other, &shape, &from, &to, true);
    }

    /// Resharding to the same sharding needs no collective, and lowering
    /// is deterministic.
    #[test]
    fn identity_is_free_and_lowering_is_deterministic(seed in any::<u64>()) {
        let mut rng = CaseRng::new(seed);
        let m = random_mesh(&mut rng, &["a", "b", "c"]);
        let rank = 1 + rng.below(3) as usize;
        let shape = random_shape(&mut rng, rank);
        let s = random_sharding(&mut rng, &m, "m", rank);
        let t = random_sharding(&mut rng, &m, "m", rank);
        prop_assert!(lower_reshard(&m, &shape, ElemType::F32, &s, &s).unwrap().is_empty());
        let a = plan_reshard(&m, &m, &shape, ElemType::BF16, &s, &t).unwrap();
        let b = plan_reshard(&m, &m, &shape, ElemType::BF16, &s, &t).unwrap();
        prop_assert_eq!(&a, &b);
        // Slices are free; a plan without communication only slices.
        if a.collectives.iter().all(|c| !c.communicates()) {
            prop_assert_eq!(a.strategy, ReshardStrategy::Monotone);
        }
    }
}

/// 6 rows over y(4) pad to 8, 12 columns over x(2) do not: the plan cuts
/// the rows over x as if there were 8 (blocks of 4), so that the
/// all-to-all over y's minor half moves whole blocks; its first all-slice
/// must say so in its local shape (a reduce-scatter fused with it keeps
/// that shape, see `tests/cli_partition.rs`).
#[test]
fn padded_rows_to_y_and_columns_to_x() {
    let m = mesh(&[("x", 2), ("y", 4)]);
    let from = sharding("m", &["", "y"]);
    let to = sharding("m", &["y", "x"]);
    let plan = lower_and_check(&m, &m, &[6, 12], &from, &to, true);
    let first = &plan.collectives[0];
    assert_eq!(first.kind, CollectiveKind::AllSlice);
    assert_eq!(first.out_local_shape, vec![4, 3]);
}
