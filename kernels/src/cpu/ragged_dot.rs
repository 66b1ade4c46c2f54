//! `chlo.ragged_dot` (`lax.ragged_dot` and its gradients): the grouped
//! matmul of a mixture of experts, each group's range of lhs's ragged
//! dimension multiplied with the same `dot_general` kernel as any
//! product (the ops crate's `RaggedMode` says what the modes mean).
//! Mode 1 (ragged rows): group `i`'s rows (after the rows of the groups
//! before it) times group `i` of rhs, the blocks concatenated along the
//! result's ragged dimension, rows past the last group zero (XLA's
//! semantics). Mode 2 (ragged contracting dimension): group `i`'s slice
//! of both operands' ragged dimension, one product per group stacked
//! along the result's leading group dimension, zero for an empty group.
//! Mode 3 (ragged batch dimension): the `dot_general`. Group sizes are
//! clamped to what is there, so a bad size never reads outside lhs.
//! `group_sizes` of rank > 1 (sizes per batch element or earlier index)
//! runs one grouped product per index of its prefix.
//!
//! On a device's blocks (the partitioner's optional fourth and fifth
//! operands: the first global index `o` of the block of the ragged
//! dimension, the first global group `h` of the block of groups — rhs's
//! in mode 1, the result's in mode 2), local group `j` is global group
//! `h + j`, its global range is intersected with the block's, and groups
//! outside the block are zero (another device adds them).

use gemm::Parallelism;
use meshrun_compiler::ir::{BinaryOp, TensorType};
use meshrun_compiler::ops::ragged_dot::{RaggedDot, RaggedMode, RaggedPlan};

use crate::cpu::dot::dot_general;
use crate::cpu::dynamic_slice::dynamic_update_slice;
use crate::cpu::elementwise::binary;
use crate::cpu::gather::index_values;
use crate::cpu::shape_ops::{concatenate, reshape, slice};
use crate::error::{KernelError, Result};
use crate::tensor::HostTensor;

const OP: &str = "chlo.ragged_dot";

/// `ragged_dot(lhs, rhs, group_sizes)` with result type `out`.
pub fn ragged_dot(
    op: &RaggedDot,
    lhs: &HostTensor,
    rhs: &HostTensor,
    group_sizes: &HostTensor,
    starts: Option<(&HostTensor, &HostTensor)>,
    out: &TensorType,
    par: Parallelism,
) -> Result<HostTensor> {
    let (ls, rs) = (lhs.shape(), rhs.shape());
    let plan = op
        .plan(ls.len(), rs.len())
        .map_err(|m| KernelError::invalid(OP, m))?;
    if plan.mode == RaggedMode::Batch {
        return dot_general(lhs, rhs, &plan.per_group, out, par);
    }
    let scalar = |what: &str, t: &HostTensor| -> Result<i64> {
        index_values(OP, what, t)?
            .first()
            .copied()
            .ok_or_else(|| KernelError::invalid(OP, format!("empty {what}")))
    };
    let at = match starts {
        Some((row, group)) => Start {
            row: scalar("row start", row)?,
            group: scalar("group start", group)?,
            local: true,
        },
        None => Start {
            row: 0,
            group: 0,
            local: false,
        },
    };
    let sizes = index_values(OP, "group_sizes", group_sizes)?;
    let gs_shape = group_sizes.shape();
    let Some((&g, prefix_shape)) = gs_shape.split_last() else {
        return Err(KernelError::invalid(OP, "group_sizes is a scalar"));
    };
    if prefix_shape.is_empty() {
        return grouped(&plan, lhs, rhs, &sizes, at, out, par);
    }
    // One grouped product per prefix index, each into its place of the
    // result (added where the prefix dim is a contracting one).
    let dims = plan.prefix_dims(&op.dims, ls.len());
    if dims.len() != prefix_shape.len() || g == 0 {
        return Err(KernelError::invalid(
            OP,
            format!("group_sizes {gs_shape:?} does not match the operands' prefix dims"),
        ));
    }
    let mut acc = HostTensor::zeros(out)?;
    for (n, row) in sizes.chunks(g).enumerate() {
        let (mut l_lo, mut l_hi) = full(ls);
        let (mut r_lo, mut r_hi) = full(rs);
        let out_shape: Vec<usize> = out.shape.iter().map(|&d| d.max(0) as usize).collect();
        let (mut o_lo, mut o_hi) = full(&out_shape);
        let mut rest = n;
        for (pd, &extent) in dims.iter().zip(prefix_shape).rev() {
            let i = (rest % extent) as i64;
            rest /= extent;
            (l_lo[pd.lhs], l_hi[pd.lhs]) = (i, i + 1);
            if let Some(r) = pd.rhs {
                (r_lo[r], r_hi[r]) = (i, i + 1);
            }
            if let Some(o) = pd.out {
                (o_lo[o], o_hi[o]) = (i, i + 1);
            }
        }
        let unit = |k: usize| vec![1i64; k];
        let sub_l = slice(lhs, &l_lo, &l_hi, &unit(ls.len()))?;
        let sub_r = slice(rhs, &r_lo, &r_hi, &unit(rs.len()))?;
        let mut sub_ty = out.clone();
        for (d, (lo, hi)) in sub_ty.shape.iter_mut().zip(o_lo.iter().zip(&o_hi)) {
            *d = hi - lo;
        }
        let part = grouped(&plan, &sub_l, &sub_r, row, at, &sub_ty, par)?;
        let region = slice(&acc, &o_lo, &o_hi, &unit(out_shape.len()))?;
        let sum = binary(BinaryOp::Add, &region, &part)?;
        let at: Vec<HostTensor> = o_lo
            .iter()
            .map(|&x| HostTensor::from_vec(&[], vec![x]))
            .collect::<Result<_>>()?;
        let at: Vec<&HostTensor> = at.iter().collect();
        acc = dynamic_update_slice(&acc, &sum, &at)?;
    }
    Ok(acc)
}

/// Where a device's blocks start (all zero for the whole op).
#[derive(Clone, Copy)]
struct Start {
    row: i64,
    group: i64,
    local: bool,
}

/// The start and end of every group's range, sizes clamped at zero.
fn ranges(sizes: &[i64]) -> Vec<(i64, i64)> {
    let mut at = 0i64;
    sizes
        .iter()
        .map(|&n| {
            let s = at;
            at = at.saturating_add(n.max(0));
            (s, at)
        })
        .collect()
}

/// Whole-tensor slice bounds of `shape`.
fn full(shape: &[usize]) -> (Vec<i64>, Vec<i64>) {
    (
        vec![0; shape.len()],
        shape.iter().map(|&d| d as i64).collect(),
    )
}

/// `lhs`'s range `[lo, hi)` of dimension `dim`.
fn range_of(x: &HostTensor, dim: usize, lo: i64, hi: i64) -> Result<HostTensor> {
    let (mut l, mut h) = full(x.shape());
    (l[dim], h[dim]) = (lo, hi);
    slice(x, &l, &h, &vec![1; l.len()])
}

/// One grouped product with one size per group.
fn grouped(
    plan: &RaggedPlan,
    lhs: &HostTensor,
    rhs: &HostTensor,
    sizes: &[i64],
    at: Start,
    out: &TensorType,
    par: Parallelism,
) -> Result<HostTensor> {
    match plan.mode {
        RaggedMode::Rows { group } => rows(plan, group, lhs, rhs, sizes, at, out, par),
        RaggedMode::Contracting { rhs_ragged } => {
            contracting(plan, rhs_ragged, lhs, rhs, sizes, at, out, par)
        }
        RaggedMode::Batch => dot_general(lhs, rhs, &plan.per_group, out, par),
    }
}

/// Mode 1: each group's rows times its matrix.
#[allow(clippy::too_many_arguments)]
fn rows(
    plan: &RaggedPlan,
    group: usize,
    lhs: &HostTensor,
    rhs: &HostTensor,
    sizes: &[i64],
    at: Start,
    out: &TensorType,
    par: Parallelism,
) -> Result<HostTensor> {
    let rs = rhs.shape();
    let local_groups = rs[group] as i64;
    if at.group < 0 || (!at.local && sizes.len() as i64 != local_groups) {
        return Err(KernelError::invalid(
            OP,
            format!(
                "{} group sizes for groups {}..{}",
                sizes.len(),
                at.group,
                at.group + local_groups
            ),
        ));
    }
    let rows = lhs.shape()[plan.ragged] as i64;
    let block_type = |n: i64| {
        let mut t = out.clone();
        t.shape[plan.out_ragged] = n;
        t
    };
    let mut one = TensorType::new(
        rs.iter().map(|&d| d as i64).collect::<Vec<i64>>(),
        rhs.elem_type(),
    );
    one.shape.remove(group);
    let mut blocks = Vec::new();
    // The next local row.
    let mut next = 0i64;
    for (g, (s, e)) in ranges(sizes).into_iter().enumerate() {
        let lo = s.max(at.row) - at.row;
        let n = (e.min(at.row + rows) - at.row - lo).max(0);
        // The group's index in rhs's block (padding groups past the sizes
        // are never reached).
        let j = g as i64 - at.group;
        if n == 0 || !(0..local_groups).contains(&j) {
            continue;
        }
        if lo > next {
            blocks.push(HostTensor::zeros(&block_type(lo - next))?);
            next = lo;
        }
        let rows_g = range_of(lhs, plan.ragged, next, next + n)?;
        let rhs_g = reshape(&range_of(rhs, group, j, j + 1)?, &one)?;
        blocks.push(dot_general(
            &rows_g,
            &rhs_g,
            &plan.per_group,
            &block_type(n),
            par,
        )?);
        next += n;
    }
    if next < rows || blocks.is_empty() {
        blocks.push(HostTensor::zeros(&block_type(rows - next))?);
    }
    let refs: Vec<&HostTensor> = blocks.iter().collect();
    concatenate(&refs, plan.out_ragged as i64)
}

/// Mode 2: one product per group over its range of the contracting
/// dimension, stacked along the result's leading group dimension.
#[allow(clippy::too_many_arguments)]
fn contracting(
    plan: &RaggedPlan,
    rhs_ragged: usize,
    lhs: &HostTensor,
    rhs: &HostTensor,
    sizes: &[i64],
    at: Start,
    out: &TensorType,
    par: Parallelism,
) -> Result<HostTensor> {
    let Some((&local_groups, rest)) = out.shape.split_first() else {
        return Err(KernelError::invalid(
            OP,
            "the result has no group dimension",
        ));
    };
    if at.group < 0 || (!at.local && sizes.len() as i64 != local_groups) {
        return Err(KernelError::invalid(
            OP,
            format!(
                "{} group sizes for {local_groups} result groups",
                sizes.len()
            ),
        ));
    }
    let len = lhs.shape()[plan.ragged] as i64;
    let mut block = out.clone();
    block.shape = rest.to_vec();
    let mut stacked = block.clone();
    stacked.shape.insert(0, 1);
    let ranges = ranges(sizes);
    let mut blocks = Vec::with_capacity(local_groups.max(0) as usize);
    for j in 0..local_groups {
        let (s, e) = usize::try_from(at.group + j)
            .ok()
            .and_then(|g| ranges.get(g).copied())
            .unwrap_or((0, 0));
        let lo = s.max(at.row) - at.row;
        let hi = e.min(at.row + len) - at.row;
        let product = if hi > lo {
            let l = range_of(lhs, plan.ragged, lo, hi)?;
            let r = range_of(rhs, rhs_ragged, lo, hi)?;
            dot_general(&l, &r, &plan.per_group, &block, par)?
        } else {
            HostTensor::zeros(&block)?
        };
        blocks.push(reshape(&product, &stacked)?);
    }
    if blocks.is_empty() {
        return HostTensor::zeros(out);
    }
    let refs: Vec<&HostTensor> = blocks.iter().collect();
    concatenate(&refs, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use meshrun_compiler::ir::ElemType;
    use meshrun_compiler::ops::ragged_dot::RaggedDotDims;

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
