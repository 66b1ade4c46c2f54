//! What both reference interpreters (`reference`, whole tensors, and
//! `reference_manual`, a shard_map body per device) need of a function's
//! scopes: the values a region uses, and how deep calls may nest.

use meshrun_compiler::ir::{Function, Region, Value};

/// Calls nested deeper than this are reported instead of overflowing the
/// stack (StableHLO programs from JAX are never recursive).
pub const MAX_CALL_DEPTH: usize = 64;

/// Every value a region (and the regions nested in it) uses.
pub(crate) fn region_uses(f: &Function, r: &Region) -> Vec<Value> {
    let mut out = r.returns.clone();
    let mut stack: Vec<&Region> = vec![r];
    while let Some(r) = stack.pop() {
        out.extend(&r.returns);
        for &id in &r.body {
            let op = f.op(id);
            out.extend(&op.operands);
            stack.extend(&op.regions);
        }
    }
    out
}
