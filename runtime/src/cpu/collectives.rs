//! What each collective computes, on host blocks: given the blocks of the
//! members of one group (by rank), the result of one member. The exchange
//! itself (who gets whose block) is the rendezvous's job
//! ([`super::rendezvous`]); these functions are pure, so they are tested
//! directly against the semantics in `partition::collective`.
//!
//! Positions a result has but no input holds (padding past the end of a
//! block) are zero. Reductions combine the members' blocks element by
//! element in rank order, so every member (and every run) gets bitwise the
//! same result; f16 and bf16 are combined in f32 and rounded once.

use std::borrow::Cow;
use std::ops::Range;

use half::{bf16, f16};
use meshrun_compiler::ir::ReduceKind;
use meshrun_compiler::partition::collective::Collective;
use meshrun_kernels::{HostElem, HostTensor};
use ndarray::{ArrayD, IxDyn};

use super::alloc;
use crate::blocks::{copy_box, BoxCopy};

/// A collective's shape (`in_local_shape`, ...) as `usize`s.
pub fn dims(shape: &[i64]) -> Result<Vec<usize>, String> {
    shape
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| format!("negative dimension in {shape:?}")))
        .collect()
}

/// `rank` as mixed-radix digits over `factors` (dimension 0 most
/// significant).
pub fn digits(mut rank: usize, factors: &[i64]) -> Vec<usize> {
    let mut out = vec![0; factors.len()];
    for d in (0..factors.len()).rev() {
        let f = factors[d].max(1) as usize;
        out[d] = rank % f;
        rank /= f;
    }
    out
}

/// Every block must have the collective's input shape.
fn check_inputs(blocks: &[&HostTensor], c: &Collective) -> Result<Vec<usize>, String> {
    let in_shape = dims(&c.in_local_shape)?;
    for (rank, b) in blocks.iter().enumerate() {
        if b.shape() != in_shape.as_slice() {
            return Err(format!(
                "member {rank} holds a block of shape {:?}; the collective expects {in_shape:?}",
                b.shape()
            ));
        }
    }
    if blocks.is_empty() {
        return Err("a group without members".into());
    }
    Ok(in_shape)
}

fn check_factors(c: &Collective, rank: usize, group_size: usize) -> Result<(), String> {
    if c.dim_factors.len() != rank {
        return Err(format!(
            "{} per-dimension factors for a rank-{rank} block",
            c.dim_factors.len()
        ));
    }
    if c.dim_factors.iter().any(|&f| f < 1) {
        return Err(format!("per-dimension factors {:?} below 1", c.dim_factors));
    }
    let product: i64 = c.dim_factors.iter().product();
    if product != group_size as i64 {
        return Err(format!(
            "per-dimension factors {:?} do not multiply to the group size {group_size}",
            c.dim_factors
        ));
    }
    Ok(())
}

/// How much of a chunk of length `len` starting at `start` a dimension of
/// size `size` holds.
fn clipped(start: usize, len: usize, size: usize) -> usize {
    len.min(size.saturating_sub(start))
}

/// All-slice: member `rank` keeps, along each dimension `d`, chunk `q_d` of
/// length `out[d]` (its rank in mixed radix over `dim_factors`).
pub fn all_slice(
    x: &HostTensor,
    rank: usize,
    group_size: usize,
    c: &Collective,
    out: &[usize],
) -> Result<HostTensor, String> {
    let in_shape = check_inputs(&[x], c)?;
    check_factors(c, in_shape.len(), group_size)?;
    let q = digits(rank, &c.dim_factors);
    let src_start: Vec<usize> = (0..out.len()).map(|d| q[d] * out[d]).collect();
    let extent: Vec<usize> = (0..out.len())
        .map(|d| clipped(src_start[d], out[d], in_shape[d]))
        .collect();
    let covered = extent.as_slice() == out;
    let mut result = alloc::block(x, out, !covered);
    let zero = vec![0; out.len()];
    copy_box(
        &mut result,
        x,
        BoxCopy {
            dst_start: &zero,
            src_start: &src_start,
            extent: &extent,
        },
    )?;
    Ok(result)
}

/// All-gather: the members' blocks concatenated along each dimension in
/// rank order (mixed radix over `dim_factors`), cut to `out`.
pub fn all_gather(
    blocks: &[&HostTensor],
    c: &Collective,
    out: &[usize],
) -> Result<HostTensor, String> {
    let in_shape = check_inputs(blocks, c)?;
    check_factors(c, in_shape.len(), blocks.len())?;
    for (d, &o) in out.iter().enumerate() {
        if o > in_shape[d] * c.dim_factors[d] as usize {
            return Err(format!(
                "dimension {d}: a result of {o} is more than {} gathered blocks of {}",
                c.dim_factors[d], in_shape[d]
            ));
        }
    }
    // The members' blocks tile every dimension past `out`: every element
    // is written.
    let mut result = alloc::block(blocks[0], out, false);
    let zero = vec![0; out.len()];
    for (member, b) in blocks.iter().enumerate() {
        let q = digits(member, &c.dim_factors);
        let dst_start: Vec<usize> = (0..out.len()).map(|d| q[d] * in_shape[d]).collect();
        let extent: Vec<usize> = (0..out.len())
            .map(|d| clipped(dst_start[d], in_shape[d], out[d]))
            .collect();
        copy_box(
            &mut result,
            b,
            BoxCopy {
                dst_start: &dst_start,
                src_start: &zero,
                extent: &extent,
            },
        )?;
    }
    Ok(result)
}

/// All-to-all: member `rank` takes chunk `rank` (length `out[tgt]`) along
/// the target dimension of every member's block and concatenates them
/// along the source dimension in rank order.
pub fn all_to_all(
    blocks: &[&HostTensor],
    rank: usize,
    c: &Collective,
    out: &[usize],
) -> Result<HostTensor, String> {
    let in_shape = check_inputs(blocks, c)?;
    let dims_ = c.all_to_all.ok_or("an all-to-all without dimensions")?;
    let (s, t) = (dims_.src_dim, dims_.tgt_dim);
    if s == t || s >= in_shape.len() || t >= in_shape.len() || out.len() != in_shape.len() {
        return Err(format!("bad all-to-all dimensions {s}->{t}"));
    }
    for d in 0..out.len() {
        if d != s && d != t && out[d] != in_shape[d] {
            return Err(format!(
                "dimension {d} changes from {} to {} in an all-to-all {s}->{t}",
                in_shape[d], out[d]
            ));
        }
    }
    if out[s] > blocks.len() * in_shape[s] {
        return Err(format!(
            "dimension {s}: a result of {} is more than {} blocks of {}",
            out[s],
            blocks.len(),
            in_shape[s]
        ));
    }
    let mut src_start = vec![0; out.len()];
    src_start[t] = rank * out[t];
    // Along `s` the members' chunks tile the result; along `t` this
    // member's chunk may run past the blocks (padding).
    let covered = src_start[t] + out[t] <= in_shape[t];
    let mut result = alloc::block(blocks[0], out, !covered);
    for (member, b) in blocks.iter().enumerate() {
        let mut dst_start = vec![0; out.len()];
        dst_start[s] = member * in_shape[s];
        let mut extent = out.to_vec();
        extent[s] = clipped(dst_start[s], in_shape[s], out[s]);
        extent[t] = clipped(src_start[t], out[t], in_shape[t]);
        copy_box(
            &mut result,
            b,
            BoxCopy {
                dst_start: &dst_start,
                src_start: &src_start,
                extent: &extent,
            },
        )?;
    }
    Ok(result)
}

/// The element-wise reduction of the members' blocks over the flat
/// (row-major) element range `range`, as a 1-D tensor.
pub fn reduce_range(
    blocks: &[&HostTensor],
    kind: ReduceKind,
    range: Range<usize>,
) -> Result<HostTensor, String> {
    let first = blocks.first().ok_or("a reduction of no blocks")?;
    let (shape, elem) = (first.shape(), first.elem_type());
    if let Some(b) = blocks
        .iter()
        .find(|b| b.shape() != shape || b.elem_type() != elem)
    {
        return Err(format!(
            "members hold blocks of different types ({} and {})",
            first.tensor_type(),
            b.tensor_type()
        ));
    }
    if range.end > first.len() || range.start > range.end {
        return Err(format!(
            "range {range:?} outside a block of {} elements",
            first.len()
        ));
    }
    match first {
        HostTensor::F32(_) => float::<f32, f32>(blocks, kind, range, |x| x, |a| a),
        HostTensor::F64(_) => float::<f64, f64>(blocks, kind, range, |x| x, |a| a),
        HostTensor::F16(_) => float::<f16, f32>(blocks, kind, range, f16::to_f32, f16::from_f32),
        HostTensor::BF16(_) => {
            float::<bf16, f32>(blocks, kind, range, bf16::to_f32, bf16::from_f32)
        }
        HostTensor::I32(_) => int::<i32>(blocks, kind, range),
        HostTensor::I64(_) => int::<i64>(blocks, kind, range),
        HostTensor::Pred(_) => Ok(match kind {
            ReduceKind::Add | ReduceKind::Or | ReduceKind::Maximum => {
                fold(blocks, range, |x: bool| x, |a| a, |a, b| a | b)
            }
            ReduceKind::Multiply | ReduceKind::And | ReduceKind::Minimum => {
                fold(blocks, range, |x: bool| x, |a| a, |a, b| a & b)
            }
        }),
    }
}

/// All-reduce (the whole block).
pub fn all_reduce(blocks: &[&HostTensor], kind: ReduceKind) -> Result<HostTensor, String> {
    let shape = blocks
        .first()
        .ok_or("a reduction of no blocks")?
        .shape()
        .to_vec();
    let flat = reduce_range(blocks, kind, 0..blocks[0].len())?;
    reshape(flat, &shape)
}

/// Reduce-scatter: member `rank`'s chunk (as in [`all_slice`]) of the
/// reduction of the members' blocks.
pub fn reduce_scatter(
    blocks: &[&HostTensor],
    rank: usize,
    kind: ReduceKind,
    c: &Collective,
    out: &[usize],
) -> Result<HostTensor, String> {
    let chunks = blocks
        .iter()
        .map(|b| all_slice(b, rank, blocks.len(), c, out))
        .collect::<Result<Vec<_>, _>>()?;
    let refs: Vec<&HostTensor> = chunks.iter().collect();
    all_reduce(&refs, kind)
}

/// The 1-D `pieces` concatenated and reshaped to `shape`.
pub fn concat_flat(pieces: &[&HostTensor], shape: &[usize]) -> Result<HostTensor, String> {
    let first = pieces.first().ok_or("nothing to concatenate")?;
    let total: usize = pieces.iter().map(|p| p.len()).sum();
    if total != shape.iter().product::<usize>() {
        return Err(format!(
            "{total} reduced elements do not fill a block of shape {shape:?}"
        ));
    }
    // Every element is written: the pieces fill the block.
    let mut out = alloc::block(first, shape, false);
    meshrun_kernels::with_array!(&mut out, o: T => {
        let dst = o.as_slice_mut().ok_or("a block not in row-major layout")?;
        let mut at = 0;
        for p in pieces {
            let a = p.array::<T>().ok_or("pieces of different element types")?;
            let src = contiguous(a);
            dst[at..at + src.len()].copy_from_slice(&src);
            at += src.len();
        }
    });
    Ok(out)
}

fn reshape(flat: HostTensor, shape: &[usize]) -> Result<HostTensor, String> {
    meshrun_kernels::with_array!(flat, a: T => {
        a.into_shape_with_order(IxDyn(shape))
            .map(HostTensor::from)
            .map_err(|e| e.to_string())
    })
}

/// The elements of `a` in row-major order, borrowed when `a` already is.
fn contiguous<T: HostElem>(a: &ArrayD<T>) -> Cow<'_, [T]> {
    match a.as_slice() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(a.iter().copied().collect()),
    }
}

/// Combine `range` of every block in rank order: `acc = op(acc, to(x))`,
/// each result converted back with `from`.
fn fold<T: HostElem, A: Copy>(
    blocks: &[&HostTensor],
    range: Range<usize>,
    to: impl Fn(T) -> A,
    from: impl Fn(A) -> T,
    op: impl Fn(A, A) -> A,
) -> HostTensor {
    let slices: Vec<Cow<'_, [T]>> = blocks
        .iter()
        .filter_map(|b| b.array::<T>())
        .map(contiguous)
        .collect();
    let mut acc: Vec<A> = slices[0][range.clone()].iter().map(|&x| to(x)).collect();
    for s in &slices[1..] {
        for (a, &x) in acc.iter_mut().zip(&s[range.clone()]) {
            *a = op(*a, to(x));
        }
    }
    let data: Vec<T> = acc.into_iter().map(from).collect();
    T::wrap(ndarray::Array1::from_vec(data).into_dyn())
}

/// Floats accumulated in `A` (f32 or f64).
trait Acc: Copy + std::ops::Add<Output = Self> + std::ops::Mul<Output = Self> + PartialOrd {
    fn is_nan(self) -> bool;
}
impl Acc for f32 {
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
}
impl Acc for f64 {
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
}

/// StableHLO `maximum`: NaN if either is NaN.
fn max_nan<A: Acc>(a: A, b: A) -> A {
    if a.is_nan() {
        a
    } else if b.is_nan() || b > a {
        b
    } else {
        a
    }
}

/// StableHLO `minimum`: NaN if either is NaN.
fn min_nan<A: Acc>(a: A, b: A) -> A {
    if a.is_nan() {
        a
    } else if b.is_nan() || b < a {
        b
    } else {
        a
    }
}

fn float<T: HostElem, A: Acc>(
    blocks: &[&HostTensor],
    kind: ReduceKind,
    range: Range<usize>,
    to: impl Fn(T) -> A,
    from: impl Fn(A) -> T,
) -> Result<HostTensor, String> {
    Ok(match kind {
        ReduceKind::Add => fold(blocks, range, to, from, |a, b| a + b),
        ReduceKind::Multiply => fold(blocks, range, to, from, |a, b| a * b),
        ReduceKind::Maximum => fold(blocks, range, to, from, max_nan),
        ReduceKind::Minimum => fold(blocks, range, to, from, min_nan),
        ReduceKind::And | ReduceKind::Or => {
            return Err(format!("a {kind:?} reduction of floats"));
        }
    })
}

/// Integers: wrapping sums and products, bitwise and/or.
trait IntAcc: HostElem + Ord {
    fn wadd(self, b: Self) -> Self;
    fn wmul(self, b: Self) -> Self;
    fn and(self, b: Self) -> Self;
    fn or(self, b: Self) -> Self;
}
macro_rules! int_acc {
    ($t:ty) => {
        impl IntAcc for $t {
            fn wadd(self, b: Self) -> Self {
                self.wrapping_add(b)
            }
            fn wmul(self, b: Self) -> Self {
                self.wrapping_mul(b)
            }
            fn and(self, b: Self) -> Self {
                self & b
            }
            fn or(self, b: Self) -> Self {
                self | b
            }
        }
    };
}
int_acc!(i32);
int_acc!(i64);

fn int<T: IntAcc>(
    blocks: &[&HostTensor],
    kind: ReduceKind,
    range: Range<usize>,
) -> Result<HostTensor, String> {
    let id = |x: T| x;
    Ok(match kind {
        ReduceKind::Add => fold(blocks, range, id, id, T::wadd),
        ReduceKind::Multiply => fold(blocks, range, id, id, T::wmul),
        ReduceKind::Maximum => fold(blocks, range, id, id, Ord::max),
        ReduceKind::Minimum => fold(blocks, range, id, id, Ord::min),
        ReduceKind::And => fold(blocks, range, id, id, T::and),
        ReduceKind::Or => fold(blocks, range, id, id, T::or),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_are_mixed_radix_major_first() {
        assert_eq!(digits(5, &[2, 3]), vec![1, 2]);
        assert_eq!(digits(3, &[1, 4]), vec![0, 3]);
    }

    #[test]
    fn float_max_propagates_nan_and_f16_sums_in_f32() {
        let a = HostTensor::from_vec(&[2], vec![1.0f32, f32::NAN]).unwrap();
        let b = HostTensor::from_vec(&[2], vec![f32::NAN, 2.0]).unwrap();
        let m = all_reduce(&[&a, &b], ReduceKind::Maximum).unwrap();
        assert!(m.to_f64_vec().iter().all(|x| x.is_nan()));
        let big = HostTensor::from_vec(&[1], vec![f16::from_f32(2048.0)]).unwrap();
        let one = HostTensor::from_vec(&[1], vec![f16::from_f32(1.0)]).unwrap();
        // 2048 + 1 + 1 is 2050 in f32 (2048 in f16 step by step).
        let s = all_reduce(&[&big, &one, &one], ReduceKind::Add).unwrap();
        assert_eq!(s.to_f64_vec(), vec![2050.0]);
    }

    #[test]
    fn bools_and_ints() {
        let a = HostTensor::from_vec(&[2], vec![true, false]).unwrap();
        let b = HostTensor::from_vec(&[2], vec![false, false]).unwrap();
        let s = all_reduce(&[&a, &b], ReduceKind::Add).unwrap();
        assert_eq!(s, HostTensor::from_vec(&[2], vec![true, false]).unwrap());
        let x = HostTensor::from_vec(&[1], vec![i32::MAX]).unwrap();
        let s = all_reduce(&[&x, &x], ReduceKind::Add).unwrap();
        assert_eq!(s.to_f64_vec(), vec![-2.0]);
    }
}
