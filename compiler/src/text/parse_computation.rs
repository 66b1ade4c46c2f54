//! Scalar bodies (`ir::Computation`): the regions of sort, scatter,
//! reduce_window, ... in the generic form's region list
//! `({ ^bb0(%a: tensor<f32>, %b: tensor<f32>): ops stablehlo.return %r : t },
//! ...)`.
//!
//! A body is read as a function of its own: its names live in a scope of
//! their own, so a name from the enclosing function is undefined inside
//! (JAX never captures values in these bodies; meshrun does not support
//! it and says so).

use crate::diag::{DiagKind, SrcPos};
use crate::ir::{Computation, Function, OpId, Region, TensorType};
use crate::text::cursor::{Cursor, PResult};
use crate::text::lexer::Tok;
use crate::text::parser::FuncBuilder;

/// Bodies nest at most this deep (a sort comparator that sorts...): bounds
/// recursion on hostile input.
pub(crate) const MAX_REGION_DEPTH: usize = 16;

pub(crate) const TERMINATORS: &[&str] = &["stablehlo.return", "sdy.return"];

/// A block argument as written: name, position, type.
pub(crate) type BlockArg<'s> = (&'s str, SrcPos, TensorType);

impl<'s> Cursor<'s> {
    /// `({...}, {...})`: exactly `count` bodies.
    pub(crate) fn parse_computation_list(
        &mut self,
        outer: &mut FuncBuilder<'s>,
        op: &str,
        count: usize,
        pos: SrcPos,
    ) -> PResult<Vec<Computation>> {
        let mut out = Vec::new();
        if !self.at(Tok::LParen) {
            if count == 0 {
                return Ok(out);
            }
            return Err(self.err(
                DiagKind::Syntax,
                format!("'{op}' needs {count} region(s) `({{ ^bb0(...): ... }})`"),
            ));
        }
        self.bump();
        loop {
            out.push(self.parse_computation(outer, op)?);
            if self.eat(Tok::RParen) {
                break;
            }
            self.expect(Tok::Comma, "region list")?;
        }
        if out.len() != count {
            return Err(crate::diag::Diagnostic::new(
                DiagKind::Syntax,
                pos,
                format!("'{op}' has {count} region(s), found {}", out.len()),
            ));
        }
        Ok(out)
    }

    /// `{ [^bb0(%a: t, ...):] ops stablehlo.return ... }`.
    pub(crate) fn parse_computation(
        &mut self,
        outer: &mut FuncBuilder<'s>,
        op: &str,
    ) -> PResult<Computation> {
        self.expect(Tok::LBrace, "region")?;
        let mut args = Vec::new();
        if self.at(Tok::Caret) {
            self.bump();
            self.expect(Tok::LParen, "block header")?;
            args = self.parse_block_arg_list()?;
            self.expect(Tok::Colon, "block header")?;
        }
        self.parse_computation_rest(outer, op, args)
    }

    /// The ops and the closing `}` of a body whose `{` and block arguments
    /// `args` were read already.
    pub(crate) fn parse_computation_rest(
        &mut self,
        outer: &mut FuncBuilder<'s>,
        op: &str,
        args: Vec<BlockArg<'s>>,
    ) -> PResult<Computation> {
        if self.region_depth >= MAX_REGION_DEPTH {
            return Err(self.err(DiagKind::Unsupported, "regions nested too deeply"));
        }
        let tys = args.iter().map(|a| a.2.clone()).collect();
        let mut b = FuncBuilder::new(Function::new(format!("{op}.region"), tys));
        for (i, (name, arg_pos, _)) in args.into_iter().enumerate() {
            let v = b.func.args[i];
            b.define(name, v, 1, arg_pos)?;
        }
        self.region_depth += 1;
        let body = self.parse_block_ops(&mut b, TERMINATORS);
        self.region_depth -= 1;
        let (returns, return_pos) = body?;
        self.expect(Tok::RBrace, "region")?;
        b.func
            .set_returns(returns.iter().map(|o| o.value).collect());
        b.func.return_pos = return_pos;
        outer.calls.append(&mut b.calls);
        Ok(Computation::new(b.func))
    }

    /// `%a: t [loc(..)], ... )` (the `(` already consumed).
    pub(crate) fn parse_block_arg_list(&mut self) -> PResult<Vec<BlockArg<'s>>> {
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
}

impl<'s> Cursor<'s> {
    /// `({...}, {...})` of structural regions: as many as `count` allows.
    pub(crate) fn parse_region_list(
        &mut self,
        b: &mut FuncBuilder<'s>,
        op: &str,
        count: crate::ir::ops::Arity,
        pos: SrcPos,
    ) -> PResult<Vec<Region>> {
        let mut out = Vec::new();
        if self.eat(Tok::LParen) {
            loop {
                out.push(self.parse_region(b, out.len())?);
                if self.eat(Tok::RParen) {
                    break;
                }
                self.expect(Tok::Comma, "region list")?;
            }
        }
        if !count.allows(out.len()) {
            return Err(crate::diag::Diagnostic::new(
                DiagKind::Syntax,
                pos,
                format!("'{op}' has {count} region(s), found {}", out.len()),
            ));
        }
        Ok(out)
    }

    /// `{ [^bb0(%a: t, ...):] ops stablehlo.return ... }`: a structural
    /// region (number `index` of its op) whose ops join the function and
    /// may use the names visible around the op.
    pub(crate) fn parse_region(
        &mut self,
        b: &mut FuncBuilder<'s>,
        index: usize,
    ) -> PResult<Region> {
        self.expect(Tok::LBrace, "region")?;
        let mut header = Vec::new();
        if self.at(Tok::Caret) {
            self.bump();
            self.expect(Tok::LParen, "block header")?;
            header = self.parse_block_arg_list()?;
            self.expect(Tok::Colon, "block header")?;
        }
        self.parse_region_body(b, index, header, TERMINATORS)
    }

    /// A region's ops after its `{` (and header): `args` are its block
    /// arguments as named in the text; reads through the closing `}`.
    pub(crate) fn parse_region_body(
        &mut self,
        b: &mut FuncBuilder<'s>,
        index: usize,
        args: Vec<(&'s str, SrcPos, crate::ir::TensorType)>,
        terminators: &[&str],
    ) -> PResult<Region> {
        if self.region_depth >= MAX_REGION_DEPTH {
            return Err(self.err(DiagKind::Unsupported, "regions nested too deeply"));
        }
        b.open_region();
        let mut values = Vec::with_capacity(args.len());
        let mut result = Ok(());
        for (i, (name, arg_pos, ty)) in args.into_iter().enumerate() {
            // The owning op does not exist yet: `Function::set_regions`
            // points the arguments at it once it is created.
            let v = b
                .func
                .new_region_arg(ty, OpId(u32::MAX), index as u32, i as u32);
            values.push(v);
            if result.is_ok() {
                result = b.define(name, v, 1, arg_pos);
            }
        }
        self.region_depth += 1;
        let body = result.and_then(|()| self.parse_block_ops(b, terminators));
        self.region_depth -= 1;
        let ops = b.close_region();
        let (returns, return_pos) = body?;
        self.expect(Tok::RBrace, "region")?;
        Ok(Region {
            args: values,
            body: ops,
            returns: returns.iter().map(|o| o.value).collect(),
            return_pos,
        })
    }
}
