//! `stablehlo.reduce` in its three printed forms: the compact
//! `applies stablehlo.add` form, the `reducer(%a: t, %b: t) { ... }` form and
//! the generic region `({ ^bb0(%a: t, %b: t): ... })`.
//!
//! meshrun represents a reduce body only as a [`ReduceKind`], so a region
//! must be exactly one such binary op of the two block arguments followed by
//! `stablehlo.return` of its result; anything else is unsupported.

use crate::diag::{DiagKind, Diagnostic, SrcPos};
use crate::ir::{BinaryOp, Function, OpKind, ReduceKind, TensorType};
use crate::text::cursor::{Cursor, PResult};
use crate::text::lexer::Tok;
use crate::text::parse_computation::MAX_REGION_DEPTH;
use crate::text::parse_ops::OpParts;
use crate::text::parser::{FuncBuilder, Operand};

const RETURNS: &[&str] = &["stablehlo.return"];

fn unsupported_body(pos: SrcPos) -> Diagnostic {
    Diagnostic::new(
        DiagKind::Unsupported,
        pos,
        "body of 'stablehlo.reduce' must be a single add, multiply, maximum, minimum, and or or \
         of its two block arguments (other reduce bodies are not supported)",
    )
}

impl<'s> Cursor<'s> {
    /// The pretty form after `stablehlo.reduce`:
    /// `(%x init: %c) applies stablehlo.add across dimensions = [1] {attrs} : sig`
    /// or `(%x init: %c) across dimensions = [1] {attrs} : sig reducer(...) {...}`.
    pub(crate) fn pretty_reduce(
        &mut self,
        b: &mut FuncBuilder<'s>,
        name: &str,
        pos: SrcPos,
    ) -> PResult<OpParts> {
        self.expect(Tok::LParen, name)?;
        let input = self.parse_operand(b)?;
        self.expect_ident("init", name)?;
        self.expect(Tok::Colon, name)?;
        let init = self.parse_operand(b)?;
        self.expect(Tok::RParen, name)?;
        if self.at(Tok::Comma) && self.peek_kind(1) == Tok::LParen {
            self.bump();
            return Err(self.err(
                DiagKind::Unsupported,
                "'stablehlo.reduce' with several inputs is not supported",
            ));
        }
        let mut kind = None;
        if self.eat_ident("applies") {
            let op_pos = self.pos();
            if self.kind() != Tok::Ident {
                return Err(self.expected_in("an op name after 'applies'", name));
            }
            let applied = self.text();
            kind = applied
                .strip_prefix("stablehlo.")
                .and_then(BinaryOp::from_name)
                .and_then(ReduceKind::from_binary_op);
            if kind.is_none() {
                return Err(Diagnostic::new(
                    DiagKind::Unsupported,
                    op_pos,
                    format!("'stablehlo.reduce' applying '{applied}' is not supported (add, multiply, maximum, minimum, and, or)"),
                ));
            }
            self.bump();
        }
        self.expect_ident("across", name)?;
        self.expect_keyword_eq("dimensions", name)?;
        let dims = self.parse_int_list("dimensions")?;
        let attrs = self.parse_opt_attr_dict()?;
        self.expect(Tok::Colon, name)?;
        let (operand_types, result_types) = self.parse_function_type()?;
        let kind = match kind {
            Some(k) => k,
            None => {
                self.expect_ident("reducer", name)?;
                let args = self.parse_reducer_args()?;
                self.parse_reduce_body(args, pos)?
            }
        };
        Ok(OpParts {
            kind: OpKind::Reduce { dims, kind },
            operands: vec![input, init],
            operand_types,
            result_types,
            attrs,
            regions: Vec::new(),
        })
    }

    /// `(%a: t, %b: t)` after `reducer` (one pair per input).
    fn parse_reducer_args(&mut self) -> PResult<Vec<(&'s str, SrcPos, TensorType)>> {
        self.expect(Tok::LParen, "reducer")?;
        let args = self.parse_block_arg_list()?;
        if self.at(Tok::LParen) {
            return Err(self.err(
                DiagKind::Unsupported,
                "'stablehlo.reduce' with several inputs is not supported",
            ));
        }
        Ok(args)
    }

    /// `%a: t [loc(..)], ... )` (the `(` already consumed).
    pub(crate) fn parse_block_arg_list(&mut self) -> PResult<Vec<(&'s str, SrcPos, TensorType)>> {
        let mut args = Vec::new();
        if self.eat(Tok::RParen) {
            return Ok(args);
        }
        loop {
            if !self.at(Tok::Percent) {
                return Err(self.expected_in("a block argument (%...)", "region"));
            }
            let arg = (self.text(), self.pos());
            self.bump();
            self.expect(Tok::Colon, "block argument")?;
            let ty = self.parse_type()?;
            self.skip_loc()?;
            args.push((arg.0, arg.1, ty));
            if self.eat(Tok::RParen) {
                return Ok(args);
            }
            if !self.eat(Tok::Comma) {
                return Err(self.expected_in("',' or ')'", "block arguments"));
            }
        }
    }

    /// The generic region `({ ^bb0(%a: t, %b: t): ops })` of a reduce with
    /// `n_operands` operands.
    pub(crate) fn parse_generic_reduce_region(
        &mut self,
        name: &str,
        n_operands: usize,
        pos: SrcPos,
    ) -> PResult<ReduceKind> {
        if n_operands != 2 {
            return Err(Diagnostic::new(
                DiagKind::Unsupported,
                pos,
                format!("'{name}' with several inputs is not supported"),
            ));
        }
        self.expect(Tok::LParen, "region list")?;
        let args = if self.at(Tok::LBrace) && self.peek_kind(1) == Tok::Caret {
            self.bump();
            self.bump();
            self.expect(Tok::LParen, "block header")?;
            let args = self.parse_block_arg_list()?;
            self.expect(Tok::Colon, "block header")?;
            args
        } else {
            return Err(self.expected_in("'{' and a block header '^bb0(...):'", "reduce region"));
        };
        let kind = self.parse_reduce_body_ops(args, pos)?;
        self.expect(Tok::RBrace, "region")?;
        if self.at(Tok::Comma) {
            return Err(self.err(DiagKind::Unsupported, format!("'{name}' has one region")));
        }
        self.expect(Tok::RParen, "region list")?;
        Ok(kind)
    }

    /// `{ ops stablehlo.return %r : t }` of the `reducer` form.
    fn parse_reduce_body(
        &mut self,
        args: Vec<(&'s str, SrcPos, TensorType)>,
        pos: SrcPos,
    ) -> PResult<ReduceKind> {
        self.expect(Tok::LBrace, "reducer body")?;
        let kind = self.parse_reduce_body_ops(args, pos)?;
        self.expect(Tok::RBrace, "reducer body")?;
        Ok(kind)
    }

    /// Parse the body's ops into a scratch function whose arguments are the
    /// block arguments, then recognise the combiner.
    fn parse_reduce_body_ops(
        &mut self,
        args: Vec<(&'s str, SrcPos, TensorType)>,
        pos: SrcPos,
    ) -> PResult<ReduceKind> {
        let body_pos = self.pos();
        if args.len() != 2 {
            return Err(unsupported_body(pos));
        }
        if self.region_depth >= MAX_REGION_DEPTH {
            return Err(self.err(DiagKind::Unsupported, "regions nested too deeply"));
        }
        let tys = args.iter().map(|a| a.2.clone()).collect();
        let mut scratch = FuncBuilder::new(Function::new("reduce_body", tys));
        for (i, (name, arg_pos, _)) in args.into_iter().enumerate() {
            let v = scratch.func.args[i];
            scratch.define(name, v, 1, arg_pos)?;
        }
        self.region_depth += 1;
        let body = self.parse_block_ops(&mut scratch, RETURNS);
        self.region_depth -= 1;
        let (returns, _) = body?;
        recognise_combiner(&scratch.func, &returns).ok_or_else(|| unsupported_body(body_pos))
    }
}

/// The reduce kind of a body that is exactly `r = op(a0, a1); return r`.
fn recognise_combiner(f: &Function, returns: &[Operand]) -> Option<ReduceKind> {
    let [id] = f.body.as_slice() else {
        return None;
    };
    let op = f.op(*id);
    let OpKind::Binary(bin) = op.kind else {
        return None;
    };
    let kind = ReduceKind::from_binary_op(bin)?;
    let (a0, a1) = (*f.args.first()?, *f.args.get(1)?);
    let in_order = op.operands == [a0, a1] || op.operands == [a1, a0];
    let returns_result = matches!(returns, [r] if op.results == [r.value]);
    (in_order && returns_result).then_some(kind)
}
