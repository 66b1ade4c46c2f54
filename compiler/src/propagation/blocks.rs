//! The blocks of a function — its body and the region of every
//! structural op — for passes that rewrite op lists (constant splitting
//! and merging, dropping sharding groups, applying constraints), so that
//! they treat the ops inside a `while`, `case` or named computation the
//! way they treat the function's own.

use crate::ir::{Function, OpId, Value};

/// One block: the function's body, or region `r` of an op.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Block {
    Body,
    Region(OpId, usize),
}

/// Every block of `f`, outer ones before the regions they contain.
pub fn blocks(f: &Function) -> Vec<Block> {
    let mut out = vec![Block::Body];
    for id in f.all_ops() {
        for r in 0..f.op(id).regions.len() {
            out.push(Block::Region(id, r));
        }
    }
    out
}

/// The ops of block `b` in program order.
pub fn ops(f: &Function, b: Block) -> &[OpId] {
    match b {
        Block::Body => &f.body,
        Block::Region(op, r) => &f.op(op).regions[r].body,
    }
}

/// Replace the ops of block `b`.
pub fn set_ops(f: &mut Function, b: Block, ops: Vec<OpId>) {
    match b {
        Block::Body => f.body = ops,
        Block::Region(op, r) => f.op_mut(op).regions[r].body = ops,
    }
}

/// The values block `b` returns (its terminator's operands).
pub fn returns(f: &Function, b: Block) -> &[Value] {
    match b {
        Block::Body => &f.returns,
        Block::Region(op, r) => &f.op(op).regions[r].returns,
    }
}

/// Replace the values block `b` returns.
pub fn set_returns(f: &mut Function, b: Block, values: Vec<Value>) {
    match b {
        Block::Body => f.returns = values,
        Block::Region(op, r) => f.op_mut(op).regions[r].returns = values,
    }
}

/// Keep only the ops of every block for which `keep` holds.
pub fn retain_ops(f: &mut Function, keep: impl Fn(&Function, OpId) -> bool) {
    for b in blocks(f) {
        let kept: Vec<OpId> = ops(f, b)
            .iter()
            .copied()
            .filter(|&id| keep(f, id))
            .collect();
        set_ops(f, b, kept);
    }
}
