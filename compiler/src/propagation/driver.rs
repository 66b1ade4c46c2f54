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

/// One propagation run over one function.
pub struct Run<'a> {
    pub f: &'a Function,
    pub graph: &'a FuncGraph,
    pub meshes: Meshes<'a>,
    pub strategy: FactorStrategy,
    pub policy: Policy,
    /// Provenance label index of this run.
    pub stage: usize,
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
}

impl Tensors<'_> {
    fn num_operands(&self) -> usize {
        match self {
            Tensors::Op { operands, .. } => operands.len(),
            Tensors::FuncResult { .. } => 1,
        }
    }

    fn num_results(&self) -> usize {
        match self {
            Tensors::Op { results, .. } => results.len(),
            Tensors::FuncResult { .. } => 1,
        }
    }

    fn slot(&self, id: TensorId) -> Slot {
        match (self, id) {
            (Tensors::Op { operands, .. }, TensorId::Operand(k)) => Slot::Value(operands[k]),
            (Tensors::Op { results, .. }, TensorId::Result(k)) => Slot::Value(results[k]),
            (Tensors::FuncResult { value, .. }, TensorId::Operand(_)) => Slot::Value(*value),
            (Tensors::FuncResult { index, .. }, TensorId::Result(_)) => Slot::Result(*index),
        }
    }

    /// The value whose sharding group an update of tensor `id` is copied
    /// to: the tensor itself, or for a function result the returned value
    /// (as in Shardy, both sides of that edge update the value's group).
    fn group_value(&self, id: TensorId) -> Value {
        match (self, id) {
            (Tensors::FuncResult { value, .. }, _) => *value,
            (Tensors::Op { operands, .. }, TensorId::Operand(k)) => operands[k],
            (Tensors::Op { results, .. }, TensorId::Result(k)) => results[k],
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
    pub fn new(f: &Function) -> VisitLog {
        VisitLog {
            clock: 0,
            changed_at: vec![0; f.values.len()],
            noop_at: vec![None; f.ops.len()],
        }
    }

    fn skippable(&self, f: &Function, graph: &FuncGraph, op: OpId, policy: Policy) -> bool {
        let Some((t, old)) = self.noop_at.get(op.index()).copied().flatten() else {
            return false;
        };
        if old != policy {
            let (Some(Some(rule)), Some(&class)) =
                (graph.rules.get(op.index()), graph.classes.get(op.index()))
            else {
                return false;
            };
            if (0..rule.num_factors())
                .any(|k| old.direction(class, rule, k) != policy.direction(class, rule, k))
            {
                return false;
            }
        }
        let data = f.op(op);
        data.operands
            .iter()
            .chain(&data.results)
            .all(|v| self.changed_at.get(v.index()).copied().unwrap_or(u64::MAX) <= t)
    }

    /// Record that the sharding in `slot` changed.
    pub fn changed(&mut self, slot: Slot) {
        self.clock += 1;
        if let Slot::Value(v) = slot {
            if let Some(c) = self.changed_at.get_mut(v.index()) {
                *c = self.clock;
            }
        }
    }

    fn noop(&mut self, op: OpId, policy: Policy) {
        if let Some(n) = self.noop_at.get_mut(op.index()) {
            *n = Some((self.clock, policy));
        }
    }
}

impl<'a> Run<'a> {
    pub fn propagate(&self, state: &mut FuncState, log: &mut VisitLog) -> Result<(), Diagnostic> {
        self.func_results(state, log)?;
        let mut worklist = Worklist::new(self.f.ops.len());
        let mut converged = false;
        for _ in 0..MAX_ROUNDS {
            worklist.fill(&self.f.body);
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
        op: OpId,
        state: &mut FuncState,
        worklist: &mut Worklist,
        log: &mut VisitLog,
    ) -> Result<bool, Diagnostic> {
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
            self.notify(slot, op, worklist)
        })
    }

    /// Push the ops affected by a change of `slot` (not `current` itself).
    fn notify(&self, slot: Slot, current: OpId, worklist: &mut Worklist) {
        let Slot::Value(v) = slot else {
            return;
        };
        if let Some(ValueDef::Result { op, .. }) = self.f.values.get(v.index()).map(|d| d.def) {
            if op != current {
                worklist.push(op);
            }
        }
        for &user in self
            .graph
            .users
            .get(v.index())
            .map_or(&[][..], Vec::as_slice)
        {
            if user != current {
                worklist.push(user);
            }
        }
    }

    /// Exchange shardings between every returned value and its function
    /// result, as through an identity op, in both directions.
    fn func_results(&self, state: &mut FuncState, log: &mut VisitLog) -> Result<(), Diagnostic> {
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
            FactorStrategy::Basic => {
                propagate_basic(&mut projection, &direction, &edge.rule.factor_sizes, mesh)
            }
            FactorStrategy::Aggressive => propagate_aggressive(
                &mut projection,
                &direction,
                &edge.rule.factor_sizes,
                mesh,
                edge.elementwise,
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
            .map(|id| (id, edge.tensors.slot(id)))
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
            if !self.graph.groups.is_empty() {
                for &member in self.graph.groups.members_of(edge.tensors.group_value(id)) {
                    let member_slot = Slot::Value(member);
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
            (None, Tensors::Op { .. }) => Origin::Annotated,
        }
    }
}
