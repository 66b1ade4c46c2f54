//! Merging constants back (Shardy's `ConstantOrScalarMergerPass`): after
//! propagation, copies made by constant splitting that ended up identical
//! (same value, type, attributes and sharding) are one op again, and so are
//! identical broadcasts of one scalar.

use std::collections::HashMap;

use crate::ir::{Function, OpId, OpKind, Value};
use crate::propagation::blocks;

/// Whether two ops are interchangeable for merging.
fn same(f: &Function, a: OpId, b: OpId) -> bool {
    let (x, y) = (f.op(a), f.op(b));
    x.kind == y.kind
        && x.operands == y.operands
        && x.shardings == y.shardings
        && x.attrs == y.attrs
        && x.results.len() == y.results.len()
        && x.results
            .iter()
            .zip(&y.results)
            .all(|(&r, &s)| f.ty(r) == f.ty(s))
}

/// Merge identical constants and identical broadcasts of a scalar in `f`,
/// each block on its own (a copy inside a region may only stand for
/// copies in the same region).
pub fn merge_constants(f: &mut Function) {
    let mut replace: Vec<Option<Value>> = vec![None; f.values.len()];
    let mut erased = vec![false; f.ops.len()];
    let mut any = false;
    for b in blocks::blocks(f) {
        // Candidates bucketed by a cheap key; compared in full within a
        // bucket.
        let mut buckets: HashMap<(u8, String, Option<Value>), Vec<OpId>> = HashMap::new();
        let body = blocks::ops(f, b).to_vec();
        for &id in &body {
            // Earlier merges apply before this op is compared.
            for o in &mut f.op_mut(id).operands {
                if let Some(Some(k)) = replace.get(o.index()) {
                    *o = *k;
                }
            }
            let op = f.op(id);
            let key = match &op.kind {
                OpKind::Constant(_) => {
                    let ty = op.results.first().map(|&r| f.ty(r).to_string());
                    (0u8, ty.unwrap_or_default(), None)
                }
                OpKind::BroadcastInDim(_)
                    if op.operands.len() == 1 && f.ty(op.operands[0]).rank() == 0 =>
                {
                    let ty = op.results.first().map(|&r| f.ty(r).to_string());
                    (1u8, ty.unwrap_or_default(), Some(op.operands[0]))
                }
                _ => continue,
            };
            let bucket = buckets.entry(key).or_default();
            match bucket.iter().copied().find(|&c| same(f, c, id)) {
                Some(kept) => {
                    for (&r, &k) in op.results.iter().zip(&f.op(kept).results) {
                        replace[r.index()] = Some(k);
                    }
                    erased[id.index()] = true;
                    any = true;
                }
                None => bucket.push(id),
            }
        }
    }
    if !any {
        return;
    }
    // Region returns and ops of regions visited before a merge in an
    // enclosing block read the kept copy too.
    f.replace_uses(&replace);
    blocks::retain_ops(f, |_, id| !erased[id.index()]);
}
