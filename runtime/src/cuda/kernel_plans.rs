//! The launch of every kernel family of `meshrun_kernels::cuda`, as a
//! [`Plan`]: which kernel, over which grid, with which arguments, each
//! buffer with the elements the kernel touches. `kernels.rs` runs the
//! plans (checks, then one push loop and `ffi::launch`). Pure and generic
//! over [`Buffer`], so the tests check every plan's arguments against
//! the generated kernel's parameter list without a GPU.
//!
//! A plan function returns `Ok(None)` where the launcher has nothing to
//! do (an empty launch, before any check), and a plan without a launch
//! where only the checks remain.

use std::borrow::Cow;

use meshrun_kernels::cuda::names;
use meshrun_kernels::cuda::sort::{SORT_FUNCTION, TOP_K_FUNCTION};
use meshrun_kernels::cuda::{body::REDUCE_BODY_FUNCTION, KernelModule};

use super::kernel_args::{
    checks_only, input, named, output, Buffer, KArg, KernelRef, Plan, Planned,
};
use super::launch::{self, count};
use super::layout::StridedCopy;

mod conv;
mod index;
mod rng;
mod window;

pub use conv::im2col;
pub use index::{copy_bytes, gather, scatter};
pub use rng::rng;
pub use window::{
    reduce_window, scatter_selected, select_and_scatter_checks, select_window, sizes,
};

/// `y[i] = f(x[i])` for `i < n`: unary ops, `is_finite`, conversions.
pub fn map1<'a, B: Buffer>(name: &'a str, x: &'a B, y: &'a mut B, n: usize) -> Planned<'a, B> {
    let Some(dims) = launch::elementwise(n) else {
        return Ok(None);
    };
    let args = vec![
        input(x, n, "the operand"),
        output(y, n, "the result"),
        KArg::I64(count(n)?),
    ];
    named(name, dims, args)
}

/// `y[i] = reduce_precision(x[i])` to the format (exponent_bits >= 1,
/// mantissa_bits >= 0, as the verifier checked).
pub fn reduce_precision<'a, B: Buffer>(
    x: &'a B,
    y: &'a mut B,
    n: usize,
    exponent_bits: i32,
    mantissa_bits: i32,
) -> Planned<'a, B> {
    let Some(dims) = launch::elementwise(n) else {
        return Ok(None);
    };
    if exponent_bits < 1 || mantissa_bits < 0 {
        return Err(format!(
            "reduce_precision to e{exponent_bits}m{mantissa_bits}: no such format"
        ));
    }
    let name = names::reduce_precision(x.elem()).ok_or("reduce_precision of a non-float")?;
    let args = vec![
        input(x, n, "the operand"),
        output(y, n, "the result"),
        KArg::I64(count(n)?),
        KArg::I32(exponent_bits),
        KArg::I32(mantissa_bits),
    ];
    named(name, dims, args)
}

/// `y[i] = f(a[i], b[i])`: binary ops and comparisons.
pub fn map2<'a, B: Buffer>(
    name: &'a str,
    a: &'a B,
    b: &'a B,
    y: &'a mut B,
    n: usize,
) -> Planned<'a, B> {
    let Some(dims) = launch::elementwise(n) else {
        return Ok(None);
    };
    let args = vec![
        input(a, n, "lhs"),
        input(b, n, "rhs"),
        output(y, n, "the result"),
        KArg::I64(count(n)?),
    ];
    named(name, dims, args)
}

/// `select(p, a, b)`; `p` is a scalar unless `p_full`.
pub fn select<'a, B: Buffer>(
    p: &'a B,
    p_full: bool,
    a: &'a B,
    b: &'a B,
    y: &'a mut B,
    n: usize,
) -> Planned<'a, B> {
    let Some(dims) = launch::elementwise(n) else {
        return Ok(None);
    };
    let name = names::select(a.elem().byte_size()).ok_or("select of an odd width")?;
    let args = vec![
        input(p, if p_full { n } else { 1 }, "pred"),
        KArg::I64(p_full as i64),
        input(a, n, "on_true"),
        input(b, n, "on_false"),
        output(y, n, "the result"),
        KArg::I64(count(n)?),
    ];
    named(name, dims, args)
}

/// `clamp(lo, x, hi)`; a bound is a scalar unless its flag is set.
#[allow(clippy::too_many_arguments)]
pub fn clamp<'a, B: Buffer>(
    lo: &'a B,
    lo_full: bool,
    x: &'a B,
    hi: &'a B,
    hi_full: bool,
    y: &'a mut B,
    n: usize,
) -> Planned<'a, B> {
    let Some(dims) = launch::elementwise(n) else {
        return Ok(None);
    };
    let name = names::clamp(x.elem()).ok_or("clamp of an unsupported type")?;
    let args = vec![
        input(lo, if lo_full { n } else { 1 }, "min"),
        KArg::I64(lo_full as i64),
        input(x, n, "the operand"),
        input(hi, if hi_full { n } else { 1 }, "max"),
        KArg::I64(hi_full as i64),
        output(y, n, "the result"),
        KArg::I64(count(n)?),
    ];
    named(name, dims, args)
}

/// `y[i] = offset + (i / inner) % dim_size`, converted to `y`'s type.
pub fn iota<B: Buffer>(
    y: &mut B,
    n: usize,
    dim_size: usize,
    inner: usize,
    offset: i64,
) -> Planned<'_, B> {
    let Some(dims) = launch::elementwise(n) else {
        return Ok(None);
    };
    let name = names::iota(y.elem()).ok_or("iota of an unsupported type")?;
    let args = vec![
        output(y, n, "the result"),
        KArg::I64(count(n)?),
        KArg::I64(count(dim_size.max(1))?),
        KArg::I64(count(inner.max(1))?),
        KArg::I64(offset),
    ];
    named(name, dims, args)
}

/// `y = x` except elements whose index along the dimension is `>=
/// valid`, which become `bits`.
pub fn mask<'a, B: Buffer>(
    x: &'a B,
    y: &'a mut B,
    n: usize,
    dim_size: usize,
    inner: usize,
    valid: i64,
    bits: u64,
) -> Planned<'a, B> {
    let Some(dims) = launch::elementwise(n) else {
        return Ok(None);
    };
    let name = names::mask(x.elem().byte_size()).ok_or("mask of an odd width")?;
    let args = vec![
        input(x, n, "the operand"),
        output(y, n, "the result"),
        KArg::I64(count(n)?),
        KArg::I64(count(dim_size.max(1))?),
        KArg::I64(count(inner.max(1))?),
        KArg::I64(valid),
        KArg::U64(bits),
    ];
    named(name, dims, args)
}

/// One strided copy from `src` into `dst` (same element type); the copy
/// checks its own bounds.
pub fn copy<'a, B: Buffer>(src: &'a B, dst: &'a mut B, copy: &StridedCopy) -> Planned<'a, B> {
    if src.elem() != dst.elem() {
        return Err(format!("a copy from {} into {}", src.elem(), dst.elem()));
    }
    copy.check_bounds(src.elements(), dst.elements())?;
    let copy = copy.simplified();
    let Some(dims) = launch::elementwise(copy.len()) else {
        return Ok(None);
    };
    let name = names::strided_copy(src.elem().byte_size()).ok_or("a copy of an odd width")?;
    let args = vec![
        input(src, 0, "the source"),
        output(dst, 0, "the destination"),
        KArg::Table(Cow::Owned(copy.encode()?)),
    ];
    named(name, dims, args)
}

/// Fold each row of the `outer x red` matrix `x` into `y`, from the
/// scalar `init`.
pub fn reduce<'a, B: Buffer>(
    name: &'a str,
    x: &'a B,
    init: &'a B,
    y: &'a mut B,
    outer: usize,
    red: usize,
) -> Planned<'a, B> {
    let Some(dims) = launch::rows(outer) else {
        return Ok(None);
    };
    let total = outer.checked_mul(red).ok_or("too many elements")?;
    let args = vec![
        input(x, total, "the operand"),
        input(init, 1, "the init value"),
        output(y, outer, "the result"),
        KArg::I64(count(outer)?),
        KArg::I64(count(red)?),
    ];
    named(name, dims, args)
}

/// Fold each row of the `outer x red` matrices `xs` into `ys` with the
/// body of `module` (`meshrun_kernels::cuda::body`), from the scalars
/// `inits`.
pub fn reduce_body<'a, B: Buffer>(
    module: &'a KernelModule,
    xs: &[&'a B],
    inits: &[&'a B],
    ys: &'a mut [B],
    outer: usize,
    red: usize,
) -> Planned<'a, B> {
    let Some(dims) = launch::rows(outer) else {
        return Ok(None);
    };
    if xs.len() != inits.len() || xs.len() != ys.len() {
        return Err(format!(
            "{} inputs, {} init values and {} results",
            xs.len(),
            inits.len(),
            ys.len()
        ));
    }
    let total = outer.checked_mul(red).ok_or("too many elements")?;
    let mut args = Vec::with_capacity(3 * xs.len() + 2);
    for (k, x) in xs.iter().enumerate() {
        args.push(input(*x, total, format!("input {k}")));
    }
    for (k, i) in inits.iter().enumerate() {
        args.push(input(*i, 1, format!("init value {k}")));
    }
    for (k, y) in ys.iter_mut().enumerate() {
        args.push(output(y, outer, format!("result {k}")));
    }
    args.push(KArg::I64(count(outer)?));
    args.push(KArg::I64(count(red)?));
    generated(module, REDUCE_BODY_FUNCTION, dims, args)
}

/// Sort every row of the `rows x n` matrices `xs` together into `ys`
/// with the comparator of `module` (`meshrun_kernels::cuda::sort`);
/// `scratch` holds two `rows x n` index buffers (i64).
pub fn sort_rows<'a, B: Buffer>(
    module: &'a KernelModule,
    xs: &[&'a B],
    ys: &'a mut [B],
    scratch: (&'a mut B, &'a mut B),
    rows: usize,
    n: usize,
) -> Planned<'a, B> {
    let Some(dims) = launch::elementwise(rows) else {
        return Ok(None);
    };
    if xs.len() != ys.len() {
        return Err(format!("{} inputs and {} results", xs.len(), ys.len()));
    }
    let total = rows.checked_mul(n).ok_or("too many elements")?;
    let mut args = Vec::with_capacity(2 * xs.len() + 4);
    for (k, x) in xs.iter().enumerate() {
        args.push(input(*x, total, format!("input {k}")));
    }
    for (k, y) in ys.iter_mut().enumerate() {
        args.push(output(y, total, format!("result {k}")));
    }
    args.push(output(scratch.0, total, "the index scratch"));
    args.push(output(scratch.1, total, "the index scratch"));
    args.push(KArg::I64(count(rows)?));
    args.push(KArg::I64(count(n)?));
    generated(module, SORT_FUNCTION, dims, args)
}

/// The `k` largest elements of each row of the `rows x n` matrix `x`
/// into the `rows x k` matrices `y` and `idx` (i32), by the module of
/// `meshrun_kernels::cuda::sort::top_k_module`.
#[allow(clippy::too_many_arguments)]
pub fn top_k_rows<'a, B: Buffer>(
    module: &'a KernelModule,
    x: &'a B,
    y: &'a mut B,
    idx: &'a mut B,
    scratch: (&'a mut B, &'a mut B),
    rows: usize,
    n: usize,
    k: usize,
) -> Planned<'a, B> {
    let Some(dims) = launch::elementwise(rows) else {
        return Ok(None);
    };
    let total = rows.checked_mul(n).ok_or("too many elements")?;
    let args = vec![
        input(x, total, "the operand"),
        output(y, rows * k, "the values"),
        output(idx, rows * k, "the indices"),
        output(scratch.0, total, "the index scratch"),
        output(scratch.1, total, "the index scratch"),
        KArg::I64(count(rows)?),
        KArg::I64(count(n)?),
        KArg::I64(count(k)?),
    ];
    generated(module, TOP_K_FUNCTION, dims, args)
}

/// `y` = `x` (of `shape`) reversed along `dims`: the strided-copy
/// kernel with the signed descriptor of `super::reverse_copy`.
pub fn reverse<'a, B: Buffer>(
    x: &'a B,
    y: &'a mut B,
    shape: &[usize],
    dims: &[i64],
) -> Planned<'a, B> {
    if x.elem() != y.elem() {
        return Err(format!("a reverse from {} into {}", x.elem(), y.elem()));
    }
    let n: usize = shape.iter().product();
    let mut args = vec![input(x, n, "the operand"), output(y, n, "the result")];
    let Some(launch_dims) = launch::elementwise(n) else {
        return checks_only(args);
    };
    let meta = super::reverse_copy::reverse_meta(shape, dims)?;
    let name = names::strided_copy(x.elem().byte_size()).ok_or("a copy of an odd width")?;
    args.push(KArg::Table(Cow::Owned(meta)));
    named(name, launch_dims, args)
}

/// `y[i]` = the fold of `sources[k][offset_k + i]` over `k` in order.
pub fn reduce_many<'a, B: Buffer>(
    name: &'a str,
    sources: &[(&'a B, usize)],
    y: &'a mut B,
    n: usize,
) -> Planned<'a, B> {
    let Some(dims) = launch::elementwise(n) else {
        return Ok(None);
    };
    if sources.is_empty() {
        return Err("a reduction of no blocks".into());
    }
    for (k, (src, _)) in sources.iter().enumerate() {
        if src.elem() != y.elem() {
            return Err(format!(
                "block {k} is {}, the result {}",
                src.elem(),
                y.elem()
            ));
        }
    }
    let args = vec![
        KArg::Blocks(sources.to_vec(), n),
        KArg::I64(count(sources.len())?),
        output(y, n, "the result"),
        KArg::I64(count(n)?),
    ];
    named(name, dims, args)
}

fn generated<'a, B>(
    module: &'a KernelModule,
    function: &'static str,
    dims: launch::LaunchDims,
    args: Vec<KArg<'a, B>>,
) -> Planned<'a, B> {
    Ok(Some(Plan {
        args,
        launch: Some((KernelRef::Generated(module, function), dims)),
    }))
}

#[cfg(test)]
mod tests {
    //! Every launcher's argument list against the parameter list the
    //! generator wrote for its kernel (read back from the source), over
    //! every element type and width: what `Launcher::run` checks before
    //! each launch, here without a GPU.
    use super::*;
    use crate::cuda::kernel_args::check_signature;
    use meshrun_compiler::ir::ops::rng_bit_generator::RngAlgorithm;
    use meshrun_compiler::ir::ops::scatter::ScatterUpdate;
    use meshrun_compiler::ir::{BinaryOp, CompareDirection, ElemType, ReduceKind, UnaryOp};
    use meshrun_kernels::cuda::names::{DTYPES, WIDTHS};
    use meshrun_kernels::cuda::params::{parameters, Param};
    use meshrun_kernels::cuda::{body, modules, rng::rng_plan, sort, window as kwindow};

    #[derive(Debug)]
    struct Fake {
        len: usize,
        elem: ElemType,
    }

    impl Buffer for Fake {
        fn elements(&self) -> usize {
            self.len
        }
        fn elem(&self) -> ElemType {
            self.elem
        }
    }

    fn buf(elem: ElemType, len: usize) -> Fake {
        Fake { len, elem }
    }

    /// An element type of each byte width.
    fn of_width(w: usize) -> ElemType {
        match w {
            1 => ElemType::I1,
            2 => ElemType::BF16,
            4 => ElemType::F32,
            _ => ElemType::I64,
        }
    }

    struct Sources(Vec<KernelModule>);

    impl Sources {
        fn params(&self, kernel: &KernelRef<'_>) -> Vec<Param> {
            match kernel {
                KernelRef::Named(n) => self.0.iter().find_map(|m| parameters(&m.source, n)),
                KernelRef::Generated(m, f) => parameters(&m.source, f),
            }
            .unwrap_or_else(|| panic!("no kernel {} in the generated sources", kernel.name()))
        }

        /// `plan` launches, its buffers pass their checks and its
        /// arguments are its kernel's parameters; its kernel's name.
        fn check(&self, plan: Planned<'_, Fake>) -> String {
            let plan = plan.unwrap().expect("a launch");
            plan.check_buffers().unwrap();
            let (kernel, _) = plan.launch.as_ref().expect("a kernel");
            let params = self.params(kernel);
            check_signature(kernel.name(), &params, &plan.args).unwrap();
            kernel.name().to_string()
        }
    }

    #[test]
    fn every_launcher_passes_its_kernels_parameters() {
        let src = Sources(modules());
        let n = 6;
        let mut launched = std::collections::HashSet::new();
        macro_rules! check {
            ($plan:expr) => {
                launched.insert(src.check($plan))
            };
        }
        for e in DTYPES {
            let (x, mut y) = (buf(e, n), buf(e, n));
            for &op in UnaryOp::ALL {
                if let Some(name) = names::unary(op, e) {
                    check!(map1(&name, &x, &mut y, n));
                }
            }
            if let Some(name) = names::is_finite(e) {
                check!(map1(&name, &x, &mut buf(ElemType::I1, n), n));
            }
            for to in DTYPES {
                if let Some(name) = names::convert(e, to) {
                    check!(map1(&name, &x, &mut buf(to, n), n));
                }
            }
            if names::reduce_precision(e).is_some() {
                check!(reduce_precision(&x, &mut y, n, 5, 10));
            }
            for &op in BinaryOp::ALL {
                if let Some(name) = names::binary(op, e) {
                    check!(map2(&name, &x, &x, &mut y, n));
                }
            }
            for &dir in CompareDirection::ALL {
                for total in [false, true] {
                    if let Some(name) = names::compare(dir, total, e) {
                        check!(map2(&name, &x, &x, &mut buf(ElemType::I1, n), n));
                    }
                }
            }
            let (p, one) = (buf(ElemType::I1, 1), buf(e, 1));
            check!(select(&p, false, &x, &x, &mut y, n));
            check!(clamp(&one, false, &x, &x, true, &mut y, n));
            check!(iota(&mut y, n, 3, 2, 1));
            check!(mask(&x, &mut y, n, 3, 2, 1, 0));
            check!(copy(&x, &mut y, &StridedCopy::contiguous(n)));
            check!(reverse(&x, &mut y, &[2, 3], &[1]));
            for &kind in ReduceKind::ALL {
                if let Some(name) = names::reduce(kind, e) {
                    check!(reduce(&name, &x, &one, &mut buf(e, 2), 2, 3));
                }
                if let Some(name) = names::reduce_many(kind, e) {
                    check!(reduce_many(&name, &[(&x, 0), (&x, 2)], &mut buf(e, 4), 4));
                }
                // One window dimension: 4 inputs, 2 windows of 2.
                let meta = [1, 4, 2, 2, 2, 1, 1, 0];
                if let Some(name) = kwindow::reduce_window(kind, e) {
                    check!(reduce_window(
                        &name,
                        &buf(e, 4),
                        &one,
                        &mut buf(e, 2),
                        &meta
                    ));
                }
                if let Some(name) = kwindow::scatter_selected(kind, e) {
                    let sel = buf(ElemType::I64, 2);
                    let source = buf(e, 2);
                    check!(scatter_selected(&name, &source, &sel, &one, &mut y, &meta));
                }
            }
            for dir in kwindow::SELECT_DIRECTIONS {
                if let Some(name) = kwindow::select_window(dir, e) {
                    let meta = [1, 4, 2, 2, 2, 1, 1, 0];
                    let mut sel = buf(ElemType::I64, 2);
                    check!(select_window(&name, &buf(e, 4), &mut sel, &meta));
                }
            }
            // One operand dimension of 4 walked by 2 one-element slices.
            let walk = [1, 0, 0, 0, 2, 4, 2, 0, 0, -1, 1, 0, 0, 0];
            let idx = buf(ElemType::I64, 2);
            check!(gather(&x, &idx, &mut buf(e, 2), &walk));
            // The same walk as a Target scatter (a window of 2 that starts
            // move): both strategies' kernels.
            let target = [1, 0, 0, 0, 2, 4, 2, 0, 0, 0, 2, 0, 0, 0];
            for walk in [walk, target] {
                let updates = std::iter::once(ScatterUpdate::Replace)
                    .chain(ReduceKind::ALL.iter().map(|&k| ScatterUpdate::Combine(k)));
                for update in updates {
                    let strategy = index_strategy(&walk);
                    if meshrun_kernels::cuda::index::scatter(strategy, update, e).is_some() {
                        check!(scatter(update, &idx, &buf(e, 2), &mut y, &walk));
                    }
                }
            }
            let from = buf(e, 8);
            for to in DTYPES {
                let mut to = buf(to, 8);
                check!(copy_bytes(&from, &mut to, 8));
            }
        }
        for w in WIDTHS {
            let e = of_width(w);
            let (x, mut y) = (buf(e, n), buf(e, n));
            check!(select(&buf(ElemType::I1, n), true, &x, &x, &mut y, n));
            check!(mask(&x, &mut y, n, 3, 2, 1, 0));
            let words = n * w;
            for (algorithm, state) in [
                (RngAlgorithm::ThreeFry, vec![1, 2]),
                (RngAlgorithm::Philox, vec![1, 2, 3]),
            ] {
                let plan = rng_plan(algorithm, &state, &[2, 3], w).unwrap();
                check!(rng(&plan, &mut buf(e, words)));
            }
        }
        // im2col of one spatial dimension: 3 inputs, 2 outputs of 2 taps.
        let meta = [1, 1, 0, 1, 0, 2, 2, 1, 1, 1, 3, 2, 2, 14, 0, 1, 1, 2];
        for e in [ElemType::BF16, ElemType::F32, ElemType::F64] {
            check!(im2col(&buf(e, 3), &mut buf(e, 4), &meta));
        }
        for m in body::sample_modules() {
            let k = parameters(&m.source, body::REDUCE_BODY_FUNCTION)
                .unwrap()
                .iter()
                .filter(|p| p.name.starts_with('x'))
                .count();
            let types = buffer_types(&m, body::REDUCE_BODY_FUNCTION, 'x');
            let xs: Vec<Fake> = types.iter().map(|&e| buf(e, 6)).collect();
            let inits: Vec<Fake> = types.iter().map(|&e| buf(e, 1)).collect();
            let mut ys: Vec<Fake> = types.iter().map(|&e| buf(e, 2)).collect();
            let (xr, ir): (Vec<&Fake>, Vec<&Fake>) = (xs.iter().collect(), inits.iter().collect());
            assert_eq!(xr.len(), k);
            src.check(reduce_body(&m, &xr, &ir, &mut ys, 2, 3));
        }
        let sorts = sort::sample_modules().into_iter();
        for m in sorts.filter(|m| m.functions.iter().any(|f| f == SORT_FUNCTION)) {
            let types = buffer_types(&m, SORT_FUNCTION, 'x');
            let xs: Vec<Fake> = types.iter().map(|&e| buf(e, 6)).collect();
            let mut ys: Vec<Fake> = types.iter().map(|&e| buf(e, 6)).collect();
            let (mut p, mut t) = (buf(ElemType::I64, 6), buf(ElemType::I64, 6));
            let xr: Vec<&Fake> = xs.iter().collect();
            src.check(sort_rows(&m, &xr, &mut ys, (&mut p, &mut t), 2, 3));
        }
        for e in DTYPES {
            let m = sort::top_k_module(e).unwrap();
            let (mut y, mut idx) = (buf(e, 4), buf(ElemType::I32, 4));
            let (mut p, mut t) = (buf(ElemType::I64, 6), buf(ElemType::I64, 6));
            let x = buf(e, 6);
            src.check(top_k_rows(
                &m,
                &x,
                &mut y,
                &mut idx,
                (&mut p, &mut t),
                2,
                3,
                2,
            ));
        }
        // Every kernel of the fixed modules but the fills (no launcher).
        let fixed: Vec<&String> = src
            .0
            .iter()
            .flat_map(|m| &m.functions)
            .filter(|f| !f.starts_with("fill_"))
            .collect();
        let missed: Vec<&&String> = fixed.iter().filter(|f| !launched.contains(**f)).collect();
        assert!(missed.is_empty(), "no launcher checked {missed:?}");
    }

    fn index_strategy(meta: &[i64]) -> meshrun_kernels::cuda::index::ScatterStrategy {
        meshrun_kernels::cuda::index::scatter_strategy(meta)
    }

    /// The element types of the buffer parameters `<prefix><k>` of
    /// `function`.
    fn buffer_types(m: &KernelModule, function: &str, prefix: char) -> Vec<ElemType> {
        parameters(&m.source, function)
            .unwrap()
            .iter()
            .filter(|p| p.pointer && p.name.starts_with(prefix))
            .map(|p| {
                DTYPES
                    .into_iter()
                    .find(|&e| names::cuda_type(e) == Some(p.ty.as_str()))
                    .unwrap_or_else(|| panic!("no element type is {}", p.ty))
            })
            .collect()
    }

    #[test]
    fn a_launcher_that_drifts_from_its_kernel_is_refused() {
        let src = modules();
        let params = parameters(&src[0].source, "unary_tanh_f32").unwrap();
        let (x, mut y) = (buf(ElemType::F32, 4), buf(ElemType::F32, 4));
        let ok = vec![input(&x, 4, "x"), KArg::I64(4)];
        let err = check_signature("unary_tanh_f32", &params, &ok).unwrap_err();
        assert!(err.contains("a different count"), "{err}");
        let swapped = vec![output(&mut y, 4, "y"), input(&x, 4, "x"), KArg::I64(4)];
        let err = check_signature("unary_tanh_f32", &params, &swapped).unwrap_err();
        assert!(err.contains("argument 0"), "{err}");
        let wide = buf(ElemType::F64, 4);
        let mut y = buf(ElemType::F32, 4);
        let typed = vec![input(&wide, 4, "x"), output(&mut y, 4, "y"), KArg::I64(4)];
        let err = check_signature("unary_tanh_f32", &params, &typed).unwrap_err();
        assert!(err.contains("of f64 for `const float* x`"), "{err}");
        let small = buf(ElemType::F32, 2);
        let mut y = buf(ElemType::F32, 4);
        let plan = map1("unary_tanh_f32", &small, &mut y, 4).unwrap().unwrap();
        assert_eq!(
            plan.check_buffers().unwrap_err(),
            "the operand holds 2 elements; the kernel reads or writes 4"
        );
    }
}
