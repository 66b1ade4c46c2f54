//! `dynamic_slice` and `dynamic_update_slice`: a block at run-time start
//! indices, each start clamped so the block stays inside the operand
//! (StableHLO spec: `clamp(0, start, dim - size)`).

use ndarray::{ArrayD, Slice};

use crate::cpu::gather::index_values;
use crate::cpu::map::into_standard;
use crate::error::{KernelError, Result};
use crate::tensor::{HostElem, HostTensor};

const DS: &str = "stablehlo.dynamic_slice";
const DUS: &str = "stablehlo.dynamic_update_slice";

/// The clamped start of a `sizes` block inside `shape`, from one scalar
/// index tensor per dim (`op` names the op in errors). The CUDA device
/// places its copies with it too.
pub fn clamped_starts(
    op: &str,
    shape: &[usize],
    sizes: &[usize],
    starts: &[&HostTensor],
) -> Result<Vec<usize>> {
    if starts.len() != shape.len() || sizes.len() != shape.len() {
        return Err(KernelError::invalid(
            op,
            format!(
                "{} start indices and {} sizes for an operand of rank {}",
                starts.len(),
                sizes.len(),
                shape.len()
            ),
        ));
    }
    let mut out = Vec::with_capacity(shape.len());
    for (d, ((&dim, &size), s)) in shape.iter().zip(sizes).zip(starts).enumerate() {
        let v = index_values(op, "start indices", s)?;
        let [start] = v.as_slice() else {
            return Err(KernelError::invalid(
                op,
                format!("start index {d} must be a scalar, got {} values", v.len()),
            ));
        };
        if size > dim {
            return Err(KernelError::invalid(
                op,
                format!("size {size} of dimension {d} exceeds its extent {dim}"),
            ));
        }
        out.push((*start).clamp(0, (dim - size) as i64) as usize);
    }
    Ok(out)
}

/// `dynamic_slice(operand, starts...)` with `slice_sizes`.
pub fn dynamic_slice(
    operand: &HostTensor,
    starts: &[&HostTensor],
    slice_sizes: &[i64],
) -> Result<HostTensor> {
    let sizes: Vec<usize> = slice_sizes
        .iter()
        .map(|&s| usize::try_from(s).map_err(|_| KernelError::invalid(DS, "negative slice size")))
        .collect::<Result<_>>()?;
    let at = clamped_starts(DS, operand.shape(), &sizes, starts)?;
    crate::with_array!(operand, a: T => {
        let v = a.slice_each_axis(|ax| {
            let d = ax.axis.index();
            Slice::from(at[d]..at[d] + sizes[d])
        });
        Ok(T::wrap(crate::cpu::permute::to_row_major(v)))
    })
}

/// `dynamic_update_slice(operand, update, starts...)`.
pub fn dynamic_update_slice(
    operand: &HostTensor,
    update: &HostTensor,
    starts: &[&HostTensor],
) -> Result<HostTensor> {
    dynamic_update_slice_into(operand.clone(), update, starts)
}

/// [`dynamic_update_slice`] writing into `operand` itself (its owner hands
/// it over: the operand's last use), without first copying it.
pub fn dynamic_update_slice_into(
    operand: HostTensor,
    update: &HostTensor,
    starts: &[&HostTensor],
) -> Result<HostTensor> {
    if update.shape().len() != operand.shape().len() {
        return Err(KernelError::invalid(
            DUS,
            format!(
                "update has rank {} but the operand has rank {}",
                update.shape().len(),
                operand.shape().len()
            ),
        ));
    }
    let at = clamped_starts(DUS, operand.shape(), update.shape(), starts)?;
    let operand_ty = operand.elem_type();
    let mismatch = || {
        KernelError::invalid(
            DUS,
            format!(
                "update is {} but the operand is {operand_ty}",
                update.elem_type(),
            ),
        )
    };
    crate::with_array!(operand, a: T => {
        let u = T::array(update).ok_or_else(mismatch)?;
        Ok(T::wrap(update_block(a, u, &at)))
    })
}

fn update_block<T: HostElem>(a: ArrayD<T>, u: &ArrayD<T>, at: &[usize]) -> ArrayD<T> {
    let mut out = into_standard(a);
    let shape = u.shape().to_vec();
    out.slice_each_axis_mut(|ax| {
        let d = ax.axis.index();
        Slice::from(at[d]..at[d] + shape[d])
    })
    .assign(u);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i32s(shape: &[usize], v: &[i32]) -> HostTensor {
        HostTensor::from_vec(shape, v.to_vec()).unwrap()
    }

    fn scalar(v: i64) -> HostTensor {
        HostTensor::from_vec(&[], vec![v]).unwrap()
    }

    #[test]
    fn spec_examples_clamp_the_start() {
        let x = i32s(&[4, 4], &[0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
        let (a, b) = (scalar(-1), scalar(3));
        let got = dynamic_slice(&x, &[&a, &b], &[2, 2]).unwrap();
        assert_eq!(got, i32s(&[2, 2], &[1, 1, 1, 1]));
        let y = i32s(&[4, 4], &[1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
        let u = i32s(&[2, 2], &[1, 1, 1, 1]);
        let got = dynamic_update_slice(&y, &u, &[&a, &b]).unwrap();
        assert_eq!(got, i32s(&[4, 4], &[1; 16]));
    }

    #[test]
    fn bad_starts_are_errors() {
        let x = i32s(&[2, 2], &[1, 2, 3, 4]);
        let s = scalar(0);
        let err = dynamic_slice(&x, &[&s], &[1, 1]).unwrap_err();
        assert!(err.to_string().contains("1 start indices"), "{err}");
        let v = HostTensor::from_vec(&[2], vec![0i64, 1]).unwrap();
        let err = dynamic_slice(&x, &[&s, &v], &[1, 1]).unwrap_err();
        assert!(err.to_string().contains("must be a scalar"), "{err}");
        let err = dynamic_slice(&x, &[&s, &s], &[3, 1]).unwrap_err();
        assert!(err.to_string().contains("exceeds"), "{err}");
    }
}
