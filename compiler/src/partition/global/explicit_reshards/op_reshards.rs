//! Explicit reshards for one op with a sharding rule (step 2 to 5 of
//! [`crate::partition::global::explicit_reshards`]): choose the op's mesh and one
//! sharding per factor, reshard the operands that disagree, compute,
//! reduce partial results, and reshard results to their annotations.

use crate::diag::{DiagKind, Diagnostic};
use crate::ir::op_rules::rule_for_op;
use crate::ir::ops::custom_call::replicating_rule;
use crate::ir::ops::scatter::ScatterUpdate;
use crate::ir::{OpData, OpId, OpKind, ReduceKind, Value};
use crate::partition::global::compat::{self, is_remap_kind};
use crate::partition::global::explicit_reshards::{
    braced, is_fully_replicated, placement, reduce_kind, reduction_op, Builder,
};
use crate::partition::global::partial_ops::{partial_pass, PartialPass};
use crate::partition::global::whole_dims::{make_whole, whole_factors};
use crate::partition::global::{Cause, GStepKind, GValueId};
use crate::partition::window::conv_factors::fit_conv_factors;
use crate::partition::window::window_factors::{fit_window_factors, is_window_op};
use crate::rules::axis_algebra::{push_or_merge, sorted_and_merged};
use crate::rules::{
    factor_symbol, FactorKind, FactorSharding, OpShardingRule, ShardingProjection,
    TensorFactorShardings, TensorMapping,
};
use crate::sharding::validate::sort_in_mesh_order;
use crate::sharding::{AxisRef, Mesh, MeshRef, ReductionOp, TensorSharding};

impl Builder<'_> {
    /// The mesh an op runs on: the most common mesh of its sharded
    /// tensors (first seen on a tie), else the default mesh.
    fn op_mesh(&self, shardings: &[&TensorSharding]) -> String {
        let mut counts: Vec<(String, usize)> = Vec::new();
        for s in shardings.iter().filter(|s| !is_fully_replicated(s)) {
            let Some(name) = s.mesh_name() else { continue };
            match counts.iter_mut().find(|(n, _)| n == name) {
                Some((_, c)) => *c += 1,
                None => counts.push((name.to_string(), 1)),
            }
        }
        let mut best: Option<(String, usize)> = None;
        for (n, c) in counts {
            if best.as_ref().is_none_or(|(_, bc)| c > *bc) {
                best = Some((n, c));
            }
        }
        best.map_or_else(|| self.default_mesh_name(), |(n, _)| n)
    }

    pub(crate) fn rule_op(
        &mut self,
        id: OpId,
        op: &OpData,
        label: String,
    ) -> Result<(), Diagnostic> {
        let f = self.f;
        let rule = match (rule_for_op(f, id)?, &op.kind) {
            (Some(rule), _) => rule,
            // A custom call meshrun cannot interpret, without a written
            // rule, or a host transfer: whole operands in, whole results
            // out (XLA's default).
            (None, OpKind::CustomCall(_) | OpKind::Send(_) | OpKind::Recv(_)) => {
                let shape = |v: &Value| f.ty(*v).shape.as_slice();
                let operands: Vec<&[i64]> = op.operands.iter().map(shape).collect();
                let results: Vec<&[i64]> = op.results.iter().map(shape).collect();
                replicating_rule(&operands, &results)
            }
            (None, _) => {
                return Err(Diagnostic::new(
                    DiagKind::Unsupported,
                    op.pos,
                    format!("{label} has no sharding rule, so it cannot be partitioned"),
                ))
            }
        };
        let cause_of = |reason: String| Cause {
            op: label.clone(),
            pos: op.pos,
            reason,
        };
        // Annotated result shardings.
        let mut annotated: Vec<Option<TensorSharding>> = Vec::new();
        for (k, &res) in op.results.iter().enumerate() {
            let rank = f.ty(res).rank();
            let a = op.shardings.as_ref().and_then(|s| s.get(k));
            annotated.push(match a {
                Some(s) => Some(self.normalize(
                    Some(s),
                    rank,
                    None,
                    op.pos,
                    &format!("result {k} of {label}"),
                )?),
                None => None,
            });
        }
        let result_unreduced: Vec<AxisRef> = annotated
            .first()
            .and_then(|a| a.as_ref())
            .map(|s| s.unreduced.clone())
            .unwrap_or_default();

        // 1. Operands: reduce partial values the op needs in full. Those
        // that stay partial (the result is unreduced too) make the result
        // partial along the same axes.
        let mut kept_partial: Vec<AxisRef> = Vec::new();
        // How the partial results kept through the op combine: one way
        // for all of them.
        let mut kept_op: Option<ReductionOp> = None;
        let result_op = annotated
            .first()
            .and_then(|a| a.as_ref())
            .map_or(ReductionOp::default(), |s| s.unreduced_op);
        let float_result = op.results.first().is_some_and(|&r| f.ty(r).elem.is_float());
        let pass = partial_pass(&op.kind, result_op, float_result);
        let mut one_kept = false;
        let mut operands = Vec::with_capacity(op.operands.len());
        for (k, &v) in op.operands.iter().enumerate() {
            let mut g = self.lookup(v, op.pos)?;
            let s = self.prog.values[g].sharding.clone();
            // Partial values stay partial only where the op computes a
            // partial result of the same reduction from them.
            let may_keep = s.unreduced_op == result_op
                && match pass {
                    PartialPass::Joint => true,
                    PartialPass::One => !one_kept,
                    PartialPass::Reduce => false,
                };
            let reduce: Vec<AxisRef> = s
                .unreduced
                .iter()
                .filter(|a| !may_keep || !result_unreduced.contains(a))
                .cloned()
                .collect();
            if may_keep && reduce.len() < s.unreduced.len() {
                one_kept = true;
            }
            if !reduce.is_empty() {
                let reason = format!(
                    "operand {k} is partial {} over {} and {} needs its full value",
                    s.unreduced_op.plural(),
                    braced(&reduce),
                    op.kind.name()
                );
                g = self.all_reduce(g, &reduce, reduce_kind(s.unreduced_op), cause_of(reason));
            }
            let left = &self.prog.values[g].sharding;
            if !left.unreduced.is_empty() {
                match kept_op {
                    Some(other) if other != left.unreduced_op => {
                        return Err(Diagnostic::new(
                            DiagKind::Sharding,
                            op.pos,
                            format!(
                                "{label}: operand {k} stays partial {} but another operand stays partial {}: \
                                 one result cannot be both",
                                left.unreduced_op.plural(),
                                other.plural()
                            ),
                        ));
                    }
                    _ => kept_op = Some(left.unreduced_op),
                }
            }
            for a in &self.prog.values[g].sharding.unreduced {
                if !kept_partial.contains(a) {
                    kept_partial.push(a.clone());
                }
            }
            operands.push(g);
        }

        // 2. The op's mesh.
        let mut all: Vec<&TensorSharding> = operands
            .iter()
            .map(|&g| &self.prog.values[g].sharding)
            .collect();
        all.extend(annotated.iter().flatten());
        let mesh_name = self.op_mesh(&all);
        self.check_program_devices(&mesh_name, &label, op.pos)?;
        let mesh = self.mesh(&mesh_name).cloned().unwrap_or_default();
        let mesh_ref = MeshRef::Symbol(mesh_name.clone());
        let same_meshes: Vec<String> = self
            .prog
            .meshes
            .iter()
            .filter(|m| m.mesh == mesh)
            .map(|m| m.name.clone())
            .collect();
        let on_mesh = |s: &TensorSharding| -> bool {
            match &s.mesh {
                MeshRef::Symbol(n) => same_meshes.contains(n),
                MeshRef::Inline(m) => *m == mesh,
            }
        };

        // 3. Project and choose factor shardings.
        let operand_sh: Vec<Option<TensorSharding>> = operands
            .iter()
            .map(|&g| {
                let s = &self.prog.values[g].sharding;
                on_mesh(s).then(|| s.clone())
            })
            .collect();
        let result_sh: Vec<Option<TensorSharding>> = annotated
            .iter()
            .map(|a| a.as_ref().filter(|s| on_mesh(s)).cloned())
            .collect();
        let mut proj = ShardingProjection::build(
            &rule,
            &as_refs(&operand_sh),
            &as_refs(&result_sh),
            &mesh,
            true,
        )
        .map_err(|e| {
            Diagnostic::new(
                DiagKind::Sharding,
                op.pos,
                format!("{label}: its shardings do not fit its sharding rule {rule}: {e}"),
            )
        })?;
        for t in proj.operands.iter_mut().chain(proj.results.iter_mut()) {
            if t.factors.values().any(|fs| !fs.overflow_axes.is_empty()) {
                // A sharding that does not fit the factors takes no part.
                for fs in t.factors.values_mut() {
                    fs.axes.clear();
                    fs.overflow_axes.clear();
                }
            }
        }
        let sizes: Vec<i64> = op
            .operands
            .iter()
            .chain(&op.results)
            .map(|&v| f.ty(v).num_elements())
            .collect();
        let mut common = compat::choose_common_axes(&rule, &proj, &sizes, &mesh);
        let whole = whole_factors(&op.kind, &rule);
        if !whole.is_empty() {
            make_whole(&rule, &whole, &mut common, &mesh);
        }
        if !matches!(op.kind, OpKind::Concatenate(_)) {
            // Only concatenate rebuilds a need-replication factor (with a
            // remap); every other op (gather's index vector, a dynamic
            // slice's sliced dim, sort's dim) reads it whole.
            for f in rule.factors_of_kind(FactorKind::NeedReplication) {
                common[f].clear();
            }
        }
        let input_shape = op.operands.first().map(|&v| f.ty(v).shape.clone());
        fit_window_factors(
            &op.kind,
            &rule,
            input_shape.as_deref().unwrap_or(&[]),
            &mut common,
            &mesh,
        );
        let shape_of = |k: usize| op.operands.get(k).map(|&v| f.ty(v).shape.clone());
        let conv_shapes = (
            shape_of(0).unwrap_or_default(),
            shape_of(1).unwrap_or_default(),
        );
        let conv_note = fit_conv_factors(
            &op.kind,
            &rule,
            (&conv_shapes.0, &conv_shapes.1),
            &mut common,
            &mesh,
        );
        // A windowed op (and a convolution) computes on blocks of its operands as they are,
        // so they must be sharded exactly as its factors are.
        let remaps = !is_window_op(&op.kind) && !matches!(op.kind, OpKind::Convolution(_));

        if matches!(op.kind, OpKind::RngBitGenerator(_)) {
            // Its counters number the elements of the whole output (XLA's
            // element order depends on the whole shape): every device
            // generates all the bits and keeps its block, as XLA does.
            for axes in common.iter_mut() {
                axes.clear();
            }
        }

        // Operands: reshard to what the common axes imply.
        let mut new_operands = Vec::with_capacity(operands.len());
        for (k, &g) in operands.iter().enumerate() {
            let Some(mapping) = rule.operands.get(k) else {
                new_operands.push(g);
                continue;
            };
            let current = &proj.operands[k];
            let cur_sharding = self.prog.values[g].sharding.clone();
            let keep_empty = |f: usize| {
                remaps
                    && is_remap_kind(rule.kind(f))
                    && current.factors.get(&f).is_none_or(|fs| fs.axes.is_empty())
            };
            let mut required =
                project_back(&rule, mapping, &common, &mesh, &mesh_ref, keep_empty, |e| {
                    Diagnostic::new(
                        DiagKind::Sharding,
                        op.pos,
                        format!("{label}: operand {k}: {e}"),
                    )
                })?;
            // An op that computes on partial operands together needs all
            // of them partial along the same axes.
            if pass == PartialPass::Joint && !kept_partial.is_empty() {
                required.unreduced = kept_partial.clone();
                sort_in_mesh_order(&mesh, &mut required.unreduced);
                required.unreduced_op = kept_op.unwrap_or_default();
            } else {
                required.unreduced = cur_sharding.unreduced.clone();
                required.unreduced_op = cur_sharding.unreduced_op;
            }
            let same_partials = required.unreduced == cur_sharding.unreduced;
            if (mapping.is_scalar() && same_partials)
                || self.same_placement(&cur_sharding, &required)
            {
                new_operands.push(g);
                continue;
            }
            let mut reason = explain_operand(
                &rule,
                k,
                current,
                &common,
                &cur_sharding,
                &required,
                on_mesh(&cur_sharding),
            );
            if let Some(note) = &conv_note {
                reason = format!("{reason}; {note}");
            }
            new_operands.push(self.reshard(g, &required, cause_of(reason))?);
        }

        // 4. Compute, then reduce partial results.
        let mut reduction_axes: Vec<AxisRef> = Vec::new();
        for f in rule.factors_of_kind(FactorKind::Reduction) {
            for a in &common[f] {
                push_or_merge(&mut reduction_axes, a.clone(), &mesh).map_err(|e| {
                    Diagnostic::new(DiagKind::Sharding, op.pos, format!("{label}: {e}"))
                })?;
            }
        }
        // Factors on sub-axes of one axis (two reduced dims) merge back
        // into it: an unreduced set is written canonically.
        let canonical = |axes: &[AxisRef]| {
            sorted_and_merged(axes, &mesh)
                .map_err(|e| Diagnostic::new(DiagKind::Sharding, op.pos, format!("{label}: {e}")))
        };
        let reduction_axes = canonical(&reduction_axes)?;
        let mut partial_axes = reduction_axes.clone();
        for a in &kept_partial {
            if !partial_axes.contains(a) {
                partial_axes.push(a.clone());
            }
        }
        let partial_axes = canonical(&partial_axes)?;
        // How each result's partial values combine: a reduce's own
        // reduction per input, a scatter's combining update, a sum for
        // everything else; `None`: a reduce whose body is no all-reduce
        // op combines its partials itself (its partials have no name in
        // the sharding syntax).
        let reductions: Option<Vec<ReduceKind>> = match &op.kind {
            OpKind::Reduce(r) => r.kinds(),
            OpKind::Scatter(s) => Some(vec![
                match s.update_kind() {
                    Ok(ScatterUpdate::Combine(kind)) => kind,
                    _ => ReduceKind::Add,
                };
                op.results.len()
            ]),
            _ => Some(vec![ReduceKind::Add; op.results.len()]),
        };
        // How each result's partial values combine in the sharding syntax:
        // the op's own reduction where a reduction factor is sharded, else
        // the operands'.
        let mut partial_ops = Vec::with_capacity(op.results.len());
        for k in 0..op.results.len() {
            let own = reductions.as_ref().and_then(|r| reduction_op(r[k]));
            partial_ops.push(if reduction_axes.is_empty() {
                kept_op.unwrap_or_default()
            } else {
                match (own, kept_op) {
                    (Some(own), Some(kept)) if own != kept => {
                        return Err(Diagnostic::new(
                            DiagKind::Sharding,
                            op.pos,
                            format!(
                                "{label}: operands stay partial {} but the op's own partial results are {}",
                                kept.plural(),
                                own.plural()
                            ),
                        ));
                    }
                    (Some(own), _) => own,
                    (None, _) => ReductionOp::default(),
                }
            });
        }
        let mut computed = Vec::with_capacity(op.results.len());
        for (k, &res) in op.results.iter().enumerate() {
            let mapping = &rule.results[k];
            let mut s = project_back(
                &rule,
                mapping,
                &common,
                &mesh,
                &mesh_ref,
                |_| false,
                |e| {
                    Diagnostic::new(
                        DiagKind::Sharding,
                        op.pos,
                        format!("{label}: result {k}: {e}"),
                    )
                },
            )?;
            s.unreduced = partial_axes.clone();
            s.unreduced_op = partial_ops[k];
            let g = self.new_value(f.ty(res).clone(), s);
            computed.push(g);
        }
        self.push(
            GStepKind::Compute(op.kind.clone()),
            new_operands.clone(),
            computed.clone(),
            cause_of(String::new()),
        );
        if let (None, OpKind::Reduce(r)) = (&reductions, &op.kind) {
            // Nothing of it stays partial (no unreduced sharding names how
            // its partial results combine): they are combined, and a
            // result annotated unreduced becomes so again from the whole
            // value (`reshard_result`).
            if !reduction_axes.is_empty() {
                let inits = &new_operands[op.results.len()..];
                let cause = cause_of(String::new());
                computed =
                    self.combine_partials(r, &computed, inits, &reduction_axes, &mesh, &cause)?;
            }
        }
        for (k, &res) in op.results.iter().enumerate() {
            let mut g = computed[k];
            let Some(reduction) = reductions.as_ref().map(|r| r[k]) else {
                self.reshard_result(k, g, res, &annotated, &partial_axes, &cause_of)?;
                continue;
            };
            // Partial results stay partial where the annotation says so
            // and combines them the way they are computed; otherwise they
            // are reduced, and `reshard_result` makes the whole value
            // unreduced as annotated (a dot annotated `unreduced=max`:
            // summed, then copies).
            let keep: Vec<AxisRef> = annotated[k]
                .as_ref()
                .filter(|a| reduction_op(reduction) == Some(a.unreduced_op))
                .map(|a| a.unreduced.clone())
                .unwrap_or_default();
            let reduce: Vec<AxisRef> = reduction_axes
                .iter()
                .filter(|a| !keep.contains(a))
                .cloned()
                .collect();
            if !reduce.is_empty() {
                let factors: Vec<String> = rule
                    .factors_of_kind(FactorKind::Reduction)
                    .into_iter()
                    .filter(|&f| !common[f].is_empty())
                    .map(|f| format!("{} on {}", factor_symbol(f), braced(&common[f])))
                    .collect();
                let reason = format!(
                    "partial {} of {}: reduction factor {} is sharded",
                    match reduction {
                        ReduceKind::Add => "sums",
                        ReduceKind::Maximum => "maxima",
                        ReduceKind::Minimum => "minima",
                        ReduceKind::Multiply => "products",
                        ReduceKind::And | ReduceKind::Or => "results",
                    },
                    op.kind.name(),
                    factors.join(", ")
                );
                g = self.all_reduce(g, &reduce, reduction, cause_of(reason));
            }
            self.reshard_result(k, g, res, &annotated, &partial_axes, &cause_of)?;
        }
        Ok(())
    }

    /// 5. Reshard result `k` (computed as `g`) to its annotation.
    fn reshard_result(
        &mut self,
        k: usize,
        mut g: GValueId,
        res: Value,
        annotated: &[Option<TensorSharding>],
        partial_axes: &[AxisRef],
        cause_of: &dyn Fn(String) -> Cause,
    ) -> Result<(), Diagnostic> {
        if let Some(a) = &annotated[k] {
            let mut target = a.clone();
            target.unreduced.retain(|x| partial_axes.contains(x));
            if target.unreduced.is_empty() {
                target.unreduced_op = ReductionOp::default();
            }
            if !self.same_placement(&self.prog.values[g].sharding, &target) {
                let reason = format!(
                    "result {k} is computed as {} but annotated {target}",
                    self.prog.values[g].sharding
                );
                g = self.reshard(g, &target, cause_of(reason))?;
            }
        }
        self.map.insert(res, g);
        Ok(())
    }
}

fn as_refs(v: &[Option<TensorSharding>]) -> Vec<Option<&TensorSharding>> {
    v.iter().map(Option::as_ref).collect()
}

/// The sharding of a tensor with `mapping` whose factors are sharded as
/// `common` (factors where `keep_empty` holds stay unsharded).
fn project_back(
    rule: &OpShardingRule,
    mapping: &TensorMapping,
    common: &[Vec<AxisRef>],
    mesh: &Mesh,
    mesh_ref: &MeshRef,
    keep_empty: impl Fn(usize) -> bool,
    err: impl Fn(String) -> Diagnostic,
) -> Result<TensorSharding, Diagnostic> {
    let mut t = TensorFactorShardings::default();
    for d in &mapping.dims {
        for &f in &d.factors {
            t.factors.insert(
                f,
                FactorSharding {
                    axes: if keep_empty(f) {
                        Vec::new()
                    } else {
                        common.get(f).cloned().unwrap_or_default()
                    },
                    is_closed: true,
                    is_minor_most: d.is_minor_most(f),
                    overflow_axes: Vec::new(),
                },
            );
        }
    }
    let s = t
        .to_tensor_sharding(mapping, &rule.factor_sizes, mesh_ref, mesh)
        .map_err(|e| err(e.to_string()))?;
    Ok(placement(&s, mesh))
}

/// Why operand `k` must be resharded: the factors whose axes change, and
/// which factor an axis it loses now shards.
fn explain_operand(
    rule: &OpShardingRule,
    k: usize,
    current: &TensorFactorShardings,
    common: &[Vec<AxisRef>],
    from: &TensorSharding,
    to: &TensorSharding,
    same_mesh: bool,
) -> String {
    if !same_mesh {
        return format!(
            "operand {k} is sharded on {} but the op runs on {}: {from} -> {to}",
            from.mesh, to.mesh
        );
    }
    let mut parts = Vec::new();
    for (&f, fs) in &current.factors {
        let want = common.get(f).cloned().unwrap_or_default();
        if fs.axes == want || (is_remap_kind(rule.kind(f)) && fs.axes.is_empty()) {
            continue;
        }
        let kind = match rule.kind(f) {
            FactorKind::PassThrough => "pass-through",
            FactorKind::Reduction => "reduction",
            FactorKind::Permutation => "permutation",
            FactorKind::NeedReplication => "need-replication",
        };
        let mut why = String::new();
        for a in fs.axes.iter().filter(|a| !want.contains(a)) {
            if let Some(g) = (0..common.len()).find(|&g| {
                g != f
                    && common[g]
                        .iter()
                        .any(|b| crate::rules::axis_algebra::overlaps(a, b))
            }) {
                why = format!(" (axis {a} shards factor {} instead)", factor_symbol(g));
                break;
            }
        }
        parts.push(format!(
            "factor {} ({kind}) is {} here but {} in the op{why}",
            factor_symbol(f),
            braced(&fs.axes),
            braced(&want)
        ));
    }
    if parts.is_empty() {
        format!("operand {k} is {from} but the op needs {to}")
    } else {
        format!("operand {k}: {}", parts.join("; "))
    }
}
