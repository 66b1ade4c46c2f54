//! The device program's own local instructions on host tensors: `iota`
//! with a device offset, padding masks, per-device slices and remaps (see
//! `partition::Instr`). Each checks its indices first, so
//! a malformed instruction is an error, not a panic.

use meshrun_compiler::ir::{Scalar, TensorType};
use meshrun_compiler::partition::RemapEntry;
use meshrun_kernels::{with_array, HostElem, HostTensor};
use ndarray::Axis;

use super::alloc;
use crate::blocks::{copy_box, BoxCopy};

fn check_dim(x: &HostTensor, dim: usize) -> Result<usize, String> {
    x.shape()
        .get(dim)
        .copied()
        .ok_or_else(|| format!("dimension {dim} of a rank-{} block", x.shape().len()))
}

/// A tensor of `ty` whose element `k` along `dim` is `offset + k`.
pub fn iota(ty: &TensorType, dim: usize, offset: i64) -> Result<HostTensor, String> {
    let mut t = HostTensor::zeros(ty).map_err(|e| e.to_string())?;
    let n = check_dim(&t, dim)?;
    with_array!(&mut t, a: T => {
        for k in 0..n {
            let v = T::from_scalar(Scalar::Int(offset + k as i64));
            a.index_axis_mut(Axis(dim), k).fill(v);
        }
    });
    Ok(t)
}

/// `x` with every element whose index along `dim` is `>= valid` set to
/// `fill`.
pub fn mask(x: &HostTensor, dim: usize, valid: i64, fill: Scalar) -> Result<HostTensor, String> {
    let n = check_dim(x, dim)?;
    let from = usize::try_from(valid.max(0)).unwrap_or(usize::MAX).min(n);
    let mut t = alloc::block(x, x.shape(), false);
    let zero = vec![0; x.shape().len()];
    copy_box(
        &mut t,
        x,
        BoxCopy {
            dst_start: &zero,
            src_start: &zero,
            extent: x.shape(),
        },
    )?;
    with_array!(&mut t, a: T => {
        let v = T::from_scalar(fill);
        for k in from..n {
            a.index_axis_mut(Axis(dim), k).fill(v);
        }
    });
    Ok(t)
}

/// The `size` elements of `x` along `dim` from `start`.
pub fn slice_dim(x: &HostTensor, dim: usize, start: i64, size: i64) -> Result<HostTensor, String> {
    let n = check_dim(x, dim)?;
    let (Ok(s), Ok(len)) = (usize::try_from(start), usize::try_from(size)) else {
        return Err(format!("slice of {size} elements from {start}"));
    };
    if s.checked_add(len).is_none_or(|e| e > n) {
        return Err(format!(
            "elements {start}..{} along dimension {dim} of a block of {n}",
            start + size
        ));
    }
    let mut shape = x.shape().to_vec();
    shape[dim] = len;
    let mut out = alloc::block(x, &shape, false);
    let mut src_start = vec![0; shape.len()];
    src_start[dim] = s;
    copy_box(
        &mut out,
        x,
        BoxCopy {
            dst_start: &vec![0; shape.len()],
            src_start: &src_start,
            extent: &shape,
        },
    )?;
    Ok(out)
}

/// A tensor of `ty` whose slab `k` along `dim` is slab `index` of source
/// `source` (per `table[k]`), or `fill` (a scalar; zero when `None`).
/// Runs of consecutive indices of one source are copied as one box.
pub fn remap(
    sources: &[&HostTensor],
    fill: Option<&HostTensor>,
    ty: &TensorType,
    dim: usize,
    table: &[RemapEntry],
) -> Result<HostTensor, String> {
    // Every slab is copied or filled, except fills without a fill value,
    // which are zeros.
    let zeroed = fill.is_none() && table.contains(&RemapEntry::Fill);
    let shape = crate::cpu::collectives::dims(&ty.shape)?;
    let mut out = match sources.first() {
        Some(like) if like.elem_type() == ty.elem => alloc::block(like, &shape, zeroed),
        _ => HostTensor::zeros(ty).map_err(|e| e.to_string())?,
    };
    let n = check_dim(&out, dim)?;
    if table.len() != n {
        return Err(format!(
            "a remap table of {} entries for a dimension of {n}",
            table.len()
        ));
    }
    for (i, s) in sources.iter().enumerate() {
        let same = s.elem_type() == ty.elem
            && s.shape().len() == out.shape().len()
            && (0..s.shape().len()).all(|d| d == dim || s.shape()[d] == out.shape()[d]);
        if !same {
            return Err(format!(
                "source {i} is {} but the remap builds {ty} along dimension {dim}",
                s.tensor_type()
            ));
        }
    }
    if let Some(f) = fill {
        if !f.shape().is_empty() || f.elem_type() != ty.elem {
            return Err(format!(
                "the fill value is {}, not a scalar of {}",
                f.tensor_type(),
                ty.elem
            ));
        }
        let scalar = with_array!(f, a: T => a.iter().next().map(|x| x.to_scalar()))
            .unwrap_or(Scalar::Int(0));
        let fills: Vec<usize> = (0..n).filter(|&k| table[k] == RemapEntry::Fill).collect();
        with_array!(&mut out, a: T => {
            let v = T::from_scalar(scalar);
            for &k in &fills {
                a.index_axis_mut(Axis(dim), k).fill(v);
            }
        });
    }
    let mut k = 0;
    while k < n {
        let RemapEntry::Source { source, index } = table[k] else {
            k += 1;
            continue;
        };
        let src = sources
            .get(source as usize)
            .ok_or_else(|| format!("entry {k} names source {source} of {}", sources.len()))?;
        // Extend the run while the next entry continues it.
        let mut run = 1;
        while k + run < n
            && table[k + run]
                == (RemapEntry::Source {
                    source,
                    index: index + run as i64,
                })
        {
            run += 1;
        }
        let start = usize::try_from(index)
            .ok()
            .filter(|&i| i + run <= src.shape()[dim])
            .ok_or_else(|| {
                format!(
                    "entry {k} reads element {index} of source {source}, which has {}",
                    src.shape()[dim]
                )
            })?;
        let mut extent = out.shape().to_vec();
        extent[dim] = run;
        let mut dst_start = vec![0; extent.len()];
        dst_start[dim] = k;
        let mut src_start = vec![0; extent.len()];
        src_start[dim] = start;
        copy_box(
            &mut out,
            src,
            BoxCopy {
                dst_start: &dst_start,
                src_start: &src_start,
                extent: &extent,
            },
        )?;
        k += run;
    }
    Ok(out)
}

#[cfg(test)]
fn values(t: &HostTensor) -> Vec<f64> {
    t.to_f64_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use meshrun_compiler::ir::ElemType;

    #[test]
    fn iota_counts_from_the_offset() {
        let ty = TensorType::new(vec![2, 3], ElemType::F32);
        let t = iota(&ty, 1, 6).unwrap();
        assert_eq!(values(&t), vec![6.0, 7.0, 8.0, 6.0, 7.0, 8.0]);
        assert!(iota(&ty, 2, 0).is_err());
    }

    #[test]
    fn mask_sets_the_padding() {
        let x = HostTensor::from_vec(&[2, 3], vec![1.0f32; 6]).unwrap();
        let m = mask(&x, 1, 2, Scalar::Float(f64::NEG_INFINITY)).unwrap();
        let v = values(&m);
        assert_eq!(v[0..2], [1.0, 1.0]);
        assert_eq!(v[2], f64::NEG_INFINITY);
        assert_eq!(
            values(&mask(&x, 0, 5, Scalar::Float(0.0)).unwrap()),
            vec![1.0; 6]
        );
    }

    #[test]
    fn slice_dim_checks_its_range() {
        let x = HostTensor::from_vec(&[4], vec![1i32, 2, 3, 4]).unwrap();
        assert_eq!(values(&slice_dim(&x, 0, 1, 2).unwrap()), vec![2.0, 3.0]);
        assert!(slice_dim(&x, 0, 3, 2).is_err());
        assert!(slice_dim(&x, 0, -1, 2).is_err());
    }

    #[test]
    fn remap_picks_runs_and_fills() {
        let a = HostTensor::from_vec(&[3], vec![1.0f32, 2.0, 3.0]).unwrap();
        let b = HostTensor::from_vec(&[1], vec![9.0f32]).unwrap();
        let f = HostTensor::from_vec(&[], vec![-1.0f32]).unwrap();
        let ty = TensorType::new(vec![5], ElemType::F32);
        let table = [
            RemapEntry::Source {
                source: 0,
                index: 1,
            },
            RemapEntry::Source {
                source: 0,
                index: 2,
            },
            RemapEntry::Fill,
            RemapEntry::Source {
                source: 1,
                index: 0,
            },
            RemapEntry::Source {
                source: 0,
                index: 0,
            },
        ];
        let r = remap(&[&a, &b], Some(&f), &ty, 0, &table).unwrap();
        assert_eq!(values(&r), vec![2.0, 3.0, -1.0, 9.0, 1.0]);
        let bad = [RemapEntry::Source {
            source: 1,
            index: 3,
        }; 5];
        assert!(remap(&[&a, &b], None, &ty, 0, &bad).is_err());
    }
}
