//! `stablehlo.reduce` with any element-wise body (`jnp.argmax`: values
//! and indices under a comparator), over several inputs.
//!
//! The inputs are laid out as `K × R` matrices (kept × reduced elements)
//! and reduced by halving: the first half of the columns is combined with
//! the second half by one evaluation of the body over whole tensors
//! ([`eval_computation`]), an odd last column is carried over, until one
//! column is left; the init values enter once, at the end. That is
//! `log2(R)` body evaluations, each vectorized over `K·R/2^l` tuples. The
//! order of combination is one StableHLO allows (the body is meant to be
//! associative and commutative, as JAX's are).

use meshrun_compiler::ir::{Computation, TensorType};
use ndarray::{s, Axis, Ix2, IxDyn};

use crate::cpu::computation::eval_computation;
use crate::cpu::shape_ops::{broadcast_in_dim, reshape};
use crate::error::{KernelError, Result};
use crate::tensor::{HostElem, HostTensor};

const OP: &str = "stablehlo.reduce";

/// Reduce `inputs` over `dims` with `body`, starting from `inits`.
pub fn reduce_with_body(
    body: &Computation,
    dims: &[i64],
    inputs: &[&HostTensor],
    inits: &[&HostTensor],
) -> Result<Vec<HostTensor>> {
    let Some(first) = inputs.first() else {
        return Err(KernelError::invalid(OP, "needs at least one input"));
    };
    if inputs.len() != inits.len() {
        return Err(KernelError::invalid(
            OP,
            format!("{} inputs but {} init values", inputs.len(), inits.len()),
        ));
    }
    let shape = first.shape().to_vec();
    let rank = shape.len();
    let mut reduced = vec![false; rank];
    for &d in dims {
        match usize::try_from(d).ok().filter(|&d| d < rank) {
            Some(d) if !reduced[d] => reduced[d] = true,
            _ => {
                return Err(KernelError::invalid(
                    OP,
                    format!("dimension {d} is out of range or repeated for rank {rank}"),
                ))
            }
        }
    }
    for (k, (x, init)) in inputs.iter().zip(inits).enumerate() {
        if x.shape() != shape.as_slice() {
            return Err(KernelError::invalid(
                OP,
                format!("input {k} has shape {:?}, input 0 {shape:?}", x.shape()),
            ));
        }
        if !init.shape().is_empty() || init.elem_type() != x.elem_type() {
            return Err(KernelError::invalid(
                OP,
                format!("init value {k} must be a {} scalar", x.elem_type()),
            ));
        }
    }
    let kept: Vec<usize> = (0..rank).filter(|&d| !reduced[d]).collect();
    let red: Vec<usize> = (0..rank).filter(|&d| reduced[d]).collect();
    let out_shape: Vec<usize> = kept.iter().map(|&d| shape[d]).collect();
    let k: usize = out_shape.iter().product();
    let r: usize = red.iter().map(|&d| shape[d]).product();
    let order = [kept, red].concat();
    let mut cols: Vec<HostTensor> = inputs
        .iter()
        .map(|x| as_matrix(x, &order, k, r))
        .collect::<Result<_>>()?;
    let mut width = r;
    while width > 1 {
        let half = width / 2;
        let lo: Vec<HostTensor> = cols.iter().map(|c| columns(c, 0, half)).collect();
        let hi: Vec<HostTensor> = cols.iter().map(|c| columns(c, half, 2 * half)).collect();
        let args: Vec<&HostTensor> = lo.iter().chain(&hi).collect();
        let combined = eval_computation(body, &args)?;
        cols = combined
            .into_iter()
            .zip(&cols)
            .map(|(c, old)| {
                let carried = (width % 2 == 1).then_some(width - 1);
                with_column(&c, old, carried)
            })
            .collect::<Result<_>>()?;
        width = half + width % 2;
    }
    let kept_ty = |t: &HostTensor, shape: &[usize]| {
        TensorType::new(
            shape.iter().map(|&d| d as i64).collect::<Vec<i64>>(),
            t.elem_type(),
        )
    };
    let mut starts: Vec<HostTensor> = inits
        .iter()
        .map(|i| broadcast_in_dim(i, &[], &kept_ty(i, &[k])))
        .collect::<Result<_>>()?;
    if width == 1 {
        let last: Vec<HostTensor> = cols.iter().map(|c| columns(c, 0, 1)).collect();
        let args: Vec<&HostTensor> = starts.iter().chain(&last).collect();
        starts = eval_computation(body, &args)?;
    }
    starts
        .iter()
        .map(|t| reshape(t, &kept_ty(t, &out_shape)))
        .collect()
}

/// `x` with its axes in `order`, as a row-major `k × r` matrix.
fn as_matrix(x: &HostTensor, order: &[usize], k: usize, r: usize) -> Result<HostTensor> {
    Ok(crate::with_array!(x, a: T => {
        let m = a
            .view()
            .permuted_axes(IxDyn(order))
            .as_standard_layout()
            .into_owned()
            .into_shape_with_order(IxDyn(&[k, r]))
            .map_err(|e| KernelError::invalid(OP, format!("internal reshape: {e}")))?;
        T::wrap(m)
    }))
}

/// Columns `from..to` of a `k × r` matrix, flattened row-major (`k·(to-from)`
/// elements, so that the body sees one flat tensor per argument).
fn columns(m: &HostTensor, from: usize, to: usize) -> HostTensor {
    crate::with_array!(m, a: T => {
        let part = a.slice(s![.., from..to]);
        let n = part.len();
        T::wrap(
            part.as_standard_layout()
                .into_owned()
                .into_shape_with_order(IxDyn(&[n]))
                .unwrap_or_else(|_| unreachable!("a standard-layout array reshapes to its length")),
        )
    })
}

/// `c` (flat, `k·h` elements) as a `k × h` matrix, with column `carried`
/// of `old` (a `k × r` matrix) appended if given.
fn with_column(c: &HostTensor, old: &HostTensor, carried: Option<usize>) -> Result<HostTensor> {
    let k = old.shape()[0];
    let h = c.len() / k.max(1);
    let internal = |e: ndarray::ShapeError| KernelError::invalid(OP, format!("internal: {e}"));
    Ok(crate::with_array!(old, o: T => {
        let flat = T::array(c)
            .ok_or_else(|| KernelError::invalid(OP, "the body changed an element type"))?;
        let m = flat.view().into_shape_with_order((k, h)).map_err(internal)?;
        let joined = match carried {
            Some(col) => {
                let o = o.view().into_dimensionality::<Ix2>().map_err(internal)?;
                let last = o.slice(s![.., col..col + 1]);
                ndarray::concatenate(Axis(1), &[m, last]).map_err(internal)?
            }
            None => m.to_owned(),
        };
        T::wrap(joined.into_dyn())
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use meshrun_compiler::ir::{BinaryOp, ElemType};

    /// A plain loop of `f` over each row, starting from `init`.
    fn fold_rows(x: &[f32], k: usize, r: usize, init: f32, f: fn(f32, f32) -> f32) -> Vec<f32> {
        (0..k)
            .map(|i| x[i * r..(i + 1) * r].iter().fold(init, |a, &b| f(a, b)))
            .collect()
    }

    #[test]
    fn tree_reduction_equals_a_fold_for_every_width() {
        let max = Computation::per_input(BinaryOp::Maximum, &[ElemType::F32]);
        for r in 0..20usize {
            let k = 3;
            let data: Vec<f32> = (0..k * r)
                .map(|i| ((i * 7919) % 23) as f32 - 11.0)
                .collect();
            let x = HostTensor::from_vec(&[k, r], data.clone()).unwrap();
            let init = HostTensor::from_vec(&[], vec![-100.0f32]).unwrap();
            let got = reduce_with_body(&max, &[1], &[&x], &[&init]).unwrap();
            let want = fold_rows(&data, k, r, -100.0, f32::max);
            assert_eq!(got[0], HostTensor::from_vec(&[k], want).unwrap(), "r = {r}");
        }
    }

    #[test]
    fn two_inputs_leading_dims_and_reduce_all() {
        // Sum of floats and product of ints at once, over dims 0 and 2.
        let f = Computation::per_input(BinaryOp::Add, &[ElemType::F32, ElemType::F32]);
        let x = HostTensor::from_vec(&[2, 3, 2], (0..12).map(|i| i as f32).collect()).unwrap();
        let z = HostTensor::from_vec(&[], vec![0.0f32]).unwrap();
        let got = reduce_with_body(&f, &[0, 2], &[&x, &x], &[&z, &z]).unwrap();
        let want = HostTensor::from_vec(&[3], vec![14.0f32, 22.0, 30.0]).unwrap();
        assert_eq!(got, vec![want.clone(), want]);
        let all = reduce_with_body(&f, &[0, 1, 2], &[&x, &x], &[&z, &z]).unwrap();
        assert_eq!(all[0], HostTensor::from_vec(&[], vec![66.0f32]).unwrap());
        assert!(reduce_with_body(&f, &[3], &[&x, &x], &[&z, &z]).is_err());
        assert!(reduce_with_body(&f, &[0], &[&x], &[&z, &z]).is_err());
    }
}
