//! Filling one big result on several cores, for kernels that write it
//! element by element (element-wise ops, fused chains).
//!
//! A one-device run gives its kernels all of rayon's threads
//! (`Parallelism::Rayon`); only `dot_general` and `convolution` used them,
//! so every memory-bound op of the run (the softmax over a 16x64x2048
//! logits tensor, an SGD update of a 1024x1024 weight) ran on one core
//! while XLA ran it on all. [`eval_op`](super::eval_op) now sets the op's
//! parallelism for the calling thread ([`with_parallelism`]) and such
//! kernels cut their output into pieces ([`fill_pieces`]), each computed
//! by the same element function, so the bits do not depend on the cut.
//!
//! Inside a simulated device the parallelism is `None` (each device is a
//! thread of its own, and rayon must not run inside one: a waiting rayon
//! worker runs other jobs, possibly a peer device's whole program), and
//! [`fill_pieces`] calls its function once, on the calling thread.

use std::cell::Cell;

use gemm::Parallelism;
use rayon::prelude::*;

/// Outputs smaller than this are filled by the calling thread alone:
/// handing pieces to rayon's threads costs a few µs, as much as writing
/// ~64 KiB.
pub const PARALLEL_MIN_BYTES: usize = 256 << 10;

/// Pieces per thread: a few, so that a thread slowed by the OS does not
/// hold the others up by a whole share.
const PIECES_PER_THREAD: usize = 4;

thread_local! {
    /// Threads the kernels called on this thread may use (1: none but it).
    static THREADS: Cell<usize> = const { Cell::new(1) };
}

/// Threads `par` stands for.
pub fn threads_of(par: Parallelism) -> usize {
    match par {
        Parallelism::None => 1,
        Parallelism::Rayon(0) => rayon::current_num_threads(),
        Parallelism::Rayon(n) => n,
    }
}

/// Run `f` with the kernels on this thread allowed `par`'s threads (and
/// back to what it was afterwards, also when `f` panics).
pub fn with_parallelism<R>(par: Parallelism, f: impl FnOnce() -> R) -> R {
    struct Restore(usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            THREADS.with(|t| t.set(self.0));
        }
    }
    let _restore = Restore(THREADS.with(|t| t.replace(threads_of(par))));
    f()
}

/// Threads the kernels on this thread may use now.
pub fn current_threads() -> usize {
    THREADS.with(Cell::get)
}

/// Call `fill(start, piece)` on consecutive pieces of `out` that cover
/// it (`start`: the piece's first index), each a whole multiple of
/// `align` elements but the last: on rayon's threads when this thread
/// may use several and `out` is big, else once on the whole of `out`.
pub fn fill_pieces<T: Send>(out: &mut [T], align: usize, fill: impl Fn(usize, &mut [T]) + Sync) {
    let bytes = std::mem::size_of_val(out);
    fill_pieces_touching(out, align, bytes, fill)
}

/// [`fill_pieces`] for a job that touches `bytes` in all (a reduction
/// reads much more than it writes).
pub fn fill_pieces_touching<T: Send>(
    out: &mut [T],
    align: usize,
    bytes: usize,
    fill: impl Fn(usize, &mut [T]) + Sync,
) {
    let threads = current_threads();
    if threads < 2 || bytes < PARALLEL_MIN_BYTES || out.len() <= align.max(1) {
        fill(0, out);
        return;
    }
    let align = align.max(1);
    let pieces = threads * PIECES_PER_THREAD;
    let len = out.len().div_ceil(pieces).next_multiple_of(align);
    out.par_chunks_mut(len)
        .enumerate()
        .for_each(|(i, piece)| fill(i * len, piece));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_the_output_once_and_the_setting_is_scoped() {
        let n = PARALLEL_MIN_BYTES / 4 * 3 + 17;
        for par in [
            Parallelism::None,
            Parallelism::Rayon(2),
            Parallelism::Rayon(3),
        ] {
            let mut out = vec![0u32; n];
            let calls = std::sync::atomic::AtomicUsize::new(0);
            with_parallelism(par, || {
                assert_eq!(current_threads(), threads_of(par));
                fill_pieces(&mut out, 16, |start, piece| {
                    calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    assert_eq!(start % 16, 0);
                    for (i, o) in piece.iter_mut().enumerate() {
                        *o += (start + i) as u32 + 1;
                    }
                });
            });
            assert!(
                out.iter().enumerate().all(|(i, &v)| v == i as u32 + 1),
                "{par:?}"
            );
            let calls = calls.into_inner();
            assert_eq!(calls == 1, threads_of(par) == 1, "{par:?}: {calls} pieces");
            assert_eq!(current_threads(), 1);
        }
    }

    #[test]
    fn small_outputs_stay_on_the_calling_thread() {
        let mut out = vec![0u8; 100];
        let caller = std::thread::current().id();
        with_parallelism(Parallelism::Rayon(4), || {
            fill_pieces(&mut out, 1, |_, p| {
                assert_eq!(std::thread::current().id(), caller);
                p.fill(1);
            })
        });
        assert!(out.iter().all(|&v| v == 1));
    }
}
