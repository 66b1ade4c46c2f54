//! Ops in their pretty (custom assembly) forms as JAX prints them, and the
//! shared last step of every op: arity and type checks, attribute split
//! (`sdy.sharding` → `OpData::shardings`, the rest verbatim), creation in
//! the function and binding of result names.

use crate::diag::{DiagKind, Diagnostic, SrcPos};
use crate::ir::ops::defined_op;
use crate::ir::ops::Arity;
use crate::ir::{BinaryOp, OpKind, Region, TensorType, UnaryOp};
use crate::text::cursor::{Cursor, PResult};
use crate::text::lexer::Tok;
use crate::text::parse_attrs::RawAttr;
use crate::text::parse_types::Signature;
use crate::text::parser::{FuncBuilder, Operand, ResultNames};

/// Everything an op's text said, before it is checked and created.
pub(crate) struct OpParts {
    pub kind: OpKind,
    pub operands: Vec<Operand>,
    /// Operand types as written in the signature (checked against the
    /// operand values' types).
    pub operand_types: Vec<TensorType>,
    pub result_types: Vec<TensorType>,
    pub attrs: Vec<RawAttr>,
    /// Structural regions (their ops already created in the function).
    pub regions: Vec<Region>,
}

/// How many operands an op kind takes: exactly `min` when `max == min`.
fn operand_arity(kind: &OpKind) -> (usize, Option<usize>) {
    let exact = |n| (n, Some(n));
    if let Some(d) = kind.def() {
        return arity_bounds(d.spec().operands);
    }
    match kind {
        OpKind::Unary(_) => exact(1),
        OpKind::Binary(_) => exact(2),
        _ => (0, None),
    }
}

fn arity_bounds(a: Arity) -> (usize, Option<usize>) {
    match a {
        Arity::Exactly(n) => (n, Some(n)),
        Arity::AtLeast(n) => (n, None),
    }
}

/// How many results an op kind has (`None`: as its signature says).
fn result_arity(kind: &OpKind) -> Option<usize> {
    if let Some(d) = kind.def() {
        return match d.spec().results {
            Arity::Exactly(n) => Some(n),
            Arity::AtLeast(_) => None,
        };
    }
    Some(1)
}

/// Operand and result types from a signature for an op with `n` operands:
/// `: t` means every operand and the one result have type `t`.
pub(crate) fn sig_types(
    sig: Signature,
    n: usize,
    op: &str,
    pos: SrcPos,
) -> PResult<(Vec<TensorType>, Vec<TensorType>)> {
    match sig {
        Signature::Single(t) => Ok((vec![t.clone(); n], vec![t])),
        Signature::Functional(ins, outs) => Ok((ins, outs)),
        Signature::Pair(..) => Err(Diagnostic::new(
            DiagKind::Syntax,
            pos,
            format!("'{op}' expects a type `: t` or a function type `: (...) -> ...`"),
        )),
    }
}

impl<'s> Cursor<'s> {
    /// One op (with its result names) appended to `b`.
    pub(crate) fn parse_op(&mut self, b: &mut FuncBuilder<'s>) -> PResult<()> {
        let names = self.parse_result_names()?;
        let pos = self.pos();
        let (name, parts) = match self.kind() {
            Tok::Str => {
                let t = self.text();
                let name = t.get(1..t.len().saturating_sub(1)).unwrap_or("");
                (name, self.parse_generic_op(b, name, pos)?)
            }
            Tok::Ident => {
                let name = self.text();
                (name, self.parse_pretty_op(b, name, pos)?)
            }
            _ => return Err(self.expected("an op name")),
        };
        self.skip_loc()?;
        self.finish_op(b, parts, &names, name, pos)
    }

    /// The pretty form of op `name` (the current token).
    fn parse_pretty_op(
        &mut self,
        b: &mut FuncBuilder<'s>,
        name: &str,
        pos: SrcPos,
    ) -> PResult<OpParts> {
        if let Some(def) = defined_op(name) {
            return match def.spec.pretty {
                Some(format) => self.parse_pretty_defined(b, &def, format, name, pos),
                None => Err(self.err(
                    DiagKind::Syntax,
                    format!(
                        "'{name}' has no pretty form: write it in the generic form \"{name}\"(...)"
                    ),
                )),
            };
        }
        if let Some(u) = UnaryOp::from_full_name(name) {
            self.bump();
            return self.pretty_same_type(b, OpKind::Unary(u), name, pos);
        }
        if let Some(op) = BinaryOp::from_full_name(name) {
            self.bump();
            return self.pretty_same_type(b, OpKind::Binary(op), name, pos);
        }
        // Consume the name; an unknown one fails below at its position.
        self.bump();
        Err(Diagnostic::new(
            DiagKind::UnknownOp,
            pos,
            format!("unknown op '{name}'"),
        ))
    }

    /// `word =` (as in `dims = [...]`, `group_id=0`).
    pub(crate) fn expect_keyword_eq(&mut self, word: &str, op: &str) -> PResult<()> {
        self.expect_ident(word, op)?;
        self.expect(Tok::Equal, op)?;
        Ok(())
    }

    /// `[{attrs}] : signature` after an op's own syntax.
    fn pretty_tail(
        &mut self,
        operands: Vec<Operand>,
        kind: OpKind,
        name: &str,
        pos: SrcPos,
    ) -> PResult<OpParts> {
        let attrs = self.parse_opt_attr_dict()?;
        self.expect(Tok::Colon, name)?;
        let sig = self.parse_signature()?;
        let (operand_types, result_types) = sig_types(sig, operands.len(), name, pos)?;
        Ok(OpParts {
            kind,
            operands,
            operand_types,
            result_types,
            attrs,
            regions: Vec::new(),
        })
    }

    /// `%a, %b [{attrs}] : t` or `: (ta, tb) -> t` (element-wise ops).
    fn pretty_same_type(
        &mut self,
        b: &FuncBuilder<'s>,
        kind: OpKind,
        name: &str,
        pos: SrcPos,
    ) -> PResult<OpParts> {
        let operands = if self.at(Tok::Percent) {
            self.parse_operand_list(b)?
        } else {
            Vec::new()
        };
        self.pretty_tail(operands, kind, name, pos)
    }

    /// Check an op and append it to the function.
    fn finish_op(
        &mut self,
        b: &mut FuncBuilder<'s>,
        parts: OpParts,
        names: &ResultNames<'s>,
        name: &str,
        pos: SrcPos,
    ) -> PResult<()> {
        let n = parts.operands.len();
        let (min, max) = operand_arity(&parts.kind);
        if n < min || max.is_some_and(|m| n > m) {
            let want = match max {
                Some(m) if m == min => format!("{min}"),
                _ => format!("at least {min}"),
            };
            return Err(Diagnostic::new(
                DiagKind::Syntax,
                pos,
                format!("'{name}' expects {want} operand(s), found {n}"),
            ));
        }
        if parts.operand_types.len() != n {
            return Err(Diagnostic::new(
                DiagKind::Syntax,
                pos,
                format!(
                    "'{name}' has {n} operand(s) but its signature lists {} type(s)",
                    parts.operand_types.len()
                ),
            ));
        }
        self.check_operand_types(b, &parts.operands, &parts.operand_types)?;
        let n_results = parts.result_types.len();
        if let Some(want) = result_arity(&parts.kind) {
            if n_results != want {
                return Err(Diagnostic::new(
                    DiagKind::Syntax,
                    pos,
                    format!("'{name}' has {want} result(s) but its signature lists {n_results}"),
                ));
            }
        }
        if names.total() != n_results {
            let at = names.groups.first().map_or(pos, |g| g.2);
            return Err(Diagnostic::new(
                DiagKind::Syntax,
                at,
                format!(
                    "'{name}' produces {n_results} result(s) but {} name(s) are bound to it",
                    names.total()
                ),
            ));
        }
        let mut shardings = None;
        let mut attrs = Vec::new();
        for a in &parts.attrs {
            if a.name == "sdy.sharding" {
                shardings = Some(self.decode_sharding_per_value(a)?);
            } else {
                attrs.push(self.named_attr(a));
            }
        }
        let operands = parts.operands.iter().map(|o| o.value).collect();
        let id = b.func.create_op(parts.kind, operands, parts.result_types);
        b.place(id);
        if !parts.regions.is_empty() {
            b.func.set_regions(id, parts.regions);
        }
        let op = b.func.op_mut(id);
        op.shardings = shardings;
        op.attrs = attrs;
        op.pos = pos;
        let results = op.results.clone();
        self.define_results(b, names, &results)
    }
}
