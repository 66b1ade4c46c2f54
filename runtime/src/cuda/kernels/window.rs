//! Launchers of the window kernels (`meshrun_kernels::cuda::window`):
//! reduce_window and the two passes of select_and_scatter. Each checks
//! the buffers against the window geometry (`meta`) before it launches.
//! Never run on a GPU (none is lent to CI); NVRTC compiles the kernels.

use cudarc::driver::PushKernelArg;
use meshrun_compiler::ir::ElemType;
use meshrun_kernels::cuda::window::META_PER_DIM;

use super::{cfg, driver, need, push, push_mut, DevData, Launcher};
use crate::cuda::ffi;
use crate::cuda::launch::{self, count};

/// The input and window counts of `meta`, after checking its layout.
fn sizes(meta: &[i64]) -> Result<(usize, usize), String> {
    let rank = usize::try_from(*meta.first().ok_or("empty window geometry")?)
        .map_err(|_| "negative rank in the window geometry")?;
    if meta.len() != 1 + META_PER_DIM * rank {
        return Err(format!(
            "window geometry of {} values for rank {rank}",
            meta.len()
        ));
    }
    let (mut input, mut windows) = (1usize, 1usize);
    for d in 0..rank {
        let p = &meta[1 + META_PER_DIM * d..];
        if p[2..6].iter().any(|&v| v <= 0) || p[0] < 0 || p[1] < 0 {
            return Err(format!("bad window geometry in dimension {d}"));
        }
        input = input
            .checked_mul(p[0] as usize)
            .ok_or("too many elements")?;
        windows = windows
            .checked_mul(p[1] as usize)
            .ok_or("too many windows")?;
    }
    Ok((input, windows))
}

impl Launcher<'_> {
    /// `y[i]` = window `i` of `x` folded from `*init`.
    pub fn reduce_window(
        &self,
        name: &str,
        x: &DevData,
        init: &DevData,
        y: &mut DevData,
        meta: &[i64],
    ) -> Result<(), String> {
        let (input, windows) = sizes(meta)?;
        let Some(dims) = launch::elementwise(windows) else {
            return Ok(());
        };
        need(x, input, "the input")?;
        need(init, 1, "the init value")?;
        need(y, windows, "the result")?;
        let f = self.kernels.get(name)?;
        let table = self.stream.clone_htod(meta).map_err(driver)?;
        let n = count(windows)?;
        let mut args = self.stream.launch_builder(f);
        push(&mut args, x);
        push(&mut args, init);
        push_mut(&mut args, y);
        args.arg(&table);
        args.arg(&n);
        ffi::launch(&mut args, cfg(dims)).map_err(driver)
    }

    /// select_and_scatter: `select` picks one position of `x` per window
    /// (into an i64 buffer), then `scatter` folds the `source` values of
    /// the windows that picked each position of `y` from `*init`.
    #[allow(clippy::too_many_arguments)]
    pub fn select_and_scatter(
        &self,
        select: &str,
        scatter: &str,
        x: &DevData,
        source: &DevData,
        init: &DevData,
        y: &mut DevData,
        meta: &[i64],
    ) -> Result<(), String> {
        let (input, windows) = sizes(meta)?;
        need(x, input, "the operand")?;
        need(source, windows, "the source")?;
        need(init, 1, "the init value")?;
        need(y, input, "the result")?;
        let table = self.stream.clone_htod(meta).map_err(driver)?;
        let mut sel = DevData::zeros(self.stream, ElemType::I64, windows)?;
        if let Some(dims) = launch::elementwise(windows) {
            let f = self.kernels.get(select)?;
            let n = count(windows)?;
            let mut args = self.stream.launch_builder(f);
            push(&mut args, x);
            push_mut(&mut args, &mut sel);
            args.arg(&table);
            args.arg(&n);
            ffi::launch(&mut args, cfg(dims)).map_err(driver)?;
        }
        let Some(dims) = launch::elementwise(input) else {
            return Ok(());
        };
        let f = self.kernels.get(scatter)?;
        let n = count(input)?;
        let mut args = self.stream.launch_builder(f);
        push(&mut args, source);
        push(&mut args, &sel);
        push(&mut args, init);
        push_mut(&mut args, y);
        args.arg(&table);
        args.arg(&n);
        ffi::launch(&mut args, cfg(dims)).map_err(driver)
    }
}
