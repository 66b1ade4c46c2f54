//! `stablehlo.dot_general` on the CPU.
//!
//! Each operand is viewed (by permuting axes, without copying) as
//! `[batch..., free..., contracting...]` for the lhs and
//! `[batch..., contracting..., free...]` for the rhs, then reshaped to
//! `[B, M, K]` and `[B, K, N]`. The reshape is a view whenever the grouped
//! axes have compatible strides (always for plain and transposed matmuls);
//! otherwise it copies. One `gemm::gemm` call per batch then writes straight
//! into the row-major `[B, M, N]` result, which is the dot_general result
//! layout `[batch..., lhs free..., rhs free...]`.
//!
//! f32 and f64 run natively in `gemm`; f16, bf16 and mixed-type dots are
//! computed in f32 (f64 if any side is f64) and rounded to the result type
//! (see `compute_type` for why f16 does not use gemm's f16 kernel); i32/i64
//! use a plain loop.

use std::borrow::Cow;

use gemm::Parallelism;
use meshrun_compiler::ir::{DotDims, ElemType, TensorType};
use ndarray::{
    Array2, Array3, ArrayD, ArrayView2, ArrayViewD, ArrayViewMut2, Axis, CowArray, Ix2, Ix3, IxDyn,
};
use num_traits::{WrappingAdd, WrappingMul};

use crate::cpu::convert::convert;
use crate::cpu::permute::{copy_tiles, to_row_major};
use crate::error::{KernelError, Result};
use crate::tensor::{dims_of, HostElem, HostTensor};

const OP: &str = "stablehlo.dot_general";

/// How to view the operands as batched matrices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DotPlan {
    /// Axis order that makes the lhs `[batch, free, contracting]`.
    pub lhs_perm: Vec<usize>,
    /// Axis order that makes the rhs `[batch, contracting, free]`.
    pub rhs_perm: Vec<usize>,
    pub batch: usize,
    /// How many batch dimensions there are.
    pub batch_rank: usize,
    pub m: usize,
    pub k: usize,
    pub n: usize,
    /// `[batch dims, lhs free dims, rhs free dims]`.
    pub out_shape: Vec<usize>,
}

fn axes(side: &str, what: &str, list: &[i64], rank: usize) -> Result<Vec<usize>> {
    list.iter()
        .map(|&d| {
            usize::try_from(d)
                .ok()
                .filter(|&d| d < rank)
                .ok_or_else(|| {
                    KernelError::invalid(
                        OP,
                        format!("{side} {what} dimension {d} is out of range for rank {rank}"),
                    )
                })
        })
        .collect()
}

impl DotPlan {
    /// Validate `dims` against the operand shapes and derive the views.
    pub fn new(lhs: &[usize], rhs: &[usize], dims: &DotDims) -> Result<DotPlan> {
        let lb = axes("lhs", "batching", &dims.lhs_batch, lhs.len())?;
        let rb = axes("rhs", "batching", &dims.rhs_batch, rhs.len())?;
        let lc = axes("lhs", "contracting", &dims.lhs_contract, lhs.len())?;
        let rc = axes("rhs", "contracting", &dims.rhs_contract, rhs.len())?;
        if lb.len() != rb.len() || lc.len() != rc.len() {
            return Err(KernelError::invalid(
                OP,
                "lhs and rhs have different numbers of batching or contracting dimensions",
            ));
        }
        let free = |rank: usize, used: &[usize], side: &str| -> Result<Vec<usize>> {
            let mut seen = vec![false; rank];
            for &d in used {
                if std::mem::replace(&mut seen[d], true) {
                    return Err(KernelError::invalid(
                        OP,
                        format!("{side} dimension {d} is listed twice"),
                    ));
                }
            }
            Ok((0..rank).filter(|&d| !seen[d]).collect())
        };
        let lf = free(lhs.len(), &[lb.clone(), lc.clone()].concat(), "lhs")?;
        let rf = free(rhs.len(), &[rb.clone(), rc.clone()].concat(), "rhs")?;
        for (what, l, r) in [("batching", &lb, &rb), ("contracting", &lc, &rc)] {
            for (&a, &b) in l.iter().zip(r.iter()) {
                if lhs[a] != rhs[b] {
                    return Err(KernelError::invalid(
                        OP,
                        format!(
                            "{what} dimensions differ in size: lhs dim {a} is {} but rhs dim {b} is {}",
                            lhs[a], rhs[b]
                        ),
                    ));
                }
            }
        }
        let prod = |shape: &[usize], ds: &[usize]| ds.iter().map(|&d| shape[d]).product();
        let out_shape = lb
            .iter()
            .map(|&d| lhs[d])
            .chain(lf.iter().map(|&d| lhs[d]))
            .chain(rf.iter().map(|&d| rhs[d]))
            .collect();
        Ok(DotPlan {
            batch: prod(lhs, &lb),
            batch_rank: lb.len(),
            m: prod(lhs, &lf),
            k: prod(lhs, &lc),
            n: prod(rhs, &rf),
            lhs_perm: [lb, lf, lc].concat(),
            rhs_perm: [rb, rc, rf].concat(),
            out_shape,
        })
    }
}

/// `dot_general(lhs, rhs)` with result type `out`. `par` is handed to
/// `gemm`: `Parallelism::None` inside a simulated device (one thread per
/// device), `Parallelism::Rayon(n)` to use `n` threads (0 = all).
pub fn dot_general(
    lhs: &HostTensor,
    rhs: &HostTensor,
    dims: &DotDims,
    out: &TensorType,
    par: Parallelism,
) -> Result<HostTensor> {
    let plan = DotPlan::new(lhs.shape(), rhs.shape(), dims)?;
    if dims_of(out)? != plan.out_shape {
        return Err(KernelError::invalid(
            OP,
            format!(
                "result type {out} does not match the operands (expected shape {:?})",
                plan.out_shape
            ),
        ));
    }
    let compute = compute_type(lhs.elem_type(), rhs.elem_type(), out.elem)?;
    let (l, r) = (as_type(lhs, compute)?, as_type(rhs, compute)?);
    let result = match (l.as_ref(), r.as_ref()) {
        (HostTensor::F32(a), HostTensor::F32(b)) => HostTensor::F32(gemm_dot(a, b, &plan, par)?),
        (HostTensor::F64(a), HostTensor::F64(b)) => HostTensor::F64(gemm_dot(a, b, &plan, par)?),
        (HostTensor::I32(a), HostTensor::I32(b)) => HostTensor::I32(loop_dot(a, b, &plan)?),
        (HostTensor::I64(a), HostTensor::I64(b)) => HostTensor::I64(loop_dot(a, b, &plan)?),
        _ => return Err(KernelError::unsupported(OP, compute)),
    };
    if result.elem_type() == out.elem {
        Ok(result)
    } else {
        convert(&result, out.elem)
    }
}

/// `t` in element type `elem`, converted only if needed.
fn as_type(t: &HostTensor, elem: ElemType) -> Result<Cow<'_, HostTensor>> {
    if t.elem_type() == elem {
        Ok(Cow::Borrowed(t))
    } else {
        convert(t, elem).map(Cow::Owned)
    }
}

/// The type a dot computes in: the common type when lhs, rhs and result
/// agree and a kernel exists for it; otherwise f32 for floats (f64 if any
/// side is f64) and i64 for integers. f16 and bf16 always go through f32:
/// `gemm`'s own f16 kernel accumulates in f16 (a 256-term dot of 0.1s comes
/// out 1.8% low), while XLA accumulates 16-bit dots in f32.
fn compute_type(l: ElemType, r: ElemType, out: ElemType) -> Result<ElemType> {
    use ElemType as E;
    let all = [l, r, out];
    if l == r && r == out && matches!(l, E::F32 | E::F64 | E::I32 | E::I64) {
        Ok(l)
    } else if all.iter().all(|t| t.is_float()) {
        Ok(if all.contains(&E::F64) {
            E::F64
        } else {
            E::F32
        })
    } else if all.iter().all(|t| matches!(t, E::I32 | E::I64)) {
        Ok(E::I64)
    } else {
        let bad = all.into_iter().find(|t| !t.is_float()).unwrap_or(l);
        Err(KernelError::unsupported(OP, bad))
    }
}

/// Element types handed to `gemm::gemm` (it also has an f16 kernel, which
/// meshrun does not use: see `compute_type`).
pub trait GemmElem: HostElem + sealed::Sealed {
    const ZERO: Self;
    const ONE: Self;
}
mod sealed {
    /// Keeps `GemmElem` to the types `gemm` supports.
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

impl GemmElem for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
}
impl GemmElem for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
}

/// The operands with axes permuted to `[batch, free, contracting]` and
/// `[batch, contracting, free]` (views, no copy).
fn permuted<'a, T>(
    lhs: &'a ArrayD<T>,
    rhs: &'a ArrayD<T>,
    plan: &DotPlan,
) -> (ArrayViewD<'a, T>, ArrayViewD<'a, T>) {
    (
        lhs.view().permuted_axes(plan.lhs_perm.clone()),
        rhs.view().permuted_axes(plan.rhs_perm.clone()),
    )
}

/// The permuted operands as `[B, M, K]` and `[B, K, N]`: views when their
/// strides allow grouping the axes, copies otherwise.
fn batched<'a, T: Clone>(
    lhs: &'a ArrayViewD<'_, T>,
    rhs: &'a ArrayViewD<'_, T>,
    plan: &DotPlan,
) -> Result<(CowArray<'a, T, Ix3>, CowArray<'a, T, Ix3>)> {
    let reshape_err = |e: ndarray::ShapeError| KernelError::invalid(OP, format!("reshape: {e}"));
    let l = lhs
        .to_shape((plan.batch, plan.m, plan.k))
        .map_err(reshape_err)?;
    let r = rhs
        .to_shape((plan.batch, plan.k, plan.n))
        .map_err(reshape_err)?;
    Ok((l, r))
}

/// A permuted operand's matrices, one per batch in row-major batch
/// order: the view indexed by each of its `batch_rank` leading axes.
fn batch_items<T>(view: ArrayViewD<'_, T>, batch_rank: usize) -> Vec<ArrayViewD<'_, T>> {
    let mut items = vec![view];
    for _ in 0..batch_rank {
        items = items
            .into_iter()
            .flat_map(|v| {
                (0..v.len_of(Axis(0))).map(move |i| v.clone().index_axis_move(Axis(0), i))
            })
            .collect();
    }
    items
}

/// Each batch's matrix as `rows x cols`: a view when its axes group
/// (whatever the batch axes' strides), a copy otherwise. Grouping the
/// batch axes too, as [`batched`] does, copied the operands of every
/// attention product whose heads lie between the tokens and the head
/// width (`[batch, tokens, heads, width]`, batch dims 0 and 2).
fn matrices<'a, T: Clone>(
    items: &'a [ArrayViewD<'_, T>],
    rows: usize,
    cols: usize,
) -> Result<Vec<CowArray<'a, T, Ix2>>> {
    items
        .iter()
        .map(|v| {
            v.to_shape((rows, cols))
                .map_err(|e| KernelError::invalid(OP, format!("reshape: {e}")))
        })
        .collect()
}

fn finish<T>(out: Array3<T>, plan: &DotPlan) -> Result<ArrayD<T>> {
    out.into_shape_with_order(IxDyn(&plan.out_shape))
        .map_err(|e| KernelError::invalid(OP, format!("result reshape: {e}")))
}

/// Where a tile of a dot's `[B, M, N]` result lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TileAt {
    pub batch: usize,
    pub row: usize,
    pub col: usize,
}

/// Called on each tile of a dot's result right after `gemm` wrote it, on
/// the thread that wrote it, while the tile is still in that core's cache
/// (`dot_chain` runs a fused element-wise chain there). The tiles are
/// those the product is computed in anyway, so a hook never changes the
/// dot's bits.
pub type TileHook<'h, T> = &'h (dyn Fn(TileAt, ArrayViewMut2<'_, T>) + Sync);

/// The batched matmul through `gemm`, one call per batch.
pub fn gemm_dot<T: GemmElem>(
    lhs: &ArrayD<T>,
    rhs: &ArrayD<T>,
    plan: &DotPlan,
    par: Parallelism,
) -> Result<ArrayD<T>> {
    gemm_dot_then(lhs, rhs, plan, par, None)
}

/// [`gemm_dot`], calling `hook` on each tile of the result once it is
/// computed.
pub fn gemm_dot_then<T: GemmElem>(
    lhs: &ArrayD<T>,
    rhs: &ArrayD<T>,
    plan: &DotPlan,
    par: Parallelism,
    hook: Option<TileHook<'_, T>>,
) -> Result<ArrayD<T>> {
    let (lp, rp) = permuted(lhs, rhs, plan);
    let (li, ri) = (
        batch_items(lp, plan.batch_rank),
        batch_items(rp, plan.batch_rank),
    );
    let (l, r) = (
        matrices(&li, plan.m, plan.k)?,
        matrices(&ri, plan.k, plan.n)?,
    );
    if l.len() != plan.batch || r.len() != plan.batch {
        return Err(KernelError::invalid(OP, "batch dimensions do not match"));
    }
    let out = crate::cpu::alloc::array::<T>(&[plan.batch, plan.m, plan.n]);
    let mut out = out
        .into_dimensionality::<Ix3>()
        .map_err(|e| KernelError::invalid(OP, format!("result: {e}")))?;
    for b in 0..plan.batch {
        let at_batch = move |row: usize, col: usize| TileAt { batch: b, row, col };
        let batch_hook = |row: usize, col: usize, tile: ArrayViewMut2<'_, T>| {
            if let Some(h) = hook {
                h(at_batch(row, col), tile)
            }
        };
        gemm_oriented(
            out.index_axis_mut(Axis(0), b),
            l[b].view(),
            r[b].view(),
            par,
            &batch_hook,
        )?;
    }
    finish(out, plan)
}

/// A hook on tiles of one 2-D product: first row, first column, the tile.
type Hook2<'h, T> = &'h (dyn Fn(usize, usize, ArrayViewMut2<'_, T>) + Sync);

/// `dst = lhs · rhs` (`dst` row-major) in the orientation `gemm` runs fast.
///
/// `gemm` works column-major: for a row-major `dst` it computes
/// `dstᵀ = rhsᵀ · lhsᵀ`, and it is fast when its left operand is
/// contiguous down its columns: here when `rhs` is contiguous along its
/// rows (a plain or `[0]x[0]`-contracted matmul). A `[1]x[1]` contraction
/// (`dy · Wᵀ` in every backward pass) gives a `rhs` contiguous down its
/// columns instead, and ran 3-6x slower (64x1024 · (1024x1024)ᵀ: 4.2-8.2
/// ms against 1.4 ms). Then either `rhs` is copied row-major (`k·n`
/// elements), or the product is computed column-major, with `lhs` made
/// contiguous down its columns if it is not, into a scratch block that is
/// copied into `dst` (`m·n`, plus `m·k`, elements): whichever copies less.
/// A given shape and layout always takes the same path, so runs repeat
/// bitwise.
fn gemm_oriented<T: GemmElem>(
    dst: ArrayViewMut2<'_, T>,
    lhs: ArrayView2<'_, T>,
    rhs: ArrayView2<'_, T>,
    par: Parallelism,
    hook: Hook2<'_, T>,
) -> Result<()> {
    let ((m, k), n) = (lhs.dim(), rhs.ncols());
    let column_dst = short_over_big(m, k, n, par) && column_dst_pays();
    gemm_oriented_with(dst, lhs, rhs, par, column_dst, hook)
}

/// Up to this many rhs elements (`k·n`), a rhs contiguous down its
/// columns goes to `gemm` as it is. Measured (single thread, AVX-512,
/// µs, `gemm` straight vs the rhs copied in 16x16 tiles + `gemm` on the
/// row-major copy): 256x128·128x128 50 vs 47 + 13, 256x1024·1024x128 443
/// vs 366 + 108, 256x128·128x1024 400 vs 388 + 103, 128x256·256x256 121
/// vs 101 + 53, 512³ 1719 vs 1596 + 211: GPT-2's backward `dy·Wᵀ`
/// products. Bigger ones keep the choice of [`gemm_oriented`]'s doc
/// (64x1024·(1024x1024)ᵀ: 1736 straight vs 1192 + the copy or the
/// column-major scratch).
const DIRECT_COLUMN_RHS_MAX: usize = 1 << 18;

/// [`gemm_oriented`], with a plain matmul run into a column-major scratch
/// block when `column_dst` says so. `hook` sees the tiles
/// [`gemm_tiles`] computes straight into `dst`, or all of `dst` once it
/// is copied from a scratch block.
fn gemm_oriented_with<T: GemmElem>(
    dst: ArrayViewMut2<'_, T>,
    lhs: ArrayView2<'_, T>,
    rhs: ArrayView2<'_, T>,
    par: Parallelism,
    column_dst: bool,
    hook: Hook2<'_, T>,
) -> Result<()> {
    let ((m, k), n) = (lhs.dim(), rhs.ncols());
    let unit = |stride: isize, len: usize| stride == 1 || len <= 1;
    if unit(rhs.strides()[1], n) && column_dst {
        // A column-major scratch block, copied into `dst` (m·n elements).
        let mut scratch = two_d(crate::cpu::alloc::array::<T>(&[n, m]))?;
        gemm_threads(scratch.view_mut().reversed_axes(), lhs, rhs, par)?;
        copy_back(scratch.t(), dst, par, hook);
        crate::cpu::alloc::recycle(T::wrap(scratch.into_dyn()));
        return Ok(());
    }
    if unit(rhs.strides()[1], n) || m == 0 || n == 0 || k == 0 {
        return gemm_tiles(dst, lhs, rhs, par, Some(hook));
    }
    if unit(rhs.strides()[0], k) && k * n <= DIRECT_COLUMN_RHS_MAX {
        // `gemm` packs a small rhs contiguous down its columns as it
        // goes, in cache-sized pieces: cheaper than copying it first.
        return gemm_tiles(dst, lhs, rhs, par, Some(hook));
    }
    let lhs_by_columns = unit(lhs.strides()[0], m);
    let via_columns = m * n + if lhs_by_columns { 0 } else { m * k };
    if k * n <= via_columns {
        let r = two_d(to_row_major(rhs.into_dyn()))?;
        gemm_tiles(dst, lhs, r.view(), par, Some(hook))?;
        crate::cpu::alloc::recycle(T::wrap(r.into_dyn()));
        return Ok(());
    }
    // Column-major blocks as row-major ones of the transposed shape, so
    // that they go back to the pool.
    let lhs_t = (!lhs_by_columns)
        .then(|| two_d(to_row_major(lhs.t().into_dyn())))
        .transpose()?;
    let lhs = lhs_t.as_ref().map_or(lhs, |a| a.t());
    let mut scratch = two_d(crate::cpu::alloc::array::<T>(&[n, m]))?;
    gemm_threads(scratch.view_mut().reversed_axes(), lhs, rhs, par)?;
    copy_back(scratch.t(), dst, par, hook);
    crate::cpu::alloc::recycle(T::wrap(scratch.into_dyn()));
    if let Some(a) = lhs_t {
        crate::cpu::alloc::recycle(T::wrap(a.into_dyn()));
    }
    Ok(())
}

/// Copy a product computed column-major into `dst`, and call `hook` on
/// it: in bands of rows, one per thread of `par` (a copy gives the same
/// bits however it is cut).
fn copy_back<T: GemmElem>(
    src: ArrayView2<'_, T>,
    mut dst: ArrayViewMut2<'_, T>,
    par: Parallelism,
    hook: Hook2<'_, T>,
) {
    use rayon::prelude::*;
    let threads = crate::cpu::pieces::threads_of(par);
    let m = dst.nrows();
    if threads < 2 || m < 2 * 16 {
        copy_tiles(src, dst.view_mut());
        hook(0, 0, dst);
        return;
    }
    let height = m.div_ceil(threads).next_multiple_of(16);
    let jobs: Vec<_> = dst
        .axis_chunks_iter_mut(Axis(0), height)
        .zip(src.axis_chunks_iter(Axis(0), height))
        .enumerate()
        .collect();
    jobs.into_par_iter().for_each(|(i, (mut d, s))| {
        copy_tiles(s, d.view_mut());
        hook(i * height, 0, d);
    });
}

/// Whether a single-threaded plain matmul runs faster into a
/// column-major result: a few rows (a per-device block of a sharded
/// batch) against a big rhs (`k·n` ≥ 2M elements, past L2). Measured
/// with `kernels/benches/gemm` (`f32_small_m`, single thread, AVX-512,
/// GFLOP/s row-major vs column-major result, two runs under load):
/// 64x2048·2048x1024 51-53 vs 56-61, 64x1024·1024x2048 53 vs 65-74,
/// 32x2048·2048x1024 30-44 vs 36-66; but 64x1024·1024x512 62-90 vs 52,
/// 16 rows and 128 or more rows were slower column-major.
fn short_over_big(m: usize, k: usize, n: usize, par: Parallelism) -> bool {
    matches!(par, Parallelism::None) && (32..=64).contains(&m) && k * n >= 2 << 20
}

/// Whether this CPU runs [`short_over_big`] products faster column-major:
/// AMD's do (the numbers above are an AMD EPYC's); an Intel Xeon with
/// AVX-512 ran them slower (same bench, one run, GFLOP/s row vs column:
/// 64x2048·2048x1024 125 vs 97, 64x1024·1024x2048 123 vs 75), which made
/// every device's matmul of the 8-device MLP slower. The vendor, not a
/// timing, decides, so that every process on a machine takes the same
/// path (MPI ranks compare bitwise with the CPU backend).
fn column_dst_pays() -> bool {
    static AMD: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AMD.get_or_init(|| {
        std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|info| {
            info.lines()
                .find(|l| l.starts_with("vendor_id"))
                .is_some_and(|l| l.contains("AuthenticAMD"))
        })
    })
}

fn two_d<T>(a: ArrayD<T>) -> Result<Array2<T>> {
    a.into_dimensionality::<Ix2>()
        .map_err(|e| KernelError::invalid(OP, format!("matmul operand: {e}")))
}

/// Up to this many rows, a threaded product is split by columns, one
/// single-threaded `gemm` per thread: `gemm`'s own threading used ~60% of
/// two cores on the MLP's 64×1024·1024×1024 layer.
const SPLIT_COLUMNS_MAX_M: usize = 512;
/// Columns per part at least (a few of `gemm`'s register tiles).
const MIN_COLUMNS_PER_PART: usize = 64;
/// Rows per part at least when a taller product is split by rows.
const MIN_ROWS_PER_PART: usize = 256;

/// `dst = lhs · rhs` on `par`'s threads (see [`gemm_tiles`]).
pub fn gemm_threads<T: GemmElem>(
    dst: ArrayViewMut2<'_, T>,
    lhs: ArrayView2<'_, T>,
    rhs: ArrayView2<'_, T>,
    par: Parallelism,
) -> Result<()> {
    gemm_tiles(dst, lhs, rhs, par, None)
}

/// `dst = lhs · rhs` on `par`'s threads, in tiles: short, wide products
/// split by columns, taller ones by rows, one part per thread and one
/// single-threaded `gemm` per part; one tile (one `gemm` call) on one
/// thread. `hook` sees each tile right after its `gemm`, on the same
/// thread.
///
/// Rows for the tall products: the same speed as `gemm`'s own threading
/// (two cores, AVX-512: 1024³ 6.1-6.3 vs 6.1 ms, 2048³ 45.2 vs 44.8,
/// 4096×512·512×512 5.37 vs 5.36) and faster on weight gradients
/// (1024×64·64×1024 0.38 vs 0.58 ms, 2048×256·256×2048 6.0 vs 6.2), and
/// each thread's rows can be finished while they are in its cache.
/// (The cut may round differently from a single-threaded call on the
/// whole product; a given shape and `par` always cut alike, so runs
/// repeat bitwise, with or without a hook.)
fn gemm_tiles<T: GemmElem>(
    mut dst: ArrayViewMut2<'_, T>,
    lhs: ArrayView2<'_, T>,
    rhs: ArrayView2<'_, T>,
    par: Parallelism,
    hook: Option<Hook2<'_, T>>,
) -> Result<()> {
    use rayon::prelude::*;
    let threads = crate::cpu::pieces::threads_of(par);
    let (m, n) = (lhs.nrows(), rhs.ncols());
    let finish = |row: usize, col: usize, tile: ArrayViewMut2<'_, T>| {
        if let Some(h) = hook {
            h(row, col, tile)
        }
    };
    if threads >= 2 && m > SPLIT_COLUMNS_MAX_M {
        let parts = threads.min(m / MIN_ROWS_PER_PART).max(1);
        let height = m.div_ceil(parts);
        let jobs: Vec<_> = dst
            .axis_chunks_iter_mut(Axis(0), height)
            .zip(lhs.axis_chunks_iter(Axis(0), height))
            .enumerate()
            .collect();
        return jobs
            .into_par_iter()
            .map(|(i, (mut d, l))| {
                gemm_2d(d.view_mut(), l, rhs, Parallelism::None)?;
                finish(i * height, 0, d);
                Ok(())
            })
            .collect();
    }
    if threads < 2 || n < 2 * MIN_COLUMNS_PER_PART {
        gemm_2d(dst.view_mut(), lhs, rhs, par)?;
        finish(0, 0, dst);
        return Ok(());
    }
    let parts = threads.min(n / MIN_COLUMNS_PER_PART);
    // Whole 16-column tiles per part, so parts do not share a tile.
    let width = n.div_ceil(parts).next_multiple_of(16);
    let jobs: Vec<_> = dst
        .axis_chunks_iter_mut(Axis(1), width)
        .zip(rhs.axis_chunks_iter(Axis(1), width))
        .enumerate()
        .collect();
    jobs.into_par_iter()
        .map(|(i, (mut d, r))| {
            gemm_2d(d.view_mut(), lhs, r, Parallelism::None)?;
            finish(0, i * width, d);
            Ok(())
        })
        .collect()
}

/// `dst = lhs · rhs` for 2-D views of any strides.
#[allow(unsafe_code)]
pub fn gemm_2d<T: GemmElem>(
    mut dst: ArrayViewMut2<'_, T>,
    lhs: ArrayView2<'_, T>,
    rhs: ArrayView2<'_, T>,
    par: Parallelism,
) -> Result<()> {
    let ((m, k), (k2, n)) = (lhs.dim(), rhs.dim());
    if k != k2 || dst.dim() != (m, n) {
        return Err(KernelError::invalid(
            OP,
            format!(
                "matmul shapes do not fit: {:?} = {:?} x {:?}",
                dst.dim(),
                lhs.dim(),
                rhs.dim()
            ),
        ));
    }
    if m == 0 || n == 0 {
        return Ok(());
    }
    if k == 0 {
        dst.fill(T::ZERO);
        return Ok(());
    }
    let (ds, ls, rs) = (dst.strides(), lhs.strides(), rhs.strides());
    let (d_rs, d_cs) = (ds[0], ds[1]);
    let (l_rs, l_cs) = (ls[0], ls[1]);
    let (r_rs, r_cs) = (rs[0], rs[1]);
    let dst_ptr = dst.as_mut_ptr();
    // SAFETY: `gemm` reads `lhs[i, p]` at `lhs_ptr + i*l_rs + p*l_cs` for
    // i < m, p < k (likewise `rhs` over k x n) and writes `dst[i, j]` at
    // `dst_ptr + i*d_rs + j*d_cs` for i < m, j < n. Those are exactly the
    // elements of the three views (same dims and strides as the views
    // report, checked above), which ndarray guarantees are in bounds. `dst`
    // is a unique borrow, so it cannot alias `lhs` or `rhs`. `T` is f32 or
    // f64 (`GemmElem`), types `gemm` dispatches on.
    // With `read_dst = false`, `alpha` is ignored and dst = 1 * lhs·rhs.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst_ptr,
            d_cs,
            d_rs,
            false,
            lhs.as_ptr(),
            l_cs,
            l_rs,
            rhs.as_ptr(),
            r_cs,
            r_rs,
            T::ZERO,
            T::ONE,
            false,
            false,
            false,
            par,
        );
    }
    Ok(())
}

/// Integer dot: a plain wrapping triple loop per batch.
fn loop_dot<T: HostElem + WrappingAdd + WrappingMul>(
    lhs: &ArrayD<T>,
    rhs: &ArrayD<T>,
    plan: &DotPlan,
) -> Result<ArrayD<T>> {
    let (lp, rp) = permuted(lhs, rhs, plan);
    let (l, r) = batched(&lp, &rp, plan)?;
    let out = Array3::from_shape_fn((plan.batch, plan.m, plan.n), |(b, i, j)| {
        (0..plan.k).fold(T::zero_value(), |acc, p| {
            acc.wrapping_add(&l[(b, i, p)].wrapping_mul(&r[(b, p, j)]))
        })
    });
    finish(out, plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::HostTensor;
    use half::f16;

    /// A tiny deterministic generator (xorshift) for test data in [-1, 1).
    fn random(shape: &[usize], seed: u64) -> ArrayD<f32> {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        ArrayD::from_shape_fn(IxDyn(shape), |_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
    }

    fn dd(lb: &[i64], rb: &[i64], lc: &[i64], rc: &[i64]) -> DotDims {
        DotDims {
            lhs_batch: lb.to_vec(),
            rhs_batch: rb.to_vec(),
            lhs_contract: lc.to_vec(),
            rhs_contract: rc.to_vec(),
        }
    }

    /// dot_general straight from its definition, in f64, element by element.
    fn naive(lhs: &ArrayD<f32>, rhs: &ArrayD<f32>, d: &DotDims) -> ArrayD<f64> {
        let u = |v: &[i64]| v.iter().map(|&x| x as usize).collect::<Vec<_>>();
        let (lb, rb, lc, rc) = (
            u(&d.lhs_batch),
            u(&d.rhs_batch),
            u(&d.lhs_contract),
            u(&d.rhs_contract),
        );
        let lf: Vec<usize> = (0..lhs.ndim())
            .filter(|x| !lb.contains(x) && !lc.contains(x))
            .collect();
        let rf: Vec<usize> = (0..rhs.ndim())
            .filter(|x| !rb.contains(x) && !rc.contains(x))
            .collect();
        let out_shape: Vec<usize> = lb
            .iter()
            .map(|&x| lhs.shape()[x])
            .chain(lf.iter().map(|&x| lhs.shape()[x]))
            .chain(rf.iter().map(|&x| rhs.shape()[x]))
            .collect();
        let csizes: Vec<usize> = lc.iter().map(|&x| lhs.shape()[x]).collect();
        let ncontract: usize = csizes.iter().product();
        ArrayD::from_shape_fn(IxDyn(&out_shape), |idx| {
            let mut li = vec![0; lhs.ndim()];
            let mut ri = vec![0; rhs.ndim()];
            for (i, (&a, &b)) in lb.iter().zip(&rb).enumerate() {
                li[a] = idx[i];
                ri[b] = idx[i];
            }
            for (i, &a) in lf.iter().enumerate() {
                li[a] = idx[lb.len() + i];
            }
            for (i, &b) in rf.iter().enumerate() {
                ri[b] = idx[lb.len() + lf.len() + i];
            }
            let mut sum = 0.0f64;
            for mut flat in 0..ncontract {
                for c in (0..lc.len()).rev() {
                    li[lc[c]] = flat % csizes[c];
                    ri[rc[c]] = flat % csizes[c];
                    flat /= csizes[c];
                }
                sum += lhs[IxDyn(&li)] as f64 * rhs[IxDyn(&ri)] as f64;
            }
            sum
        })
    }

    #[test]
    fn matches_naive_loop_on_random_data() {
        let configs: Vec<(Vec<usize>, Vec<usize>, DotDims)> = vec![
            (vec![7, 5], vec![5, 3], dd(&[], &[], &[1], &[0])),
            (vec![5, 7], vec![5, 3], dd(&[], &[], &[0], &[0])),
            (vec![7, 5], vec![3, 5], dd(&[], &[], &[1], &[1])),
            (vec![4, 6, 5], vec![4, 5, 3], dd(&[0], &[0], &[2], &[1])),
            (vec![6, 4, 5], vec![5, 3, 4], dd(&[1], &[2], &[2], &[0])),
            (
                vec![2, 3, 4, 5],
                vec![3, 2, 5, 6],
                dd(&[0, 1], &[1, 0], &[3], &[2]),
            ),
            (
                vec![3, 4, 2, 5],
                vec![5, 4, 3, 6],
                dd(&[1], &[1], &[0, 3], &[2, 0]),
            ),
            (vec![8], vec![8], dd(&[], &[], &[0], &[0])),
            (vec![4, 3], vec![5, 2], dd(&[], &[], &[], &[])),
            (vec![3, 2, 4], vec![2, 3, 1], dd(&[1, 0], &[0, 1], &[], &[])),
            (vec![70, 40], vec![40, 33], dd(&[], &[], &[1], &[0])),
            // Split by columns on two threads (uneven last part).
            (vec![5, 40], vec![40, 300], dd(&[], &[], &[1], &[0])),
            // A rhs contiguous down its columns (`gemm_oriented`):
            // computed column-major with the lhs copied, ...
            (vec![3, 40], vec![50, 40], dd(&[], &[], &[1], &[1])),
            (vec![2, 3, 40], vec![2, 150, 40], dd(&[0], &[0], &[2], &[2])),
            // ... without copying a lhs contiguous down its columns, ...
            (vec![40, 3], vec![50, 40], dd(&[], &[], &[0], &[1])),
            // ... straight when it is small (`DIRECT_COLUMN_RHS_MAX`), ...
            (vec![60, 4], vec![30, 4], dd(&[], &[], &[1], &[1])),
            // ... or with the rhs copied row-major, when that copies less.
            (vec![257, 513], vec![513, 513], dd(&[], &[], &[1], &[1])),
            // Attention scores with heads between tokens and width: batch
            // axes that do not group, read per batch without a copy.
            (
                vec![2, 5, 3, 4],
                vec![2, 6, 3, 4],
                dd(&[0, 2], &[0, 2], &[3], &[3]),
            ),
            (
                vec![2, 3, 5, 6],
                vec![2, 6, 3, 4],
                dd(&[0, 1], &[0, 2], &[3], &[1]),
            ),
        ];
        for (seed, (ls, rs, d)) in configs.into_iter().enumerate() {
            let (l, r) = (random(&ls, seed as u64), random(&rs, 100 + seed as u64));
            let want = naive(&l, &r, &d);
            let out_ty = TensorType::new(
                want.shape().iter().map(|&x| x as i64).collect::<Vec<_>>(),
                ElemType::F32,
            );
            // f32 rounding of k terms in [-1, 1): 1e-5 up to k = 50.
            let k: usize = d.lhs_contract.iter().map(|&c| ls[c as usize]).product();
            let tol = 1e-5f64.max(2e-7 * k as f64);
            for par in [Parallelism::None, Parallelism::Rayon(2)] {
                let got = dot_general(&l.clone().into(), &r.clone().into(), &d, &out_ty, par)
                    .unwrap_or_else(|e| panic!("{d:?}: {e}"));
                let got = got.to_f64_vec();
                assert_eq!(got.len(), want.len());
                for (g, w) in got.iter().zip(want.iter()) {
                    assert!((g - w).abs() < tol, "{d:?}: {g} vs {w}");
                }
            }
        }
    }

    /// Short products against a big rhs run into a column-major scratch
    /// block (`short_over_big`), batched or not; threaded runs do not.
    #[test]
    fn short_rows_over_a_big_rhs_match_the_naive_loop() {
        let configs = [
            (vec![40, 2048], vec![2048, 1024], dd(&[], &[], &[1], &[0])),
            (
                vec![2, 33, 1024],
                vec![2, 1024, 2048],
                dd(&[0], &[0], &[2], &[1]),
            ),
        ];
        for (seed, (ls, rs, d)) in configs.into_iter().enumerate() {
            let (l, r) = (random(&ls, 7 + seed as u64), random(&rs, 70 + seed as u64));
            let plan = DotPlan::new(l.shape(), r.shape(), &d).unwrap();
            assert!(short_over_big(plan.m, plan.k, plan.n, Parallelism::None));
            let want = naive(&l, &r, &d);
            let out_ty = TensorType::new(
                want.shape().iter().map(|&x| x as i64).collect::<Vec<_>>(),
                ElemType::F32,
            );
            for par in [Parallelism::None, Parallelism::Rayon(2)] {
                let got = dot_general(&l.clone().into(), &r.clone().into(), &d, &out_ty, par)
                    .unwrap_or_else(|e| panic!("{d:?}: {e}"));
                assert_eq!(got.shape(), want.shape());
                for (g, w) in got.to_f64_vec().iter().zip(want.iter()) {
                    assert!((g - w).abs() < 1e-3, "{d:?}: {g} vs {w}");
                }
            }
        }
        // Both orientations on any CPU (only one is taken on a given one).
        let (l, r) = (random(&[40, 2048], 9), random(&[2048, 1024], 90));
        let want = naive(&l, &r, &dd(&[], &[], &[1], &[0]));
        let (l2, r2) = (two_d(l).unwrap(), two_d(r).unwrap());
        for column_dst in [false, true] {
            let mut got = Array2::<f32>::zeros((40, 1024));
            gemm_oriented_with(
                got.view_mut(),
                l2.view(),
                r2.view(),
                Parallelism::None,
                column_dst,
                &|_, _, _| {},
            )
            .unwrap();
            for (g, w) in got.iter().zip(want.iter()) {
                assert!(
                    (*g as f64 - w).abs() < 1e-3,
                    "column_dst {column_dst}: {g} vs {w}"
                );
            }
        }
    }

    #[test]
    fn plain_and_transposed_operands_are_views() {
        let views = |ls: &[usize], rs: &[usize], d: DotDims| {
            let (l, r) = (random(ls, 1), random(rs, 2));
            let plan = DotPlan::new(l.shape(), r.shape(), &d).unwrap();
            let (lp, rp) = permuted(&l, &r, &plan);
            let (lv, rv) = batched(&lp, &rp, &plan).unwrap();
            (plan, lv.is_view(), rv.is_view())
        };
        let (plan, l, r) = views(&[6, 4], &[5, 4], dd(&[], &[], &[1], &[1]));
        assert!(l && r, "a transposed rhs is a strided view");
        assert_eq!((plan.m, plan.k, plan.n), (6, 4, 5));
        let (plan, l, r) = views(&[3, 2, 4], &[2, 4, 5], dd(&[1], &[0], &[2], &[1]));
        assert!(l && r, "a batch dim in the middle is still a view");
        assert_eq!(plan.out_shape, vec![2, 3, 5]);
        // Free dims 0 and 2 around the contracting dim cannot be merged.
        let (_, l, r) = views(&[2, 3, 4], &[3, 5], dd(&[], &[], &[1], &[0]));
        assert!(!l && r, "lhs needs a copy, rhs does not");
    }

    #[test]
    fn batch_axes_that_do_not_group_still_give_views_per_batch() {
        // [batch, tokens, heads, width] with batch dims 0 and 2.
        let d = dd(&[0, 2], &[0, 2], &[3], &[3]);
        let (l, r) = (random(&[2, 5, 3, 4], 1), random(&[2, 6, 3, 4], 2));
        let plan = DotPlan::new(l.shape(), r.shape(), &d).unwrap();
        let (lp, rp) = permuted(&l, &r, &plan);
        let (lv, rv) = batched(&lp, &rp, &plan).unwrap();
        assert!(!lv.is_view() && !rv.is_view(), "grouping the batch copies");
        let (li, ri) = (batch_items(lp, 2), batch_items(rp, 2));
        let (lm, rm) = (matrices(&li, 5, 4).unwrap(), matrices(&ri, 4, 6).unwrap());
        assert_eq!((lm.len(), rm.len()), (6, 6));
        assert!(lm.iter().chain(&rm).all(|m| m.is_view()));
        // Batch 4 is (batch 1, head 1), in row-major batch order.
        assert_eq!(lm[4][(2, 3)], l[[1, 2, 1, 3]]);
        assert_eq!(rm[4][(3, 5)], r[[1, 5, 1, 3]]);
    }

    #[test]
    fn integer_bf16_f16_and_mixed_dots() {
        let dims = dd(&[], &[], &[1], &[0]);
        let a = HostTensor::from_vec(&[2, 2], vec![1i32, 2, 3, 4]).unwrap();
        let b = HostTensor::from_vec(&[2, 2], vec![5i32, 6, 7, 8]).unwrap();
        let ty = TensorType::new(vec![2, 2], ElemType::I32);
        let got = dot_general(&a, &b, &dims, &ty, Parallelism::None).unwrap();
        assert_eq!(
            got,
            HostTensor::from_vec(&[2, 2], vec![19i32, 22, 43, 50]).unwrap()
        );
        for elem in [ElemType::F16, ElemType::BF16, ElemType::F64] {
            let (ca, cb) = (convert(&a, elem).unwrap(), convert(&b, elem).unwrap());
            let got = dot_general(&ca, &cb, &dims, &ty.with_elem(elem), Parallelism::None);
            assert_eq!(
                got.unwrap().to_f64_vec(),
                vec![19.0, 22.0, 43.0, 50.0],
                "{elem}"
            );
        }
        // bf16 x bf16 -> f32 (preferred_element_type) computes in f32.
        let (ca, cb) = (
            convert(&a, ElemType::BF16).unwrap(),
            convert(&b, ElemType::BF16).unwrap(),
        );
        let got = dot_general(
            &ca,
            &cb,
            &dims,
            &ty.with_elem(ElemType::F32),
            Parallelism::None,
        );
        assert_eq!(got.unwrap().elem_type(), ElemType::F32);
    }

    #[test]
    fn f16_accumulates_accurately() {
        let n = 256;
        let l = ArrayD::from_elem(IxDyn(&[1, n]), f16::from_f32(0.1));
        let r = ArrayD::from_elem(IxDyn(&[n, 1]), f16::from_f32(0.1));
        let ty = TensorType::new(vec![1, 1], ElemType::F16);
        let got = dot_general(
            &l.into(),
            &r.into(),
            &dd(&[], &[], &[1], &[0]),
            &ty,
            Parallelism::None,
        );
        let exact = n as f64 * f16::from_f32(0.1).to_f64().powi(2);
        let g = got.unwrap().to_f64_vec()[0];
        assert!((g - exact).abs() <= exact * 2e-3, "{g} vs {exact}");
    }

    #[test]
    fn bad_dims_are_errors() {
        let l: HostTensor = random(&[2, 3], 1).into();
        let r: HostTensor = random(&[4, 5], 2).into();
        let ty = TensorType::new(vec![2, 5], ElemType::F32);
        let cases = [
            (dd(&[], &[], &[1], &[0]), "differ in size"),
            (dd(&[], &[], &[2], &[0]), "out of range"),
            (dd(&[], &[], &[1, 1], &[0, 0]), "listed twice"),
            (dd(&[0], &[], &[1], &[0]), "different numbers"),
        ];
        for (d, msg) in cases {
            let err = dot_general(&l, &r, &d, &ty, Parallelism::None).unwrap_err();
            assert!(err.to_string().contains(msg), "{err}");
        }
        let r2: HostTensor = random(&[3, 5], 2).into();
        let bad_ty = TensorType::new(vec![2, 4], ElemType::F32);
        let err = dot_general(
            &l,
            &r2,
            &dd(&[], &[], &[1], &[0]),
            &bad_ty,
            Parallelism::None,
        );
        assert!(err
            .unwrap_err()
            .to_string()
            .contains("expected shape [2, 5]"));
        let p: HostTensor = ArrayD::from_elem(IxDyn(&[2, 3]), true).into();
        assert!(dot_general(&p, &p, &dd(&[], &[], &[1], &[1]), &ty, Parallelism::None).is_err());
    }
}
