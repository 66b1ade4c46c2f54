//! Loops and branches in the device program: each region block of the
//! global program becomes a [`Block`] built by the same walk as the top
//! level (local types, collectives, masks), then wrapped in a loop or
//! branch instruction.

use crate::diag::Diagnostic;
use crate::partition::global::{GBlock, GStepKind};
use crate::partition::local::builder::{internal, DeviceBuilder};
use crate::partition::program::regions::{Block, BranchInstr, LoopInstr};
use crate::partition::program::{Instr, LocalId};

impl DeviceBuilder<'_> {
    /// A `Loop` or `Branch` step.
    pub(super) fn structured(&mut self, i: usize) -> Result<(), Diagnostic> {
        let step = &self.prog.steps[i];
        let cause = step.cause.clone();
        match &step.kind {
            GStepKind::Loop {
                cond,
                body,
                trip_count,
            } => {
                let inits = self.locals(&step.operands)?;
                let cond = self.block(cond)?;
                let body = self.block(body)?;
                let results = self.locals(&step.results)?;
                self.instrs.push(Instr::Loop(Box::new(LoopInstr {
                    inits,
                    cond,
                    body,
                    results,
                    trip_count: *trip_count,
                    step: i,
                    cause,
                })));
            }
            GStepKind::Branch { branches } => {
                let index = self.local(step.operands[0])?;
                let blocks = branches
                    .iter()
                    .map(|b| self.block(b))
                    .collect::<Result<Vec<_>, _>>()?;
                let results = self.locals(&step.results)?;
                self.instrs.push(Instr::Branch(Box::new(BranchInstr {
                    index,
                    branches: blocks,
                    results,
                    step: i,
                    cause,
                })));
            }
            _ => {
                return Err(internal(
                    cause.pos,
                    format!("{}: not a loop or branch", cause.op),
                ))
            }
        }
        Ok(())
    }

    fn locals(&mut self, gs: &[usize]) -> Result<Vec<LocalId>, Diagnostic> {
        gs.iter().map(|&g| self.local(g)).collect()
    }

    /// The instructions of one region, built apart from the enclosing ones.
    /// Masks made inside are forgotten after it: their values only exist
    /// inside.
    fn block(&mut self, b: &GBlock) -> Result<Block, Diagnostic> {
        let outer = std::mem::take(&mut self.instrs);
        let masks = self.masks.clone();
        let args = self.locals(&b.args)?;
        for &s in &b.steps {
            self.step(s)?;
        }
        let mut results = Vec::with_capacity(b.results.len());
        for &r in &b.results {
            let l = self.map[r].ok_or_else(|| {
                internal(
                    crate::diag::SrcPos::UNKNOWN,
                    format!("{} is yielded but never computed", self.names[r]),
                )
            })?;
            results.push(l);
        }
        let instrs = std::mem::replace(&mut self.instrs, outer);
        self.masks = masks;
        Ok(Block {
            args,
            instrs,
            results,
        })
    }
}
