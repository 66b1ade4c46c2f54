//! Element-wise kernels: unary and binary ops, compare, select, clamp.
//!
//! Semantics follow StableHLO as XLA's CPU backend implements it: float
//! `maximum`/`minimum` propagate NaN, `remainder` has the dividend's sign,
//! integer arithmetic wraps, integer division by zero gives -1 and remainder
//! by zero gives the dividend, and f16/bf16 are computed in f32 and rounded.

use meshrun_compiler::ir::{BinaryOp, CompareDirection, CompareType, UnaryOp};
use ndarray::ArrayD;

use crate::cpu::map::{map, zip_map};
use crate::cpu::real::{max_nan, min_nan, HalfFloat, Real};
use crate::cpu::{int, special, vmath};
use crate::error::{KernelError, Result};
use crate::tensor::{HostElem, HostTensor};

pub(crate) use crate::cpu::int::Int;

fn unary_name(op: UnaryOp) -> String {
    op.full_name()
}

fn binary_name(op: BinaryOp) -> String {
    op.full_name()
}

/// Check that two operands have one shape; name them in the error.
pub(crate) fn same_shape(op: &str, what: [&str; 2], a: &[usize], b: &[usize]) -> Result<()> {
    if a == b {
        Ok(())
    } else {
        Err(KernelError::invalid(
            op,
            format!(
                "{} has shape {a:?} but {} has shape {b:?}",
                what[0], what[1]
            ),
        ))
    }
}

fn type_mismatch(op: &str, a: &HostTensor, b: &HostTensor) -> KernelError {
    KernelError::invalid(
        op,
        format!(
            "operands have different element types ({} and {})",
            a.elem_type(),
            b.elem_type()
        ),
    )
}

/// Run a f32 kernel on a 16-bit float array: widen, compute, round back.
fn via_f32<H: HalfFloat>(
    a: &ArrayD<H>,
    f: impl FnOnce(&ArrayD<f32>) -> Result<ArrayD<f32>>,
) -> Result<ArrayD<H>> {
    let wide = f(&map(a, H::widen))?;
    Ok(map(&wide, H::narrow))
}

fn via_f32_2<H: HalfFloat>(
    a: &ArrayD<H>,
    b: &ArrayD<H>,
    f: impl FnOnce(&ArrayD<f32>, &ArrayD<f32>) -> Result<ArrayD<f32>>,
) -> Result<ArrayD<H>> {
    let wide = f(&map(a, H::widen), &map(b, H::widen))?;
    Ok(map(&wide, H::narrow))
}

// ---------------------------------------------------------------- unary

/// `stablehlo.<op>` of one operand.
pub fn unary(op: UnaryOp, x: &HostTensor) -> Result<HostTensor> {
    if op == UnaryOp::IsFinite {
        return is_finite(x);
    }
    Ok(match x {
        HostTensor::F64(a) => HostTensor::F64(unary_real(op, a)?),
        HostTensor::F32(a) => HostTensor::F32(unary_f32(op, a)?),
        HostTensor::F16(a) => HostTensor::F16(via_f32(a, |w| unary_f32(op, w))?),
        HostTensor::BF16(a) => HostTensor::BF16(via_f32(a, |w| unary_f32(op, w))?),
        HostTensor::Pred(a) => match op {
            UnaryOp::Not => HostTensor::Pred(map(a, |v| !v)),
            _ => return Err(KernelError::unsupported(&unary_name(op), x.elem_type())),
        },
        ints => {
            return int::unary(op, ints).unwrap_or_else(|| {
                Err(KernelError::unsupported(&unary_name(op), ints.elem_type()))
            })
        }
    })
}

fn is_finite(x: &HostTensor) -> Result<HostTensor> {
    let name = unary_name(UnaryOp::IsFinite);
    if !x.elem_type().is_float() {
        return Err(KernelError::unsupported(&name, x.elem_type()));
    }
    Ok(HostTensor::Pred(crate::with_array!(x, a: T => {
        map(a, |v| v.to_f64().is_finite())
    })))
}

fn sign<F: Real>(x: F) -> F {
    if x.is_nan() || x == F::zero() {
        x
    } else {
        x.signum()
    }
}

/// f32 through the vectorized functions ([`vmath`]) where there is one.
fn unary_f32(op: UnaryOp, a: &ArrayD<f32>) -> Result<ArrayD<f32>> {
    match vmath::unary_array(op, a).or_else(|| vmath::unary_arith_array(op, a)) {
        Some(r) => Ok(r),
        None => unary_real(op, a),
    }
}

fn unary_real<F: Real>(op: UnaryOp, a: &ArrayD<F>) -> Result<ArrayD<F>> {
    use UnaryOp as U;
    let one = F::one();
    Ok(match op {
        U::Negate => map(a, |x| -x),
        U::Exp => map(a, F::exp),
        U::Expm1 => map(a, F::exp_m1),
        U::Log => map(a, F::ln),
        U::Log1p => map(a, F::ln_1p),
        U::Tanh => map(a, F::tanh),
        U::Sine => map(a, F::sin),
        U::Cosine => map(a, F::cos),
        U::Tan => map(a, F::tan),
        U::Logistic => map(a, |x| one / (one + (-x).exp())),
        U::Sqrt => map(a, F::sqrt),
        U::Rsqrt => map(a, |x| one / x.sqrt()),
        U::Cbrt => map(a, F::cbrt),
        U::Abs => map(a, F::abs),
        U::Square => map(a, |x| x * x),
        U::Sign => map(a, sign),
        U::Floor => map(a, F::floor),
        U::Ceil => map(a, F::ceil),
        U::RoundNearestEven => map(a, F::round_even),
        U::RoundNearestAfz => map(a, F::round),
        // CHLO's special functions; integer-only ops are errors there.
        _ => return special::unary_real(op, a),
    })
}

// ---------------------------------------------------------------- binary

/// `stablehlo.<op>` of two operands of one type and shape.
pub fn binary(op: BinaryOp, x: &HostTensor, y: &HostTensor) -> Result<HostTensor> {
    let name = binary_name(op);
    same_shape(&name, ["lhs", "rhs"], x.shape(), y.shape())?;
    if op == BinaryOp::NextAfter {
        // Steps through the bits of the element type itself.
        return special::next_after(x, y);
    }
    Ok(match (x, y) {
        (HostTensor::F64(a), HostTensor::F64(b)) => HostTensor::F64(binary_real(op, a, b)?),
        (HostTensor::F32(a), HostTensor::F32(b)) => HostTensor::F32(binary_f32(op, a, b)?),
        (HostTensor::F16(a), HostTensor::F16(b)) => {
            HostTensor::F16(via_f32_2(a, b, |p, q| binary_f32(op, p, q))?)
        }
        (HostTensor::BF16(a), HostTensor::BF16(b)) => {
            HostTensor::BF16(via_f32_2(a, b, |p, q| binary_f32(op, p, q))?)
        }
        (HostTensor::Pred(a), HostTensor::Pred(b)) => HostTensor::Pred(binary_bool(op, a, b)?),
        _ => return int::binary(op, x, y).unwrap_or_else(|| Err(type_mismatch(&name, x, y))),
    })
}

/// f32 `power` through [`vmath::pow`]; the rest as for any float.
fn binary_f32(op: BinaryOp, a: &ArrayD<f32>, b: &ArrayD<f32>) -> Result<ArrayD<f32>> {
    if let Some(r) = vmath::binary_arith_array(op, a, b) {
        return Ok(r);
    }
    match op {
        BinaryOp::Power => Ok(vmath::pow_array(a, b)),
        _ => binary_real(op, a, b),
    }
}

fn binary_real<F: Real>(op: BinaryOp, a: &ArrayD<F>, b: &ArrayD<F>) -> Result<ArrayD<F>> {
    use BinaryOp as B;
    Ok(match op {
        B::Add => zip_map(a, b, |x, y| x + y),
        B::Subtract => zip_map(a, b, |x, y| x - y),
        B::Multiply => zip_map(a, b, |x, y| x * y),
        B::Divide => zip_map(a, b, |x, y| x / y),
        B::Remainder => zip_map(a, b, |x, y| x % y),
        B::Maximum => zip_map(a, b, max_nan),
        B::Minimum => zip_map(a, b, min_nan),
        B::Power => zip_map(a, b, F::powf),
        B::Atan2 => zip_map(a, b, F::atan2),
        // CHLO's special functions; integer-only ops are errors there.
        _ => return special::binary_real(op, a, b),
    })
}

fn binary_bool(op: BinaryOp, a: &ArrayD<bool>, b: &ArrayD<bool>) -> Result<ArrayD<bool>> {
    use BinaryOp as B;
    Ok(match op {
        B::And | B::Minimum | B::Multiply => zip_map(a, b, |x, y| x & y),
        B::Or | B::Maximum | B::Add => zip_map(a, b, |x, y| x | y),
        B::Xor => zip_map(a, b, |x, y| x ^ y),
        _ => return Err(KernelError::unsupported(&binary_name(op), bool::ELEM)),
    })
}

// ---------------------------------------------------------------- compare

/// `stablehlo.compare`: an i1 tensor. Floats compare as IEEE values
/// (NaN is unordered) unless `compare_type` is `TOTALORDER`.
pub fn compare(
    direction: CompareDirection,
    compare_type: Option<CompareType>,
    x: &HostTensor,
    y: &HostTensor,
) -> Result<HostTensor> {
    let name = "stablehlo.compare";
    same_shape(name, ["lhs", "rhs"], x.shape(), y.shape())?;
    if x.elem_type() != y.elem_type() {
        return Err(type_mismatch(name, x, y));
    }
    let total = compare_type == Some(CompareType::TotalOrder) && x.elem_type().is_float();
    let result = crate::with_array!(x, a: T => {
        let b = T::array(y).ok_or_else(|| type_mismatch(name, x, y))?;
        if total {
            zip_map(a, b, |p, q| {
                ordering_holds(direction, Some(p.to_f64().total_cmp(&q.to_f64())))
            })
        } else {
            zip_map(a, b, |p, q| ordering_holds(direction, p.partial_cmp(&q)))
        }
    });
    Ok(HostTensor::Pred(result))
}

/// Whether `direction` holds given the operands' ordering (`None` when
/// unordered, i.e. a NaN is involved, where only NE holds).
fn ordering_holds(direction: CompareDirection, ord: Option<std::cmp::Ordering>) -> bool {
    use std::cmp::Ordering::{Equal, Greater, Less};
    use CompareDirection as D;
    match (direction, ord) {
        (D::Ne, None) => true,
        (_, None) => false,
        (D::Eq, Some(o)) => o == Equal,
        (D::Ne, Some(o)) => o != Equal,
        (D::Lt, Some(o)) => o == Less,
        (D::Le, Some(o)) => o != Greater,
        (D::Gt, Some(o)) => o == Greater,
        (D::Ge, Some(o)) => o != Less,
    }
}

// ---------------------------------------------------------------- select, clamp

/// `stablehlo.select(pred, on_true, on_false)`; `pred` is a scalar or has the
/// operands' shape.
pub fn select(
    pred: &HostTensor,
    on_true: &HostTensor,
    on_false: &HostTensor,
) -> Result<HostTensor> {
    let name = "stablehlo.select";
    let HostTensor::Pred(p) = pred else {
        return Err(KernelError::invalid(
            name,
            format!("pred must be i1, got {}", pred.elem_type()),
        ));
    };
    same_shape(
        name,
        ["on_true", "on_false"],
        on_true.shape(),
        on_false.shape(),
    )?;
    if p.ndim() != 0 {
        same_shape(name, ["pred", "on_true"], p.shape(), on_true.shape())?;
    }
    crate::with_array!(on_true, t: T => {
        let f = T::array(on_false).ok_or_else(|| type_mismatch(name, on_true, on_false))?;
        let chosen = match p.ndim() {
            0 => {
                let pick = p.iter().next().copied().unwrap_or(false);
                if pick { t.clone() } else { f.clone() }
            }
            _ => match (p.as_slice(), t.as_slice(), f.as_slice()) {
                // Row-major operands (what the kernels make): one loop
                // over the three slices into a pooled block, which the
                // compiler vectorizes as a blend.
                (Some(c), Some(x), Some(y)) => {
                    let mut out = crate::cpu::alloc::array::<T>(t.shape());
                    let Some(o) = out.as_slice_mut() else {
                        unreachable!("alloc::array is row-major")
                    };
                    let n = o.len();
                    let (c, x, y) = (&c[..n], &x[..n], &y[..n]);
                    for i in 0..n {
                        // A select, not a branch (a mask is no pattern).
                        o[i] = std::hint::select_unpredictable(c[i], x[i], y[i]);
                    }
                    out
                }
                _ => ndarray::Zip::from(p)
                    .and(t)
                    .and(f)
                    .map_collect(|&c, &x, &y| if c { x } else { y }),
            },
        };
        Ok(T::wrap(chosen))
    })
}

/// `min(max(v, lo), hi)` by comparisons, so that a NaN `v` stays NaN.
fn clamp_one<T: PartialOrd>(lo: T, v: T, hi: T) -> T {
    let v = if v < lo { lo } else { v };
    if v > hi {
        hi
    } else {
        v
    }
}

/// `stablehlo.clamp(min, operand, max)`; `min` and `max` are scalars or have
/// the operand's shape. NaN operands stay NaN.
pub fn clamp(lo: &HostTensor, x: &HostTensor, hi: &HostTensor) -> Result<HostTensor> {
    let name = "stablehlo.clamp";
    for (what, bound) in [("min", lo), ("max", hi)] {
        if bound.elem_type() != x.elem_type() {
            return Err(type_mismatch(name, bound, x));
        }
        if !bound.shape().is_empty() {
            same_shape(name, [what, "operand"], bound.shape(), x.shape())?;
        }
    }
    crate::with_array!(x, a: T => {
        let lo = T::array(lo).ok_or_else(|| type_mismatch(name, lo, x))?;
        let hi = T::array(hi).ok_or_else(|| type_mismatch(name, hi, x))?;
        let shape = a.raw_dim();
        let (Some(lo), Some(hi)) = (lo.broadcast(shape.clone()), hi.broadcast(shape)) else {
            return Err(KernelError::invalid(name, "min/max do not broadcast to the operand"));
        };
        let out = ndarray::Zip::from(a).and(lo).and(hi).map_collect(|&v, &l, &h| clamp_one(l, v, h));
        Ok(T::wrap(out))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    fn f32s(shape: &[usize], v: &[f32]) -> HostTensor {
        HostTensor::from_vec(shape, v.to_vec()).unwrap()
    }
    fn i32s(v: &[i32]) -> HostTensor {
        HostTensor::from_vec(&[v.len()], v.to_vec()).unwrap()
    }
    fn preds(v: &[bool]) -> HostTensor {
        HostTensor::from_vec(&[v.len()], v.to_vec()).unwrap()
    }

    /// The op table's `zero_to_zero` fact (the partitioner skips masking
    /// zero padding through those ops) holds for the kernels: zeros of
    /// every type the op accepts map to zero.
    #[test]
    fn ops_marked_zero_to_zero_map_zeros_to_zero() {
        let zeros = [
            f32s(&[2], &[0.0, -0.0]),
            HostTensor::from_vec(&[2], vec![0.0f64, 0.0]).unwrap(),
            i32s(&[0, 0]),
            preds(&[false, false]),
        ];
        let is_zero = |t: &HostTensor| t.to_f64_vec().iter().all(|&v| v == 0.0);
        let mut checked = 0;
        for op in UnaryOp::ALL.iter().filter(|u| u.maps_zero_to_zero()) {
            for z in zeros.iter().filter(|z| op.class().allows(z.elem_type())) {
                let got = unary(*op, z).unwrap();
                assert!(is_zero(&got), "{op:?} on {:?}: {got:?}", z.elem_type());
                checked += 1;
            }
        }
        for op in BinaryOp::ALL.iter().filter(|b| b.maps_zero_to_zero()) {
            for z in zeros.iter().filter(|z| op.class().allows(z.elem_type())) {
                let got = binary(*op, z, z).unwrap();
                assert!(is_zero(&got), "{op:?} on {:?}: {got:?}", z.elem_type());
                checked += 1;
            }
        }
        assert!(checked > 60, "only {checked} (op, type) pairs checked");
    }

    #[test]
    fn float_unary_ops() {
        let x = f32s(&[4], &[-2.5, -0.5, 0.5, 4.0]);
        let cases: &[(UnaryOp, [f32; 4])] = &[
            (UnaryOp::Negate, [2.5, 0.5, -0.5, -4.0]),
            (UnaryOp::Abs, [2.5, 0.5, 0.5, 4.0]),
            (UnaryOp::Sign, [-1.0, -1.0, 1.0, 1.0]),
            (UnaryOp::Floor, [-3.0, -1.0, 0.0, 4.0]),
            (UnaryOp::Ceil, [-2.0, -0.0, 1.0, 4.0]),
            (UnaryOp::RoundNearestEven, [-2.0, -0.0, 0.0, 4.0]),
            (UnaryOp::RoundNearestAfz, [-3.0, -1.0, 1.0, 4.0]),
        ];
        for (op, want) in cases {
            assert_eq!(unary(*op, &x).unwrap(), f32s(&[4], want), "{op:?}");
        }
        let y = f32s(&[3], &[0.0, 1.0, 4.0]);
        let close = |op, want: [f64; 3]| {
            let got = unary(op, &y).unwrap().to_f64_vec();
            for (g, w) in got.iter().zip(want) {
                assert!(
                    (g - w).abs() < 1e-6 * w.abs().max(1.0),
                    "{op:?}: {g} vs {w}"
                );
            }
        };
        close(UnaryOp::Exp, [1.0, 1f64.exp(), 4f64.exp()]);
        close(UnaryOp::Sqrt, [0.0, 1.0, 2.0]);
        close(
            UnaryOp::Logistic,
            [
                0.5,
                1.0 / (1.0 + (-1f64).exp()),
                1.0 / (1.0 + (-4f64).exp()),
            ],
        );
        close(UnaryOp::Tanh, [0.0, 1f64.tanh(), 4f64.tanh()]);
        close(UnaryOp::Log1p, [0.0, 2f64.ln(), 5f64.ln()]);
        close(UnaryOp::Cbrt, [0.0, 1.0, 4f64.cbrt()]);
        let r = unary(UnaryOp::Rsqrt, &y).unwrap().to_f64_vec();
        assert_eq!(r, vec![f64::INFINITY, 1.0, 0.5]);
    }

    #[test]
    fn is_finite_and_not() {
        let x = f32s(&[3], &[1.0, f32::INFINITY, f32::NAN]);
        assert_eq!(
            unary(UnaryOp::IsFinite, &x).unwrap(),
            preds(&[true, false, false])
        );
        assert_eq!(
            unary(UnaryOp::Not, &preds(&[true, false])).unwrap(),
            preds(&[false, true])
        );
        assert_eq!(
            unary(UnaryOp::Not, &i32s(&[0, 5])).unwrap(),
            i32s(&[-1, -6])
        );
        let err = unary(UnaryOp::Not, &x).unwrap_err();
        assert!(err.to_string().contains("stablehlo.not"), "{err}");
        assert!(unary(UnaryOp::IsFinite, &i32s(&[1])).is_err());
    }

    #[test]
    fn half_types_compute_in_f32_and_round() {
        let x = HostTensor::from_vec(&[2], vec![f16::from_f32(1.0), f16::from_f32(2.0)]).unwrap();
        let e = unary(UnaryOp::Exp, &x).unwrap();
        let want = HostTensor::from_vec(
            &[2],
            vec![f16::from_f32(1f32.exp()), f16::from_f32(2f32.exp())],
        )
        .unwrap();
        assert_eq!(e, want);
        let b = HostTensor::from_vec(&[1], vec![bf16::from_f32(3.0)]).unwrap();
        let c = HostTensor::from_vec(&[1], vec![bf16::from_f32(0.1)]).unwrap();
        let got = binary(BinaryOp::Add, &b, &c).unwrap();
        let sum = bf16::from_f32(3.0f32 + bf16::from_f32(0.1).to_f32());
        assert_eq!(got, HostTensor::from_vec(&[1], vec![sum]).unwrap());
    }

    #[test]
    fn float_binary_ops() {
        let a = f32s(&[4], &[7.0, -7.0, 2.0, f32::NAN]);
        let b = f32s(&[4], &[2.0, 2.0, 3.0, 1.0]);
        let t = |op| binary(op, &a, &b).unwrap().to_f64_vec();
        assert_eq!(t(BinaryOp::Add)[..3], [9.0, -5.0, 5.0]);
        assert_eq!(t(BinaryOp::Remainder)[..3], [1.0, -1.0, 2.0]);
        assert_eq!(t(BinaryOp::Power)[..3], [49.0, 49.0, 8.0]);
        assert_eq!(t(BinaryOp::Divide)[..3], [3.5, -3.5, (2.0f32 / 3.0) as f64]);
        let mx = t(BinaryOp::Maximum);
        assert_eq!(mx[..3], [7.0, 2.0, 3.0]);
        assert!(mx[3].is_nan(), "maximum propagates NaN");
        assert!(t(BinaryOp::Minimum)[3].is_nan());
        assert!(binary(BinaryOp::And, &a, &b).is_err());
    }

    #[test]
    fn int_binary_ops_follow_xla_rules() {
        let a = i32s(&[7, -7, i32::MIN, 5, 2]);
        let b = i32s(&[2, 2, -1, 0, -1]);
        assert_eq!(
            binary(BinaryOp::Divide, &a, &b).unwrap(),
            i32s(&[3, -3, i32::MIN, -1, -2])
        );
        assert_eq!(
            binary(BinaryOp::Remainder, &a, &b).unwrap(),
            i32s(&[1, -1, 0, 5, 0])
        );
        assert_eq!(
            binary(BinaryOp::Add, &i32s(&[i32::MAX]), &i32s(&[1])).unwrap(),
            i32s(&[i32::MIN])
        );
        let p = binary(
            BinaryOp::Power,
            &i32s(&[3, 2, -1, -1, 5]),
            &i32s(&[4, -1, -3, -2, 0]),
        );
        assert_eq!(p.unwrap(), i32s(&[81, 0, -1, 1, 1]));
        assert_eq!(
            binary(BinaryOp::Xor, &i32s(&[0b1100]), &i32s(&[0b1010])).unwrap(),
            i32s(&[0b0110])
        );
        assert_eq!(
            unary(UnaryOp::Abs, &i32s(&[-3, i32::MIN])).unwrap(),
            i32s(&[3, i32::MIN])
        );
    }

    #[test]
    fn binary_checks_types_and_shapes() {
        let a = f32s(&[2], &[1.0, 2.0]);
        let err = binary(BinaryOp::Add, &a, &f32s(&[3], &[1.0, 2.0, 3.0])).unwrap_err();
        assert!(
            err.to_string().contains("[2]") && err.to_string().contains("[3]"),
            "{err}"
        );
        let err = binary(BinaryOp::Add, &a, &i32s(&[1, 2])).unwrap_err();
        assert!(err.to_string().contains("f32 and i32"), "{err}");
    }

    #[test]
    fn compare_float_int_and_total_order() {
        let a = f32s(&[3], &[1.0, f32::NAN, 2.0]);
        let b = f32s(&[3], &[1.0, f32::NAN, 3.0]);
        let c = |d, t| compare(d, t, &a, &b).unwrap();
        assert_eq!(c(CompareDirection::Eq, None), preds(&[true, false, false]));
        assert_eq!(c(CompareDirection::Ne, None), preds(&[false, true, true]));
        assert_eq!(c(CompareDirection::Lt, None), preds(&[false, false, true]));
        assert_eq!(c(CompareDirection::Ge, None), preds(&[true, false, false]));
        let total = Some(CompareType::TotalOrder);
        assert_eq!(c(CompareDirection::Eq, total), preds(&[true, true, false]));
        let i = compare(CompareDirection::Gt, None, &i32s(&[1, 5]), &i32s(&[2, 4])).unwrap();
        assert_eq!(i, preds(&[false, true]));
        let bl = compare(
            CompareDirection::Lt,
            None,
            &preds(&[false, true]),
            &preds(&[true, true]),
        );
        assert_eq!(bl.unwrap(), preds(&[true, false]));
    }

    #[test]
    fn select_full_and_scalar_pred() {
        let t = f32s(&[3], &[1.0, 2.0, 3.0]);
        let f = f32s(&[3], &[-1.0, -2.0, -3.0]);
        let p = preds(&[true, false, true]);
        assert_eq!(select(&p, &t, &f).unwrap(), f32s(&[3], &[1.0, -2.0, 3.0]));
        let s = HostTensor::from_vec(&[], vec![false]).unwrap();
        assert_eq!(select(&s, &t, &f).unwrap(), f);
        let err = select(&preds(&[true]), &t, &f).unwrap_err();
        assert!(err.to_string().contains("pred"), "{err}");
        assert!(select(&t, &t, &f).is_err());
    }

    #[test]
    fn clamp_scalar_and_full_bounds() {
        let x = f32s(&[4], &[-5.0, 0.5, 9.0, f32::NAN]);
        let lo = f32s(&[], &[0.0]);
        let hi = f32s(&[4], &[1.0, 1.0, 2.0, 1.0]);
        let got = clamp(&lo, &x, &hi).unwrap().to_f64_vec();
        assert_eq!(got[..3], [0.0, 0.5, 2.0]);
        assert!(got[3].is_nan());
        assert!(clamp(&f32s(&[2], &[0.0, 0.0]), &x, &hi).is_err());
    }
}
