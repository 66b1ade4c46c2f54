//! The state `local_ops` builds a [`DeviceProgram`] in,
//! and the primitives every step uses: local values and their types,
//! plain ops, padding masks. `local_ops` (the walk over the global steps)
//! and `remap` (sharded slice / pad / concatenate) both build on it.
//!
//! [`DeviceProgram`]: crate::partition::program::DeviceProgram

use std::collections::{HashMap, HashSet};

use crate::diag::{DiagKind, Diagnostic, SrcPos};
use crate::ir::ops::constant::Constant;
use crate::ir::ops::reduce::Reduce;
use crate::ir::{DenseLiteral, OpKind, Scalar, TensorType};
use crate::partition::global::value_names;
use crate::partition::global::{GStepKind, GValueId, GlobalProgram};
use crate::partition::local::padding::identity_of;
use crate::partition::lower::Lowering;
use crate::partition::program::{Instr, LocalId, LocalValue, PerDevice, ProgramIo};
use crate::sharding::layout::TensorLayout;
use crate::sharding::{AxisRef, Mesh};

/// The device program under construction, and what is known about its
/// values (local type, name, zero padding, masks already made).
pub(crate) struct DeviceBuilder<'a> {
    pub prog: &'a GlobalProgram,
    pub(super) lowering: &'a Lowering,
    pub devices: Vec<i64>,
    pub values: Vec<LocalValue>,
    /// Whether a value's padding is known to hold zeros.
    pub(super) zero_padded: Vec<bool>,
    pub instrs: Vec<Instr>,
    pub(super) inputs: Vec<ProgramIo>,
    pub(super) outputs: Vec<ProgramIo>,
    /// The local value of each global value.
    pub(super) map: Vec<Option<LocalId>>,
    pub(super) names: Vec<String>,
    /// Masks already made: (value, dim, fill bits) -> masked value.
    pub(super) masks: HashMap<(LocalId, usize, u64), LocalId>,
    /// Values whose step was fused into a later collective: their local
    /// block is still their operand's (a partial sum, another sharding).
    pub(super) deferred: HashSet<GValueId>,
}

pub(super) fn internal(pos: SrcPos, msg: String) -> Diagnostic {
    Diagnostic::new(DiagKind::Unsupported, pos, msg)
}

impl<'a> DeviceBuilder<'a> {
    pub(super) fn new(prog: &'a GlobalProgram, lowering: &'a Lowering) -> DeviceBuilder<'a> {
        DeviceBuilder {
            prog,
            lowering,
            devices: prog.devices(),
            values: Vec::new(),
            zero_padded: Vec::new(),
            instrs: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            map: vec![None; prog.values.len()],
            names: value_names(prog),
            masks: HashMap::new(),
            deferred: HashSet::new(),
        }
    }

    pub fn new_value(&mut self, ty: TensorType, name: String) -> LocalId {
        self.values.push(LocalValue { ty, name });
        self.zero_padded.push(false);
        self.values.len() - 1
    }

    pub fn local_ty(&self, v: LocalId) -> &TensorType {
        &self.values[v].ty
    }

    /// The mesh of a global value's sharding.
    pub fn mesh_of(&self, g: GValueId) -> Result<&'a Mesh, Diagnostic> {
        let s = &self.prog.values[g].sharding;
        self.prog.mesh_of(s).ok_or_else(|| {
            internal(
                SrcPos::UNKNOWN,
                format!("sharding {s} refers to an unknown mesh"),
            )
        })
    }

    /// The layout of a global value.
    pub fn layout(&self, g: GValueId) -> Result<TensorLayout, Diagnostic> {
        let v = &self.prog.values[g];
        let mesh = self.mesh_of(g)?;
        TensorLayout::new(mesh, &v.sharding, &v.ty.shape).map_err(|e| {
            internal(
                SrcPos::UNKNOWN,
                format!("value {} ({}): {e}", self.names[g], v.sharding),
            )
        })
    }

    /// The local type of a global value.
    pub fn local_type(&self, g: GValueId) -> Result<TensorType, Diagnostic> {
        let l = self.layout(g)?;
        Ok(self.prog.values[g].ty.with_shape(l.local_shape()))
    }

    /// The local value of `g`, created (with `g`'s local type) on first use.
    pub fn local(&mut self, g: GValueId) -> Result<LocalId, Diagnostic> {
        if let Some(l) = self.map[g] {
            return Ok(l);
        }
        let ty = self.local_type(g)?;
        let l = self.new_value(ty, self.names[g].clone());
        self.map[g] = Some(l);
        Ok(l)
    }

    /// The device's block index along `dim` under `g`'s sharding, for
    /// every device.
    pub fn shard_table(
        &self,
        layout: &TensorLayout,
        dim: usize,
    ) -> Result<PerDevice<i64>, Diagnostic> {
        let mut out = Vec::with_capacity(self.devices.len());
        for &d in &self.devices {
            let idx = layout.shard_index(d).ok_or_else(|| {
                internal(SrcPos::UNKNOWN, format!("device {d} is not in the mesh"))
            })?;
            out.push(idx.get(dim).copied().unwrap_or(0));
        }
        Ok(PerDevice(out))
    }

    pub fn dim_axes(&self, g: GValueId, dim: usize) -> Vec<AxisRef> {
        self.prog.values[g]
            .sharding
            .dims
            .get(dim)
            .map_or_else(Vec::new, |d| d.axes.clone())
    }

    /// The collectives must end in the value's local type.
    pub(super) fn check_type(
        &self,
        l: LocalId,
        g: GValueId,
        pos: SrcPos,
    ) -> Result<(), Diagnostic> {
        let want = self.local_type(g)?;
        if self.values[l].ty != want {
            return Err(internal(
                pos,
                format!(
                    "internal error: {} ends as {} but its sharding {} needs {}",
                    self.names[g], self.values[l].ty, self.prog.values[g].sharding, want
                ),
            ));
        }
        Ok(())
    }

    /// A plain op on local blocks.
    pub(super) fn op(
        &mut self,
        step: usize,
        kind: OpKind,
        operands: Vec<LocalId>,
        results: &[GValueId],
    ) -> Result<(), Diagnostic> {
        let mut locals = Vec::with_capacity(results.len());
        for &r in results {
            locals.push(self.local(r)?);
        }
        let clean = kind.preserves_zero_padding() && operands.iter().all(|&o| self.zero_padded[o]);
        for &l in &locals {
            self.zero_padded[l] = clean;
        }
        self.instrs.push(Instr::Op {
            kind,
            operands,
            results: locals,
            step,
        });
        Ok(())
    }

    /// `l` (the local block of `g`) with the padding along `dim` set to
    /// `fill` (a reduction's identity), if `g` is padded along `dim`.
    pub fn mask_if_padded(
        &mut self,
        step: usize,
        l: LocalId,
        g: GValueId,
        dim: usize,
        fill: Scalar,
    ) -> Result<LocalId, Diagnostic> {
        let layout = self.layout(g)?;
        let Some(dl) = layout.dims().get(dim).copied() else {
            return Ok(l);
        };
        if dl.padding == 0 {
            return Ok(l);
        }
        let is_zero =
            fill == Scalar::Float(0.0) || fill == Scalar::Int(0) || fill == Scalar::Bool(false);
        if is_zero && self.zero_padded[l] {
            return Ok(l);
        }
        let key = (l, dim, scalar_bits(&fill));
        if let Some(&m) = self.masks.get(&key) {
            return Ok(m);
        }
        let mut valid = Vec::with_capacity(self.devices.len());
        for &d in &self.devices {
            let s = layout.slice(d).ok_or_else(|| {
                internal(SrcPos::UNKNOWN, format!("device {d} is not in the mesh"))
            })?;
            valid.push(s.extent[dim]);
        }
        let ty = self.values[l].ty.clone();
        let m = self.new_value(ty, format!("{}.masked", self.values[l].name));
        self.zero_padded[m] =
            is_zero && layout.dims().iter().filter(|x| x.padding > 0).count() == 1;
        self.instrs.push(Instr::Mask {
            operand: l,
            result: m,
            dim,
            valid: PerDevice(valid),
            fill,
            step,
        });
        self.masks.insert(key, m);
        Ok(m)
    }

    /// What a reduce's inputs' padding must hold: the identity of each
    /// input's reduction on the fast path, else its init value (as XLA
    /// pads: a body's init value is taken to be its identity), which must
    /// be a constant.
    pub(super) fn reduce_fills(
        &self,
        step: usize,
        r: &Reduce,
        inits: &[GValueId],
    ) -> Result<Vec<Scalar>, Diagnostic> {
        if let Some(kinds) = r.kinds() {
            return Ok(kinds
                .iter()
                .zip(inits)
                .map(|(&k, &g)| identity_of(k, self.prog.values[g].ty.elem))
                .collect());
        }
        inits
            .iter()
            .map(|&g| {
                scalar_constant(self.prog, g).ok_or_else(|| {
                    let cause = &self.prog.steps[step].cause;
                    Diagnostic::new(
                        DiagKind::Unsupported,
                        cause.pos,
                        format!(
                            "{}: a padded reduction dimension needs a constant init value to pad with, but {} is computed",
                            cause.op, self.names[g]
                        ),
                    )
                })
            })
            .collect()
    }

    pub fn set_global(&mut self, g: GValueId, l: LocalId) {
        self.map[g] = Some(l);
    }

    pub fn name_of(&self, g: GValueId) -> String {
        self.names[g].clone()
    }
}

/// The value of a rank-0 global value that is a constant (possibly
/// through rank-0 broadcasts and reshapes, as JAX writes init values).
fn scalar_constant(prog: &GlobalProgram, g: GValueId) -> Option<Scalar> {
    let step = prog.steps.iter().find(|s| s.results.contains(&g))?;
    match &step.kind {
        GStepKind::Compute(OpKind::Constant(Constant {
            value: DenseLiteral::Splat(s),
            ..
        })) => Some(*s),
        GStepKind::Compute(OpKind::Constant(Constant {
            value: DenseLiteral::Elements(v),
            ..
        })) if v.len() == 1 => v.first().copied(),
        GStepKind::Compute(OpKind::BroadcastInDim(_) | OpKind::Reshape(_))
            if prog.values[step.operands[0]].ty.rank() == 0 =>
        {
            scalar_constant(prog, step.operands[0])
        }
        GStepKind::Reshard => scalar_constant(prog, step.operands[0]),
        _ => None,
    }
}

fn scalar_bits(s: &Scalar) -> u64 {
    match s {
        Scalar::Float(x) => x.to_bits(),
        Scalar::Int(i) => *i as u64,
        Scalar::Bool(b) => *b as u64,
    }
}
