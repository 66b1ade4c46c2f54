//! Data-flow edges (Shardy's `ShardableDataFlowOpInterface` and
//! `sdy.data_flow_edge`): the values of a structural op that must have one
//! sharding, decided together.
//!
//! - `stablehlo.while`, per loop-carried value `i`: the result `i` owns
//!   the edge; its sources are operand `i` and what the body yields at
//!   `i`; the cond and body block arguments `i` are further targets that
//!   share the owner's sharding (they have no storage of their own).
//! - `stablehlo.case`, per result `i`: the result owns the edge; its
//!   sources are what every branch returns at `i`. The branch index is
//!   no part of any edge.
//! - `sdy.named_computation` (a call as Shardy keeps it, see
//!   `import::calls`): block argument `i` owns an edge whose source is
//!   operand `i`, and result `i` owns one whose source is what the body
//!   returns at `i`. Both sides keep their own sharding, as a callee's
//!   arguments and results do.
//! - `sdy.manual_computation`: block argument `i` owns an edge whose
//!   source is operand `i`; its sharding is `in_shardings[i]`, in the
//!   operand's (global) view. The body is not walked here: it is in local
//!   shapes and propagated as a function of its own (`manual`), which
//!   also ties what it returns to `out_shardings`.
//!
//! Propagation visits an edge like an op with an identity rule from its
//! sources to its owner (Shardy's `PropagateDataFlowEdgeOp`), a
//! pass-through op for op-priority scheduling.

use crate::ir::{Function, OpId, OpKind, Value};

/// One data-flow edge.
#[derive(Debug, Clone, PartialEq)]
pub struct DataFlowEdge {
    /// The structural op the edge belongs to.
    pub op: OpId,
    /// The value whose sharding is the edge's.
    pub owner: Value,
    /// The values the edge's sharding flows from and to.
    pub sources: Vec<Value>,
    /// Other values that are the owner (block arguments of a `while`).
    pub targets: Vec<Value>,
}

/// Every data-flow edge of `f`, in program order (an op's edges right
/// after the op, block-argument edges before result edges, as Shardy's
/// `sdy-add-data-flow-edges` places its ops).
pub fn edges(f: &Function) -> Vec<DataFlowEdge> {
    let mut out = Vec::new();
    for id in f.all_ops() {
        out.extend(edges_of(f, id));
    }
    out
}

/// The data-flow edges of op `id` (none for ops without regions).
pub fn edges_of(f: &Function, id: OpId) -> Vec<DataFlowEdge> {
    let op = f.op(id);
    let mut out = Vec::new();
    match &op.kind {
        OpKind::While(_) => {
            let (Some(cond), Some(body)) = (op.regions.first(), op.regions.get(1)) else {
                return out;
            };
            for (i, &r) in op.results.iter().enumerate() {
                let sources = [op.operands.get(i), body.returns.get(i)]
                    .into_iter()
                    .flatten()
                    .copied()
                    .collect();
                let targets = [cond.args.get(i), body.args.get(i)]
                    .into_iter()
                    .flatten()
                    .copied()
                    .collect();
                out.push(DataFlowEdge {
                    op: id,
                    owner: r,
                    sources,
                    targets,
                });
            }
        }
        OpKind::Case(_) => {
            for (i, &r) in op.results.iter().enumerate() {
                let sources = op
                    .regions
                    .iter()
                    .filter_map(|b| b.returns.get(i).copied())
                    .collect();
                out.push(DataFlowEdge {
                    op: id,
                    owner: r,
                    sources,
                    targets: Vec::new(),
                });
            }
        }
        OpKind::NamedComputation(_) | OpKind::ManualComputation(_) => {
            let Some(body) = op.regions.first() else {
                return out;
            };
            for (&a, &operand) in body.args.iter().zip(&op.operands) {
                out.push(DataFlowEdge {
                    op: id,
                    owner: a,
                    sources: vec![operand],
                    targets: Vec::new(),
                });
            }
            // A manual computation's body returns local blocks: its
            // results are tied to them by `manual`, not here.
            if matches!(op.kind, OpKind::ManualComputation(_)) {
                return out;
            }
            for (&r, &ret) in op.results.iter().zip(&body.returns) {
                out.push(DataFlowEdge {
                    op: id,
                    owner: r,
                    sources: vec![ret],
                    targets: Vec::new(),
                });
            }
        }
        _ => {}
    }
    out
}

/// For every value of `f`, the value that holds its sharding: the edge
/// owner for a `while`'s block arguments, the value itself otherwise.
pub fn owners(f: &Function, edges: &[DataFlowEdge]) -> Vec<Value> {
    let mut owner: Vec<Value> = (0..f.values.len() as u32).map(Value).collect();
    for e in edges {
        for t in &e.targets {
            if let Some(o) = owner.get_mut(t.index()) {
                *o = e.owner;
            }
        }
    }
    owner
}

/// A use of a value by a structural op: one of its operands, or what one
/// of its regions returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    Operand(usize),
    Return { region: usize, index: usize },
}

/// Which of [`edges_of`]`(f, id)` has the value at `use_` as a source
/// (Shardy's `DataFlowEdgeOp::lookup(OpOperand&)`).
pub fn edge_of_use(f: &Function, id: OpId, use_: Use) -> Option<usize> {
    let op = f.op(id);
    match (&op.kind, use_) {
        (
            OpKind::While(_),
            Use::Operand(k)
            | Use::Return {
                region: 1,
                index: k,
            },
        ) => (k < op.results.len()).then_some(k),
        (OpKind::Case(_), Use::Return { index, .. }) => (index < op.results.len()).then_some(index),
        (OpKind::ManualComputation(_), Use::Operand(k)) => {
            let args = op.regions.first().map_or(0, |r| r.args.len());
            (k < args.min(op.operands.len())).then_some(k)
        }
        (OpKind::NamedComputation(_), _) => {
            let args = op
                .regions
                .first()
                .map_or(0, |r| r.args.len().min(op.operands.len()));
            match use_ {
                Use::Operand(k) => (k < args).then_some(k),
                Use::Return { region: 0, index } => {
                    let n = op.results.len().min(op.regions[0].returns.len());
                    (index < n).then_some(args + index)
                }
                Use::Return { .. } => None,
            }
        }
        _ => None,
    }
}
