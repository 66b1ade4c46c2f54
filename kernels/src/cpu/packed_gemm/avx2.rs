//! The register tile (6×16 floats in twelve 256-bit accumulators) and the
//! loops over one packed block, with AVX2 + FMA intrinsics.

#![allow(unsafe_code)]

use ndarray::ArrayViewMut2;

use super::{PackedGemm, MR, NR};

/// Whether this CPU has AVX2 and FMA.
pub(super) fn supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `dst = a·b` (`first`) or `dst += a·b` for one packed block: `a` holds
/// `ceil(mc/MR)` lhs panels and `b` `ceil(nc/NR)` rhs panels of `kc`
/// steps, `dst` is `mc×nc`.
pub(super) fn block(
    token: PackedGemm,
    mut dst: ArrayViewMut2<'_, f32>,
    a: &[f32],
    b: &[f32],
    kc: usize,
    first: bool,
) {
    let (mc, nc) = dst.dim();
    assert!(
        a.len() >= mc.next_multiple_of(MR) * kc && b.len() >= nc.next_multiple_of(NR) * kc,
        "packed_gemm: packed block smaller than its tile"
    );
    let (rs, cs) = (dst.strides()[0], dst.strides()[1]);
    let c = dst.as_mut_ptr();
    #[cfg(target_arch = "x86_64")]
    {
        let _ = token;
        // SAFETY: `token` exists only where `supported()` found AVX2 and
        // FMA, the features `block_avx2` is compiled for. The panels it
        // reads lie in `a` and `b` (lengths checked above: panel `ir/MR`
        // spans `a[ir·kc .. (ir+MR)·kc]`, likewise `b`). It writes `dst`
        // elements `(i, j)`, `i < mc`, `j < nc`, at `c + i·rs + j·cs`:
        // the elements of the view, which `dst` borrows uniquely, so no
        // other reference sees them (the packed buffers are copies).
        unsafe { block_avx2(c, rs, cs, mc, nc, a.as_ptr(), b.as_ptr(), kc, first) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        // No `PackedGemm` exists off x86_64 (`supported()` is false).
        let _ = (token, rs, cs, c, first);
        unreachable!("packed_gemm on a CPU without AVX2")
    }
}

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// See [`block`]; the caller guarantees AVX2 + FMA and the bounds.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
unsafe fn block_avx2(
    c: *mut f32,
    rs: isize,
    cs: isize,
    mc: usize,
    nc: usize,
    a: *const f32,
    b: *const f32,
    kc: usize,
    first: bool,
) {
    for jr in (0..nc).step_by(NR) {
        let nr = NR.min(nc - jr);
        let bp = b.add(jr * kc);
        for ir in (0..mc).step_by(MR) {
            let mr = MR.min(mc - ir);
            let acc = tile(kc, a.add(ir * kc), bp);
            let cp = c.offset(ir as isize * rs + jr as isize * cs);
            if mr == MR && nr == NR && cs == 1 {
                store_rows(cp, rs, &acc, first);
            } else {
                store_edge(cp, rs, cs, mr, nr, &acc, first);
            }
        }
    }
}

/// The 6×16 tile `Σ_p a[p·6+i]·b[p·16+j]`, from zero, one fused
/// multiply-add per step in order.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2,fma")]
unsafe fn tile(kc: usize, a: *const f32, b: *const f32) -> [__m256; 2 * MR] {
    let mut c = [_mm256_setzero_ps(); 2 * MR];
    for p in 0..kc {
        // The panels stream through L1: ask for them a few steps ahead.
        _mm_prefetch::<_MM_HINT_T0>(b.add(p * NR + 8 * NR) as *const i8);
        _mm_prefetch::<_MM_HINT_T0>(a.add(p * MR + 16 * MR) as *const i8);
        let b0 = _mm256_loadu_ps(b.add(p * NR));
        let b1 = _mm256_loadu_ps(b.add(p * NR + 8));
        let ap = a.add(p * MR);
        for i in 0..MR {
            let x = _mm256_broadcast_ss(&*ap.add(i));
            c[2 * i] = _mm256_fmadd_ps(x, b0, c[2 * i]);
            c[2 * i + 1] = _mm256_fmadd_ps(x, b1, c[2 * i + 1]);
        }
    }
    c
}

/// A whole tile into rows of unit column stride.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2,fma")]
unsafe fn store_rows(c: *mut f32, rs: isize, acc: &[__m256; 2 * MR], first: bool) {
    for i in 0..MR {
        let row = c.offset(i as isize * rs);
        let (lo, hi) = (acc[2 * i], acc[2 * i + 1]);
        if first {
            _mm256_storeu_ps(row, lo);
            _mm256_storeu_ps(row.add(8), hi);
        } else {
            _mm256_storeu_ps(row, _mm256_add_ps(_mm256_loadu_ps(row), lo));
            _mm256_storeu_ps(row.add(8), _mm256_add_ps(_mm256_loadu_ps(row.add(8)), hi));
        }
    }
}

/// The `mr×nr` corner of a tile into `dst` of any strides, element by
/// element (the same sums as [`store_rows`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn store_edge(
    c: *mut f32,
    rs: isize,
    cs: isize,
    mr: usize,
    nr: usize,
    acc: &[__m256; 2 * MR],
    first: bool,
) {
    let mut t = [0.0f32; MR * NR];
    for (i, v) in acc.iter().enumerate() {
        _mm256_storeu_ps(t.as_mut_ptr().add(i * 8), *v);
    }
    for i in 0..mr {
        for j in 0..nr {
            let q = c.offset(i as isize * rs + j as isize * cs);
            let v = t[i * NR + j];
            *q = if first { v } else { *q + v };
        }
    }
}
