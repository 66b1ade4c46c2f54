//! `stablehlo.while` and `stablehlo.case` in the global program: their
//! regions become blocks of explicit-reshard steps ([`GBlock`]), built by
//! the same per-op walk as the rest of the function. (Also
//! `stablehlo.optimization_barrier`, the other op whose operands and
//! results Shardy ties by data-flow edges rather than a rule.)
//!
//! Each result of a structured op has one sharding (propagation's
//! `sdy.sharding` on the op: Shardy's data-flow edge, a *group* sharding)
//! which is also that of the matching operand, region argument and yielded
//! value. So the operands are resharded to the group shardings before the
//! op, and every yielded value is resharded to them at the end of its
//! region; inside, ops are lowered like any other (local shapes,
//! collectives in the body).
//!
//! Control flow must be the same on every device: a loop condition and a
//! branch index are made whole (fully replicated, partial sums reduced)
//! before they are read, and every data movement feeding them says so in
//! its reason. A loop-carried value is partial only where its group
//! sharding says `unreduced` (JAX's explicit `unreduced={...}` carry):
//! every iteration then starts and ends with the same kind of value.
//!
//! A reshard inside a region of a value from around it (a loop-invariant
//! weight resharded in a `scan` body) runs once, before the op, instead of
//! once per iteration: its step is listed by the block of the level where
//! its operand is defined ([`Scopes`]).

/// The regions being lowered, innermost last, and the reshards moved out
/// of them.
#[derive(Debug, Default)]
pub(crate) struct Scopes {
    /// Per open region: the first value id created inside it (values
    /// below were defined around it).
    marks: Vec<GValueId>,
    /// Reshard steps moved out of the regions they were made in: step ->
    /// the nesting level that runs them (0 = the function body).
    hoisted: HashMap<usize, usize>,
    /// Their cache entries, restored when the region they were made in is
    /// left: (operand, target) -> result, with the level.
    cached: Vec<((GValueId, TensorSharding), GValueId, usize)>,
}

impl Scopes {
    /// The level at which a reshard of `v` made now runs (recorded for the
    /// step about to be pushed), and its cause, saying so when moved.
    pub(crate) fn hoist(
        &mut self,
        prog: &mut GlobalProgram,
        v: GValueId,
        key: (GValueId, TensorSharding),
        r: GValueId,
        cause: Cause,
    ) -> Cause {
        let depth = self.marks.len();
        let level = self.marks.iter().filter(|&&m| m <= v).count();
        if level >= depth {
            return cause;
        }
        let step = prog.steps.len();
        self.hoisted.insert(step, level);
        self.cached.push((key, r, level));
        Cause {
            reason: format!(
                "{} (before the loop or branch: the value does not change inside it)",
                cause.reason
            ),
            ..cause
        }
    }
}

use std::collections::{HashMap, HashSet};

use crate::diag::{DiagKind, Diagnostic};
use crate::ir::{OpData, Region, TensorType};
use crate::partition::global::explicit_reshards::Builder;
use crate::partition::global::trip_count::counted_trips;
use crate::partition::global::{Cause, GBlock, GStepKind, GValueId, GlobalProgram};
use crate::sharding::TensorSharding;

impl Builder<'_> {
    pub(crate) fn while_loop(&mut self, op: &OpData, label: String) -> Result<(), Diagnostic> {
        let [cond, body] = &op.regions[..] else {
            return Err(shape_error(
                op,
                &label,
                format!(
                    "has {} regions; a while has cond and body",
                    op.regions.len()
                ),
            ));
        };
        let types = self.result_types(op);
        let group = self.group_shardings(op, &label, &types)?;
        let inits = self.enter(op, &label, &group, "loop-carried value")?;
        let replicated = TensorSharding::replicated(self.default_mesh_name(), 0);
        let note = format!(
            "{label}: the loop condition decides the trip count, which every device must agree on"
        );
        let invariant = invariant_carried(body, &inits);
        let cond_block = self.block(cond, &group, &invariant, &[replicated], &label, |_| {
            note.clone()
        })?;
        let body_block = self.block(body, &group, &invariant, &group, &label, |k| {
            format!("loop-carried value {k} stays in the loop's sharding across iterations")
        })?;
        self.note_control(cond_block.results[0], &note);
        let trip_count = counted_trips(self.f, op);
        let results = self.leave(op, &types, &group);
        self.push(
            GStepKind::Loop {
                cond: cond_block,
                body: body_block,
                trip_count,
            },
            inits,
            results,
            Cause {
                op: label,
                pos: op.pos,
                reason: String::new(),
            },
        );
        Ok(())
    }

    pub(crate) fn case(&mut self, op: &OpData, label: String) -> Result<(), Diagnostic> {
        let [index] = op.operands[..] else {
            return Err(shape_error(op, &label, "needs one index operand".into()));
        };
        let types = self.result_types(op);
        let group = self.group_shardings(op, &label, &types)?;
        let note = format!(
            "{label}: the branch index decides which branch runs, and every device must take the same one"
        );
        let g = self.lookup(index, op.pos)?;
        let whole = TensorSharding::replicated(self.default_mesh_name(), 0);
        let index = self.reshard(
            g,
            &whole,
            Cause {
                op: label.clone(),
                pos: op.pos,
                reason: note.clone(),
            },
        )?;
        self.note_control(index, &note);
        let mut branches = Vec::with_capacity(op.regions.len());
        for (b, region) in op.regions.iter().enumerate() {
            if !region.args.is_empty() {
                return Err(shape_error(
                    op,
                    &label,
                    format!("branch {b} takes arguments; case branches take none"),
                ));
            }
            branches.push(self.block(region, &[], &[], &group, &label, |k| {
                format!("branch {b} returns result {k} in the case's sharding")
            })?);
        }
        let results = self.leave(op, &types, &group);
        self.push(
            GStepKind::Branch { branches },
            vec![index],
            results,
            Cause {
                op: label,
                pos: op.pos,
                reason: String::new(),
            },
        );
        Ok(())
    }

    /// `stablehlo.optimization_barrier`: like Shardy, a data-flow edge per
    /// operand (result `k` is operand `k` in its own sharding), not one op
    /// whose factors share the mesh's axes: each operand is resharded to
    /// its result's sharding and the result is that value (the barrier
    /// computes nothing, and meshrun moves no computation across it).
    pub(crate) fn optimization_barrier(
        &mut self,
        op: &OpData,
        label: String,
    ) -> Result<(), Diagnostic> {
        if op.operands.len() != op.results.len() {
            return Err(shape_error(
                op,
                &label,
                format!(
                    "has {} operands for {} results",
                    op.operands.len(),
                    op.results.len()
                ),
            ));
        }
        for (k, (&v, &r)) in op.operands.iter().zip(&op.results).enumerate() {
            let g = self.lookup(v, op.pos)?;
            let annotated = op.shardings.as_ref().and_then(|s| s.get(k));
            let what = format!("{label} (result {k})");
            let target = self.normalize(annotated, self.f.ty(r).rank(), None, op.pos, &what)?;
            let cause = Cause {
                op: label.clone(),
                pos: op.pos,
                reason: format!("operand {k} passes the barrier in its result's sharding {target}"),
            };
            let moved = self.reshard(g, &target, cause)?;
            self.map.insert(r, moved);
        }
        Ok(())
    }

    fn result_types(&self, op: &OpData) -> Vec<TensorType> {
        op.results.iter().map(|&r| self.f.ty(r).clone()).collect()
    }

    /// One placement per result: the op's `sdy.sharding` (replicated when
    /// it has none), unreduced where it says so (a gradient accumulated
    /// over microbatches stays a partial sum through the loop and is
    /// reduced once, where a use needs it whole).
    fn group_shardings(
        &mut self,
        op: &OpData,
        label: &str,
        types: &[TensorType],
    ) -> Result<Vec<TensorSharding>, Diagnostic> {
        if let Some(s) = &op.shardings {
            if s.len() != types.len() {
                return Err(Diagnostic::new(
                    DiagKind::Sharding,
                    op.pos,
                    format!(
                        "{label} has {} results but {} shardings",
                        types.len(),
                        s.len()
                    ),
                ));
            }
        }
        let mut out = Vec::with_capacity(types.len());
        for (k, ty) in types.iter().enumerate() {
            let annotated = op.shardings.as_ref().and_then(|s| s.get(k));
            let what = format!("{label} (result {k})");
            out.push(self.normalize(annotated, ty.rank(), None, op.pos, &what)?);
        }
        Ok(out)
    }

    /// The operands resharded to the group shardings.
    fn enter(
        &mut self,
        op: &OpData,
        label: &str,
        group: &[TensorSharding],
        what: &str,
    ) -> Result<Vec<GValueId>, Diagnostic> {
        if op.operands.len() != group.len() {
            return Err(shape_error(
                op,
                label,
                format!(
                    "has {} operands for {} results",
                    op.operands.len(),
                    group.len()
                ),
            ));
        }
        let mut out = Vec::with_capacity(group.len());
        for (k, (&v, target)) in op.operands.iter().zip(group).enumerate() {
            let g = self.lookup(v, op.pos)?;
            let cause = Cause {
                op: label.to_string(),
                pos: op.pos,
                reason: format!("{what} {k} enters the loop in its sharding {target}"),
            };
            out.push(self.reshard(g, target, cause)?);
        }
        Ok(out)
    }

    /// The op's results: new values in the group shardings.
    fn leave(
        &mut self,
        op: &OpData,
        types: &[TensorType],
        group: &[TensorSharding],
    ) -> Vec<GValueId> {
        let mut out = Vec::with_capacity(types.len());
        for ((&r, ty), s) in op.results.iter().zip(types).zip(group) {
            let g = self.new_value(ty.clone(), s.clone());
            self.map.insert(r, g);
            out.push(g);
        }
        out
    }

    /// Lower a region: arguments in `args`' shardings, its ops, and every
    /// returned value resharded to `yields` (the reason from `why`).
    /// Reshards made inside are not reused after the region (their values
    /// only exist inside it). An argument `k` with `same_as[k] = Some(v)`
    /// holds `v` on every iteration: the ops read `v` (so their reshards of
    /// it run once, before the loop) and the region passes its argument on.
    fn block(
        &mut self,
        region: &Region,
        args: &[TensorSharding],
        same_as: &[Option<GValueId>],
        yields: &[TensorSharding],
        label: &str,
        why: impl Fn(usize) -> String,
    ) -> Result<GBlock, Diagnostic> {
        let at = region.return_pos;
        if region.args.len() != args.len() {
            return Err(Diagnostic::new(
                DiagKind::Type,
                at,
                format!(
                    "{label}: a region takes {} arguments, expected {}",
                    region.args.len(),
                    args.len()
                ),
            ));
        }
        if region.returns.len() != yields.len() {
            return Err(Diagnostic::new(
                DiagKind::Type,
                at,
                format!(
                    "{label}: a region returns {} values, expected {}",
                    region.returns.len(),
                    yields.len()
                ),
            ));
        }
        let saved = self.reshards.clone();
        self.scopes.marks.push(self.prog.values.len());
        let depth = self.scopes.marks.len();
        let start = self.prog.steps.len();
        let f = self.f;
        let mut block_args = Vec::with_capacity(args.len());
        for (k, (&a, s)) in region.args.iter().zip(args).enumerate() {
            let g = self.new_value(f.ty(a).clone(), s.clone());
            let read = same_as.get(k).copied().flatten().unwrap_or(g);
            self.map.insert(a, read);
            block_args.push(g);
        }
        for &o in &region.body {
            self.op(o, f.op(o))?;
        }
        let mut results = Vec::with_capacity(yields.len());
        for (k, (&v, target)) in region.returns.iter().zip(yields).enumerate() {
            if region.args.get(k) == Some(&v) && same_as.get(k).copied().flatten().is_some() {
                results.push(block_args[k]);
                continue;
            }
            let g = self.lookup(v, at)?;
            let cause = Cause {
                op: label.to_string(),
                pos: at,
                reason: why(k),
            };
            results.push(self.reshard(g, target, cause)?);
        }
        self.reshards = saved;
        self.scopes.marks.pop();
        // Reshards moved out to a level still open stay usable after the
        // region; those of levels now closed are gone.
        self.scopes.cached.retain(|(_, _, level)| *level < depth);
        for (key, r, _) in &self.scopes.cached {
            self.reshards.insert(key.clone(), *r);
        }
        let end = self.prog.steps.len();
        let nested: HashSet<usize> = (start..end)
            .flat_map(|i| {
                self.prog
                    .blocks_of(i)
                    .into_iter()
                    .flat_map(|b| b.steps.clone())
            })
            .collect();
        Ok(GBlock {
            args: block_args,
            steps: (start..end)
                .filter(|i| !nested.contains(i))
                .filter(|i| self.scopes.hoisted.get(i).is_none_or(|&l| l == depth))
                .collect(),
            results,
        })
    }

    /// Add `note` to every data movement that makes the scalar `v` whole
    /// (walking back through the scalar ops that compute it), so the
    /// listing says why a predicate or index is gathered or reduced.
    fn note_control(&mut self, v: GValueId, note: &str) {
        let mut todo = vec![v];
        let mut seen = HashSet::new();
        while let Some(v) = todo.pop() {
            if !seen.insert(v) {
                continue;
            }
            let Some(i) = self.prog.steps.iter().rposition(|s| s.results.contains(&v)) else {
                continue;
            };
            let step = &mut self.prog.steps[i];
            match step.kind {
                GStepKind::Reshard | GStepKind::AllReduce { .. } => {
                    if !step.cause.reason.contains(note) {
                        step.cause.reason = format!("{} ({note})", step.cause.reason);
                    }
                }
                GStepKind::Compute(_) => {}
                _ => continue,
            }
            let operands = step.operands.clone();
            todo.extend(
                operands
                    .into_iter()
                    .filter(|&o| self.prog.values[o].ty.rank() == 0),
            );
        }
    }
}

/// Per loop-carried value: the value it enters with when the body yields
/// its own argument unchanged (a `scan`'s stacked weights), so every
/// iteration sees that same value (XLA's loop-invariant code motion moves
/// its collectives out of the loop the same way).
fn invariant_carried(body: &Region, inits: &[GValueId]) -> Vec<Option<GValueId>> {
    inits
        .iter()
        .enumerate()
        .map(|(k, &init)| {
            let arg = body.args.get(k)?;
            (body.returns.get(k) == Some(arg)).then_some(init)
        })
        .collect()
}

fn shape_error(op: &OpData, label: &str, msg: String) -> Diagnostic {
    Diagnostic::new(DiagKind::Type, op.pos, format!("{label} {msg}"))
}
