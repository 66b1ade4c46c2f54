//! Copying rectangular boxes between row-major tensors: the one data-moving
//! primitive behind sharding inputs, gathering outputs, collectives and the
//! local slice/remap instructions.
//!
//! A box is copied as a sequence of contiguous runs (`copy_from_slice`):
//! trailing dimensions that both tensors hold whole are merged into one run,
//! so copying a block that spans whole rows (the common case: sharding along
//! the major dimension) is a single `memcpy`.

use meshrun_kernels::{with_array, HostElem, HostTensor};
use ndarray::ArrayD;

/// One box copy: `extent` elements per dimension, read from `src` at
/// `src_start` and written to `dst` at `dst_start`.
#[derive(Debug, Clone, Copy)]
pub struct BoxCopy<'a> {
    pub dst_start: &'a [usize],
    pub src_start: &'a [usize],
    pub extent: &'a [usize],
}

/// Copy a box between two row-major slices of shapes `dst_shape` and
/// `src_shape`. Every coordinate is checked first, so a bad box is an
/// error, never a panic.
pub fn copy_box_slices<T: Copy>(
    dst: &mut [T],
    dst_shape: &[usize],
    src: &[T],
    src_shape: &[usize],
    b: BoxCopy<'_>,
) -> Result<(), String> {
    let rank = dst_shape.len();
    if src_shape.len() != rank
        || b.dst_start.len() != rank
        || b.src_start.len() != rank
        || b.extent.len() != rank
    {
        return Err(format!(
            "box of rank {} between tensors of shapes {dst_shape:?} and {src_shape:?}",
            b.extent.len()
        ));
    }
    if b.extent.contains(&0) {
        // An empty box copies nothing, wherever it starts.
        return Ok(());
    }
    for d in 0..rank {
        let fits =
            |start: usize, size: usize| start.checked_add(b.extent[d]).is_some_and(|e| e <= size);
        if !fits(b.dst_start[d], dst_shape[d]) || !fits(b.src_start[d], src_shape[d]) {
            return Err(format!(
                "box {:?}+{:?} -> {:?} does not fit shapes {src_shape:?} -> {dst_shape:?}",
                b.src_start, b.extent, b.dst_start
            ));
        }
    }
    if dst.len() != dst_shape.iter().product::<usize>()
        || src.len() != src_shape.iter().product::<usize>()
    {
        return Err("tensor data does not match its shape".into());
    }
    if rank == 0 {
        dst[0] = src[0];
        return Ok(());
    }
    // Dimensions `outer..rank` are merged into one contiguous run: all but
    // the first of them are held whole by the box and by both tensors.
    let mut outer = rank - 1;
    while outer > 0 && b.extent[outer] == dst_shape[outer] && b.extent[outer] == src_shape[outer] {
        outer -= 1;
    }
    let inner: usize = dst_shape[outer + 1..].iter().product();
    let run = b.extent[outer] * inner;
    let dst_strides = strides(dst_shape);
    let src_strides = strides(src_shape);
    let offset = |start: &[usize], idx: &[usize], st: &[usize]| -> usize {
        (0..=outer).map(|d| (start[d] + idx[d]) * st[d]).sum()
    };
    // Odometer over the dimensions before `outer`.
    let mut idx = vec![0usize; outer + 1];
    loop {
        let s = offset(b.src_start, &idx, &src_strides);
        let t = offset(b.dst_start, &idx, &dst_strides);
        dst[t..t + run].copy_from_slice(&src[s..s + run]);
        let mut d = outer;
        loop {
            if d == 0 {
                return Ok(());
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < b.extent[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// Row-major strides of `shape`.
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut st = vec![1usize; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        st[d] = st[d + 1] * shape[d + 1];
    }
    st
}

/// Copy a box between two arrays of the same element type. `dst` must be
/// in standard layout (every array meshrun creates is); `src` may have any
/// layout (it is made contiguous first when it is not).
pub fn copy_box_arrays<T: HostElem>(
    dst: &mut ArrayD<T>,
    src: &ArrayD<T>,
    b: BoxCopy<'_>,
) -> Result<(), String> {
    let dst_shape = dst.shape().to_vec();
    let dst_data = dst
        .as_slice_mut()
        .ok_or("destination is not in row-major layout")?;
    match src.as_slice() {
        Some(s) => copy_box_slices(dst_data, &dst_shape, s, src.shape(), b),
        None => {
            let standard = src.as_standard_layout();
            let s = standard
                .as_slice()
                .ok_or("source cannot be made row-major")?;
            copy_box_slices(dst_data, &dst_shape, s, src.shape(), b)
        }
    }
}

/// Copy a box between two host tensors, which must hold the same element
/// type.
pub fn copy_box(dst: &mut HostTensor, src: &HostTensor, b: BoxCopy<'_>) -> Result<(), String> {
    let src_elem = src.elem_type();
    with_array!(dst, d: T => {
        let s = src.array::<T>().ok_or_else(|| {
            format!("cannot copy {src_elem} data into a {} tensor", T::ELEM)
        })?;
        copy_box_arrays(d, s, b)
    })
}

/// A row-major tensor of `shape` and `src`'s element type, all zeros.
pub fn zeros_like_elem(src: &HostTensor, shape: &[usize]) -> HostTensor {
    with_array!(src, _a: T => HostTensor::from(ArrayD::from_elem(shape, T::zero_value())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iota(shape: &[usize]) -> Vec<i32> {
        (0..shape.iter().product::<usize>() as i32).collect()
    }

    #[test]
    fn copies_an_inner_box() {
        let src = iota(&[3, 4]);
        let mut dst = vec![0; 6];
        copy_box_slices(
            &mut dst,
            &[2, 3],
            &src,
            &[3, 4],
            BoxCopy {
                dst_start: &[0, 1],
                src_start: &[1, 1],
                extent: &[2, 2],
            },
        )
        .unwrap();
        assert_eq!(dst, vec![0, 5, 6, 0, 9, 10]);
    }

    #[test]
    fn whole_rows_are_one_run_and_rank0_works() {
        let src = iota(&[2, 2, 3]);
        let mut dst = vec![0; 24];
        copy_box_slices(
            &mut dst,
            &[4, 2, 3],
            &src,
            &[2, 2, 3],
            BoxCopy {
                dst_start: &[2, 0, 0],
                src_start: &[0, 0, 0],
                extent: &[2, 2, 3],
            },
        )
        .unwrap();
        assert_eq!(&dst[12..], &src[..]);
        assert!(dst[..12].iter().all(|&x| x == 0));
        let mut one = vec![0];
        copy_box_slices(
            &mut one,
            &[],
            &[7],
            &[],
            BoxCopy {
                dst_start: &[],
                src_start: &[],
                extent: &[],
            },
        )
        .unwrap();
        assert_eq!(one, vec![7]);
    }

    #[test]
    fn out_of_range_boxes_are_errors() {
        let src = iota(&[2, 2]);
        let mut dst = vec![0; 4];
        let err = copy_box_slices(
            &mut dst,
            &[2, 2],
            &src,
            &[2, 2],
            BoxCopy {
                dst_start: &[1, 0],
                src_start: &[0, 0],
                extent: &[2, 2],
            },
        )
        .unwrap_err();
        assert!(err.contains("does not fit"), "{err}");
    }

    #[test]
    fn tensors_of_different_types_are_refused() {
        let src = HostTensor::from_vec(&[2], vec![1i32, 2]).unwrap();
        let mut dst = HostTensor::from_vec(&[2], vec![0.0f32, 0.0]).unwrap();
        let b = BoxCopy {
            dst_start: &[0],
            src_start: &[0],
            extent: &[2],
        };
        assert!(copy_box(&mut dst, &src, b).is_err());
        let t = ndarray::Array2::from_shape_vec((2, 2), vec![1.0f32, 2.0, 3.0, 4.0])
            .unwrap()
            .reversed_axes()
            .into_dyn();
        let src = HostTensor::F32(t);
        let mut dst = HostTensor::from_vec(&[2, 2], vec![0.0f32; 4]).unwrap();
        let b = BoxCopy {
            dst_start: &[0, 0],
            src_start: &[0, 0],
            extent: &[2, 2],
        };
        copy_box(&mut dst, &src, b).unwrap();
        assert_eq!(dst.to_f64_vec(), vec![1.0, 3.0, 2.0, 4.0]);
    }
}
