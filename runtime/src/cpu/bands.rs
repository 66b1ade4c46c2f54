//! Filling one big output on several cores.
//!
//! A collective whose result is the same on every member (all-gather,
//! all-reduce) is built once per group, by one device thread while its
//! peers sleep; for a multi-megabyte result that one thread would leave
//! the other cores idle. So the output is cut into pieces of about
//! [`PIECE_BYTES`] and the builder plus one helper thread per further core
//! take pieces from a shared queue until none is left.
//!
//! The helpers are plain scoped threads (`std::thread::scope`), never
//! rayon: device threads are workers of a rayon pool (`cpu::pool`), and a
//! rayon worker that waits on another rayon job runs other jobs of its own
//! pool meanwhile — it could pick up a peer device's whole program, which
//! would then block in a collective the waiting device never reaches. A
//! scoped join blocks without running anything else.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use meshrun_kernels::{with_array, HostElem, HostTensor};
use ndarray::ArrayD;

use crate::blocks::{copy_box_slices, BoxCopy};

/// Jobs that touch fewer bytes are done by the calling thread alone:
/// starting a helper costs about as much as copying a megabyte.
pub const PARALLEL_MIN_BYTES: usize = 4 << 20;

/// The size of one piece of work: big enough that taking it from the
/// queue is free, small enough that the threads finish together.
pub const PIECE_BYTES: usize = 1 << 20;

/// The cores of this machine (asked once: it reads cgroup files).
fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Threads (the caller's included) for a job touching `bytes`: one per
/// core from [`PARALLEL_MIN_BYTES`], else one.
pub fn threads_for(bytes: usize) -> usize {
    if bytes >= PARALLEL_MIN_BYTES {
        cores()
    } else {
        1
    }
}

/// The elements of `a` in row-major order, borrowed when `a` already is.
pub fn row_major<T: HostElem>(a: &ArrayD<T>) -> Cow<'_, [T]> {
    match a.as_slice() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(a.iter().copied().collect()),
    }
}

/// Call `fill(offset, piece)` for consecutive pieces of `dst` that
/// together cover it, `offset` being the piece's first index. Pieces are
/// whole multiples of `align` elements (except a short last one when
/// `dst.len()` is not a multiple). Up to `threads` threads (this one and
/// scoped helpers) share the pieces. The first error is returned; the
/// other pieces may or may not have been filled then.
pub fn for_each_piece<T: Send>(
    dst: &mut [T],
    align: usize,
    threads: usize,
    fill: impl Fn(usize, &mut [T]) -> Result<(), String> + Sync,
) -> Result<(), String> {
    let align = align.max(1);
    let per = (PIECE_BYTES / std::mem::size_of::<T>().max(1) / align).max(1) * align;
    let pieces = dst.len().div_ceil(per);
    if threads <= 1 || pieces <= 1 {
        for (i, piece) in dst.chunks_mut(per).enumerate() {
            fill(i * per, piece)?;
        }
        return Ok(());
    }
    let queue = Mutex::new(dst.chunks_mut(per).enumerate());
    let failure: Mutex<Option<String>> = Mutex::new(None);
    let stop = AtomicBool::new(false);
    let fail = |e: String| {
        stop.store(true, Ordering::Relaxed);
        failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(e);
    };
    let work = || {
        while !stop.load(Ordering::Relaxed) {
            // The guard is dropped at the end of the statement: pieces are
            // filled without holding the lock.
            let next = queue.lock().unwrap_or_else(|p| p.into_inner()).next();
            let Some((i, piece)) = next else { break };
            if let Err(e) = fill(i * per, piece) {
                fail(e);
            }
        }
    };
    std::thread::scope(|s| {
        // A helper the OS refuses to start is just not there: the others
        // take its pieces.
        let helpers: Vec<_> = (1..threads.min(pieces))
            .filter_map(|_| {
                std::thread::Builder::new()
                    .name("meshrun-fill".into())
                    .spawn_scoped(s, work)
                    .ok()
            })
            .collect();
        work();
        for h in helpers {
            // Joined by hand, so a helper's panic is an error here rather
            // than a panic of the scope.
            if h.join().is_err() {
                fail("a helper thread panicked while filling a block".into());
            }
        }
    });
    match failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// One box of a [`copy_boxes`]: `extent` elements per dimension of `src`
/// from `src_start`, written at `dst_start`.
#[derive(Debug, Clone)]
pub struct Placed<'a> {
    pub src: &'a HostTensor,
    pub dst_start: Vec<usize>,
    pub src_start: Vec<usize>,
    pub extent: Vec<usize>,
}

/// Copy every box into `dst` (row-major), on up to `threads` threads. The
/// output is cut along its first dimension longer than one (the dimensions
/// before it have one element, so each band of it is contiguous), and each
/// thread copies, band by band, the parts of the boxes that fall in it.
pub fn copy_boxes(
    dst: &mut HostTensor,
    boxes: &[Placed<'_>],
    threads: usize,
) -> Result<(), String> {
    let shape = dst.shape().to_vec();
    let rank = shape.len();
    for b in boxes {
        if b.dst_start.len() != rank || b.src_start.len() != rank || b.extent.len() != rank {
            return Err(format!(
                "a box of rank {} copied into a block of shape {shape:?}",
                b.extent.len()
            ));
        }
    }
    let dst_elem = dst.elem_type();
    with_array!(dst, d: T => {
        let srcs = boxes
            .iter()
            .map(|b| {
                let a = b.src.array::<T>().ok_or_else(|| {
                    format!("cannot copy {} data into a {dst_elem} block", b.src.elem_type())
                })?;
                Ok((row_major(a), a.shape()))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let data = d.as_slice_mut().ok_or("a block not in row-major layout")?;
        // The dimension the bands cut (a scalar is one band of one element).
        let k = shape.iter().position(|&n| n > 1).unwrap_or(0);
        let inner: usize = shape.iter().skip(k + 1).product();
        for_each_piece(data, inner, threads, |offset, piece| {
            if rank == 0 {
                for (b, (src, src_shape)) in boxes.iter().zip(&srcs) {
                    let whole = BoxCopy {
                        dst_start: &b.dst_start,
                        src_start: &b.src_start,
                        extent: &b.extent,
                    };
                    copy_box_slices(piece, &shape, src, src_shape, whole)?;
                }
                return Ok(());
            }
            let (r0, rows) = (offset / inner.max(1), piece.len() / inner.max(1));
            let mut band = shape.clone();
            band[k] = rows;
            for (b, (src, src_shape)) in boxes.iter().zip(&srcs) {
                let (ds, ext) = (b.dst_start[k], b.extent[k]);
                let lo = ds.max(r0);
                let hi = ds.saturating_add(ext).min(r0 + rows);
                if lo >= hi {
                    continue;
                }
                let mut dst_start = b.dst_start.clone();
                dst_start[k] = lo - r0;
                let mut src_start = b.src_start.clone();
                src_start[k] = src_start[k].saturating_add(lo - ds);
                let mut extent = b.extent.clone();
                extent[k] = hi - lo;
                let part = BoxCopy {
                    dst_start: &dst_start,
                    src_start: &src_start,
                    extent: &extent,
                };
                copy_box_slices(piece, &band, src, src_shape, part)?;
            }
            Ok(())
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::copy_box;

    fn iota(shape: &[usize], from: i64) -> HostTensor {
        let n: usize = shape.iter().product();
        HostTensor::from_vec(shape, (0..n as i64).map(|x| x + from).collect::<Vec<i64>>()).unwrap()
    }

    #[test]
    fn pieces_cover_the_output_once_on_any_thread_count() {
        let per = PIECE_BYTES / 4;
        for threads in [1, 2, 5] {
            let mut dst = vec![0u32; 3 * per + 17];
            for_each_piece(&mut dst, 1, threads, |offset, piece| {
                for (i, x) in piece.iter_mut().enumerate() {
                    *x += (offset + i) as u32 + 1;
                }
                Ok(())
            })
            .unwrap();
            assert!(dst.iter().enumerate().all(|(i, &x)| x == i as u32 + 1));
        }
    }

    #[test]
    fn a_failing_piece_is_an_error() {
        let mut dst = vec![0u8; 4 * PIECE_BYTES];
        let r = for_each_piece(&mut dst, 1, 3, |offset, _| {
            if offset == 2 * PIECE_BYTES {
                Err(format!("piece at {offset}"))
            } else {
                Ok(())
            }
        });
        assert_eq!(r, Err(format!("piece at {}", 2 * PIECE_BYTES)));
    }

    #[test]
    fn boxes_cut_into_bands_equal_whole_box_copies() {
        // [1, 600, 700] i64: bands of a few rows along dimension 1; two
        // source boxes side by side along dimension 2, one cut short.
        let shape = [1usize, 600, 700];
        let a = iota(&[1, 600, 400], 0);
        let b = iota(&[1, 650, 300], 1_000_000);
        let boxes = [
            Placed {
                src: &a,
                dst_start: vec![0, 0, 0],
                src_start: vec![0, 0, 0],
                extent: vec![1, 600, 400],
            },
            Placed {
                src: &b,
                dst_start: vec![0, 10, 400],
                src_start: vec![0, 50, 0],
                extent: vec![1, 590, 300],
            },
        ];
        let mut want = iota(&shape, -7);
        for p in &boxes {
            let bc = BoxCopy {
                dst_start: &p.dst_start,
                src_start: &p.src_start,
                extent: &p.extent,
            };
            copy_box(&mut want, p.src, bc).unwrap();
        }
        for threads in [1, 2, 4] {
            let mut got = iota(&shape, -7);
            copy_boxes(&mut got, &boxes, threads).unwrap();
            assert_eq!(got, want, "{threads} threads");
        }
        let mut wrong = HostTensor::from_vec(&[2], vec![0.0f32; 2]).unwrap();
        assert!(copy_boxes(&mut wrong, &boxes, 1).is_err());
    }
}
