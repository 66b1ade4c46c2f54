//! Explicit reshards (Shardy's `-sdy-insert-explicit-reshards`, SPEC §6):
//! turn a propagated module into a [`GlobalProgram`] in which every op is
//! compatible and all data movement is explicit.
//!
//! Per op, in program order:
//! 1. operands that are unreduced along axes the op's result is not get an
//!    all-reduce first (the op needs their full value);
//! 2. the op's mesh is the most common mesh of its sharded tensors;
//!    tensors on another mesh take no part in choosing factor shardings;
//! 3. the shardings are projected onto the op's factors and one sharding
//!    per factor is chosen ([`compat::choose_common_axes`]); an operand
//!    whose sharding differs from what that implies is resharded first;
//! 4. the op computes its results in the implied sharding; sharded
//!    reduction factors make them partial sums, reduced by an all-reduce
//!    (sum for `dot_general`, the `reduce`'s own combiner) unless the
//!    result is annotated `unreduced` along those axes;
//! 5. a result whose annotation differs from what the op computes is
//!    resharded after it. Unannotated results keep what the op computes.
//!
//! `sdy.reshard` / `sdy.sharding_constraint` ops become reshard steps;
//! function results are resharded to their annotated sharding (an
//! unannotated result keeps its value's sharding). Reshards of one value to
//! one sharding are made once and shared by all users. Last, reshards are
//! moved above ops that grow their operand when that moves fewer bytes
//! ([`crate::partition::global::hoist`]).

pub(crate) mod combine_partials;
pub mod manual;
pub(crate) mod op_reshards;
pub(crate) mod structure;

use std::collections::HashMap;

use crate::diag::{DiagKind, Diagnostic, SrcPos};
use crate::ir::find_attr;
use crate::ir::literal::{DenseLiteral, Scalar};
use crate::ir::ops::constant::Constant;
use crate::ir::ops::reshard::Reshard;
use crate::ir::ops::sharding_constraint::ShardingConstraint;
use crate::ir::{Function, Module, OpData, OpId, OpKind, ReduceKind, Value};
use crate::partition::global::hoist::hoist_reshards;
use crate::partition::global::inline::inlined_entry;
use crate::partition::global::{
    Cause, Donation, GStep, GStepKind, GValue, GValueId, GlobalProgram,
};
use crate::partition::limits::check_mesh_devices;
use crate::sharding::validate::{is_maximal_mesh, sort_in_mesh_order};
use crate::sharding::{
    AxisRef, DimSharding, Mesh, MeshDef, MeshRef, ReductionOp, TensorSharding, ValidSharding,
};

/// Name of the mesh made up when a module defines none (one device).
pub const SINGLE_DEVICE_MESH: &str = "single_device";

/// Build the global program of `module`'s entry function (calls inlined).
/// Every op must be fully sharded (closed shardings, as after propagation);
/// an op without a sharding is replicated.
pub fn insert_explicit_reshards(module: &Module) -> Result<GlobalProgram, Diagnostic> {
    let f = inlined_entry(module)?;
    let mut b = Builder::new(module, &f)?;
    b.args()?;
    for (id, op) in f.ops_in_order() {
        b.op(id, op)?;
    }
    b.returns()?;
    let mut prog = b.prog;
    // Hoisting reorders steps, which region blocks list by index; programs
    // with loops or branches keep their reshards where they are.
    if !prog.has_regions() {
        hoist_reshards(&mut prog);
    }
    Ok(prog)
}

/// The all-reduce that combines partial results written `unreduced=op{...}`.
pub(crate) fn reduce_kind(op: ReductionOp) -> ReduceKind {
    match op {
        ReductionOp::Sum => ReduceKind::Add,
        ReductionOp::Max => ReduceKind::Maximum,
        ReductionOp::Min => ReduceKind::Minimum,
    }
}

/// How partial results an op's reduction leaves are written, if the
/// sharding syntax can say it (products and logical reductions cannot).
pub(crate) fn reduction_op(kind: ReduceKind) -> Option<ReductionOp> {
    match kind {
        ReduceKind::Add => Some(ReductionOp::Sum),
        ReduceKind::Maximum => Some(ReductionOp::Max),
        ReduceKind::Minimum => Some(ReductionOp::Min),
        ReduceKind::Multiply | ReduceKind::And | ReduceKind::Or => None,
    }
}

/// `stablehlo.dot_general at 5:10`, or with the op number when the op was
/// not parsed from text.
pub fn op_label(op: &OpData, id: OpId) -> String {
    if op.pos.is_known() {
        format!("{} at {}", op.kind.name(), op.pos)
    } else {
        format!("{} (op #{})", op.kind.name(), id.0)
    }
}

/// `{"x", "y"}`.
pub fn braced(axes: &[AxisRef]) -> String {
    let v: Vec<String> = axes.iter().map(ToString::to_string).collect();
    format!("{{{}}}", v.join(", "))
}

/// The placement part of a sharding: closed dims without priorities, no
/// explicitly replicated axes (they do not move data), unreduced axes in
/// mesh order.
pub(crate) fn placement(s: &TensorSharding, mesh: &Mesh) -> TensorSharding {
    let mut unreduced = s.unreduced.clone();
    sort_in_mesh_order(mesh, &mut unreduced);
    TensorSharding {
        mesh: s.mesh.clone(),
        dims: s
            .dims
            .iter()
            .map(|d| DimSharding::closed(d.axes.clone()))
            .collect(),
        replicated: Vec::new(),
        unreduced,
        unreduced_op: s.unreduced_op,
    }
}

pub(crate) fn is_fully_replicated(s: &TensorSharding) -> bool {
    s.unreduced.is_empty() && s.dims.iter().all(|d| d.axes.is_empty())
}

pub(crate) struct Builder<'a> {
    pub(crate) module: &'a Module,
    pub(crate) f: &'a Function,
    pub(crate) prog: GlobalProgram,
    /// The global value an IR value currently is.
    pub(crate) map: HashMap<Value, GValueId>,
    pub(crate) reshards: HashMap<(GValueId, TensorSharding), GValueId>,
    /// The regions being lowered (see `structure`).
    pub(crate) scopes: crate::partition::global::explicit_reshards::structure::Scopes,
}

impl<'a> Builder<'a> {
    fn new(module: &'a Module, f: &'a Function) -> Result<Builder<'a>, Diagnostic> {
        for m in &module.meshes {
            check_mesh_devices(&format!("mesh @{}", m.name), &m.mesh, m.pos)?;
        }
        let mut meshes = module.meshes.clone();
        if meshes.is_empty() {
            meshes.push(MeshDef {
                name: SINGLE_DEVICE_MESH.into(),
                mesh: Mesh::new(&[]),
                attrs: None,
                pos: SrcPos::UNKNOWN,
            });
        }
        let prog = GlobalProgram {
            name: f.name.clone(),
            meshes,
            values: Vec::new(),
            args: Vec::new(),
            results: Vec::new(),
            arg_memory: Vec::new(),
            result_memory: Vec::new(),
            arg_donation: Vec::new(),
            steps: Vec::new(),
        };
        Ok(Builder {
            module,
            f,
            prog,
            map: HashMap::new(),
            reshards: HashMap::new(),
            scopes: Default::default(),
        })
    }

    /// The sorted device ids of mesh `name`.
    fn device_set(&self, name: &str) -> Vec<i64> {
        let mut ids = self.mesh(name).map_or_else(Vec::new, Mesh::device_list);
        ids.sort_unstable();
        ids
    }

    /// Data moves only between meshes over the same devices, and the
    /// program runs on the devices of its default mesh.
    fn check_devices(
        &self,
        from: &TensorSharding,
        to: &TensorSharding,
        cause: &Cause,
    ) -> Result<(), Diagnostic> {
        let default = self.default_mesh_name();
        let (Some(x), Some(y)) = (from.mesh_name(), to.mesh_name()) else {
            return Ok(());
        };
        for (a, b) in [(x, y), (y, default.as_str())] {
            let (a_set, b_set) = (self.device_set(a), self.device_set(b));
            if a_set != b_set {
                let show = |v: &[i64]| {
                    let s: Vec<String> = v.iter().map(ToString::to_string).collect();
                    format!("[{}]", s.join(", "))
                };
                return Err(Diagnostic::new(
                    DiagKind::Sharding,
                    cause.pos,
                    format!(
                        "{}: cannot move data from mesh @{a} (devices {}) to mesh @{b} (devices {}): \
                         a reshard only moves data between meshes over the same devices",
                        cause.op,
                        show(&a_set),
                        show(&b_set)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A value on mesh `name` lives on the program's devices.
    pub(crate) fn check_program_devices(
        &self,
        name: &str,
        what: &str,
        pos: SrcPos,
    ) -> Result<(), Diagnostic> {
        let default = self.default_mesh_name();
        let (set, program) = (self.device_set(name), self.device_set(&default));
        if set != program && !self.mesh(name).is_some_and(is_maximal_mesh) {
            return Err(Diagnostic::new(
                DiagKind::Sharding,
                pos,
                format!(
                    "{what} is on mesh @{name} over {} devices {:?}, but the program runs on the {} devices {:?} of @{default}",
                    set.len(),
                    set,
                    program.len(),
                    program
                ),
            ));
        }
        Ok(())
    }

    pub(crate) fn default_mesh_name(&self) -> String {
        self.prog
            .meshes
            .iter()
            .find(|m| !is_maximal_mesh(&m.mesh))
            .unwrap_or(&self.prog.meshes[0])
            .name
            .clone()
    }

    /// The mesh named `name` (module meshes and interned inline ones).
    pub(crate) fn mesh(&self, name: &str) -> Option<&Mesh> {
        self.prog.mesh(name)
    }

    /// Name of the program mesh equal to `mesh`, interning it if new.
    fn intern_mesh(&mut self, mesh: &Mesh) -> String {
        if let Some(m) = self.prog.meshes.iter().find(|m| m.mesh == *mesh) {
            return m.name.clone();
        }
        let name = format!("inline_mesh_{}", self.prog.meshes.len());
        self.prog.meshes.push(MeshDef {
            name: name.clone(),
            mesh: mesh.clone(),
            attrs: None,
            pos: SrcPos::UNKNOWN,
        });
        name
    }

    /// A validated placement for a tensor of `rank`: `None`, maximal-mesh
    /// shardings and shardings of rank-0 tensors become replicated on
    /// `default` (or the default mesh).
    pub(crate) fn normalize(
        &mut self,
        s: Option<&TensorSharding>,
        rank: usize,
        default: Option<&str>,
        pos: SrcPos,
        what: &str,
    ) -> Result<TensorSharding, Diagnostic> {
        let default = default.map_or_else(|| self.default_mesh_name(), str::to_string);
        let Some(s) = s else {
            return Ok(TensorSharding::replicated(default, rank));
        };
        let name = match &s.mesh {
            MeshRef::Symbol(n) => {
                if self.module.mesh(n).is_none() && self.mesh(n).is_none() {
                    return Err(Diagnostic::new(
                        DiagKind::UndefinedName,
                        pos,
                        format!("{what} is sharded on undefined mesh @{n}"),
                    ));
                }
                n.clone()
            }
            MeshRef::Inline(m) => {
                check_mesh_devices(&format!("the inline mesh of {what}"), m, pos)?;
                self.intern_mesh(m)
            }
        };
        let mesh = self.mesh(&name).cloned().unwrap_or_default();
        if is_maximal_mesh(&mesh) {
            return Ok(TensorSharding::replicated(default, rank));
        }
        let mut s = s.clone();
        s.mesh = MeshRef::Symbol(name);
        // `partition` takes a module whose shardings propagation may have
        // rewritten, so this is its one check of each annotated sharding.
        let s = ValidSharding::new(&s, &mesh, rank).map_err(|e| e.to_diagnostic(pos, what))?;
        Ok(placement(s.sharding(), s.mesh()))
    }

    pub(crate) fn new_value(
        &mut self,
        ty: crate::ir::TensorType,
        sharding: TensorSharding,
    ) -> GValueId {
        self.prog.values.push(GValue { ty, sharding });
        self.prog.values.len() - 1
    }

    pub(crate) fn push(
        &mut self,
        kind: GStepKind,
        operands: Vec<GValueId>,
        results: Vec<GValueId>,
        cause: Cause,
    ) {
        self.prog.steps.push(GStep {
            kind,
            operands,
            results,
            cause,
        });
    }

    pub(crate) fn lookup(&self, v: Value, pos: SrcPos) -> Result<GValueId, Diagnostic> {
        self.map.get(&v).copied().ok_or_else(|| {
            Diagnostic::new(
                DiagKind::UndefinedName,
                pos,
                format!("value %{} is used before it is defined", v.0),
            )
        })
    }

    fn args(&mut self) -> Result<(), Diagnostic> {
        let f = self.f;
        for (i, &a) in f.args.iter().enumerate() {
            let ty = f.ty(a).clone();
            let what = format!("argument {i} of @{}", f.name);
            let s = self.normalize(
                f.arg_attrs.get(i).and_then(|p| p.sharding.as_ref()),
                ty.rank(),
                None,
                f.pos,
                &what,
            )?;
            if let Some(name) = s.mesh_name() {
                self.check_program_devices(name, &what, f.pos)?;
            }
            let g = self.new_value(ty, s);
            self.prog.args.push(g);
            self.prog.arg_memory.push(memory_kind(f.arg_attrs.get(i)));
            self.prog.arg_donation.push(donation(f.arg_attrs.get(i)));
            self.map.insert(a, g);
        }
        Ok(())
    }

    fn returns(&mut self) -> Result<(), Diagnostic> {
        let f = self.f;
        for (i, &v) in f.returns.iter().enumerate() {
            let g = self.lookup(v, f.return_pos)?;
            let what = format!("result {i} of @{}", f.name);
            let annotated = f.result_attrs.get(i).and_then(|p| p.sharding.as_ref());
            let cause = |reason: String| Cause {
                op: format!("return of @{} (result {i})", f.name),
                pos: f.return_pos,
                reason,
            };
            let out = match annotated {
                Some(s) => {
                    let rank = self.prog.values[g].ty.rank();
                    let target = self.normalize(Some(s), rank, None, f.return_pos, &what)?;
                    let reason = format!("function result {i} is annotated {target}");
                    self.reshard(g, &target, cause(reason))?
                }
                None => {
                    let mut target = self.prog.values[g].sharding.clone();
                    target.unreduced.clear();
                    let reason = format!("function result {i} must hold the full value");
                    self.reshard(g, &target, cause(reason))?
                }
            };
            self.prog.results.push(out);
            self.prog
                .result_memory
                .push(memory_kind(f.result_attrs.get(i)));
        }
        Ok(())
    }

    /// Whether two placements hold the same data on every device.
    pub(crate) fn same_placement(&self, a: &TensorSharding, b: &TensorSharding) -> bool {
        if is_fully_replicated(a) && is_fully_replicated(b) {
            return true;
        }
        self.same_mesh(a, b)
            && a.unreduced == b.unreduced
            && (a.unreduced.is_empty() || a.unreduced_op == b.unreduced_op)
            && a.dims.len() == b.dims.len()
            && a.dims.iter().zip(&b.dims).all(|(x, y)| x.axes == y.axes)
    }

    /// The value `v` relabels when `v` is its copies taken as partial
    /// maxima (minima) and reducing them by `reduction` gives `reduced`.
    fn copies_of(
        &self,
        v: GValueId,
        reduced: &TensorSharding,
        reduction: ReduceKind,
    ) -> Option<GValueId> {
        if !matches!(reduction, ReduceKind::Maximum | ReduceKind::Minimum) {
            return None;
        }
        let step = self
            .prog
            .steps
            .iter()
            .rev()
            .find(|s| s.results.first() == Some(&v))?;
        let &[u] = step.operands.as_slice() else {
            return None;
        };
        let copies = matches!(step.kind, GStepKind::Relabel)
            && self.prog.values[u].sharding.unreduced.is_empty()
            && self.same_placement(&self.prog.values[u].sharding, reduced);
        copies.then_some(u)
    }

    /// Whether two shardings are on the same mesh (the same axes and
    /// device order, by whatever name).
    pub(crate) fn same_mesh(&self, a: &TensorSharding, b: &TensorSharding) -> bool {
        a.mesh == b.mesh
            || match (&a.mesh, &b.mesh) {
                (MeshRef::Symbol(x), MeshRef::Symbol(y)) => {
                    self.mesh(x).is_some() && self.mesh(x) == self.mesh(y)
                }
                _ => false,
            }
    }

    /// `v` moved to `target` (reduced first where `target` is not
    /// unreduced along an axis `v` is).
    pub(crate) fn reshard(
        &mut self,
        v: GValueId,
        target: &TensorSharding,
        cause: Cause,
    ) -> Result<GValueId, Diagnostic> {
        let src = self.prog.values[v].sharding.clone();
        let mut v = v;
        // Partial results the target does not keep are reduced first: the
        // axes it is not unreduced along, and every axis where it
        // combines partials another way (sums of what were maxima) or
        // lives on another mesh.
        // Partial results do not move between meshes: a device's partial
        // belongs to its coordinates, which another device order gives to
        // another device.
        let other_op = !target.unreduced.is_empty() && src.unreduced_op != target.unreduced_op;
        let other_mesh = !self.same_mesh(&src, target);
        let reduce: Vec<AxisRef> = src
            .unreduced
            .iter()
            .filter(|a| other_op || other_mesh || !target.unreduced.contains(a))
            .cloned()
            .collect();
        if !reduce.is_empty() {
            let reason = format!(
                "the value is partial {} over {}: {}",
                src.unreduced_op.plural(),
                braced(&reduce),
                cause.reason
            );
            v = self.all_reduce(
                v,
                &reduce,
                reduce_kind(src.unreduced_op),
                Cause {
                    reason,
                    ..cause.clone()
                },
            );
        }
        let extra: Vec<AxisRef> = target
            .unreduced
            .iter()
            .filter(|a| !self.prog.values[v].sharding.unreduced.contains(a))
            .cloned()
            .collect();
        if !extra.is_empty() {
            return self.make_unreduced(v, target, &extra, cause);
        }
        if self.same_placement(&self.prog.values[v].sharding, target) {
            return Ok(v);
        }
        self.check_devices(&self.prog.values[v].sharding.clone(), target, &cause)?;
        let key = (v, target.clone());
        if let Some(&r) = self.reshards.get(&key) {
            return Ok(r);
        }
        let ty = self.prog.values[v].ty.clone();
        let r = self.new_value(ty, target.clone());
        let cause = self.scopes.hoist(&mut self.prog, v, key.clone(), r, cause);
        self.push(GStepKind::Reshard, vec![v], vec![r], cause);
        self.reshards.insert(key, r);
        Ok(r)
    }

    /// `sdy.all_reduce`: the operand's partial results along the reduction
    /// axes combined (as its sharding says: sums or extrema), then placed
    /// as `out_sharding`. The same all-reduce the partitioner writes for
    /// an op that reads a partial value in full, so the bytes are too.
    /// Along an axis the operand is not partial along there is nothing to
    /// combine: the op is the identity on the whole value (its global
    /// meaning, which the reference interpreter runs), never a sum of
    /// copies.
    pub(crate) fn sdy_all_reduce(
        &mut self,
        op: &OpData,
        ar: &crate::ir::ops::sdy_all_reduce::SdyAllReduce,
        label: String,
    ) -> Result<(), Diagnostic> {
        let (&[operand], &[result]) = (&op.operands[..], &op.results[..]) else {
            return Err(Diagnostic::new(
                DiagKind::Type,
                op.pos,
                format!("{label} needs one operand and one result"),
            ));
        };
        let g = self.lookup(operand, op.pos)?;
        let src = self.prog.values[g].sharding.clone();
        let axes: Vec<AxisRef> = ar
            .reduction_axes
            .iter()
            .filter(|a| src.unreduced.contains(a))
            .cloned()
            .collect();
        let cause = Cause {
            op: label.clone(),
            pos: op.pos,
            reason: format!(
                "explicit sdy.all_reduce along {}",
                braced(&ar.reduction_axes)
            ),
        };
        let reduced = if axes.is_empty() {
            g
        } else {
            self.all_reduce(g, &axes, reduce_kind(src.unreduced_op), cause.clone())
        };
        let rank = self.f.ty(result).rank();
        let target = self.normalize(Some(&ar.out_sharding), rank, None, op.pos, &label)?;
        let r = self.reshard(reduced, &target, cause)?;
        self.map.insert(result, r);
        Ok(())
    }

    pub(crate) fn all_reduce(
        &mut self,
        v: GValueId,
        axes: &[AxisRef],
        reduction: ReduceKind,
        cause: Cause,
    ) -> GValueId {
        let mut s = self.prog.values[v].sharding.clone();
        s.unreduced.retain(|a| !axes.contains(a));
        if s.unreduced.is_empty() {
            s.unreduced_op = ReductionOp::default();
        }
        // Copies relabelled as partial extrema reduce to themselves.
        if let Some(u) = self.copies_of(v, &s, reduction) {
            return u;
        }
        // One all-reduce per value and axes, shared by every use (keyed by
        // the reduced sharding; like a reshard's, the entry lives as long
        // as the region that made it).
        let key = (v, s.clone());
        if let Some(&r) = self.reshards.get(&key) {
            return r;
        }
        let ty = self.prog.values[v].ty.clone();
        let r = self.new_value(ty, s);
        self.reshards.insert(key, r);
        self.push(
            GStepKind::AllReduce {
                axes: axes.to_vec(),
                reduction,
            },
            vec![v],
            vec![r],
            cause,
        );
        r
    }

    pub(crate) fn op(&mut self, id: OpId, op: &OpData) -> Result<(), Diagnostic> {
        let label = op_label(op, id);
        match &op.kind {
            OpKind::ManualComputation(mc) => self.manual_computation(id, op, mc),
            OpKind::ShardingGroup(_) => Ok(()),
            OpKind::While(_) => self.while_loop(op, label),
            OpKind::Case(_) => self.case(op, label),
            OpKind::OptimizationBarrier(_) => self.optimization_barrier(op, label),
            OpKind::Call(call) => Err(Diagnostic::new(
                DiagKind::Unsupported,
                op.pos,
                format!("{label}: call of @{} was not inlined", call.callee),
            )),
            OpKind::SdyAllReduce(ar) => self.sdy_all_reduce(op, ar, label),
            OpKind::Reshard(Reshard { sharding })
            | OpKind::ShardingConstraint(ShardingConstraint { sharding }) => {
                let [operand] = op.operands[..] else {
                    return Err(Diagnostic::new(
                        DiagKind::Type,
                        op.pos,
                        format!("{label} needs one operand"),
                    ));
                };
                let g = self.lookup(operand, op.pos)?;
                let rank = self.prog.values[g].ty.rank();
                let target = self.normalize(Some(sharding), rank, None, op.pos, &label)?;
                let cause = Cause {
                    op: label.clone(),
                    pos: op.pos,
                    reason: format!("explicit {} to {target}", op.kind.name()),
                };
                let r = self.reshard(g, &target, cause)?;
                for &res in &op.results {
                    self.map.insert(res, r);
                }
                Ok(())
            }
            OpKind::Constant(_) | OpKind::Iota(_) => {
                let operands = op
                    .operands
                    .iter()
                    .map(|&v| self.lookup(v, op.pos))
                    .collect::<Result<Vec<_>, _>>()?;
                let mut results = Vec::new();
                for (k, &res) in op.results.iter().enumerate() {
                    let ty = self.f.ty(res).clone();
                    let annotated = op.shardings.as_ref().and_then(|s| s.get(k));
                    let mut s = self.normalize(annotated, ty.rank(), None, op.pos, &label)?;
                    s.unreduced.clear();
                    let g = self.new_value(ty, s);
                    self.map.insert(res, g);
                    results.push(g);
                }
                self.push(
                    GStepKind::Compute(op.kind.clone()),
                    operands,
                    results,
                    Cause {
                        op: label,
                        pos: op.pos,
                        reason: String::new(),
                    },
                );
                Ok(())
            }
            _ => self.rule_op(id, op, label),
        }
    }
}

/// A parameter's `mhlo.memory_kind`, unquoted.
fn memory_kind(p: Option<&crate::ir::ParamAttrs>) -> Option<String> {
    let a = find_attr(&p?.attrs, "mhlo.memory_kind")?;
    Some(a.value.as_deref()?.trim_matches('"').to_string())
}

/// An argument's `tf.aliasing_output = K : i32` or `jax.buffer_donor =
/// true`.
fn donation(p: Option<&crate::ir::ParamAttrs>) -> Donation {
    let Some(p) = p else {
        return Donation::None;
    };
    if let Some(k) = find_attr(&p.attrs, "tf.aliasing_output")
        .and_then(|a| a.value.as_deref())
        .and_then(|v| v.split(':').next())
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        return Donation::Output(k);
    }
    match find_attr(&p.attrs, "jax.buffer_donor").and_then(|a| a.value.as_deref()) {
        Some(v) if v.trim() == "true" => Donation::Any,
        _ => Donation::None,
    }
}

/// Whether global value `g` is zero everywhere: a zero constant, through
/// broadcasts, reshapes, converts, reshards and relabels (as JAX writes
/// `jnp.zeros`).
pub(crate) fn is_zero(prog: &GlobalProgram, g: GValueId) -> bool {
    let Some(step) = prog.steps.iter().find(|s| s.results.contains(&g)) else {
        return false;
    };
    let zero = |s: &Scalar| match s {
        Scalar::Float(x) => *x == 0.0,
        Scalar::Int(i) => *i == 0,
        Scalar::Bool(b) => !*b,
    };
    match &step.kind {
        GStepKind::Compute(OpKind::Constant(Constant {
            value: DenseLiteral::Splat(s),
            ..
        })) => zero(s),
        GStepKind::Compute(OpKind::Constant(Constant {
            value: DenseLiteral::Elements(v),
            ..
        })) => v.iter().all(zero),
        GStepKind::Compute(
            OpKind::BroadcastInDim(_)
            | OpKind::Reshape(_)
            | OpKind::Convert(_)
            | OpKind::Transpose(_),
        )
        | GStepKind::Reshard
        | GStepKind::Relabel
        | GStepKind::ToUnreduced { .. } => {
            step.operands.len() == 1 && is_zero(prog, step.operands[0])
        }
        _ => false,
    }
}
