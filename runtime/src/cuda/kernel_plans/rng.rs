//! The launch of the `rng_bit_generator` kernels
//! (`meshrun_kernels::cuda::rng`).

use meshrun_kernels::cuda::rng::RngPlan;

use crate::cuda::kernel_args::{checks_only, named, output, Buffer, KArg, Planned};
use crate::cuda::launch::{self, count};

/// The bits of `plan` into `y` (`plan.count` elements of its width).
pub fn rng<'a, B: Buffer>(plan: &'a RngPlan, y: &'a mut B) -> Planned<'a, B> {
    let mut args = vec![output(y, plan.count, "the bits")];
    let Some(dims) = launch::elementwise(plan.blocks) else {
        return checks_only(args);
    };
    let (key, (lo, hi)) = (plan.key, plan.counter);
    if plan.philox {
        args.extend([
            KArg::I64(count(plan.count)?),
            KArg::U64(key),
            KArg::U64(lo),
            KArg::U64(hi),
        ]);
    } else {
        args.extend([
            KArg::I64(count(plan.blocks)?),
            KArg::U64(key),
            KArg::U64(lo),
            KArg::I64(count(plan.inner)?),
            KArg::I64(count(plan.half)?),
            KArg::I64(count(plan.full)?),
        ]);
    }
    named(plan.kernel.as_str(), dims, args)
}
