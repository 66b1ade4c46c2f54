//! Table-driven reshard lowerings: each case asserts the exact collectives
//! (Shardy notation, as a prefix of the printed op) where the SPEC or
//! Shardy's own tests give them, and every case is run through the
//! simulator (see `reshard_common::lower_and_check`).

mod reshard_common;

use meshrun_compiler::partition::ReshardStrategy;
use meshrun_compiler::sharding::Mesh;
use reshard_common::{lower_and_check, mesh, sharding};

struct Case {
    name: &'static str,
    mesh: Mesh,
    /// The target's mesh, if not `mesh` (named `@to` in the shardings).
    to_mesh: Option<Mesh>,
    shape: &'static [i64],
    from: &'static [&'static str],
    to: &'static [&'static str],
    /// Each collective's printed form starts with this (operand `%x`).
    expect: &'static [&'static str],
    strategy: ReshardStrategy,
}

use ReshardStrategy::{GrowThenShrink, Monotone};

fn m3() -> Mesh {
    mesh(&[("x", 2), ("y", 2), ("z", 2)])
}
fn m2() -> Mesh {
    mesh(&[("x", 2), ("y", 2)])
}
fn m4x2x4() -> Mesh {
    mesh(&[("x", 4), ("y", 2), ("z", 4)])
}
fn m4d() -> Mesh {
    mesh(&[("x", 2), ("y", 2), ("z", 2), ("w", 2)])
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "spec_all_to_all",
            mesh: m3(),
            to_mesh: None,
            shape: &[8, 8, 8],
            from: &["x", "y", ""],
            to: &["", "y", "x"],
            expect: &[
                r#"sdy.all_to_all [{"x"}: 0->2] %x out_sharding=<@mesh, [{}, {"y"}, {"x"}]>"#,
            ],
            strategy: Monotone,
        },
        Case {
            name: "spec_permute_then_gather",
            mesh: m3(),
            to_mesh: None,
            shape: &[8, 8],
            from: &["x y", ""],
            to: &["z", ""],
            expect: &[
                r#"sdy.collective_permute %x out_sharding=<@mesh, [{"z", "y"}, {}]>"#,
                r#"sdy.all_gather [{"y"}, {}] %x out_sharding=<@mesh, [{"z"}, {}]>"#,
            ],
            strategy: Monotone,
        },
        Case {
            name: "spec_all_gather",
            mesh: m2(),
            to_mesh: None,
            shape: &[8, 8],
            from: &["x", ""],
            to: &["", ""],
            expect: &[r#"sdy.all_gather [{"x"}, {}] %x out_sharding=<@mesh, [{}, {}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "spec_all_slice",
            mesh: m2(),
            to_mesh: None,
            shape: &[8, 8],
            from: &["", ""],
            to: &["x", ""],
            expect: &[r#"sdy.all_slice [{"x"}, {}] %x out_sharding=<@mesh, [{"x"}, {}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "identity_is_empty",
            mesh: m3(),
            to_mesh: None,
            shape: &[8, 8],
            from: &["x", "y"],
            to: &["x", "y"],
            expect: &[],
            strategy: Monotone,
        },
        Case {
            name: "gather_multiple_axes",
            mesh: m3(),
            to_mesh: None,
            shape: &[16, 8],
            from: &["x y z", ""],
            to: &["x", ""],
            expect: &[r#"sdy.all_gather [{"y", "z"}, {}] %x out_sharding=<@mesh, [{"x"}, {}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "gather_minor_axis_keeps_other_dims",
            mesh: m3(),
            to_mesh: None,
            shape: &[16, 8],
            from: &["y z", "x"],
            to: &["y", "x"],
            expect: &[r#"sdy.all_gather [{"z"}, {}] %x out_sharding=<@mesh, [{"y"}, {"x"}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "gather_sub_axis",
            mesh: mesh(&[("x", 2), ("y", 8)]),
            to_mesh: None,
            shape: &[16, 8],
            from: &["y", "x"],
            to: &["y:(1)4", "x"],
            expect: &[
                r#"sdy.all_gather [{"y":(4)2}, {}] %x out_sharding=<@mesh, [{"y":(1)4}, {"x"}]>"#,
            ],
            strategy: Monotone,
        },
        Case {
            name: "slice_multiple_axes",
            mesh: m3(),
            to_mesh: None,
            shape: &[16, 8],
            from: &["", ""],
            to: &["x", "y z"],
            expect: &[
                r#"sdy.all_slice [{"x"}, {"y", "z"}] %x out_sharding=<@mesh, [{"x"}, {"y", "z"}]>"#,
            ],
            strategy: Monotone,
        },
        Case {
            name: "slice_sub_axes",
            mesh: m4x2x4(),
            to_mesh: None,
            shape: &[16, 8],
            from: &["x:(1)2", "y"],
            to: &["x", "y z:(1)2"],
            expect: &[
                r#"sdy.all_slice [{"x":(2)2}, {"z":(1)2}] %x out_sharding=<@mesh, [{"x"}, {"y", "z":(1)2}]>"#,
            ],
            strategy: Monotone,
        },
        Case {
            name: "all_to_all_multiple_axes",
            mesh: m3(),
            to_mesh: None,
            shape: &[16, 8, 8],
            from: &["x", "", "y z"],
            to: &["x", "y z", ""],
            expect: &[
                r#"sdy.all_to_all [{"y", "z"}: 2->1] %x out_sharding=<@mesh, [{"x"}, {"y", "z"}, {}]>"#,
            ],
            strategy: Monotone,
        },
        Case {
            name: "two_all_to_alls_different_targets",
            mesh: m4x2x4(),
            to_mesh: None,
            shape: &[16, 8, 8],
            from: &["", "y x", ""],
            to: &["x", "", "y"],
            // The search beats the greedy pair of all-to-alls ("x" 1->0,
            // then "y" 1->2: 384 + 256 = 640 bytes per device): slicing
            // "z" first makes every later block smaller, 64 + 96 + 384 =
            // 544 bytes.
            expect: &[
                r#"sdy.all_slice [{"z":(1)2}, {}, {"z":(2)2}] %x out_sharding=<@mesh, [{"z":(1)2}, {"y", "x"}, {"z":(2)2}]>"#,
                r#"sdy.all_to_all [{"x":(2)2}: 1->0] %x out_sharding=<@mesh, [{"z":(1)2, "x":(2)2}, {"y", "x":(1)2}, {"z":(2)2}]>"#,
                r#"sdy.collective_permute %x out_sharding=<@mesh, [{"x"}, {"z":(2)2, "z":(1)2}, {"y"}]>"#,
                r#"sdy.all_gather [{}, {"z":(2)2, "z":(1)2}, {}] %x out_sharding=<@mesh, [{"x"}, {}, {"y"}]>"#,
            ],
            strategy: Monotone,
        },
        Case {
            name: "two_all_to_alls_same_target",
            mesh: m3(),
            to_mesh: None,
            shape: &[16, 8, 8],
            from: &["y", "x", ""],
            to: &["", "", "x y"],
            expect: &[
                r#"sdy.all_to_all [{"x"}: 1->2] %x out_sharding=<@mesh, [{"y"}, {}, {"x"}]>"#,
                r#"sdy.all_to_all [{"y"}: 0->2] %x out_sharding=<@mesh, [{}, {}, {"x", "y"}]>"#,
            ],
            strategy: Monotone,
        },
        Case {
            name: "permute_then_two_all_to_alls",
            mesh: m3(),
            to_mesh: None,
            shape: &[16, 8, 8],
            from: &["y", "x z", ""],
            to: &["", "", "x y z"],
            expect: &[
                r#"sdy.collective_permute %x out_sharding=<@mesh, [{"x"}, {"y", "z"}, {}]>"#,
                r#"sdy.all_to_all [{"x"}: 0->2] %x out_sharding=<@mesh, [{}, {"y", "z"}, {"x"}]>"#,
                r#"sdy.all_to_all [{"y", "z"}: 1->2] %x out_sharding=<@mesh, [{}, {}, {"x", "y", "z"}]>"#,
            ],
            strategy: Monotone,
        },
        Case {
            name: "slice_then_all_to_alls",
            mesh: m4x2x4(),
            to_mesh: None,
            shape: &[16, 8, 8],
            from: &["", "y z", ""],
            to: &["x z", "", "y"],
            expect: &[
                r#"sdy.all_slice [{"x"}, {}, {}] %x out_sharding=<@mesh, [{"x"}, {"y", "z"}, {}]>"#,
                r#"sdy.all_to_all [{"z"}: 1->0] %x out_sharding=<@mesh, [{"x", "z"}, {"y"}, {}]>"#,
                r#"sdy.all_to_all [{"y"}: 1->2] %x out_sharding=<@mesh, [{"x", "z"}, {}, {"y"}]>"#,
            ],
            strategy: Monotone,
        },
        Case {
            name: "all_to_all_sub_axis_then_gather",
            mesh: m4x2x4(),
            to_mesh: None,
            shape: &[16, 8, 8],
            from: &["x", "z y", ""],
            to: &["x z:(2)2", "", "y"],
            expect: &[
                r#"sdy.all_to_all [{"y"}: 1->2] %x out_sharding=<@mesh, [{"x"}, {"z"}, {"y"}]>"#,
                r#"sdy.all_to_all [{"z":(2)2}: 1->0] %x out_sharding=<@mesh, [{"x", "z":(2)2}, {"z":(1)2}, {"y"}]>"#,
                r#"sdy.all_gather [{}, {"z":(1)2}, {}] %x out_sharding=<@mesh, [{"x", "z":(2)2}, {}, {"y"}]>"#,
            ],
            strategy: Monotone,
        },
        Case {
            name: "slice_at_source_then_all_to_all",
            mesh: mesh(&[("x", 2), ("y", 2), ("z", 2), ("w", 4)]),
            to_mesh: None,
            shape: &[16, 8],
            from: &["", "w:(1)2"],
            to: &["w", ""],
            expect: &[
                r#"sdy.all_slice [{}, {"w":(2)2}] %x out_sharding=<@mesh, [{}, {"w"}]>"#,
                r#"sdy.all_to_all [{"w"}: 1->0] %x out_sharding=<@mesh, [{"w"}, {}]>"#,
            ],
            strategy: Monotone,
        },
        Case {
            name: "slice_permute_two_all_to_alls",
            mesh: m4d(),
            to_mesh: None,
            shape: &[2, 8, 16],
            from: &["z", "x", ""],
            to: &["", "", "x y z w"],
            // 96 B/device; the greedy order (slice, permute first, then
            // two all-to-alls) moves 136.
            expect: &[
                r#"sdy.all_slice [{}, {}, {"w", "y"}] %x out_sharding=<@mesh, [{"z"}, {"x"}, {"w", "y"}]>"#,
                r#"sdy.all_to_all [{"z"}: 0->2] %x out_sharding=<@mesh, [{}, {"x"}, {"w", "y", "z"}]>"#,
                r#"sdy.all_to_all [{"x"}: 1->2] %x out_sharding=<@mesh, [{}, {}, {"w", "y", "z", "x"}]>"#,
                r#"sdy.collective_permute %x out_sharding=<@mesh, [{}, {}, {"x", "y", "z", "w"}]>"#,
            ],
            strategy: Monotone,
        },
        Case {
            name: "replace_same_size_axis",
            mesh: m3(),
            to_mesh: None,
            shape: &[16, 8],
            from: &["z", "y"],
            to: &["z", "x"],
            expect: &[r#"sdy.collective_permute %x out_sharding=<@mesh, [{"z"}, {"x"}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "replace_bigger_axis_by_smaller",
            mesh: m4x2x4(),
            to_mesh: None,
            shape: &[16, 8],
            from: &["z", "x"],
            to: &["z", "y"],
            expect: &[
                r#"sdy.collective_permute %x out_sharding=<@mesh, [{"z"}, {"y", "x":(2)2}]>"#,
                r#"sdy.all_gather [{}, {"x":(2)2}] %x out_sharding=<@mesh, [{"z"}, {"y"}]>"#,
            ],
            strategy: Monotone,
        },
        Case {
            name: "replace_major_most_axis",
            mesh: m4d(),
            to_mesh: None,
            shape: &[16, 8],
            from: &["x y z", ""],
            to: &["w y z", ""],
            expect: &[r#"sdy.collective_permute %x out_sharding=<@mesh, [{"w", "y", "z"}, {}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "replace_axis_in_other_dim",
            mesh: m2(),
            to_mesh: None,
            shape: &[16, 8],
            from: &["x", ""],
            to: &["", "y"],
            expect: &[
                r#"sdy.all_slice [{}, {"y"}] %x out_sharding=<@mesh, [{"x"}, {"y"}]>"#,
                r#"sdy.all_gather [{"x"}, {}] %x out_sharding=<@mesh, [{}, {"y"}]>"#,
            ],
            strategy: Monotone,
        },
        Case {
            name: "swap_same_size_axes",
            mesh: m2(),
            to_mesh: None,
            shape: &[16, 8],
            from: &["x", "y"],
            to: &["y", "x"],
            expect: &[r#"sdy.collective_permute %x out_sharding=<@mesh, [{"y"}, {"x"}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "swap_different_size_axes",
            mesh: mesh(&[("x", 4), ("y", 2)]),
            to_mesh: None,
            shape: &[16, 8],
            from: &["x", "y"],
            to: &["y", "x"],
            expect: &[
                r#"sdy.collective_permute %x out_sharding=<@mesh, [{"y", "x":(2)2}, {"x":(1)2}]>"#,
                r#"sdy.all_to_all [{"x":(2)2}: 0->1] %x out_sharding=<@mesh, [{"y"}, {"x"}]>"#,
            ],
            strategy: Monotone,
        },
        Case {
            name: "slice_then_swap",
            mesh: m3(),
            to_mesh: None,
            shape: &[16, 8],
            from: &["x", "y"],
            to: &["x y", "z"],
            expect: &[
                r#"sdy.all_slice [{"z"}, {}] %x out_sharding=<@mesh, [{"x", "z"}, {"y"}]>"#,
                r#"sdy.collective_permute %x out_sharding=<@mesh, [{"x", "y"}, {"z"}]>"#,
            ],
            strategy: Monotone,
        },
        Case {
            name: "reorder_axes_in_dim",
            mesh: m4x2x4(),
            to_mesh: None,
            shape: &[16, 8],
            from: &["x y", "z"],
            to: &["y x", "z"],
            expect: &[r#"sdy.collective_permute %x out_sharding=<@mesh, [{"y", "x"}, {"z"}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "reorder_for_gather",
            mesh: m3(),
            to_mesh: None,
            shape: &[16, 8],
            from: &["y x z", ""],
            to: &["z", ""],
            expect: &[
                r#"sdy.collective_permute %x out_sharding=<@mesh, [{"z", "x", "y"}, {}]>"#,
                r#"sdy.all_gather [{"x", "y"}, {}] %x out_sharding=<@mesh, [{"z"}, {}]>"#,
            ],
            strategy: Monotone,
        },
        Case {
            name: "rotate_axes_over_dims",
            mesh: m3(),
            to_mesh: None,
            shape: &[8, 8, 8],
            from: &["x", "y", "z"],
            to: &["z", "x", "y"],
            expect: &[r#"sdy.collective_permute %x out_sharding=<@mesh, [{"z"}, {"x"}, {"y"}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "sub_axis_halves_swap",
            mesh: mesh(&[("x", 4)]),
            to_mesh: None,
            shape: &[8],
            from: &["x:(1)2"],
            to: &["x:(2)2"],
            expect: &[r#"sdy.collective_permute %x out_sharding=<@mesh, [{"x":(2)2}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "sub_axis_minor_half_gathered",
            mesh: mesh(&[("x", 4)]),
            to_mesh: None,
            shape: &[8],
            from: &["x"],
            to: &["x:(1)2"],
            expect: &[r#"sdy.all_gather [{"x":(2)2}] %x out_sharding=<@mesh, [{"x":(1)2}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "sub_axis_halves_transposed",
            mesh: mesh(&[("x", 4)]),
            to_mesh: None,
            shape: &[8],
            from: &["x:(2)2 x:(1)2"],
            to: &["x"],
            expect: &[r#"sdy.collective_permute %x out_sharding=<@mesh, [{"x"}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "size3_gather",
            mesh: mesh(&[("x", 3)]),
            to_mesh: None,
            shape: &[12],
            from: &["x"],
            to: &[""],
            expect: &[r#"sdy.all_gather [{"x"}] %x out_sharding=<@mesh, [{}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "size3_all_to_all",
            mesh: mesh(&[("x", 3), ("y", 2)]),
            to_mesh: None,
            shape: &[6, 6],
            from: &["x", ""],
            to: &["", "x"],
            expect: &[r#"sdy.all_to_all [{"x"}: 0->1] %x out_sharding=<@mesh, [{}, {"x"}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "size6_gather_minor_sub_axis",
            mesh: mesh(&[("x", 6)]),
            to_mesh: None,
            shape: &[12],
            from: &["x"],
            to: &["x:(1)2"],
            expect: &[r#"sdy.all_gather [{"x":(2)3}] %x out_sharding=<@mesh, [{"x":(1)2}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "size6_all_to_all",
            mesh: mesh(&[("x", 6)]),
            to_mesh: None,
            shape: &[12, 12],
            from: &["x", ""],
            to: &["", "x"],
            expect: &[r#"sdy.all_to_all [{"x"}: 0->1] %x out_sharding=<@mesh, [{}, {"x"}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "size3_to_size2_slice_permute_gather",
            mesh: mesh(&[("x", 3), ("y", 2)]),
            to_mesh: None,
            shape: &[12],
            from: &["x"],
            to: &["y"],
            expect: &[
                r#"sdy.all_slice [{"y"}] %x out_sharding=<@mesh, [{"x", "y"}]>"#,
                r#"sdy.collective_permute %x out_sharding=<@mesh, [{"y", "x"}]>"#,
                r#"sdy.all_gather [{"x"}] %x out_sharding=<@mesh, [{"y"}]>"#,
            ],
            strategy: Monotone,
        },
        Case {
            name: "size3_to_size2_padded_needs_regather",
            mesh: mesh(&[("x", 3), ("y", 2)]),
            to_mesh: None,
            shape: &[8],
            from: &["x"],
            to: &["y"],
            expect: &[
                r#"sdy.all_gather [{"x"}] %x out_sharding=<@mesh, [{}]>"#,
                r#"sdy.all_slice [{"y"}] %x out_sharding=<@mesh, [{"y"}]>"#,
            ],
            strategy: GrowThenShrink,
        },
        Case {
            name: "nondiv7_gather",
            mesh: m2(),
            to_mesh: None,
            shape: &[7, 8],
            from: &["x", ""],
            to: &["", ""],
            expect: &[r#"sdy.all_gather [{"x"}, {}] %x out_sharding=<@mesh, [{}, {}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "nondiv7_slice_four_ways",
            mesh: mesh(&[("x", 4)]),
            to_mesh: None,
            shape: &[7],
            from: &[""],
            to: &["x"],
            expect: &[r#"sdy.all_slice [{"x"}] %x out_sharding=<@mesh, [{"x"}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "nondiv7_gather_four_ways",
            mesh: mesh(&[("x", 4)]),
            to_mesh: None,
            shape: &[7],
            from: &["x"],
            to: &[""],
            expect: &[r#"sdy.all_gather [{"x"}] %x out_sharding=<@mesh, [{}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "nondiv7_same_padding_gathers_minor",
            mesh: m2(),
            to_mesh: None,
            shape: &[7],
            from: &["x y"],
            to: &["x"],
            expect: &[r#"sdy.all_gather [{"y"}] %x out_sharding=<@mesh, [{"x"}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "nondiv13_all_to_all",
            mesh: m2(),
            to_mesh: None,
            shape: &[13, 8],
            from: &["x", ""],
            to: &["", "x"],
            expect: &[r#"sdy.all_to_all [{"x"}: 0->1] %x out_sharding=<@mesh, [{}, {"x"}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "nondiv13_padding_shift_regathers",
            mesh: m2(),
            to_mesh: None,
            shape: &[13],
            from: &["x y"],
            to: &["x"],
            expect: &[
                r#"sdy.all_gather [{"x", "y"}] %x out_sharding=<@mesh, [{}]>"#,
                r#"sdy.all_slice [{"x"}] %x out_sharding=<@mesh, [{"x"}]>"#,
            ],
            strategy: GrowThenShrink,
        },
        Case {
            name: "unaligned_sub_axes_regather",
            mesh: mesh(&[("x", 6)]),
            to_mesh: None,
            shape: &[6, 2],
            from: &["x:(1)2", ""],
            to: &["x:(1)3", ""],
            expect: &[
                r#"sdy.all_gather [{"x":(1)2}, {}] %x out_sharding=<@mesh, [{}, {}]>"#,
                r#"sdy.all_slice [{"x":(1)3}, {}] %x out_sharding=<@mesh, [{"x":(1)3}, {}]>"#,
            ],
            strategy: GrowThenShrink,
        },
        Case {
            name: "device_ids_permuted_mesh_all_to_all",
            mesh: mesh(&[("x", 2), ("y", 2)]).with_device_ids(vec![3, 1, 2, 0]),
            to_mesh: None,
            shape: &[8, 8],
            from: &["x", ""],
            to: &["", "x"],
            expect: &[r#"sdy.all_to_all [{"x"}: 0->1] %x out_sharding=<@mesh, [{}, {"x"}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "size1_axis_is_free",
            mesh: mesh(&[("x", 1), ("y", 2)]),
            to_mesh: None,
            shape: &[8, 8],
            from: &["x", "y"],
            to: &["y", "x"],
            expect: &[r#"sdy.all_to_all [{"y"}: 1->0] %x out_sharding=<@mesh, [{"y"}, {"x"}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "reorder_device_ids",
            mesh: m2(),
            to_mesh: Some(m2().with_device_ids(vec![3, 2, 1, 0])),
            shape: &[16, 8],
            from: &["x", "y"],
            to: &["x", "y"],
            expect: &[r#"sdy.collective_permute %x out_sharding=<@to, [{"x"}, {"y"}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "reorder_device_ids_then_gather",
            mesh: m2(),
            to_mesh: Some(m2().with_device_ids(vec![3, 2, 1, 0])),
            shape: &[16, 8],
            from: &["x", "y"],
            to: &["x", ""],
            expect: &[
                r#"sdy.collective_permute %x out_sharding=<@to, [{"x"}, {"y"}]>"#,
                r#"sdy.all_gather [{}, {"y"}] %x out_sharding=<@to, [{"x"}, {}]>"#,
            ],
            strategy: Monotone,
        },
        Case {
            name: "slice_then_reorder_axes_and_device_ids",
            mesh: m2(),
            to_mesh: Some(m2().with_device_ids(vec![3, 2, 1, 0])),
            shape: &[16, 8],
            from: &["x", ""],
            to: &["y x", ""],
            expect: &[
                r#"sdy.all_slice [{"y"}, {}] %x out_sharding=<@mesh, [{"x", "y"}, {}]>"#,
                r#"sdy.collective_permute %x out_sharding=<@to, [{"y", "x"}, {}]>"#,
            ],
            strategy: Monotone,
        },
        Case {
            name: "replicated_across_device_orders_is_free",
            mesh: m2(),
            to_mesh: Some(m2().with_device_ids(vec![3, 2, 1, 0])),
            shape: &[16, 8],
            from: &["", ""],
            to: &["", ""],
            expect: &[],
            strategy: Monotone,
        },
        Case {
            name: "jax_mesh_device_order",
            mesh: mesh(&[("x", 4), ("y", 2)]),
            to_mesh: Some(
                mesh(&[("x", 4), ("y", 2)]).with_device_ids(vec![0, 2, 4, 6, 1, 3, 5, 7]),
            ),
            shape: &[8, 16],
            from: &["x", ""],
            to: &["x", ""],
            expect: &[r#"sdy.collective_permute %x out_sharding=<@to, [{"x"}, {}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "other_axes_same_devices",
            mesh: mesh(&[("data", 4), ("model", 2)]),
            to_mesh: Some(mesh(&[("a", 2), ("b", 4)])),
            shape: &[16, 8],
            from: &["data", ""],
            to: &["a", ""],
            expect: &[r#"sdy.all_gather [{"b":(1)2}, {}] %x out_sharding=<@to, [{"a"}, {}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "other_axes_transposed_roles",
            mesh: mesh(&[("data", 4), ("model", 2)]),
            to_mesh: Some(mesh(&[("a", 2), ("b", 4)])),
            shape: &[16, 8],
            from: &["data", "model"],
            to: &["b", ""],
            expect: &[
                r#"sdy.collective_permute %x out_sharding=<@to, [{"b"}, {"a"}]>"#,
                r#"sdy.all_gather [{}, {"a"}] %x out_sharding=<@to, [{"b"}, {}]>"#,
            ],
            strategy: Monotone,
        },
        Case {
            name: "other_axes_slice_only",
            mesh: mesh(&[("data", 4), ("model", 2)]),
            to_mesh: Some(
                mesh(&[("a", 2), ("b", 4)]).with_device_ids(vec![7, 6, 5, 4, 3, 2, 1, 0]),
            ),
            shape: &[16, 8],
            from: &["", ""],
            to: &["b", "a"],
            expect: &[r#"sdy.all_slice [{"b"}, {"a"}] %x out_sharding=<@to, [{"b"}, {"a"}]>"#],
            strategy: Monotone,
        },
        Case {
            name: "other_axes_size3",
            mesh: mesh(&[("x", 2), ("y", 3)]),
            to_mesh: Some(mesh(&[("p", 3), ("q", 2)])),
            shape: &[12, 12],
            from: &["x", "y"],
            to: &["p", "q"],
            expect: &[
                r#"sdy.collective_permute %x out_sharding=<@to, [{"q"}, {"p"}]>"#,
                r#"sdy.all_to_all [{"q"}: 0->1] %x out_sharding=<@to, [{}, {"p", "q"}]>"#,
                r#"sdy.collective_permute %x out_sharding=<@to, [{}, {"q", "p"}]>"#,
                r#"sdy.all_to_all [{"p"}: 1->0] %x out_sharding=<@to, [{"p"}, {"q"}]>"#,
            ],
            strategy: Monotone,
        },
    ]
}

fn run_case(c: &Case) {
    let to_mesh = c.to_mesh.clone().unwrap_or_else(|| c.mesh.clone());
    let from = sharding("mesh", c.from);
    let to = sharding(if c.to_mesh.is_some() { "to" } else { "mesh" }, c.to);
    let plan = lower_and_check(
        &c.mesh,
        &to_mesh,
        c.shape,
        &from,
        &to,
        c.strategy == Monotone,
    );
    let got: Vec<String> = plan.collectives.iter().map(|x| x.to_sdy("%x")).collect();
    assert_eq!(plan.strategy, c.strategy, "{}: strategy", c.name);
    assert_eq!(got.len(), c.expect.len(), "{}: {got:#?}", c.name);
    for (g, e) in got.iter().zip(c.expect) {
        assert!(g.starts_with(e), "{}: expected `{e}...`, got `{g}`", c.name);
    }
}

#[test]
fn table_has_enough_cases_of_every_kind() {
    let cases = cases();
    assert!(cases.len() >= 40);
    for kind in [
        "sdy.all_slice",
        "sdy.all_gather",
        "sdy.all_to_all",
        "sdy.collective_permute",
    ] {
        let n = cases
            .iter()
            .filter(|c| c.expect.iter().any(|e| e.starts_with(kind)))
            .count();
        assert!(n >= 5, "only {n} cases use {kind}");
    }
}

/// Runs every case and reports all that fail, by name.
#[test]
fn table() {
    let failed: Vec<&str> = cases()
        .iter()
        .filter(|c| std::panic::catch_unwind(|| run_case(c)).is_err())
        .map(|c| c.name)
        .collect();
    assert!(failed.is_empty(), "failing cases: {failed:?}");
}
