//! Comparing a sharded run's outputs with the unsharded reference (or with
//! JAX's), with one tolerance rule shared by the CLI, the tests and the
//! examples.
//!
//! Integer and boolean outputs must match exactly. Float outputs must
//! satisfy, element by element, `|got - want| <= rtol * (|want| + max|want|)`
//! with the max taken over the whole output (sums are ordered differently on
//! different shardings, so errors scale with the magnitude of the summands,
//! not of each result). `rtol` comes from the least precise float type in
//! the module: 1e-5 for f32/f64, 2e-3 for f16, 1.6e-2 for bf16. NaN matches
//! NaN; infinities must match exactly.

use meshrun_compiler::ir::{ElemType, Module};
use meshrun_kernels::{with_array, HostTensor};

/// The relative tolerance for outputs of `module`.
pub fn rtol_for(module: &Module) -> f64 {
    module
        .funcs
        .iter()
        .flat_map(|f| f.values.iter().map(|v| v.ty.elem))
        .fold(1e-5, |tol, e| tol.max(rtol_for_elem(e)))
}

/// The relative tolerance for one element type.
pub fn rtol_for_elem(e: ElemType) -> f64 {
    match e {
        ElemType::BF16 => 1.6e-2,
        ElemType::F16 => 2e-3,
        _ => 1e-5,
    }
}

/// How one output differs from the expected one.
#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    /// Largest `|got - want|` (infinite when a NaN or an infinity
    /// differs).
    pub max_abs: f64,
    /// Largest `|got - want| / (|want| + max|want|)`: the quantity the
    /// tolerance bounds.
    pub max_rel: f64,
    /// The first element outside the tolerance, if any.
    pub first_bad: Option<usize>,
}

impl Diff {
    pub fn within(&self) -> bool {
        self.first_bad.is_none()
    }
}

/// Compare `got` with `want` under `rtol`; an error when their types
/// differ.
pub fn compare(got: &HostTensor, want: &HostTensor, rtol: f64) -> Result<Diff, String> {
    if got.elem_type() != want.elem_type() || got.shape() != want.shape() {
        return Err(format!(
            "got {} but expected {}",
            got.tensor_type(),
            want.tensor_type()
        ));
    }
    let exact = !want.elem_type().is_float();
    let (g, w) = (got.to_f64_vec(), want.to_f64_vec());
    let scale = w
        .iter()
        .filter(|x| x.is_finite())
        .fold(0.0f64, |m, x| m.max(x.abs()));
    let mut diff = Diff {
        max_abs: 0.0,
        max_rel: 0.0,
        first_bad: None,
    };
    for (i, (&a, &b)) in g.iter().zip(&w).enumerate() {
        if a == b || (a.is_nan() && b.is_nan()) {
            continue;
        }
        let d = (a - b).abs();
        let d = if d.is_nan() { f64::INFINITY } else { d };
        let denom = b.abs() + scale;
        let rel = if denom > 0.0 {
            d / denom
        } else {
            f64::INFINITY
        };
        diff.max_abs = diff.max_abs.max(d);
        diff.max_rel = diff.max_rel.max(rel);
        let bad = exact || !a.is_finite() || !b.is_finite() || d > rtol * denom;
        if bad && diff.first_bad.is_none() {
            diff.first_bad = Some(i);
        }
    }
    // 64-bit integers that differ beyond f64's 53 bits compare equal above.
    if exact && diff.first_bad.is_none() && got != want {
        diff.first_bad = first_difference(got, want);
        diff.max_abs = f64::INFINITY;
    }
    Ok(diff)
}

/// The first element where two tensors of one type hold different bits.
fn first_difference(a: &HostTensor, b: &HostTensor) -> Option<usize> {
    with_array!(a, x: T => {
        let y = b.array::<T>()?;
        x.iter().zip(y.iter()).position(|(p, q)| p != q)
    })
}

/// A one-line description of the first mismatch of `got` against `want`,
/// or `None` when they match.
pub fn mismatch(got: &HostTensor, want: &HostTensor, rtol: f64) -> Option<String> {
    match compare(got, want, rtol) {
        Err(e) => Some(e),
        Ok(d) => d.first_bad.map(|i| {
            format!(
                "element {i}: got {} but expected {} (rtol {rtol}, max abs diff {:e}, max rel diff {:e})",
                got.to_f64_vec()[i],
                want.to_f64_vec()[i],
                d.max_abs,
                d.max_rel
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaled_tolerance_and_exact_ints() {
        let want = HostTensor::from_vec(&[3], vec![100.0f32, 1.0, 0.0]).unwrap();
        let near = HostTensor::from_vec(&[3], vec![100.0005f32, 1.0005, 0.0009]).unwrap();
        let d = compare(&near, &want, 1e-5).unwrap();
        assert!(d.within(), "{d:?}");
        assert!(d.max_abs > 8e-4 && d.max_abs < 1e-3, "{d:?}");
        let far = HostTensor::from_vec(&[3], vec![100.0f32, 1.0, 0.01]).unwrap();
        assert_eq!(compare(&far, &want, 1e-5).unwrap().first_bad, Some(2));
        let big = HostTensor::from_vec(&[2], vec![u64::MAX, 1]).unwrap();
        let near = HostTensor::from_vec(&[2], vec![u64::MAX - 1, 1]).unwrap();
        assert_eq!(compare(&near, &big, 1e-5).unwrap().first_bad, Some(0));
        assert!(compare(&big, &big, 1e-5).unwrap().within());
        let ints = HostTensor::from_vec(&[2], vec![1i32, 2]).unwrap();
        let off = HostTensor::from_vec(&[2], vec![1i32, 3]).unwrap();
        assert!(mismatch(&off, &ints, 1.0).is_some());
        assert!(mismatch(&want, &ints, 1.0)
            .unwrap()
            .contains("tensor<2xi32>"));
        let nan = HostTensor::from_vec(&[1], vec![f32::NAN]).unwrap();
        let one = HostTensor::from_vec(&[1], vec![1.0f32]).unwrap();
        assert!(compare(&nan, &nan, 1e-5).unwrap().within());
        assert!(!compare(&nan, &one, 1e-5).unwrap().within());
        let inf = HostTensor::from_vec(&[1], vec![f32::INFINITY]).unwrap();
        assert!(!compare(&one, &inf, 1e-5).unwrap().within());
        assert!(compare(&inf, &inf, 1e-5).unwrap().within());
    }
}
