//! Launcher of the im2col kernel of convolutions
//! (`meshrun_kernels::cuda::conv`). It checks the table and both buffers
//! before it launches (the kernel trusts them). Never run on a GPU (none
//! is lent to CI); NVRTC compiles the kernel.

use cudarc::driver::PushKernelArg;
use meshrun_kernels::cuda::conv::{im2col, im2col_len, im2col_reads};

use super::{cfg, driver, need, push, push_mut, DevData, Launcher};
use crate::cuda::ffi;
use crate::cuda::launch::{self, count};

impl Launcher<'_> {
    /// The columns of one chunk (`meta`: `im2col_meta`) of the canonical
    /// lhs `x` into `col` (same element type).
    pub fn im2col(&self, x: &DevData, col: &mut DevData, meta: &[i64]) -> Result<(), String> {
        if x.elem() != col.elem() {
            return Err(format!("im2col from {} into {}", x.elem(), col.elem()));
        }
        let name = im2col(x.elem()).ok_or_else(|| format!("no im2col kernel for {}", x.elem()))?;
        need(x, im2col_reads(meta)?, "the lhs")?;
        let n = im2col_len(meta);
        need(col, n, "the columns")?;
        let Some(dims) = launch::elementwise(n) else {
            return Ok(());
        };
        let f = self.kernels.get(&name)?;
        let table = self.stream.clone_htod(meta).map_err(driver)?;
        let n = count(n)?;
        let mut args = self.stream.launch_builder(f);
        push(&mut args, x);
        push_mut(&mut args, col);
        args.arg(&table);
        args.arg(&n);
        ffi::launch(&mut args, cfg(dims)).map_err(driver)
    }
}
