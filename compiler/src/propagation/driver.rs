//! The propagation driver (Shardy's `BasicPropagationPassImpl::propagate`):
//! push function result shardings into the returned values, propagate
//! through every op until a fixed point, then pull the returned values'
//! shardings into the function results.
//!
//! Ops are visited the way MLIR's greedy driver visits them: every op in
//! program order, and whenever an op changes the sharding of a value, the
//! value's defining op and its users are pushed on a LIFO worklist (see
//! [`super::worklist`]). Rounds repeat until one changes nothing. When
//! shardings conflict, this order decides which one wins, so it follows
//! Shardy's exactly.

use crate::diag::{DiagKind, Diagnostic, SrcPos};
use crate::ir::{Function, OpId, Value, ValueDef};
use crate::rules::axis_algebra::overlaps;
use crate::rules::{OpShardingRule, ShardingProjection, TensorId, UpdatedTensors};
use crate::sharding::{Mesh, MeshRef, TensorSharding};

use super::direction::{OpClass, Policy};
use super::factor_aggressive::propagate_aggressive;
use super::factor_basic::propagate_basic;
use super::graph::FuncGraph;
use super::provenance::{Origin, Slot};
use super::state::{FuncState, Meshes};
use super::worklist::Worklist;

/// How conflicts between factors are resolved within one op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FactorStrategy {
    Basic,
    Aggressive,
}

/// MLIR's default limit on greedy rounds; Shardy converges in two.
const MAX_ROUNDS: usize = 10;

/// How op-priority scheduling sees a data-flow edge: a pass-through op
/// whose one operand (the edge owner) has one use.
const EDGE_CLASS: OpClass = OpClass::PassThrough { multi_use: false };

/// One propagation run over one function.
pub struct Run<'a> {
    pub f: &'a Function,
    pub graph: &'a FuncGraph,
    pub meshes: Meshes<'a>,
    pub strategy: FactorStrategy,
    pub policy: Policy,
    /// Shardy's conservative propagation: no sub-axes are propagated.
    pub conservative: bool,
    /// Provenance label index of this run.
    pub stage: usize,
    /// Whether returned values and the function's result shardings are
    /// exchanged: only for the module's entry function, as Shardy's
    /// `propagateFuncResults` does (other functions' results are tied to
    /// their callers by calls, not by their attributes).
    pub sync_results: bool,
}

/// The tensors of an edge: an op's operands and results, or a returned
/// value and the function result it is returned as.
#[derive(Clone, Copy)]
enum Tensors<'r> {
    Op {
        operands: &'r [Value],
        results: &'r [Value],
    },
    FuncResult {
        value: Value,
        index: usize,
    },
    /// A data-flow edge: its sources as operands, its owner as the result.
    Edge {
        sources: &'r [Value],
        owner: Value,
    },
}

impl Tensors<'_> {
    fn num_operands(&self) -> usize {
        match self {
            Tensors::Op { operands, .. } => operands.len(),
            Tensors::FuncResult { .. } => 1,
            Tensors::Edge { sources, .. } => sources.len(),
        }
    }

    fn num_results(&self) -> usize {
        match self {
            Tensors::Op { results, .. } => results.len(),
            Tensors::FuncResult { .. } | Tensors::Edge { .. } => 1,
        }
    }

    fn slot(&self, id: TensorId) -> Slot {
        match (self, id) {
            (Tensors::Op { operands, .. }, TensorId::Operand(k)) => Slot::Value(operands[k]),
            (Tensors::Op { results, .. }, TensorId::Result(k)) => Slot::Value(results[k]),
            (Tensors::FuncResult { value, .. }, TensorId::Operand(_)) => Slot::Value(*value),
            (Tensors::FuncResult { index, .. }, TensorId::Result(_)) => Slot::Result(*index),
            (Tensors::Edge { sources, .. }, TensorId::Operand(k)) => Slot::Value(sources[k]),
            (Tensors::Edge { owner, .. }, TensorId::Result(_)) => Slot::Value(*owner),
        }
    }

    /// The value whose sharding group an update of tensor `id` is copied
    /// to: the tensor itself; none for a function result, which is no
    /// value and belongs to no group (Shardy's `isFuncResult`).
    fn group_value(&self, id: TensorId) -> Option<Value> {
        match (self, id) {
            (Tensors::FuncResult { .. }, TensorId::Result(_)) => None,
            (Tensors::FuncResult { value, .. }, TensorId::Operand(_)) => Some(*value),
            (Tensors::Op { operands, .. }, TensorId::Operand(k)) => Some(operands[k]),
            (Tensors::Op { results, .. }, TensorId::Result(k)) => Some(results[k]),
            (Tensors::Edge { sources, .. }, TensorId::Operand(k)) => Some(sources[k]),
            (Tensors::Edge { owner, .. }, TensorId::Result(_)) => Some(*owner),
        }
    }

    fn operand_slots(&self) -> impl Iterator<Item = Slot> + '_ {
        (0..self.num_operands()).map(|k| self.slot(TensorId::Operand(k)))
    }

    fn result_slots(&self) -> impl Iterator<Item = Slot> + '_ {
        (0..self.num_results()).map(|k| self.slot(TensorId::Result(k)))
    }
}

/// One op (or function-result edge) as propagation sees it.
struct Edge<'r> {
    op: Option<OpId>,
    rule: &'r OpShardingRule,
    tensors: Tensors<'r>,
    class: OpClass,
    elementwise: bool,
    policy: Policy,
    pos: SrcPos,
}

/// What propagation knows about earlier visits of a function's ops: the
/// clock of the last change of every value, and for every op the clock
/// and policy of its last visit that changed nothing. An op visited again
/// with the same direction for every factor, none of whose tensors changed
/// since, would change nothing again (its outcome depends only on them),
/// so it is skipped: the result is exactly that of visiting it. The log
/// lives across the op-priority runs, where pass-through ops keep their
/// directions.
#[derive(Debug, Clone)]
pub struct VisitLog {
    clock: u64,
    changed_at: Vec<u64>,
    noop_at: Vec<Option<(u64, Policy)>>,
}

impl VisitLog {
    pub fn new(f: &Function, graph: &FuncGraph) -> VisitLog {
        VisitLog {
            clock: 0,
            changed_at: vec![0; f.values.len()],
            noop_at: vec![None; graph.num_nodes()],
        }
    }

    fn skippable(&self, f: &Function, graph: &FuncGraph, node: OpId, policy: Policy) -> bool {
        let Some((t, old)) = self.noop_at.get(node.index()).copied().flatten() else {
            return false;
        };
        let (rule, class, tensors): (_, _, Vec<Value>) = match graph.edge_index(node) {
            Some(k) => {
                let e = &graph.edges[k];
                let tensors = e.sources.iter().copied().chain([e.owner]).collect();
                (&graph.edge_rules[k], EDGE_CLASS, tensors)
            }
            None => {
                let (Some(Some(rule)), Some(&class)) = (
                    graph.rules.get(node.index()),
                    graph.classes.get(node.index()),
                ) else {
                    return false;
                };
                let data = f.op(node);
                let tensors = data.operands.iter().chain(&data.results).copied().collect();
                (rule, class, tensors)
            }
        };
        if old != policy
            && (0..rule.num_factors())
                .any(|k| old.direction(class, rule, k) != policy.direction(class, rule, k))
        {
            return false;
        }
        tensors.iter().all(|&v| {
            let v = graph.owner(v);
            self.changed_at.get(v.index()).copied().unwrap_or(u64::MAX) <= t
        })
    }

    /// Record that the sharding in `slot` changed (`slot` is an owner).
    pub fn changed(&mut self, slot: Slot) {
        self.clock += 1;
        if let Slot::Value(v) = slot {
            if let Some(c) = self.changed_at.get_mut(v.index()) {
                *c = self.clock;
            }
        }
    }

    fn noop(&mut self, node: OpId, policy: Policy) {
        if let Some(n) = self.noop_at.get_mut(node.index()) {
            *n = Some((self.clock, policy));
        }
    }
}

impl<'a> Run<'a> {
    pub fn propagate(&self, state: &mut FuncState, log: &mut VisitLog) -> Result<(), Diagnostic> {
        self.func_results(state, log)?;
        let mut worklist = Worklist::new(self.graph.num_nodes());
        let mut converged = false;
        for _ in 0..MAX_ROUNDS {
            worklist.fill(&self.graph.order);
            let mut changed = false;
            while let Some(op) = worklist.pop() {
                if log.skippable(self.f, self.graph, op, self.policy) {
                    continue;
                }
                let updated = self.visit(op, state, &mut worklist, log)?;
                if !updated {
                    log.noop(op, self.policy);
                }
                changed |= updated;
            }
            if !changed {
                converged = true;
                break;
            }
        }
        if !converged {
            return Err(Diagnostic::new(
                DiagKind::Unsupported,
                self.f.pos,
                format!(
                    "sharding propagation of @{} did not reach a fixed point after {MAX_ROUNDS} rounds",
                    self.f.name
                ),
            ));
        }
        self.func_results(state, log)
    }

    fn visit(
        &self,
        node: OpId,
        state: &mut FuncState,
        worklist: &mut Worklist,
        log: &mut VisitLog,
    ) -> Result<bool, Diagnostic> {
        if let Some(k) = self.graph.edge_index(node) {
            return self.visit_edge(node, k, state, worklist, log);
        }
        let op = node;
        let Some(Some(rule)) = self.graph.rules.get(op.index()) else {
            return Ok(false);
        };
        let class = self.graph.classes[op.index()];
        if self.policy.blocks_everything(class, rule) {
            return Ok(false);
        }
        let data = self.f.op(op);
        let edge = Edge {
            op: Some(op),
            rule,
            tensors: Tensors::Op {
                operands: &data.operands,
                results: &data.results,
            },
            class,
            elementwise: self.graph.elementwise[op.index()],
            policy: self.policy,
            pos: data.pos,
        };
        self.propagate_edge(&edge, state, &mut |slot| {
            log.changed(slot);
            self.notify(slot, node, worklist)
        })
    }

    /// A data-flow edge (Shardy's `PropagateDataFlowEdgeOp`): an identity
    /// rule from the sources to the owner, a pass-through op.
    fn visit_edge(
        &self,
        node: OpId,
        k: usize,
        state: &mut FuncState,
        worklist: &mut Worklist,
        log: &mut VisitLog,
    ) -> Result<bool, Diagnostic> {
        let e = &self.graph.edges[k];
        let rule = &self.graph.edge_rules[k];
        if self.policy.blocks_everything(EDGE_CLASS, rule) {
            return Ok(false);
        }
        let edge = Edge {
            op: Some(e.op),
            rule,
            tensors: Tensors::Edge {
                sources: &e.sources,
                owner: e.owner,
            },
            class: EDGE_CLASS,
            elementwise: false,
            policy: self.policy,
            pos: self.f.op(e.op).pos,
        };
        self.propagate_edge(&edge, state, &mut |slot| {
            log.changed(slot);
            self.notify(slot, node, worklist)
        })
    }

    /// Push the nodes affected by a change of `slot` (an owner), except
    /// `current` itself, in the order Shardy's `notifyShardingModified`
    /// does: for an edge owner, the users of its other targets, the edge,
    /// then the owner's users; for any other value, its defining op, then
    /// its users.
    fn notify(&self, slot: Slot, current: OpId, worklist: &mut Worklist) {
        let Slot::Value(v) = slot else {
            return;
        };
        let mut push = |node: OpId| {
            if node != current {
                worklist.push(node);
            }
        };
        let users = |v: Value| {
            self.graph
                .users
                .get(v.index())
                .map_or(&[][..], Vec::as_slice)
        };
        match self.graph.edge_of_owner.get(&v) {
            Some(&k) => {
                for &t in &self.graph.edges[k].targets {
                    users(t).iter().for_each(|&u| push(u));
                }
                push(self.graph.edge_node(k));
            }
            None => {
                if let Some(ValueDef::Result { op, .. }) =
                    self.f.values.get(v.index()).map(|d| d.def)
                {
                    push(op);
                }
            }
        }
        users(v).iter().for_each(|&u| push(u));
    }

    /// Exchange shardings between every returned value and its function
    /// result, as through an identity op, in both directions.
    fn func_results(&self, state: &mut FuncState, log: &mut VisitLog) -> Result<(), Diagnostic> {
        if !self.sync_results {
            return Ok(());
        }
        for (i, &v) in self.f.returns.iter().enumerate() {
            let shape = &self.f.ty(v).shape;
            let rule = OpShardingRule::identity(shape, 1, 1);
            let edge = Edge {
                op: None,
                rule: &rule,
                tensors: Tensors::FuncResult { value: v, index: i },
                class: OpClass::Other,
                elementwise: false,
                policy: Policy::Any,
                pos: self.f.return_pos,
            };
            self.propagate_edge(&edge, state, &mut |slot| log.changed(slot))?;
        }
        Ok(())
    }

    fn propagate_edge(
        &self,
        edge: &Edge,
        state: &mut FuncState,
        notify: &mut dyn FnMut(Slot),
    ) -> Result<bool, Diagnostic> {
        let operand_shardings: Vec<Option<&TensorSharding>> =
            edge.tensors.operand_slots().map(|s| state.get(s)).collect();
        let result_shardings: Vec<Option<&TensorSharding>> =
            edge.tensors.result_slots().map(|s| state.get(s)).collect();
        let Some(common) = self
            .meshes
            .common(operand_shardings.iter().chain(&result_shardings).copied())
        else {
            return Ok(false);
        };
        let mesh = common.mesh();
        if mesh.is_maximal() {
            // A maximal sharding marks a value for one device (a host
            // transfer, a callback): Shardy never propagates it.
            return Ok(false);
        }
        let at = |e: &dyn std::fmt::Display| {
            let what = edge
                .op
                .map_or("func.return".to_string(), |op| self.f.op(op).kind.name());
            Diagnostic::new(DiagKind::Sharding, edge.pos, format!("{what}: {e}"))
        };
        let mut projection = ShardingProjection::build(
            edge.rule,
            &operand_shardings,
            &result_shardings,
            mesh,
            false,
        )
        .map_err(|e| at(&e))?;
        let direction = |f: usize| edge.policy.direction(edge.class, edge.rule, f);
        let updated = match self.strategy {
            FactorStrategy::Basic => propagate_basic(
                &mut projection,
                &direction,
                &edge.rule.factor_sizes,
                mesh,
                self.conservative,
            ),
            FactorStrategy::Aggressive => propagate_aggressive(
                &mut projection,
                &direction,
                &edge.rule.factor_sizes,
                mesh,
                edge.elementwise,
                self.conservative,
            ),
        }
        .map_err(|e| at(&e))?;
        if !updated.any() {
            return Ok(false);
        }
        // The state still has the old shardings: project them again for
        // provenance (cheaper than a copy on every visit).
        let before = ShardingProjection::build(
            edge.rule,
            &operand_shardings,
            &result_shardings,
            mesh,
            false,
        )
        .map_err(|e| at(&e))?;
        drop(operand_shardings);
        drop(result_shardings);
        self.apply(
            edge,
            state,
            &projection,
            &before,
            &updated,
            &common.mesh_ref(),
            mesh,
            notify,
        )
        .map_err(|e| at(&e))
    }

    /// Set the new sharding of every tensor the factor propagation changed
    /// (Shardy's `updateTensorShardings`), with its group and provenance.
    #[allow(clippy::too_many_arguments)]
    fn apply(
        &self,
        edge: &Edge,
        state: &mut FuncState,
        projection: &ShardingProjection,
        before: &ShardingProjection,
        updated: &UpdatedTensors,
        mesh_ref: &MeshRef,
        mesh: &Mesh,
        notify: &mut dyn FnMut(Slot),
    ) -> Result<bool, crate::rules::ProjectionError> {
        let ids = updated
            .operands
            .iter()
            .enumerate()
            .filter(|(_, &u)| u)
            .map(|(k, _)| TensorId::Operand(k))
            .chain(
                updated
                    .results
                    .iter()
                    .enumerate()
                    .filter(|(_, &u)| u)
                    .map(|(k, _)| TensorId::Result(k)),
            )
            .map(|id| (id, state.owner(edge.tensors.slot(id))))
            .collect::<Vec<_>>();
        let mut any = false;
        for (id, slot) in ids {
            let new = projection.to_tensor_sharding(id, edge.rule, mesh_ref, mesh)?;
            let old = state.get(slot);
            let unchanged = match old {
                None => new.dims.iter().all(|d| d.axes.is_empty()),
                Some(old) => *old == new,
            };
            if unchanged {
                continue;
            }
            any = true;
            let origin_of = |dim: usize, axis: &crate::sharding::AxisRef| {
                self.origin(edge, id, projection, before, dim, axis)
            };
            state.provenance.record(slot, Some(&new), origin_of);
            state.set(slot, Some(new.clone()));
            notify(slot);
            if let Some(value) = edge.tensors.group_value(id) {
                for &member in self.graph.groups.members_of(value) {
                    let member_slot = state.owner(Slot::Value(member));
                    if member_slot == slot {
                        continue;
                    }
                    state
                        .provenance
                        .record(member_slot, Some(&new), |_, _| Origin::Group { from: slot });
                    state.set(member_slot, Some(new.clone()));
                    notify(member_slot);
                }
            }
        }
        Ok(any)
    }

    /// Which factor of `edge` gave `axis` to dimension `dim` of tensor `id`,
    /// and which tensor already had it.
    fn origin(
        &self,
        edge: &Edge,
        id: TensorId,
        after: &ShardingProjection,
        before: &ShardingProjection,
        dim: usize,
        axis: &crate::sharding::AxisRef,
    ) -> Origin {
        let factors = edge
            .rule
            .mapping(id)
            .and_then(|m| m.dims.get(dim))
            .map_or(&[][..], |d| d.factors.as_slice());
        let has = |p: &ShardingProjection, t: TensorId, f: usize| {
            p.get(t).and_then(|t| t.factors.get(&f)).is_some_and(|fs| {
                fs.axes
                    .iter()
                    .chain(&fs.overflow_axes)
                    .any(|a| overlaps(a, axis))
            })
        };
        let factor = factors
            .iter()
            .copied()
            .find(|&f| has(after, id, f))
            .or(factors.first().copied())
            .unwrap_or(0);
        let from = before
            .tensors()
            .map(|(t, _)| t)
            .find(|&t| t != id && has(before, t, factor))
            .map(|t| edge.tensors.slot(t));
        match (edge.op, edge.tensors) {
            (Some(op), _) => Origin::Op {
                op,
                factor,
                from,
                stage: self.stage,
            },
            (None, Tensors::FuncResult { index, .. }) => Origin::FuncResult {
                index,
                stage: self.stage,
            },
            (None, Tensors::Op { .. } | Tensors::Edge { .. }) => Origin::Annotated,
        }
    }
}
