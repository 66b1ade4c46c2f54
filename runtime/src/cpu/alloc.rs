//! Reusing big blocks.
//!
//! A freshly allocated block of many megabytes is fresh pages: the first
//! write to each one faults and the kernel zeroes it, which makes filling
//! it several times slower than copying into memory already mapped. So
//! blocks of at least [`MIN_POOLED_BYTES`] that a device frees (the
//! executor hands them back through `Device::release`) are kept in a
//! process-wide pool, and collectives and local instructions take their
//! results from it when one of the same element type and size is there.
//! The pool holds at most [`MAX_POOLED_BYTES`]; the oldest blocks go first.

use std::collections::VecDeque;
use std::sync::Mutex;

use meshrun_kernels::{with_array, HostElem, HostTensor};
use ndarray::{ArrayD, IxDyn};

use crate::blocks::zeros_like_elem;

/// Smaller blocks come from the allocator's own free lists, warm already.
/// Larger ones may not: glibc serves blocks above its mmap threshold (128
/// KiB at first) with fresh pages, and a 1 MiB all-gather on 8 simulated
/// devices took 420-460 µs with the pool starting at 4 MiB and 130-230 µs
/// with it starting here.
pub const MIN_POOLED_BYTES: usize = 256 << 10;
/// The most memory the pool keeps.
pub const MAX_POOLED_BYTES: usize = 1 << 30;

struct Pool {
    blocks: VecDeque<HostTensor>,
    bytes: usize,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    blocks: VecDeque::new(),
    bytes: 0,
});

fn bytes_of(t: &HostTensor) -> usize {
    t.len() * t.elem_type().byte_size()
}

/// A row-major block of `shape` with `like`'s element type. With `zeroed`
/// it is all zeros; without, its contents are unspecified (a reused block)
/// and the caller must write every element.
pub fn block(like: &HostTensor, shape: &[usize], zeroed: bool) -> HostTensor {
    let len: usize = shape.iter().product();
    let elem = like.elem_type();
    if len * elem.byte_size() >= MIN_POOLED_BYTES {
        let reused = {
            let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
            let found = pool
                .blocks
                .iter()
                .position(|t| t.elem_type() == elem && t.len() == len);
            found.and_then(|i| pool.blocks.remove(i)).inspect(|t| {
                pool.bytes -= bytes_of(t);
            })
        };
        if let Some(t) = reused.and_then(|t| reshaped(t, shape)) {
            return if zeroed { fill_zero(t) } else { t };
        }
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

/// Keep a block no one uses any more for a later [`block`].
pub fn recycle(t: HostTensor) {
    let bytes = bytes_of(&t);
    if !(MIN_POOLED_BYTES..=MAX_POOLED_BYTES).contains(&bytes) {
        return;
    }
    let standard = with_array!(&t, a: T => a.is_standard_layout());
    if !standard {
        return;
    }
    let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
    while pool.bytes + bytes > MAX_POOLED_BYTES {
        match pool.blocks.pop_front() {
            Some(old) => pool.bytes -= bytes_of(&old),
            None => break,
        }
    }
    pool.bytes += bytes;
    pool.blocks.push_back(t);
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
