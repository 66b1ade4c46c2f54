//! Types: `tensor<16x128xf32>`, `tensor<f32>`, type lists and the op
//! signatures that follow `:` (`t`, `(t1, t2) -> t3`, `t1 -> t2`).

use crate::diag::{DiagKind, Diagnostic};
use crate::ir::{ElemType, TensorType};
use crate::text::cursor::{Cursor, PResult};
use crate::text::lexer::Tok;

/// What an op's `: ...` signature said.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Signature {
    /// `: t`, one type for all operands and the result.
    Single(TensorType),
    /// `: t1, t2` (select's predicate type, then the value type).
    Pair(TensorType, TensorType),
    /// `: (ins) -> outs` or `: t -> outs`.
    Functional(Vec<TensorType>, Vec<TensorType>),
}

impl<'s> Cursor<'s> {
    /// A ranked static tensor type or `!stablehlo.token`. Everything else
    /// MLIR allows there (dynamic dims, encodings, tuples, scalars) is
    /// reported as unsupported at the offending position.
    pub(crate) fn parse_type(&mut self) -> PResult<TensorType> {
        match self.kind() {
            Tok::Ident if self.text() == "tensor" => {}
            Tok::Bang if self.text() == "!stablehlo.token" => {
                self.bump();
                return Ok(TensorType::token());
            }
            Tok::Ident | Tok::Bang => {
                return Err(self.err(
                    DiagKind::Unsupported,
                    format!(
                        "type {} is not supported (meshrun handles ranked tensor types like tensor<4x8xf32>)",
                        self.found()
                    ),
                ))
            }
            _ => return Err(self.expected("a tensor type")),
        }
        self.bump();
        let open = self.expect(Tok::Less, "tensor type")?;
        // The body is read as text: `16x128xf32` lexes as `16` + `x128xf32`.
        let mut depth = 0usize;
        loop {
            match self.kind() {
                Tok::Less => depth += 1,
                Tok::Greater if depth == 0 => break,
                Tok::Greater => depth -= 1,
                Tok::Eof | Tok::Error | Tok::LBrace | Tok::RBrace | Tok::RParen => {
                    return Err(self.expected_in("'>'", "tensor type"))
                }
                _ => {}
            }
            self.bump();
        }
        let body_start = open.end as usize;
        let body_end = self.tok().start as usize;
        let body = self.src.get(body_start..body_end).unwrap_or("");
        let ty = parse_tensor_body(body).map_err(|(offset, kind, msg)| {
            Diagnostic::new(kind, self.pos_of_offset(body_start + offset), msg)
        })?;
        self.bump();
        Ok(ty)
    }

    /// `t (, t)*` with at least one type.
    pub(crate) fn parse_type_list(&mut self) -> PResult<Vec<TensorType>> {
        let mut tys = vec![self.parse_type()?];
        while self.eat(Tok::Comma) {
            tys.push(self.parse_type()?);
        }
        Ok(tys)
    }

    /// `( [t (, t)*] )`.
    pub(crate) fn parse_paren_types(&mut self) -> PResult<Vec<TensorType>> {
        self.expect(Tok::LParen, "type list")?;
        if self.eat(Tok::RParen) {
            return Ok(Vec::new());
        }
        let tys = self.parse_type_list()?;
        self.expect(Tok::RParen, "type list")?;
        Ok(tys)
    }

    /// Results after `->`: `t` or `( [t, ...] )`.
    pub(crate) fn parse_result_types(&mut self) -> PResult<Vec<TensorType>> {
        if self.at(Tok::LParen) {
            self.parse_paren_types()
        } else {
            Ok(vec![self.parse_type()?])
        }
    }

    /// `(ins) -> outs`.
    pub(crate) fn parse_function_type(&mut self) -> PResult<(Vec<TensorType>, Vec<TensorType>)> {
        let ins = self.parse_paren_types()?;
        self.expect(Tok::Arrow, "function type")?;
        let outs = self.parse_result_types()?;
        Ok((ins, outs))
    }

    /// The signature after an op's `:`, in any of its printed forms.
    pub(crate) fn parse_signature(&mut self) -> PResult<Signature> {
        if self.at(Tok::LParen) {
            let (ins, outs) = self.parse_function_type()?;
            return Ok(Signature::Functional(ins, outs));
        }
        let first = self.parse_type()?;
        if self.eat(Tok::Arrow) {
            let outs = self.parse_result_types()?;
            return Ok(Signature::Functional(vec![first], outs));
        }
        if self.at(Tok::Comma) && self.peek_text(1) == "tensor" {
            self.bump();
            let second = self.parse_type()?;
            // `t1, t2 -> t3`: CHLO's binary ops.
            if self.eat(Tok::Arrow) {
                let outs = self.parse_result_types()?;
                return Ok(Signature::Functional(vec![first, second], outs));
            }
            return Ok(Signature::Pair(first, second));
        }
        Ok(Signature::Single(first))
    }
}

/// Parse the text between `tensor<` and `>`. Errors carry a byte offset
/// into `body`.
fn parse_tensor_body(body: &str) -> Result<TensorType, (usize, DiagKind, String)> {
    let bytes = body.as_bytes();
    let mut shape = Vec::new();
    let mut i = 0;
    loop {
        match bytes.get(i) {
            Some(b'?') => {
                return Err((
                    i,
                    DiagKind::Unsupported,
                    "dynamic dimension '?' is not supported (meshrun needs static shapes)".into(),
                ))
            }
            Some(b'*') => {
                return Err((
                    i,
                    DiagKind::Unsupported,
                    "unranked tensor type is not supported".into(),
                ))
            }
            Some(c) if c.is_ascii_digit() => {
                let start = i;
                while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
                let dim: i64 = body[start..i].parse().map_err(|_| {
                    (
                        start,
                        DiagKind::Syntax,
                        format!("dimension '{}' is too large", &body[start..i]),
                    )
                })?;
                if bytes.get(i) != Some(&b'x') {
                    return Err((
                        i,
                        DiagKind::Syntax,
                        "expected 'x' after a dimension in tensor type".into(),
                    ));
                }
                i += 1;
                shape.push(dim);
            }
            _ => break,
        }
    }
    let rest = &body[i..];
    let name_len = rest
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
        .count();
    let name = &rest[..name_len];
    if name_len < rest.len() {
        let extra = rest[name_len..].trim_start();
        let offset = body.len() - extra.len();
        let what = if extra.starts_with(',') {
            "tensor encodings are not supported"
        } else if name == "complex" {
            // jnp.fft and complex arithmetic: `tensor<8x17xcomplex<f32>>`.
            return Err((
                i,
                DiagKind::Unsupported,
                format!(
                    "complex element type '{}' is not supported (meshrun has real and integer tensors only)",
                    rest.trim_end()
                ),
            ));
        } else {
            "unexpected text in tensor type"
        };
        // Quote the start of it only: the rest of the line, at most 40
        // characters (a diagnostic is one line).
        let quoted: String = extra
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(40)
            .collect();
        return Err((offset, DiagKind::Unsupported, format!("{what}: '{quoted}'")));
    }
    match ElemType::from_name(name) {
        Some(elem) => {
            let ty = TensorType::new(shape, elem);
            // Every size computed later (elements, bytes, local blocks)
            // then fits in an i64.
            if ty.checked_byte_size().is_none() {
                return Err((
                    0,
                    DiagKind::Unsupported,
                    format!("{ty} is too large: its size in bytes does not fit in 64 bits"),
                ));
            }
            Ok(ty)
        }
        None if name.is_empty() => Err((i, DiagKind::Syntax, "expected an element type in tensor type".into())),
        None if is_mlir_elem_type(name) => Err((
            i,
            DiagKind::Unsupported,
            format!("element type '{name}' is not supported (meshrun handles f64, f32, f16, bf16, i1, i8, i16, i32, i64, ui8, ui16, ui32, ui64)"),
        )),
        None => Err((
            i,
            DiagKind::Type,
            format!(
                "unknown element type '{name}' in tensor type (expected one of f64, f32, f16, bf16, i1, i8, i16, i32, i64, ui8, ui16, ui32, ui64)"
            ),
        )),
    }
}

/// Element types MLIR knows but meshrun does not (so the error says
/// "unsupported" rather than "unknown"): other integer widths and
/// signednesses, `index`, the small float formats.
fn is_mlir_elem_type(name: &str) -> bool {
    let int_width = name
        .strip_prefix("si")
        .or_else(|| name.strip_prefix("ui"))
        .or_else(|| name.strip_prefix('i'));
    let is_int = int_width.is_some_and(|w| !w.is_empty() && w.bytes().all(|c| c.is_ascii_digit()));
    is_int
        || name == "index"
        || name == "tf32"
        || ["f8E", "f6E", "f4E"].iter().any(|p| name.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(src: &str) -> PResult<TensorType> {
        Cursor::new(src).parse_type()
    }

    #[test]
    fn parses_ranked_and_scalar_types() {
        assert_eq!(
            ty("tensor<16x128xf32>"),
            Ok(TensorType::new(vec![16, 128], ElemType::F32))
        );
        assert_eq!(ty("tensor<bf16>"), Ok(TensorType::scalar(ElemType::BF16)));
        assert_eq!(
            ty("tensor<0x4xui8>"),
            Ok(TensorType::new(vec![0, 4], ElemType::U8))
        );
    }

    #[test]
    fn reports_bad_types_at_their_position() {
        let e = ty("tensor<4xf99>").expect_err("bad elem");
        assert_eq!((e.pos.line, e.pos.col, e.kind), (1, 10, DiagKind::Type));
        assert!(e.message.contains("'f99'"), "{}", e.message);
        let e = ty("tensor<?x4xf32>").expect_err("dynamic");
        assert_eq!((e.pos.col, e.kind), (8, DiagKind::Unsupported));
        assert_eq!(ty("!stablehlo.token"), Ok(TensorType::token()));
        let e = ty("!stablehlo.buffer").expect_err("other dialect type");
        assert_eq!(e.kind, DiagKind::Unsupported);
        for t in [
            "tensor<4xui4>",
            "tensor<4xf8E4M3FN>",
            "tensor<index>",
            "tensor<2xsi32>",
        ] {
            assert_eq!(ty(t).expect_err(t).kind, DiagKind::Unsupported, "{t}");
        }
        // jnp.fft's results: named as complex, not as "unexpected text '<f32>'".
        let e = ty("tensor<8x17xcomplex<f32>>").expect_err("complex");
        assert_eq!((e.pos.col, e.kind), (13, DiagKind::Unsupported));
        assert!(
            e.message
                .starts_with("complex element type 'complex<f32>' is not supported"),
            "{}",
            e.message
        );
        let e = ty("tensor<4xf32, #enc>").expect_err("encoding");
        assert_eq!(e.kind, DiagKind::Unsupported);
        assert!(ty("tensor<4xf32").is_err());
    }

    #[test]
    fn parses_signatures() {
        let t = |s: &str| TensorType::new(vec![4], ElemType::from_name(s).unwrap_or(ElemType::F32));
        let sig = |s: &str| Cursor::new(s).parse_signature();
        assert_eq!(sig("tensor<4xf32>"), Ok(Signature::Single(t("f32"))));
        assert_eq!(
            sig("tensor<4xi1>, tensor<4xf32>"),
            Ok(Signature::Pair(t("i1"), t("f32")))
        );
        assert_eq!(
            sig("(tensor<4xf32>) -> tensor<4xbf16>"),
            Ok(Signature::Functional(vec![t("f32")], vec![t("bf16")]))
        );
        assert_eq!(
            sig("tensor<4xf32> -> tensor<4xf32>"),
            Ok(Signature::Functional(vec![t("f32")], vec![t("f32")]))
        );
        assert_eq!(
            sig("(tensor<4xf32>) -> ()"),
            Ok(Signature::Functional(vec![t("f32")], vec![]))
        );
    }
}
