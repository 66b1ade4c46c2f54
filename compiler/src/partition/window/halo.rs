//! Halo arithmetic: which input elements each device's windows read when a
//! windowed op (`convolution`, `reduce_window`) is sharded along one of its
//! window dimensions, and the local op that computes the device's output
//! block from them.
//!
//! The input (size `in`) and the output (size `out`, the number of
//! windows) are split into `n` equal blocks (`Bi = in / n`, `Bo = out /
//! n`). Output block `k`'s windows cover the *padded* positions (see
//! `ir::ops::window`) `[k·Bo·s, k·Bo·s + E)` with `E = (Bo − 1)·s + span`,
//! `span = (w − 1)·window_dilation + 1`. Every device builds a local input
//! of the same length `len` (the programs are SPMD): local element `j` of
//! block `k` is input element `source(k, j)`, or the op's padding value
//! where that lies outside the input (the global padding, which only the
//! edge devices see, or a base-dilation hole). The elements outside the
//! device's own block come from its neighbours (collective-permutes, see
//! `local_window`); the local op runs with `padding` and `base_dilation`
//! and yields exactly `Bo` windows.
//!
//! When `Bo·s` is a multiple of the base dilation every block starts at
//! the same phase of the dilated input: local element `j` is input
//! `start[k] + j` and the local op keeps the base dilation (and pads the
//! phase). Otherwise the holes are materialised: local element `j` is the
//! padded position `k·Bo·s + j`, the local op has base dilation 1 and no
//! padding.
//!
//! The plan exists only when both sizes divide evenly and every device
//! reads no further than its two neighbours' blocks (one hop, as the
//! partitioner's reason says); otherwise the dimension is gathered.

use crate::ir::ops::window::Window;

/// One window dimension of a sharded windowed op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HaloDim {
    pub input: i64,
    pub output: i64,
    pub shards: i64,
    pub window: i64,
    pub stride: i64,
    pub base_dilation: i64,
    pub window_dilation: i64,
    /// Low padding (negative: the first elements are cut).
    pub pad_low: i64,
}

impl HaloDim {
    /// Dimension `d` of `window` over an input dimension of `input`
    /// elements giving `output` windows, split `shards` ways.
    pub fn of_window(window: &Window, d: usize, input: i64, output: i64, shards: i64) -> HaloDim {
        HaloDim {
            input,
            output,
            shards,
            window: window.dims[d],
            stride: window.strides[d],
            base_dilation: window.base_dilations[d],
            window_dilation: window.window_dilations[d],
            pad_low: window.padding[d].0,
        }
    }
}

/// How every device computes its output block (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HaloPlan {
    pub len: i64,
    /// Per block: the input index of local element 0 (kept base dilation)
    /// or the padded position of it (materialised holes).
    pub start: Vec<i64>,
    pub base_dilation: i64,
    pub padding: (i64, i64),
    /// Materialised holes: local element `j` is padded position
    /// `start[k] + j`.
    holes: bool,
    global: HaloDim,
}

impl HaloPlan {
    /// The input element that local element `j` of block `k` holds (`None`:
    /// the padding value).
    pub fn source(&self, k: usize, j: i64) -> Option<i64> {
        let g = &self.global;
        let i = if self.holes {
            let q = self.start[k] + j - g.pad_low;
            if q < 0 || q % g.base_dilation != 0 {
                return None;
            }
            q / g.base_dilation
        } else {
            self.start[k] + j
        };
        (0..g.input).contains(&i).then_some(i)
    }

    /// The input elements block `k` reads, `[lo, hi]` (`None`: none).
    pub fn reads(&self, k: usize) -> Option<(i64, i64)> {
        let first = (0..self.len).find_map(|j| self.source(k, j))?;
        let last = (0..self.len).rev().find_map(|j| self.source(k, j))?;
        Some((first, last))
    }

    /// Elements fetched from the block before / after block `k`.
    #[cfg(test)]
    pub fn halo(&self, k: usize) -> (i64, i64) {
        let bi = self.global.input / self.global.shards;
        let own = (k as i64 * bi, (k as i64 + 1) * bi - 1);
        match self.reads(k) {
            None => (0, 0),
            Some((lo, hi)) => ((own.0 - lo).max(0), (hi - own.1).max(0)),
        }
    }

    /// True when every device reads exactly its own block, with the op's
    /// own attributes (nothing to exchange or rewrite).
    pub fn is_identity(&self) -> bool {
        let g = &self.global;
        let bi = g.input / g.shards;
        !self.holes
            && self.len == bi
            && self.base_dilation == g.base_dilation
            && self.padding == (0, 0)
            && self
                .start
                .iter()
                .enumerate()
                .all(|(k, &s)| s == k as i64 * bi)
    }
}

fn ceil_div(a: i64, b: i64) -> i64 {
    a.div_euclid(b) + i64::from(a.rem_euclid(b) != 0)
}

/// The plan of `d`, or `None` where the partitioner gathers instead
/// (sizes that do not divide, halos beyond the neighbours, absurd sizes).
pub(crate) fn plan_halo(d: HaloDim) -> Option<HaloPlan> {
    let positive = [
        d.shards,
        d.window,
        d.stride,
        d.base_dilation,
        d.window_dilation,
    ];
    if positive.iter().any(|&x| x < 1) || d.input < 1 || d.output < 1 {
        return None;
    }
    if d.input % d.shards != 0 || d.output % d.shards != 0 {
        return None;
    }
    let (bi, bo) = (d.input / d.shards, d.output / d.shards);
    let span = (d.window - 1)
        .checked_mul(d.window_dilation)?
        .checked_add(1)?;
    let extent = (bo - 1).checked_mul(d.stride)?.checked_add(span)?;
    // Bounded by one hop: larger local inputs read beyond the neighbours.
    if extent > 3 * bi * d.base_dilation + 2 * d.base_dilation {
        return None;
    }
    let first = |k: i64| k * bo * d.stride;
    let bd = d.base_dilation;
    let phase = (bo * d.stride) % bd == 0;
    let low = |k: i64| d.pad_low + ceil_div(first(k) - d.pad_low, bd) * bd - first(k);
    let plan = if phase && extent > low(0) {
        let lp = low(0);
        let len = ceil_div(extent - lp, bd);
        let hp = extent - lp - ((len - 1) * bd + 1);
        HaloPlan {
            len,
            start: (0..d.shards)
                .map(|k| ceil_div(first(k) - d.pad_low, bd))
                .collect(),
            base_dilation: bd,
            padding: (lp, hp),
            holes: false,
            global: d,
        }
    } else {
        HaloPlan {
            len: extent,
            start: (0..d.shards).map(first).collect(),
            base_dilation: 1,
            padding: (0, 0),
            holes: true,
            global: d,
        }
    };
    for k in 0..d.shards {
        let (lo, hi) = plan.reads(k as usize).unwrap_or((k * bi, k * bi));
        if lo < (k - 1) * bi || hi > (k + 2) * bi - 1 {
            return None;
        }
    }
    Some(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::ops::window::Tap;

    /// The input elements output block `k`'s windows read, from the
    /// window geometry itself (`ir::ops::window`'s taps).
    fn brute_reads(d: HaloDim, pad_high: i64, k: i64) -> Vec<i64> {
        let w = Window {
            dims: vec![d.window],
            strides: vec![d.stride],
            base_dilations: vec![d.base_dilation],
            window_dilations: vec![d.window_dilation],
            padding: vec![(d.pad_low, pad_high)],
        };
        let bo = d.output / d.shards;
        let mut v = Vec::new();
        for o in k * bo..(k + 1) * bo {
            for t in 0..d.window {
                if let Tap::Input(i) = w.tap(0, d.input as usize, o as usize, t as usize) {
                    v.push(i as i64);
                }
            }
        }
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The local op on the plan's local input, evaluated tap by tap: the
    /// inputs each local window reads, per output element.
    fn local_taps(p: &HaloPlan, d: HaloDim, k: usize) -> Vec<Vec<i64>> {
        let w = Window {
            dims: vec![d.window],
            strides: vec![d.stride],
            base_dilations: vec![p.base_dilation],
            window_dilations: vec![d.window_dilation],
            padding: vec![p.padding],
        };
        let n = w.num_windows(&[p.len]).unwrap()[0];
        assert_eq!(n, d.output / d.shards, "local windows of {d:?}: {p:?}");
        (0..n)
            .map(|o| {
                (0..d.window)
                    .filter_map(|t| match w.tap(0, p.len as usize, o as usize, t as usize) {
                        Tap::Input(j) => p.source(k, j as i64),
                        Tap::Pad => None,
                    })
                    .collect()
            })
            .collect()
    }

    fn global_taps(d: HaloDim, pad_high: i64, k: i64) -> Vec<Vec<i64>> {
        let w = Window {
            dims: vec![d.window],
            strides: vec![d.stride],
            base_dilations: vec![d.base_dilation],
            window_dilations: vec![d.window_dilation],
            padding: vec![(d.pad_low, pad_high)],
        };
        let bo = d.output / d.shards;
        (k * bo..(k + 1) * bo)
            .map(|o| {
                (0..d.window)
                    .filter_map(
                        |t| match w.tap(0, d.input as usize, o as usize, t as usize) {
                            Tap::Input(i) => Some(i as i64),
                            Tap::Pad => None,
                        },
                    )
                    .collect()
            })
            .collect()
    }

    #[test]
    fn same_conv_3x3_stride_1_on_4_devices_takes_one_row_each_side() {
        let d = HaloDim {
            input: 16,
            output: 16,
            shards: 4,
            window: 3,
            stride: 1,
            base_dilation: 1,
            window_dilation: 1,
            pad_low: 1,
        };
        let p = plan_halo(d).unwrap();
        assert_eq!((p.len, p.padding, p.base_dilation), (6, (0, 0), 1));
        assert_eq!(p.start, vec![-1, 3, 7, 11]);
        let halos: Vec<_> = (0..4).map(|k| p.halo(k)).collect();
        assert_eq!(halos, vec![(0, 1), (1, 1), (1, 1), (1, 0)]);
    }

    #[test]
    fn max_pool_3x3_stride_2_same_needs_a_right_halo_only() {
        // 16 rows, 8 windows: SAME pads (0, 1).
        let d = HaloDim {
            input: 16,
            output: 8,
            shards: 4,
            window: 3,
            stride: 2,
            base_dilation: 1,
            window_dilation: 1,
            pad_low: 0,
        };
        let p = plan_halo(d).unwrap();
        assert_eq!(p.len, 5);
        let halos: Vec<_> = (0..4).map(|k| p.halo(k)).collect();
        assert_eq!(halos, vec![(0, 1), (0, 1), (0, 1), (0, 0)]);
    }

    #[test]
    fn tiled_windows_are_the_identity_plan() {
        let d = HaloDim {
            input: 16,
            output: 8,
            shards: 4,
            window: 2,
            stride: 2,
            base_dilation: 1,
            window_dilation: 1,
            pad_low: 0,
        };
        assert!(plan_halo(d).unwrap().is_identity());
    }

    #[test]
    fn halos_beyond_the_neighbours_and_uneven_blocks_have_no_plan() {
        let base = HaloDim {
            input: 8,
            output: 8,
            shards: 4,
            window: 7,
            stride: 1,
            base_dilation: 1,
            window_dilation: 1,
            pad_low: 3,
        };
        // 3 rows each side, blocks of 2: two hops.
        assert_eq!(plan_halo(base), None);
        let uneven = HaloDim {
            input: 10,
            output: 10,
            window: 3,
            pad_low: 1,
            ..base
        };
        assert_eq!(plan_halo(uneven), None);
    }

    /// Every plan found over a grid of geometries reads, per device, the
    /// same input elements as the brute force, and its local op computes
    /// every window from the same inputs as the global op.
    #[test]
    fn plans_match_the_brute_force_on_many_geometries() {
        let (mut planned, mut refused) = (0, 0);
        for input in 1..=13i64 {
            for shards in [1, 2, 3, 4] {
                for window in 1..=4 {
                    for stride in 1..=3 {
                        for bd in 1..=3 {
                            for wd in 1..=2 {
                                for lo in -2..=3 {
                                    for hi in -2..=3 {
                                        let w = Window {
                                            dims: vec![window],
                                            strides: vec![stride],
                                            base_dilations: vec![bd],
                                            window_dilations: vec![wd],
                                            padding: vec![(lo, hi)],
                                        };
                                        let Ok(out) = w.num_windows(&[input]) else {
                                            continue;
                                        };
                                        let d = HaloDim {
                                            input,
                                            output: out[0],
                                            shards,
                                            window,
                                            stride,
                                            base_dilation: bd,
                                            window_dilation: wd,
                                            pad_low: lo,
                                        };
                                        let Some(p) = plan_halo(d) else {
                                            refused += 1;
                                            continue;
                                        };
                                        planned += 1;
                                        for k in 0..shards {
                                            let want = brute_reads(d, hi, k);
                                            let got: Vec<i64> = p
                                                .reads(k as usize)
                                                .map(|(a, b)| (a..=b).collect())
                                                .unwrap_or_default();
                                            // The plan fetches every element the
                                            // windows read, and no more where the
                                            // windows leave no gaps.
                                            assert!(
                                                want.iter().all(|i| got.contains(i)),
                                                "{d:?} hi {hi} block {k}: {p:?}"
                                            );
                                            if stride <= (window - 1) * wd + 1 && wd == 1 && bd == 1
                                            {
                                                let range: Vec<i64> =
                                                    match (want.first(), want.last()) {
                                                        (Some(&a), Some(&b)) => (a..=b).collect(),
                                                        _ => Vec::new(),
                                                    };
                                                assert_eq!(got, range, "{d:?} hi {hi} block {k}");
                                            }
                                            assert_eq!(
                                                local_taps(&p, d, k as usize),
                                                global_taps(d, hi, k),
                                                "{d:?} hi {hi} block {k}: {p:?}"
                                            );
                                            let bi = input / shards;
                                            if let Some(&a) = want.first() {
                                                assert!(a >= (k - 1) * bi, "{d:?}");
                                            }
                                            if let Some(&b) = want.last() {
                                                assert!(b < (k + 2) * bi, "{d:?}");
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(
            planned > 5000 && refused > 1000,
            "{planned} planned, {refused} refused"
        );
    }
}
