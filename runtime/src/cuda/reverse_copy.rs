//! `stablehlo.reverse` on the GPU as one launch of the strided-copy
//! kernel (`strided_copy_impl` in `templates.cuh`), whose source strides
//! and offset are signed: a reversed dimension reads from its last element
//! with a negative stride. [`StridedCopy`](super::layout::StridedCopy)
//! keeps unsigned strides for its bounds checks, so the descriptor is
//! built here, in the kernel's layout `[n, rank, src_offset, dst_offset,
//! shape.., src_strides.., dst_strides..]`, and [`apply`] runs it on the
//! host exactly as the kernel does (the test of this file; no GPU here).

use super::layout::row_major_strides;

/// The strided-copy descriptor reversing `dims` of a row-major tensor of
/// `shape` into a row-major result.
pub fn reverse_meta(shape: &[usize], dims: &[i64]) -> Result<Vec<i64>, String> {
    let big = |x: usize| i64::try_from(x).map_err(|_| format!("{x} does not fit a 64-bit index"));
    let rank = shape.len();
    if let Some(&d) = dims.iter().find(|&&d| d < 0 || d >= rank as i64) {
        return Err(format!("dimension {d} is out of range for rank {rank}"));
    }
    let strides = row_major_strides(shape);
    let n: usize = shape.iter().product();
    let mut src_strides = Vec::with_capacity(rank);
    let mut src_offset: i64 = 0;
    for d in 0..rank {
        let s = big(strides[d])?;
        if dims.contains(&(d as i64)) && shape[d] > 0 {
            src_offset += (big(shape[d])? - 1) * s;
            src_strides.push(-s);
        } else {
            src_strides.push(s);
        }
    }
    let mut meta = vec![big(n)?, big(rank)?, src_offset, 0];
    for &x in shape {
        meta.push(big(x)?);
    }
    meta.extend(src_strides);
    for &x in &strides {
        meta.push(big(x)?);
    }
    Ok(meta)
}

/// Run descriptor `meta` on host slices, as the kernel does.
pub fn apply<T: Copy>(meta: &[i64], src: &[T], dst: &mut [T]) -> Result<(), String> {
    let (n, rank) = (meta[0], meta[1] as usize);
    let (shape, rest) = meta[4..].split_at(rank);
    let (ss, ds) = rest.split_at(rank);
    for i in 0..n {
        let (mut rem, mut s, mut d) = (i, meta[2], meta[3]);
        for k in (0..rank).rev() {
            let idx = rem % shape[k];
            rem /= shape[k];
            s += idx * ss[k];
            d += idx * ds[k];
        }
        let (s, d) = (usize::try_from(s), usize::try_from(d));
        match (s, d) {
            (Ok(s), Ok(d)) if s < src.len() && d < dst.len() => dst[d] = src[s],
            _ => return Err(format!("element {i} is out of bounds")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use meshrun_kernels::cpu::reverse::reverse;
    use meshrun_kernels::HostTensor;

    #[test]
    fn the_descriptor_reverses_as_the_cpu_kernel() {
        for (shape, dims) in [
            (vec![5usize], vec![0i64]),
            (vec![2, 3], vec![1]),
            (vec![2, 3], vec![0]),
            (vec![3, 1, 4], vec![0, 2]),
            (vec![2, 3, 4], vec![2, 1, 0]),
            (vec![4, 0], vec![1]),
            (vec![3, 2], vec![]),
        ] {
            let n: usize = shape.iter().product();
            let src: Vec<i32> = (0..n as i32).collect();
            let mut dst = vec![-1i32; n];
            let meta = reverse_meta(&shape, &dims).unwrap();
            apply(&meta, &src, &mut dst).unwrap();
            let x = HostTensor::from_vec(&shape, src).unwrap();
            let want = reverse(&x, &dims).unwrap();
            assert_eq!(
                HostTensor::from_vec(&shape, dst).unwrap(),
                want,
                "{shape:?} {dims:?}"
            );
        }
        assert!(reverse_meta(&[2], &[1]).is_err());
    }
}
