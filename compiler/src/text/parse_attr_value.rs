//! Reading attribute values into [`Attr`] trees, for op definitions to
//! decode (`crate::ir::ops`). Values of a shape this file does not know are
//! kept as [`Attr::Opaque`] text rather than rejected: whether a value is
//! acceptable is the op definition's call.

use crate::diag::DiagKind;
use crate::ir::attr::Attr;
use crate::text::cursor::{Cursor, PResult, TokRange};
use crate::text::lexer::Tok;
use crate::text::parse_attrs::RawAttr;

/// Attribute values nest at most this deep (hostile input must not
/// overflow the stack).
const MAX_DEPTH: usize = 64;

impl<'s> Cursor<'s> {
    /// The value of a dictionary entry as a tree (`Attr::Unit` for a unit
    /// entry).
    pub(crate) fn attr_value_of(&mut self, raw: &RawAttr) -> PResult<Attr> {
        let Some(r) = raw.value else {
            return Ok(Attr::Unit);
        };
        let what = format!("attribute '{}'", raw.name);
        self.within(r, &what, |c| c.parse_attr_value(0))
    }

    /// One attribute value at the cursor.
    pub(crate) fn parse_attr_value(&mut self, depth: usize) -> PResult<Attr> {
        if depth > MAX_DEPTH {
            return Err(self.err(DiagKind::Syntax, "attribute value nested too deeply"));
        }
        match self.kind() {
            Tok::Int | Tok::Minus
                if self.peek_kind(usize::from(self.at(Tok::Minus))) == Tok::Int =>
            {
                let value = self.parse_int("attribute value")?;
                let ty = if self.at(Tok::Colon) && self.peek_kind(1) == Tok::Ident {
                    self.bump();
                    let t = self.text().to_string();
                    self.bump();
                    Some(t)
                } else {
                    None
                };
                Ok(Attr::Int { value, ty })
            }
            Tok::Str => Ok(Attr::Str(self.parse_string("attribute value")?)),
            Tok::At => Ok(Attr::Symbol(self.parse_symbol("attribute value")?)),
            Tok::LBracket => {
                self.bump();
                let mut items = Vec::new();
                if !self.eat(Tok::RBracket) {
                    loop {
                        items.push(self.parse_attr_value(depth + 1)?);
                        if self.eat(Tok::RBracket) {
                            break;
                        }
                        if !self.eat(Tok::Comma) {
                            return Err(self.expected_in("',' or ']'", "list attribute"));
                        }
                    }
                }
                Ok(Attr::List(items))
            }
            Tok::LBrace => {
                let raw = self.parse_attr_dict()?;
                let mut entries = Vec::with_capacity(raw.len());
                for a in &raw {
                    let v = match a.value {
                        None => Attr::Unit,
                        Some(r) => {
                            self.within(r, "dictionary entry", |c| c.parse_attr_value(depth + 1))?
                        }
                    };
                    entries.push((a.name.clone(), v));
                }
                Ok(Attr::Dict(entries))
            }
            Tok::Ident if self.text() == "true" || self.text() == "false" => {
                let b = self.text() == "true";
                self.bump();
                Ok(Attr::Bool(b))
            }
            Tok::Ident if self.text() == "array" && self.peek_kind(1) == Tok::Less => {
                self.dense_array()
            }
            Tok::Ident if self.text() == "dense" && self.peek_kind(1) == Tok::Less => {
                let (literal, ty) = self.parse_dense_with_type()?;
                Ok(Attr::Dense { literal, ty })
            }
            Tok::Ident if self.peek_kind(1) != Tok::Less => {
                let s = self.text().to_string();
                self.bump();
                Ok(Attr::Ident(s))
            }
            Tok::Hash if self.text() == "#sdy.sharding_per_value" => {
                Ok(Attr::Shardings(self.parse_sharding_per_value()?))
            }
            Tok::Hash if self.text() == "#sdy.sharding" => {
                Ok(Attr::Sharding(self.parse_sharding_attr()?))
            }
            Tok::Hash
                if self.text() == "#sdy"
                    && self.peek_kind(1) == Tok::Less
                    && self.peek_text(2) == "axis_ref_list" =>
            {
                // `#sdy`, `<`, `axis_ref_list`.
                self.bump();
                self.bump();
                self.bump();
                let axes = self.parse_axis_set("axis_ref_list")?;
                self.expect(Tok::Greater, "#sdy<axis_ref_list...>")?;
                Ok(Attr::AxisRefs(axes))
            }
            Tok::Hash
                if self.text() == "#sdy"
                    && self.peek_kind(1) == Tok::Less
                    && self.peek_text(2) == "manual_axes" =>
            {
                // `#sdy`, `<`, `manual_axes`.
                self.bump();
                self.bump();
                self.bump();
                let axes = self.parse_axis_name_set("manual_axes")?;
                self.expect(Tok::Greater, "#sdy<manual_axes...>")?;
                Ok(Attr::ManualAxes(axes))
            }
            Tok::Hash if self.peek_kind(1) == Tok::Less => {
                let start = self.idx;
                match self.dialect_attr(depth) {
                    Ok(a) => Ok(a),
                    Err(_) => {
                        self.idx = start;
                        self.opaque()
                    }
                }
            }
            _ => self.opaque(),
        }
    }

    /// `{"x", "y"}`: a set of mesh axis names (`manual_axes`).
    pub(crate) fn parse_axis_name_set(&mut self, context: &str) -> PResult<Vec<String>> {
        self.expect(Tok::LBrace, context)?;
        let mut out = Vec::new();
        if self.eat(Tok::RBrace) {
            return Ok(out);
        }
        loop {
            out.push(self.parse_string(context)?);
            if self.eat(Tok::RBrace) {
                return Ok(out);
            }
            if !self.eat(Tok::Comma) {
                return Err(self.expected_in("',' or '}'", context));
            }
        }
    }

    /// `[<@mesh, [...]>, ...]`: the shardings of a pretty form.
    pub(crate) fn parse_sharding_list(
        &mut self,
        context: &str,
    ) -> PResult<Vec<crate::sharding::TensorSharding>> {
        self.expect(Tok::LBracket, context)?;
        let mut out = Vec::new();
        if self.eat(Tok::RBracket) {
            return Ok(out);
        }
        loop {
            out.push(self.parse_sharding_body()?);
            if self.eat(Tok::RBracket) {
                return Ok(out);
            }
            if !self.eat(Tok::Comma) {
                return Err(self.expected_in("',' or ']'", context));
            }
        }
    }

    /// `array<i64: 1, 2>`, `array<i1: true>`, `array<i64>`.
    fn dense_array(&mut self) -> PResult<Attr> {
        const CTX: &str = "array<...> attribute";
        self.bump();
        self.expect(Tok::Less, CTX)?;
        if self.kind() != Tok::Ident {
            return Err(self.expected_in("an element type", CTX));
        }
        let elem = self.text().to_string();
        self.bump();
        let mut values = Vec::new();
        if self.eat(Tok::Colon) {
            loop {
                let v = match self.kind() {
                    Tok::Ident if self.text() == "true" => {
                        self.bump();
                        1
                    }
                    Tok::Ident if self.text() == "false" => {
                        self.bump();
                        0
                    }
                    _ => self.parse_int(CTX)?,
                };
                values.push(v);
                if !self.eat(Tok::Comma) {
                    break;
                }
            }
        }
        self.expect(Tok::Greater, CTX)?;
        Ok(Attr::DenseArray { elem, values })
    }

    /// `#dialect<keyword VALUE>` or `#dialect.name<key = value, ...>`.
    fn dialect_attr(&mut self, depth: usize) -> PResult<Attr> {
        let name = self.text().to_string();
        self.bump();
        self.expect(Tok::Less, &name)?;
        if self.kind() == Tok::Ident && self.peek_kind(1) == Tok::Ident {
            let keyword = self.text().to_string();
            self.bump();
            let value = self.text().to_string();
            self.bump();
            self.expect(Tok::Greater, &name)?;
            return Ok(Attr::Enum {
                dialect: name,
                keyword,
                value,
            });
        }
        let mut params = Vec::new();
        if !self.eat(Tok::Greater) {
            loop {
                if self.kind() != Tok::Ident {
                    return Err(self.expected_in("a parameter name", &name));
                }
                let key = self.text().to_string();
                self.bump();
                self.expect(Tok::Equal, &name)?;
                params.push((key, self.parse_attr_value(depth + 1)?));
                if self.eat(Tok::Greater) {
                    break;
                }
                if !self.eat(Tok::Comma) {
                    return Err(self.expected_in("',' or '>'", &name));
                }
            }
        }
        Ok(Attr::Params { name, params })
    }

    /// A value of a shape not interpreted here, as written.
    fn opaque(&mut self) -> PResult<Attr> {
        let r: TokRange = self.capture_value("attribute value")?;
        Ok(Attr::Opaque(self.range_text(r).to_string()))
    }
}
