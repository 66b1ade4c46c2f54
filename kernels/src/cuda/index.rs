//! CUDA kernels of `gather` and `scatter` (`index.cuh`), their names, and
//! the walk of start indices and windows they read ([`walk_meta`]), built
//! from the same dimension numbers and shapes as the CPU kernel's
//! `SliceWalk` (`cpu/gather.rs`).
//!
//! Gather runs one thread per result element (starts clamped as the CPU
//! clamps them). Scatter never uses atomics, so results are bitwise the
//! CPU's (float sums depend on order): every update is applied by the one
//! thread that owns its target, in the CPU's order (batch points
//! row-major). Two launch shapes do that ([`ScatterStrategy`]): one thread
//! per input element that scans every point (any dimension numbers), or,
//! when windows of different points can only meet at the same window
//! offset, one thread per window element that walks the points.
//!
//! Parallelism: `Target` runs |input| threads of P points each (P: batch
//! points), `Window` runs one thread per window element, P points each
//! (`x.at[ids].add(rows)`: one thread per element of a row). A scatter of
//! scalars (`x.at[ids].add(v)` on a vector) is then a single thread; a
//! per-target ordering of the points (a sort of their targets) would
//! spread it over the targets, and is not done.
//!
//! None of this has run on a GPU (none is lent to this project): NVRTC
//! compiles the kernels in CI, and the tests run the kernels' index
//! arithmetic, ported line by line ([`gather_emulated`],
//! [`scatter_emulated`]), and `index.cuh` itself built as host C++ (one
//! thread at a time, `host_run`), against the CPU kernels on random
//! dimension numbers, shapes and ids (out of range and repeated). Neither
//! can show a race: the per-window-element launch relies on the
//! disjointness argument in `index.cuh`.

use meshrun_compiler::ir::ops::index_dims::IndexDims;
use meshrun_compiler::ir::ops::scatter::ScatterUpdate;
use meshrun_compiler::ir::{ElemType, ReduceKind};

use super::generate::{reducer, Entries};
use super::names::{self, cuda_type, width_type, DTYPES, WIDTHS};

/// The template source, included after `templates.cuh`.
pub(crate) const SOURCE: &str = include_str!("index.cuh");

/// Values before the per-batch-dim entries (`IHDR` in `index.cuh`).
pub const HEADER: usize = 7;
/// Values per batch dimension (`IBATCH`).
pub const PER_BATCH: usize = 4;
/// Values per operand dimension (`IDIM`).
pub const PER_DIM: usize = 7;

/// How a scatter is spread over threads (both give the CPU's result).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScatterStrategy {
    /// One thread per input element, scanning every batch point.
    Target,
    /// One thread per window element, walking the batch points.
    Window,
}

impl ScatterStrategy {
    fn name(self) -> &'static str {
        match self {
            ScatterStrategy::Target => "target",
            ScatterStrategy::Window => "window",
        }
    }
}

fn row_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    strides
}

/// The table the gather and scatter kernels read (layout in `index.cuh`)
/// for an operand (scatter: input) of `operand` shape, indices of
/// `indices` shape and slices (gather: result, scatter: updates) of
/// `slices` shape. `slice_sizes` is a gather's: its mapped starts are
/// clamped to `dim - slice_size`; `None` for a scatter. Errors on
/// dimension numbers that do not fit the shapes (the verifier rejects
/// them first) or windows larger than the operand, so the kernels never
/// read outside their buffers.
pub fn walk_meta(
    dims: &IndexDims,
    operand: &[usize],
    indices: &[usize],
    slices: &[usize],
    slice_sizes: Option<&[i64]>,
) -> Result<Vec<i64>, String> {
    let rank = operand.len();
    let irank = indices.len();
    let ivd = usize::try_from(dims.index_vector_dim)
        .ok()
        .filter(|&v| v <= irank)
        .ok_or_else(|| format!("index_vector_dim {}", dims.index_vector_dim))?;
    let istrides = row_major_strides(indices);
    let sstrides = row_major_strides(slices);
    let ibatch = dims.indices_batch_dims(irank);
    let sbatch = dims.slices_batch_dims(slices.len());
    if ibatch.len() != sbatch.len() {
        return Err(format!(
            "{} batch dims in the indices but {} in the slices",
            ibatch.len(),
            sbatch.len()
        ));
    }
    let batch: Vec<usize> = ibatch.iter().map(|&d| indices[d]).collect();
    if let Some(j) = (0..batch.len()).find(|&j| slices[sbatch[j]] != batch[j]) {
        return Err(format!("batch dim {j} differs between indices and slices"));
    }
    let vector_len = if ivd < irank { indices[ivd] } else { 1 };
    if dims.start_index_map.len() > vector_len {
        return Err(format!(
            "{} start dims for index vectors of {vector_len}",
            dims.start_index_map.len()
        ));
    }
    let dim_of = |d: i64| {
        usize::try_from(d)
            .ok()
            .filter(|&d| d < rank)
            .ok_or_else(|| format!("operand dimension {d} of rank {rank}"))
    };
    let mut source = vec![-1i64; rank];
    for (k, &od) in dims.start_index_map.iter().enumerate() {
        source[dim_of(od)?] = k as i64;
    }
    for (&ib, &ob) in dims
        .indices_batching_dims
        .iter()
        .zip(&dims.operand_batching_dims)
    {
        let j = ibatch
            .iter()
            .position(|&d| d as i64 == ib)
            .ok_or_else(|| format!("indices batching dim {ib}"))?;
        let od = dim_of(ob)?;
        if batch[j] > operand[od] {
            return Err(format!("batching dim {ob} is shorter than its batch"));
        }
        source[od] = -2 - j as i64;
    }
    let window_dims = dims.operand_window_dims(rank);
    if window_dims.len() != dims.window_dims.len() {
        return Err(format!(
            "{} window dims in the slices for {} in the operand",
            dims.window_dims.len(),
            window_dims.len()
        ));
    }
    let (mut extent, mut wstride) = (vec![1usize; rank], vec![0usize; rank]);
    for (&od, &sd) in window_dims.iter().zip(&dims.window_dims) {
        let sd = usize::try_from(sd)
            .ok()
            .filter(|&d| d < slices.len())
            .ok_or_else(|| format!("window dim {sd}"))?;
        extent[od] = slices[sd];
        wstride[od] = sstrides[sd];
    }
    let mut limit = vec![-1i64; rank];
    if let Some(sizes) = slice_sizes {
        if sizes.len() != rank {
            return Err(format!("{} slice sizes for rank {rank}", sizes.len()));
        }
        if let Some(d) = (0..rank).find(|&d| extent[d] > operand[d]) {
            return Err(format!("a window of {} in dimension {d}", extent[d]));
        }
        for &od in &dims.start_index_map {
            let d = dim_of(od)?;
            limit[d] = (operand[d] as i64 - sizes[d]).max(0);
        }
    }
    let ostrides = row_major_strides(operand);
    let count = |s: &[usize]| s.iter().product::<usize>() as i64;
    let mut meta = vec![
        rank as i64,
        batch.len() as i64,
        if ivd < irank { istrides[ivd] as i64 } else { 0 },
        count(&batch),
        count(slices),
        count(operand),
        count(indices),
    ];
    for j in 0..batch.len() {
        meta.extend([
            batch[j] as i64,
            count(&batch[j + 1..]),
            istrides[ibatch[j]] as i64,
            sstrides[sbatch[j]] as i64,
        ]);
    }
    for d in 0..rank {
        meta.extend([
            operand[d] as i64,
            ostrides[d] as i64,
            source[d],
            extent[d] as i64,
            limit[d],
            wstride[d] as i64,
            count(&extent[d + 1..]),
        ]);
    }
    Ok(meta)
}

/// `(slices, operand, indices)` element counts of a [`walk_meta`] table,
/// after checking its length.
pub fn walk_sizes(meta: &[i64]) -> Result<(usize, usize, usize), String> {
    let get = |i: usize| -> Result<usize, String> {
        meta.get(i)
            .and_then(|&v| usize::try_from(v).ok())
            .ok_or_else(|| "a bad gather/scatter table".to_string())
    };
    let (rank, batch) = (get(0)?, get(1)?);
    if meta.len() != HEADER + PER_BATCH * batch + PER_DIM * rank {
        return Err(format!("a gather/scatter table of {} values", meta.len()));
    }
    Ok((get(4)?, get(5)?, get(6)?))
}

/// The elements of one window (the threads of [`ScatterStrategy::Window`]).
pub fn window_volume(meta: &[i64]) -> usize {
    let at = HEADER + PER_BATCH * meta[1] as usize;
    (0..meta[0] as usize)
        .map(|d| meta[at + PER_DIM * d + 3] as usize)
        .product()
}

/// [`ScatterStrategy::Window`] when every operand dim a start can move
/// (start index or batching dim) has window extent 1, so windows of
/// different points meet only at the same window offset (JAX's
/// `x.at[ids].add(rows)`, embedding gradients); otherwise `Target`.
pub fn scatter_strategy(meta: &[i64]) -> ScatterStrategy {
    let at = HEADER + PER_BATCH * meta[1] as usize;
    let disjoint = (0..meta[0] as usize).all(|d| {
        let p = &meta[at + PER_DIM * d..];
        p[2] == -1 || p[3] == 1
    });
    if disjoint {
        ScatterStrategy::Window
    } else {
        ScatterStrategy::Target
    }
}

/// `gather_b<w>(const W* x, const long long* idx, W* y, const long long*
/// meta, long long n)`, by the width of `e` (it moves bits, so any type
/// the runtime stores, `ui32` / `ui64` included).
pub fn gather(e: ElemType) -> Option<String> {
    let w = e.byte_size();
    width_type(w).map(|_| format!("gather_b{w}"))
}

/// The region as a kernel-name part: `replace` (width-generic, `b<w>`, any
/// stored type) or
/// a reduction on `e` (`add_f32`); i1 folds every reduction into `and` /
/// `or` as the CPU kernel does. `None` where the CPU kernel has no such
/// region (`and` / `or` on floats, on integers only through the verifier's
/// refusal).
fn region(update: ScatterUpdate, e: ElemType) -> Option<String> {
    match update {
        ScatterUpdate::Replace => {
            let w = e.byte_size();
            width_type(w).map(|_| format!("replace_b{w}"))
        }
        ScatterUpdate::Combine(kind) => {
            let s = names::suffix(e)?;
            let kind = if e == ElemType::I1 {
                match kind {
                    ReduceKind::And | ReduceKind::Minimum | ReduceKind::Multiply => ReduceKind::And,
                    _ => ReduceKind::Or,
                }
            } else if matches!(kind, ReduceKind::And | ReduceKind::Or) {
                return None;
            } else {
                kind
            };
            Some(format!("{}_{s}", kind.name()))
        }
    }
}

/// `scatter_<strategy>_<region>(const long long* idx, const T* upd, T*
/// y, const long long* meta, long long n)`.
pub fn scatter(strategy: ScatterStrategy, update: ScatterUpdate, e: ElemType) -> Option<String> {
    region(update, e).map(|r| format!("scatter_{}_{r}", strategy.name()))
}

/// Every gather and scatter kernel, for the `index` module.
pub(crate) fn entries() -> Entries {
    let mut out = Entries::default();
    for w in WIDTHS {
        let Some(t) = width_type(w) else { continue };
        out.push(
            format!("gather_b{w}"),
            &format!(
                "const {t}* x, const long long* idx, {t}* y, const long long* meta, long long n"
            ),
            &format!("gather_impl<{t}>(x, idx, y, meta, n);"),
        );
    }
    let mut seen = std::collections::HashSet::new();
    for strategy in [ScatterStrategy::Target, ScatterStrategy::Window] {
        let imp = format!("scatter_{}_impl", strategy.name());
        for e in DTYPES {
            let updates = std::iter::once(ScatterUpdate::Replace)
                .chain(ReduceKind::ALL.iter().map(|&k| ScatterUpdate::Combine(k)));
            for update in updates {
                let Some(name) = scatter(strategy, update, e) else {
                    continue;
                };
                if !seen.insert(name.clone()) {
                    continue;
                }
                let (t, f) = match update {
                    ScatterUpdate::Replace => (width_type(e.byte_size()), "Replace".to_string()),
                    ScatterUpdate::Combine(k) => {
                        (cuda_type(e), format!("Combine<{}>", reducer(k, e)))
                    }
                };
                let Some(t) = t else { continue };
                out.push(
                    name,
                    &format!(
                        "const long long* idx, const {t}* upd, {t}* y, const long long* meta, long long n"
                    ),
                    &format!("{imp}<{t}, {f} >(idx, upd, y, meta, n);"),
                );
            }
        }
    }
    out
}

/// `gather_impl` on the host, line by line, over `meta` (for the tests).
pub fn gather_emulated<T: Copy>(x: &[T], idx: &[i64], meta: &[i64]) -> Vec<T> {
    let (n, _, _) = walk_sizes(meta).expect("a walk table");
    let (rank, batch) = (meta[0] as usize, meta[1] as usize);
    let dim = |d: usize| &meta[HEADER + PER_BATCH * batch + PER_DIM * d..];
    (0..n as i64)
        .map(|i| {
            let mut ioff = 0;
            for j in 0..batch {
                let b = &meta[HEADER + PER_BATCH * j..];
                ioff += ((i / b[3]) % b[0]) * b[2];
            }
            let mut at = 0;
            for d in 0..rank {
                let p = dim(d);
                let mut s = start(meta, idx, p, ioff, i, true);
                if p[4] >= 0 {
                    s = s.clamp(0, p[4]);
                }
                let w = if p[5] > 0 { (i / p[5]) % p[3] } else { 0 };
                at += (s + w) * p[1];
            }
            x[at as usize]
        })
        .collect()
}

/// `index_start` of `index.cuh`.
fn start(meta: &[i64], idx: &[i64], p: &[i64], ioff: i64, key: i64, by_slices: bool) -> i64 {
    let src = p[2];
    if src == -1 {
        return 0;
    }
    if src >= 0 {
        return idx[(ioff + src * meta[2]) as usize];
    }
    let b = &meta[HEADER + PER_BATCH * (-2 - src) as usize..];
    (key / if by_slices { b[3] } else { b[1] }) % b[0]
}

/// `scatter_point` of `index.cuh`.
fn point(meta: &[i64], q: i64) -> (i64, i64) {
    let (mut ioff, mut uoff) = (0, 0);
    for j in 0..meta[1] as usize {
        let b = &meta[HEADER + PER_BATCH * j..];
        let pos = (q / b[1]) % b[0];
        ioff += pos * b[2];
        uoff += pos * b[3];
    }
    (ioff, uoff)
}

/// `scatter_target_impl` or `scatter_window_impl` on the host, line by
/// line, applying `f(current, update)` (for the tests).
pub fn scatter_emulated<T: Copy>(
    strategy: ScatterStrategy,
    input: &[T],
    idx: &[i64],
    upd: &[T],
    meta: &[i64],
    f: impl Fn(T, T) -> T,
) -> Vec<T> {
    let mut y = input.to_vec();
    let (rank, points) = (meta[0] as usize, meta[3]);
    let dim = |d: usize| &meta[HEADER + PER_BATCH * meta[1] as usize + PER_DIM * d..];
    match strategy {
        ScatterStrategy::Target => {
            for t in 0..y.len() as i64 {
                let mut acc = y[t as usize];
                for q in 0..points {
                    let (ioff, mut uoff) = point(meta, q);
                    let mut hit = true;
                    for d in 0..rank {
                        let p = dim(d);
                        let s = start(meta, idx, p, ioff, q, false);
                        let w = (t / p[1]) % p[0] - s;
                        if s < 0 || s > p[0] - p[3] || w < 0 || w >= p[3] {
                            hit = false;
                            break;
                        }
                        uoff += w * p[5];
                    }
                    if hit {
                        acc = f(acc, upd[uoff as usize]);
                    }
                }
                y[t as usize] = acc;
            }
        }
        ScatterStrategy::Window => {
            for w in 0..window_volume(meta) as i64 {
                for q in 0..points {
                    let (ioff, mut uoff) = point(meta, q);
                    let (mut inside, mut at) = (true, 0);
                    for d in 0..rank {
                        let p = dim(d);
                        let s = start(meta, idx, p, ioff, q, false);
                        if s < 0 || s > p[0] - p[3] {
                            inside = false;
                            break;
                        }
                        let c = (w / p[6]) % p[3];
                        at += (s + c) * p[1];
                        uoff += c * p[5];
                    }
                    if inside {
                        y[at as usize] = f(y[at as usize], upd[uoff as usize]);
                    }
                }
            }
        }
    }
    y
}

#[cfg(test)]
#[path = "index_tests.rs"]
mod tests;
