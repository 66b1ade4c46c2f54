//! Blocks for collectives and local instructions, from the process-wide
//! reuse pool the kernels draw from too (`meshrun_kernels::cpu::alloc`,
//! which says why it exists).

use meshrun_kernels::{with_array, HostElem, HostTensor};
use ndarray::{ArrayD, IxDyn};

pub use meshrun_kernels::cpu::alloc::{recycle, MAX_POOLED_BYTES, MIN_POOLED_BYTES};

use crate::blocks::zeros_like_elem;

/// A row-major block of `shape` with `like`'s element type. With `zeroed`
/// it is all zeros; without, its contents are unspecified (a reused block)
/// and the caller must write every element.
pub fn block(like: &HostTensor, shape: &[usize], zeroed: bool) -> HostTensor {
    let len: usize = shape.iter().product();
    let reused = meshrun_kernels::cpu::alloc::take(like.elem_type(), len);
    if let Some(t) = reused.and_then(|t| reshaped(t, shape)) {
        return if zeroed { fill_zero(t) } else { t };
    }
    zeros_like_elem(like, shape)
}

/// `t` (row-major) viewed as `shape`, which has as many elements.
fn reshaped(t: HostTensor, shape: &[usize]) -> Option<HostTensor> {
    with_array!(t, a: T => {
        let a: ArrayD<T> = a;
        a.into_shape_with_order(IxDyn(shape)).ok().map(HostTensor::from)
    })
}

fn fill_zero(mut t: HostTensor) -> HostTensor {
    with_array!(&mut t, a: T => a.fill(T::zero_value()));
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_blocks_are_reused_small_ones_are_not() {
        let n = MIN_POOLED_BYTES / 4;
        let like = HostTensor::from_vec(&[1], vec![0.0f32]).unwrap();
        let mut t = block(&like, &[n], true);
        assert!(t.to_f64_vec().iter().all(|&x| x == 0.0));
        if let HostTensor::F32(a) = &mut t {
            a.fill(3.0);
        }
        recycle(t);
        // Reused, reshaped, and zeroed on request (other tests may take it
        // first, so only the values are checked).
        let z = block(&like, &[2, n / 2], true);
        assert_eq!(z.shape(), &[2, n / 2]);
        assert!(z.to_f64_vec().iter().all(|&x| x == 0.0));
        let small = block(&like, &[4], false);
        assert_eq!(small.to_f64_vec(), vec![0.0; 4]);
    }
}
