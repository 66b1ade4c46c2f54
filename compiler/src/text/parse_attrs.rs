//! Attribute dictionaries `{name = value, unit_name, ...}` and decoders for
//! the attribute values meshrun interprets (integer arrays, enums, dot
//! dimension numbers, symbols). Values are first captured as token ranges,
//! so uninterpreted ones can be kept verbatim and interpreted ones decoded
//! once the op is known.

use crate::diag::{DiagKind, SrcPos};
use crate::ir::NamedAttr;
use crate::text::cursor::{Cursor, PResult, TokRange};
use crate::text::lexer::Tok;

/// One `name = value` (or unit `name`) entry of a dictionary.
#[derive(Debug, Clone)]
pub(crate) struct RawAttr {
    pub name: String,
    pub pos: SrcPos,
    pub value: Option<TokRange>,
    /// Text to put before the value when it is kept verbatim: the pretty
    /// `algorithm = <...>` of a dot is stored in its generic spelling
    /// `#stablehlo.dot_algorithm<...>`, so both forms give the same IR.
    pub prefix: &'static str,
}

/// Remove and return the attribute called `name`.
pub(crate) fn take_attr(attrs: &mut Vec<RawAttr>, name: &str) -> Option<RawAttr> {
    let i = attrs.iter().position(|a| a.name == name)?;
    Some(attrs.remove(i))
}

impl<'s> Cursor<'s> {
    /// `{ entry, ... }` at the current `{`.
    pub(crate) fn parse_attr_dict(&mut self) -> PResult<Vec<RawAttr>> {
        const CTX: &str = "attribute dictionary";
        self.expect(Tok::LBrace, CTX)?;
        let mut out = Vec::new();
        if self.eat(Tok::RBrace) {
            return Ok(out);
        }
        loop {
            let pos = self.pos();
            let name = match self.kind() {
                Tok::Ident => {
                    let n = self.text().to_string();
                    self.bump();
                    n
                }
                Tok::Str => self.parse_string(CTX)?,
                _ => return Err(self.expected_in("an attribute name", CTX)),
            };
            let value = if self.eat(Tok::Equal) {
                Some(self.capture_value(&format!("attribute '{name}'"))?)
            } else {
                None
            };
            out.push(RawAttr {
                name,
                pos,
                value,
                prefix: "",
            });
            if self.eat(Tok::RBrace) {
                return Ok(out);
            }
            if !self.eat(Tok::Comma) {
                return Err(self.expected_in("',' or '}'", CTX));
            }
        }
    }

    /// An optional dictionary: `{...}` if one is next, else nothing.
    pub(crate) fn parse_opt_attr_dict(&mut self) -> PResult<Vec<RawAttr>> {
        if self.at(Tok::LBrace) {
            self.parse_attr_dict()
        } else {
            Ok(Vec::new())
        }
    }

    /// A dictionary kept whole as source text, braces included.
    pub(crate) fn capture_dict_text(&mut self) -> PResult<String> {
        let start = self.idx;
        self.parse_attr_dict()?;
        Ok(self
            .range_text(TokRange {
                start,
                end: self.idx,
            })
            .to_string())
    }

    /// An uninterpreted attribute, kept verbatim.
    pub(crate) fn named_attr(&self, raw: &RawAttr) -> NamedAttr {
        NamedAttr::new(
            raw.name.clone(),
            raw.value
                .map(|r| format!("{}{}", raw.prefix, self.range_text(r))),
        )
    }

    /// The value of an attribute that must have one.
    fn value_of(&self, raw: &RawAttr) -> PResult<TokRange> {
        raw.value.ok_or_else(|| {
            crate::diag::Diagnostic::new(
                DiagKind::Syntax,
                raw.pos,
                format!("attribute '{}' needs a value", raw.name),
            )
        })
    }

    /// Decode `#sdy.sharding<...>` (function arguments/results and the
    /// `sharding` property of `sdy.sharding_constraint`/`sdy.reshard`).
    pub(crate) fn decode_sharding(
        &mut self,
        raw: &RawAttr,
    ) -> PResult<crate::sharding::TensorSharding> {
        let r = self.value_of(raw)?;
        let what = format!("attribute '{}'", raw.name);
        self.within(r, &what, |c| c.parse_sharding_attr())
    }

    /// Decode `#sdy.sharding_per_value<[...]>` (an op's `sdy.sharding`).
    pub(crate) fn decode_sharding_per_value(
        &mut self,
        raw: &RawAttr,
    ) -> PResult<Vec<crate::sharding::TensorSharding>> {
        let r = self.value_of(raw)?;
        let what = format!("attribute '{}'", raw.name);
        self.within(r, &what, |c| c.parse_sharding_per_value())
    }
}

/// True if `name` can be printed as a bare attribute name.
pub(crate) fn is_bare_attr_name(name: &str) -> bool {
    let mut chars = name.bytes();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == b'_' => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dict_keeps_values_verbatim() {
        let src = r#"{mhlo.num_partitions = 8 : i32, result_layout = dense<[0, 1]> : tensor<2xindex>, unit, "quoted name" = "s"}"#;
        let mut c = Cursor::new(src);
        let attrs = c.parse_attr_dict().expect("parses");
        let named: Vec<NamedAttr> = attrs.iter().map(|a| c.named_attr(a)).collect();
        assert_eq!(
            named,
            vec![
                NamedAttr::new("mhlo.num_partitions", Some("8 : i32".into())),
                NamedAttr::new(
                    "result_layout",
                    Some("dense<[0, 1]> : tensor<2xindex>".into())
                ),
                NamedAttr::new("unit", None),
                NamedAttr::new("quoted name", Some("\"s\"".into())),
            ]
        );
    }

    #[test]
    fn decodes_generic_attribute_values() {
        let src = "{a = array<i64: 1, -2>, b = array<i64>, c = dense<[3, 4]> : tensor<2xi64>, d = 0 : i64, \
                   e = #stablehlo<comparison_direction GT>, \
                   f = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_contracting_dimensions = [1]>, \
                   g = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>], h = @callee}";
        let mut c = Cursor::new(src);
        let attrs = c.parse_attr_dict().expect("parses");
        // Integer arrays, as op definitions decode them.
        let ints = |c: &mut Cursor, a: &RawAttr| {
            let value = c.attr_value_of(a).expect("a value");
            <Vec<i64> as crate::ir::ops::AttrCodec>::decode(&value)
        };
        assert_eq!(ints(&mut c, &attrs[0]), Ok(vec![1, -2]));
        assert_eq!(ints(&mut c, &attrs[1]), Ok(vec![]));
        assert_eq!(ints(&mut c, &attrs[2]), Ok(vec![3, 4]));
        // Integers, likewise (`sdy.sharding_group`'s `group_id`).
        let int = |c: &mut Cursor, a: &RawAttr| {
            let value = c.attr_value_of(a).expect("a value");
            <i64 as crate::ir::ops::AttrCodec>::decode(&value)
        };
        assert_eq!(int(&mut c, &attrs[3]), Ok(0));
        let direction = c.attr_value_of(&attrs[4]).expect("a value");
        assert_eq!(
            <crate::ir::CompareDirection as crate::ir::ops::AttrCodec>::decode(&direction),
            Ok(crate::ir::CompareDirection::Gt)
        );
        let dims = c.attr_value_of(&attrs[5]).expect("a value");
        let dims = <crate::ir::DotDims as crate::ir::ops::AttrCodec>::decode(&dims).expect("dims");
        assert_eq!((dims.lhs_batch, dims.rhs_contract), (vec![0], vec![1]));
        assert!(matches!(
            c.attr_value_of(&attrs[6]),
            Ok(crate::ir::attr::Attr::List(items)) if items.len() == 2
        ));
        assert_eq!(
            c.attr_value_of(&attrs[7]).expect("a value"),
            crate::ir::attr::Attr::Symbol("callee".into())
        );
        assert!(int(&mut c, &attrs[0]).is_err());
    }

    #[test]
    fn bare_names() {
        assert!(is_bare_attr_name("sdy.sharding_rule"));
        assert!(!is_bare_attr_name("has space"));
        assert!(!is_bare_attr_name("1x"));
    }
}
