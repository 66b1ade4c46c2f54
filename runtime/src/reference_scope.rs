//! What the reference interpreter's walk needs of a function's scopes:
//! the values a region uses, when a block's values can be freed, and how
//! deep calls may nest.

use std::collections::HashMap;

use meshrun_compiler::ir::{Function, OpId, Region, Value};

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

/// Per op of the block `ids`: the values defined in the block whose last
/// use in the block it is (a use in an op's regions counts as that op's), so
/// they can be freed right after; values in `keep` and values never used
/// stay. Values from outside the block are never freed here: the block
/// may run again (a loop body) or its caller still needs them.
pub(crate) fn block_last_uses(f: &Function, ids: &[OpId], keep: &[Value]) -> Vec<Vec<Value>> {
    let mut defined = HashMap::new();
    for &id in ids {
        for &r in &f.op(id).results {
            defined.insert(r, None);
        }
    }
    for (pos, &id) in ids.iter().enumerate() {
        let op = f.op(id);
        let used = op
            .operands
            .iter()
            .copied()
            .chain(op.regions.iter().flat_map(|r| region_uses(f, r)));
        for v in used {
            if let Some(at) = defined.get_mut(&v) {
                *at = Some(pos);
            }
        }
    }
    for v in keep {
        defined.remove(v);
    }
    let mut out = vec![Vec::new(); ids.len()];
    for (v, at) in defined {
        if let Some(at) = at {
            out[at].push(v);
        }
    }
    out
}
