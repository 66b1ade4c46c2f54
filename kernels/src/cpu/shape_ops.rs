//! Data-movement kernels: broadcast_in_dim, reshape, transpose, slice, pad,
//! concatenate, iota. They are generic over the element type and return
//! row-major arrays.

use meshrun_compiler::ir::{Scalar, TensorType};
use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn, Slice};

use crate::cpu::map::into_standard;
use crate::error::{KernelError, Result};
use crate::tensor::{dims_of, with_elem_type, HostElem, HostTensor};

fn check_perm(op: &str, perm: &[i64], rank: usize) -> Result<Vec<usize>> {
    let mut seen = vec![false; rank];
    let p: Vec<usize> = perm
        .iter()
        .filter_map(|&d| usize::try_from(d).ok())
        .filter(|&d| d < rank && !std::mem::replace(&mut seen[d], true))
        .collect();
    if p.len() != rank || perm.len() != rank {
        return Err(KernelError::invalid(
            op,
            format!("{perm:?} is not a permutation of the {rank} dimensions"),
        ));
    }
    Ok(p)
}

fn attr_len(op: &str, what: &str, len: usize, rank: usize) -> Result<()> {
    if len == rank {
        Ok(())
    } else {
        Err(KernelError::invalid(
            op,
            format!("{what} has {len} entries but the operand has rank {rank}"),
        ))
    }
}

// ---------------------------------------------------------------- broadcast

/// `broadcast_in_dim`: operand dim `i` becomes result dim `dims[i]` (size 1
/// or equal); the other result dims repeat the data.
pub fn broadcast_in_dim(x: &HostTensor, dims: &[i64], out: &TensorType) -> Result<HostTensor> {
    let op = "stablehlo.broadcast_in_dim";
    let out_shape = dims_of(out)?;
    attr_len(op, "dims", dims.len(), x.shape().len())?;
    let mut targets = Vec::with_capacity(dims.len());
    let mut used = vec![false; out_shape.len()];
    for (i, &d) in dims.iter().enumerate() {
        let t = usize::try_from(d)
            .ok()
            .filter(|&t| t < out_shape.len() && !used[t])
            .ok_or_else(|| {
                KernelError::invalid(
                    op,
                    format!(
                        "dims {dims:?} must be distinct result dimensions below {}",
                        out_shape.len()
                    ),
                )
            })?;
        used[t] = true;
        let n = x.shape()[i];
        if n != 1 && n != out_shape[t] {
            return Err(KernelError::invalid(
                op,
                format!(
                    "operand dim {i} has size {n}, which cannot broadcast to result dim {t} of size {}",
                    out_shape[t]
                ),
            ));
        }
        targets.push(t);
    }
    crate::with_array!(x, a: T => Ok(T::wrap(match a.as_slice() {
        Some(src) => broadcast_rows(src, a.shape(), &targets, &out_shape),
        None => broadcast_array(a.view(), &targets, &out_shape, op)?,
    })))
}

/// `broadcast_in_dim` of a row-major operand `src` of `shape`, written
/// run by run: the trailing result dims that read the operand
/// contiguously are one slice copy, those that repeat one element are one
/// fill, and only the dims outside them are stepped through. ndarray's
/// element-by-element copy of a broadcast view ran at ~1.5 Gelem/s (a
/// 4x64x1024 f32 result took 220 us in the GPT-2 step, as long as the
/// matmul producing the logits).
fn broadcast_rows<T: HostElem>(
    src: &[T],
    shape: &[usize],
    targets: &[usize],
    out_shape: &[usize],
) -> ArrayD<T> {
    // The operand stride of every result dim (0 where it repeats).
    let rank = out_shape.len();
    let mut strides = vec![0usize; rank];
    let mut s = 1;
    for (i, &t) in targets.iter().enumerate().rev() {
        if shape[i] != 1 {
            strides[t] = s;
        }
        s *= shape[i];
    }
    let mut out = crate::cpu::alloc::array::<T>(out_shape);
    let Some(dst) = out.as_slice_mut() else {
        unreachable!("alloc::array is row-major");
    };
    if dst.is_empty() {
        return out;
    }
    // The trailing dims handled as one run, and whether it is a copy.
    // (Size-1 dims fit either kind: their index is always 0.)
    let (mut inner, mut run) = (rank, 1usize);
    let copy = (0..rank)
        .rev()
        .find(|&d| out_shape[d] != 1)
        .is_some_and(|d| strides[d] == 1);
    while inner > 0 {
        let d = inner - 1;
        let fits = out_shape[d] == 1
            || if copy {
                strides[d] == run
            } else {
                strides[d] == 0
            };
        if !fits {
            break;
        }
        run *= out_shape[d];
        inner = d;
    }
    // Pieces of whole runs, each starting its odometer from its first run.
    crate::cpu::pieces::fill_pieces(dst, run, |start, piece| {
        let mut idx = vec![0usize; inner];
        let mut rest = start / run;
        let mut at = 0usize;
        for d in (0..inner).rev() {
            idx[d] = rest % out_shape[d];
            rest /= out_shape[d];
            at += idx[d] * strides[d];
        }
        for chunk in piece.chunks_exact_mut(run) {
            if copy {
                chunk.copy_from_slice(&src[at..at + run]);
            } else {
                chunk.fill(src[at]);
            }
            // The next outer index (odometer over dims 0..inner).
            for d in (0..inner).rev() {
                idx[d] += 1;
                at += strides[d];
                if idx[d] < out_shape[d] {
                    break;
                }
                at -= strides[d] * out_shape[d];
                idx[d] = 0;
            }
        }
    });
    out
}

fn broadcast_array<T: Clone>(
    a: ArrayViewD<'_, T>,
    targets: &[usize],
    out_shape: &[usize],
    op: &str,
) -> Result<ArrayD<T>> {
    // Order operand axes by target dim, then insert the missing result dims.
    let mut order: Vec<usize> = (0..targets.len()).collect();
    order.sort_by_key(|&i| targets[i]);
    let mut v = a.permuted_axes(order);
    for (pos, present) in (0..out_shape.len()).map(|d| (d, targets.contains(&d))) {
        if !present {
            v.insert_axis_inplace(Axis(pos));
        }
    }
    let b = v.broadcast(IxDyn(out_shape)).ok_or_else(|| {
        KernelError::invalid(op, "operand does not broadcast to the result shape")
    })?;
    Ok(into_standard(b.to_owned()))
}

// ---------------------------------------------------------------- reshape, transpose

/// `reshape` to `out`'s shape (same element count, row-major order).
pub fn reshape(x: &HostTensor, out: &TensorType) -> Result<HostTensor> {
    let op = "stablehlo.reshape";
    let shape = dims_of(out)?;
    let n: usize = shape.iter().product();
    if n != x.len() {
        return Err(KernelError::invalid(
            op,
            format!(
                "cannot reshape {} elements {:?} into {out}",
                x.len(),
                x.shape()
            ),
        ));
    }
    crate::with_array!(x, a: T => {
        let r = a
            .to_shape(IxDyn(&shape))
            .map_err(|e| KernelError::invalid(op, e.to_string()))?;
        Ok(T::wrap(into_standard(r.into_owned())))
    })
}

/// [`reshape`] of a block its owner hands over (its last use): a
/// row-major block is the same elements in the same order under the new
/// shape, so nothing is copied.
pub fn reshape_into(x: HostTensor, out: &TensorType) -> Result<HostTensor> {
    let shape = dims_of(out)?;
    if shape.iter().product::<usize>() != x.len() {
        return reshape(&x, out);
    }
    crate::with_array!(x, a: T => {
        let a: ArrayD<T> = into_standard(a);
        a.into_shape_with_order(IxDyn(&shape))
            .map(T::wrap)
            .map_err(|e| KernelError::invalid("stablehlo.reshape", e.to_string()))
    })
}

/// `transpose`: result dim `i` is operand dim `perm[i]`.
pub fn transpose(x: &HostTensor, perm: &[i64]) -> Result<HostTensor> {
    let p = check_perm("stablehlo.transpose", perm, x.shape().len())?;
    Ok(crate::with_array!(x, a: T => {
        T::wrap(crate::cpu::permute::to_row_major(a.view().permuted_axes(p)))
    }))
}

// ---------------------------------------------------------------- slice, pad, concatenate

/// `slice`: elements `start[d], start[d] + strides[d], ...` below `limit[d]`.
pub fn slice(x: &HostTensor, start: &[i64], limit: &[i64], strides: &[i64]) -> Result<HostTensor> {
    let op = "stablehlo.slice";
    let shape = x.shape().to_vec();
    for (what, v) in [
        ("start_indices", start),
        ("limit_indices", limit),
        ("strides", strides),
    ] {
        attr_len(op, what, v.len(), shape.len())?;
    }
    for d in 0..shape.len() {
        let ok =
            0 <= start[d] && start[d] <= limit[d] && limit[d] <= shape[d] as i64 && strides[d] >= 1;
        if !ok {
            return Err(KernelError::invalid(
                op,
                format!(
                    "dim {d}: [{}:{}:{}] is not a valid slice of size {}",
                    start[d], limit[d], strides[d], shape[d]
                ),
            ));
        }
    }
    Ok(crate::with_array!(x, a: T => {
        let v = a.slice_each_axis(|ax| {
            let d = ax.axis.index();
            Slice::new(start[d] as isize, Some(limit[d] as isize), strides[d] as isize)
        });
        T::wrap(crate::cpu::permute::to_row_major(v))
    }))
}

/// `pad(x, value)`: `low[d]` / `high[d]` elements before / after (negative
/// values cut elements off) and `interior[d]` between neighbours.
pub fn pad(
    x: &HostTensor,
    value: &HostTensor,
    low: &[i64],
    high: &[i64],
    interior: &[i64],
) -> Result<HostTensor> {
    let op = "stablehlo.pad";
    let shape = x.shape().to_vec();
    for (what, v) in [
        ("edge_padding_low", low),
        ("edge_padding_high", high),
        ("interior_padding", interior),
    ] {
        attr_len(op, what, v.len(), shape.len())?;
    }
    if !value.shape().is_empty() || value.elem_type() != x.elem_type() {
        return Err(KernelError::invalid(
            op,
            format!(
                "padding value must be a {} scalar, got {}",
                x.elem_type(),
                value.tensor_type()
            ),
        ));
    }
    let mut out_shape = Vec::with_capacity(shape.len());
    // Per dim: operand elements [first, end) land at out positions
    // low + i * step, the ones that fall inside the result.
    let mut src = Vec::with_capacity(shape.len());
    let mut dst = Vec::with_capacity(shape.len());
    for d in 0..shape.len() {
        // i128: the attributes come from the program text and may be huge.
        let (lo, hi, int, n) = (
            low[d] as i128,
            high[d] as i128,
            interior[d] as i128,
            shape[d] as i128,
        );
        let size = lo + hi + n + (n - 1).max(0) * int;
        if int < 0 || size < 0 || size > isize::MAX as i128 {
            return Err(KernelError::invalid(
                op,
                format!(
                    "dim {d}: padding low={lo} high={hi} interior={int} of size {n} is invalid"
                ),
            ));
        }
        let step = int + 1;
        let first = if lo < 0 { (-lo + step - 1) / step } else { 0 };
        let end = if size - 1 - lo < 0 {
            0
        } else {
            ((size - 1 - lo) / step + 1).min(n)
        };
        out_shape.push(size as usize);
        if end <= first {
            // Nothing of the operand survives along this dim.
            src.push(Slice::new(0, Some(0), 1));
            dst.push(Slice::new(0, Some(0), 1));
            continue;
        }
        // All of these lie within [0, size] or [0, n], so they fit isize.
        src.push(Slice::new(first as isize, Some(end as isize), 1));
        let at = lo + first * step;
        let stop = lo + (end - 1) * step + 1;
        dst.push(Slice::new(at as isize, Some(stop as isize), step as isize));
    }
    let out_ty = TensorType::new(
        out_shape.iter().map(|&v| v as i64).collect::<Vec<_>>(),
        x.elem_type(),
    );
    dims_of(&out_ty)?;
    crate::with_array!(x, a: T => {
        let fill = T::array(value).and_then(|v| v.iter().next().copied()).unwrap_or_else(T::zero_value);
        let mut out = ArrayD::from_elem(IxDyn(&out_shape), fill);
        let part = a.slice_each_axis(|ax| src[ax.axis.index()]);
        out.slice_each_axis_mut(|ax| dst[ax.axis.index()]).assign(&part);
        Ok(T::wrap(out))
    })
}

/// `concatenate` along `dim`: all operands have one type and agree on the
/// other dims.
pub fn concatenate(xs: &[&HostTensor], dim: i64) -> Result<HostTensor> {
    let op = "stablehlo.concatenate";
    let Some(first) = xs.first() else {
        return Err(KernelError::invalid(op, "needs at least one operand"));
    };
    let rank = first.shape().len();
    let axis = usize::try_from(dim)
        .ok()
        .filter(|&d| d < rank)
        .ok_or_else(|| {
            KernelError::invalid(
                op,
                format!("dimension {dim} is out of range for rank {rank}"),
            )
        })?;
    for (i, x) in xs.iter().enumerate() {
        let agrees = x.shape().len() == rank
            && (0..rank).all(|d| d == axis || x.shape()[d] == first.shape()[d]);
        if x.elem_type() != first.elem_type() || !agrees {
            return Err(KernelError::invalid(
                op,
                format!(
                    "operand {i} is {} but operand 0 is {} (only dim {axis} may differ)",
                    x.tensor_type(),
                    first.tensor_type()
                ),
            ));
        }
    }
    crate::with_array!(*first, _a: T => {
        let arrays: Vec<&ArrayD<T>> = xs.iter().filter_map(|x| T::array(x)).collect();
        let slices: Option<Vec<&[T]>> = arrays.iter().map(|a| a.as_slice()).collect();
        if let (Some(slices), true) = (slices, arrays.len() == xs.len()) {
            return Ok(T::wrap(concatenate_rows(&slices, first.shape(), &arrays, axis)));
        }
        let views: Vec<ArrayViewD<'_, T>> = arrays.iter().map(|a| a.view()).collect();
        let out = ndarray::concatenate(Axis(axis), &views)
            .map_err(|e| KernelError::invalid(op, e.to_string()))?;
        Ok(T::wrap(into_standard(out)))
    })
}

/// `concatenate` of row-major operands: each result row (one index of the
/// dims before `axis`) is every operand's row in turn, one slice copy
/// each; rows go to several cores when the result is big. ndarray's
/// general concatenate took ~6 ns an element (2.5 ms for the 16x64x384
/// q/k/v concatenations of the GPT-2 step).
fn concatenate_rows<T: HostElem>(
    slices: &[&[T]],
    shape: &[usize],
    arrays: &[&ArrayD<T>],
    axis: usize,
) -> ArrayD<T> {
    let inner: usize = shape[axis + 1..].iter().product();
    let widths: Vec<usize> = arrays.iter().map(|a| a.shape()[axis] * inner).collect();
    let row: usize = widths.iter().sum();
    let mut out_shape = shape.to_vec();
    out_shape[axis] = arrays.iter().map(|a| a.shape()[axis]).sum();
    let mut out = crate::cpu::alloc::array::<T>(&out_shape);
    let Some(dst) = out.as_slice_mut() else {
        unreachable!("alloc::array is row-major");
    };
    if row > 0 {
        crate::cpu::pieces::fill_pieces(dst, row, |start, piece| {
            for (r, out_row) in piece.chunks_exact_mut(row).enumerate() {
                let i = start / row + r;
                let mut at = 0;
                for (src, &w) in slices.iter().zip(&widths) {
                    out_row[at..at + w].copy_from_slice(&src[i * w..(i + 1) * w]);
                    at += w;
                }
            }
        });
    }
    out
}

// ---------------------------------------------------------------- iota

/// `iota`: each element is its index along `dim`, converted to the type.
pub fn iota(out: &TensorType, dim: i64) -> Result<HostTensor> {
    let op = "stablehlo.iota";
    let shape = dims_of(out)?;
    let d = usize::try_from(dim)
        .ok()
        .filter(|&d| d < shape.len())
        .ok_or_else(|| {
            KernelError::invalid(
                op,
                format!("iota_dimension {dim} is out of range for {out}"),
            )
        })?;
    with_elem_type!(out.elem, op, T => {
        T::wrap(ArrayD::from_shape_fn(IxDyn(&shape), |idx| T::from_scalar(Scalar::Int(idx[d] as i64))))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use meshrun_compiler::ir::ElemType;

    fn iota_f32(shape: &[usize]) -> HostTensor {
        let n: usize = shape.iter().product();
        HostTensor::from_vec(shape, (0..n).map(|i| i as f32).collect()).unwrap()
    }
    fn f32t(shape: &[usize], v: &[f32]) -> HostTensor {
        HostTensor::from_vec(shape, v.to_vec()).unwrap()
    }
    fn ty(shape: &[i64]) -> TensorType {
        TensorType::new(shape.to_vec(), ElemType::F32)
    }

    #[test]
    fn broadcast_runs_match_the_view_copy() {
        // (operand shape, dims, result shape): bias rows, column fills,
        // transposing dims, size-1 dims on either side, scalars.
        let cases: &[(&[usize], &[i64], &[usize])] = &[
            (&[128], &[2], &[4, 6, 128]),
            (&[4, 6], &[0, 1], &[4, 6, 16]),
            (&[4, 6], &[0, 1], &[4, 6, 1]),
            (&[4, 1], &[0, 2], &[4, 3, 5]),
            (&[3, 2], &[2, 0], &[2, 4, 3]),
            (&[1, 5], &[0, 2], &[3, 1, 5]),
            (&[5], &[1], &[3, 5, 1, 2]),
            (&[], &[], &[3, 4]),
            (&[2, 3, 4], &[0, 1, 2], &[2, 3, 4]),
            (&[2, 1, 4], &[1, 2, 3], &[3, 2, 5, 4]),
            (&[0, 3], &[0, 1], &[0, 3, 2]),
        ];
        for &(shape, dims, out) in cases {
            let n: usize = shape.iter().product();
            let x = f32t(shape, &(0..n).map(|i| i as f32).collect::<Vec<_>>());
            let o = ty(&out.iter().map(|&d| d as i64).collect::<Vec<_>>());
            let got = broadcast_in_dim(&x, dims, &o).unwrap();
            let targets: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
            let HostTensor::F32(a) = &x else {
                unreachable!()
            };
            let want = broadcast_array(a.view(), &targets, out, "b").unwrap();
            assert_eq!(got, HostTensor::F32(want), "{shape:?} {dims:?} {out:?}");
        }
    }

    #[test]
    fn broadcast_in_dim_cases() {
        let row = f32t(&[3], &[1.0, 2.0, 3.0]);
        let b = broadcast_in_dim(&row, &[1], &ty(&[2, 3])).unwrap();
        assert_eq!(b, f32t(&[2, 3], &[1.0, 2.0, 3.0, 1.0, 2.0, 3.0]));
        let col = broadcast_in_dim(&row, &[0], &ty(&[3, 2])).unwrap();
        assert_eq!(col, f32t(&[3, 2], &[1.0, 1.0, 2.0, 2.0, 3.0, 3.0]));
        let s = broadcast_in_dim(&f32t(&[], &[7.0]), &[], &ty(&[2])).unwrap();
        assert_eq!(s, f32t(&[2], &[7.0, 7.0]));
        // Size-1 expansion and a transposing dims list.
        let m = iota_f32(&[2, 1]);
        let t = broadcast_in_dim(&m, &[2, 0], &ty(&[1, 3, 2])).unwrap();
        assert_eq!(t, f32t(&[1, 3, 2], &[0.0, 1.0, 0.0, 1.0, 0.0, 1.0]));
        let err = broadcast_in_dim(&row, &[0], &ty(&[2, 3])).unwrap_err();
        assert!(err.to_string().contains("size 3"), "{err}");
        assert!(broadcast_in_dim(&row, &[2], &ty(&[2, 3])).is_err());
        assert!(broadcast_in_dim(&m, &[1, 1], &ty(&[2, 2])).is_err());
    }

    #[test]
    fn reshape_and_transpose() {
        let x = iota_f32(&[2, 3]);
        assert_eq!(reshape(&x, &ty(&[3, 2])).unwrap(), iota_f32(&[3, 2]));
        assert!(reshape(&x, &ty(&[4])).is_err());
        let t = transpose(&x, &[1, 0]).unwrap();
        assert_eq!(t, f32t(&[3, 2], &[0.0, 3.0, 1.0, 4.0, 2.0, 5.0]));
        // Reshape of a transposed (non-row-major) array reads logical order.
        let HostTensor::F32(a) = &x else {
            unreachable!()
        };
        let strided = HostTensor::F32(a.t().to_owned());
        let flat = reshape(&strided, &ty(&[6])).unwrap();
        assert_eq!(flat, f32t(&[6], &[0.0, 3.0, 1.0, 4.0, 2.0, 5.0]));
        assert!(transpose(&x, &[0, 0]).is_err());
        assert!(transpose(&x, &[0]).is_err());
    }

    #[test]
    fn slice_with_strides() {
        let x = iota_f32(&[4, 5]);
        let s = slice(&x, &[1, 0], &[4, 5], &[2, 2]).unwrap();
        assert_eq!(s, f32t(&[2, 3], &[5.0, 7.0, 9.0, 15.0, 17.0, 19.0]));
        let e = slice(&x, &[0, 0], &[0, 5], &[1, 1]).unwrap();
        assert_eq!(e.shape(), &[0, 5]);
        let err = slice(&x, &[0, 0], &[5, 5], &[1, 1]).unwrap_err();
        assert!(err.to_string().contains("dim 0"), "{err}");
        assert!(slice(&x, &[0, 0], &[4, 5], &[1, 0]).is_err());
    }

    #[test]
    fn pad_low_high_interior_and_negative() {
        let x = f32t(&[3], &[1.0, 2.0, 3.0]);
        let z = f32t(&[], &[0.0]);
        let p =
            |lo: i64, hi: i64, int: i64| pad(&x, &z, &[lo], &[hi], &[int]).unwrap().to_f64_vec();
        assert_eq!(p(1, 2, 0), vec![0.0, 1.0, 2.0, 3.0, 0.0, 0.0]);
        assert_eq!(p(0, 0, 1), vec![1.0, 0.0, 2.0, 0.0, 3.0]);
        assert_eq!(p(-1, 0, 0), vec![2.0, 3.0]);
        assert_eq!(p(-2, -1, 1), vec![2.0, 0.0]);
        assert_eq!(p(5, -6, 0), vec![0.0, 0.0]);
        assert_eq!(p(1, -2, 1), vec![0.0, 1.0, 0.0, 2.0]);
        assert_eq!(p(-3, 0, 0), Vec::<f64>::new());
        assert_eq!(p(-5, 1, 1), vec![0.0]);
        let m = iota_f32(&[2, 2]);
        let got = pad(&m, &f32t(&[], &[9.0]), &[1, 0], &[0, 1], &[0, 1]).unwrap();
        assert_eq!(
            got,
            f32t(
                &[3, 4],
                &[9.0, 9.0, 9.0, 9.0, 0.0, 9.0, 1.0, 9.0, 2.0, 9.0, 3.0, 9.0]
            )
        );
        assert!(pad(&x, &z, &[-4], &[0], &[0]).is_err());
        assert!(pad(&x, &z, &[i64::MIN], &[i64::MAX], &[i64::MAX]).is_err());
        assert!(pad(&x, &z, &[i64::MAX], &[i64::MAX], &[0]).is_err());
        assert!(pad(&x, &f32t(&[1], &[0.0]), &[0], &[0], &[0]).is_err());
    }

    #[test]
    fn concatenate_and_iota() {
        let a = iota_f32(&[2, 2]);
        let b = f32t(&[2, 1], &[8.0, 9.0]);
        let c = concatenate(&[&a, &b], 1).unwrap();
        assert_eq!(c, f32t(&[2, 3], &[0.0, 1.0, 8.0, 2.0, 3.0, 9.0]));
        let err = concatenate(&[&a, &b], 0).unwrap_err();
        assert!(err.to_string().contains("operand 1"), "{err}");
        assert!(concatenate(&[], 0).is_err());
        let i = iota(&TensorType::new(vec![2, 3], ElemType::I32), 1).unwrap();
        assert_eq!(
            i,
            HostTensor::from_vec(&[2, 3], vec![0, 1, 2, 0, 1, 2]).unwrap()
        );
        let f = iota(&TensorType::new(vec![3], ElemType::BF16), 0).unwrap();
        assert_eq!(f.to_f64_vec(), vec![0.0, 1.0, 2.0]);
        assert!(iota(&ty(&[3]), 1).is_err());
    }
}
