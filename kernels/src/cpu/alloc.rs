//! Reusing big blocks, for every kernel and the runtime alike.
//!
//! A freshly allocated block of many megabytes is fresh pages: the first
//! write to each one faults and the kernel zeroes it, which makes filling
//! it several times slower than writing memory already mapped (on the
//! 1-device MLP training step, page faults were ~15% of the time). So
//! blocks of at least [`MIN_POOLED_BYTES`] that the runtime frees (its
//! devices hand them back after their last use) are kept in a
//! process-wide pool, and kernels ([`array`]) and the runtime's
//! collectives ([`take`]) take their results from it when a block of the
//! same element type and size is there. Kernels taking from the pool is
//! also what keeps it small: a pool only the collectives drew from filled
//! with every freed matmul result, up to [`MAX_POOLED_BYTES`], which was
//! most of a training step's peak memory. The oldest blocks go first.

use std::any::Any;
use std::collections::VecDeque;
use std::sync::Mutex;

use meshrun_compiler::ir::ElemType;
use ndarray::{ArrayD, IxDyn};

use crate::tensor::{HostElem, HostTensor};

/// Smaller blocks come from the allocator's own free lists, warm already.
/// Larger ones may not: glibc serves blocks above its mmap threshold (128
/// KiB at first) with fresh pages, and a 1 MiB all-gather on 8 simulated
/// devices took 420-460 µs with the pool starting at 4 MiB and 130-230 µs
/// with it starting here.
pub const MIN_POOLED_BYTES: usize = 256 << 10;
/// The most memory the pool keeps: with kernels taking from it, a small
/// pool is enough (the 8-device B=256 H=2048 MLP training step: peak 906
/// MB with 256 MiB, 849 MB with 64 MiB, the same time), and it still holds
/// a 64 MiB block for the big collectives.
pub const MAX_POOLED_BYTES: usize = 64 << 20;

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

/// A pooled row-major block of `len` elements of `elem` (any shape, any
/// contents), if there is one.
pub fn take(elem: ElemType, len: usize) -> Option<HostTensor> {
    if len * elem.byte_size() < MIN_POOLED_BYTES {
        return None;
    }
    let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
    let i = pool
        .blocks
        .iter()
        .rposition(|t| t.elem_type() == elem && t.len() == len)?;
    let t = pool.blocks.remove(i)?;
    pool.bytes -= bytes_of(&t);
    Some(t)
}

/// A row-major array of `shape` whose contents are unspecified (a reused
/// block, or zeros): the caller must write every element.
pub fn array<T: HostElem>(shape: &[usize]) -> ArrayD<T> {
    let len: usize = shape.iter().product();
    take(T::ELEM, len)
        .and_then(typed::<T>)
        .and_then(|a| a.into_shape_with_order(IxDyn(shape)).ok())
        .unwrap_or_else(|| ArrayD::from_elem(IxDyn(shape), T::zero_value()))
}

/// The array of `t` if it holds `T`s.
fn typed<T: HostElem>(t: HostTensor) -> Option<ArrayD<T>> {
    let any: Box<dyn Any> = crate::with_array!(t, a: U => Box::new(a));
    any.downcast::<ArrayD<T>>().ok().map(|a| *a)
}

/// Keep a block no one uses any more for a later [`take`] or [`array`].
pub fn recycle(t: HostTensor) {
    let bytes = bytes_of(&t);
    if !(MIN_POOLED_BYTES..=MAX_POOLED_BYTES).contains(&bytes) {
        return;
    }
    let standard = crate::with_array!(&t, a: T => a.is_standard_layout());
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
    fn big_arrays_are_reused_with_their_type_small_ones_are_not() {
        let n = MIN_POOLED_BYTES / 4;
        let mut a = array::<f32>(&[n]);
        a.fill(3.0);
        let ptr = a.as_ptr();
        recycle(HostTensor::F32(a));
        // Other tests may take it first; when this one gets it back, it is
        // the same memory, reshaped.
        let b = array::<f32>(&[2, n / 2]);
        assert_eq!(b.shape(), &[2, n / 2]);
        if b.as_ptr() == ptr {
            assert!(b.iter().all(|&x| x == 3.0));
        }
        // Same byte size, other element type: not taken as f32.
        recycle(HostTensor::I32(ArrayD::from_elem(IxDyn(&[n]), 1)));
        assert!(array::<f32>(&[n / 2, 2])
            .iter()
            .all(|&x| x == 0.0 || x == 3.0));
        let small = array::<f32>(&[4]);
        assert_eq!(small.as_slice().unwrap(), &[0.0; 4]);
    }
}
