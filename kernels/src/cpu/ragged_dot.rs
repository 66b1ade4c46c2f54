//! `chlo.ragged_dot` (`lax.ragged_dot`): the grouped matmul of a mixture
//! of experts. Group `i`'s rows of lhs's ragged dimension (after the rows
//! of the groups before it) are multiplied by group `i` of rhs with the
//! same `dot_general` kernel as any product; the blocks are concatenated
//! along the result's ragged dimension, and rows past the last group are
//! zero (XLA's semantics). Group sizes are clamped to the rows left, so a
//! bad size never reads outside lhs. On a device's blocks (the
//! partitioner's optional fourth and fifth operands: the first global row
//! `o` of lhs's block, the first global group `h` of rhs's block), each
//! local group `j` is global group `h + j`, its global rows are
//! intersected with `[o, o + rows)`, and rows of groups outside the block
//! are zero (another device's experts add them).

use gemm::Parallelism;
use meshrun_compiler::ir::TensorType;
use meshrun_compiler::ops::ragged_dot::RaggedDot;

use crate::cpu::dot::dot_general;
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
    let (ls, rs) = (lhs.shape().to_vec(), rhs.shape().to_vec());
    let plan = op
        .plan(ls.len(), rs.len())
        .map_err(|m| KernelError::invalid(OP, m))?;
    let sizes = index_values(OP, "group_sizes", group_sizes)?;
    let scalar = |what: &str, t: &HostTensor| -> Result<i64> {
        index_values(OP, what, t)?
            .first()
            .copied()
            .ok_or_else(|| KernelError::invalid(OP, format!("empty {what}")))
    };
    let (first, first_group) = match starts {
        Some((row, group)) => (scalar("row start", row)?, scalar("group start", group)?),
        None => (0, 0),
    };
    let local_groups = rs[plan.group] as i64;
    if first_group < 0 || (starts.is_none() && sizes.len() as i64 != local_groups) {
        return Err(KernelError::invalid(
            OP,
            format!(
                "{} group sizes for groups {first_group}..{}",
                sizes.len(),
                first_group + local_groups
            ),
        ));
    }
    let rows = ls[plan.ragged] as i64;
    let full = |shape: &[usize]| -> (Vec<i64>, Vec<i64>, Vec<i64>) {
        (
            vec![0; shape.len()],
            shape.iter().map(|&d| d as i64).collect(),
            vec![1; shape.len()],
        )
    };
    let block_type = |n: i64| {
        let mut t = out.clone();
        t.shape[plan.out_ragged] = n;
        t
    };
    let mut blocks = Vec::new();
    // `start`: the next local row; `global`: where the next group begins.
    let (mut start, mut global) = (0i64, 0i64);
    for (g, &size) in sizes.iter().enumerate() {
        let end = global.saturating_add(size.max(0));
        let lo_row = global.max(first) - first;
        global = end;
        let n = (end.min(first + rows) - first - lo_row).max(0);
        // The group's index in rhs's block (padding groups past the sizes
        // are never reached).
        let j = g as i64 - first_group;
        if n == 0 || !(0..local_groups).contains(&j) {
            continue;
        }
        if lo_row > start {
            blocks.push(HostTensor::zeros(&block_type(lo_row - start))?);
            start = lo_row;
        }
        let (mut lo, mut hi, st) = full(&ls);
        lo[plan.ragged] = start;
        hi[plan.ragged] = start + n;
        let rows_g = slice(lhs, &lo, &hi, &st)?;
        let (mut lo, mut hi, st) = full(&rs);
        lo[plan.group] = j;
        hi[plan.group] = j + 1;
        let mut one = TensorType::new(
            rs.iter().map(|&d| d as i64).collect::<Vec<i64>>(),
            rhs.elem_type(),
        );
        one.shape.remove(plan.group);
        let rhs_g = reshape(&slice(rhs, &lo, &hi, &st)?, &one)?;
        blocks.push(dot_general(
            &rows_g,
            &rhs_g,
            &plan.per_group,
            &block_type(n),
            par,
        )?);
        start += n;
    }
    if start < rows {
        blocks.push(HostTensor::zeros(&block_type(rows - start))?);
    }
    let refs: Vec<&HostTensor> = blocks.iter().collect();
    concatenate(&refs, plan.out_ragged as i64)
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
}
