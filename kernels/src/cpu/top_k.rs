//! `chlo.top_k`: the `k` largest elements of each row (the last
//! dimension) in descending order, and their i32 indices.
//!
//! Order: NaN above everything (as XLA's total order puts positive NaN),
//! otherwise the element type's `>`; equal elements (`-0.0` and `0.0`
//! included) keep the lower index first, by a stable sort.

use std::cmp::Ordering;

use ndarray::{ArrayD, Axis, IxDyn};

use crate::error::{KernelError, Result};
use crate::tensor::{HostElem, HostTensor};

const OP: &str = "chlo.top_k";

#[allow(clippy::eq_op)] // `x != x` finds NaN in any element type
fn is_nan<T: PartialOrd>(x: &T) -> bool {
    x != x
}

/// `a` before `b`: larger first, NaN first of all.
fn descending<T: PartialOrd>(a: &T, b: &T) -> Ordering {
    match (is_nan(a), is_nan(b)) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        _ => b.partial_cmp(a).unwrap_or(Ordering::Equal),
    }
}

pub fn top_k(x: &HostTensor, k: i64) -> Result<Vec<HostTensor>> {
    let shape = x.shape().to_vec();
    let Some(&n) = shape.last() else {
        return Err(KernelError::invalid(OP, "needs an operand of rank >= 1"));
    };
    let k = usize::try_from(k)
        .ok()
        .filter(|&k| k <= n)
        .ok_or_else(|| KernelError::invalid(OP, format!("k = {k} is outside [0, {n}]")))?;
    let mut out_shape = shape.clone();
    *out_shape
        .last_mut()
        .unwrap_or_else(|| unreachable!("rank >= 1")) = k;
    let last = Axis(shape.len() - 1);
    let internal = |e: ndarray::ShapeError| KernelError::invalid(OP, format!("internal: {e}"));
    crate::with_array!(x, a: T => {
        let mut values: Vec<T> = Vec::new();
        let mut indices: Vec<i32> = Vec::new();
        for row in a.lanes(last) {
            let row: Vec<T> = row.iter().copied().collect();
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by(|&i, &j| descending(&row[i], &row[j]));
            for &i in &order[..k] {
                values.push(row[i]);
                indices.push(i32::try_from(i).map_err(|_| {
                    KernelError::invalid(OP, format!("index {i} does not fit in i32"))
                })?);
            }
        }
        Ok(vec![
            T::wrap(ArrayD::from_shape_vec(IxDyn(&out_shape), values).map_err(internal)?),
            HostTensor::I32(ArrayD::from_shape_vec(IxDyn(&out_shape), indices).map_err(internal)?),
        ])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largest_first_ties_by_index_nan_on_top() {
        let x = HostTensor::from_vec(
            &[2, 5],
            vec![1.0f32, 3.0, 3.0, f32::NAN, -1.0, 0.0, -0.0, 2.0, -5.0, 2.0],
        )
        .unwrap();
        let got = top_k(&x, 3).unwrap();
        assert_eq!(
            got[1],
            HostTensor::from_vec(&[2, 3], vec![3i32, 1, 2, 2, 4, 0]).unwrap()
        );
        let v = got[0].to_f64_vec();
        assert!(v[0].is_nan());
        assert_eq!(v[1..], [3.0, 3.0, 2.0, 2.0, 0.0]);
        assert_eq!(top_k(&x, 0).unwrap()[0].shape(), &[2, 0]);
        assert!(top_k(&x, 6).is_err());
    }
}
