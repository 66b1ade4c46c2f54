//! Shardy syntax: meshes (`<["x"=4, "y"=2], device_ids=[...]>`), tensor
//! shardings (`<@mesh, [{"x"}, {"z", "y":(2)2, ?}p1], replicated={"w"}>`) and
//! their attribute wrappers `#sdy.sharding<...>` / `#sdy.sharding_per_value`.
//!
//! Only syntax is checked here; the invariants of SPEC §2 (axes exist, no
//! duplicates, rank matches, ...) are `sharding::validate`'s job.

use crate::diag::DiagKind;
use crate::sharding::{
    AxisRef, DimSharding, Mesh, MeshAxis, MeshRef, ReductionOp, SubAxis, TensorSharding,
};
use crate::text::cursor::{Cursor, PResult};
use crate::text::lexer::{unescape, Tok};

impl<'s> Cursor<'s> {
    /// A string token's decoded contents.
    pub(crate) fn parse_string(&mut self, context: &str) -> PResult<String> {
        let t = self.tok();
        if t.kind != Tok::Str {
            return Err(self.expected_in("a string", context));
        }
        let text = self.text();
        let body = text.get(1..text.len().saturating_sub(1)).unwrap_or("");
        let s = unescape(body).map_err(|m| self.err(DiagKind::Syntax, m))?;
        self.bump();
        Ok(s)
    }

    /// `@name` or `@"name"`, without the `@`.
    pub(crate) fn parse_symbol(&mut self, context: &str) -> PResult<String> {
        if !self.at(Tok::At) {
            return Err(self.expected_in("a symbol name (@...)", context));
        }
        let text = self.text();
        let name = if text.starts_with("@\"") {
            let body = text.get(2..text.len().saturating_sub(1)).unwrap_or("");
            unescape(body).map_err(|m| self.err(DiagKind::Syntax, m))?
        } else {
            text.get(1..).unwrap_or("").to_string()
        };
        self.bump();
        Ok(name)
    }

    /// A possibly negative integer literal (decimal or `0x` hex).
    pub(crate) fn parse_int(&mut self, context: &str) -> PResult<i64> {
        let neg = self.eat(Tok::Minus);
        if !self.at(Tok::Int) {
            return Err(self.expected_in("an integer", context));
        }
        let text = self.text();
        let magnitude = parse_u64(text).ok_or_else(|| {
            self.err(
                DiagKind::Syntax,
                format!("integer '{text}' out of range in {context}"),
            )
        })?;
        let value = if neg {
            if magnitude > i64::MAX as u64 + 1 {
                return Err(self.err(
                    DiagKind::Syntax,
                    format!("integer '-{text}' out of range in {context}"),
                ));
            }
            (magnitude as i64).wrapping_neg()
        } else {
            if magnitude > i64::MAX as u64 {
                return Err(self.err(
                    DiagKind::Syntax,
                    format!("integer '{text}' out of range in {context}"),
                ));
            }
            magnitude as i64
        };
        self.bump();
        Ok(value)
    }

    /// `[i, j, ...]` of integers (possibly empty).
    pub(crate) fn parse_int_list(&mut self, context: &str) -> PResult<Vec<i64>> {
        self.expect(Tok::LBracket, context)?;
        let mut out = Vec::new();
        if self.eat(Tok::RBracket) {
            return Ok(out);
        }
        loop {
            out.push(self.parse_int(context)?);
            if self.eat(Tok::RBracket) {
                return Ok(out);
            }
            if !self.eat(Tok::Comma) {
                return Err(self.expected_in("',' or ']'", context));
            }
        }
    }

    /// A mesh body starting at `<`: `<["a"=2, "b"=4], device_ids=[...]>`,
    /// `<[]>`, and the older bracket-less `<"a"=2, "b"=4>`.
    pub(crate) fn parse_mesh_body(&mut self) -> PResult<Mesh> {
        const CTX: &str = "mesh";
        self.expect(Tok::Less, CTX)?;
        let mut axes = Vec::new();
        let bracketed = self.eat(Tok::LBracket);
        if bracketed {
            if !self.eat(Tok::RBracket) {
                loop {
                    axes.push(self.parse_mesh_axis()?);
                    if self.eat(Tok::RBracket) {
                        break;
                    }
                    if !self.eat(Tok::Comma) {
                        return Err(self.expected_in("',' or ']'", "mesh axes"));
                    }
                }
            }
        } else {
            while self.at(Tok::Str) {
                axes.push(self.parse_mesh_axis()?);
                if !(self.at(Tok::Comma) && self.peek_kind(1) == Tok::Str) {
                    break;
                }
                self.bump();
            }
        }
        let mut device_ids = None;
        let ids_follow =
            self.at(Tok::Comma) || (!bracketed && axes.is_empty() && self.at_ident("device_ids"));
        if ids_follow {
            self.eat(Tok::Comma);
            self.expect_ident("device_ids", CTX)?;
            self.expect(Tok::Equal, CTX)?;
            device_ids = Some(self.parse_int_list("device_ids")?);
        }
        if !self.eat(Tok::Greater) {
            return Err(self.expected_in(if ids_follow { "'>'" } else { "',' or '>'" }, CTX));
        }
        Ok(Mesh { axes, device_ids })
    }

    /// `"name"=size`.
    fn parse_mesh_axis(&mut self) -> PResult<MeshAxis> {
        let name = self.parse_string("mesh axis")?;
        self.expect(Tok::Equal, "mesh axis")?;
        let size = self.parse_int("mesh axis size")?;
        Ok(MeshAxis { name, size })
    }

    /// `"x"` or `"x":(pre)size`.
    fn parse_axis_ref(&mut self) -> PResult<AxisRef> {
        let name = self.parse_string("axis reference")?;
        if !self.eat(Tok::Colon) {
            return Ok(AxisRef::full(name));
        }
        self.expect(Tok::LParen, "sub-axis")?;
        let pre_size = self.parse_int("sub-axis pre-size")?;
        self.expect(Tok::RParen, "sub-axis")?;
        let size = self.parse_int("sub-axis size")?;
        Ok(AxisRef {
            name,
            sub: Some(SubAxis { pre_size, size }),
        })
    }

    /// `{"x", "y"}`, `{"x", ?}`, `{?}`, `{}`, each optionally followed by a
    /// priority `pN`.
    fn parse_dim_sharding(&mut self) -> PResult<DimSharding> {
        const CTX: &str = "dimension sharding";
        self.expect(Tok::LBrace, CTX)?;
        let mut axes = Vec::new();
        let mut is_closed = true;
        if !self.eat(Tok::RBrace) {
            loop {
                if self.eat(Tok::Question) {
                    is_closed = false;
                    if !self.eat(Tok::RBrace) {
                        return Err(self.expected_in("'}' after '?'", CTX));
                    }
                    break;
                }
                if !self.at(Tok::Str) {
                    return Err(self.expected_in("an axis name (\"...\") or '?'", CTX));
                }
                axes.push(self.parse_axis_ref()?);
                if self.eat(Tok::RBrace) {
                    break;
                }
                if !self.eat(Tok::Comma) {
                    return Err(self.expected_in("',' or '}'", CTX));
                }
            }
        }
        let mut priority = None;
        if self.kind() == Tok::Ident {
            let text = self.text();
            if let Some(digits) = text.strip_prefix('p') {
                if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) {
                    let p = digits.parse::<i64>().map_err(|_| {
                        self.err(DiagKind::Syntax, format!("priority '{text}' out of range"))
                    })?;
                    priority = Some(p);
                    self.bump();
                }
            }
        }
        Ok(DimSharding {
            axes,
            is_closed,
            priority,
        })
    }

    /// `{"a", "b"}` after `replicated=` / `unreduced=`.
    pub(crate) fn parse_axis_set(&mut self, context: &str) -> PResult<Vec<AxisRef>> {
        self.expect(Tok::LBrace, context)?;
        let mut axes = Vec::new();
        if self.eat(Tok::RBrace) {
            return Ok(axes);
        }
        loop {
            axes.push(self.parse_axis_ref()?);
            if self.eat(Tok::RBrace) {
                return Ok(axes);
            }
            if !self.eat(Tok::Comma) {
                return Err(self.expected_in("',' or '}'", context));
            }
        }
    }

    /// Which mesh a sharding uses: `@mesh`, `mesh<[...]>` or `#sdy.mesh<[...]>`.
    fn parse_mesh_ref(&mut self) -> PResult<MeshRef> {
        match self.kind() {
            Tok::At => Ok(MeshRef::Symbol(self.parse_symbol("sharding")?)),
            Tok::Ident if self.text() == "mesh" => {
                self.bump();
                Ok(MeshRef::Inline(self.parse_mesh_body()?))
            }
            Tok::Hash if self.text() == "#sdy.mesh" => {
                self.bump();
                Ok(MeshRef::Inline(self.parse_mesh_body()?))
            }
            _ => Err(self.expected_in("a mesh name (@...) or an inline mesh<...>", "sharding")),
        }
    }

    /// A tensor sharding starting at `<`:
    /// `<@mesh, [dims...], replicated={...}, unreduced={...}>`.
    pub(crate) fn parse_sharding_body(&mut self) -> PResult<TensorSharding> {
        const CTX: &str = "sharding";
        self.expect(Tok::Less, CTX)?;
        let mesh = self.parse_mesh_ref()?;
        self.expect(Tok::Comma, CTX)?;
        self.expect(Tok::LBracket, "sharding dimensions")?;
        let mut dims = Vec::new();
        if !self.eat(Tok::RBracket) {
            loop {
                dims.push(self.parse_dim_sharding()?);
                if self.eat(Tok::RBracket) {
                    break;
                }
                if !self.eat(Tok::Comma) {
                    return Err(self.expected_in("',' or ']'", "sharding dimensions"));
                }
            }
        }
        let mut replicated = None;
        let mut unreduced = None;
        let mut unreduced_op = ReductionOp::Sum;
        while self.eat(Tok::Comma) {
            let slot = if self.at_ident("replicated") {
                &mut replicated
            } else if self.at_ident("unreduced") {
                &mut unreduced
            } else {
                return Err(self.expected_in("'replicated' or 'unreduced'", CTX));
            };
            let label = self.text();
            if slot.is_some() {
                return Err(self.err(
                    DiagKind::Syntax,
                    format!("'{label}' given twice in sharding"),
                ));
            }
            let is_unreduced = label == "unreduced";
            self.bump();
            self.expect(Tok::Equal, CTX)?;
            // `unreduced=max{...}`: how the partial results combine.
            if is_unreduced && self.at(Tok::Ident) {
                let word = self.text();
                unreduced_op = ReductionOp::from_keyword(word).ok_or_else(|| {
                    self.err(
                        DiagKind::Syntax,
                        format!("unknown reduction '{word}' in unreduced (sum, max or min)"),
                    )
                })?;
                self.bump();
            }
            let axes = self.parse_axis_set(label)?;
            if is_unreduced {
                unreduced = Some(axes);
            } else {
                replicated = Some(axes);
            }
        }
        if !self.eat(Tok::Greater) {
            return Err(self.expected_in("',' or '>'", CTX));
        }
        Ok(TensorSharding {
            mesh,
            dims,
            replicated: replicated.unwrap_or_default(),
            unreduced: unreduced.unwrap_or_default(),
            unreduced_op,
        })
    }

    /// `#sdy.sharding<...>` (the `#sdy.sharding` prefix may be omitted).
    pub(crate) fn parse_sharding_attr(&mut self) -> PResult<TensorSharding> {
        if self.at(Tok::Hash) {
            if self.text() != "#sdy.sharding" {
                return Err(self.expected_in("#sdy.sharding<...>", "sdy.sharding attribute"));
            }
            self.bump();
        }
        self.parse_sharding_body()
    }

    /// `#sdy.sharding_per_value<[<...>, <...>]>`.
    pub(crate) fn parse_sharding_per_value(&mut self) -> PResult<Vec<TensorSharding>> {
        const CTX: &str = "sdy.sharding_per_value";
        if !(self.at(Tok::Hash) && self.text() == "#sdy.sharding_per_value") {
            return Err(self.expected_in(
                "#sdy.sharding_per_value<[...]>",
                "op sdy.sharding attribute",
            ));
        }
        self.bump();
        self.expect(Tok::Less, CTX)?;
        self.expect(Tok::LBracket, CTX)?;
        let mut out = Vec::new();
        if !self.eat(Tok::RBracket) {
            loop {
                out.push(self.parse_sharding_body()?);
                if self.eat(Tok::RBracket) {
                    break;
                }
                if !self.eat(Tok::Comma) {
                    return Err(self.expected_in("',' or ']'", CTX));
                }
            }
        }
        self.expect(Tok::Greater, CTX)?;
        Ok(out)
    }
}

/// Decimal or `0x` hexadecimal digits as u64.
pub(crate) fn parse_u64(text: &str) -> Option<u64> {
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_full_sharding_syntax() {
        let src = r#"#sdy.sharding<@mesh, [{"x"}, {"z", "y":(2)2, ?}p1, {?}, {}], replicated={"w"}, unreduced={"u"}>"#;
        let s = Cursor::new(src).parse_sharding_attr().expect("parses");
        assert_eq!(s.dims.len(), 4);
        assert_eq!(s.dims[1].priority, Some(1));
        assert!(!s.dims[1].is_closed);
        assert_eq!(s.dims[1].axes[1], AxisRef::sub("y", 2, 2));
        assert!(!s.dims[2].is_closed && s.dims[2].axes.is_empty());
        assert!(s.dims[3].is_closed);
        assert_eq!(s.replicated, vec![AxisRef::full("w")]);
        assert_eq!(s.unreduced, vec![AxisRef::full("u")]);
        assert_eq!(format!("#sdy.sharding{s}"), src);
    }

    #[test]
    fn parses_inline_meshes_and_device_ids() {
        let s = Cursor::new(r#"<mesh<["a"=2]>, [{"a"}p0]>"#)
            .parse_sharding_body()
            .expect("parses");
        assert_eq!(s.mesh, MeshRef::Inline(Mesh::new(&[("a", 2)])));
        assert_eq!(s.dims[0].priority, Some(0));
        let m = Cursor::new(r#"<["x"=2, "y"=1], device_ids=[1, 0]>"#)
            .parse_mesh_body()
            .expect("parses");
        assert_eq!(
            m,
            Mesh::new(&[("x", 2), ("y", 1)]).with_device_ids(vec![1, 0])
        );
        let m = Cursor::new("<[], device_ids=[0]>")
            .parse_mesh_body()
            .expect("parses");
        assert_eq!(m, Mesh::default().with_device_ids(vec![0]));
        let m = Cursor::new(r#"<"x"=4, "y"=2>"#)
            .parse_mesh_body()
            .expect("parses");
        assert_eq!(m, Mesh::new(&[("x", 4), ("y", 2)]));
    }

    #[test]
    fn reports_unterminated_dimension() {
        let e = Cursor::new(r#"<@mesh, [{"x", {}]>"#)
            .parse_sharding_body()
            .expect_err("bad");
        assert_eq!(e.pos.col, 16);
        assert!(e.message.contains("dimension sharding"), "{}", e.message);
    }
}
