//! Buffer layouts and the one data-movement descriptor of the CUDA
//! backend, [`StridedCopy`]: for every index of a box, copy one element
//! from `src_offset + Σ idx·src_strides` to `dst_offset + Σ idx·dst_strides`.
//! The GPU runs it with the `strided_copy_b<width>` kernel (the descriptor
//! travels as the `meta` array of [`StridedCopy::encode`]); transposes,
//! broadcasts, slices, pads, concatenations, remaps, the copies of
//! collectives and the operand layouts of GEMMs and reductions are all
//! built from it here, as pure functions of shapes.
//!
//! Every buffer is dense and row-major. [`StridedCopy::apply`] runs a
//! descriptor on host slices: the tests check each builder against the CPU
//! kernels with it, and [`StridedCopy::check_bounds`] is what makes a
//! descriptor safe to hand to the GPU.

/// Row-major strides of `shape` (in elements).
pub fn row_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1].max(1);
    }
    strides
}

/// The number of elements of `shape` (1 for a scalar), or `None` on
/// overflow.
pub fn num_elements(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

/// `shape` as `usize`s (a negative dimension is an error).
pub fn dims(shape: &[i64]) -> Result<Vec<usize>, String> {
    shape
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| format!("negative dimension in {shape:?}")))
        .collect()
}

/// A strided copy of a box of `shape` from one buffer to another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StridedCopy {
    pub shape: Vec<usize>,
    pub src_strides: Vec<usize>,
    pub dst_strides: Vec<usize>,
    pub src_offset: usize,
    pub dst_offset: usize,
}

impl StridedCopy {
    /// A plain copy of `len` contiguous elements.
    pub fn contiguous(len: usize) -> StridedCopy {
        StridedCopy {
            shape: vec![len],
            src_strides: vec![1],
            dst_strides: vec![1],
            src_offset: 0,
            dst_offset: 0,
        }
    }

    /// Elements copied.
    pub fn len(&self) -> usize {
        num_elements(&self.shape).unwrap_or(usize::MAX)
    }

    pub fn is_empty(&self) -> bool {
        self.shape.contains(&0)
    }

    /// One past the largest source / destination index read or written
    /// (0 for an empty box), or `None` on overflow.
    fn extent(&self, offset: usize, strides: &[usize]) -> Option<usize> {
        if self.is_empty() {
            return Some(0);
        }
        self.shape
            .iter()
            .zip(strides)
            .try_fold(offset, |acc, (&n, &s)| {
                acc.checked_add((n - 1).checked_mul(s)?)
            })
            .and_then(|last| last.checked_add(1))
    }

    /// Every index the copy touches lies inside a source of `src_len` and
    /// a destination of `dst_len` elements. The GPU kernel does no bounds
    /// checks of its own: the backend calls this before every launch.
    pub fn check_bounds(&self, src_len: usize, dst_len: usize) -> Result<(), String> {
        if self.src_strides.len() != self.shape.len() || self.dst_strides.len() != self.shape.len()
        {
            return Err(format!(
                "a strided copy of rank {} with strides of other ranks",
                self.shape.len()
            ));
        }
        let src = self.extent(self.src_offset, &self.src_strides);
        let dst = self.extent(self.dst_offset, &self.dst_strides);
        match (src, dst) {
            (Some(s), Some(d)) if s <= src_len && d <= dst_len => Ok(()),
            _ => Err(format!(
                "a strided copy of {:?} reaches past its source ({src_len} elements) or destination ({dst_len})",
                self.shape
            )),
        }
    }

    /// Drop dimensions of size 1 and merge neighbours that are contiguous
    /// in both buffers, so the kernel loops over as few dimensions as
    /// possible. The copy is unchanged.
    pub fn simplified(&self) -> StridedCopy {
        if self.is_empty() {
            return StridedCopy {
                shape: vec![0],
                src_strides: vec![1],
                dst_strides: vec![1],
                src_offset: self.src_offset,
                dst_offset: self.dst_offset,
            };
        }
        let mut shape: Vec<usize> = Vec::new();
        let mut ss: Vec<usize> = Vec::new();
        let mut ds: Vec<usize> = Vec::new();
        for d in 0..self.shape.len() {
            let (n, s, t) = (self.shape[d], self.src_strides[d], self.dst_strides[d]);
            if n == 1 {
                continue;
            }
            if let (Some(&pn), Some(&ps), Some(&pt)) = (shape.last(), ss.last(), ds.last()) {
                // The previous (outer) dim continues this one in both.
                if ps == s * n && pt == t * n {
                    let k = shape.len() - 1;
                    shape[k] = pn * n;
                    ss[k] = s;
                    ds[k] = t;
                    continue;
                }
            }
            shape.push(n);
            ss.push(s);
            ds.push(t);
        }
        if shape.is_empty() {
            shape.push(1);
            ss.push(1);
            ds.push(1);
        }
        StridedCopy {
            shape,
            src_strides: ss,
            dst_strides: ds,
            src_offset: self.src_offset,
            dst_offset: self.dst_offset,
        }
    }

    /// The kernel's `meta` array: `[n, rank, src_offset, dst_offset,
    /// shape.., src_strides.., dst_strides..]`.
    pub fn encode(&self) -> Result<Vec<i64>, String> {
        let big =
            |x: usize| i64::try_from(x).map_err(|_| format!("{x} does not fit a 64-bit index"));
        let mut meta = Vec::with_capacity(4 + 3 * self.shape.len());
        meta.push(big(self.len())?);
        meta.push(big(self.shape.len())?);
        meta.push(big(self.src_offset)?);
        meta.push(big(self.dst_offset)?);
        for v in [&self.shape, &self.src_strides, &self.dst_strides] {
            for &x in v.iter() {
                meta.push(big(x)?);
            }
        }
        Ok(meta)
    }

    /// Run the copy on host slices (what the kernel does).
    pub fn apply<T: Copy>(&self, src: &[T], dst: &mut [T]) -> Result<(), String> {
        self.check_bounds(src.len(), dst.len())?;
        let n = self.len();
        let rank = self.shape.len();
        for i in 0..n {
            let (mut rem, mut s, mut d) = (i, self.src_offset, self.dst_offset);
            for k in (0..rank).rev() {
                let idx = rem % self.shape[k];
                rem /= self.shape[k];
                s += idx * self.src_strides[k];
                d += idx * self.dst_strides[k];
            }
            dst[d] = src[s];
        }
        Ok(())
    }
}

/// A box of `extent` from `src_start` of a `src_shape` buffer to
/// `dst_start` of a `dst_shape` buffer (both row-major).
pub fn box_copy(
    dst_shape: &[usize],
    src_shape: &[usize],
    dst_start: &[usize],
    src_start: &[usize],
    extent: &[usize],
) -> Result<StridedCopy, String> {
    let rank = dst_shape.len();
    if [
        src_shape.len(),
        dst_start.len(),
        src_start.len(),
        extent.len(),
    ]
    .iter()
    .any(|&r| r != rank)
    {
        return Err(format!(
            "a box copy between ranks {} and {}",
            src_shape.len(),
            rank
        ));
    }
    for d in 0..rank {
        if extent[d] > 0
            && (src_start[d] + extent[d] > src_shape[d] || dst_start[d] + extent[d] > dst_shape[d])
        {
            return Err(format!(
                "dimension {d}: a box of {} from {} (of {}) to {} (of {})",
                extent[d], src_start[d], src_shape[d], dst_start[d], dst_shape[d]
            ));
        }
    }
    let ss = row_major_strides(src_shape);
    let ds = row_major_strides(dst_shape);
    let offset = |start: &[usize], strides: &[usize]| -> usize {
        start.iter().zip(strides).map(|(a, b)| a * b).sum()
    };
    Ok(StridedCopy {
        shape: extent.to_vec(),
        src_offset: if extent.contains(&0) {
            0
        } else {
            offset(src_start, &ss)
        },
        dst_offset: if extent.contains(&0) {
            0
        } else {
            offset(dst_start, &ds)
        },
        src_strides: ss,
        dst_strides: ds,
    })
}

fn perm_of(perm: &[i64], rank: usize) -> Result<Vec<usize>, String> {
    let p: Vec<usize> = perm
        .iter()
        .map(|&d| usize::try_from(d).ok().filter(|&d| d < rank))
        .collect::<Option<_>>()
        .ok_or_else(|| format!("permutation {perm:?} of rank {rank}"))?;
    let mut seen = vec![false; rank];
    for &d in &p {
        if std::mem::replace(&mut seen[d], true) {
            return Err(format!("permutation {perm:?} repeats {d}"));
        }
    }
    if p.len() != rank {
        return Err(format!("permutation {perm:?} of rank {rank}"));
    }
    Ok(p)
}

/// `transpose(x, perm)`: output dim `d` is input dim `perm[d]`.
pub fn transpose(in_shape: &[usize], perm: &[i64]) -> Result<(Vec<usize>, StridedCopy), String> {
    let p = perm_of(perm, in_shape.len())?;
    let in_strides = row_major_strides(in_shape);
    let out_shape: Vec<usize> = p.iter().map(|&d| in_shape[d]).collect();
    let copy = StridedCopy {
        src_strides: p.iter().map(|&d| in_strides[d]).collect(),
        dst_strides: row_major_strides(&out_shape),
        shape: out_shape.clone(),
        src_offset: 0,
        dst_offset: 0,
    };
    Ok((out_shape, copy))
}

/// `broadcast_in_dim(x, dims)` to `out_shape`: operand dim `i` becomes
/// output dim `dims[i]` (size equal, or 1 and broadcast).
pub fn broadcast_in_dim(
    in_shape: &[usize],
    bdims: &[i64],
    out_shape: &[usize],
) -> Result<StridedCopy, String> {
    if bdims.len() != in_shape.len() {
        return Err(format!(
            "{} broadcast dimensions for rank {}",
            bdims.len(),
            in_shape.len()
        ));
    }
    let in_strides = row_major_strides(in_shape);
    let mut src_strides = vec![0; out_shape.len()];
    for (i, &d) in bdims.iter().enumerate() {
        let d = usize::try_from(d)
            .ok()
            .filter(|&d| d < out_shape.len())
            .ok_or_else(|| format!("broadcast dimension {d} of rank {}", out_shape.len()))?;
        if in_shape[i] == out_shape[d] {
            src_strides[d] = in_strides[i];
        } else if in_shape[i] != 1 {
            return Err(format!(
                "operand dimension {i} ({}) does not broadcast to {}",
                in_shape[i], out_shape[d]
            ));
        }
    }
    Ok(StridedCopy {
        shape: out_shape.to_vec(),
        src_strides,
        dst_strides: row_major_strides(out_shape),
        src_offset: 0,
        dst_offset: 0,
    })
}

/// `slice(x, start, limit, strides)`.
pub fn slice(
    in_shape: &[usize],
    start: &[i64],
    limit: &[i64],
    strides: &[i64],
) -> Result<(Vec<usize>, StridedCopy), String> {
    let rank = in_shape.len();
    if start.len() != rank || limit.len() != rank || strides.len() != rank {
        return Err(format!(
            "slice attributes of the wrong rank for rank {rank}"
        ));
    }
    let in_strides = row_major_strides(in_shape);
    let (mut out, mut ss, mut offset) = (Vec::new(), Vec::new(), 0usize);
    for d in 0..rank {
        let (s, l, st) = (start[d], limit[d], strides[d]);
        let ok = s >= 0 && l >= s && st >= 1 && (l as u64) <= in_shape[d] as u64;
        if !ok {
            return Err(format!(
                "dimension {d}: slice {s}..{l} step {st} of {}",
                in_shape[d]
            ));
        }
        let (s, l, st) = (s as usize, l as usize, st as usize);
        let n = (l - s).div_ceil(st);
        out.push(n);
        ss.push(in_strides[d] * st);
        offset += s * in_strides[d];
    }
    let copy = StridedCopy {
        dst_strides: row_major_strides(&out),
        shape: out.clone(),
        src_strides: ss,
        src_offset: if out.contains(&0) { 0 } else { offset },
        dst_offset: 0,
    };
    Ok((out, copy))
}

/// `pad(x, value, low, high, interior)`: the output shape, and the copy of
/// the operand's surviving elements into an output already filled with
/// the padding value (negative padding cuts elements off).
pub fn pad(
    in_shape: &[usize],
    low: &[i64],
    high: &[i64],
    interior: &[i64],
) -> Result<(Vec<usize>, StridedCopy), String> {
    let rank = in_shape.len();
    if low.len() != rank || high.len() != rank || interior.len() != rank {
        return Err(format!(
            "padding attributes of the wrong rank for rank {rank}"
        ));
    }
    let mut out = Vec::with_capacity(rank);
    for d in 0..rank {
        let n = in_shape[d] as i128;
        let (lo, hi, int) = (low[d] as i128, high[d] as i128, interior[d] as i128);
        let size = lo + hi + n + (n - 1).max(0) * int;
        if int < 0 || size < 0 || size > i64::MAX as i128 {
            return Err(format!(
                "dimension {d}: padding low={lo} high={hi} interior={int} of size {n} is invalid"
            ));
        }
        out.push(size as usize);
    }
    let in_strides = row_major_strides(in_shape);
    let out_strides = row_major_strides(&out);
    let (mut shape, mut ss, mut ds) = (Vec::new(), Vec::new(), Vec::new());
    let (mut src_off, mut dst_off) = (0usize, 0usize);
    for d in 0..rank {
        let step = interior[d] as i128 + 1;
        let lo = low[d] as i128;
        let o = out[d] as i128;
        let n = in_shape[d] as i128;
        // Source index j lands on lo + j*step; keep those inside [0, o).
        let j0 = if lo >= 0 { 0 } else { (-lo + step - 1) / step };
        let j1 = if o - lo <= 0 {
            0
        } else {
            ((o - lo + step - 1) / step).min(n)
        };
        let count = (j1 - j0).max(0);
        shape.push(count as usize);
        ss.push(in_strides[d]);
        ds.push(out_strides[d] * step as usize);
        if count > 0 {
            src_off += j0 as usize * in_strides[d];
            dst_off += (lo + j0 * step) as usize * out_strides[d];
        }
    }
    let empty = shape.contains(&0);
    let copy = StridedCopy {
        shape,
        src_strides: ss,
        dst_strides: ds,
        src_offset: if empty { 0 } else { src_off },
        dst_offset: if empty { 0 } else { dst_off },
    };
    Ok((out, copy))
}

/// `concatenate(xs, dim)`: the output shape and one copy per operand.
pub fn concatenate(
    shapes: &[Vec<usize>],
    dim: i64,
) -> Result<(Vec<usize>, Vec<StridedCopy>), String> {
    let first = shapes.first().ok_or("a concatenation of nothing")?;
    let rank = first.len();
    let dim = usize::try_from(dim)
        .ok()
        .filter(|&d| d < rank)
        .ok_or_else(|| format!("dimension {dim} of rank {rank}"))?;
    let mut out = first.clone();
    out[dim] = 0;
    for s in shapes {
        let same = s.len() == rank && (0..rank).all(|d| d == dim || s[d] == first[d]);
        if !same {
            return Err(format!(
                "operands of shapes {first:?} and {s:?} along dimension {dim}"
            ));
        }
        out[dim] += s[dim];
    }
    let mut copies = Vec::with_capacity(shapes.len());
    let mut at = 0;
    for s in shapes {
        let mut dst_start = vec![0; rank];
        dst_start[dim] = at;
        copies.push(box_copy(&out, s, &dst_start, &vec![0; rank], s)?);
        at += s[dim];
    }
    Ok((out, copies))
}

/// How a reduction over `dims` is laid out for the row kernel: transpose
/// the kept dims first (in order) and the reduced ones last (when they are
/// not already), then fold each row of `red` elements into one of `outer`
/// outputs, whose shape is the kept dims.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReduceLayout {
    /// `None` when the reduced dims already are the trailing ones, in order.
    pub perm: Option<Vec<i64>>,
    pub outer: usize,
    pub red: usize,
    pub out_shape: Vec<usize>,
}

pub fn reduce_layout(shape: &[usize], rdims: &[i64]) -> Result<ReduceLayout, String> {
    let rank = shape.len();
    let mut reduced = vec![false; rank];
    for &d in rdims {
        let slot = usize::try_from(d).ok().and_then(|d| reduced.get_mut(d));
        match slot {
            Some(seen) if !*seen => *seen = true,
            Some(_) => return Err(format!("dimension {d} is listed twice")),
            None => return Err(format!("dimension {d} is out of range for rank {rank}")),
        }
    }
    let kept: Vec<usize> = (0..rank).filter(|&d| !reduced[d]).collect();
    let red_dims: Vec<usize> = (0..rank).filter(|&d| reduced[d]).collect();
    let order: Vec<usize> = kept.iter().chain(&red_dims).copied().collect();
    let identity = order.iter().enumerate().all(|(i, &d)| i == d);
    let out_shape: Vec<usize> = kept.iter().map(|&d| shape[d]).collect();
    Ok(ReduceLayout {
        perm: (!identity).then(|| order.iter().map(|&d| d as i64).collect()),
        outer: num_elements(&out_shape).ok_or("too many elements")?,
        red: red_dims.iter().map(|&d| shape[d]).product(),
        out_shape,
    })
}

/// `(dim_size, inner)` of dimension `dim` of a row-major `shape`: element
/// `i`'s index along `dim` is `(i / inner) % dim_size` (what the iota and
/// mask kernels compute).
pub fn dim_walk(shape: &[usize], dim: usize) -> Result<(usize, usize), String> {
    let size = *shape
        .get(dim)
        .ok_or_else(|| format!("dimension {dim} of a rank-{} block", shape.len()))?;
    let inner = shape[dim + 1..].iter().product::<usize>();
    Ok((size, inner.max(1)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use meshrun_compiler::ir::{ElemType, TensorType};
    use meshrun_kernels::cpu::shape_ops;
    use meshrun_kernels::HostTensor;

    /// A tensor of `shape` whose elements are 0, 1, 2, ... (distinct).
    fn counting(shape: &[usize]) -> HostTensor {
        let n = num_elements(shape).unwrap();
        HostTensor::from_vec(shape, (0..n).map(|i| i as f32).collect()).unwrap()
    }

    fn run(copy: &StridedCopy, src: &HostTensor, out_len: usize, fill: f64) -> Vec<f64> {
        let mut dst = vec![fill; out_len];
        copy.apply(&src.to_f64_vec(), &mut dst).unwrap();
        dst
    }

    #[test]
    fn transposes_match_the_cpu_kernel() {
        for (shape, perm) in [
            (vec![2, 3, 4], vec![2, 0, 1]),
            (vec![5, 1, 3], vec![1, 2, 0]),
            (vec![4, 6], vec![1, 0]),
            (vec![3], vec![0]),
        ] {
            let x = counting(&shape);
            let want = shape_ops::transpose(&x, &perm).unwrap();
            let (out, copy) = transpose(&shape, &perm).unwrap();
            assert_eq!(out, want.shape());
            assert_eq!(run(&copy, &x, want.len(), -1.0), want.to_f64_vec());
            assert_eq!(
                run(&copy.simplified(), &x, want.len(), -1.0),
                want.to_f64_vec()
            );
        }
        assert!(transpose(&[2, 3], &[0, 0]).is_err());
        assert!(transpose(&[2, 3], &[0, 2]).is_err());
    }

    #[test]
    fn broadcasts_match_the_cpu_kernel() {
        for (shape, bdims, out) in [
            (vec![3], vec![1], vec![2, 3]),
            (vec![1, 4], vec![0, 2], vec![3, 2, 4]),
            (vec![], vec![], vec![2, 2]),
            (vec![2, 1], vec![2, 0], vec![5, 3, 2]),
        ] {
            let x = counting(&shape);
            let ty = TensorType::new(
                out.iter().map(|&d| d as i64).collect::<Vec<_>>(),
                ElemType::F32,
            );
            let want = shape_ops::broadcast_in_dim(&x, &bdims, &ty).unwrap();
            let copy = broadcast_in_dim(&shape, &bdims, &out).unwrap();
            assert_eq!(run(&copy, &x, want.len(), -1.0), want.to_f64_vec());
            assert_eq!(
                run(&copy.simplified(), &x, want.len(), -1.0),
                want.to_f64_vec()
            );
        }
        assert!(broadcast_in_dim(&[3], &[0], &[4]).is_err());
    }

    #[test]
    fn slices_match_the_cpu_kernel() {
        let shape = vec![5, 7, 3];
        let x = counting(&shape);
        for (start, limit, strides) in [
            (vec![0, 0, 0], vec![5, 7, 3], vec![1, 1, 1]),
            (vec![1, 2, 0], vec![5, 7, 2], vec![2, 3, 1]),
            (vec![4, 6, 2], vec![4, 7, 3], vec![1, 1, 1]),
        ] {
            let want = shape_ops::slice(&x, &start, &limit, &strides).unwrap();
            let (out, copy) = slice(&shape, &start, &limit, &strides).unwrap();
            assert_eq!(out, want.shape());
            assert_eq!(run(&copy, &x, want.len(), -1.0), want.to_f64_vec());
        }
        assert!(slice(&shape, &[0, 0, 0], &[6, 7, 3], &[1, 1, 1]).is_err());
        assert!(slice(&shape, &[0, 0, 0], &[5, 7, 3], &[1, 0, 1]).is_err());
    }

    #[test]
    fn pads_match_the_cpu_kernel_including_negative_padding() {
        let shape = vec![4, 3];
        let x = counting(&shape);
        let value = HostTensor::from_vec(&[], vec![-1.0f32]).unwrap();
        for (low, high, interior) in [
            (vec![1, 0], vec![2, 1], vec![0, 0]),
            (vec![0, 2], vec![0, 0], vec![1, 2]),
            (vec![-1, 1], vec![-2, -1], vec![0, 1]),
            (vec![-3, -2], vec![1, 0], vec![2, 0]),
            (vec![-5, 0], vec![1, 0], vec![0, 0]),
        ] {
            let want = shape_ops::pad(&x, &value, &low, &high, &interior).unwrap();
            let (out, copy) = pad(&shape, &low, &high, &interior).unwrap();
            assert_eq!(out, want.shape(), "{low:?} {high:?} {interior:?}");
            assert_eq!(
                run(&copy, &x, want.len(), -1.0),
                want.to_f64_vec(),
                "{low:?} {high:?} {interior:?}"
            );
        }
        assert!(pad(&shape, &[-9, 0], &[0, 0], &[0, 0]).is_err());
    }

    #[test]
    fn concatenations_match_the_cpu_kernel() {
        let a = counting(&[2, 3]);
        let b = HostTensor::from_vec(&[2, 1], vec![100.0f32, 101.0]).unwrap();
        let c = HostTensor::from_vec(&[2, 2], vec![200.0f32, 201.0, 202.0, 203.0]).unwrap();
        let want = shape_ops::concatenate(&[&a, &b, &c], 1).unwrap();
        let (out, copies) = concatenate(&[vec![2, 3], vec![2, 1], vec![2, 2]], 1).unwrap();
        assert_eq!(out, want.shape());
        let mut dst = vec![-1.0; want.len()];
        for (copy, src) in copies.iter().zip([&a, &b, &c]) {
            copy.apply(&src.to_f64_vec(), &mut dst).unwrap();
        }
        assert_eq!(dst, want.to_f64_vec());
        assert!(concatenate(&[vec![2, 3], vec![3, 3]], 1).is_err());
    }

    #[test]
    fn reduce_layouts_put_reduced_dims_last() {
        let l = reduce_layout(&[2, 3, 4], &[2]).unwrap();
        assert_eq!(
            (l.perm, l.outer, l.red, l.out_shape),
            (None, 6, 4, vec![2, 3])
        );
        let l = reduce_layout(&[2, 3, 4], &[0, 2]).unwrap();
        assert_eq!(l.perm, Some(vec![1, 0, 2]));
        assert_eq!((l.outer, l.red), (3, 8));
        let l = reduce_layout(&[5], &[]).unwrap();
        assert_eq!((l.perm, l.outer, l.red), (None, 5, 1));
        assert!(reduce_layout(&[2, 3], &[1, 1]).is_err());
        assert!(reduce_layout(&[2, 3], &[2]).is_err());
    }

    #[test]
    fn bounds_are_checked_and_meta_is_encoded() {
        let copy = box_copy(&[4, 4], &[2, 2], &[2, 2], &[0, 0], &[2, 2]).unwrap();
        assert!(copy.check_bounds(4, 16).is_ok());
        assert!(copy.check_bounds(3, 16).is_err());
        assert!(copy.check_bounds(4, 15).is_err());
        assert_eq!(copy.encode().unwrap(), vec![4, 2, 0, 10, 2, 2, 2, 1, 4, 1]);
        assert!(box_copy(&[4, 4], &[2, 2], &[3, 0], &[0, 0], &[2, 2]).is_err());
        let merged = StridedCopy::contiguous(6).simplified();
        assert_eq!(merged.shape, vec![6]);
        let (_, t) = transpose(&[2, 3], &[0, 1]).unwrap();
        assert_eq!(t.simplified().shape, vec![6]);
        assert_eq!(dim_walk(&[2, 3, 4], 1).unwrap(), (3, 4));
        assert!(dim_walk(&[2], 1).is_err());
    }
}
