//! Launcher of the `rng_bit_generator` kernels
//! (`meshrun_kernels::cuda::rng`). Never run on a GPU (none is lent to
//! CI); NVRTC compiles the kernels.

use cudarc::driver::PushKernelArg;
use meshrun_kernels::cuda::rng::RngPlan;

use super::{cfg, driver, need, push_mut, DevData, Launcher};
use crate::cuda::ffi;
use crate::cuda::launch::{self, count};

impl Launcher<'_> {
    /// The bits of `plan` into `y` (`plan.count` elements of its width).
    pub fn rng(&self, plan: &RngPlan, y: &mut DevData) -> Result<(), String> {
        need(y, plan.count, "the bits")?;
        let Some(dims) = launch::elementwise(plan.blocks) else {
            return Ok(());
        };
        let f = self.kernels.get(&plan.kernel)?;
        let (key, (lo, hi)) = (plan.key, plan.counter);
        let mut args = self.stream.launch_builder(f);
        push_mut(&mut args, y);
        let (n, blocks) = (count(plan.count)?, count(plan.blocks)?);
        let (inner, half, full) = (count(plan.inner)?, count(plan.half)?, count(plan.full)?);
        if plan.philox {
            args.arg(&n);
            args.arg(&key);
            args.arg(&lo);
            args.arg(&hi);
        } else {
            args.arg(&blocks);
            args.arg(&key);
            args.arg(&lo);
            args.arg(&inner);
            args.arg(&half);
            args.arg(&full);
        }
        ffi::launch(&mut args, cfg(dims)).map_err(driver)
    }
}
