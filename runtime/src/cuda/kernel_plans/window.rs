//! The launches of the window kernels (`meshrun_kernels::cuda::window`):
//! reduce_window and the two passes of select_and_scatter, each buffer
//! checked against the window geometry (`meta`).

use std::borrow::Cow;

use meshrun_kernels::cuda::window::META_PER_DIM;

use crate::cuda::kernel_args::{checks_only, input, named, output, Buffer, KArg, Planned};
use crate::cuda::launch::{self, count};

/// The input and window counts of `meta`, after checking its layout.
pub fn sizes(meta: &[i64]) -> Result<(usize, usize), String> {
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

/// `y[i]` = window `i` of `x` folded from `*init`.
pub fn reduce_window<'a, B: Buffer>(
    name: &'a str,
    x: &'a B,
    init: &'a B,
    y: &'a mut B,
    meta: &'a [i64],
) -> Planned<'a, B> {
    let (input_len, windows) = sizes(meta)?;
    let Some(dims) = launch::elementwise(windows) else {
        return Ok(None);
    };
    let args = vec![
        input(x, input_len, "the input"),
        input(init, 1, "the init value"),
        output(y, windows, "the result"),
        KArg::Table(Cow::Borrowed(meta)),
        KArg::I64(count(windows)?),
    ];
    named(name, dims, args)
}

/// The checks of select_and_scatter, before either pass: `x` and `y` of
/// the input's size, `source` one value per window, a scalar `init`.
pub fn select_and_scatter_checks<'a, B: Buffer>(
    x: &'a B,
    source: &'a B,
    init: &'a B,
    y: &'a mut B,
    meta: &[i64],
) -> Planned<'a, B> {
    let (input_len, windows) = sizes(meta)?;
    checks_only(vec![
        input(x, input_len, "the operand"),
        input(source, windows, "the source"),
        input(init, 1, "the init value"),
        output(y, input_len, "the result"),
    ])
}

/// select_and_scatter's first pass: `select` picks one position of `x`
/// per window into the i64 buffer `sel`.
pub fn select_window<'a, B: Buffer>(
    select: &'a str,
    x: &'a B,
    sel: &'a mut B,
    meta: &'a [i64],
) -> Planned<'a, B> {
    let (input_len, windows) = sizes(meta)?;
    let Some(dims) = launch::elementwise(windows) else {
        return Ok(None);
    };
    let args = vec![
        input(x, input_len, "the operand"),
        output(sel, windows, "the selection"),
        KArg::Table(Cow::Borrowed(meta)),
        KArg::I64(count(windows)?),
    ];
    named(select, dims, args)
}

/// select_and_scatter's second pass: `scatter` folds the `source` values
/// of the windows that picked each position of `y` (`sel`) from `*init`.
pub fn scatter_selected<'a, B: Buffer>(
    scatter: &'a str,
    source: &'a B,
    sel: &'a B,
    init: &'a B,
    y: &'a mut B,
    meta: &'a [i64],
) -> Planned<'a, B> {
    let (input_len, windows) = sizes(meta)?;
    let Some(dims) = launch::elementwise(input_len) else {
        return Ok(None);
    };
    let args = vec![
        input(source, windows, "the source"),
        input(sel, windows, "the selection"),
        input(init, 1, "the init value"),
        output(y, input_len, "the result"),
        KArg::Table(Cow::Borrowed(meta)),
        KArg::I64(count(input_len)?),
    ];
    named(scatter, dims, args)
}
