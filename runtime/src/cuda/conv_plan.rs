//! `stablehlo.convolution` as im2col + one strided batched GEMM per chunk
//! of output batches (pure planning, tested on the CPU).
//!
//! The lhs is transposed to `[batch, spatial..., feature]` and the kernel
//! to `[spatial..., in, out]` (a row-major `[taps x in, out]` matrix `W`)
//! when they are not already so, exactly as the CPU kernel does
//! (`ConvGeometry`'s permutations). For a chunk of output batches the
//! im2col kernel writes, per group, a row-major `[rows, taps x in]`
//! matrix `A_g` (`meshrun_kernels::cuda::conv`); the canonical output
//! `[batch, spatial..., out]` is then row-major `C[rows, out]` whose
//! columns `g*P .. (g+1)*P` are `A_g · W[:, g*P .. (g+1)*P]` (`P` output
//! features per group). In cuBLAS's column-major terms (see `gemm_plan`)
//! that is `Cᵀ = Wᵀ · Aᵀ`, one call batched over groups: `A` = `W` with
//! leading dimension `out` and batch stride `P`, `B` = the columns with
//! leading dimension `taps x in` and batch stride `rows x taps x in`, `C`
//! with leading dimension `out` and batch stride `P`. Chunks keep the
//! column buffer under a bound (`taps x in` times larger than the input
//! it reads); each chunk's output rows are contiguous in `C`. Finally the
//! canonical output is transposed to the op's output dimension order.
//!
//! Never run on a GPU (none is lent): the tests run this plan with the
//! kernel's emulation and `gemm_plan::emulate` against the CPU kernel.

use meshrun_compiler::ir::ops::convolution::Convolution;
use meshrun_kernels::cpu::convolution::ConvGeometry;
use meshrun_kernels::cuda::conv::{im2col_len, im2col_meta};

use super::gemm_plan::GemmCall;

/// Most column elements one chunk writes (unless one output batch alone
/// needs more): 2^27, 512 MiB of f32.
pub const COLUMN_LIMIT: usize = 1 << 27;

/// One im2col launch and its GEMM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvChunk {
    /// The im2col kernel's table.
    pub meta: Vec<i64>,
    /// Elements of the column buffer.
    pub columns: usize,
    /// `A` = the canonical kernel, `B` = the columns, `C` = the chunk's
    /// output rows.
    pub gemm: GemmCall,
    /// Where the chunk's rows start in the canonical output, and how
    /// many elements they are.
    pub out_offset: usize,
    pub out_len: usize,
}

/// How to compute one convolution on the GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvPlan {
    pub geometry: ConvGeometry,
    /// Transposes that make lhs / kernel canonical, and the canonical
    /// output the result (`None`: already so).
    pub lhs_perm: Option<Vec<i64>>,
    pub rhs_perm: Option<Vec<i64>>,
    pub out_perm: Option<Vec<i64>>,
    /// Empty when the result is all zeros (no taps or no input features).
    pub chunks: Vec<ConvChunk>,
}

fn perm_if_needed(p: &[usize]) -> Option<Vec<i64>> {
    let identity = p.iter().enumerate().all(|(i, &d)| i == d);
    (!identity).then(|| p.iter().map(|&d| d as i64).collect())
}

fn i32_of(x: usize, what: &str) -> Result<i32, String> {
    i32::try_from(x).map_err(|_| format!("{what} = {x} is too large for one cuBLAS call"))
}

fn i64_of(x: usize) -> Result<i64, String> {
    i64::try_from(x).map_err(|_| format!("{x} elements"))
}

impl ConvPlan {
    /// The plan for `c` on operands of these shapes, with chunks of at
    /// most `column_limit` column elements where one output batch fits.
    pub fn new(
        c: &Convolution,
        lhs: &[usize],
        rhs: &[usize],
        column_limit: usize,
    ) -> Result<ConvPlan, String> {
        let geo = ConvGeometry::new(c, lhs, rhs).map_err(|e| e.to_string())?;
        let k = geo.window_size() * geo.kernel_in;
        let per_group = geo.kernel_out / geo.groups.max(1);
        let positions = geo.positions();
        let per_batch = geo.groups * positions * k;
        let mut chunks = Vec::new();
        if k > 0 && per_group > 0 && positions > 0 && geo.out_batch > 0 {
            let batches = (column_limit / per_batch).clamp(1, geo.out_batch);
            let mut first = 0;
            while first < geo.out_batch {
                let nb = batches.min(geo.out_batch - first);
                let meta = im2col_meta(&geo, first, nb);
                let rows = nb * positions;
                let gemm = GemmCall {
                    m: i32_of(per_group, "output features per group")?,
                    n: i32_of(rows, "output rows of a chunk")?,
                    k: i32_of(k, "taps x input features")?,
                    lda: i32_of(geo.kernel_out, "output features")?,
                    ldb: i32_of(k, "taps x input features")?,
                    ldc: i32_of(geo.kernel_out, "output features")?,
                    stride_a: i64_of(per_group)?,
                    stride_b: i64_of(rows.checked_mul(k).ok_or("rows x K overflows")?)?,
                    stride_c: i64_of(per_group)?,
                    batch: i32_of(geo.groups, "groups")?,
                };
                chunks.push(ConvChunk {
                    columns: im2col_len(&meta),
                    meta,
                    gemm,
                    out_offset: first * positions * geo.kernel_out,
                    out_len: rows * geo.kernel_out,
                });
                first += nb;
            }
        }
        Ok(ConvPlan {
            lhs_perm: perm_if_needed(&geo.lhs_perm),
            rhs_perm: perm_if_needed(&geo.rhs_perm),
            out_perm: perm_if_needed(&geo.out_perm),
            geometry: geo,
            chunks,
        })
    }

    /// Elements of the canonical output.
    pub fn out_len(&self) -> usize {
        self.geometry.canonical_out().iter().product()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::gemm_plan::emulate;
    use crate::cuda::layout::{transpose, StridedCopy};
    use meshrun_compiler::ir::ops::OpDef;
    use meshrun_compiler::ir::{ElemType, TensorType};
    use meshrun_kernels::cpu::conv_cases::{plain, random, Rng, LAYOUTS};
    use meshrun_kernels::cpu::convolution::convolution;
    use meshrun_kernels::cuda::conv::im2col_emulated;
    use meshrun_kernels::{HostTensor, Parallelism};

    fn arranged(x: &[f64], shape: &[usize], perm: &Option<Vec<i64>>) -> Vec<f64> {
        match perm {
            None => x.to_vec(),
            Some(p) => {
                let (_, copy) = transpose(shape, p).unwrap();
                let mut out = vec![0.0; x.len()];
                copy.apply(x, &mut out).unwrap();
                out
            }
        }
    }

    /// What the GPU path computes, every step on host slices: transposes,
    /// the im2col kernel, cuBLAS, the chunk copies, the output transpose.
    fn gpu_path(plan: &ConvPlan, lhs: &HostTensor, rhs: &HostTensor) -> Vec<f64> {
        let x = arranged(&lhs.to_f64_vec(), lhs.shape(), &plan.lhs_perm);
        let w = arranged(&rhs.to_f64_vec(), rhs.shape(), &plan.rhs_perm);
        let mut canon = vec![0.0; plan.out_len()];
        for chunk in &plan.chunks {
            let mut col = vec![0.0; chunk.columns];
            im2col_emulated(&x, &mut col, &chunk.meta, chunk.columns);
            let mut c = vec![0.0; chunk.out_len];
            emulate(&chunk.gemm, &w, &col, &mut c);
            let copy = StridedCopy {
                dst_offset: chunk.out_offset,
                ..StridedCopy::contiguous(chunk.out_len)
            };
            copy.apply(&c, &mut canon).unwrap();
        }
        arranged(&canon, &plan.geometry.canonical_out(), &plan.out_perm)
    }

    /// The plan, run step by step on the host, equals the CPU kernel on
    /// random convolutions with every attribute, whole and in chunks
    /// (small column limits), values exact in f64.
    #[test]
    fn plans_compute_the_cpu_convolution() {
        let mut rng = Rng(0xD1B5_4A32_D192_ED03);
        let (mut checked, mut chunked) = (0, 0);
        for case in 0..300 {
            let (c, lhs, rhs) = random(&mut rng, LAYOUTS[case % LAYOUTS.len()]);
            let ty = |s: &[usize]| {
                TensorType::new(
                    s.iter().map(|&x| x as i64).collect::<Vec<_>>(),
                    ElemType::F64,
                )
            };
            let Ok(out) = c.infer(&[ty(&lhs), ty(&rhs)]) else {
                continue; // negative padding ate the input
            };
            let mut values = |n: usize| -> Vec<f64> { (0..n).map(|_| rng.small_f64()).collect() };
            let l = HostTensor::from_vec(&lhs, values(lhs.iter().product())).unwrap();
            let r = HostTensor::from_vec(&rhs, values(rhs.iter().product())).unwrap();
            let want = convolution(&c, &l, &r, &out[0], Parallelism::None).unwrap();
            let limit = [COLUMN_LIMIT, 1, 40][case % 3];
            let plan = ConvPlan::new(&c, &lhs, &rhs, limit).unwrap();
            chunked += usize::from(plan.chunks.len() > 1);
            assert_eq!(
                gpu_path(&plan, &l, &r),
                want.to_f64_vec(),
                "case {case}: {c:?} {lhs:?} {rhs:?}"
            );
            checked += 1;
        }
        assert!(
            checked > 200 && chunked > 50,
            "{checked} cases, {chunked} chunked"
        );
    }

    #[test]
    fn canonical_layouts_need_no_transpose_and_chunks_stay_under_the_limit() {
        let c = plain("[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]", 1, 1);
        // 4 images 5x5x3, 3x3 kernel -> 3x3 outputs of 8 features.
        let plan = ConvPlan::new(&c, &[4, 5, 5, 3], &[3, 3, 3, 8], 2 * 9 * 27).unwrap();
        assert_eq!(
            (&plan.lhs_perm, &plan.rhs_perm, &plan.out_perm),
            (&None, &None, &None)
        );
        assert_eq!(plan.chunks.len(), 2);
        let g = &plan.chunks[1].gemm;
        assert_eq!((g.m, g.n, g.k, g.lda, g.ldb, g.ldc), (8, 18, 27, 8, 27, 8));
        assert_eq!(plan.chunks[1].out_offset, 2 * 9 * 8);
        assert!(plan.chunks.iter().all(|ch| ch.columns <= 2 * 9 * 27));
        // No input features: all zeros, nothing to launch.
        let empty = ConvPlan::new(&c, &[4, 5, 5, 0], &[3, 3, 0, 8], COLUMN_LIMIT).unwrap();
        assert!(empty.chunks.is_empty());
        assert_eq!(empty.out_len(), 4 * 9 * 8);
        // Shapes that do not fit the dimension numbers are errors.
        assert!(ConvPlan::new(&c, &[4, 5, 5, 3], &[3, 3, 2, 8], COLUMN_LIMIT).is_err());
    }
}
