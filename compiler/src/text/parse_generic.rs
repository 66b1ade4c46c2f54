//! The generic op form `"dialect.op"(%a, %b) <{props}> ({region}) {attrs}
//! : (types) -> types`, with StableHLO's attribute names
//! (`broadcast_dimensions = array<i64: ...>`, `comparison_direction =
//! #stablehlo<comparison_direction GT>`, ...). Inherent attributes may be
//! in the properties `<{...}>` or, in older printings, in the dictionary.

use crate::diag::{DiagKind, Diagnostic, SrcPos};
use crate::ir::ops::defined_op;
use crate::ir::{BinaryOp, OpKind, UnaryOp};
use crate::text::cursor::{Cursor, PResult};
use crate::text::lexer::Tok;
use crate::text::parse_ops::OpParts;
use crate::text::parser::FuncBuilder;

pub(crate) fn elementwise_kind(name: &str) -> Option<OpKind> {
    UnaryOp::from_full_name(name)
        .map(OpKind::Unary)
        .or_else(|| BinaryOp::from_full_name(name).map(OpKind::Binary))
}

impl<'s> Cursor<'s> {
    /// A generic op; the current token is its quoted name `name`.
    pub(crate) fn parse_generic_op(
        &mut self,
        b: &mut FuncBuilder<'s>,
        name: &str,
        pos: SrcPos,
    ) -> PResult<OpParts> {
        if let Some(def) = defined_op(name) {
            return self.parse_generic_defined(b, &def, name, pos);
        }
        let Some(kind) = elementwise_kind(name) else {
            return Err(Diagnostic::new(
                DiagKind::UnknownOp,
                pos,
                format!("unknown op '{name}'"),
            ));
        };
        self.bump();
        self.expect(Tok::LParen, name)?;
        let operands = if self.eat(Tok::RParen) {
            Vec::new()
        } else {
            let ops = self.parse_operand_list(b)?;
            self.expect(Tok::RParen, name)?;
            ops
        };
        let mut attrs = Vec::new();
        if self.at(Tok::Less) && self.peek_kind(1) == Tok::LBrace {
            self.bump();
            attrs = self.parse_attr_dict()?;
            self.expect(Tok::Greater, "op properties")?;
        }
        if self.at(Tok::LParen) {
            return Err(self.err(
                DiagKind::Unsupported,
                format!("'{name}' cannot have regions"),
            ));
        }
        attrs.extend(self.parse_opt_attr_dict()?);
        self.expect(Tok::Colon, name)?;
        let (operand_types, result_types) = self.parse_function_type()?;
        Ok(OpParts {
            kind,
            operands,
            operand_types,
            result_types,
            attrs,
            regions: Vec::new(),
        })
    }
}
