//! Random convolutions with every attribute (dimension orders, strides,
//! padding including negative, both dilations, reversal, feature and
//! batch groups) for the tests of the CPU kernel, the CUDA im2col kernel
//! (`cuda::conv`) and the CUDA plan (`meshrun_runtime::cuda::conv_plan`):
//! one generator, so the three check the same geometries.

use meshrun_compiler::ir::ops::convolution::{ConvDims, Convolution, ConvolutionAttrs};
use meshrun_compiler::ir::ops::decode::I64Rows;

/// Dimension layouts the cases cycle through: NHWC, NCHW, transposed
/// ones, 1-d, 0-d spatial, 3-d.
pub const LAYOUTS: [&str; 6] = [
    "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]",
    "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]",
    "[f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f]",
    "[b, 0, f]x[0, i, o]->[b, 0, f]",
    "[b, f]x[i, o]->[b, f]",
    "[0, b, 1, 2, f]x[o, 0, 1, i, 2]->[f, 2, 0, b, 1]",
];

/// A tiny deterministic generator (xorshift).
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// Multiples of 1/8 in [-2, 2): sums of their products are exact in
    /// f32 and f64, so any summation order gives the same bits.
    pub fn small_f64(&mut self) -> f64 {
        (self.below(32) as f64 - 16.0) / 8.0
    }
}

/// A convolution with dimension numbers `dims` (compact form) and the
/// group counts, every other attribute absent.
pub fn plain(dims: &str, fg: i64, bg: i64) -> Convolution {
    Convolution(Box::new(ConvolutionAttrs {
        batch_group_count: bg,
        dimension_numbers: ConvDims::parse_body(dims).expect("dimension numbers"),
        feature_group_count: fg,
        lhs_dilation: None,
        padding: None,
        precision_config: None,
        rhs_dilation: None,
        window_reversal: None,
        window_strides: None,
    }))
}

/// A random convolution of layout `dims` and operand shapes for it (lhs,
/// rhs). Negative padding may leave no windows: callers skip cases whose
/// shape inference fails.
pub fn random(rng: &mut Rng, dims: &str) -> (Convolution, Vec<usize>, Vec<usize>) {
    let groups = 1 + rng.below(3) as usize;
    let (fg, bg) = if rng.below(3) == 0 {
        (1, groups)
    } else {
        (groups, 1)
    };
    let mut c = plain(dims, fg as i64, bg as i64);
    let d = c.dimension_numbers.clone();
    let n_sp = d.input_spatial.len();
    let cin = 1 + rng.below(3) as usize;
    let mut lhs = vec![0; n_sp + 2];
    let mut rhs = vec![0; n_sp + 2];
    lhs[d.input_batch] = bg * (1 + rng.below(3) as usize);
    lhs[d.input_feature] = fg * cin;
    rhs[d.kernel_input_feature] = cin;
    rhs[d.kernel_output_feature] = groups * (1 + rng.below(3) as usize);
    for s in 0..n_sp {
        lhs[d.input_spatial[s]] = 1 + rng.below(7) as usize;
        rhs[d.kernel_spatial[s]] = 1 + rng.below(3) as usize;
    }
    let list = |rng: &mut Rng, hi: u64| -> Option<Vec<i64>> {
        Some((0..n_sp).map(|_| 1 + rng.below(hi) as i64).collect())
    };
    c.window_strides = list(rng, 3);
    c.lhs_dilation = list(rng, 3);
    c.rhs_dilation = list(rng, 2);
    c.window_reversal = Some((0..n_sp).map(|_| rng.below(2) == 1).collect());
    c.padding = Some(I64Rows {
        rows: (0..n_sp)
            .map(|_| vec![rng.below(5) as i64 - 2, rng.below(5) as i64 - 2])
            .collect(),
        width: 2,
    });
    (c, lhs, rhs)
}
