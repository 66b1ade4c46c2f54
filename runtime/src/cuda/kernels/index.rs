//! Launchers of the gather and scatter kernels
//! (`meshrun_kernels::cuda::index`) and of the byte copy behind
//! `bitcast_convert`. Each checks every buffer against the walk table
//! before it launches (the kernels trust it). Never run on a GPU (none is
//! lent to CI); NVRTC compiles the kernels.

use cudarc::driver::PushKernelArg;
use meshrun_compiler::ir::ElemType;
use meshrun_compiler::ops::scatter::ScatterUpdate;
use meshrun_kernels::cuda::index::{
    gather, scatter, scatter_strategy, walk_sizes, window_volume, ScatterStrategy,
};
use meshrun_kernels::cuda::names;

use super::{cfg, driver, need, push, push_mut, DevData, Launcher};
use crate::cuda::ffi;
use crate::cuda::launch::{self, count};
use crate::cuda::layout::StridedCopy;

fn i64_indices(idx: &DevData) -> Result<(), String> {
    if idx.elem() == ElemType::I64 {
        Ok(())
    } else {
        Err(format!("start indices of {}, not i64", idx.elem()))
    }
}

impl Launcher<'_> {
    /// `y` = the gather of `x` at the i64 start indices `idx` (`meta`:
    /// `walk_meta` with the slice sizes).
    pub fn gather(
        &self,
        x: &DevData,
        idx: &DevData,
        y: &mut DevData,
        meta: &[i64],
    ) -> Result<(), String> {
        let (n, operand, indices) = walk_sizes(meta)?;
        if x.elem() != y.elem() {
            return Err(format!("a gather from {} into {}", x.elem(), y.elem()));
        }
        i64_indices(idx)?;
        let Some(dims) = launch::elementwise(n) else {
            return Ok(());
        };
        need(x, operand, "the operand")?;
        need(idx, indices, "the start indices")?;
        need(y, n, "the result")?;
        let name = gather(x.elem()).ok_or_else(|| format!("no gather kernel for {}", x.elem()))?;
        let f = self.kernels.get(&name)?;
        let table = self.stream.clone_htod(meta).map_err(driver)?;
        let n = count(n)?;
        let mut args = self.stream.launch_builder(f);
        push(&mut args, x);
        push(&mut args, idx);
        push_mut(&mut args, y);
        args.arg(&table);
        args.arg(&n);
        ffi::launch(&mut args, cfg(dims)).map_err(driver)
    }

    /// `y` (a copy of the input, updated in place) after the scatter of
    /// `upd` at the i64 start indices `idx` with `update` (`meta`:
    /// `walk_meta` without slice sizes). The launch shape is
    /// `scatter_strategy`'s; both give the CPU kernel's bits.
    pub fn scatter(
        &self,
        update: ScatterUpdate,
        idx: &DevData,
        upd: &DevData,
        y: &mut DevData,
        meta: &[i64],
    ) -> Result<(), String> {
        let (slices, operand, indices) = walk_sizes(meta)?;
        if upd.elem() != y.elem() {
            return Err(format!("updates of {} into {}", upd.elem(), y.elem()));
        }
        i64_indices(idx)?;
        need(y, operand, "the result")?;
        need(upd, slices, "the updates")?;
        need(idx, indices, "the start indices")?;
        if slices == 0 {
            return Ok(());
        }
        let strategy = scatter_strategy(meta);
        let threads = match strategy {
            ScatterStrategy::Target => operand,
            ScatterStrategy::Window => window_volume(meta),
        };
        let Some(dims) = launch::elementwise(threads) else {
            return Ok(());
        };
        let name = scatter(strategy, update, y.elem())
            .ok_or_else(|| format!("no scatter kernel for {update:?} on {}", y.elem()))?;
        let f = self.kernels.get(&name)?;
        let table = self.stream.clone_htod(meta).map_err(driver)?;
        let n = count(threads)?;
        let mut args = self.stream.launch_builder(f);
        push(&mut args, idx);
        push(&mut args, upd);
        push_mut(&mut args, y);
        args.arg(&table);
        args.arg(&n);
        ffi::launch(&mut args, cfg(dims)).map_err(driver)
    }

    /// The first `bytes` bytes of `src` into `dst`, whatever their element
    /// types (`bitcast_convert`: both row-major little-endian), as a copy
    /// of elements of the narrower width (both widths are powers of two).
    pub fn copy_bytes(&self, src: &DevData, dst: &mut DevData, bytes: usize) -> Result<(), String> {
        let (ws, wd) = (src.elem().byte_size(), dst.elem().byte_size());
        let w = ws.min(wd);
        if w == 0 || !bytes.is_multiple_of(w) {
            return Err(format!("{bytes} bytes as {w}-byte words"));
        }
        let fits =
            |d: &DevData, width: usize| d.len().checked_mul(width).is_some_and(|b| b >= bytes);
        if !fits(src, ws) || !fits(dst, wd) {
            return Err(format!("a copy of {bytes} bytes between smaller buffers"));
        }
        let copy = StridedCopy::contiguous(bytes / w);
        let Some(dims) = launch::elementwise(copy.len()) else {
            return Ok(());
        };
        let name = names::strided_copy(w).ok_or("a copy of an odd width")?;
        let f = self.kernels.get(&name)?;
        let meta = self.stream.clone_htod(&copy.encode()?).map_err(driver)?;
        // The kernel reads and writes `w`-byte words through the two
        // device pointers; their typed slices only carry the addresses.
        let mut args = self.stream.launch_builder(f);
        push(&mut args, src);
        push_mut(&mut args, dst);
        args.arg(&meta);
        ffi::launch(&mut args, cfg(dims)).map_err(driver)
    }
}
