//! The im2col kernel of `stablehlo.convolution` on the GPU (`conv.cuh`),
//! its names, and the table it reads ([`im2col_meta`]), built from the
//! CPU kernel's [`ConvGeometry`] so both backends place every tap the
//! same way. The runtime multiplies the columns with cuBLAS
//! (`runtime/src/cuda/conv_plan.rs`).
//!
//! None of this has run on a GPU (none is lent to this project): NVRTC
//! compiles the kernels in CI, and [`im2col_emulated`], the kernel's
//! index arithmetic ported line by line, is checked against the CPU
//! kernel's geometry here and, with the GEMM plan, against the CPU
//! convolution in the runtime's tests.

use meshrun_compiler::ir::ElemType;

use super::generate::Entries;
use super::names::width_type;
use crate::cpu::convolution::ConvGeometry;

/// The template source, included after `templates.cuh`.
pub(crate) const SOURCE: &str = include_str!("conv.cuh");

/// Values before the per-dimension entries of [`im2col_meta`]
/// (`CONV_HEADER` in `conv.cuh`).
pub const HEADER: usize = 10;
/// Values per spatial dimension (`CONV_PER_DIM`).
pub const PER_DIM: usize = 4;

/// Element widths with an im2col kernel (the float types cuBLAS takes:
/// f16/bf16, f32, f64).
pub const IM2COL_WIDTHS: [usize; 3] = [2, 4, 8];

/// `im2col_b<width>(const W* x, W* col, const long long* meta, long long
/// n)` for the width of `e`, a float type (integer convolutions run on
/// the host, as integer dots do).
pub fn im2col(e: ElemType) -> Option<String> {
    let w = e.byte_size();
    (e.is_float() && IM2COL_WIDTHS.contains(&w)).then(|| format!("im2col_b{w}"))
}

/// The table the im2col kernel reads for output batches `first ..
/// first + chunk` (the rows of one launch): `[rank, groups, batch groups
/// (0/1), chunk, first, output positions, window taps, group input
/// features, input features, output batch]`, then per spatial dimension
/// `[input size, output size, kernel size, where its taps start in this
/// table]`, then the taps: for dimension `s`, `out[s] * kernel[s]` input
/// indices (`-1` on padding or a dilation hole) — `ConvGeometry::taps`.
pub fn im2col_meta(geo: &ConvGeometry, first: usize, chunk: usize) -> Vec<i64> {
    let rank = geo.in_spatial.len();
    let mut meta: Vec<i64> = [
        rank,
        geo.groups,
        usize::from(geo.batch_groups),
        chunk,
        first,
        geo.positions(),
        geo.window_size(),
        geo.kernel_in,
        geo.features,
        geo.out_batch,
    ]
    .iter()
    .map(|&v| v as i64)
    .collect();
    let mut at = HEADER + PER_DIM * rank;
    for s in 0..rank {
        meta.extend(
            [
                geo.in_spatial[s],
                geo.out_spatial[s],
                geo.kernel_spatial[s],
                at,
            ]
            .map(|v| v as i64),
        );
        at += geo.taps[s].len();
    }
    for taps in &geo.taps {
        meta.extend(taps.iter().map(|t| t.map_or(-1, |i| i as i64)));
    }
    meta
}

/// Elements of the columns one launch writes for `meta`.
pub fn im2col_len(meta: &[i64]) -> usize {
    // groups x chunk x positions x window x group input features
    [1, 3, 5, 6, 7]
        .iter()
        .map(|&i| meta[i].max(0) as usize)
        .product()
}

/// How many input elements an im2col launch with `meta` may read (the
/// canonical lhs holds at least these), after checking that `meta` is
/// laid out as [`im2col_meta`] writes it: the launcher's check, since the
/// kernel trusts its table.
pub fn im2col_reads(meta: &[i64]) -> Result<usize, String> {
    let bad = |what: &str| format!("im2col table: {what}");
    let header = meta.get(..HEADER).ok_or_else(|| bad("too short"))?;
    if header.iter().any(|&v| v < 0) {
        return Err(bad("negative sizes"));
    }
    let h = |i: usize| header[i] as usize;
    let (rank, groups, batch_groups, chunk, first) = (h(0), h(1), h(2), h(3), h(4));
    let (positions, window, cin, features, out_batch) = (h(5), h(6), h(7), h(8), h(9));
    let dims_end = rank
        .checked_mul(PER_DIM)
        .and_then(|d| d.checked_add(HEADER))
        .filter(|&e| e <= meta.len())
        .ok_or_else(|| bad("too short for its rank"))?;
    let (mut at, mut ins, mut outs, mut taps) = (dims_end, 1usize, 1usize, 1usize);
    for s in 0..rank {
        let d = &meta[HEADER + PER_DIM * s..HEADER + PER_DIM * (s + 1)];
        if d.iter().any(|&v| v < 0) || d[3] as usize != at {
            return Err(bad(&format!("dimension {s}")));
        }
        let (size, out, kernel) = (d[0] as usize, d[1] as usize, d[2] as usize);
        let len = out.checked_mul(kernel).ok_or_else(|| bad("overflow"))?;
        let table = meta
            .get(at..at + len)
            .ok_or_else(|| bad(&format!("taps of dimension {s} missing")))?;
        if table.iter().any(|&t| t < -1 || t >= size as i64) {
            return Err(bad(&format!("a tap outside dimension {s}")));
        }
        at += len;
        ins = ins.checked_mul(size).ok_or_else(|| bad("overflow"))?;
        outs = outs.checked_mul(out).ok_or_else(|| bad("overflow"))?;
        taps = taps.checked_mul(kernel).ok_or_else(|| bad("overflow"))?;
    }
    let groups_fit = if batch_groups != 0 {
        cin <= features
    } else {
        groups.checked_mul(cin).is_some_and(|f| f <= features)
    };
    if at != meta.len() || outs != positions || taps != window || !groups_fit {
        return Err(bad("sizes disagree"));
    }
    if first + chunk > out_batch {
        return Err(bad("batches past the output"));
    }
    let rows = if batch_groups != 0 {
        groups
            .checked_mul(out_batch)
            .ok_or_else(|| bad("overflow"))?
    } else {
        out_batch
    };
    rows.checked_mul(ins)
        .and_then(|n| n.checked_mul(features))
        .ok_or_else(|| bad("overflow"))
}

/// What `im2col_impl` writes: `col[i]` for every `i < n`, the kernel's
/// arithmetic line by line (on host slices, so tests can run it).
pub fn im2col_emulated<T: Copy + Default>(x: &[T], col: &mut [T], meta: &[i64], n: usize) {
    let rank = meta[0] as usize;
    let (batch_groups, chunk, first, positions) = (meta[2], meta[3], meta[4], meta[5]);
    let (window, cin, features, out_batch) = (meta[6], meta[7], meta[8], meta[9]);
    for (i, slot) in col.iter_mut().enumerate().take(n) {
        let mut r = i as i64;
        let c = r % cin;
        r /= cin;
        let mut k = r % window;
        r /= window;
        let mut p = r % positions;
        r /= positions;
        let b = first + r % chunk;
        let g = r / chunk;
        let row = if batch_groups != 0 {
            g * out_batch + b
        } else {
            b
        };
        let c0 = if batch_groups != 0 { 0 } else { g * cin };
        let (mut at, mut stride) = (0, features);
        let mut inside = true;
        for s in (0..rank).rev() {
            let d = &meta[HEADER + PER_DIM * s..];
            let o = p % d[1];
            p /= d[1];
            let t = k % d[2];
            k /= d[2];
            let tap = meta[(d[3] + o * d[2] + t) as usize];
            if tap < 0 {
                inside = false;
                break;
            }
            at += tap * stride;
            stride *= d[0];
        }
        *slot = if inside {
            x[(at + row * stride + c0 + c) as usize]
        } else {
            T::default()
        };
    }
}

/// Every im2col kernel, for the `conv` module.
pub(crate) fn entries() -> Entries {
    let mut out = Entries::default();
    for w in IM2COL_WIDTHS {
        let Some(t) = width_type(w) else { continue };
        out.push(
            format!("im2col_b{w}"),
            &format!("const {t}* x, {t}* col, const long long* meta, long long n"),
            &format!("im2col_impl<{t}>(x, col, meta, n);"),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::conv_cases::{plain, random, Rng, LAYOUTS};

    /// Every column element the kernel writes is the canonical lhs
    /// element `ConvGeometry` (the CPU kernel's placement) names, on
    /// random geometries (strides, both dilations, negative padding,
    /// reversal, feature and batch groups), in whole and in chunks.
    #[test]
    fn im2col_places_what_the_cpu_geometry_names() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut checked = 0;
        for case in 0..400 {
            let (c, lhs, rhs) = random(&mut rng, LAYOUTS[case % LAYOUTS.len()]);
            let Ok(geo) = ConvGeometry::new(&c, &lhs, &rhs) else {
                continue; // negative padding ate the input
            };
            // Distinct values: the canonical lhs offset, plus one.
            let x: Vec<i64> = (1..=lhs.iter().product::<usize>() as i64).collect();
            let (window, cin) = (geo.window_size(), geo.kernel_in);
            let chunk = 1 + rng.below(geo.out_batch.max(1) as u64) as usize;
            for first in (0..geo.out_batch).step_by(chunk) {
                let nb = chunk.min(geo.out_batch - first);
                let meta = im2col_meta(&geo, first, nb);
                let n = im2col_len(&meta);
                assert_eq!(n, geo.groups * nb * geo.positions() * window * cin);
                // The launcher's bound covers every read (the whole lhs).
                assert_eq!(im2col_reads(&meta), Ok(x.len()), "case {case}");
                let mut col = vec![0; n];
                im2col_emulated(&x, &mut col, &meta, n);
                let mut i = 0;
                for g in 0..geo.groups {
                    for b in first..first + nb {
                        let (row, c0) = geo.group_input(b, g);
                        for p in 0..geo.positions() {
                            for k in 0..window {
                                for ci in 0..cin {
                                    let want =
                                        geo.input_offset(row, p, k).map_or(0, |at| x[at + c0 + ci]);
                                    assert_eq!(col[i], want, "case {case} {c:?} element {i}");
                                    i += 1;
                                }
                            }
                        }
                    }
                }
            }
            checked += 1;
        }
        assert!(checked > 250, "only {checked} cases had windows");
    }

    #[test]
    fn bad_tables_are_refused() {
        let c = plain("[b, 0, f]x[0, i, o]->[b, 0, f]", 1, 1);
        let geo = ConvGeometry::new(&c, &[2, 5, 3], &[2, 3, 4]).unwrap();
        let meta = im2col_meta(&geo, 0, 2);
        assert_eq!(im2col_reads(&meta), Ok(2 * 5 * 3));
        let mut tap_out = meta.clone();
        *tap_out.last_mut().unwrap() = 5;
        assert!(im2col_reads(&tap_out).unwrap_err().contains("outside"));
        assert!(im2col_reads(&meta[..meta.len() - 1]).is_err());
        assert!(im2col_reads(&im2col_meta(&geo, 1, 2)).is_err());
        assert!(im2col_reads(&meta[..4]).is_err());
    }

    #[test]
    fn names_follow_the_widths() {
        assert_eq!(im2col(ElemType::F32).as_deref(), Some("im2col_b4"));
        assert_eq!(im2col(ElemType::BF16).as_deref(), Some("im2col_b2"));
        assert_eq!(im2col(ElemType::I1), None);
        assert_eq!(im2col(ElemType::I32), None);
        let all = entries().functions;
        assert_eq!(all, vec!["im2col_b2", "im2col_b4", "im2col_b8"]);
    }
}
