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
//!
//! A fixed `rtol` cannot tell rounding from a bug on an ill-conditioned
//! program (a deep tanh MLP: the unsharded f32 run is itself 5e-4 away from
//! the exact result). So a float output the rule rejects is judged again
//! against the program computed in f64 ([`crate::wide_reference`]): it
//! passes when its error is at most [`F64_ERROR_FACTOR`] times the
//! unsharded f32 run's own error plus `rtol` (both errors measured as
//! above, against the f64 values). A wrong collective is off by far more.

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
    /// The errors against the f64 reference, when it was consulted.
    pub against_f64: Option<AgainstF64>,
}

/// A sharded and the unsharded f32 result, each measured against the
/// program computed in f64 (largest `|x - r| / (|r| + max|r|)`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AgainstF64 {
    pub sharded: f64,
    pub unsharded: f64,
}

/// How much farther from the f64 result than the unsharded run a sharded
/// run may be. Reordered sums of n terms err by O(n·eps) either way; 4x
/// leaves room for a different (not worse) order without hiding a wrong
/// block, which errs by the size of the values themselves.
pub const F64_ERROR_FACTOR: f64 = 4.0;

impl AgainstF64 {
    pub fn within(&self, rtol: f64) -> bool {
        self.sharded <= F64_ERROR_FACTOR * self.unsharded + rtol
    }
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
    let mut diff = diff_of(&got.to_f64_vec(), &want.to_f64_vec(), exact, rtol);
    // 64-bit integers that differ beyond f64's 53 bits compare equal above.
    if exact && diff.first_bad.is_none() && got != want {
        diff.first_bad = first_difference(got, want);
        diff.max_abs = f64::INFINITY;
    }
    Ok(diff)
}

/// The element-wise rule on values as f64: the largest absolute and
/// relative (`/ (|w| + max|w|)`) differences, and the first element
/// outside `rtol` (any difference when `exact`). NaN matches NaN; any other
/// non-finite difference is infinite.
fn diff_of(g: &[f64], w: &[f64], exact: bool, rtol: f64) -> Diff {
    let scale = w
        .iter()
        .filter(|x| x.is_finite())
        .fold(0.0f64, |m, x| m.max(x.abs()));
    let mut diff = Diff {
        max_abs: 0.0,
        max_rel: 0.0,
        first_bad: None,
        against_f64: None,
    };
    for (i, (&a, &b)) in g.iter().zip(w).enumerate() {
        if a == b || (a.is_nan() && b.is_nan()) {
            continue;
        }
        let d = (a - b).abs();
        let d = if d.is_nan() { f64::INFINITY } else { d };
        let denom = b.abs() + scale;
        let rel = if denom > 0.0 && d.is_finite() {
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
    diff
}

/// The largest `|x - r| / (|r| + max|r|)` of `x` against the f64 values
/// `wide` (same shape): [`compare`]'s `max_rel` across element types.
pub fn error_against(x: &HostTensor, wide: &HostTensor) -> Result<f64, String> {
    if x.shape() != wide.shape() {
        return Err(format!(
            "a result of shape {:?} against an f64 reference of shape {:?}",
            x.shape(),
            wide.shape()
        ));
    }
    Ok(diff_of(&x.to_f64_vec(), &wide.to_f64_vec(), false, f64::INFINITY).max_rel)
}

/// Judge `got` (a float output the rule rejected, `diff` its comparison
/// with `unsharded`) again against `wide`, the program's output computed
/// in f64: it passes when it is at most [`F64_ERROR_FACTOR`] times as far
/// from `wide` as `unsharded` is, plus `rtol`. Records both errors.
pub fn judge_against_f64(
    diff: &mut Diff,
    got: &HostTensor,
    unsharded: &HostTensor,
    wide: &HostTensor,
    rtol: f64,
) -> Result<(), String> {
    if !got.elem_type().is_float() {
        return Ok(());
    }
    let errors = AgainstF64 {
        sharded: error_against(got, wide)?,
        unsharded: error_against(unsharded, wide)?,
    };
    if errors.within(rtol) {
        diff.first_bad = None;
    }
    diff.against_f64 = Some(errors);
    Ok(())
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
        Ok(d) => describe(&d, got, want, rtol),
    }
}

/// What `d` (`got` compared with `want` under `rtol`) says, in one line,
/// when it is a mismatch; with the errors against f64 when they were
/// consulted.
pub fn describe(d: &Diff, got: &HostTensor, want: &HostTensor, rtol: f64) -> Option<String> {
    let i = d.first_bad?;
    let mut line = format!(
        "element {i}: got {} but expected {} (rtol {rtol}, max abs diff {:e}, max rel diff {:e})",
        got.to_f64_vec()[i],
        want.to_f64_vec()[i],
        d.max_abs,
        d.max_rel
    );
    if let Some(e) = d.against_f64 {
        line.push_str(&format!(
            "; against f64: sharded error {:e} > {F64_ERROR_FACTOR} x unsharded error {:e} + {rtol}",
            e.sharded, e.unsharded
        ));
    }
    Some(line)
}

/// Every output of a sharded run compared with the unsharded run's.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    /// One per output.
    pub diffs: Vec<Diff>,
    /// Why the f64 reference could not be computed, when it was needed.
    pub f64_unavailable: Option<String>,
}

impl Judged {
    /// The first output outside the rule and its one-line description.
    pub fn first_failure(
        &self,
        got: &[HostTensor],
        unsharded: &[HostTensor],
        rtol: f64,
    ) -> Option<(usize, String)> {
        let (k, d) = self.diffs.iter().enumerate().find(|(_, d)| !d.within())?;
        let mut line = describe(d, &got[k], &unsharded[k], rtol)?;
        if let Some(why) = &self.f64_unavailable {
            line.push_str(&format!("; no f64 reference: {why}"));
        }
        Some((k, line))
    }
}

/// Compare each of `got` with `unsharded` under `rtol`; when a float output
/// is over it, call `wide` once (the program computed in f64, see
/// `crate::wide_reference`) and judge those outputs again against it
/// ([`judge_against_f64`]). The rule of `run --check`, the differential
/// test and the fuzzer.
pub fn compare_outputs(
    got: &[HostTensor],
    unsharded: &[HostTensor],
    rtol: f64,
    wide: impl FnOnce() -> Result<Vec<HostTensor>, String>,
) -> Result<Judged, String> {
    if got.len() != unsharded.len() {
        return Err(format!(
            "the sharded run gave {} outputs, the unsharded one {}",
            got.len(),
            unsharded.len()
        ));
    }
    let mut diffs = got
        .iter()
        .zip(unsharded)
        .enumerate()
        .map(|(k, (g, w))| compare(g, w, rtol).map_err(|e| format!("output {k}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let rejected = |d: &Diff, t: &HostTensor| !d.within() && t.elem_type().is_float();
    let mut f64_unavailable = None;
    if diffs.iter().zip(got).any(|(d, t)| rejected(d, t)) {
        match wide() {
            Err(why) => f64_unavailable = Some(why),
            Ok(wide) => {
                for (k, d) in diffs.iter_mut().enumerate() {
                    if rejected(d, &got[k]) {
                        let w = wide
                            .get(k)
                            .ok_or_else(|| format!("the f64 run has no output {k}"))?;
                        judge_against_f64(d, &got[k], &unsharded[k], w, rtol)
                            .map_err(|e| format!("output {k}: {e}"))?;
                    }
                }
            }
        }
    }
    Ok(Judged {
        diffs,
        f64_unavailable,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32]) -> HostTensor {
        HostTensor::from_vec(&[v.len()], v.to_vec()).unwrap()
    }

    fn f64s(v: &[f64]) -> HostTensor {
        HostTensor::from_vec(&[v.len()], v.to_vec()).unwrap()
    }

    #[test]
    fn rounding_within_the_unsharded_error_passes_a_wrong_value_does_not() {
        // The exact result 1.0; the unsharded f32 run is 1e-3 off (an
        // ill-conditioned sum), the sharded one 2e-3 off the other way.
        let wide = f64s(&[1.0, 2.0]);
        let unsharded = f32s(&[1.001, 2.0]);
        let sharded = f32s(&[0.999, 2.0]);
        let mut d = compare(&sharded, &unsharded, 1e-5).unwrap();
        assert!(!d.within(), "the plain rule rejects it: {d:?}");
        judge_against_f64(&mut d, &sharded, &unsharded, &wide, 1e-5).unwrap();
        assert!(d.within(), "{d:?}");
        let e = d.against_f64.unwrap();
        assert!((e.unsharded - 1e-3 / 3.0).abs() < 1e-6, "{e:?}");
        let (got, unsharded) = (vec![sharded], vec![unsharded]);
        let calls = std::cell::Cell::new(0);
        let wide_once = || {
            calls.set(calls.get() + 1);
            Ok(vec![wide.clone()])
        };
        let j = compare_outputs(&got, &unsharded, 1e-5, wide_once).unwrap();
        assert_eq!(j.first_failure(&got, &unsharded, 1e-5), None);
        assert_eq!(calls.get(), 1);
        // A wrong element is far outside 4x the unsharded error.
        let wrong = vec![f32s(&[1.0, 2.5])];
        let j = compare_outputs(&wrong, &unsharded, 1e-5, || Ok(vec![wide.clone()])).unwrap();
        let (k, m) = j.first_failure(&wrong, &unsharded, 1e-5).unwrap();
        assert_eq!(k, 0);
        assert!(m.contains("against f64"), "{m}");
        // Without an f64 reference the plain rule stands, and says why.
        let j = compare_outputs(&got, &unsharded, 1e-5, || Err("bit casts".into())).unwrap();
        let (_, m) = j.first_failure(&got, &unsharded, 1e-5).unwrap();
        assert!(m.contains("no f64 reference: bit casts"), "{m}");
        // Outputs within the plain rule never compute the f64 reference.
        let j = compare_outputs(&unsharded, &unsharded, 1e-5, || panic!("not needed")).unwrap();
        assert!(j.diffs.iter().all(Diff::within));
        let [sharded] = <[HostTensor; 1]>::try_from(got).unwrap();
        // An exact unsharded run leaves only `rtol`.
        let exact = f32s(&[1.0, 2.0]);
        let mut d = compare(&sharded, &exact, 1e-5).unwrap();
        judge_against_f64(&mut d, &sharded, &exact, &wide, 1e-5).unwrap();
        assert!(!d.within(), "{d:?}");
    }

    #[test]
    fn errors_against_f64_count_non_finite_differences() {
        let wide = f64s(&[f64::NAN, f64::INFINITY, 1.0]);
        assert_eq!(
            error_against(&f32s(&[f32::NAN, f32::INFINITY, 1.0]), &wide),
            Ok(0.0)
        );
        assert_eq!(
            error_against(&f32s(&[1.0, f32::INFINITY, 1.0]), &wide),
            Ok(f64::INFINITY)
        );
        assert!(error_against(&f32s(&[1.0]), &wide).is_err());
    }

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
