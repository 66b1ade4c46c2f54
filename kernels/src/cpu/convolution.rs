//! `stablehlo.convolution` on the CPU: im2col + `gemm`.
//!
//! The lhs is copied to `[batch, spatial..., feature]` and the kernel to
//! `[spatial..., input feature, output feature]` (row-major). For each
//! output batch and group, a block of output positions becomes the rows of
//! a matrix whose columns are the window's taps × the group's input
//! features (im2col: each row holds the inputs its output position reads,
//! zeros where the window lies on padding or a dilation hole); one `gemm`
//! per block multiplies it by the group's kernel columns straight into the
//! canonical output `[batch, spatial..., feature]`, which is then
//! transposed to the op's output dimension order. Where each tap lands is
//! [`ConvGeometry`]'s job (shared with the CUDA kernel's parameters and
//! its CPU tests).
//!
//! Groups (spec): with `feature_group_count = G`, group `g` convolves input
//! features `[g*C/G, (g+1)*C/G)` with kernel output features
//! `[g*O/G, (g+1)*O/G)`; with `batch_group_count = B`, group `g` convolves
//! input batch rows `[g*N/B, (g+1)*N/B)` (all features) with kernel output
//! features `[g*O/B, (g+1)*O/B)`, the output batch being `N/B`.
//!
//! f32 and f64 run in `gemm` (single-threaded inside simulated devices);
//! f16 and bf16 through f32 (XLA accumulates them in f32); i32 and i64 by a
//! wrapping loop.

use gemm::Parallelism;
use meshrun_compiler::ir::ops::convolution::Convolution;
use meshrun_compiler::ir::ops::window::{Tap, Window};
use meshrun_compiler::ir::{ElemType, TensorType};
use ndarray::{ArrayD, ArrayView2, ArrayViewMut2, IxDyn, ShapeBuilder};
use num_traits::{WrappingAdd, WrappingMul};

use crate::cpu::convert::convert;
use crate::cpu::dot::gemm_threads;
use crate::error::{KernelError, Result};
use crate::tensor::{dims_of, HostElem, HostTensor};

const OP: &str = "stablehlo.convolution";

/// Elements of one im2col block at most (rows are added until this).
const BLOCK_ELEMS: usize = 1 << 20;

/// The sizes and index maps of one convolution on given shapes, in the
/// canonical layouts (`[batch, spatial..., feature]` for lhs and output,
/// `[spatial..., in, out]` for the kernel).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvGeometry {
    /// Input batch, input features.
    pub batch: usize,
    pub features: usize,
    /// Input spatial sizes, in `input_spatial_dimensions` order.
    pub in_spatial: Vec<usize>,
    /// Kernel spatial sizes, in `kernel_spatial_dimensions` order.
    pub kernel_spatial: Vec<usize>,
    /// Output spatial sizes, in `output_spatial_dimensions` order.
    pub out_spatial: Vec<usize>,
    /// Kernel input features (per group), output features (all groups).
    pub kernel_in: usize,
    pub kernel_out: usize,
    /// Output batch (`batch / batch_group_count`).
    pub out_batch: usize,
    /// Number of groups and whether they split the batch (else features).
    pub groups: usize,
    pub batch_groups: bool,
    /// Per spatial dimension: `taps[s][o * K + k]` is the input index that
    /// kernel element `k` meets at output position `o`, or `None` on
    /// padding, a dilation hole, or outside the input.
    pub taps: Vec<Vec<Option<usize>>>,
    /// Axis orders that make lhs / kernel canonical, and the one that
    /// makes the canonical output the op's result.
    pub lhs_perm: Vec<usize>,
    pub rhs_perm: Vec<usize>,
    pub out_perm: Vec<usize>,
}

impl ConvGeometry {
    pub fn new(c: &Convolution, lhs: &[usize], rhs: &[usize]) -> Result<ConvGeometry> {
        let dims = &c.dimension_numbers;
        let n = lhs.len();
        if rhs.len() != n || dims.check_rank(n).is_err() {
            return Err(KernelError::invalid(
                OP,
                format!("operands of shapes {lhs:?} and {rhs:?} do not fit the dimension numbers"),
            ));
        }
        let rhs_i64: Vec<i64> = rhs.iter().map(|&d| d as i64).collect();
        let window = c
            .window(&rhs_i64)
            .map_err(|e| KernelError::invalid(OP, e))?;
        let in_spatial: Vec<usize> = dims.input_spatial.iter().map(|&d| lhs[d]).collect();
        let kernel_spatial: Vec<usize> = dims.kernel_spatial.iter().map(|&d| rhs[d]).collect();
        let in_i64: Vec<i64> = in_spatial.iter().map(|&d| d as i64).collect();
        let out_spatial: Vec<usize> = window
            .num_windows(&in_i64)
            .map_err(|e| KernelError::invalid(OP, e))?
            .into_iter()
            .map(|w| w as usize)
            .collect();
        let taps = (0..in_spatial.len())
            .map(|s| {
                tap_table(
                    c,
                    &window,
                    s,
                    in_spatial[s],
                    kernel_spatial[s],
                    out_spatial[s],
                )
            })
            .collect();
        let (fg, bg) = (c.feature_group_count, c.batch_group_count);
        if fg <= 0 || bg <= 0 {
            return Err(KernelError::invalid(OP, "group counts must be positive"));
        }
        let batch = lhs[dims.input_batch];
        let features = lhs[dims.input_feature];
        let kernel_in = rhs[dims.kernel_input_feature];
        let kernel_out = rhs[dims.kernel_output_feature];
        let groups = fg.max(bg) as usize;
        let batch_groups = bg > 1;
        let fits = batch.is_multiple_of(bg as usize)
            && features == kernel_in * fg as usize
            && kernel_out.is_multiple_of(groups);
        if !fits {
            return Err(KernelError::invalid(
                OP,
                format!("operands of shapes {lhs:?} and {rhs:?} do not fit the group counts ({fg}, {bg})"),
            ));
        }
        let mut out_perm = vec![0; n];
        out_perm[dims.output_batch] = 0;
        for (s, &d) in dims.output_spatial.iter().enumerate() {
            out_perm[d] = 1 + s;
        }
        out_perm[dims.output_feature] = n - 1;
        Ok(ConvGeometry {
            batch,
            features,
            in_spatial,
            kernel_spatial,
            out_spatial,
            kernel_in,
            kernel_out,
            out_batch: batch / bg as usize,
            groups,
            batch_groups,
            taps,
            lhs_perm: [
                vec![dims.input_batch],
                dims.input_spatial.clone(),
                vec![dims.input_feature],
            ]
            .concat(),
            rhs_perm: [
                dims.kernel_spatial.clone(),
                vec![dims.kernel_input_feature, dims.kernel_output_feature],
            ]
            .concat(),
            out_perm,
        })
    }

    /// Output positions (product of the output spatial sizes).
    pub fn positions(&self) -> usize {
        self.out_spatial.iter().product()
    }

    /// Kernel taps (product of the kernel spatial sizes).
    pub fn window_size(&self) -> usize {
        self.kernel_spatial.iter().product()
    }

    /// The shape of the canonical output `[batch, spatial..., feature]`.
    pub fn canonical_out(&self) -> Vec<usize> {
        [
            vec![self.out_batch],
            self.out_spatial.clone(),
            vec![self.kernel_out],
        ]
        .concat()
    }

    /// The result shape in the op's output dimension order.
    pub fn out_shape(&self) -> Vec<usize> {
        let canon = self.canonical_out();
        self.out_perm.iter().map(|&a| canon[a]).collect()
    }

    /// The input batch row and first input feature of output batch `b` in
    /// group `g`.
    pub fn group_input(&self, b: usize, g: usize) -> (usize, usize) {
        if self.batch_groups {
            (g * self.out_batch + b, 0)
        } else {
            (b, g * self.kernel_in)
        }
    }

    /// The flat canonical-lhs offset of the input element that output
    /// position `p` (flat over the output spatial sizes) meets at kernel
    /// tap `k` (flat over the kernel spatial sizes), for input batch row
    /// `n` at feature 0; `None` where the tap lies outside the input.
    pub fn input_offset(&self, n: usize, p: usize, k: usize) -> Option<usize> {
        let rank = self.in_spatial.len();
        let (mut p, mut k) = (p, k);
        let mut offset = 0;
        let mut stride = self.features;
        for s in (0..rank).rev() {
            let (ps, ks) = (self.out_spatial[s], self.kernel_spatial[s]);
            let (o, t) = (p % ps, k % ks);
            p /= ps;
            k /= ks;
            let i = self.taps[s][o * ks + t]?;
            offset += i * stride;
            stride *= self.in_spatial[s];
        }
        Some(offset + n * stride)
    }
}

/// Where kernel element `k` meets the input at output position `o` along
/// spatial dimension `s` (the window is flipped where `window_reversal`
/// says so: kernel element `k` pairs with window position `K - 1 - k`).
fn tap_table(
    c: &Convolution,
    window: &Window,
    s: usize,
    size: usize,
    kernel: usize,
    out: usize,
) -> Vec<Option<usize>> {
    let reversed = c.reversed(s);
    let mut t = Vec::with_capacity(out * kernel);
    for o in 0..out {
        for k in 0..kernel {
            let w = if reversed { kernel - 1 - k } else { k };
            t.push(match window.tap(s, size, o, w) {
                Tap::Input(i) => Some(i),
                Tap::Pad => None,
            });
        }
    }
    t
}

/// `convolution(lhs, rhs)` with result type `out`.
pub fn convolution(
    c: &Convolution,
    lhs: &HostTensor,
    rhs: &HostTensor,
    out: &TensorType,
    par: Parallelism,
) -> Result<HostTensor> {
    let geo = ConvGeometry::new(c, lhs.shape(), rhs.shape())?;
    if dims_of(out)? != geo.out_shape() {
        return Err(KernelError::invalid(
            OP,
            format!(
                "result type {out} does not match the operands (expected shape {:?})",
                geo.out_shape()
            ),
        ));
    }
    use ElemType as E;
    let compute = match (lhs.elem_type(), rhs.elem_type()) {
        (a, b) if a == b && matches!(a, E::F32 | E::F64 | E::I32 | E::I64) => a,
        (a, b) if a.is_float() && b.is_float() => E::F32,
        (a, _) => return Err(KernelError::unsupported(OP, a)),
    };
    let (l, r) = (convert(lhs, compute)?, convert(rhs, compute)?);
    let result = match (&l, &r) {
        (HostTensor::F32(a), HostTensor::F32(b)) => {
            HostTensor::F32(conv_with(&geo, a, b, |d, x, w| gemm_threads(d, x, w, par))?)
        }
        (HostTensor::F64(a), HostTensor::F64(b)) => {
            HostTensor::F64(conv_with(&geo, a, b, |d, x, w| gemm_threads(d, x, w, par))?)
        }
        (HostTensor::I32(a), HostTensor::I32(b)) => {
            HostTensor::I32(conv_with(&geo, a, b, loop_matmul)?)
        }
        (HostTensor::I64(a), HostTensor::I64(b)) => {
            HostTensor::I64(conv_with(&geo, a, b, loop_matmul)?)
        }
        _ => return Err(KernelError::unsupported(OP, compute)),
    };
    if result.elem_type() == out.elem {
        Ok(result)
    } else {
        convert(&result, out.elem)
    }
}

/// `dst = lhs · rhs` by a wrapping loop (integers).
fn loop_matmul<T: HostElem + WrappingAdd + WrappingMul>(
    mut dst: ArrayViewMut2<'_, T>,
    lhs: ArrayView2<'_, T>,
    rhs: ArrayView2<'_, T>,
) -> Result<()> {
    for ((i, j), d) in dst.indexed_iter_mut() {
        *d = (0..lhs.ncols()).fold(T::zero_value(), |acc, p| {
            acc.wrapping_add(&lhs[(i, p)].wrapping_mul(&rhs[(p, j)]))
        });
    }
    Ok(())
}

/// The convolution in one element type, with `matmul(dst, a, b)` writing
/// `dst = a · b`.
fn conv_with<T, M>(
    geo: &ConvGeometry,
    lhs: &ArrayD<T>,
    rhs: &ArrayD<T>,
    mut matmul: M,
) -> Result<ArrayD<T>>
where
    T: HostElem,
    M: FnMut(ArrayViewMut2<'_, T>, ArrayView2<'_, T>, ArrayView2<'_, T>) -> Result<()>,
{
    let zero = T::zero_value();
    let canon_out = geo.canonical_out();
    let mut out = ArrayD::from_elem(IxDyn(&canon_out), zero);
    let cols = geo.window_size() * geo.kernel_in;
    let positions = geo.positions();
    if out.is_empty() || cols == 0 {
        return finish(out, geo);
    }
    let x = lhs.view().permuted_axes(geo.lhs_perm.clone());
    let x = x.as_standard_layout();
    let x = x
        .as_slice()
        .ok_or_else(|| KernelError::invalid(OP, "lhs layout"))?;
    let w = rhs.view().permuted_axes(geo.rhs_perm.clone());
    let w = w.as_standard_layout();
    let w = w
        .to_shape((cols, geo.kernel_out))
        .map_err(|e| KernelError::invalid(OP, format!("kernel reshape: {e}")))?;
    let per_group = geo.kernel_out / geo.groups;
    let rows_per_block = (BLOCK_ELEMS / cols).clamp(1, positions);
    let mut block = vec![zero; rows_per_block * cols];
    let out_flat = out
        .as_slice_mut()
        .ok_or_else(|| KernelError::invalid(OP, "output layout"))?;
    let (window, cin) = (geo.window_size(), geo.kernel_in);
    for b in 0..geo.out_batch {
        for g in 0..geo.groups {
            let (n, c0) = geo.group_input(b, g);
            let kernel = w.slice(ndarray::s![.., g * per_group..(g + 1) * per_group]);
            for p0 in (0..positions).step_by(rows_per_block) {
                let rows = rows_per_block.min(positions - p0);
                for r in 0..rows {
                    let row = &mut block[r * cols..(r + 1) * cols];
                    for k in 0..window {
                        let dst = &mut row[k * cin..(k + 1) * cin];
                        match geo.input_offset(n, p0 + r, k) {
                            Some(at) => dst.copy_from_slice(&x[at + c0..at + c0 + cin]),
                            None => dst.fill(zero),
                        }
                    }
                }
                let a = ArrayView2::from_shape((rows, cols), &block[..rows * cols])
                    .map_err(|e| KernelError::invalid(OP, format!("im2col: {e}")))?;
                let start = (b * positions + p0) * geo.kernel_out + g * per_group;
                let len = (rows - 1) * geo.kernel_out + per_group;
                let d = ArrayViewMut2::from_shape(
                    (rows, per_group).strides((geo.kernel_out, 1)),
                    &mut out_flat[start..start + len],
                )
                .map_err(|e| KernelError::invalid(OP, format!("output block: {e}")))?;
                matmul(d, a, kernel)?;
            }
        }
    }
    finish(out, geo)
}

/// The canonical output in the op's dimension order.
fn finish<T: HostElem>(out: ArrayD<T>, geo: &ConvGeometry) -> Result<ArrayD<T>> {
    Ok(out
        .view()
        .permuted_axes(geo.out_perm.clone())
        .as_standard_layout()
        .into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::conv_cases::{plain, random, Rng, LAYOUTS};
    use meshrun_compiler::ir::ops::decode::I64Rows;

    /// The spec's definition, element by element in f64: for every output
    /// element, the sum over the group's input features and the kernel's
    /// taps of `padded_lhs[window position] * rhs[tap]`.
    fn naive(
        c: &Convolution,
        lhs: &ArrayD<f64>,
        rhs: &ArrayD<f64>,
        out_shape: &[usize],
    ) -> ArrayD<f64> {
        let d = &c.dimension_numbers;
        let rhs_i64: Vec<i64> = rhs.shape().iter().map(|&x| x as i64).collect();
        let win = c.window(&rhs_i64).unwrap();
        let n_sp = d.input_spatial.len();
        let fg = c.feature_group_count as usize;
        let bg = c.batch_group_count as usize;
        let o_total = rhs.shape()[d.kernel_output_feature];
        let cin = rhs.shape()[d.kernel_input_feature];
        let out_batch = out_shape[d.output_batch];
        ArrayD::from_shape_fn(IxDyn(out_shape), |idx| {
            let b = idx[d.output_batch];
            let of = idx[d.output_feature];
            let (n, c0) = if bg > 1 {
                ((of / (o_total / bg)) * out_batch + b, 0)
            } else {
                (b, (of / (o_total / fg)) * cin)
            };
            let ks: Vec<usize> = d.kernel_spatial.iter().map(|&k| rhs.shape()[k]).collect();
            let total: usize = ks.iter().product();
            let mut sum = 0.0;
            for flat in 0..total {
                let mut rem = flat;
                let mut k = vec![0; n_sp];
                for s in (0..n_sp).rev() {
                    k[s] = rem % ks[s];
                    rem /= ks[s];
                }
                let mut li = vec![0; lhs.ndim()];
                li[d.input_batch] = n;
                let mut inside = true;
                for s in 0..n_sp {
                    let o = idx[d.output_spatial[s]];
                    let wpos = if c.reversed(s) {
                        ks[s] - 1 - k[s]
                    } else {
                        k[s]
                    };
                    match win.tap(s, lhs.shape()[d.input_spatial[s]], o, wpos) {
                        Tap::Input(i) => li[d.input_spatial[s]] = i,
                        Tap::Pad => inside = false,
                    }
                }
                if !inside {
                    continue;
                }
                for ci in 0..cin {
                    li[d.input_feature] = c0 + ci;
                    let mut ri = vec![0; rhs.ndim()];
                    for s in 0..n_sp {
                        ri[d.kernel_spatial[s]] = k[s];
                    }
                    ri[d.kernel_input_feature] = ci;
                    ri[d.kernel_output_feature] = of;
                    sum += lhs[IxDyn(&li)] * rhs[IxDyn(&ri)];
                }
            }
            sum
        })
    }

    #[test]
    fn spec_example() {
        // docs/spec.md's convolution example: lhs_dilation 2, stride 4.
        let mut c = plain("[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]", 1, 1);
        c.window_strides = Some(vec![4, 4]);
        c.lhs_dilation = Some(vec![2, 2]);
        let lhs: Vec<i64> = vec![1, 2, 5, 6, 3, 4, 7, 8, 10, 11, 14, 15, 12, 13, 16, 17];
        let lhs = HostTensor::from_vec(&[1, 4, 4, 1], lhs).unwrap();
        let rhs = HostTensor::from_vec(&[3, 3, 1, 1], vec![1i64; 9]).unwrap();
        let out = TensorType::new(vec![1, 2, 2, 1], ElemType::I64);
        let got = convolution(&c, &lhs, &rhs, &out, Parallelism::None).unwrap();
        assert_eq!(
            got,
            HostTensor::from_vec(&[1, 2, 2, 1], vec![10i64, 26, 46, 62]).unwrap()
        );
    }

    /// Random convolutions with every attribute (dimension orders, strides,
    /// padding including negative, both dilations, reversal, feature and
    /// batch groups) against the definition.
    #[test]
    fn random_convolutions_equal_the_definition() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let mut checked = 0;
        for case in 0..300 {
            let (c, lhs_shape, rhs_shape) = random(&mut rng, LAYOUTS[case % LAYOUTS.len()]);
            let lhs_t = TensorType::new(
                lhs_shape.iter().map(|&x| x as i64).collect::<Vec<i64>>(),
                ElemType::F32,
            );
            let rhs_t = TensorType::new(
                rhs_shape.iter().map(|&x| x as i64).collect::<Vec<i64>>(),
                ElemType::F32,
            );
            let Ok(out_ty) = meshrun_compiler::ir::ops::OpDef::infer(&c, &[lhs_t, rhs_t]) else {
                continue; // negative padding ate the input
            };
            let out_ty = &out_ty[0];
            let lhs = ArrayD::from_shape_fn(IxDyn(&lhs_shape), |_| rng.small_f64());
            let rhs = ArrayD::from_shape_fn(IxDyn(&rhs_shape), |_| rng.small_f64());
            let out_shape = dims_of(out_ty).unwrap();
            let want = naive(&c, &lhs, &rhs, &out_shape);
            for elem in [ElemType::F32, ElemType::F64] {
                let l = convert(&HostTensor::F64(lhs.clone()), elem).unwrap();
                let r = convert(&HostTensor::F64(rhs.clone()), elem).unwrap();
                let ty = TensorType::new(out_ty.shape.clone(), elem);
                let got = convolution(&c, &l, &r, &ty, Parallelism::None).unwrap();
                let got = convert(&got, ElemType::F64).unwrap();
                assert_eq!(
                    got,
                    HostTensor::F64(want.clone()),
                    "case {case}: {c:?} {lhs_shape:?} {rhs_shape:?}"
                );
            }
            checked += 1;
        }
        assert!(checked > 200, "only {checked} cases had windows");
    }

    #[test]
    fn geometry_offsets_follow_the_canonical_layout() {
        // NHWC 1x4x5x2, 3x3 kernel, pad 1: output (1, 2) meets input
        // (0 + 0, 2 + 1) - (1, 1) at tap (0, 1)... spelled out below.
        let mut c = plain("[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]", 1, 1);
        c.padding = Some(I64Rows {
            rows: vec![vec![1, 1], vec![1, 1]],
            width: 2,
        });
        let g = ConvGeometry::new(&c, &[1, 4, 5, 2], &[3, 3, 2, 7]).unwrap();
        assert_eq!(g.out_spatial, vec![4, 5]);
        assert_eq!(g.out_shape(), vec![1, 4, 5, 7]);
        // Output position (1, 2) = flat 7, tap (0, 1) = flat 1: input
        // (1 - 1 + 0, 2 - 1 + 1) = (0, 2): offset (0 * 5 + 2) * 2.
        assert_eq!(g.input_offset(0, 7, 1), Some(4));
        // Tap (0, 0) at output (0, 0) lies on the padding.
        assert_eq!(g.input_offset(0, 0, 0), None);
    }
}
