//! Building the [`DeviceProgram`] from the global program and its lowered
//! collectives: local types for every value, compute ops with attributes
//! for local shapes, collectives as separate instructions, padding masks,
//! device offsets for `iota`, and remaps for sliced, padded and
//! concatenated dimensions that are sharded (see [`crate::partition::local::remap`]).

pub(crate) mod builder;
pub(crate) mod conv;
pub(crate) mod index_ops;
pub(crate) mod manual_ops;
pub mod padding;
pub(crate) mod ragged_dot;
pub(crate) mod regions;
pub(crate) mod remap;
pub(crate) mod to_unreduced;
pub(crate) mod window;

use crate::diag::{DiagKind, Diagnostic, SrcPos};
use crate::ir::ops::constant::Constant;
use crate::ir::{DenseLiteral, OpKind, ReduceKind, TensorType};
use crate::partition::global::{Cause, GStepKind, GValueId, GlobalProgram};
use crate::partition::local::builder::{internal, DeviceBuilder};
use crate::partition::local::index_ops::lower_index_op;
use crate::partition::local::padding::identity_of;
use crate::partition::local::remap::{emit_remap, lower_remap_op};
use crate::partition::local::to_unreduced::lower_to_unreduced;
use crate::partition::lower::{reshard_remap_plan, Lowering};
use crate::partition::program::{DeviceProgram, Instr, LocalId, PerDevice, ProgramIo};
use crate::partition::reshard::collective::CollectiveKind;
use crate::partition::reshard::lower_reshard;
use crate::sharding::TensorSharding;

/// Build the device program of `prog` with the collectives of `lowering`.
pub fn build_device_program(
    prog: &GlobalProgram,
    lowering: &Lowering,
) -> Result<DeviceProgram, Diagnostic> {
    let mut b = DeviceBuilder::new(prog, lowering);
    b.inputs()?;
    for i in prog.top_level() {
        b.step(i)?;
    }
    b.outputs()?;
    Ok(DeviceProgram {
        name: prog.name.clone(),
        devices: b.devices,
        values: b.values,
        inputs: b.inputs,
        outputs: b.outputs,
        instrs: b.instrs,
    })
}

/// The walk over the global steps.
impl DeviceBuilder<'_> {
    fn inputs(&mut self) -> Result<(), Diagnostic> {
        for (i, &a) in self.prog.args.iter().enumerate() {
            let value = self.local(a)?;
            let mut io = self.io(a, value)?;
            io.memory_kind = self.prog.arg_memory.get(i).cloned().flatten();
            io.donation = self.prog.arg_donation.get(i).copied().unwrap_or_default();
            self.inputs.push(io);
        }
        Ok(())
    }

    fn outputs(&mut self) -> Result<(), Diagnostic> {
        for (i, &r) in self.prog.results.iter().enumerate() {
            let value = self.map[r].ok_or_else(|| {
                internal(
                    SrcPos::UNKNOWN,
                    format!("result {} is never computed", self.names[r]),
                )
            })?;
            let mut io = self.io(r, value)?;
            io.memory_kind = self.prog.result_memory.get(i).cloned().flatten();
            self.outputs.push(io);
        }
        Ok(())
    }

    fn io(&self, g: GValueId, value: LocalId) -> Result<ProgramIo, Diagnostic> {
        let v = &self.prog.values[g];
        Ok(ProgramIo {
            value,
            global: v.ty.clone(),
            sharding: v.sharding.clone(),
            mesh: self.mesh_of(g)?.clone(),
            memory_kind: None,
            donation: Default::default(),
        })
    }

    pub(super) fn step(&mut self, i: usize) -> Result<(), Diagnostic> {
        let step = &self.prog.steps[i];
        match &step.kind {
            GStepKind::Compute(kind) => self.compute(i, kind),
            GStepKind::Relabel => {
                let input = self.local(step.operands[0])?;
                let out_g = step.results[0];
                self.check_type(input, out_g, step.cause.pos)?;
                self.map[out_g] = Some(input);
                Ok(())
            }
            GStepKind::Loop { .. } | GStepKind::Branch { .. } => self.structured(i),
            GStepKind::ToUnreduced { .. } => lower_to_unreduced(self, i),
            GStepKind::StackPartials { .. } => {
                let input = self.local(step.operands[0])?;
                self.op(
                    i,
                    OpKind::Reshape(crate::ir::ops::reshape::Reshape),
                    vec![input],
                    &step.results,
                )
            }
            GStepKind::Reshard | GStepKind::AllReduce { .. } => {
                let input = self.local(step.operands[0])?;
                let out_g = step.results[0];
                if let Some(dim) = self.lowering.remap_dim.get(i).copied().flatten() {
                    return self.remapped_reshard(i, dim, input);
                }
                let collectives = &self.lowering.per_step[i];
                if collectives.is_empty() {
                    // Fused into the next collective (or already in
                    // place): until then the block is the operand's, which
                    // only an unchanged placement makes this value's.
                    let (a, b) = (
                        &self.prog.values[step.operands[0]].sharding,
                        &self.prog.values[out_g].sharding,
                    );
                    let moved = a.unreduced != b.unreduced
                        || a.mesh != b.mesh
                        || a.dims.iter().zip(&b.dims).any(|(x, y)| x.axes != y.axes);
                    if moved {
                        self.deferred.insert(out_g);
                    }
                    self.map[out_g] = Some(input);
                    return Ok(());
                }
                let cause = step.cause.clone();
                let mut cur = input;
                for (k, c) in collectives.iter().enumerate() {
                    // Each collective must take the blocks the previous one
                    // left (a mismatch silently mixes up padded blocks).
                    if self.values[cur].ty.shape != c.in_local_shape {
                        return Err(internal(
                            step.cause.pos,
                            format!(
                                "internal error: {} takes blocks of {:?} but is given {}",
                                c.kind, c.in_local_shape, self.values[cur].ty
                            ),
                        ));
                    }
                    let ty = TensorType::new(c.out_local_shape.clone(), c.elem);
                    let name = if k + 1 == collectives.len() {
                        self.names[out_g].clone()
                    } else {
                        format!("{}.{k}", self.names[out_g])
                    };
                    let out = self.new_value(ty, name);
                    if c.kind == CollectiveKind::AllReduce {
                        self.zero_padded[out] = self.zero_padded[cur];
                    }
                    self.instrs.push(Instr::Collective {
                        collective: Box::new(c.clone()),
                        operand: cur,
                        result: out,
                        step: i,
                        cause: cause.clone(),
                    });
                    cur = out;
                }
                self.check_type(cur, out_g, step.cause.pos)?;
                self.map[out_g] = Some(cur);
                Ok(())
            }
        }
    }

    /// A reshard of one dimension done as a remap (see `lower.rs`).
    fn remapped_reshard(&mut self, i: usize, dim: usize, input: LocalId) -> Result<(), Diagnostic> {
        let step = &self.prog.steps[i];
        let (g_in, g_out) = (step.operands[0], step.results[0]);
        let pos = step.cause.pos;
        let (plan, _, _) = reshard_remap_plan(self.prog, i, dim)
            .ok_or_else(|| internal(pos, format!("{}: cannot plan the remap", step.cause.op)))?;
        let ty = self.local_type(g_out)?;
        let base = step.cause.clone();
        let cause = move |shift: i64| {
            Cause {
            reason: format!(
                "{} (dimension {dim}: each device fetches the elements it lacks from the block {} shard(s) {})",
                base.reason,
                shift.abs(),
                if shift > 0 { "later" } else { "earlier" }
            ),
            ..base.clone()
        }
        };
        let name = self.names[g_out].clone();
        let out = emit_remap(self, i, &plan, &[input], &[g_in], None, ty, name, &cause);
        self.map[g_out] = Some(out);
        Ok(())
    }

    fn compute(&mut self, i: usize, kind: &OpKind) -> Result<(), Diagnostic> {
        let step = &self.prog.steps[i];
        let operands: Vec<GValueId> = step.operands.clone();
        let results: Vec<GValueId> = step.results.clone();
        let mut locals = Vec::with_capacity(operands.len());
        for &o in &operands {
            locals.push(self.local(o)?);
        }
        // A side-effecting custom call may have no results.
        if results.is_empty() && matches!(kind, OpKind::CustomCall(_)) {
            return self.op(i, kind.clone(), locals, &results);
        }
        if results.is_empty() {
            return Err(internal(
                step.cause.pos,
                format!("{} has no result", step.cause.op),
            ));
        }
        match kind {
            OpKind::Constant(Constant {
                value: DenseLiteral::Elements(_),
                ..
            }) if !is_replicated(&self.prog.values[results[0]].sharding) => {
                self.sharded_constant(i, kind, results[0])
            }
            OpKind::Iota(crate::ir::ops::iota::Iota { dim }) => {
                self.iota(i, kind, *dim, results[0])
            }
            OpKind::PartitionId(_) => self.partition_id(i, results[0]),
            OpKind::AllReduce(_)
            | OpKind::AllGather(_)
            | OpKind::ReduceScatter(_)
            | OpKind::AllToAll(_)
            | OpKind::CollectivePermute(_) => {
                self.user_collective(i, kind, operands[0], locals[0], results[0])
            }
            OpKind::Reduce(r) => {
                let n = results.len();
                let fills = self.reduce_fills(i, r, &operands[n..])?;
                for (k, l) in locals.iter_mut().enumerate().take(n) {
                    for &d in r.dims() {
                        *l = self.mask_if_padded(i, *l, operands[k], d as usize, fills[k])?;
                    }
                }
                self.op(i, kind.clone(), locals, &results)
            }
            OpKind::DotGeneral(dot) => {
                let dims = &dot.dims;
                let (lc, rc) = if dot.is_dot {
                    let lhs_rank = self.prog.values[operands[0]].ty.rank() as i64;
                    (vec![lhs_rank - 1], vec![0])
                } else {
                    (dims.lhs_contract.clone(), dims.rhs_contract.clone())
                };
                let zero = |l: LocalId, b: &Self| identity_of(ReduceKind::Add, b.local_ty(l).elem);
                for &d in &lc {
                    let fill = zero(locals[0], self);
                    locals[0] = self.mask_if_padded(i, locals[0], operands[0], d as usize, fill)?;
                }
                for &d in &rc {
                    let fill = zero(locals[1], self);
                    locals[1] = self.mask_if_padded(i, locals[1], operands[1], d as usize, fill)?;
                }
                self.op(i, kind.clone(), locals, &results)
            }
            OpKind::Convolution(c) => self.local_convolution(i, c, &operands, locals, &results),
            OpKind::RaggedDot(r) => self.local_ragged_dot(i, r, &operands, locals, &results),
            OpKind::ReduceWindow(rw) => {
                self.local_reduce_window(i, rw, &operands, locals, &results)
            }
            OpKind::Slice(_) | OpKind::Pad(_) | OpKind::Concatenate(_) | OpKind::Reverse(_) => {
                lower_remap_op(self, i, kind, &operands, &locals, results[0])
            }
            _ => {
                if lower_index_op(self, i, kind, &operands, locals.clone(), &results)? {
                    return Ok(());
                }
                self.op(i, kind.clone(), locals, &results)?;
                self.check_local_op(i)
            }
        }
    }

    /// Reshape must keep the element count of the local blocks.
    fn check_local_op(&self, i: usize) -> Result<(), Diagnostic> {
        let Some(Instr::Op {
            kind,
            operands,
            results,
            ..
        }) = self.instrs.last()
        else {
            return Ok(());
        };
        if let OpKind::Reshape(_) = kind {
            let a = self.values[operands[0]].ty.num_elements();
            let b = self.values[results[0]].ty.num_elements();
            if a != b {
                let s = &self.prog.steps[i];
                return Err(Diagnostic::new(
                    DiagKind::Sharding,
                    s.cause.pos,
                    format!(
                        "{}: the local blocks ({} and {}) cannot be reshaped into each other",
                        s.cause.op, self.values[operands[0]].ty, self.values[results[0]].ty
                    ),
                ));
            }
        }
        Ok(())
    }

    /// `iota` along a sharded dimension counts from the device's offset.
    fn iota(
        &mut self,
        i: usize,
        kind: &OpKind,
        dim: i64,
        result: GValueId,
    ) -> Result<(), Diagnostic> {
        let layout = self.layout(result)?;
        let d = dim as usize;
        let sharded = layout.dims().get(d).is_some_and(|l| l.shards > 1);
        if !sharded {
            return self.op(i, kind.clone(), Vec::new(), &[result]);
        }
        let local = layout.dims()[d].local;
        let shard = self.shard_table(&layout, d)?;
        let out = self.local(result)?;
        self.instrs.push(Instr::Iota {
            result: out,
            dim: d,
            offset: PerDevice(shard.0.iter().map(|s| s * local).collect()),
            step: i,
        });
        Ok(())
    }

    /// A non-splat constant on a sharded value: the whole constant, then
    /// an all-slice to the device's block.
    fn sharded_constant(
        &mut self,
        i: usize,
        kind: &OpKind,
        result: GValueId,
    ) -> Result<(), Diagnostic> {
        let v = self.prog.values[result].clone();
        let mesh = self.mesh_of(result)?;
        let whole = self.new_value(v.ty.clone(), format!("{}.whole", self.names[result]));
        self.instrs.push(Instr::Op {
            kind: kind.clone(),
            operands: Vec::new(),
            results: vec![whole],
            step: i,
        });
        let replicated = TensorSharding::replicated(
            v.sharding.mesh_name().unwrap_or_default().to_string(),
            v.ty.rank(),
        );
        let replicated = TensorSharding {
            mesh: v.sharding.mesh.clone(),
            ..replicated
        };
        let pos = self.prog.steps[i].cause.pos;
        let collectives = lower_reshard(mesh, &v.ty.shape, v.ty.elem, &replicated, &v.sharding)
            .map_err(|e| e.to_diagnostic(pos))?;
        let cause = Cause {
            reason: "each device keeps its block of the constant".into(),
            ..self.prog.steps[i].cause.clone()
        };
        let mut cur = whole;
        for c in collectives {
            let out = self.new_value(
                TensorType::new(c.out_local_shape.clone(), c.elem),
                format!("{}.slice", self.names[result]),
            );
            self.instrs.push(Instr::Collective {
                collective: Box::new(c),
                operand: cur,
                result: out,
                step: i,
                cause: cause.clone(),
            });
            cur = out;
        }
        self.check_type(cur, result, pos)?;
        self.map[result] = Some(cur);
        Ok(())
    }
}

fn is_replicated(s: &TensorSharding) -> bool {
    s.dims.iter().all(|d| d.axes.is_empty())
}
