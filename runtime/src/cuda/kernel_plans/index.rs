//! The launches of the gather and scatter kernels
//! (`meshrun_kernels::cuda::index`), each buffer checked against the walk
//! table, and of the byte copy behind `bitcast_convert`.

use std::borrow::Cow;

use meshrun_compiler::ir::ops::scatter::ScatterUpdate;
use meshrun_compiler::ir::ElemType;
use meshrun_kernels::cuda::index::{
    gather as gather_name, scatter as scatter_name, scatter_strategy, walk_sizes, window_volume,
    ScatterStrategy,
};
use meshrun_kernels::cuda::names;

use crate::cuda::kernel_args::{checks_only, input, named, output, Buffer, KArg, Planned};
use crate::cuda::launch::{self, count};
use crate::cuda::layout::StridedCopy;

fn i64_indices<B: Buffer>(idx: &B) -> Result<(), String> {
    if idx.elem() == ElemType::I64 {
        Ok(())
    } else {
        Err(format!("start indices of {}, not i64", idx.elem()))
    }
}

/// `y` = the gather of `x` at the i64 start indices `idx` (`meta`:
/// `walk_meta` with the slice sizes).
pub fn gather<'a, B: Buffer>(
    x: &'a B,
    idx: &'a B,
    y: &'a mut B,
    meta: &'a [i64],
) -> Planned<'a, B> {
    let (n, operand, indices) = walk_sizes(meta)?;
    if x.elem() != y.elem() {
        return Err(format!("a gather from {} into {}", x.elem(), y.elem()));
    }
    i64_indices(idx)?;
    let Some(dims) = launch::elementwise(n) else {
        return Ok(None);
    };
    let name = gather_name(x.elem()).ok_or_else(|| format!("no gather kernel for {}", x.elem()))?;
    let args = vec![
        input(x, operand, "the operand"),
        input(idx, indices, "the start indices"),
        output(y, n, "the result"),
        KArg::Table(Cow::Borrowed(meta)),
        KArg::I64(count(n)?),
    ];
    named(name, dims, args)
}

/// `y` (a copy of the input, updated in place) after the scatter of
/// `upd` at the i64 start indices `idx` with `update` (`meta`:
/// `walk_meta` without slice sizes). The launch shape is
/// `scatter_strategy`'s; both give the CPU kernel's bits.
pub fn scatter<'a, B: Buffer>(
    update: ScatterUpdate,
    idx: &'a B,
    upd: &'a B,
    y: &'a mut B,
    meta: &'a [i64],
) -> Planned<'a, B> {
    let (slices, operand, indices) = walk_sizes(meta)?;
    if upd.elem() != y.elem() {
        return Err(format!("updates of {} into {}", upd.elem(), y.elem()));
    }
    i64_indices(idx)?;
    let elem = y.elem();
    let mut args = vec![
        input(idx, indices, "the start indices"),
        input(upd, slices, "the updates"),
        output(y, operand, "the result"),
    ];
    if slices == 0 {
        return checks_only(args);
    }
    let strategy = scatter_strategy(meta);
    let threads = match strategy {
        ScatterStrategy::Target => operand,
        ScatterStrategy::Window => window_volume(meta),
    };
    let Some(dims) = launch::elementwise(threads) else {
        return checks_only(args);
    };
    let name = scatter_name(strategy, update, elem)
        .ok_or_else(|| format!("no scatter kernel for {update:?} on {elem}"))?;
    args.push(KArg::Table(Cow::Borrowed(meta)));
    args.push(KArg::I64(count(threads)?));
    named(name, dims, args)
}

/// The first `bytes` bytes of `src` into `dst`, whatever their element
/// types (`bitcast_convert`: both row-major little-endian), as a copy
/// of elements of the narrower width (both widths are powers of two).
pub fn copy_bytes<'a, B: Buffer>(src: &'a B, dst: &'a mut B, bytes: usize) -> Planned<'a, B> {
    let (ws, wd) = (src.elem().byte_size(), dst.elem().byte_size());
    let w = ws.min(wd);
    if w == 0 || !bytes.is_multiple_of(w) {
        return Err(format!("{bytes} bytes as {w}-byte words"));
    }
    let fits = |d: &B, width: usize| d.elements().checked_mul(width).is_some_and(|b| b >= bytes);
    if !fits(src, ws) || !fits(dst, wd) {
        return Err(format!("a copy of {bytes} bytes between smaller buffers"));
    }
    let copy = StridedCopy::contiguous(bytes / w);
    let Some(dims) = launch::elementwise(copy.len()) else {
        return Ok(None);
    };
    let name = names::strided_copy(w).ok_or("a copy of an odd width")?;
    // The kernel reads and writes `w`-byte words through the two device
    // pointers; their typed slices only carry the addresses.
    let args = vec![
        KArg::InWords(src),
        KArg::OutWords(dst),
        KArg::Table(Cow::Owned(copy.encode()?)),
    ];
    named(name, dims, args)
}
