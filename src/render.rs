//! Drawing shardings for people: which device holds which block of a
//! tensor, like `jax.debug.visualize_array_sharding`, for any rank.
//!
//! Rank 1 and 2 tensors are drawn as a grid of blocks, each cell listing the
//! devices that hold it. Higher ranks are shown dimension by dimension: for
//! each dimension, the strip of blocks along it and who holds each.

use std::collections::BTreeMap;
use std::fmt::Write;

use meshrun_compiler::ir::TensorType;
use meshrun_compiler::sharding::layout::{DeviceSlice, TensorLayout};
use meshrun_compiler::sharding::{Mesh, TensorSharding};

/// The largest mesh whose blocks are drawn: a picture of more devices is
/// unreadable, and listing them would take time and memory that grow
/// with the mesh (a mesh may have 2^63 devices).
pub const MAX_DRAWN_DEVICES: i64 = 4096;

/// A multi-line description of `sharding` on a tensor of type `ty`: the
/// sharding, the mesh, local shape and padding, and the block picture.
pub fn describe_sharding(
    ty: &TensorType,
    sharding: &TensorSharding,
    mesh_name: &str,
    mesh: &Mesh,
) -> String {
    let mut out = String::new();
    let layout = match TensorLayout::new(mesh, sharding, &ty.shape) {
        Ok(l) => l,
        Err(e) => {
            let _ = writeln!(out, "  invalid sharding: {e}");
            return out;
        }
    };
    let axes: Vec<String> = mesh
        .axes
        .iter()
        .map(|a| format!("\"{}\"={}", a.name, a.size))
        .collect();
    let _ = writeln!(
        out,
        "  mesh @{mesh_name} [{}], {} devices; each element held by {} device(s)",
        axes.join(", "),
        mesh.num_devices(),
        layout.replication_factor()
    );
    let _ = writeln!(
        out,
        "  local shape {}{}",
        shape_str(&layout.local_shape()),
        padding_note(&layout)
    );
    if mesh.num_devices() > MAX_DRAWN_DEVICES {
        let _ = writeln!(
            out,
            "  (no picture: the mesh has {} devices; show draws meshes of up to {MAX_DRAWN_DEVICES})",
            mesh.num_devices()
        );
        return out;
    }
    let slices = layout.slices();
    match ty.rank() {
        0 => out.push_str(&grid(&[vec![devices_of(&slices, |_| true)]], &[], &[])),
        1 | 2 => out.push_str(&grid_2d(&layout, &slices, &ty.shape)),
        _ => out.push_str(&per_dimension(&layout, &slices)),
    }
    out
}

fn shape_str(shape: &[i64]) -> String {
    if shape.is_empty() {
        return "scalar".into();
    }
    shape
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

fn padding_note(layout: &TensorLayout) -> String {
    let padded: Vec<String> = layout
        .dims()
        .iter()
        .enumerate()
        .filter(|(_, d)| d.padding > 0)
        .map(|(i, d)| {
            format!(
                "dim {i}: {} = {} shards x {} - {} padding",
                d.global, d.shards, d.local, d.padding
            )
        })
        .collect();
    if padded.is_empty() {
        " (no padding)".into()
    } else {
        format!(" (padded: {})", padded.join("; "))
    }
}

/// Devices (sorted) whose slice satisfies `pred`, as `0,1,4`.
fn devices_of(slices: &[DeviceSlice], pred: impl Fn(&DeviceSlice) -> bool) -> String {
    let ids: Vec<i64> = slices
        .iter()
        .filter(|s| pred(s))
        .map(|s| s.device)
        .collect();
    id_list(&ids)
}

/// Device ids, sorted, as `0,1,4`.
fn id_list(ids: &[i64]) -> String {
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    ids.iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Rank 1 (one row) or rank 2: rows are blocks of dim 0, columns of dim 1.
fn grid_2d(layout: &TensorLayout, slices: &[DeviceSlice], shape: &[i64]) -> String {
    let dims = layout.dims();
    let (rows, cols) = if dims.len() == 1 {
        (1, dims[0].shards)
    } else {
        (dims[0].shards, dims[1].shards)
    };
    // Devices by block, so each cell is one lookup.
    let mut by_block: BTreeMap<(i64, i64), Vec<i64>> = BTreeMap::new();
    for s in slices {
        let key = match s.shard[..] {
            [c] => (0, c),
            [r, c] => (r, c),
            _ => continue,
        };
        by_block.entry(key).or_default().push(s.device);
    }
    let cell = |r: i64, c: i64| {
        by_block
            .get(&(r, c))
            .map_or(String::new(), |ids| id_list(ids))
    };
    let cells: Vec<Vec<String>> = (0..rows)
        .map(|r| (0..cols).map(|c| cell(r, c)).collect())
        .collect();
    let range = |dim: usize, block: i64| {
        let d = &dims[dim];
        let lo = (block * d.local).min(shape[dim]);
        let hi = ((block + 1) * d.local).min(shape[dim]);
        format!("[{lo}:{hi})")
    };
    let row_labels: Vec<String> = if dims.len() == 2 {
        (0..rows).map(|r| format!("rows {}", range(0, r))).collect()
    } else {
        vec![]
    };
    let last = dims.len() - 1;
    let col_labels: Vec<String> = (0..cols).map(|c| range(last, c)).collect();
    grid(&cells, &row_labels, &col_labels)
}

/// Box-drawing grid; `row_labels` are written right of each row,
/// `col_labels` under the grid.
fn grid(cells: &[Vec<String>], row_labels: &[String], col_labels: &[String]) -> String {
    let ncols = cells.first().map_or(0, |r| r.len());
    let mut widths = vec![0usize; ncols];
    for row in cells {
        for (c, text) in row.iter().enumerate() {
            widths[c] = widths[c].max(text.len() + 6);
        }
    }
    for (c, l) in col_labels.iter().enumerate() {
        widths[c] = widths[c].max(l.len() + 2);
    }
    let line = |l: &str, m: &str, r: &str| {
        let parts: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
        format!("  {l}{}{r}\n", parts.join(m))
    };
    let mut out = line("┌", "┬", "┐");
    for (r, row) in cells.iter().enumerate() {
        let body: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, t)| format!("{:^w$}", format!("D{t}"), w = widths[c]))
            .collect();
        let label = row_labels.get(r).map_or(String::new(), |l| format!(" {l}"));
        let _ = writeln!(out, "  │{}│{label}", body.join("│"));
        if r + 1 < cells.len() {
            out.push_str(&line("├", "┼", "┤"));
        }
    }
    out.push_str(&line("└", "┴", "┘"));
    if !col_labels.is_empty() && ncols > 1 {
        let labels: Vec<String> = col_labels
            .iter()
            .enumerate()
            .map(|(c, l)| format!("{:^w$}", l, w = widths[c] + 1))
            .collect();
        let _ = writeln!(out, "   {}", labels.join(""));
    }
    out
}

/// Rank > 2: for each dimension, who holds each block along it.
fn per_dimension(layout: &TensorLayout, slices: &[DeviceSlice]) -> String {
    let mut out = String::new();
    for (i, d) in layout.dims().iter().enumerate() {
        let mut by_block: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
        for s in slices {
            by_block.entry(s.shard[i]).or_default().push(s.device);
        }
        let _ = write!(out, "  dim {i} (size {}): ", d.global);
        if d.shards == 1 {
            out.push_str("not sharded\n");
            continue;
        }
        let _ = writeln!(out, "{} blocks of {}", d.shards, d.local);
        for (block, mut devs) in by_block {
            devs.sort_unstable();
            let lo = (block * d.local).min(d.global);
            let hi = ((block + 1) * d.local).min(d.global);
            let ids: Vec<String> = devs.iter().map(|x| x.to_string()).collect();
            let _ = writeln!(out, "    [{lo}:{hi}) on D{}", ids.join(","));
        }
    }
    out
}
