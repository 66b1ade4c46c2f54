//! `chlo.ragged_dot` (`lax.ragged_dot` and its gradients) on the CPU:
//! the op's steps (`meshrun_compiler::ir::ops::ragged_dot_steps`, where its
//! semantics are written once for every backend: one `dot_general` per
//! group on slices of the operands, zero blocks, concatenations) run with
//! the CPU kernels, each product with the same `gemm` kernel as any
//! `dot_general`.

use gemm::Parallelism;
use meshrun_compiler::ir::ops::ragged_dot::RaggedDot;
use meshrun_compiler::ir::ops::ragged_dot_steps::{expand, run, BlockStart, RaggedSteps};
use meshrun_compiler::ir::TensorType;

use crate::cpu::eval_op;
use crate::cpu::gather::index_values;
use crate::error::{KernelError, Result};
use crate::tensor::HostTensor;

const OP: &str = "chlo.ragged_dot";

/// `ragged_dot(lhs, rhs, group_sizes)` with result type `out`; `starts`
/// (a device's blocks): the first global index of lhs's block of the
/// ragged dimension and the first global group of the block of groups.
pub fn ragged_dot(
    op: &RaggedDot,
    lhs: &HostTensor,
    rhs: &HostTensor,
    group_sizes: &HostTensor,
    starts: Option<(&HostTensor, &HostTensor)>,
    out: &TensorType,
    par: Parallelism,
) -> Result<HostTensor> {
    let steps = ragged_dot_steps(op, &type_of(lhs), &type_of(rhs), group_sizes, starts, out)?;
    run(&steps, lhs, rhs, |kind, x, ty| {
        eval_op(kind, x, std::slice::from_ref(ty), par)?
            .pop()
            .ok_or_else(|| KernelError::invalid(OP, format!("{} gave no result", kind.name())))
    })
}

/// The steps of one ragged dot on operands of types `lhs`, `rhs`, read
/// off its group sizes and (a device's blocks) its block starts, which
/// every backend holds on the host to plan its products.
pub fn ragged_dot_steps(
    op: &RaggedDot,
    lhs: &TensorType,
    rhs: &TensorType,
    group_sizes: &HostTensor,
    starts: Option<(&HostTensor, &HostTensor)>,
    out: &TensorType,
) -> Result<RaggedSteps> {
    let scalar = |what: &str, t: &HostTensor| -> Result<i64> {
        index_values(OP, what, t)?
            .first()
            .copied()
            .ok_or_else(|| KernelError::invalid(OP, format!("empty {what}")))
    };
    let start = match starts {
        Some((row, group)) => Some(BlockStart {
            row: scalar("row start", row)?,
            group: scalar("group start", group)?,
        }),
        None => None,
    };
    let sizes = index_values(OP, "group_sizes", group_sizes)?;
    expand(
        op,
        lhs,
        rhs,
        &type_of(group_sizes).shape,
        &sizes,
        start,
        out,
    )
    .map_err(|m| KernelError::invalid(OP, m))
}

fn type_of(t: &HostTensor) -> TensorType {
    TensorType::new(
        t.shape().iter().map(|&d| d as i64).collect::<Vec<i64>>(),
        t.elem_type(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::dot::dot_general;
    use crate::cpu::shape_ops::slice;
    use meshrun_compiler::ir::ops::ragged_dot::RaggedDotDims;
    use meshrun_compiler::ir::ElemType;

    /// `x`'s range `[lo, hi)` of dimension `dim`.
    fn range_of(x: &HostTensor, dim: usize, lo: i64, hi: i64) -> Result<HostTensor> {
        let mut l = vec![0i64; x.shape().len()];
        let mut h: Vec<i64> = x.shape().iter().map(|&d| d as i64).collect();
        (l[dim], h[dim]) = (lo, hi);
        slice(x, &l, &h, &vec![1; l.len()])
    }

    fn lax_ragged_dot() -> RaggedDot {
        RaggedDot {
            dims: RaggedDotDims {
                lhs_contract: vec![1],
                rhs_contract: vec![1],
                lhs_ragged: vec![0],
                rhs_group: vec![0],
                ..Default::default()
            },
        }
    }

    /// Row `r` of the result: lhs row `r` times its group's matrix, zero
    /// past the groups.
    fn naive(lhs: &[f32], rhs: &[f32], sizes: &[i64], m: usize, k: usize, n: usize) -> Vec<f64> {
        let mut out = vec![0.0; m * n];
        let mut row = 0;
        for (g, &s) in sizes.iter().enumerate() {
            for _ in 0..s {
                if row == m {
                    break;
                }
                for j in 0..n {
                    out[row * n + j] = (0..k)
                        .map(|c| f64::from(lhs[row * k + c]) * f64::from(rhs[(g * k + c) * n + j]))
                        .sum();
                }
                row += 1;
            }
        }
        out
    }

    /// The whole product equals the naive one (zero-size groups, rows past
    /// the groups, sizes past the rows); every block of rows with its
    /// start as the fourth operand equals the same rows of the whole; and
    /// the products of blocks of groups (the last one padded past the
    /// groups) add up to the whole.
    #[test]
    fn groups_of_rows_and_blocks_of_rows() {
        let (m, k, n, g) = (12, 5, 3, 4);
        let lhs: Vec<f32> = (0..m * k)
            .map(|i| ((i * 7 % 11) as f32 - 5.0) / 4.0)
            .collect();
        let rhs: Vec<f32> = (0..g * k * n)
            .map(|i| ((i * 5 % 13) as f32 - 6.0) / 8.0)
            .collect();
        let l = HostTensor::from_vec(&[m, k], lhs.clone()).unwrap();
        let r = HostTensor::from_vec(&[g, k, n], rhs.clone()).unwrap();
        let op = lax_ragged_dot();
        let zero = HostTensor::from_vec(&[], vec![0i64]).unwrap();
        for sizes in [
            vec![3i64, 0, 5, 4],
            vec![2, 2, 2, 2],
            vec![0, 0, 0, 0],
            vec![5, 9, 1, 7],
        ] {
            let gs = HostTensor::from_vec(&[g], sizes.iter().map(|&s| s as i32).collect()).unwrap();
            let out = TensorType::new(vec![m as i64, n as i64], ElemType::F32);
            let whole = ragged_dot(&op, &l, &r, &gs, None, &out, Parallelism::None).unwrap();
            let want = naive(&lhs, &rhs, &sizes, m, k, n);
            let got = whole.to_f64_vec();
            for (a, b) in got.iter().zip(&want) {
                assert!((a - b).abs() < 1e-5, "{sizes:?}: {got:?} vs {want:?}");
            }
            for block in [3usize, 4, 6] {
                for b0 in (0..m).step_by(block) {
                    let rows = slice(
                        &l,
                        &[b0 as i64, 0],
                        &[(b0 + block) as i64, k as i64],
                        &[1, 1],
                    )
                    .unwrap();
                    let start = HostTensor::from_vec(&[], vec![b0 as i64]).unwrap();
                    let out_b = TensorType::new(vec![block as i64, n as i64], ElemType::F32);
                    let part = ragged_dot(
                        &op,
                        &rows,
                        &r,
                        &gs,
                        Some((&start, &zero)),
                        &out_b,
                        Parallelism::None,
                    )
                    .unwrap();
                    assert_eq!(
                        part.to_f64_vec(),
                        got[b0 * n..(b0 + block) * n].to_vec(),
                        "{sizes:?} block {b0}+{block}"
                    );
                }
            }
            for groups in [1usize, 3, 4] {
                let mut sum = vec![0.0; m * n];
                for g0 in (0..g).step_by(groups) {
                    // rhs's block of groups, zero-padded past the last one.
                    let mut block = vec![0.0f32; groups * k * n];
                    let have = (g - g0).min(groups) * k * n;
                    block[..have].copy_from_slice(&rhs[g0 * k * n..g0 * k * n + have]);
                    let rb = HostTensor::from_vec(&[groups, k, n], block).unwrap();
                    let gstart = HostTensor::from_vec(&[], vec![g0 as i64]).unwrap();
                    let part = ragged_dot(
                        &op,
                        &l,
                        &rb,
                        &gs,
                        Some((&zero, &gstart)),
                        &out,
                        Parallelism::None,
                    )
                    .unwrap();
                    for (s, p) in sum.iter_mut().zip(part.to_f64_vec()) {
                        *s += p;
                    }
                }
                for (a, b) in sum.iter().zip(&want) {
                    assert!((a - b).abs() < 1e-5, "{sizes:?} groups of {groups}");
                }
            }
        }
    }

    fn dims(
        lb: &[i64],
        rb: &[i64],
        lc: &[i64],
        rc: &[i64],
        ragged: i64,
        group: &[i64],
    ) -> RaggedDot {
        RaggedDot {
            dims: RaggedDotDims {
                lhs_batch: lb.to_vec(),
                rhs_batch: rb.to_vec(),
                lhs_contract: lc.to_vec(),
                rhs_contract: rc.to_vec(),
                lhs_ragged: vec![ragged],
                rhs_group: group.to_vec(),
            },
        }
    }

    fn values(n: usize, seed: usize) -> Vec<f32> {
        (0..n)
            .map(|i| (((i * 7 + seed) % 13) as f32 - 6.0) / 8.0)
            .collect()
    }

    fn ty(shape: &[usize]) -> TensorType {
        TensorType::new(
            shape.iter().map(|&d| d as i64).collect::<Vec<_>>(),
            ElemType::F32,
        )
    }

    fn close(got: &[f64], want: &[f64], what: &str) {
        assert_eq!(got.len(), want.len(), "{what}");
        for (a, b) in got.iter().zip(want) {
            assert!((a - b).abs() < 1e-5, "{what}: {got:?} vs {want:?}");
        }
    }

    /// Mode 2, the weight gradient: `[K, M] x [K, N] -> [G, M, N]`, group
    /// `g` summing over its own rows only (zero for an empty group or one
    /// past the rows); blocks of rows (with their starts) add up to the
    /// whole, and blocks of result groups are the whole's groups.
    #[test]
    fn ragged_contracting_sums_each_group_over_its_rows() {
        let (k, m, n, g) = (12, 3, 2, 4);
        let (lv, rv) = (values(k * m, 1), values(k * n, 5));
        let l = HostTensor::from_vec(&[k, m], lv.clone()).unwrap();
        let r = HostTensor::from_vec(&[k, n], rv.clone()).unwrap();
        let op = dims(&[], &[], &[0], &[0], 0, &[]);
        let out = ty(&[g, m, n]);
        let scalar = |v: i64| HostTensor::from_vec(&[], vec![v]).unwrap();
        for sizes in [vec![3i64, 0, 5, 4], vec![5, 9, 1, 7], vec![0, 0, 0, 0]] {
            let gs = HostTensor::from_vec(&[g], sizes.iter().map(|&s| s as i32).collect()).unwrap();
            let whole = ragged_dot(&op, &l, &r, &gs, None, &out, Parallelism::None).unwrap();
            let mut want = vec![0.0; g * m * n];
            let mut row = 0;
            for (gi, &size) in sizes.iter().enumerate() {
                for _ in 0..size {
                    if row == k {
                        break;
                    }
                    for a in 0..m {
                        for b in 0..n {
                            want[(gi * m + a) * n + b] +=
                                f64::from(lv[row * m + a]) * f64::from(rv[row * n + b]);
                        }
                    }
                    row += 1;
                }
            }
            let got = whole.to_f64_vec();
            close(&got, &want, &format!("{sizes:?}"));
            for block in [3usize, 4, 6] {
                let mut sum = vec![0.0; g * m * n];
                for b0 in (0..k).step_by(block) {
                    let lb = range_of(&l, 0, b0 as i64, (b0 + block) as i64).unwrap();
                    let rb = range_of(&r, 0, b0 as i64, (b0 + block) as i64).unwrap();
                    let starts = (scalar(b0 as i64), scalar(0));
                    let part = ragged_dot(
                        &op,
                        &lb,
                        &rb,
                        &gs,
                        Some((&starts.0, &starts.1)),
                        &out,
                        Parallelism::None,
                    )
                    .unwrap();
                    for (s, p) in sum.iter_mut().zip(part.to_f64_vec()) {
                        *s += p;
                    }
                }
                close(&sum, &want, &format!("{sizes:?} rows in blocks of {block}"));
            }
            // Two result groups per device, the last block past the groups.
            for g0 in [0usize, 2, 3] {
                let starts = (scalar(0), scalar(g0 as i64));
                let part = ragged_dot(
                    &op,
                    &l,
                    &r,
                    &gs,
                    Some((&starts.0, &starts.1)),
                    &ty(&[2, m, n]),
                    Parallelism::None,
                )
                .unwrap();
                let mut expect = vec![0.0; 2 * m * n];
                let have = (g - g0).min(2) * m * n;
                expect[..have].copy_from_slice(&want[g0 * m * n..g0 * m * n + have]);
                close(
                    &part.to_f64_vec(),
                    &expect,
                    &format!("{sizes:?} groups from {g0}"),
                );
            }
        }
    }

    /// `group_sizes` per batch element: each batch element is the grouped
    /// product of its own sizes (mode 1 `[B, M, K] x [G, B, K, N]` and
    /// mode 2 `[B, K, M] x [B, K, N] -> [G, B, M, N]`); a rank-1 sizes is
    /// the same for every element.
    #[test]
    fn sizes_per_batch_element() {
        let (b, m, k, n, g) = (2, 6, 3, 2, 3);
        let per_batch = [vec![1i64, 4, 1], vec![0, 2, 3]];
        let flat: Vec<i32> = per_batch.iter().flatten().map(|&s| s as i32).collect();
        let gs = HostTensor::from_vec(&[b, g], flat).unwrap();
        // Mode 1.
        let (lv, rv) = (values(b * m * k, 2), values(g * b * k * n, 3));
        let l = HostTensor::from_vec(&[b, m, k], lv.clone()).unwrap();
        let r = HostTensor::from_vec(&[g, b, k, n], rv.clone()).unwrap();
        let op = dims(&[0], &[1], &[2], &[2], 1, &[0]);
        let got = ragged_dot(&op, &l, &r, &gs, None, &ty(&[b, m, n]), Parallelism::None)
            .unwrap()
            .to_f64_vec();
        let single = lax_ragged_dot();
        for (bi, sizes) in per_batch.iter().enumerate() {
            let lb =
                HostTensor::from_vec(&[m, k], lv[bi * m * k..(bi + 1) * m * k].to_vec()).unwrap();
            let rb: Vec<f32> = (0..g)
                .flat_map(|gi| rv[(gi * b + bi) * k * n..(gi * b + bi + 1) * k * n].to_vec())
                .collect();
            let rb = HostTensor::from_vec(&[g, k, n], rb).unwrap();
            let gs1 =
                HostTensor::from_vec(&[g], sizes.iter().map(|&s| s as i32).collect()).unwrap();
            let want = ragged_dot(
                &single,
                &lb,
                &rb,
                &gs1,
                None,
                &ty(&[m, n]),
                Parallelism::None,
            )
            .unwrap();
            close(
                &got[bi * m * n..(bi + 1) * m * n],
                &want.to_f64_vec(),
                &format!("mode 1 batch {bi}"),
            );
        }
        // Mode 2: ragged k = the M rows here.
        let (lv, rv) = (values(b * m * k, 4), values(b * m * n, 6));
        let l = HostTensor::from_vec(&[b, m, k], lv.clone()).unwrap();
        let r = HostTensor::from_vec(&[b, m, n], rv.clone()).unwrap();
        let op = dims(&[0], &[0], &[1], &[1], 1, &[]);
        let got = ragged_dot(
            &op,
            &l,
            &r,
            &gs,
            None,
            &ty(&[g, b, k, n]),
            Parallelism::None,
        )
        .unwrap()
        .to_f64_vec();
        let single = dims(&[], &[], &[0], &[0], 0, &[]);
        for (bi, sizes) in per_batch.iter().enumerate() {
            let lb =
                HostTensor::from_vec(&[m, k], lv[bi * m * k..(bi + 1) * m * k].to_vec()).unwrap();
            let rb =
                HostTensor::from_vec(&[m, n], rv[bi * m * n..(bi + 1) * m * n].to_vec()).unwrap();
            let gs1 =
                HostTensor::from_vec(&[g], sizes.iter().map(|&s| s as i32).collect()).unwrap();
            let want = ragged_dot(
                &single,
                &lb,
                &rb,
                &gs1,
                None,
                &ty(&[g, k, n]),
                Parallelism::None,
            )
            .unwrap()
            .to_f64_vec();
            for gi in 0..g {
                let at = (gi * b + bi) * k * n;
                close(
                    &got[at..at + k * n],
                    &want[gi * k * n..(gi + 1) * k * n],
                    &format!("mode 2 batch {bi} group {gi}"),
                );
            }
        }
    }

    /// Mode 3 is the `dot_general`: the sizes change nothing.
    #[test]
    fn ragged_batch_is_the_dot_general() {
        let (b, m, k, n) = (3, 2, 4, 2);
        let l = HostTensor::from_vec(&[b, m, k], values(b * m * k, 1)).unwrap();
        let r = HostTensor::from_vec(&[b, k, n], values(b * k * n, 2)).unwrap();
        let op = dims(&[0], &[0], &[2], &[1], 0, &[]);
        let want = dot_general(
            &l,
            &r,
            &op.plan(3, 3).unwrap().per_group,
            &ty(&[b, m, n]),
            Parallelism::None,
        )
        .unwrap();
        for sizes in [vec![1, 1, 1], vec![0, 3, 0]] {
            let gs = HostTensor::from_vec(&[3], sizes).unwrap();
            let got =
                ragged_dot(&op, &l, &r, &gs, None, &ty(&[b, m, n]), Parallelism::None).unwrap();
            assert_eq!(got.to_f64_vec(), want.to_f64_vec());
        }
    }
}
