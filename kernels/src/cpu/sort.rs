//! `stablehlo.sort` with any comparator body, over several inputs, and
//! `chlo.top_k` on top of it.
//!
//! The comparator is evaluated over whole tensors ([`eval_computation`]),
//! never per element: the inputs are viewed as `rows × n` matrices (the
//! sorted dimension last) and ordered by a bitonic sorting network on
//! `n` rounded up to a power of two. Every stage of the network compares
//! independent pairs, so one stage is one evaluation of the comparator over
//! all its pairs of all rows. Only a permutation of positions moves during
//! the network; the data is gathered once, at the end.
//!
//! A network is not stable by itself, so ties (neither element goes before
//! the other) are settled by the original position: the result is the
//! stable order whether or not `is_stable` is set, which the spec allows
//! (an unstable sort may return any order of equal elements) and which is
//! what JAX's stable sorts and `top_k` (lower index first) return. That
//! costs a second comparator evaluation per stage. Positions past `n` (the
//! padding to a power of two) are virtual elements after every real one.

use meshrun_compiler::ir::ops::sort::Sort;
use meshrun_compiler::ir::Computation;
use ndarray::{ArrayD, IxDyn};

use crate::cpu::computation::eval_computation;
use crate::error::{KernelError, Result};
use crate::tensor::{HostElem, HostTensor};

const OP: &str = "stablehlo.sort";

/// A position of the network that holds no element.
const VIRTUAL: usize = usize::MAX;

/// Sort `inputs` together along the op's dimension.
pub fn sort(op: &Sort, inputs: &[&HostTensor]) -> Result<Vec<HostTensor>> {
    let first = inputs
        .first()
        .ok_or_else(|| KernelError::invalid(OP, "needs at least one input"))?;
    let shape = first.shape().to_vec();
    if let Some(x) = inputs.iter().find(|x| x.shape() != shape.as_slice()) {
        return Err(KernelError::invalid(
            OP,
            format!("inputs of shapes {shape:?} and {:?}", x.shape()),
        ));
    }
    let dim = op.dim(shape.len()).ok_or_else(|| {
        KernelError::invalid(
            OP,
            format!(
                "dimension {} is out of range for rank {}",
                op.attrs.dimension,
                shape.len()
            ),
        )
    })?;
    let n = shape[dim];
    let rows: usize = shape
        .iter()
        .enumerate()
        .filter(|&(d, _)| d != dim)
        .map(|(_, &s)| s)
        .product();
    // Axes with the sorted one last, and back.
    let order: Vec<usize> = (0..shape.len())
        .filter(|&d| d != dim)
        .chain([dim])
        .collect();
    let mut back = vec![0; order.len()];
    for (i, &o) in order.iter().enumerate() {
        back[o] = i;
    }
    let mats: Vec<HostTensor> = inputs.iter().map(|x| flat_in_order(x, &order)).collect();
    let perm = sorted_positions(&op.comparator, &mats, rows, n)?;
    let moved_shape: Vec<usize> = order.iter().map(|&d| shape[d]).collect();
    mats.iter()
        .map(|m| {
            let flat = take(m, &perm);
            crate::with_array!(&flat, a: T => {
                let m = a
                    .clone()
                    .into_shape_with_order(IxDyn(&moved_shape))
                    .map_err(|e| KernelError::invalid(OP, format!("internal reshape: {e}")))?;
                Ok(T::wrap(
                    m.permuted_axes(IxDyn(&back)).as_standard_layout().into_owned(),
                ))
            })
        })
        .collect()
}

/// For each row of the `rows × n` matrices `mats` (flat, row-major), the
/// flat indices of its elements in sorted order: `rows · n` indices.
pub fn sorted_positions(
    comparator: &Computation,
    mats: &[HostTensor],
    rows: usize,
    n: usize,
) -> Result<Vec<usize>> {
    let width = n.next_power_of_two();
    // perm[r * width + p]: the flat index of the element at position p.
    let mut perm: Vec<usize> = (0..rows)
        .flat_map(|r| (0..width).map(move |p| if p < n { r * n + p } else { VIRTUAL }))
        .collect();
    if n > 1 {
        let mut k = 2;
        while k <= width {
            let mut j = k / 2;
            while j >= 1 {
                stage(comparator, mats, &mut perm, rows, width, k, j)?;
                j /= 2;
            }
            k *= 2;
        }
    }
    Ok(perm.into_iter().filter(|&i| i != VIRTUAL).collect())
}

/// One stage of the bitonic network: positions `i` and `i ^ j` of every
/// row, ascending where `i & k == 0`, swapped when the later one goes
/// strictly before the earlier one.
fn stage(
    comparator: &Computation,
    mats: &[HostTensor],
    perm: &mut [usize],
    rows: usize,
    width: usize,
    k: usize,
    j: usize,
) -> Result<()> {
    // (first, second) slots of perm where `first` must not go after `second`.
    let mut slots: Vec<(usize, usize)> = Vec::new();
    for r in 0..rows {
        for i in 0..width {
            let l = i ^ j;
            if l <= i {
                continue;
            }
            let (a, b) = if i & k == 0 { (i, l) } else { (l, i) };
            let (a, b) = (r * width + a, r * width + b);
            match (perm[a] == VIRTUAL, perm[b] == VIRTUAL) {
                (true, false) => perm.swap(a, b),
                (false, false) => slots.push((a, b)),
                _ => {}
            }
        }
    }
    if slots.is_empty() {
        return Ok(());
    }
    let firsts: Vec<usize> = slots.iter().map(|&(a, _)| perm[a]).collect();
    let seconds: Vec<usize> = slots.iter().map(|&(_, b)| perm[b]).collect();
    let later_first = compare(comparator, mats, &seconds, &firsts)?;
    let first_first = compare(comparator, mats, &firsts, &seconds)?;
    for (s, &(a, b)) in slots.iter().enumerate() {
        // Ties keep the original order (stable).
        let swap = later_first[s] || (!first_first[s] && seconds[s] < firsts[s]);
        if swap {
            perm.swap(a, b);
        }
    }
    Ok(())
}

/// `comparator(x[lhs[s]], x[rhs[s]])` for every s: whether the element at
/// flat index `lhs[s]` goes before the one at `rhs[s]`.
fn compare(
    comparator: &Computation,
    mats: &[HostTensor],
    lhs: &[usize],
    rhs: &[usize],
) -> Result<Vec<bool>> {
    let mut args = Vec::with_capacity(2 * mats.len());
    for m in mats {
        args.push(take(m, lhs));
        args.push(take(m, rhs));
    }
    let refs: Vec<&HostTensor> = args.iter().collect();
    let out = eval_computation(comparator, &refs)?;
    match out.as_slice() {
        [HostTensor::Pred(p)] => Ok(p.iter().copied().collect()),
        _ => Err(KernelError::invalid(
            OP,
            "the comparator must return one tensor<i1>",
        )),
    }
}

/// `x` with its axes in `order`, flattened row-major.
fn flat_in_order(x: &HostTensor, order: &[usize]) -> HostTensor {
    crate::with_array!(x, a: T => {
        let v: Vec<T> = a.view().permuted_axes(IxDyn(order)).iter().copied().collect();
        T::wrap(ArrayD::from_shape_vec(IxDyn(&[v.len()]), v).unwrap_or_else(|_| unreachable!("a vector has its own length")))
    })
}

/// The elements of the flat tensor `x` at `idx`, as a flat tensor.
fn take(x: &HostTensor, idx: &[usize]) -> HostTensor {
    crate::with_array!(x, a: T => {
        let v: Vec<T> = match a.as_slice() {
            Some(src) => idx.iter().map(|&i| src[i]).collect(),
            None => {
                let src: Vec<T> = a.iter().copied().collect();
                idx.iter().map(|&i| src[i]).collect()
            }
        };
        T::wrap(ArrayD::from_shape_vec(IxDyn(&[v.len()]), v).unwrap_or_else(|_| unreachable!("a vector has its own length")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use meshrun_compiler::text::parse_module;
    use meshrun_compiler::OpKind;

    fn sort_of(src: &str) -> Sort {
        let m = parse_module(src).unwrap();
        let f = m.func("f").unwrap();
        let found = f.ops_in_order().find_map(|(_, op)| match &op.kind {
            OpKind::Sort(s) => Some(s.clone()),
            _ => None,
        });
        found.unwrap()
    }

    /// Values and an index, ascending by value (JAX's argsort body,
    /// without its NaN/zero canonicalization).
    fn argsort(n: usize, dim: usize, stable: bool) -> Sort {
        sort_of(&format!(
            r#"func.func @f(%x: tensor<3x{n}xf32>, %i: tensor<3x{n}xi32>) -> tensor<3x{n}xi32> {{
    %r:2 = "stablehlo.sort"(%x, %i) <{{dimension = {dim} : i64, is_stable = {stable}}}> ({{
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
      %lt = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    }}) : (tensor<3x{n}xf32>, tensor<3x{n}xi32>) -> (tensor<3x{n}xf32>, tensor<3x{n}xi32>)
    return %r#1 : tensor<3x{n}xi32>
}}
"#
        ))
    }

    #[test]
    fn every_width_sorts_stably_like_a_stable_sort() {
        for n in [0usize, 1, 2, 3, 5, 8, 13, 33] {
            let mut vals = Vec::new();
            for r in 0..3 {
                for c in 0..n {
                    // Many ties: values 0..4 only; -0.0 vs 0.0 ordered.
                    let v = ((c * 7 + r * 3) % 5) as f32 - 2.0;
                    vals.push(if v == 0.0 && c % 2 == 1 { -0.0 } else { v });
                }
            }
            let idx: Vec<i32> = (0..3 * n).map(|i| (i % n.max(1)) as i32).collect();
            let x = HostTensor::from_vec(&[3, n], vals.clone()).unwrap();
            let i = HostTensor::from_vec(&[3, n], idx).unwrap();
            for stable in [true, false] {
                let got = sort(&argsort(n, 1, stable), &[&x, &i]).unwrap();
                let mut want_v = Vec::new();
                let mut want_i = Vec::new();
                for r in 0..3 {
                    let mut row: Vec<(f32, i32)> =
                        (0..n).map(|c| (vals[r * n + c], c as i32)).collect();
                    row.sort_by(|a, b| a.0.total_cmp(&b.0));
                    want_v.extend(row.iter().map(|p| p.0));
                    want_i.extend(row.iter().map(|p| p.1));
                }
                assert_eq!(
                    got[1],
                    HostTensor::from_vec(&[3, n], want_i).unwrap(),
                    "n={n}"
                );
                assert_eq!(
                    got[0],
                    HostTensor::from_vec(&[3, n], want_v).unwrap(),
                    "n={n}"
                );
            }
        }
    }

    #[test]
    fn sorts_along_a_leading_dimension() {
        // dim 0 of a 3x2 matrix: each column sorted on its own.
        let s = sort_of(
            r#"func.func @f(%x: tensor<3x2xi32>) -> tensor<3x2xi32> {
    %r = "stablehlo.sort"(%x) <{dimension = 0 : i64}> ({
    ^bb0(%a: tensor<i32>, %b: tensor<i32>):
      %gt = stablehlo.compare GT, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %gt : tensor<i1>
    }) : (tensor<3x2xi32>) -> tensor<3x2xi32>
    return %r : tensor<3x2xi32>
}
"#,
        );
        let x = HostTensor::from_vec(&[3, 2], vec![1i32, 9, 5, 7, 3, 8]).unwrap();
        let got = sort(&s, &[&x]).unwrap();
        assert_eq!(
            got[0],
            HostTensor::from_vec(&[3, 2], vec![5i32, 9, 3, 8, 1, 7]).unwrap()
        );
    }
}
