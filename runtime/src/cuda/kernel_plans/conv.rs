//! The launch of the im2col kernel of convolutions
//! (`meshrun_kernels::cuda::conv`), checked against its table.

use std::borrow::Cow;

use meshrun_kernels::cuda::conv::{im2col as im2col_name, im2col_len, im2col_reads};

use crate::cuda::kernel_args::{checks_only, input, named, output, Buffer, KArg, Planned};
use crate::cuda::launch::{self, count};

/// The columns of one chunk (`meta`: `im2col_meta`) of the canonical
/// lhs `x` into `col` (same element type).
pub fn im2col<'a, B: Buffer>(x: &'a B, col: &'a mut B, meta: &'a [i64]) -> Planned<'a, B> {
    if x.elem() != col.elem() {
        return Err(format!("im2col from {} into {}", x.elem(), col.elem()));
    }
    let name = im2col_name(x.elem()).ok_or_else(|| format!("no im2col kernel for {}", x.elem()))?;
    let reads = im2col_reads(meta)?;
    let n = im2col_len(meta);
    let mut args = vec![input(x, reads, "the lhs"), output(col, n, "the columns")];
    let Some(dims) = launch::elementwise(n) else {
        return checks_only(args);
    };
    args.push(KArg::Table(Cow::Borrowed(meta)));
    args.push(KArg::I64(count(n)?));
    named(name, dims, args)
}
