//! `dot_general` as one strided batched GEMM (pure planning, tested on
//! the CPU).
//!
//! StableHLO's result layout is `[batch..., lhs free..., rhs free...]`,
//! which is exactly a row-major `[B, M, N]` for `lhs` as `[B, M, K]` and
//! `rhs` as `[B, K, N]`. So the plan transposes each operand into that
//! order when it is not already in it (one `strided_copy`), and computes
//! the row-major product with cuBLAS, which is column-major: row-major
//! `C = A·B` is column-major `Cᵀ = Bᵀ·Aᵀ`, and a row-major buffer read
//! column-major *is* its transpose. Hence the call multiplies `rhs` (as
//! an `N x K` column-major matrix, leading dimension `N`) by `lhs` (`K x
//! M`, leading dimension `K`) into `N x M` (leading dimension `N`), with no
//! transpose flags.

use meshrun_compiler::ir::DotDims;

/// How to compute one `dot_general`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DotPlan {
    /// Transpose `lhs` by this permutation first (`None`: already
    /// `[batch, free, contract]`).
    pub lhs_perm: Option<Vec<i64>>,
    /// Transpose `rhs` by this permutation first (`None`: already
    /// `[batch, contract, free]`).
    pub rhs_perm: Option<Vec<i64>>,
    pub batch: usize,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// The result shape (`[batch..., lhs free..., rhs free...]`).
    pub out_shape: Vec<usize>,
}

/// The cuBLAS call of a plan (column-major, no transposes): `a` is the
/// (transposed) `rhs` buffer, `b` the (transposed) `lhs` buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GemmCall {
    pub m: i32,
    pub n: i32,
    pub k: i32,
    pub lda: i32,
    pub ldb: i32,
    pub ldc: i32,
    pub stride_a: i64,
    pub stride_b: i64,
    pub stride_c: i64,
    pub batch: i32,
}

fn checked_dims(list: &[i64], rank: usize, what: &str) -> Result<Vec<usize>, String> {
    list.iter()
        .map(|&d| {
            usize::try_from(d)
                .ok()
                .filter(|&d| d < rank)
                .ok_or_else(|| format!("{what} dimension {d} of a rank-{rank} operand"))
        })
        .collect()
}

fn order(first: &[usize], second: &[usize], rank: usize) -> (Vec<usize>, Vec<usize>) {
    let used: Vec<usize> = first.iter().chain(second).copied().collect();
    let free: Vec<usize> = (0..rank).filter(|d| !used.contains(d)).collect();
    (free, used)
}

fn perm_if_needed(order: &[usize]) -> Option<Vec<i64>> {
    let identity = order.iter().enumerate().all(|(i, &d)| i == d);
    (!identity).then(|| order.iter().map(|&d| d as i64).collect())
}

impl DotPlan {
    pub fn new(lhs: &[usize], rhs: &[usize], dims: &DotDims) -> Result<DotPlan, String> {
        let lb = checked_dims(&dims.lhs_batch, lhs.len(), "lhs batch")?;
        let rb = checked_dims(&dims.rhs_batch, rhs.len(), "rhs batch")?;
        let lc = checked_dims(&dims.lhs_contract, lhs.len(), "lhs contracting")?;
        let rc = checked_dims(&dims.rhs_contract, rhs.len(), "rhs contracting")?;
        if lb.len() != rb.len() || lc.len() != rc.len() {
            return Err("batch or contracting dimension lists of different lengths".into());
        }
        for (a, b) in lb.iter().zip(&rb).chain(lc.iter().zip(&rc)) {
            if lhs[*a] != rhs[*b] {
                return Err(format!(
                    "lhs dimension {a} ({}) does not match rhs dimension {b} ({})",
                    lhs[*a], rhs[*b]
                ));
            }
        }
        let (lfree, _) = order(&lb, &lc, lhs.len());
        let (rfree, _) = order(&rb, &rc, rhs.len());
        let lorder: Vec<usize> = lb.iter().chain(&lfree).chain(&lc).copied().collect();
        let rorder: Vec<usize> = rb.iter().chain(&rc).chain(&rfree).copied().collect();
        if lorder.len() != lhs.len() || rorder.len() != rhs.len() {
            return Err("a dimension is both batch and contracting".into());
        }
        let prod = |shape: &[usize], ds: &[usize]| ds.iter().map(|&d| shape[d]).product::<usize>();
        let out_shape: Vec<usize> = lb
            .iter()
            .map(|&d| lhs[d])
            .chain(lfree.iter().map(|&d| lhs[d]))
            .chain(rfree.iter().map(|&d| rhs[d]))
            .collect();
        Ok(DotPlan {
            lhs_perm: perm_if_needed(&lorder),
            rhs_perm: perm_if_needed(&rorder),
            batch: prod(lhs, &lb),
            m: prod(lhs, &lfree),
            n: prod(rhs, &rfree),
            k: prod(lhs, &lc),
            out_shape,
        })
    }

    /// True when the product is all zeros or empty (no GEMM to run).
    pub fn is_trivial(&self) -> bool {
        self.batch == 0 || self.m == 0 || self.n == 0 || self.k == 0
    }

    /// The cuBLAS call, or why the sizes do not fit its 32-bit arguments.
    pub fn call(&self) -> Result<GemmCall, String> {
        let i32_of = |x: usize, what: &str| {
            i32::try_from(x).map_err(|_| format!("{what} = {x} is too large for one cuBLAS call"))
        };
        let i64_of = |x: usize| i64::try_from(x).map_err(|_| format!("{x} elements"));
        let (m, n, k) = (self.m.max(1), self.n.max(1), self.k.max(1));
        Ok(GemmCall {
            m: i32_of(self.n, "N")?,
            n: i32_of(self.m, "M")?,
            k: i32_of(self.k, "K")?,
            lda: i32_of(n, "N")?,
            ldb: i32_of(k, "K")?,
            ldc: i32_of(n, "N")?,
            stride_a: i64_of(k.checked_mul(n).ok_or("K*N overflows")?)?,
            stride_b: i64_of(m.checked_mul(k).ok_or("M*K overflows")?)?,
            stride_c: i64_of(m.checked_mul(n).ok_or("M*N overflows")?)?,
            batch: i32_of(self.batch, "the batch")?,
        })
    }
}

/// What cuBLAS computes for `call` (column-major, no transposes), on host
/// slices: the reference the tests check the plans against.
pub fn emulate(call: &GemmCall, a: &[f64], b: &[f64], c: &mut [f64]) {
    let (m, n, k) = (call.m as usize, call.n as usize, call.k as usize);
    for p in 0..call.batch as usize {
        let (oa, ob, oc) = (
            p * call.stride_a as usize,
            p * call.stride_b as usize,
            p * call.stride_c as usize,
        );
        for j in 0..n {
            for i in 0..m {
                let mut acc = 0.0;
                for l in 0..k {
                    acc += a[oa + i + l * call.lda as usize] * b[ob + l + j * call.ldb as usize];
                }
                c[oc + i + j * call.ldc as usize] = acc;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::layout::transpose;
    use meshrun_compiler::ir::{ElemType, TensorType};
    use meshrun_kernels::cpu::dot::dot_general;
    use meshrun_kernels::{HostTensor, Parallelism};

    fn counting(shape: &[usize], scale: f32) -> HostTensor {
        let n: usize = shape.iter().product();
        HostTensor::from_vec(
            shape,
            (0..n).map(|i| (i % 7) as f32 * scale - 1.0).collect(),
        )
        .unwrap()
    }

    fn arrange(x: &HostTensor, perm: &Option<Vec<i64>>) -> Vec<f64> {
        match perm {
            None => x.to_f64_vec(),
            Some(p) => {
                let (_, copy) = transpose(x.shape(), p).unwrap();
                let mut out = vec![0.0; x.len()];
                copy.apply(&x.to_f64_vec(), &mut out).unwrap();
                out
            }
        }
    }

    fn check(lhs: &[usize], rhs: &[usize], dims: DotDims) {
        let (a, b) = (counting(lhs, 0.5), counting(rhs, 0.25));
        let plan = DotPlan::new(lhs, rhs, &dims).unwrap();
        let out_ty = TensorType::new(
            plan.out_shape.iter().map(|&d| d as i64).collect::<Vec<_>>(),
            ElemType::F32,
        );
        let want = dot_general(&a, &b, &dims, &out_ty, Parallelism::None).unwrap();
        assert_eq!(plan.out_shape, want.shape());
        let call = plan.call().unwrap();
        let mut got = vec![0.0; want.len()];
        // cuBLAS's A is the rhs, its B the lhs.
        emulate(
            &call,
            &arrange(&b, &plan.rhs_perm),
            &arrange(&a, &plan.lhs_perm),
            &mut got,
        );
        let want = want.to_f64_vec();
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (g - w).abs() < 1e-4,
                "{lhs:?} x {rhs:?} {dims:?}: {got:?} vs {want:?}"
            );
        }
    }

    #[test]
    fn plans_compute_dot_general() {
        check(&[3, 4], &[4, 5], DotDims::for_dot(2));
        check(&[4], &[4, 2], DotDims::for_dot(1));
        // Contracting the lhs's first dim: lhs needs a transpose.
        check(
            &[4, 3],
            &[4, 5],
            DotDims {
                lhs_batch: vec![],
                rhs_batch: vec![],
                lhs_contract: vec![0],
                rhs_contract: vec![0],
            },
        );
        // Batched attention-like: [b, q, h, d] x [b, k, h, d] -> [b, h, q, k].
        check(
            &[2, 3, 2, 4],
            &[2, 5, 2, 4],
            DotDims {
                lhs_batch: vec![0, 2],
                rhs_batch: vec![0, 2],
                lhs_contract: vec![3],
                rhs_contract: vec![3],
            },
        );
        // Two contracting dims, rhs free dim first.
        check(
            &[2, 3, 4],
            &[5, 3, 4],
            DotDims {
                lhs_batch: vec![],
                rhs_batch: vec![],
                lhs_contract: vec![1, 2],
                rhs_contract: vec![1, 2],
            },
        );
    }

    #[test]
    fn identity_layouts_need_no_transpose_and_bad_dims_are_errors() {
        let plan = DotPlan::new(
            &[2, 3, 4],
            &[2, 4, 5],
            &DotDims {
                lhs_batch: vec![0],
                rhs_batch: vec![0],
                lhs_contract: vec![2],
                rhs_contract: vec![1],
            },
        )
        .unwrap();
        assert_eq!((plan.lhs_perm, plan.rhs_perm), (None, None));
        assert_eq!((plan.batch, plan.m, plan.n, plan.k), (2, 3, 5, 4));
        let call = DotPlan::new(&[3, 4], &[4, 5], &DotDims::for_dot(2))
            .unwrap()
            .call()
            .unwrap();
        assert_eq!(
            (call.m, call.n, call.k, call.lda, call.ldb, call.ldc),
            (5, 3, 4, 5, 4, 5)
        );
        assert!(DotPlan::new(&[3, 4], &[5, 5], &DotDims::for_dot(2)).is_err());
        assert!(DotPlan::new(
            &[3, 4],
            &[4, 5],
            &DotDims {
                lhs_batch: vec![],
                rhs_batch: vec![],
                lhs_contract: vec![2],
                rhs_contract: vec![0],
            }
        )
        .is_err());
        let empty = DotPlan::new(&[0, 4], &[4, 5], &DotDims::for_dot(2)).unwrap();
        assert!(empty.is_trivial());
    }
}
