//! Generator of `stablehlo.convolution` programs: a random convolution
//! (one of several dimension layouts: NHWC/HWIO as JAX's `conv` prints,
//! NCHW/OIHW, JAX's weight-gradient layout, 1-D, no spatial dims; strides,
//! padding from -1 to 2, lhs and rhs dilations, window reversal, and
//! feature groups (depthwise) or batch groups) of two randomly sharded
//! arguments (in 40% of the programs the input sharded on one spatial
//! dimension into even blocks with as many windows per block: halo
//! exchanges), sometimes of an element-wise value of one, followed by a few
//! ops of the basic mix (constraints, reductions, element-wise ops, ...)
//! that reshard or reduce its result.

use super::gen::Gen;
use super::text::{elems, ty, Val, MAX_ELEMS};

/// Dimension numbers (the pretty form's compact spelling) with their
/// positions: input (batch, feature, spatial...), kernel (in, out,
/// spatial...), output (batch, feature, spatial...).
type Layout = (
    &'static str,
    [usize; 2],
    [usize; 2],
    [usize; 2],
    &'static [[usize; 3]],
);

const LAYOUTS: &[Layout] = &[
    (
        "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]",
        [0, 3],
        [2, 3],
        [0, 3],
        &[[1, 0, 1], [2, 1, 2]],
    ),
    (
        "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]",
        [0, 1],
        [1, 0],
        [0, 1],
        &[[2, 2, 2], [3, 3, 3]],
    ),
    (
        "[f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f]",
        [3, 0],
        [0, 3],
        [2, 3],
        &[[1, 1, 0], [2, 2, 1]],
    ),
    (
        "[b, 0, f]x[0, i, o]->[b, 0, f]",
        [0, 2],
        [1, 2],
        [0, 2],
        &[[1, 0, 1]],
    ),
    ("[b, f]x[i, o]->[b, f]", [0, 1], [0, 1], [0, 1], &[]),
];

/// One spatial dimension's window: stride, padding, lhs and rhs
/// dilation, reversal.
type SpatialWindow = (i64, (i64, i64), i64, i64, bool);

impl Gen {
    /// A convolution of two new arguments (the lhs sometimes through an
    /// element-wise op), or `None` when the drawn window has no output.
    pub(super) fn convolution(&mut self) -> Option<Val> {
        let &(dims, inp, ker, out_pos, spatial) = self.rng.pick(LAYOUTS);
        let rank = spatial.len() + 2;
        let groups = 1 + self.rng.below(3) as i64;
        let batch_groups = groups > 1 && self.rng.chance(0.4);
        let (fg, bg) = if batch_groups {
            (1, groups)
        } else {
            (groups, 1)
        };
        let cin = *self.rng.pick(&[1i64, 2, 3, 4]);
        let mut lhs = vec![0; rank];
        let mut rhs = vec![0; rank];
        let mut out = vec![0; rank];
        lhs[inp[0]] = bg * *self.rng.pick(&[1i64, 2, 3, 4, 6, 7, 8]);
        lhs[inp[1]] = fg * cin;
        rhs[ker[0]] = cin;
        rhs[ker[1]] = groups * *self.rng.pick(&[1i64, 2, 3, 4, 5]);
        out[out_pos[0]] = lhs[inp[0]] / bg;
        out[out_pos[1]] = rhs[ker[1]];
        let mut window: Vec<SpatialWindow> = Vec::new();
        let mut taps = 1;
        // Sometimes one spatial dimension sharded evenly with as many
        // windows as blocks divide (halo exchange).
        let halo = if !spatial.is_empty() && self.rng.chance(0.4) {
            let s = self.rng.below(spatial.len());
            self.sharding_on(rank, spatial[s][0])
                .map(|(sh, n)| (s, sh, n))
        } else {
            None
        };
        for (s, &[l, k, o]) in spatial.iter().enumerate() {
            let mut size = *self.rng.pick(&[1i64, 2, 3, 4, 5, 6, 7, 8, 9, 12]);
            let kernel = 1 + self.rng.below(3) as i64;
            let plain = self.rng.chance(0.3);
            let pick = |g: &mut Gen, hi: usize| if plain { 1 } else { 1 + g.rng.below(hi) as i64 };
            let stride = pick(self, 3);
            let lhs_dil = pick(self, 2);
            let rhs_dil = pick(self, 2);
            let mut pad = if plain {
                (0, 0)
            } else {
                (self.rng.below(4) as i64 - 1, self.rng.below(4) as i64 - 1)
            };
            if let Some((_, _, n)) = halo.as_ref().filter(|h| h.0 == s) {
                // `n * per` windows over an input of `n * blocks` rows,
                // the padding what that takes (split at random).
                let per = 1 + self.rng.below(3) as i64;
                let padded = (n * per - 1) * stride + (kernel - 1) * rhs_dil + 1;
                let blocks = (((padded - 1) / lhs_dil + 1) / n).max(1);
                size = n * blocks;
                let total = padded - ((size - 1) * lhs_dil + 1);
                let low = total.div_euclid(2) + self.rng.below(2) as i64;
                pad = (low, total - low);
            }
            let dilated = (size - 1) * lhs_dil + 1;
            let padded = dilated + pad.0 + pad.1;
            let span = (kernel - 1) * rhs_dil + 1;
            if padded < span {
                return None;
            }
            lhs[l] = size;
            rhs[k] = kernel;
            out[o] = (padded - span) / stride + 1;
            taps *= kernel;
            window.push((stride, pad, lhs_dil, rhs_dil, self.rng.chance(0.3)));
        }
        if [&lhs, &rhs, &out].iter().any(|s| elems(s) > MAX_ELEMS) {
            return None;
        }
        let mut x = self.new_arg(lhs.clone());
        if let Some((_, sharding, _)) = halo {
            if let Some(arg) = self.args.last_mut() {
                arg.1 = Some(sharding);
            }
        }
        if self.rng.chance(0.3) {
            x = self.unary(x);
        }
        let w = self.new_arg(rhs.clone());
        let join = |f: &dyn Fn(&SpatialWindow) -> String| {
            window.iter().map(f).collect::<Vec<_>>().join(", ")
        };
        let window_text = if spatial.is_empty() {
            String::new()
        } else {
            format!(
                "stride = [{}], pad = [{}], lhs_dilate = [{}], rhs_dilate = [{}], reverse = [{}]",
                join(&|w| w.0.to_string()),
                join(&|w| format!("[{}, {}]", w.1 .0, w.1 .1)),
                join(&|w| w.2.to_string()),
                join(&|w| w.3.to_string()),
                join(&|w| w.4.to_string()),
            )
        };
        let name = self.fresh();
        let line = format!(
            "{name} = stablehlo.convolution({}, {}) dim_numbers = {dims}, window = {{{window_text}}} {{batch_group_count = {bg} : i64, feature_group_count = {fg} : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}} : ({}, {}) -> {}",
            x.name,
            w.name,
            ty(&lhs),
            ty(&rhs),
            ty(&out)
        );
        let bound = x.bound * w.bound * (taps * cin * if batch_groups { bg } else { 1 }) as f64;
        Some(self.push(
            line,
            Val {
                name,
                shape: out,
                bound,
            },
        ))
    }

    /// A program around one convolution (see the module doc).
    pub(super) fn conv_program(seed: u64) -> String {
        let mut g = Gen::new(seed, false);
        let conv = loop {
            if let Some(v) = g.convolution() {
                break v;
            }
            g.args.clear();
            g.values.clear();
            g.body.clear();
        };
        if g.rng.chance(0.4) {
            g.constraint(conv);
        }
        for _ in 0..g.rng.below(3) {
            g.op();
        }
        let last = g.values[g.values.len() - 1].clone();
        g.module_text(&[last])
    }
}
