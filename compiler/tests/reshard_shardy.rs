//! Every case of Shardy's reshard-to-collectives test
//! (`shardy/dialect/sdy/transforms/export/test/reshard_to_collectives.mlir`),
//! restated as data: the mesh, the tensor shape, the source and target
//! shardings, and the collectives Shardy's pass emits for them.
//!
//! For each case, Shardy's sequence is first rebuilt as meshrun collectives
//! and run through the simulator: that checks the transcription and gives
//! its bytes per device under meshrun's cost model. Then meshrun's own
//! lowering must reach the target (simulated, see
//! `reshard_common::lower_and_check`), never make the tensor less sharded
//! before its last collective when Shardy's sequence does not, move no
//! more bytes per device than Shardy's sequence, and, where the bytes tie,
//! take no more communicating collectives.
//!
//! Cases Shardy leaves as `sdy.reshard` (meshes with other axes, single
//! device meshes) have no sequence to compare with: meshrun must lower
//! them correctly or reject them with an error, as each case says. The
//! three cases Shardy's file keeps commented out (sub-axes that cannot
//! coexist) are ported with the sequence written in their comments.

mod reshard_common;

use meshrun_compiler::ir::ElemType;
use meshrun_compiler::partition::{
    check_reshard, device_groups, plan_reshard, AllToAllDims, Collective, CollectiveKind,
    ReshardStrategy,
};
use meshrun_compiler::sharding::layout::TensorLayout;
use meshrun_compiler::sharding::{AxisRef, DimSharding, Mesh, TensorSharding};
use reshard_common::{axis, head, lower_and_check};

const ELEM: ElemType = ElemType::F32;

/// The meshes of Shardy's test file, by their names there.
fn shardy_mesh(name: &str) -> Mesh {
    let m = Mesh::new;
    match name {
        "mesh1d_6" => m(&[("x", 6)]),
        "mesh2d" => m(&[("x", 2), ("y", 2)]),
        "mesh2d_4x2" => m(&[("x", 4), ("y", 2)]),
        "mesh2d_2x8" => m(&[("x", 2), ("y", 8)]),
        "mesh2d_2x3" => m(&[("x", 2), ("y", 3)]),
        "mesh2d_4x6" => m(&[("x", 4), ("y", 6)]),
        "mesh2d_non_iota" => m(&[("x", 2), ("y", 2)]).with_device_ids(vec![3, 2, 1, 0]),
        "mesh2d_non_iota_2" => m(&[("x", 2), ("y", 2)]).with_device_ids(vec![3, 1, 2, 0]),
        "mesh3d" => m(&[("x", 2), ("y", 2), ("z", 2)]),
        "mesh3d_4x2x4" => m(&[("x", 4), ("y", 2), ("z", 4)]),
        "mesh3d_4x6x2" => m(&[("x", 4), ("y", 6), ("z", 2)]),
        "mesh3d_4x6x5" => m(&[("x", 4), ("y", 6), ("z", 5)]),
        "mesh4d" => m(&[("x", 2), ("y", 2), ("z", 2), ("w", 2)]),
        "mesh4d_z4" => m(&[("x", 2), ("y", 2), ("z", 4), ("w", 2)]),
        "mesh4d_w4" => m(&[("x", 2), ("y", 2), ("z", 2), ("w", 4)]),
        "mesh4d_w16" => m(&[("x", 2), ("y", 2), ("z", 2), ("w", 16)]),
        "mesh6d" => m(&[("x", 2), ("y", 2), ("z", 2), ("w", 2), ("u", 2), ("v", 2)]),
        "empty_mesh" | "empty_mesh_another" => m(&[]),
        "single_dev_0" => m(&[]).with_device_ids(vec![0]),
        other => panic!("no mesh named {other}"),
    }
}

/// `{x y} {} {z:(1)2}`, optionally followed by `unreduced={x}`: one brace
/// group per dimension.
fn groups(text: &str) -> Vec<Vec<AxisRef>> {
    text.split('{')
        .skip(1)
        .map(|g| {
            let inner = g.split('}').next().expect("closing brace");
            inner.split_whitespace().map(axis).collect()
        })
        .collect()
}

fn parse_sharding(mesh_name: &str, text: &str) -> TensorSharding {
    let (dims, unreduced) = match text.split_once("unreduced=") {
        Some((d, u)) => (d, groups(u).concat()),
        None => (text, Vec::new()),
    };
    let mut s = TensorSharding::new(
        mesh_name,
        groups(dims).into_iter().map(DimSharding::closed).collect(),
    );
    s.unreduced = unreduced;
    s
}

/// What Shardy's pass does with a case.
enum Shardy {
    /// The collectives it emits, each `kind [@mesh] params => out sharding`:
    /// `all_to_all {x} 0->2 => {} {y} {x}`,
    /// `collective_permute @mesh2d_non_iota => {x} {y}`.
    Lowers(&'static [&'static str]),
    /// Kept commented out in Shardy's file; the sequence in its comments.
    Disabled(&'static [&'static str]),
    /// Left as `sdy.reshard`, for this reason; meshrun must lower it
    /// correctly.
    Keeps(&'static str),
    /// Outside meshrun's reshards, for this reason: meshrun must reject it
    /// with an error.
    Outside(&'static str),
}
use Shardy::{Disabled, Keeps, Lowers, Outside};

struct Case {
    name: &'static str,
    from_mesh: &'static str,
    to_mesh: &'static str,
    shape: &'static [i64],
    from: &'static str,
    to: &'static str,
    shardy: Shardy,
}

/// One mesh name, or (source mesh, target mesh).
trait Meshes {
    fn names(self) -> (&'static str, &'static str);
}
impl Meshes for &'static str {
    fn names(self) -> (&'static str, &'static str) {
        (self, self)
    }
}
impl Meshes for (&'static str, &'static str) {
    fn names(self) -> (&'static str, &'static str) {
        self
    }
}

fn case(
    name: &'static str,
    meshes: impl Meshes,
    shape: &'static [i64],
    from: &'static str,
    to: &'static str,
    shardy: Shardy,
) -> Case {
    let (from_mesh, to_mesh) = meshes.names();
    Case {
        name,
        from_mesh,
        to_mesh,
        shape,
        from,
        to,
        shardy,
    }
}

fn lowered(
    name: &'static str,
    meshes: impl Meshes,
    shape: &'static [i64],
    from: &'static str,
    to: &'static str,
    steps: &'static [&'static str],
) -> Case {
    case(name, meshes, shape, from, to, Lowers(steps))
}

fn disabled(
    name: &'static str,
    meshes: impl Meshes,
    shape: &'static [i64],
    from: &'static str,
    to: &'static str,
    steps: &'static [&'static str],
) -> Case {
    case(name, meshes, shape, from, to, Disabled(steps))
}

fn kept(
    name: &'static str,
    meshes: impl Meshes,
    shape: &'static [i64],
    from: &'static str,
    to: &'static str,
    why: &'static str,
) -> Case {
    case(name, meshes, shape, from, to, Keeps(why))
}

fn outside(
    name: &'static str,
    meshes: impl Meshes,
    shape: &'static [i64],
    from: &'static str,
    to: &'static str,
    why: &'static str,
) -> Case {
    case(name, meshes, shape, from, to, Outside(why))
}

fn cases() -> Vec<Case> {
    vec![
        lowered("redundant_reshard_fully_replicated", "mesh2d", &[16, 8], "{} {}", "{} {}", &[]),
        lowered("redundant_reshard_fully_replicated_different_meshes", ("mesh2d_2x3", "mesh1d_6"), &[16, 8], "{} {}", "{} {}", &[]),
        lowered("redundant_reshard_fully_replicated_same_mesh_different_device_ids", ("mesh2d", "mesh2d_non_iota"), &[16, 8], "{} {}", "{} {}", &[]),
        lowered("redundant_reshard_fully_replicated_same_empty_meshes", "empty_mesh", &[16, 8], "{} {}", "{} {}", &[]),
        lowered("redundant_reshard_fully_replicated_different_empty_meshes", ("empty_mesh", "empty_mesh_another"), &[16, 8], "{} {}", "{} {}", &[]),
        outside("redundant_reshard_fully_replicated_input_mesh_nonempty_output_mesh_empty", ("mesh2d", "empty_mesh"), &[16, 8], "{} {}", "{} {}",
            "four devices to one (Shardy drops the reshard): meshrun's reshards keep the set of devices"),
        lowered("redundant_reshard", "mesh2d", &[16, 8], "{x} {y}", "{x} {y}", &[]),
        lowered("reshard_from_sharded_to_fully_replicated_same_meshes", "mesh1d_6", &[24, 8], "{x} {}", "{} {}", &[
            "all_gather {x} {} => {} {}",
        ]),
        lowered("reshard_from_sharded_to_fully_replicated_different_meshes", ("mesh1d_6", "mesh2d_2x3"), &[24, 8], "{x} {}", "{} {}", &[
            "all_gather {x} {} => {} {}",
        ]),
        kept("reshard_from_sharded_to_sharded_different_meshes", ("mesh1d_6", "mesh2d_2x3"), &[24, 8], "{x} {}", "{x} {}",
            "meshes with different axes"),
        lowered("all_gather_single_axis", "mesh2d", &[16, 8], "{y} {x}", "{y} {}", &[
            "all_gather {} {x} => {y} {}",
        ]),
        lowered("all_gather_multiple_axes", "mesh3d", &[16, 8], "{x y z} {}", "{x} {}", &[
            "all_gather {y z} {} => {x} {}",
        ]),
        lowered("all_gather_multiple_dims", "mesh3d", &[16, 8], "{y z} {x}", "{y} {x}", &[
            "all_gather {z} {} => {y} {x}",
        ]),
        lowered("all_gather_with_subaxis", "mesh2d_2x8", &[16, 8], "{y} {x}", "{y:(1)4} {x}", &[
            "all_gather {y:(4)2} {} => {y:(1)4} {x}",
        ]),
        lowered("all_slice_multiple_axes", "mesh3d", &[16, 8], "{} {}", "{x} {y z}", &[
            "all_slice {x} {y z} => {x} {y z}",
        ]),
        lowered("all_slice_with_subaxis", "mesh3d", &[16, 8], "{} {}", "{x} {y z}", &[
            "all_slice {x} {y z} => {x} {y z}",
        ]),
        lowered("all_slice_minor_axis", "mesh3d", &[16, 8], "{x} {y}", "{x} {y z}", &[
            "all_slice {} {z} => {x} {y z}",
        ]),
        lowered("all_slice_missing_input_sharding", "mesh3d", &[16, 8], "{} {}", "{x} {y z}", &[
            "all_slice {x} {y z} => {x} {y z}",
        ]),
        lowered("all_to_all_single_axis", "mesh3d", &[16, 8, 8], "{x} {y} {}", "{} {y} {x}", &[
            "all_to_all {x} 0->2 => {} {y} {x}",
        ]),
        lowered("all_to_all_multiple_axes", "mesh3d", &[16, 8, 8], "{x} {} {y z}", "{x} {y z} {}", &[
            "all_to_all {y z} 2->1 => {x} {y z} {}",
        ]),
        lowered("all_to_all_move_partial_axes_from_src_dim_to_non_empty_tgt_dim", "mesh3d", &[16, 8], "{x z} {y}", "{x} {y z}", &[
            "all_to_all {z} 0->1 => {x} {y z}",
        ]),
        lowered("two_all_to_alls_different_tgt_dims", "mesh3d_4x2x4", &[16, 8, 8], "{} {y x} {}", "{x} {} {y}", &[
            "all_to_all {x} 1->0 => {x} {y} {}",
            "all_to_all {y} 1->2 => {x} {} {y}",
        ]),
        lowered("two_all_to_alls_tgt_dim_not_empty", "mesh3d_4x2x4", &[16, 8, 8], "{x} {y z} {}", "{x z} {} {y}", &[
            "all_to_all {z} 1->0 => {x z} {y} {}",
            "all_to_all {y} 1->2 => {x z} {} {y}",
        ]),
        lowered("two_all_to_alls_same_tgt_dim_reverse_order", "mesh3d", &[16, 8, 8], "{y} {x} {}", "{} {} {x y}", &[
            "all_to_all {x} 1->2 => {y} {} {x}",
            "all_to_all {y} 0->2 => {} {} {x y}",
        ]),
        lowered("two_all_to_alls_same_tgt_dim_non_contiguous", "mesh3d", &[16, 8, 8], "{y} {x z} {}", "{} {} {x y z}", &[
            "collective_permute => {x} {y z} {}",
            "all_to_all {x} 0->2 => {} {y z} {x}",
            "all_to_all {y z} 1->2 => {} {} {x y z}",
        ]),
        lowered("slice_then_all_to_alls", "mesh3d_4x2x4", &[16, 8, 8], "{} {y z} {}", "{x z} {} {y}", &[
            "all_slice {x} {} {} => {x} {y z} {}",
            "all_to_all {z} 1->0 => {x z} {y} {}",
            "all_to_all {y} 1->2 => {x z} {} {y}",
        ]),
        lowered("all_to_all_subaxis_then_all_gather", "mesh3d_4x2x4", &[16, 8, 8], "{x} {z y} {}", "{x z:(2)2} {} {y}", &[
            "all_to_all {y} 1->2 => {x} {z} {y}",
            "all_to_all {z:(2)2} 1->0 => {x z:(2)2} {z:(1)2} {y}",
            "all_gather {} {z:(1)2} {} => {x z:(2)2} {} {y}",
        ]),
        lowered("all_to_all_subaxis_and_full_axis_then_all_gather", "mesh4d_z4", &[16, 8, 8], "{x} {z w y} {}", "{x z:(2)2 w} {} {y}", &[
            "all_to_all {y} 1->2 => {x} {z w} {y}",
            "all_to_all {z:(2)2 w} 1->0 => {x z:(2)2 w} {z:(1)2} {y}",
            "all_gather {} {z:(1)2} {} => {x z:(2)2 w} {} {y}",
        ]),
        lowered("slice_on_src_dim_then_all_to_all", "mesh4d_w4", &[16, 8], "{} {w:(1)2}", "{w} {}", &[
            "all_slice {} {w:(2)2} => {} {w}",
            "all_to_all {w} 1->0 => {w} {}",
        ]),
        lowered("slice_on_src_dim_then_all_to_all_multiple_axes", "mesh3d", &[16, 8, 8], "{} {x} {}", "{} {} {x y z}", &[
            "all_slice {} {y z} {} => {} {x y z} {}",
            "all_to_all {x y z} 1->2 => {} {} {x y z}",
        ]),
        lowered("slice_on_src_dim_then_two_all_to_alls", "mesh3d", &[16, 8, 8], "{z} {x} {}", "{} {} {x y z}", &[
            "all_slice {} {y} {} => {z} {x y} {}",
            "all_to_all {x y} 1->2 => {z} {} {x y}",
            "all_to_all {z} 0->2 => {} {} {x y z}",
        ]),
        lowered("slice_on_src_dim_then_two_all_to_alls_2", "mesh3d", &[16, 8, 8], "{y} {x} {}", "{} {} {x y z}", &[
            "all_slice {z} {} {} => {y z} {x} {}",
            "all_to_all {x} 1->2 => {y z} {} {x}",
            "all_to_all {y z} 0->2 => {} {} {x y z}",
        ]),
        lowered("slice_on_src_dim_then_two_all_to_alls_diff_tgts", "mesh3d", &[16, 8, 8], "{} {x y} {}", "{x} {} {y z}", &[
            "all_slice {} {z} {} => {} {x y z} {}",
            "all_to_all {y z} 1->2 => {} {x} {y z}",
            "all_to_all {x} 1->0 => {x} {} {y z}",
        ]),
        lowered("slice_on_src_dim_then_all_to_all_and_all_gather", "mesh4d_w4", &[16, 8], "{y z w:(1)2} {}", "{y} {x w}", &[
            "all_slice {w:(2)2} {x} => {y z w} {x}",
            "all_to_all {w} 0->1 => {y z} {x w}",
            "all_gather {z} {} => {y} {x w}",
        ]),
        lowered("slice_on_multiple_src_dims", "mesh4d", &[16, 8, 8], "{z} {x} {}", "{} {} {x y z w}", &[
            "all_slice {w} {y} {} => {z w} {x y} {}",
            "all_to_all {x y} 1->2 => {z w} {} {x y}",
            "all_to_all {z w} 0->2 => {} {} {x y z w}",
        ]),
        lowered("slice_on_one_src_dim_but_not_other", "mesh4d", &[2, 8, 8], "{z} {x} {}", "{} {} {x y z w}", &[
            "all_slice {} {y} {w} => {z} {x y} {w}",
            "collective_permute => {y} {z w} {x}",
            "all_to_all {y} 0->2 => {} {z w} {x y}",
            "all_to_all {z w} 1->2 => {} {} {x y z w}",
        ]),
        lowered("slice_on_src_dim_considering_existing_axes_on_src_dim", "mesh3d", &[8, 4], "{x y} {}", "{x} {y z}", &[
            "all_slice {z} {} => {x y z} {}",
            "all_to_all {y z} 0->1 => {x} {y z}",
        ]),
        lowered("slice_on_src_dim_and_replace_axis_in_another_dim", "mesh4d", &[16, 8, 8], "{z} {x} {}", "{w} {} {x y}", &[
            "all_slice {} {y} {} => {z} {x y} {}",
            "collective_permute => {w} {x y} {}",
            "all_to_all {x y} 1->2 => {w} {} {x y}",
        ]),
        lowered("cannot_slice_on_src_dim_output_sharded", "mesh3d", &[16, 8], "{} {x}", "{x y} {z}", &[
            "all_slice {y z} {} => {y z} {x}",
            "collective_permute => {x y} {z}",
        ]),
        lowered("cannot_slice_on_src_dim_tgt_dim_sharded", "mesh3d", &[16, 8, 8], "{} {x} {z}", "{} {} {x y z}", &[
            "all_slice {} {} {y} => {} {x} {z y}",
            "collective_permute => {} {z} {x y}",
            "all_to_all {z} 1->2 => {} {} {x y z}",
        ]),
        lowered("cannot_slice_on_src_dim_axes_out_of_order", "mesh3d", &[4, 10], "{} {x z}", "{x y z} {}", &[
            "all_slice {y} {} => {y} {x z}",
            "collective_permute => {x} {y z}",
            "all_to_all {y z} 1->0 => {x y z} {}",
        ]),
        lowered("cannot_slice_on_src_dim_axes_non_contiguous", "mesh4d", &[4, 10], "{} {z w y}", "{x y z} {}", &[
            "all_slice {x} {} => {x} {z w y}",
            "collective_permute => {x} {w y z}",
            "all_to_all {y z} 1->0 => {x y z} {w}",
            "all_gather {} {w} => {x y z} {}",
        ]),
        lowered("cannot_slice_on_src_dim_size_too_small", "mesh3d", &[16, 4], "{} {x}", "{x y z} {}", &[
            "all_slice {y z} {} => {y z} {x}",
            "collective_permute => {x y} {z}",
            "all_to_all {z} 1->0 => {x y z} {}",
        ]),
        lowered("cannot_slice_on_src_dim_size_too_small_2", "mesh3d", &[16, 4, 8], "{} {x y} {}", "{x} {} {y z}", &[
            "all_slice {} {} {z} => {} {x y} {z}",
            "collective_permute => {} {x z} {y}",
            "all_to_all {z} 1->2 => {} {x} {y z}",
            "all_to_all {x} 1->0 => {x} {} {y z}",
        ]),
        lowered("cannot_slice_on_src_dim_considering_existing_axes_on_src_dim", "mesh3d", &[4, 4], "{x y} {}", "{x} {y z}", &[
            "all_slice {} {z} => {x y} {z}",
            "collective_permute => {x z} {y}",
            "all_to_all {z} 0->1 => {x} {y z}",
        ]),
        lowered("cannot_slice_on_src_dim_size_non_divisible", "mesh2d", &[4, 10], "{} {x}", "{x y} {}", &[
            "all_slice {y} {} => {y} {x}",
            "collective_permute => {x} {y}",
            "all_to_all {y} 1->0 => {x y} {}",
        ]),
        lowered("replace_same_size_axes_same_dim", "mesh3d", &[16, 8], "{z} {y}", "{z} {x}", &[
            "collective_permute => {z} {x}",
        ]),
        lowered("replace_smaller_axis_with_bigger_same_dim", "mesh3d_4x2x4", &[16, 8], "{z} {y}", "{z} {x}", &[
            "all_slice {} {x:(1)2} => {z} {y x:(1)2}",
            "collective_permute => {z} {x}",
        ]),
        lowered("replace_bigger_axis_with_smaller_same_dim", "mesh3d_4x2x4", &[16, 8], "{z} {x}", "{z} {y}", &[
            "collective_permute => {z} {y x:(2)2}",
            "all_gather {} {x:(2)2} => {z} {y}",
        ]),
        lowered("replace_major_most_axis_in_dim", "mesh4d", &[16, 8], "{x y z} {}", "{w y z} {}", &[
            "collective_permute => {w y z} {}",
        ]),
        lowered("replace_major_most_axis_then_all_gather", "mesh3d", &[16, 8], "{x y} {}", "{z} {}", &[
            "collective_permute => {z y} {}",
            "all_gather {y} {} => {z} {}",
        ]),
        lowered("replace_major_most_axis_then_all_gather_sub_axis", "mesh3d_4x2x4", &[16, 8], "{x z} {}", "{y} {}", &[
            "collective_permute => {y x:(2)2 z} {}",
            "all_gather {x:(2)2 z} {} => {y} {}",
        ]),
        lowered("replace_major_most_axis_then_all_gather_two_dims", "mesh3d", &[16, 8], "{x y} {z}", "{z} {}", &[
            "collective_permute => {z y} {x}",
            "all_gather {y} {x} => {z} {}",
        ]),
        lowered("replace_same_size_axes_diff_dims", "mesh2d", &[16, 8], "{x} {}", "{} {y}", &[
            "all_slice {} {y} => {x} {y}",
            "all_gather {x} {} => {} {y}",
        ]),
        lowered("replace_bigger_axis_with_smaller_diff_dims", "mesh2d_4x2", &[16, 8], "{x} {}", "{} {y}", &[
            "all_slice {} {y} => {x} {y}",
            "all_gather {x} {} => {} {y}",
        ]),
        lowered("replace_multiple_axes_diff_dims", "mesh6d", &[8, 8, 8, 8], "{x} {y z} {} {}", "{} {} {w u} {v}", &[
            "all_slice {} {} {w u} {v} => {x} {y z} {w u} {v}",
            "all_gather {x} {y z} {} {} => {} {} {w u} {v}",
        ]),
        lowered("replace_smaller_axis_with_bigger_diff_dims", "mesh2d_4x2", &[16, 8], "{y} {}", "{} {x}", &[
            "all_slice {} {x} => {y} {x}",
            "all_gather {y} {} => {} {x}",
        ]),
        lowered("slice_tgt_dim_then_all_to_all_then_all_gather", "mesh4d_w4", &[16, 8], "{y z w} {}", "{y} {x w}", &[
            "all_slice {} {x} => {y z w} {x}",
            "all_to_all {w} 0->1 => {y z} {x w}",
            "all_gather {z} {} => {y} {x w}",
        ]),
        lowered("swap_same_size_axes_between_dims", "mesh2d", &[16, 8], "{x} {y}", "{y} {x}", &[
            "collective_permute => {y} {x}",
        ]),
        lowered("swap_diff_size_axes_between_dims", "mesh2d_4x2", &[16, 8], "{x} {y}", "{y} {x}", &[
            "collective_permute => {y x:(2)2} {x:(1)2}",
            "all_to_all {x:(2)2} 0->1 => {y} {x}",
        ]),
        lowered("slice_and_swap_axes_between_dims", "mesh3d", &[16, 8], "{x} {y}", "{x y} {z}", &[
            "all_slice {z} {} => {x z} {y}",
            "collective_permute => {x y} {z}",
        ]),
        lowered("swap_axes_between_dims_then_all_to_all", "mesh2d", &[8, 8, 8], "{x} {y} {}", "{} {x} {y}", &[
            "collective_permute => {y} {x} {}",
            "all_to_all {y} 0->2 => {} {x} {y}",
        ]),
        lowered("slice_sub_axes_then_swap_between_dims", "mesh3d_4x2x4", &[16, 8], "{z} {y}", "{y z} {x}", &[
            "all_slice {x:(2)2} {x:(1)2} => {z x:(2)2} {y x:(1)2}",
            "collective_permute => {y z} {x}",
        ]),
        lowered("swap_sub_axes_then_all_to_all_and_all_gather", "mesh3d_4x2x4", &[16, 8], "{z y} {x}", "{x z} {}", &[
            "collective_permute => {x z:(1)2} {y z:(2)2}",
            "all_to_all {z:(2)2} 1->0 => {x z} {y}",
            "all_gather {} {y} => {x z} {}",
        ]),
        lowered("reorder_axes_single_dim", "mesh3d_4x2x4", &[16, 8], "{x y} {z}", "{y x} {z}", &[
            "collective_permute => {y x} {z}",
        ]),
        lowered("reorder_axes_across_dims", "mesh3d_4x2x4", &[16, 8], "{x y} {z}", "{y z} {x}", &[
            "collective_permute => {y z} {x}",
        ]),
        lowered("slice_then_reorder_axes", "mesh2d", &[16, 8, 8], "{y} {} {}", "{x y} {} {}", &[
            "all_slice {x} {} {} => {y x} {} {}",
            "collective_permute => {x y} {} {}",
        ]),
        lowered("reorder_axes_for_all_gather", "mesh3d", &[16, 8], "{y x z} {}", "{z} {}", &[
            "collective_permute => {z x y} {}",
            "all_gather {x y} {} => {z} {}",
        ]),
        lowered("reorder_axes_for_all_to_all_then_all_gather_single_axis", "mesh3d", &[16, 8], "{y x z} {}", "{z} {y}", &[
            "collective_permute => {z x y} {}",
            "all_to_all {y} 0->1 => {z x} {y}",
            "all_gather {x} {} => {z} {y}",
        ]),
        lowered("reorder_axes_for_all_to_all_then_all_gather_remaining_axes", "mesh3d", &[16, 8], "{z y x} {}", "{} {y}", &[
            "collective_permute => {z x y} {}",
            "all_to_all {y} 0->1 => {z x} {y}",
            "all_gather {z x} {} => {} {y}",
        ]),
        lowered("all_to_all_axes_at_src_out_of_order", "mesh2d", &[16, 8, 8], "{} {y x} {}", "{x y} {} {}", &[
            "collective_permute => {} {x y} {}",
            "all_to_all {x y} 1->0 => {x y} {} {}",
        ]),
        lowered("all_to_all_axes_at_src_and_tgt_out_of_order", "mesh3d_4x2x4", &[16, 8, 8], "{z} {y x} {}", "{x y z} {} {}", &[
            "collective_permute => {x} {y z} {}",
            "all_to_all {y z} 1->0 => {x y z} {} {}",
        ]),
        lowered("all_to_all_two_tgt_dims_src_out_of_order", "mesh3d_4x2x4", &[16, 8, 8], "{} {x z y} {}", "{x y} {} {z}", &[
            "collective_permute => {} {x y z} {}",
            "all_to_all {z} 1->2 => {} {x y} {z}",
            "all_to_all {x y} 1->0 => {x y} {} {z}",
        ]),
        lowered("all_to_all_two_tgt_dims_src_out_of_order_2", "mesh3d_4x2x4", &[16, 8, 8], "{} {y z x} {}", "{x y} {} {z}", &[
            "collective_permute => {} {x y z} {}",
            "all_to_all {z} 1->2 => {} {x y} {z}",
            "all_to_all {x y} 1->0 => {x y} {} {z}",
        ]),
        lowered("all_to_all_and_gather_src_dim_out_of_order", "mesh4d_z4", &[16, 8, 8], "{x} {y z w} {}", "{x z:(2)2 w} {} {y}", &[
            "collective_permute => {x} {z w y} {}",
            "all_to_all {y} 1->2 => {x} {z w} {y}",
            "all_to_all {z:(2)2 w} 1->0 => {x z:(2)2 w} {z:(1)2} {y}",
            "all_gather {} {z:(1)2} {} => {x z:(2)2 w} {} {y}",
        ]),
        lowered("reorder_sub_axes", "mesh4d_w4", &[16, 8], "{y w:(1)2 z w:(2)2} {}", "{y} {x w}", &[
            "all_slice {} {x} => {y w:(1)2 z w:(2)2} {x}",
            "collective_permute => {y z w} {x}",
            "all_to_all {w} 0->1 => {y z} {x w}",
            "all_gather {z} {} => {y} {x w}",
        ]),
        lowered("replace_sub_axes", "mesh4d_w4", &[16, 8], "{y z w:(2)2} {}", "{y} {x w}", &[
            "all_slice {} {x w:(1)2} => {y z w:(2)2} {x w:(1)2}",
            "all_to_all {w:(2)2} 0->1 => {y z} {x w}",
            "all_gather {z} {} => {y} {x w}",
        ]),
        lowered("replace_sub_axes_2", "mesh4d_w16", &[16, 8], "{y w:(4)2 z w:(1)2} {}", "{y} {x w:(2)8}", &[
            "all_slice {} {x w:(2)2 w:(8)2} => {y w:(4)2 z w:(1)2} {x w:(2)2 w:(8)2}",
            "collective_permute => {y z w:(1)2 w:(8)2} {x w:(2)4}",
            "all_to_all {w:(8)2} 0->1 => {y z w:(1)2} {x w:(2)8}",
            "all_gather {z w:(1)2} {} => {y} {x w:(2)8}",
        ]),
        lowered("replace_sub_axes_3", "mesh4d_w16", &[16, 8], "{y w:(4)2 z w:(1)2} {}", "{y} {x w}", &[
            "all_slice {} {x w:(2)2 w:(8)2} => {y w:(4)2 z w:(1)2} {x w:(2)2 w:(8)2}",
            "collective_permute => {y z w:(4)4} {x w:(1)4}",
            "all_to_all {w:(4)4} 0->1 => {y z} {x w}",
            "all_gather {z} {} => {y} {x w}",
        ]),
        lowered("reorder_device_ids", ("mesh2d", "mesh2d_non_iota"), &[16, 8], "{x} {y}", "{x} {y}", &[
            "collective_permute @mesh2d_non_iota => {x} {y}",
        ]),
        lowered("reorder_axes_and_device_ids", ("mesh2d", "mesh2d_non_iota"), &[16, 8], "{x y} {}", "{y x} {}", &[
            "collective_permute @mesh2d_non_iota => {y x} {}",
        ]),
        lowered("reorder_device_ids_then_all_gather", ("mesh2d", "mesh2d_non_iota"), &[16, 8], "{x} {y}", "{x} {}", &[
            "collective_permute @mesh2d_non_iota => {x} {y}",
            "all_gather {} {y} => {x} {}",
        ]),
        lowered("slice_then_reorder_axes_and_device_ids", ("mesh2d", "mesh2d_non_iota"), &[16, 8], "{x} {}", "{y x} {}", &[
            "all_slice {y} {} => {x y} {}",
            "collective_permute @mesh2d_non_iota => {y x} {}",
        ]),
        lowered("slice_then_reorder_device_ids_then_all_to_all", ("mesh2d_non_iota", "mesh2d_non_iota_2"), &[16, 8], "{x} {}", "{} {x y}", &[
            "all_slice {y} {} => {x y} {}",
            "collective_permute @mesh2d_non_iota_2 => {x y} {}",
            "all_to_all {x y} 0->1 => {} {x y}",
        ]),
        lowered("reorder_device_ids_then_two_all_to_alls", ("mesh2d", "mesh2d_non_iota"), &[16, 8, 8], "{} {y x} {}", "{x} {} {y}", &[
            "collective_permute @mesh2d_non_iota => {} {y x} {}",
            "all_to_all {x} 1->0 => {x} {y} {}",
            "all_to_all {y} 1->2 => {x} {} {y}",
        ]),
        lowered("reshard_on_while_block_arg", "mesh2d", &[32, 96], "{x} {}", "{} {x}", &[
            "all_to_all {x} 0->1 => {} {x}",
        ]),
        lowered("replace_smaller_axis_with_bigger_same_dim_non_divisible", "mesh2d_2x3", &[12, 12], "{x} {}", "{y} {}", &[
            "all_slice {y} {} => {x y} {}",
            "collective_permute => {y x} {}",
            "all_gather {x} {} => {y} {}",
        ]),
        lowered("replace_bigger_axis_with_smaller_same_dim_non_divisible", "mesh2d_2x3", &[12, 12], "{y} {}", "{x} {}", &[
            "all_slice {x} {} => {y x} {}",
            "collective_permute => {x y} {}",
            "all_gather {y} {} => {x} {}",
        ]),
        lowered("replace_smaller_axis_with_bigger_gcd_greater_than_one", "mesh2d_4x6", &[12, 12], "{x} {}", "{y} {}", &[
            "all_slice {y:(1)3} {} => {x y:(1)3} {}",
            "collective_permute => {y x:(1)2} {}",
            "all_gather {x:(1)2} {} => {y} {}",
        ]),
        lowered("replace_bigger_axis_with_smaller_gcd_greater_than_one", "mesh2d_4x6", &[12, 12], "{y} {}", "{x} {}", &[
            "all_slice {x:(1)2} {} => {y x:(1)2} {}",
            "collective_permute => {x y:(1)3} {}",
            "all_gather {y:(1)3} {} => {x} {}",
        ]),
        lowered("swap_non_divisible_axes_diff_dim", "mesh2d_2x3", &[12, 12], "{x} {y}", "{y} {x}", &[
            "all_to_all {x} 0->1 => {} {y x}",
            "collective_permute => {} {x y}",
            "all_to_all {y} 1->0 => {y} {x}",
        ]),
        lowered("replace_axes_and_all_gather_gcd_greater_than_one", "mesh2d_4x6", &[12, 12], "{x} {y:(1)2}", "{y} {}", &[
            "all_slice {y:(2)3} {} => {x y:(2)3} {y:(1)2}",
            "collective_permute => {y x:(1)2} {x:(2)2}",
            "all_gather {x:(1)2} {x:(2)2} => {y} {}",
        ]),
        lowered("replace_axes_and_all_gather_gcd_greater_than_one_2", "mesh3d_4x6x2", &[12, 12], "{x} {z}", "{y} {}", &[
            "all_slice {y:(1)3} {} => {x y:(1)3} {z}",
            "collective_permute => {y x:(1)2} {z}",
            "all_gather {x:(1)2} {z} => {y} {}",
        ]),
        lowered("replace_axes_and_all_gather_gcd_greater_than_one_3", "mesh3d_4x6x5", &[12, 10], "{x} {z}", "{y} {}", &[
            "all_slice {y:(1)3} {} => {x y:(1)3} {z}",
            "collective_permute => {y x:(1)2} {z}",
            "all_gather {x:(1)2} {z} => {y} {}",
        ]),
        lowered("out_unreduced_axes_preserved", "mesh3d", &[16, 8], "{y z} {} unreduced={x}", "{} {y} unreduced={x}", &[
            "collective_permute => {z y} {}",
            "all_to_all {y} 0->1 => {z} {y}",
            "all_gather {z} {} => {} {y}",
        ]),
        disabled("reshard_with_non_divisible_subaxes_same_pre_size", "mesh1d_6", &[6, 2], "{x:(1)2} {}", "{x:(1)3} {}", &[
            "all_gather {x:(1)2} {} => {} {}",
            "all_slice {x:(1)3} {} => {x:(1)3} {}",
        ]),
        disabled("reshard_with_non_divisible_overlapping_subaxes", "mesh1d_6", &[6, 2], "{x:(2)3} {}", "{x:(1)3} {}", &[
            "all_gather {x:(2)3} {} => {} {}",
            "all_slice {x:(1)3} {} => {x:(1)3} {}",
        ]),
        disabled("reshard_with_non_divisible_overlapping_diff_dim", "mesh1d_6", &[6, 2], "{x:(2)3} {}", "{} {x:(1)3}", &[
            "all_gather {x:(2)3} {} => {} {}",
            "all_slice {} {x:(1)3} => {} {x:(1)3}",
        ]),
        lowered("reshard_with_propagation_barrier", "mesh3d", &[8, 8, 8], "{x} {y} {z}", "{} {} {}", &[
            "all_gather {x} {y} {z} => {} {} {}",
        ]),
        outside("single_device_in_sharding", ("single_dev_0", "mesh2d"), &[16, 8], "", "{} {}",
            "one device to four (Shardy keeps the sdy.reshard): meshrun's reshards keep the set of devices"),
        outside("single_device_out_sharding", ("mesh2d", "single_dev_0"), &[16, 8], "{} {}", "",
            "four devices to one (Shardy keeps the sdy.reshard): meshrun's reshards keep the set of devices"),
    ]
}

fn layout(mesh: &Mesh, s: &TensorSharding, shape: &[i64]) -> TensorLayout {
    TensorLayout::new(mesh, s, shape).unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// `[source, target]` pairs moving the blocks of `inp` (on `in_mesh`) to
/// those of `out` (on `out_mesh`): a device that holds its new block keeps
/// it, the others take it from a holder that is not already sending.
fn permute_pairs(
    in_mesh: &Mesh,
    inp: &TensorSharding,
    out_mesh: &Mesh,
    out: &TensorSharding,
    shape: &[i64],
) -> Vec<Vec<i64>> {
    let (a, b) = (layout(in_mesh, inp, shape), layout(out_mesh, out, shape));
    let mut devices = in_mesh.device_list();
    devices.sort_unstable();
    let block_in = |d: i64| a.shard_index(d).expect("device in source mesh");
    let block_out = |d: i64| b.shard_index(d).expect("device in target mesh");
    let mut sending: Vec<i64> = devices
        .iter()
        .copied()
        .filter(|&d| block_in(d) == block_out(d))
        .collect();
    let mut pairs: Vec<Vec<i64>> = sending.iter().map(|&d| vec![d, d]).collect();
    for &t in &devices {
        if block_in(t) == block_out(t) {
            continue;
        }
        let s = devices
            .iter()
            .copied()
            .find(|&s| !sending.contains(&s) && block_in(s) == block_out(t))
            .expect("every block has as many holders before as after");
        sending.push(s);
        pairs.push(vec![s, t]);
    }
    pairs.sort_unstable();
    pairs
}

/// The local shape of `shape` under `s` when every sharded dimension `d`
/// is laid out over `extent[d]` elements (its tail past `shape[d]` is
/// padding): `ceil(extent/n)` per block; an unsharded dimension holds its
/// real size.
fn local_shape(mesh: &Mesh, s: &TensorSharding, shape: &[i64], extent: &[i64]) -> Vec<i64> {
    layout(mesh, s, shape);
    (0..shape.len())
        .map(|d| {
            let n = s.dims.get(d).map_or(1, |dim| dim.num_shards(mesh));
            if n == 1 {
                shape[d]
            } else {
                (extent[d] + n - 1) / n
            }
        })
        .collect()
}

/// Shardy's sequence as meshrun collectives on a tensor of `shape` whose
/// sharded dimensions are laid out over `extent`.
fn shardy_collectives(c: &Case, steps: &[&str], shape: &[i64], extent: &[i64]) -> Vec<Collective> {
    let rank = shape.len();
    let mut mesh_name = c.from_mesh;
    let mut cur = parse_sharding(mesh_name, c.from);
    let unreduced = cur.unreduced.clone();
    let mut out = Vec::new();
    for step in steps {
        let (lhs, rhs) = step.split_once("=>").expect("`=>` in a step");
        let mut words = lhs.split_whitespace();
        let kind = words.next().expect("a collective kind");
        let rest: Vec<&str> = words.collect();
        let in_mesh = shardy_mesh(mesh_name);
        let in_sharding = cur.clone();
        if let Some(m) = rest.first().and_then(|w| w.strip_prefix('@')) {
            mesh_name = m;
        }
        let params = rest
            .iter()
            .filter(|w| !w.starts_with('@'))
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
        let out_mesh = shardy_mesh(mesh_name);
        let mut out_sharding = parse_sharding(mesh_name, rhs);
        out_sharding.unreduced = unreduced.clone();
        let mut col = Collective {
            kind: CollectiveKind::CollectivePermute,
            axes: Vec::new(),
            dim_axes: vec![Vec::new(); rank],
            dim_factors: vec![1; rank],
            all_to_all: None,
            reduction: None,
            groups: Vec::new(),
            in_sharding: in_sharding.clone(),
            out_sharding: out_sharding.clone(),
            global_shape: shape.to_vec(),
            in_local_shape: local_shape(&in_mesh, &in_sharding, shape, extent),
            out_local_shape: local_shape(&out_mesh, &out_sharding, shape, extent),
            elem: ELEM,
        };
        let size = |a: &AxisRef| a.size(&in_mesh).expect("axis of the mesh");
        match kind {
            "all_slice" | "all_gather" => {
                col.kind = if kind == "all_slice" {
                    CollectiveKind::AllSlice
                } else {
                    CollectiveKind::AllGather
                };
                col.dim_axes = groups(&params);
                col.dim_factors = col
                    .dim_axes
                    .iter()
                    .map(|d| d.iter().map(size).product())
                    .collect();
                col.axes = col.dim_axes.concat();
                col.groups = device_groups(&in_mesh, &col.axes).expect("groups");
            }
            "all_to_all" => {
                let (axes, dims) = params.split_once('}').expect("{axes} src->tgt");
                let (s, t) = dims.trim().split_once("->").expect("src->tgt");
                col.kind = CollectiveKind::AllToAll;
                col.axes = groups(&format!("{axes}}}")).concat();
                col.all_to_all = Some(AllToAllDims {
                    src_dim: s.parse().expect("src dim"),
                    tgt_dim: t.parse().expect("tgt dim"),
                });
                col.groups = device_groups(&in_mesh, &col.axes).expect("groups");
            }
            "collective_permute" => {
                col.groups = permute_pairs(&in_mesh, &in_sharding, &out_mesh, &out_sharding, shape);
            }
            other => panic!("unknown collective {other}"),
        }
        out.push(col);
        cur = out_sharding;
    }
    out
}

fn bytes(cs: &[Collective]) -> f64 {
    cs.iter().map(Collective::bytes_per_device).sum()
}

fn communicating(cs: &[Collective]) -> usize {
    cs.iter().filter(|c| c.communicates()).count()
}

/// Whether no collective but the last leaves fewer shards than before it.
fn never_less_sharded_before_last(cs: &[Collective], c: &Case) -> bool {
    let shards = |s: &TensorSharding| -> i64 {
        let on_target = s.mesh == parse_sharding(c.to_mesh, "").mesh;
        let mesh = shardy_mesh(if on_target { c.to_mesh } else { c.from_mesh });
        s.dims.iter().map(|d| d.num_shards(&mesh)).product()
    };
    cs.iter()
        .take(cs.len().saturating_sub(1))
        .all(|c| shards(&c.out_sharding) >= shards(&c.in_sharding))
}

/// Cases whose Shardy sequence reaches the target on whole blocks at no
/// extent, with the bytes per device meshrun's plan must stay within and
/// why. Shardy's nominal count assumes padded blocks that line up.
const NO_WHOLE_BLOCK_RUN: &[(&str, f64, &str)] = &[(
    "all_to_all_axes_at_src_and_tgt_out_of_order",
    344.0,
    "dimension 0 (16 rows) is 4 blocks of 4 at the source and 32 blocks of 1 at the \
     target: padded extents 16 and 32, which no extent keeps both of, so Shardy's \
     all-to-all from 4 to 32 shards cannot move whole blocks (its count: 320 B). \
     An exhaustive search over plans of whole-block collectives found none below \
     344 B (an all-to-all into 16 shards, a collective-permute, and an all-to-all \
     adding x's major half, which only selects padding)",
)];

/// What one case measured.
struct Outcome {
    /// What Shardy's sequence costs, where it lowers the case.
    shardy: Option<ShardyCost>,
    ours_bytes: f64,
    ours_count: usize,
    ours: Vec<String>,
    /// Why there is nothing to compare with, if so.
    note: &'static str,
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// What Shardy's sequence costs.
struct ShardyCost {
    /// Bytes per device of its collectives on the case's own padded
    /// blocks (`ceil(d/n)` per dimension).
    nominal: f64,
    /// Bytes per device of the sequence run on whole blocks: on the
    /// cheapest extents that keep the source's and the target's blocks and
    /// on which it reaches the target (see [`shardy_cost`]); `None` if
    /// there are none.
    whole_blocks: Option<f64>,
    /// Collectives that communicate.
    count: usize,
    /// Whether no collective but the last leaves fewer shards than before.
    monotone: bool,
}

/// Per dimension of `c`, the extents a sharded dimension may be laid out
/// over without changing the source's or the target's blocks: up to the
/// padded size of either (`n * ceil(d/n)`), among the padded sizes
/// `m * ceil(d/m)` for `m` dividing the number of devices (`m = 1` is the
/// size itself).
fn extents(c: &Case) -> Vec<Vec<i64>> {
    let (from_mesh, to_mesh) = (shardy_mesh(c.from_mesh), shardy_mesh(c.to_mesh));
    let from = parse_sharding(c.from_mesh, c.from);
    let to = parse_sharding(c.to_mesh, c.to);
    let devices = from_mesh.num_devices();
    let mut out: Vec<Vec<i64>> = vec![Vec::new()];
    for (d, &size) in c.shape.iter().enumerate() {
        let padded = |n: i64| n * ((size + n - 1) / n);
        let limit = [
            from.dims.get(d).map_or(1, |x| x.num_shards(&from_mesh)),
            to.dims.get(d).map_or(1, |x| x.num_shards(&to_mesh)),
        ]
        .into_iter()
        .filter(|&n| n > 1)
        .map(padded)
        .min()
        .unwrap_or(i64::MAX);
        let mut options: Vec<i64> = (1..=devices)
            .filter(|m| devices % m == 0)
            .map(padded)
            .filter(|&v| v <= limit)
            .collect();
        options.dedup();
        out = out
            .iter()
            .flat_map(|prefix| {
                options.iter().map(move |&v| {
                    let mut e = prefix.clone();
                    e.push(v);
                    e
                })
            })
            .collect();
    }
    out
}

/// Checks Shardy's sequence and measures it. The sequence is first
/// simulated on the shape scaled until no step pads, which checks the
/// transcription. On a dimension that does not divide, Shardy's
/// collectives assume that padded blocks line up, which they often do not
/// (XLA pads such a dimension further before the collective); so the
/// sequence is also run on the case's own shape laid out over the
/// cheapest extents on which it reaches the target (`whole_blocks`).
fn shardy_cost(c: &Case, steps: &[&str]) -> Result<ShardyCost, String> {
    let (from_mesh, to_mesh) = (shardy_mesh(c.from_mesh), shardy_mesh(c.to_mesh));
    let from = parse_sharding(c.from_mesh, c.from);
    let to = parse_sharding(c.to_mesh, c.to);
    let nominal = shardy_collectives(c, steps, c.shape, c.shape);
    let mut divisible = c.shape.to_vec();
    for t in &nominal {
        for s in [&t.in_sharding, &t.out_sharding] {
            let mesh = if s.mesh == to.mesh {
                &to_mesh
            } else {
                &from_mesh
            };
            for (d, dim) in s.dims.iter().enumerate() {
                let n = dim.num_shards(mesh);
                divisible[d] *= n / gcd(divisible[d], n);
            }
        }
    }
    let scaled = shardy_collectives(c, steps, &divisible, &divisible);
    check_reshard(&from_mesh, &to_mesh, &divisible, &from, &to, &scaled)
        .map_err(|e| format!("Shardy's sequence does not simulate: {e}"))?;
    let whole_blocks = extents(c)
        .iter()
        .map(|e| shardy_collectives(c, steps, c.shape, e))
        .filter(|cs| check_reshard(&from_mesh, &to_mesh, c.shape, &from, &to, cs).is_ok())
        .map(|cs| bytes(&cs))
        .min_by(f64::total_cmp);
    Ok(ShardyCost {
        nominal: bytes(&nominal),
        whole_blocks,
        count: communicating(&nominal),
        monotone: never_less_sharded_before_last(&nominal, c),
    })
}

fn run_case(c: &Case) -> Result<Outcome, String> {
    let (from_mesh, to_mesh) = (shardy_mesh(c.from_mesh), shardy_mesh(c.to_mesh));
    let from = parse_sharding(c.from_mesh, c.from);
    let to = parse_sharding(c.to_mesh, c.to);
    let shardy = match c.shardy {
        Lowers(steps) | Disabled(steps) => Some(shardy_cost(c, steps)?),
        Keeps(_) => None,
        Outside(why) => {
            return match plan_reshard(&from_mesh, &to_mesh, c.shape, ELEM, &from, &to) {
                Err(_) => Ok(Outcome {
                    shardy: None,
                    ours_bytes: 0.0,
                    ours_count: 0,
                    ours: vec!["rejected".to_string()],
                    note: why,
                }),
                Ok(p) => Err(format!("expected an error, got {:?}", p.collectives)),
            };
        }
    };
    let plan = std::panic::catch_unwind(|| {
        lower_and_check(&from_mesh, &to_mesh, c.shape, &from, &to, false)
    })
    .map_err(|e| {
        let msg = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(ToString::to_string))
            .unwrap_or_default();
        format!("meshrun's lowering fails its checks: {msg}")
    })?;
    let ours = &plan.collectives;
    let outcome = Outcome {
        shardy,
        ours_bytes: bytes(ours),
        ours_count: communicating(ours),
        ours: ours.iter().map(head).collect(),
        note: match c.shardy {
            Keeps(why) => why,
            _ => "",
        },
    };
    if let Some(theirs) = &outcome.shardy {
        let count = theirs.count;
        let recorded = NO_WHOLE_BLOCK_RUN
            .iter()
            .find(|(name, _, _)| *name == c.name)
            .map(|&(_, bytes, _)| bytes);
        if theirs.whole_blocks.is_some() && recorded.is_some() {
            return Err(
                "listed in NO_WHOLE_BLOCK_RUN, but Shardy's sequence runs on whole blocks".into(),
            );
        }
        let limit = match (theirs.whole_blocks, recorded) {
            (Some(b), _) => b,
            (None, Some(b)) => b,
            (None, None) => theirs.nominal,
        };
        if theirs.monotone && plan.strategy != ReshardStrategy::Monotone {
            return Err(format!(
                "the local tensor grows before the last collective ({} B in {}); Shardy's does not ({limit} B in {count}): {:#?}",
                outcome.ours_bytes, outcome.ours_count, outcome.ours
            ));
        }
        if outcome.ours_bytes > limit + 1e-9 {
            return Err(format!(
                "{} bytes per device, Shardy {limit}: {:#?}",
                outcome.ours_bytes, outcome.ours
            ));
        }
        let against_shardy = theirs.whole_blocks.is_some() || recorded.is_none();
        if against_shardy && outcome.ours_bytes > limit - 1e-9 && outcome.ours_count > count {
            return Err(format!(
                "as many bytes as Shardy in {} collectives, Shardy takes {count}: {:#?}",
                outcome.ours_count, outcome.ours
            ));
        }
    }
    Ok(outcome)
}

#[test]
fn every_case_of_shardys_file_is_ported() {
    let cases = cases();
    // 98 functions in Shardy's file plus its 3 commented-out ones.
    assert_eq!(cases.len(), 101);
    let mut names: Vec<&str> = cases.iter().map(|c| c.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), cases.len(), "case names are unique");
}

/// Runs every case, reports every failure by name, and prints the bytes
/// per device of both sequences (`--nocapture`).
#[test]
fn meshrun_moves_no_more_than_shardy() {
    let mut failed = Vec::new();
    for c in cases() {
        match run_case(&c) {
            Ok(o) => eprintln!(
                "{:<66} meshrun {:>6} B in {} | Shardy {} | {}{}",
                c.name,
                o.ours_bytes,
                o.ours_count,
                o.shardy.as_ref().map_or("-".to_string(), |t| format!(
                    "{:>6} B in {}, on whole blocks {}",
                    t.nominal,
                    t.count,
                    t.whole_blocks.map_or("-".to_string(), |b| b.to_string())
                )),
                o.ours.join("; "),
                o.note
            ),
            Err(e) => failed.push(format!("{}: {e}", c.name)),
        }
    }
    assert!(
        failed.is_empty(),
        "{} failing cases:\n{}",
        failed.len(),
        failed.join("\n")
    );
}
