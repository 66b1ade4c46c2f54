//! Printing `dense<...>` literals so that they parse back to the same bits:
//! splats as one value, element lists nested by the shape, non-finite
//! floats as hex bits (`0xFF800000`), finite floats as MLIR's
//! `1.000000e+00` when that is exact, else the shortest form that
//! round-trips in the element type.

use std::fmt::Write;

use crate::ir::literal::float_to_bits;
use crate::ir::{DenseLiteral, ElemType, Scalar, TensorType};
use crate::text::parse_literal::{element_count, parse_float_text};

/// `dense<...>` for a literal of type `ty` (without the `: type`).
pub(crate) fn write_dense(out: &mut String, lit: &DenseLiteral, ty: &TensorType) {
    out.push_str("dense<");
    match lit {
        DenseLiteral::Splat(s) => write_scalar(out, *s, ty.elem),
        DenseLiteral::Elements(v) if v.is_empty() => {}
        DenseLiteral::Elements(v) if ty.rank() == 0 && v.len() == 1 => {
            write_scalar(out, v[0], ty.elem)
        }
        DenseLiteral::Elements(v) => {
            if Some(v.len() as i64) == element_count(ty) {
                write_nested(out, v, &ty.shape, ty.elem);
            } else {
                // Not a valid literal for the type; print what there is.
                write_nested(out, v, &[v.len() as i64], ty.elem);
            }
        }
    }
    out.push('>');
}

/// Elements in row-major order as nested lists, without recursion.
fn write_nested(out: &mut String, values: &[Scalar], shape: &[i64], elem: ElemType) {
    // suffix[d]: elements in one list at depth d.
    let mut suffix = vec![1i64; shape.len()];
    let mut acc = 1i64;
    for d in (0..shape.len()).rev() {
        acc = acc.saturating_mul(shape[d].max(1));
        suffix[d] = acc;
    }
    for (i, s) in values.iter().enumerate() {
        let i = i as i64;
        if i > 0 {
            out.push_str(", ");
        }
        for &p in &suffix {
            if i % p == 0 {
                out.push('[');
            }
        }
        write_scalar(out, *s, elem);
        for &p in &suffix {
            if (i + 1) % p == 0 {
                out.push(']');
            }
        }
    }
}

/// One element value as MLIR writes it for element type `elem`.
pub(crate) fn write_scalar(out: &mut String, s: Scalar, elem: ElemType) {
    if elem.is_float() {
        let x = s.as_f64();
        if x.is_finite() {
            out.push_str(&format_float(x, elem));
        } else {
            let width = elem.byte_size() * 2;
            let _ = write!(out, "0x{:0width$X}", float_to_bits(x, elem));
        }
    } else if elem.is_bool() {
        out.push_str(if s.as_i64() != 0 { "true" } else { "false" });
    } else if elem == ElemType::U64 {
        let _ = write!(out, "{}", s.as_i64() as u64);
    } else {
        let _ = write!(out, "{}", s.as_i64());
    }
}

/// A finite float: MLIR's `%.6e` style if it is exact in `elem`, otherwise
/// the shortest decimal that parses back to the same value.
pub(crate) fn format_float(x: f64, elem: ElemType) -> String {
    let same =
        |text: &str| parse_float_text(text, elem).is_some_and(|y| y.to_bits() == x.to_bits());
    let six = mlir_exponent(&format!("{x:.6e}"));
    if same(&six) {
        return six;
    }
    let shortest = match elem {
        ElemType::F64 => format!("{x:e}"),
        _ => format!("{:e}", x as f32),
    };
    mlir_exponent(&shortest)
}

/// Rust's `1.5e0` → MLIR's `1.5e+00` (the mantissa must contain a `.`).
fn mlir_exponent(rust: &str) -> String {
    let (mantissa, exp) = rust.split_once('e').unwrap_or((rust, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let dot = if mantissa.contains('.') { "" } else { ".0" };
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}{dot}e{sign}{:02}", exp.unsigned_abs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::literal::{float_from_bits, round_to_elem};

    fn dense(lit: &DenseLiteral, shape: &[i64], elem: ElemType) -> String {
        let mut s = String::new();
        write_dense(&mut s, lit, &TensorType::new(shape.to_vec(), elem));
        s
    }

    #[test]
    fn mlir_style_floats() {
        assert_eq!(format_float(1.0, ElemType::F32), "1.000000e+00");
        assert_eq!(format_float(-0.25, ElemType::F32), "-2.500000e-01");
        assert_eq!(format_float(0.1f32 as f64, ElemType::F32), "1.000000e-01");
        assert_eq!(format_float(1e300, ElemType::F64), "1.000000e+300");
        let odd = 2.828_427_f32 as f64;
        assert_eq!(
            parse_float_text(&format_float(odd, ElemType::F32), ElemType::F32),
            Some(odd)
        );
    }

    #[test]
    fn floats_round_trip_in_every_float_type() {
        let samples = [
            0.1,
            1.0 / 3.0,
            1e-40,
            6.55e4,
            -123.456,
            5e-324,
            f64::MAX,
            1e-8,
        ];
        for elem in [ElemType::F64, ElemType::F32, ElemType::F16, ElemType::BF16] {
            for x in samples {
                let x = round_to_elem(x, elem);
                if !x.is_finite() {
                    continue;
                }
                let text = format_float(x, elem);
                let back = parse_float_text(&text, elem).expect("parses");
                assert_eq!(back.to_bits(), x.to_bits(), "{elem} {x} printed as {text}");
            }
        }
    }

    #[test]
    fn nested_lists_and_bits() {
        let v: Vec<Scalar> = (0..6).map(Scalar::Int).collect();
        assert_eq!(
            dense(&DenseLiteral::Elements(v), &[2, 3], ElemType::I32),
            "dense<[[0, 1, 2], [3, 4, 5]]>"
        );
        let v = vec![Scalar::Bool(true), Scalar::Bool(false)];
        assert_eq!(
            dense(&DenseLiteral::Elements(v), &[1, 1, 2], ElemType::I1),
            "dense<[[[true, false]]]>"
        );
        let ninf = DenseLiteral::Splat(Scalar::Float(f64::NEG_INFINITY));
        assert_eq!(dense(&ninf, &[], ElemType::F32), "dense<0xFF800000>");
        assert_eq!(dense(&ninf, &[], ElemType::BF16), "dense<0xFF80>");
        let nan = float_from_bits(0x7FC0_0000, ElemType::F32);
        assert_eq!(
            dense(
                &DenseLiteral::Splat(Scalar::Float(nan)),
                &[4],
                ElemType::F32
            ),
            "dense<0x7FC00000>"
        );
        assert_eq!(
            dense(&DenseLiteral::Elements(vec![]), &[0], ElemType::F32),
            "dense<>"
        );
        assert_eq!(
            dense(&DenseLiteral::Splat(Scalar::Int(-1)), &[], ElemType::U64),
            "dense<18446744073709551615>"
        );
    }
}
