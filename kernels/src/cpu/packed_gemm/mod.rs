//! An f32 matrix product of meshrun's own for CPUs with AVX2 and FMA:
//! packed panels and a 6×16 register tile of fused multiply-adds, the
//! layout of BLIS and of the `gemm` crate, with block sizes for Zen-class
//! caches.
//!
//! A candidate for the CPU product, measured against the `gemm` crate in
//! `kernels/benches/gemm.rs`; `dot_general` does not call it (it did not
//! win: see `docs/performance.md`, "The CPU product"). On a 2-core AMD
//! EPYC (Zen 3, AVX2 only) XLA's product runs faster than `gemm`'s, and
//! this is where a faster one would start.
//!
//! Results do not depend on the shape around an element: every element
//! of `dst` is `Σ` over blocks of [`KC`] contraction steps, each block
//! summed from zero by one fused multiply-add per step in order, the
//! blocks added in order. So a product over stacked rows, one over a
//! slice of the columns, the transposed product (`dstᵀ = rhsᵀ·lhsᵀ`) and
//! one split over threads give every element the same bits (what the
//! lockstep executor's stacked products need from any product).
//!
//! - `pack.rs`: copies of lhs and rhs blocks into the panel layouts.
//! - `avx2.rs`: the register tile and the loops over one packed block
//!   (the only `unsafe` code: intrinsics and the writes into `dst`).

mod avx2;
mod pack;

use ndarray::{ArrayView2, ArrayViewMut2};

/// Rows of the register tile (lhs panel height).
pub const MR: usize = 6;
/// Columns of the register tile (rhs panel width): two 8-lane vectors.
pub const NR: usize = 16;
/// Contraction steps per packed block: a 16-column rhs panel (32 KiB)
/// streams through L1 while lhs panels stream from L2. Fixed, because
/// the block boundaries decide how each element is rounded. (256 with
/// `MC` = 144, BLIS's Zen 3 sizes, ran 5-15% slower here on 512³ and
/// 1024³ products.)
pub const KC: usize = 512;
/// lhs rows per packed block (`MC·KC` floats = 192 KiB, in L2).
pub const MC: usize = 96;
/// rhs columns per packed block (`KC·NC` floats ≈ 4 MiB, in L3).
pub const NC: usize = 4080;

/// Proof that this CPU runs the AVX2 + FMA kernel. Only [`detect`]
/// makes one.
///
/// [`detect`]: PackedGemm::detect
#[derive(Debug, Clone, Copy)]
pub struct PackedGemm(());

impl PackedGemm {
    /// The kernel, on a CPU with AVX2 and FMA.
    pub fn detect() -> Option<PackedGemm> {
        avx2::supported().then_some(PackedGemm(()))
    }

    /// `dst = lhs · rhs` on this thread, for views of any strides (the
    /// shapes must fit: `lhs` m×k, `rhs` k×n, `dst` m×n).
    pub fn run(
        self,
        dst: ArrayViewMut2<'_, f32>,
        lhs: ArrayView2<'_, f32>,
        rhs: ArrayView2<'_, f32>,
    ) {
        let ((m, k), (k2, n)) = (lhs.dim(), rhs.dim());
        assert!(
            k == k2 && dst.dim() == (m, n),
            "packed_gemm: shapes do not fit"
        );
        let mut dst = dst;
        if m == 0 || n == 0 {
            return;
        }
        if k == 0 {
            dst.fill(0.0);
            return;
        }
        // The register tile stores whole rows of 16: keep the unit stride
        // of `dst` along its columns by computing `dstᵀ = rhsᵀ·lhsᵀ`
        // when `dst` is column-major (the same bits, see the module doc).
        let column_major = dst.strides()[1] != 1 && (dst.strides()[0] == 1 || m == 1);
        if column_major && n > 1 {
            self.blocks(
                dst.reversed_axes(),
                rhs.reversed_axes(),
                lhs.reversed_axes(),
            );
        } else {
            self.blocks(dst, lhs, rhs);
        }
    }

    /// `dst = lhs · rhs` on `threads` rayon threads: the columns (or, for
    /// narrow products, the rows) cut into one part per thread, each
    /// computed by [`PackedGemm::run`] (the same bits as one call).
    pub fn run_threads(
        self,
        mut dst: ArrayViewMut2<'_, f32>,
        lhs: ArrayView2<'_, f32>,
        rhs: ArrayView2<'_, f32>,
        threads: usize,
    ) {
        use ndarray::Axis;
        use rayon::prelude::*;
        let (m, n) = dst.dim();
        // Cut the columns (each part packs its own rhs columns), or the
        // rows of a narrow product; whole register tiles per part.
        let by_columns = n >= 2 * 4 * NR;
        if threads < 2 || !(by_columns || m >= 2 * 8 * MR) {
            return self.run(dst, lhs, rhs);
        }
        let (axis, len, tile, cut) = if by_columns {
            (Axis(1), n, NR, rhs)
        } else {
            (Axis(0), m, MR, lhs)
        };
        let part = len.div_ceil(threads).next_multiple_of(tile);
        let jobs: Vec<_> = dst
            .axis_chunks_iter_mut(axis, part)
            .zip(cut.axis_chunks_iter(axis, part))
            .collect();
        jobs.into_par_iter().for_each(|(d, c)| {
            if by_columns {
                self.run(d, lhs, c)
            } else {
                self.run(d, c, rhs)
            }
        });
    }

    /// The blocked loops: rhs blocks of `KC×NC`, lhs blocks of `MC×KC`,
    /// each pair multiplied by [`avx2::block`].
    fn blocks(
        self,
        mut dst: ArrayViewMut2<'_, f32>,
        lhs: ArrayView2<'_, f32>,
        rhs: ArrayView2<'_, f32>,
    ) {
        let ((m, k), n) = (lhs.dim(), rhs.ncols());
        let kc_max = k.min(KC);
        let mut a_pack = vec![0.0f32; m.min(MC).next_multiple_of(MR) * kc_max];
        let mut b_pack = vec![0.0f32; n.min(NC).next_multiple_of(NR) * kc_max];
        for jc in (0..n).step_by(NC) {
            let nc = NC.min(n - jc);
            for pc in (0..k).step_by(KC) {
                let kc = KC.min(k - pc);
                let b = pack::rhs(&mut b_pack, rhs, pc, jc, kc, nc);
                for ic in (0..m).step_by(MC) {
                    let mc = MC.min(m - ic);
                    let a = pack::lhs(&mut a_pack, lhs, ic, pc, mc, kc);
                    let tile = dst.slice_mut(ndarray::s![ic..ic + mc, jc..jc + nc]);
                    avx2::block(self, tile, a, b, kc, pc == 0);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
