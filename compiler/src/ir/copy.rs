//! Copying ops from one function into another (or into a rebuilt copy of
//! the same one): operands mapped through a value table, structural
//! regions copied with fresh block arguments. Inlining and compaction use
//! it.

use crate::ir::{Function, OpId, Region, Value};

/// Copies ops of `src` into another function, mapping `src`'s values.
pub struct OpCopier<'s> {
    pub src: &'s Function,
    /// The copy of each `src` value made so far (seed it with the values
    /// that stand for `src`'s arguments).
    pub map: Vec<Option<Value>>,
}

/// Regions nest at most this deep in a copy (the parser allows less).
const MAX_DEPTH: usize = 64;

impl<'s> OpCopier<'s> {
    pub fn new(src: &'s Function) -> OpCopier<'s> {
        OpCopier {
            src,
            map: vec![None; src.values.len()],
        }
    }

    /// The copy of `v`, or `Err(v)` if `v` has not been copied (used
    /// before it is defined).
    pub fn lookup(&self, v: Value) -> Result<Value, Value> {
        self.map.get(v.index()).copied().flatten().ok_or(v)
    }

    /// A copy of `src`'s op `id` (attributes, shardings, position, and its
    /// regions) created in `dst` but not placed in its body. `Err(v)`: the
    /// op uses `v` before it is defined.
    pub fn copy_op(&mut self, dst: &mut Function, id: OpId) -> Result<OpId, Value> {
        self.copy_at(dst, id, 0)
    }

    fn copy_at(&mut self, dst: &mut Function, id: OpId, depth: usize) -> Result<OpId, Value> {
        let src = self.src;
        let op = src.op(id);
        let operands = op
            .operands
            .iter()
            .map(|&v| self.lookup(v))
            .collect::<Result<Vec<_>, _>>()?;
        let types = op.results.iter().map(|&r| src.ty(r).clone()).collect();
        let nid = dst.create_op(op.kind.clone(), operands, types);
        if depth < MAX_DEPTH {
            let mut regions = Vec::with_capacity(op.regions.len());
            for (ri, r) in op.regions.iter().enumerate() {
                let mut args = Vec::with_capacity(r.args.len());
                for (ai, &a) in r.args.iter().enumerate() {
                    let v = dst.new_region_arg(src.ty(a).clone(), nid, ri as u32, ai as u32);
                    self.map[a.index()] = Some(v);
                    args.push(v);
                }
                let mut body = Vec::with_capacity(r.body.len());
                for &inner in &r.body {
                    body.push(self.copy_at(dst, inner, depth + 1)?);
                }
                let returns = r
                    .returns
                    .iter()
                    .map(|&v| self.lookup(v))
                    .collect::<Result<Vec<_>, _>>()?;
                regions.push(Region {
                    args,
                    body,
                    returns,
                    return_pos: r.return_pos,
                });
            }
            dst.set_regions(nid, regions);
        }
        let new_op = dst.op_mut(nid);
        new_op.attrs = op.attrs.clone();
        new_op.shardings = op.shardings.clone();
        new_op.pos = op.pos;
        for (&old, &new) in op.results.iter().zip(&dst.op(nid).results.clone()) {
            self.map[old.index()] = Some(new);
        }
        Ok(nid)
    }
}
