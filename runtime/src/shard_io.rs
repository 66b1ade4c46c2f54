//! Between global arrays and per-device blocks: split a program input into
//! the padded local block each device holds, and rebuild a program output
//! from the devices' blocks (padding dropped).
//!
//! Placement follows `sharding::layout::TensorLayout` (SPEC §2): along each
//! dimension a device holds block number `s` (its mesh coordinates in mixed
//! radix), which starts at `s * local` and may run past the end (padding).
//! Padding of an input is zero.
//!
//! An input sharding with `unreduced` axes holds a partial value along
//! them: for sums, the devices at coordinate 0 of every unreduced axis
//! hold the data and the others zeros, so the sum over those axes is the
//! input; for maxima and minima every device holds it. An output
//! must not be unreduced (the partitioner reduces results).

use std::collections::BTreeMap;

use meshrun_compiler::ir::TensorType;
use meshrun_compiler::partition::ProgramIo;
use meshrun_compiler::sharding::layout::{DeviceSlice, TensorLayout};
use meshrun_compiler::sharding::ReductionOp;
use meshrun_kernels::HostTensor;

use crate::blocks::{copy_box, zeros_like_elem, BoxCopy};

fn usizes(v: &[i64]) -> Vec<usize> {
    v.iter().map(|&x| x.max(0) as usize).collect()
}

/// The layout of a program input or output.
pub fn layout_of(io: &ProgramIo) -> Result<TensorLayout, String> {
    TensorLayout::new(&io.mesh, &io.sharding, &io.global.shape).map_err(|e| e.to_string())
}

/// The local (padded) type of a program input or output.
pub fn local_type(io: &ProgramIo) -> Result<TensorType, String> {
    Ok(io.global.with_shape(layout_of(io)?.local_shape()))
}

/// Whether device `device` holds the data of an input with unreduced axes
/// (coordinate 0 along every one of them).
pub fn holds_partial(io: &ProgramIo, device: i64) -> Result<bool, String> {
    // Copies of a value are its partial maxima (minima): every device
    // holds the data.
    if io.sharding.unreduced.is_empty() || io.sharding.unreduced_op != ReductionOp::Sum {
        return Ok(true);
    }
    let coords = io
        .mesh
        .coords_of_device(device)
        .ok_or_else(|| format!("device {device} is not in the mesh"))?;
    for a in &io.sharding.unreduced {
        let ix = io
            .mesh
            .axis_index(&a.name)
            .ok_or_else(|| format!("unknown unreduced axis \"{}\"", a.name))?;
        let n = io.mesh.axes[ix].size;
        let (stride, size) = match a.sub {
            Some(s) => (n / (s.pre_size * s.size).max(1), s.size),
            None => (1, n),
        };
        if (coords[ix] / stride.max(1)) % size.max(1) != 0 {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The blocks of `global`, an input laid out as `io` says: each distinct
/// block once, with the positions (in `devices`) of the devices that hold
/// it.
pub fn shard(
    global: &HostTensor,
    io: &ProgramIo,
    devices: &[i64],
) -> Result<Vec<(HostTensor, Vec<usize>)>, String> {
    if global.tensor_type() != io.global {
        return Err(format!(
            "expected {}, got {}",
            io.global,
            global.tensor_type()
        ));
    }
    let layout = layout_of(io)?;
    let local = usizes(&layout.local_shape());
    let zero = vec![0; local.len()];
    // Block index (or `None`: the zeros of a partial input) -> its slot.
    let mut slot_of: BTreeMap<Option<Vec<i64>>, usize> = BTreeMap::new();
    let mut out: Vec<(HostTensor, Vec<usize>)> = Vec::new();
    for (pos, &d) in devices.iter().enumerate() {
        let slice = layout
            .slice(d)
            .ok_or_else(|| format!("device {d} is not in the mesh of {}", io.sharding))?;
        let key = holds_partial(io, d)?.then(|| slice.shard.clone());
        if let Some(&k) = slot_of.get(&key) {
            out[k].1.push(pos);
            continue;
        }
        let mut block = zeros_like_elem(global, &local);
        if key.is_some() {
            copy_box(
                &mut block,
                global,
                BoxCopy {
                    dst_start: &zero,
                    src_start: &usizes(&slice.offset),
                    extent: &usizes(&slice.extent),
                },
            )?;
        }
        slot_of.insert(key, out.len());
        out.push((block, vec![pos]));
    }
    Ok(out)
}

/// The valid part (`slice.extent`) of a device's block.
fn valid_part(block: &HostTensor, slice: &DeviceSlice) -> Result<HostTensor, String> {
    let extent = usizes(&slice.extent);
    let mut part = zeros_like_elem(block, &extent);
    let zero = vec![0; extent.len()];
    copy_box(
        &mut part,
        block,
        BoxCopy {
            dst_start: &zero,
            src_start: &zero,
            extent: &extent,
        },
    )?;
    Ok(part)
}

/// Bitwise equality, with every NaN equal to every NaN.
fn same_values(a: &HostTensor, b: &HostTensor) -> bool {
    let (x, y) = (a.to_f64_vec(), b.to_f64_vec());
    x.len() == y.len()
        && x.iter()
            .zip(&y)
            .all(|(p, q)| p.to_bits() == q.to_bits() || (p.is_nan() && q.is_nan()))
}

/// Rebuild the global value of output `io` from the devices' blocks.
/// `fetch(position)` gives the block of `devices[position]`; it is called
/// once for the first device holding each block (and, with
/// `check_replicas`, for every other holder too, whose valid part must be
/// bitwise the same).
pub fn gather(
    io: &ProgramIo,
    devices: &[i64],
    check_replicas: bool,
    mut fetch: impl FnMut(usize) -> Result<HostTensor, String>,
) -> Result<HostTensor, String> {
    let layout = layout_of(io)?;
    let local = usizes(&layout.local_shape());
    let mut global = HostTensor::zeros(&io.global).map_err(|e| e.to_string())?;
    if !io.sharding.unreduced.is_empty() {
        return Err(format!(
            "an output that is a partial sum ({}) cannot be gathered",
            io.sharding
        ));
    }
    // Per block index: (device, valid part) of its first holder.
    let mut seen: BTreeMap<Vec<i64>, (i64, HostTensor)> = BTreeMap::new();
    for (pos, &d) in devices.iter().enumerate() {
        let slice = layout
            .slice(d)
            .ok_or_else(|| format!("device {d} is not in the mesh of {}", io.sharding))?;
        let first = !seen.contains_key(&slice.shard);
        if !first && !check_replicas {
            continue;
        }
        let block = fetch(pos)?;
        if block.shape() != local.as_slice() || block.elem_type() != io.global.elem {
            return Err(format!(
                "device {d} returned {} but the local type is {}",
                block.tensor_type(),
                io.global.with_shape(layout.local_shape())
            ));
        }
        let part = valid_part(&block, &slice)?;
        match seen.get(&slice.shard) {
            None => {
                seen.insert(slice.shard.clone(), (d, part));
            }
            Some((holder, kept)) => {
                if !same_values(kept, &part) {
                    return Err(format!(
                        "devices {holder} and {d} hold different values for block {:?}",
                        slice.shard
                    ));
                }
            }
        }
    }
    for (shard, (_, part)) in seen {
        let slice_offset: Vec<usize> = shard
            .iter()
            .zip(layout.dims())
            .map(|(s, dl)| (s * dl.local).max(0) as usize)
            .collect();
        let extent = part.shape().to_vec();
        copy_box(
            &mut global,
            &part,
            BoxCopy {
                dst_start: &slice_offset,
                src_start: &vec![0; extent.len()],
                extent: &extent,
            },
        )?;
    }
    Ok(global)
}
