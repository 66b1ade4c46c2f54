//! What each collective computes, on host blocks: given the blocks of the
//! members of one group (by rank), the result of one member. The exchange
//! itself (who gets whose block) is the rendezvous's job
//! ([`super::rendezvous`]); these functions are pure, so they are tested
//! directly against the semantics in `partition::reshard::collective`.
//!
//! Positions a result has but no input holds (padding past the end of a
//! block) are zero. Reductions combine the members' blocks element by
//! element in rank order ([`super::reduce`]), so every member (and every
//! run) gets bitwise the same result; f16 and bf16 are combined in f32 and
//! rounded once. The `_on` variants may use helper threads for one big
//! result ([`super::bands`]); they give the same bits.

use std::ops::Range;

use meshrun_compiler::ir::ReduceKind;
use meshrun_compiler::partition::reshard::collective::Collective;
use meshrun_kernels::HostTensor;

use super::alloc;
use super::bands::{copy_boxes, Placed};
use super::reduce::reduce_into;
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
    all_gather_on(blocks, c, out, 1)
}

/// [`all_gather`] on up to `threads` threads (see [`super::bands`]).
pub fn all_gather_on(
    blocks: &[&HostTensor],
    c: &Collective,
    out: &[usize],
    threads: usize,
) -> Result<HostTensor, String> {
    let in_shape = check_inputs(blocks, c)?;
    check_factors(c, in_shape.len(), blocks.len())?;
    if out.len() != in_shape.len() {
        return Err(format!(
            "a rank-{} result gathered from rank-{} blocks",
            out.len(),
            in_shape.len()
        ));
    }
    for (d, &o) in out.iter().enumerate() {
        if o > in_shape[d] * c.dim_factors[d] as usize {
            return Err(format!(
                "dimension {d}: a result of {o} is more than {} gathered blocks of {}",
                c.dim_factors[d], in_shape[d]
            ));
        }
    }
    let boxes: Vec<Placed<'_>> = blocks
        .iter()
        .enumerate()
        .map(|(member, b)| {
            let q = digits(member, &c.dim_factors);
            let dst_start: Vec<usize> = (0..out.len()).map(|d| q[d] * in_shape[d]).collect();
            let extent = (0..out.len())
                .map(|d| clipped(dst_start[d], in_shape[d], out[d]))
                .collect();
            Placed {
                src: b,
                dst_start,
                src_start: vec![0; out.len()],
                extent,
            }
        })
        .collect();
    // The members' blocks tile every dimension past `out`: every element
    // is written.
    let mut result = alloc::block(blocks[0], out, false);
    copy_boxes(&mut result, &boxes, threads)?;
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

/// The members' blocks, which must all have one shape and element type.
fn check_same<'a>(blocks: &[&'a HostTensor]) -> Result<&'a HostTensor, String> {
    let first = *blocks.first().ok_or("a reduction of no blocks")?;
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
    Ok(first)
}

/// The element-wise reduction of the members' blocks over the flat
/// (row-major) element range `range`, as a 1-D tensor.
pub fn reduce_range(
    blocks: &[&HostTensor],
    kind: ReduceKind,
    range: Range<usize>,
) -> Result<HostTensor, String> {
    let first = check_same(blocks)?;
    if range.end > first.len() || range.start > range.end {
        return Err(format!(
            "range {range:?} outside a block of {} elements",
            first.len()
        ));
    }
    let len = range.end - range.start;
    let mut out = alloc::block(first, &[len], false);
    reduce_into(&mut out, blocks, kind, range.start, len, 1)?;
    Ok(out)
}

/// All-reduce (the whole block).
pub fn all_reduce(blocks: &[&HostTensor], kind: ReduceKind) -> Result<HostTensor, String> {
    all_reduce_on(blocks, kind, 1)
}

/// [`all_reduce`] on up to `threads` threads (see [`super::bands`]); the
/// same bits whatever the thread count.
pub fn all_reduce_on(
    blocks: &[&HostTensor],
    kind: ReduceKind,
    threads: usize,
) -> Result<HostTensor, String> {
    let first = check_same(blocks)?;
    let mut out = alloc::block(first, first.shape(), false);
    reduce_into(&mut out, blocks, kind, 0, first.len(), threads)?;
    Ok(out)
}

/// Where member `rank`'s chunk of a reduce-scatter lies in the flat
/// blocks, when it is one contiguous run: the chunk cuts one dimension `k`
/// only, and every dimension before `k` has one element. `(start, len)`
/// in elements; `len` may be less than the result's size when the chunk
/// runs past the blocks (padding).
fn contiguous_chunk(
    in_shape: &[usize],
    rank: usize,
    c: &Collective,
    out: &[usize],
) -> Option<(usize, usize)> {
    let rank_ = in_shape.len();
    if rank_ == 0 || out.len() != rank_ || c.dim_factors.len() != rank_ {
        return None;
    }
    let k = c.dim_factors.iter().position(|&f| f > 1).unwrap_or(0);
    let rest_whole = (0..rank_).all(|d| {
        d == k || (c.dim_factors[d] == 1 && out[d] == in_shape[d] && (d > k || in_shape[d] == 1))
    });
    if !rest_whole {
        return None;
    }
    let q = digits(rank, &c.dim_factors)[k];
    let start = q * out[k];
    let rows = clipped(start, out[k], in_shape[k]);
    if rows == 0 {
        // Wholly past the blocks: all padding.
        return Some((0, 0));
    }
    let inner: usize = in_shape[k + 1..].iter().product();
    Some((start * inner, rows * inner))
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
    let in_shape = check_inputs(blocks, c)?;
    check_factors(c, in_shape.len(), blocks.len())?;
    let first = check_same(blocks)?;
    let Some((from, len)) = contiguous_chunk(&in_shape, rank, c, out) else {
        return reduce_scatter_sliced(blocks, rank, kind, c, out);
    };
    // The chunk is reduced where it lies in the blocks, without slicing
    // every member's block first; past the blocks the result is zero.
    let covered = len == out.iter().product::<usize>();
    let mut result = alloc::block(first, out, !covered);
    reduce_into(&mut result, blocks, kind, from, len, 1)?;
    Ok(result)
}

/// Reduce-scatter by slicing every member's chunk, then reducing the
/// slices (chunks that are not one contiguous run).
fn reduce_scatter_sliced(
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

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;
    use meshrun_compiler::ir::ElemType;
    use meshrun_compiler::partition::reshard::collective::CollectiveKind;
    use meshrun_compiler::sharding::TensorSharding;

    fn coll(kind: CollectiveKind, inp: &[i64], out: &[i64], factors: &[i64]) -> Collective {
        let rank = inp.len();
        let members = factors.iter().product::<i64>();
        Collective {
            kind,
            axes: Vec::new(),
            dim_axes: vec![Vec::new(); rank],
            dim_factors: factors.to_vec(),
            all_to_all: None,
            reduction: Some(ReduceKind::Add),
            groups: vec![(0..members).collect()],
            in_sharding: TensorSharding::replicated("m", rank),
            out_sharding: TensorSharding::replicated("m", rank),
            global_shape: inp.to_vec(),
            in_local_shape: inp.to_vec(),
            out_local_shape: out.to_vec(),
            elem: ElemType::F32,
        }
    }

    /// Member `r`'s block: values whose sums round differently in another
    /// order.
    fn member_block(r: usize, shape: &[usize]) -> HostTensor {
        let n: usize = shape.iter().product();
        let v: Vec<f32> = (0..n)
            .map(|i| ((i * 37 + r * 11) % 97) as f32 * 1.37e-3 + (r as f32 - 1.5) * 3.1e4)
            .collect();
        HostTensor::from_vec(shape, v).unwrap()
    }

    fn bits(t: &HostTensor) -> Vec<u64> {
        t.to_f64_vec().iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn in_place_reduce_scatter_equals_slice_then_reduce() {
        // (in, out, factors, whether the chunk is one contiguous run)
        type Case = (&'static [i64], &'static [i64], &'static [i64], bool);
        let cases: [Case; 5] = [
            // The last chunk runs past the blocks: one row, two of zeros.
            (&[10, 3], &[3, 3], &[4, 1], true),
            // The last chunk lies wholly past the blocks: all zeros.
            (&[2, 3], &[1, 3], &[3, 1], true),
            // A leading dimension of one before the cut one.
            (&[1, 8, 2], &[1, 4, 2], &[1, 2, 1], true),
            // Cut along the last dimension: strided, sliced first.
            (&[4, 6], &[4, 3], &[1, 2], false),
            // Cut along two dimensions.
            (&[4, 6], &[2, 3], &[2, 2], false),
        ];
        for (inp, out, factors, contiguous) in cases {
            let c = coll(CollectiveKind::ReduceScatter, inp, out, factors);
            let in_shape = dims(inp).unwrap();
            let out_shape = dims(out).unwrap();
            let g = factors.iter().product::<i64>() as usize;
            let blocks: Vec<HostTensor> = (0..g).map(|r| member_block(r, &in_shape)).collect();
            let refs: Vec<&HostTensor> = blocks.iter().collect();
            for rank in 0..g {
                assert_eq!(
                    contiguous_chunk(&in_shape, rank, &c, &out_shape).is_some(),
                    contiguous,
                    "{inp:?} -> {out:?}"
                );
                let got = reduce_scatter(&refs, rank, ReduceKind::Add, &c, &out_shape).unwrap();
                let want =
                    reduce_scatter_sliced(&refs, rank, ReduceKind::Add, &c, &out_shape).unwrap();
                assert_eq!(got.shape(), out_shape.as_slice());
                assert_eq!(bits(&got), bits(&want), "{inp:?} -> {out:?}, rank {rank}");
            }
        }
        // The padded chunk really holds zeros past the blocks' one row.
        let c = coll(CollectiveKind::ReduceScatter, &[10, 3], &[3, 3], &[4, 1]);
        let blocks: Vec<HostTensor> = (0..4).map(|r| member_block(r, &[10, 3])).collect();
        let refs: Vec<&HostTensor> = blocks.iter().collect();
        let last = reduce_scatter(&refs, 3, ReduceKind::Add, &c, &[3, 3]).unwrap();
        assert_eq!(last.to_f64_vec()[3..], [0.0; 6]);
        assert!(last.to_f64_vec()[..3].iter().all(|&x| x != 0.0));
        let c = coll(CollectiveKind::ReduceScatter, &[2, 3], &[1, 3], &[3, 1]);
        let blocks: Vec<HostTensor> = (0..3).map(|r| member_block(r, &[2, 3])).collect();
        let refs: Vec<&HostTensor> = blocks.iter().collect();
        let past = reduce_scatter(&refs, 2, ReduceKind::Add, &c, &[1, 3]).unwrap();
        assert_eq!(past.to_f64_vec(), vec![0.0; 3]);
    }

    #[test]
    fn in_place_reduce_scatter_rounds_f16_once() {
        let c = coll(CollectiveKind::ReduceScatter, &[2], &[1], &[2]);
        let c3 = || coll(CollectiveKind::ReduceScatter, &[2], &[1], &[3]);
        let big = HostTensor::from_vec(&[2], vec![f16::from_f32(2048.0); 2]).unwrap();
        let one = HostTensor::from_vec(&[2], vec![f16::from_f32(1.0); 2]).unwrap();
        let s = reduce_scatter(&[&big, &one, &one], 1, ReduceKind::Add, &c3(), &[1]).unwrap();
        // 2048 + 1 + 1 is 2050 in f32 (2048 in f16 step by step).
        assert_eq!(s.to_f64_vec(), vec![2050.0]);
        let bad = HostTensor::from_vec(&[2], vec![1.0f32; 2]).unwrap();
        assert!(reduce_scatter(&[&big, &bad], 0, ReduceKind::Add, &c, &[1]).is_err());
    }

    #[test]
    fn gathering_on_threads_gives_the_serial_result() {
        // Several pieces of work per thread; the last block only partly
        // kept; then a gather along two dimensions.
        for (inp, out, factors) in [
            (&[300i64, 1000][..], &[850i64, 1000][..], &[3i64, 1][..]),
            (&[600, 500], &[1200, 900], &[2, 2]),
        ] {
            let c = coll(CollectiveKind::AllGather, inp, out, factors);
            let (in_shape, out_shape) = (dims(inp).unwrap(), dims(out).unwrap());
            let g = factors.iter().product::<i64>() as usize;
            let blocks: Vec<HostTensor> = (0..g).map(|r| member_block(r, &in_shape)).collect();
            let refs: Vec<&HostTensor> = blocks.iter().collect();
            let serial = all_gather(&refs, &c, &out_shape).unwrap();
            let parallel = all_gather_on(&refs, &c, &out_shape, 3).unwrap();
            assert_eq!(bits(&parallel), bits(&serial), "{inp:?} -> {out:?}");
            // Spot-check the layout: row 310 is member 1's row 10.
            if factors == [3, 1] {
                let v = parallel.to_f64_vec();
                assert_eq!(v[310 * 1000 + 7], blocks[1].to_f64_vec()[10 * 1000 + 7]);
            }
        }
    }

    #[test]
    fn reducing_on_threads_gives_the_serial_bits() {
        let shape = [700usize, 1000];
        let blocks: Vec<HostTensor> = (0..5).map(|r| member_block(r, &shape)).collect();
        let refs: Vec<&HostTensor> = blocks.iter().collect();
        let serial = all_reduce(&refs, ReduceKind::Add).unwrap();
        let parallel = all_reduce_on(&refs, ReduceKind::Add, 4).unwrap();
        assert_eq!(parallel.shape(), &shape);
        assert_eq!(bits(&parallel), bits(&serial));
        let flat = reduce_range(&refs, ReduceKind::Add, 0..shape[0] * shape[1]).unwrap();
        assert_eq!(bits(&flat), bits(&serial));
    }

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
