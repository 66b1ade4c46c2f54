//! `dense<...>` literals of `stablehlo.constant`: splats, nested lists,
//! `true`/`false`, integers, floats, floats as hex bits (`0xFF800000`) and
//! hex blobs of raw little-endian element bytes (`"0x0000803F..."`).
//!
//! Values are stored rounded to the element type, so that a literal printed
//! and parsed again has the same bits.

use crate::diag::DiagKind;
use crate::ir::literal::{float_from_bits, round_to_elem};
use crate::ir::{DenseLiteral, ElemType, Scalar, TensorType};
use crate::text::cursor::{Cursor, PResult, TokRange};
use crate::text::lexer::Tok;
use crate::text::parse_sharding::parse_u64;

impl<'s> Cursor<'s> {
    /// `dense<...> : tensor<...>` (the constant's value and type).
    pub(crate) fn parse_dense_with_type(&mut self) -> PResult<(DenseLiteral, TensorType)> {
        let lit = self.capture_dense()?;
        self.expect(Tok::Colon, "dense literal")?;
        let ty = self.parse_type()?;
        let value = self.decode_dense(lit, &ty)?;
        Ok((value, ty))
    }

    /// Skip `dense<...>` and return its tokens for decoding once the type
    /// (printed after it) is known.
    pub(crate) fn capture_dense(&mut self) -> PResult<TokRange> {
        if !self.at_ident("dense") {
            if self.kind() == Tok::Ident {
                return Err(self.err(
                    DiagKind::Unsupported,
                    format!(
                        "constant value {} is not supported (expected dense<...>)",
                        self.found()
                    ),
                ));
            }
            return Err(self.expected_in("dense<...>", "constant"));
        }
        let start = self.idx;
        self.bump();
        if !self.at(Tok::Less) {
            return Err(self.expected_in("'<'", "dense literal"));
        }
        self.skip_balanced_group("dense literal")?;
        Ok(TokRange {
            start,
            end: self.idx,
        })
    }

    /// Decode captured `dense<...>` tokens for a tensor of type `ty`.
    pub(crate) fn decode_dense(&mut self, lit: TokRange, ty: &TensorType) -> PResult<DenseLiteral> {
        self.within(lit, "dense literal", |c| {
            c.bump(); // `dense`
            c.expect(Tok::Less, "dense literal")?;
            let value = if c.at(Tok::Greater) {
                if element_count(ty) != Some(0) {
                    return Err(c.err(DiagKind::Type, format!("empty dense literal for {ty}")));
                }
                DenseLiteral::Elements(Vec::new())
            } else if c.at(Tok::Str) {
                c.parse_hex_blob(ty)?
            } else if c.at(Tok::LBracket) {
                DenseLiteral::Elements(c.parse_nested_elements(ty)?)
            } else {
                DenseLiteral::Splat(c.parse_scalar(ty.elem)?)
            };
            c.expect(Tok::Greater, "dense literal")?;
            Ok(value)
        })
    }

    /// `[[a, b], [c, d]]` whose nesting must match `ty`'s shape exactly.
    /// Iterative (a deep shape cannot overflow the stack).
    fn parse_nested_elements(&mut self, ty: &TensorType) -> PResult<Vec<Scalar>> {
        let shape = &ty.shape;
        if shape.is_empty() {
            return Err(self.err(
                DiagKind::Type,
                format!("dense literal for {ty} must be a single value, not a list"),
            ));
        }
        let total = element_count(ty).ok_or_else(|| {
            self.err(DiagKind::Unsupported, format!("{ty} has too many elements"))
        })?;
        let mut out = Vec::with_capacity(total.clamp(0, 1 << 20) as usize);
        // counts[d]: elements already read in the open list at depth d.
        let mut counts = vec![0i64; shape.len()];
        self.expect(Tok::LBracket, "dense literal")?;
        let mut depth = 0usize; // index of the innermost open list
        loop {
            // Read one element of the list at `depth`, unless it is empty.
            let empty = counts[depth] == 0 && self.at(Tok::RBracket);
            if !empty {
                if depth + 1 == shape.len() {
                    out.push(self.parse_scalar(ty.elem)?);
                } else if self.at(Tok::LBracket) {
                    self.bump();
                    depth += 1;
                    counts[depth] = 0;
                    continue;
                } else {
                    return Err(
                        self.expected_in("'[' (nested list)", &format!("dense literal for {ty}"))
                    );
                }
                counts[depth] += 1;
            }
            // After an element: `,` continues this list, `]` closes it (and
            // counts as one element of the enclosing list).
            loop {
                if counts[depth] > shape[depth] {
                    return Err(self.err(
                        DiagKind::Type,
                        format!(
                            "dense literal has more than {} elements in dimension {depth} of {ty}",
                            shape[depth]
                        ),
                    ));
                }
                if self.eat(Tok::Comma) {
                    break;
                }
                if !self.at(Tok::RBracket) {
                    return Err(self.expected_in("',' or ']'", "dense literal"));
                }
                if counts[depth] != shape[depth] {
                    return Err(self.err(
                        DiagKind::Type,
                        format!(
                            "dense literal has {} elements in dimension {depth} but {ty} needs {}",
                            counts[depth], shape[depth]
                        ),
                    ));
                }
                self.bump();
                if depth == 0 {
                    return Ok(out);
                }
                depth -= 1;
                counts[depth] += 1;
            }
        }
    }

    /// One element value of type `elem`.
    fn parse_scalar(&mut self, elem: ElemType) -> PResult<Scalar> {
        if self.kind() == Tok::Ident && matches!(self.text(), "true" | "false") {
            if !elem.is_bool() {
                return Err(self.err(
                    DiagKind::Type,
                    format!("boolean literal for element type {elem}"),
                ));
            }
            let b = self.text() == "true";
            self.bump();
            return Ok(Scalar::Bool(b));
        }
        let neg = self.eat(Tok::Minus);
        let text = self.text();
        let kind = self.kind();
        let scalar = match kind {
            Tok::Int if text.starts_with("0x") && elem.is_float() => {
                if neg {
                    return Err(self.err(
                        DiagKind::Syntax,
                        "hexadecimal float literal cannot be negated",
                    ));
                }
                let bits = parse_u64(text)
                    .filter(|b| elem.byte_size() == 8 || *b >> (elem.byte_size() * 8) == 0);
                let bits = bits.ok_or_else(|| {
                    self.err(
                        DiagKind::Type,
                        format!("hexadecimal float {text} out of range for {elem}"),
                    )
                })?;
                Scalar::Float(float_from_bits(bits, elem))
            }
            Tok::Int | Tok::Float if elem.is_float() => {
                let x = parse_float_text(text, elem).ok_or_else(|| {
                    self.err(DiagKind::Syntax, format!("bad float literal '{text}'"))
                })?;
                Scalar::Float(if neg { -x } else { x })
            }
            Tok::Int => {
                let magnitude = parse_u64(text).ok_or_else(|| {
                    self.err(
                        DiagKind::Type,
                        format!("integer {text} out of range for {elem}"),
                    )
                })?;
                let value = if neg {
                    -(magnitude as i128)
                } else {
                    magnitude as i128
                };
                let (lo, hi) = int_range(elem);
                if value < lo || value > hi {
                    let sign = if neg { "-" } else { "" };
                    return Err(self.err(
                        DiagKind::Type,
                        format!("integer {sign}{text} out of range for {elem}"),
                    ));
                }
                if elem.is_bool() {
                    Scalar::Bool(value != 0)
                } else {
                    Scalar::Int(value as i64)
                }
            }
            Tok::Float => {
                return Err(self.err(
                    DiagKind::Type,
                    format!("float literal '{text}' for element type {elem}"),
                ))
            }
            _ => return Err(self.expected_in(&format!("a {elem} value"), "dense literal")),
        };
        self.bump();
        Ok(scalar)
    }

    /// `"0x..."`: raw little-endian bytes of every element, or of one
    /// element (a splat).
    fn parse_hex_blob(&mut self, ty: &TensorType) -> PResult<DenseLiteral> {
        let text = self.text();
        let body = text.get(1..text.len().saturating_sub(1)).unwrap_or("");
        let hex = body
            .strip_prefix("0x")
            .ok_or_else(|| self.err(DiagKind::Syntax, "hex literal must start with \"0x\""))?;
        if hex.len() % 2 != 0 || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
            return Err(self.err(
                DiagKind::Syntax,
                "malformed hex literal (expected pairs of hex digits)",
            ));
        }
        let size = ty.elem.byte_size();
        let n_bytes = hex.len() / 2;
        let n_elems = element_count(ty).unwrap_or(i64::MAX);
        let all = n_elems.checked_mul(size as i64) == Some(n_bytes as i64);
        if !all && n_bytes != size {
            return Err(self.err(
                DiagKind::Type,
                format!(
                    "hex literal has {n_bytes} bytes but {ty} needs {} (or {size} for a splat)",
                    n_elems.saturating_mul(size as i64)
                ),
            ));
        }
        let elem = ty.elem;
        let mut values = Vec::with_capacity(n_bytes / size.max(1));
        let hb = hex.as_bytes();
        for chunk in hb.chunks(size * 2) {
            let mut bits: u64 = 0;
            for (k, pair) in chunk.chunks(2).enumerate() {
                let byte = (hex_val(pair[0]) << 4) | hex_val(pair[1]);
                bits |= (byte as u64) << (8 * k);
            }
            values.push(scalar_from_bits(bits, elem));
        }
        self.bump();
        match values.as_slice() {
            [one] if n_bytes == size => Ok(DenseLiteral::Splat(*one)),
            _ => Ok(DenseLiteral::Elements(values)),
        }
    }
}

/// Number of elements of `ty`, or `None` if it overflows i64.
pub(crate) fn element_count(ty: &TensorType) -> Option<i64> {
    ty.shape.iter().try_fold(1i64, |acc, d| acc.checked_mul(*d))
}

fn hex_val(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => 0,
    }
}

/// An element decoded from its little-endian bits.
fn scalar_from_bits(bits: u64, elem: ElemType) -> Scalar {
    if elem.is_float() {
        return Scalar::Float(float_from_bits(bits, elem));
    }
    if elem.is_bool() {
        return Scalar::Bool(bits & 0xff != 0);
    }
    let width = elem.byte_size() * 8;
    let value = if elem.is_unsigned() || width == 64 {
        bits as i64
    } else {
        // Sign-extend from `width` bits.
        let shift = 64 - width;
        ((bits << shift) as i64) >> shift
    };
    Scalar::Int(value)
}

/// The inclusive range of an integer (or i1) element type.
fn int_range(elem: ElemType) -> (i128, i128) {
    let bits = if elem.is_bool() {
        1
    } else {
        elem.byte_size() as u32 * 8
    };
    if elem.is_unsigned() || elem.is_bool() {
        (0, (1i128 << bits) - 1)
    } else {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    }
}

/// Parse a decimal float for `elem`, rounding once to the element type.
pub(crate) fn parse_float_text(text: &str, elem: ElemType) -> Option<f64> {
    match elem {
        ElemType::F32 => text.parse::<f32>().ok().map(f64::from),
        _ => text.parse::<f64>().ok().map(|x| round_to_elem(x, elem)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense(src: &str) -> PResult<(DenseLiteral, TensorType)> {
        Cursor::new(src).parse_dense_with_type()
    }

    #[test]
    fn splats_lists_and_bits() {
        let (v, _) = dense("dense<1.000000e+00> : tensor<f32>").expect("ok");
        assert_eq!(v, DenseLiteral::Splat(Scalar::Float(1.0)));
        let (v, _) = dense("dense<0xFF800000> : tensor<f32>").expect("ok");
        assert_eq!(v, DenseLiteral::Splat(Scalar::Float(f64::NEG_INFINITY)));
        let (v, _) =
            dense("dense<[[1.0, -2.0], [3.0, 0xFF800000]]> : tensor<2x2xf32>").expect("ok");
        assert_eq!(
            v,
            DenseLiteral::Elements(vec![
                Scalar::Float(1.0),
                Scalar::Float(-2.0),
                Scalar::Float(3.0),
                Scalar::Float(f64::NEG_INFINITY)
            ])
        );
        let (v, _) = dense("dense<[true, false]> : tensor<2xi1>").expect("ok");
        assert_eq!(
            v,
            DenseLiteral::Elements(vec![Scalar::Bool(true), Scalar::Bool(false)])
        );
        let (v, _) = dense("dense<-3> : tensor<4xi32>").expect("ok");
        assert_eq!(v, DenseLiteral::Splat(Scalar::Int(-3)));
        let (v, _) = dense("dense<2.82842708> : tensor<f32>").expect("ok");
        assert_eq!(v, DenseLiteral::Splat(Scalar::Float(2.828_427_f32 as f64)));
        let (v, _) = dense("dense<0.1> : tensor<bf16>").expect("ok");
        assert_eq!(
            v,
            DenseLiteral::Splat(Scalar::Float(round_to_elem(0.1, ElemType::BF16)))
        );
    }

    #[test]
    fn hex_blobs() {
        let (v, _) = dense("dense<\"0x0000803F00000040\"> : tensor<2xf32>").expect("ok");
        assert_eq!(
            v,
            DenseLiteral::Elements(vec![Scalar::Float(1.0), Scalar::Float(2.0)])
        );
        let (v, _) = dense("dense<\"0x0000803F\"> : tensor<8xf32>").expect("ok");
        assert_eq!(v, DenseLiteral::Splat(Scalar::Float(1.0)));
        let (v, _) = dense("dense<\"0xFFFF0100\"> : tensor<2xi16>").expect("ok");
        assert_eq!(
            v,
            DenseLiteral::Elements(vec![Scalar::Int(-1), Scalar::Int(1)])
        );
        assert!(dense("dense<\"0x0000803F00\"> : tensor<2xf32>").is_err());
    }

    #[test]
    fn shape_and_range_errors() {
        let e = dense("dense<[1.0, 2.0, 3.0]> : tensor<2xf32>").expect_err("too many");
        assert_eq!(e.kind, DiagKind::Type);
        let e = dense("dense<[[1.0], [2.0]]> : tensor<2x2xf32>").expect_err("too few");
        assert!(e.message.contains("dimension 1"), "{}", e.message);
        let e = dense("dense<300> : tensor<i8>").expect_err("range");
        assert!(e.message.contains("out of range"), "{}", e.message);
        let e = dense("dense<1.5> : tensor<i32>").expect_err("float for int");
        assert_eq!(e.kind, DiagKind::Type);
        assert!(dense("dense<0x7FC00000> : tensor<bf16>").is_err());
        assert!(dense("dense<[1.0, 2.0> : tensor<2xf32>").is_err());
    }
}
