//! Constant splitting (Shardy's `ConstantOrScalarSplitterPass`): every
//! non-constant op gets its own copy of each constant sub-computation it
//! uses (constants, iota, and broadcasts, reshapes, slices and
//! element-wise ops of constants) and of each broadcast of a scalar, so
//! that different users can shard their copies differently. Scalars
//! themselves are shared (they are never sharded). Copies are placed just
//! before the op they copy; the originals are dropped. As in Shardy,
//! every constant is then an `sdy.constant`.
//!
//! The export pass [`crate::propagation::export::merge_constants`] merges
//! copies that ended up identical.

use std::collections::HashMap;

use crate::ir::ops::constant::Constant;
use crate::ir::{ConstantDialect, Function, OpId, OpKind, Value, ValueDef};
use crate::propagation::blocks;

/// Whether an op with only constant operands computes a constant.
fn is_constant_preserving(kind: &OpKind) -> bool {
    kind.is_elementwise()
        || matches!(
            kind,
            OpKind::BroadcastInDim(_) | OpKind::Reshape(_) | OpKind::Slice(_)
        )
}

struct Splitter<'f> {
    f: &'f mut Function,
    constant: Vec<bool>,
    scalar_expansion: Vec<bool>,
    /// Copies to place right before an original op, in creation order.
    before: HashMap<OpId, Vec<OpId>>,
    /// Ops of the original body in order of being classified.
    constant_order: Vec<OpId>,
    expansion_order: Vec<OpId>,
    /// The `sdy.sharding_group` ops of each value of the original body.
    groups_of: HashMap<Value, Vec<OpId>>,
}

/// Split the constant sub-computations of `f` per use, in the body and in
/// the regions of structural ops alike.
pub fn split_constants(f: &mut Function) {
    for id in f.all_ops() {
        if let OpKind::Constant(Constant { dialect, .. }) = &mut f.ops[id.index()].kind {
            *dialect = ConstantDialect::Sdy;
        }
    }
    let n = f.ops.len();
    let mut groups_of: HashMap<Value, Vec<OpId>> = HashMap::new();
    for id in f.all_ops() {
        let op = f.op(id);
        if let (OpKind::ShardingGroup(_), Some(&v)) = (&op.kind, op.operands.first()) {
            groups_of.entry(v).or_default().push(id);
        }
    }
    let mut s = Splitter {
        f,
        constant: vec![false; n],
        scalar_expansion: vec![false; n],
        before: HashMap::new(),
        constant_order: Vec::new(),
        expansion_order: Vec::new(),
        groups_of,
    };
    let body = s.f.body.clone();
    s.walk(&body, 0);
    // The return is a user like any other op.
    let returns = s.f.returns.clone();
    let new_returns = returns.iter().map(|&v| s.copy_if_split(v)).collect();
    s.f.returns = new_returns;
    s.finish();
}

/// Regions nest at most this deep (the parser and `ir::copy` allow less).
const MAX_DEPTH: usize = 64;

impl Splitter<'_> {
    /// Classify the ops of one block in program order, each op before
    /// the ops of its regions; what a region returns is a use too.
    fn walk(&mut self, ids: &[OpId], depth: usize) {
        for &id in ids {
            self.process(id);
            if depth >= MAX_DEPTH {
                continue;
            }
            for r in 0..self.f.op(id).regions.len() {
                let inner = self.f.op(id).regions[r].body.clone();
                self.walk(&inner, depth + 1);
                let returns = self.f.op(id).regions[r].returns.clone();
                let new_returns = returns.iter().map(|&v| self.copy_if_split(v)).collect();
                self.f.op_mut(id).regions[r].returns = new_returns;
            }
        }
    }

    fn def_op(&self, v: Value) -> Option<OpId> {
        match self.f.values.get(v.index())?.def {
            ValueDef::Result { op, .. } => Some(op),
            ValueDef::Arg(_) | ValueDef::RegionArg { .. } => None,
        }
    }

    fn is_split(&self, op: OpId) -> bool {
        self.constant.get(op.index()).copied().unwrap_or(false)
            || self
                .scalar_expansion
                .get(op.index())
                .copied()
                .unwrap_or(false)
    }

    fn process(&mut self, id: OpId) {
        let op = self.f.op(id);
        if matches!(op.kind, OpKind::ShardingGroup(_)) {
            return;
        }
        let is_constant = match &op.kind {
            OpKind::Constant(_) | OpKind::Iota(_) => true,
            kind => {
                is_constant_preserving(kind)
                    && op.operands.iter().all(|&v| {
                        self.def_op(v)
                            .is_some_and(|d| self.constant.get(d.index()).copied().unwrap_or(false))
                    })
            }
        };
        if is_constant {
            self.constant[id.index()] = true;
            self.constant_order.push(id);
            return;
        }
        let is_scalar_expansion = matches!(op.kind, OpKind::BroadcastInDim(_))
            && op
                .operands
                .first()
                .is_some_and(|&v| self.f.ty(v).rank() == 0);
        if is_scalar_expansion {
            self.scalar_expansion[id.index()] = true;
            self.expansion_order.push(id);
            return;
        }
        let operands = self.f.op(id).operands.clone();
        let new_operands = operands.iter().map(|&v| self.copy_if_split(v)).collect();
        self.f.op_mut(id).operands = new_operands;
    }

    /// `v` itself, or a fresh copy of its sub-computation if it is a
    /// constant or a scalar broadcast.
    fn copy_if_split(&mut self, v: Value) -> Value {
        match self.def_op(v) {
            Some(d) if self.is_split(d) => {
                let mut mapping = HashMap::new();
                self.copy(v, &mut mapping);
                mapping.get(&v).copied().unwrap_or(v)
            }
            _ => v,
        }
    }

    fn copy(&mut self, v: Value, mapping: &mut HashMap<Value, Value>) {
        if self.f.ty(v).rank() == 0 || mapping.contains_key(&v) {
            return;
        }
        let Some(op) = self.def_op(v) else {
            return;
        };
        let data = self.f.op(op).clone();
        for &operand in &data.operands {
            if self.def_op(operand).is_some() {
                self.copy(operand, mapping);
            }
        }
        let operands = data
            .operands
            .iter()
            .map(|o| mapping.get(o).copied().unwrap_or(*o))
            .collect();
        let types = data.results.iter().map(|&r| self.f.ty(r).clone()).collect();
        let copy = self.f.create_op(data.kind.clone(), operands, types);
        let copy_results = self.f.op(copy).results.clone();
        {
            let c = self.f.op_mut(copy);
            c.attrs = data.attrs.clone();
            c.shardings = data.shardings.clone();
            c.pos = data.pos;
        }
        for (&old, &new) in data.results.iter().zip(&copy_results) {
            mapping.insert(old, new);
        }
        self.before.entry(op).or_default().push(copy);
        // Sharding groups of the original apply to the copy too.
        let groups = self.groups_of.get(&v).cloned().unwrap_or_default();
        for g in groups {
            let gd = self.f.op(g).clone();
            let operands = gd
                .operands
                .iter()
                .map(|o| mapping.get(o).copied().unwrap_or(*o))
                .collect();
            let gc = self.f.create_op(gd.kind.clone(), operands, Vec::new());
            self.f.op_mut(gc).pos = gd.pos;
            self.before.entry(op).or_default().push(gc);
        }
    }

    /// Rebuild every block with the copies in place and without the
    /// originals that nothing but sharding groups uses any more.
    fn finish(&mut self) {
        for b in blocks::blocks(self.f) {
            let original = blocks::ops(self.f, b).to_vec();
            let mut ops = Vec::with_capacity(original.len());
            for id in original {
                if let Some(copies) = self.before.remove(&id) {
                    ops.extend(copies);
                }
                ops.push(id);
            }
            blocks::set_ops(self.f, b, ops);
        }
        // Non-group uses of every value, and the group ops on it.
        let mut uses = vec![0usize; self.f.values.len()];
        let mut group_users: HashMap<Value, Vec<OpId>> = HashMap::new();
        for u in self.f.all_ops() {
            let d = self.f.op(u);
            for &o in &d.operands {
                if matches!(d.kind, OpKind::ShardingGroup(_)) {
                    group_users.entry(o).or_default().push(u);
                } else if let Some(c) = uses.get_mut(o.index()) {
                    *c += 1;
                }
            }
            for r in d.regions.iter().flat_map(|r| &r.returns) {
                if let Some(c) = uses.get_mut(r.index()) {
                    *c += 1;
                }
            }
        }
        for r in &self.f.returns {
            if let Some(c) = uses.get_mut(r.index()) {
                *c += 1;
            }
        }
        let mut erased = vec![false; self.f.ops.len()];
        let candidates: Vec<OpId> = self
            .expansion_order
            .iter()
            .copied()
            .chain(self.constant_order.iter().rev().copied())
            .collect();
        for id in candidates {
            let data = self.f.op(id);
            if data
                .results
                .iter()
                .any(|r| uses.get(r.index()).copied().unwrap_or(0) > 0)
            {
                continue;
            }
            for r in &data.results {
                for g in group_users.get(r).map_or(&[][..], Vec::as_slice) {
                    erased[g.index()] = true;
                }
            }
            erased[id.index()] = true;
            for o in &data.operands {
                if let Some(c) = uses.get_mut(o.index()) {
                    *c = c.saturating_sub(1);
                }
            }
        }
        blocks::retain_ops(self.f, |_, id| !erased[id.index()]);
    }
}
