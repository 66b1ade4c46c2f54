//! The indexing ops on local blocks: `gather`, `scatter`, `dynamic_slice`,
//! `dynamic_update_slice`.
//!
//! The global program made every factor compatible, so what is left is
//! per device:
//! - **Attributes for local shapes**: a slice that spans a sharded
//!   dimension whole spans the local block (`slice_sizes`).
//! - **A table sharded on the indexed dimension** (Megatron's
//!   vocab-parallel embedding: gather's collapsed dims are reduction
//!   factors). Each device clamps the ids as the global op would, shifts
//!   them by its block's start, gathers locally and zeroes the rows whose
//!   id falls outside its block; the partial sums are then all-reduced
//!   (the step after this one). The table never moves.
//! - **A scatter into row-sharded inputs** (scatter's inserted dims are
//!   pass-through): the ids are shifted by the block's start, and the
//!   scatter drops every update that falls outside the local rows (its
//!   out-of-bounds rule), so each device applies exactly its own.
//! - **A combining scatter whose updates are sharded on batch dims** (a
//!   reduction factor): each device scatters its updates; the inputs enter
//!   on one device of each reduction group only (the others start from the
//!   update's identity), so the all-reduce that follows counts them once.
//!   Padding rows of sharded batch dims get out-of-bounds ids, so the
//!   scatter skips them.
//! - **`dynamic_update_slice` into a dimension sharded where the update is
//!   smaller**: each block is padded by the update's size on both sides,
//!   updated at the global start shifted into the padded block (the
//!   padding catches the part of a clamped update that lies in another
//!   block), and cut back.
//!
//! Per-device values (a block's start) come from an `Iota` instruction
//! with a device table, so the lowering adds no new instruction kinds and
//! runs on every backend.

use crate::diag::{DiagKind, Diagnostic};
use crate::ir::ops::compare::Compare;
use crate::ir::ops::constant::Constant;
use crate::ir::ops::gather::Gather;
use crate::ir::ops::scatter::{Scatter, ScatterUpdate};
use crate::ir::ops::{clamp::Clamp, select::Select};
use crate::ir::{
    BinaryOp, CompareDirection, DenseLiteral, ElemType, OpKind, ReduceKind, Scalar, TensorType,
};
use crate::partition::global::{GStepKind, GValueId};
use crate::partition::local::builder::DeviceBuilder;
use crate::partition::local::padding::identity_of;
use crate::partition::program::{Instr, LocalId, PerDevice};
use crate::sharding::layout::TensorLayout;
use crate::sharding::{DimSharding, TensorSharding};

/// Compute step `i` (a gather, scatter, dynamic_slice or
/// dynamic_update_slice) on local blocks; false if `kind` is none of them.
pub(super) fn lower_index_op(
    b: &mut DeviceBuilder,
    i: usize,
    kind: &OpKind,
    operands: &[GValueId],
    locals: Vec<LocalId>,
    results: &[GValueId],
) -> Result<bool, Diagnostic> {
    match kind {
        OpKind::Gather(g) => gather(b, i, g, operands, locals, results[0])?,
        OpKind::Scatter(s) => scatter(b, i, s, operands, locals, results)?,
        OpKind::DynamicSlice(ds) => {
            let layout = b.layout(operands[0])?;
            let mut local = ds.clone();
            for (d, dl) in layout.dims().iter().enumerate() {
                if dl.shards > 1 {
                    if ds.slice_sizes[d] != dl.global {
                        return Err(not_local(b, i, d));
                    }
                    local.slice_sizes[d] = dl.local;
                }
            }
            b.op(i, OpKind::DynamicSlice(local), locals, results)?;
        }
        OpKind::DynamicUpdateSlice(_) => {
            dynamic_update_slice(b, i, kind, operands, locals, results[0])?
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn not_local(b: &DeviceBuilder, i: usize, dim: usize) -> Diagnostic {
    let cause = &b.prog.steps[i].cause;
    Diagnostic::new(
        DiagKind::Unsupported,
        cause.pos,
        format!(
            "{}: operand dimension {dim} is sharded but the op reads part of it at run-time \
             positions; it must be replicated there",
            cause.op
        ),
    )
}

/// Helpers that emit plain ops on local values.
impl DeviceBuilder<'_> {
    fn emit(
        &mut self,
        step: usize,
        kind: OpKind,
        operands: Vec<LocalId>,
        ty: TensorType,
        name: String,
    ) -> LocalId {
        let out = self.new_value(ty, name);
        self.instrs.push(Instr::Op {
            kind,
            operands,
            results: vec![out],
            step,
        });
        out
    }

    fn splat(&mut self, step: usize, value: Scalar, ty: TensorType, name: String) -> LocalId {
        self.emit(
            step,
            OpKind::Constant(Constant::new(DenseLiteral::Splat(value))),
            Vec::new(),
            ty,
            name,
        )
    }

    /// A rank-0 value of type `elem` holding the device's entry of `table`.
    pub(super) fn device_scalar(
        &mut self,
        step: usize,
        elem: ElemType,
        table: PerDevice<i64>,
        name: String,
    ) -> LocalId {
        let one = self.new_value(TensorType::new(vec![1], elem), format!("{name}.1"));
        self.instrs.push(Instr::Iota {
            result: one,
            dim: 0,
            offset: table,
            step,
        });
        self.emit(
            step,
            OpKind::Reshape(crate::ir::ops::reshape::Reshape),
            vec![one],
            TensorType::scalar(elem),
            name,
        )
    }

    /// The start of each device's block along `dim` of `layout`.
    pub(super) fn block_starts(
        &self,
        layout: &TensorLayout,
        dim: usize,
    ) -> Result<PerDevice<i64>, Diagnostic> {
        let local = layout.dims()[dim].local;
        let shard = self.shard_table(layout, dim)?;
        Ok(PerDevice(shard.0.iter().map(|s| s * local).collect()))
    }

    fn binary(
        &mut self,
        step: usize,
        op: BinaryOp,
        a: LocalId,
        c: LocalId,
        name: String,
    ) -> LocalId {
        let ty = self.local_ty(a).clone();
        self.emit(step, OpKind::Binary(op), vec![a, c], ty, name)
    }

    fn compare(
        &mut self,
        step: usize,
        direction: CompareDirection,
        a: LocalId,
        c: LocalId,
        name: String,
    ) -> LocalId {
        let ty = self.local_ty(a).with_elem(ElemType::I1);
        let kind = OpKind::Compare(Compare {
            direction,
            compare_type: None,
        });
        self.emit(step, kind, vec![a, c], ty, name)
    }

    /// `values` (one per index-vector component) laid along dimension
    /// `ivd` of `ty` (or splat over `ty` when it has no such dimension).
    fn index_vector_const(
        &mut self,
        step: usize,
        values: &[i64],
        ivd: usize,
        ty: &TensorType,
        name: String,
    ) -> LocalId {
        let lit = |v: i64| Scalar::Int(v);
        if ivd >= ty.rank() {
            return self.splat(step, lit(values[0]), ty.clone(), name);
        }
        let vec_ty = TensorType::new(vec![values.len() as i64], ty.elem);
        let v = self.emit(
            step,
            OpKind::Constant(Constant::new(DenseLiteral::Elements(
                values.iter().map(|&v| lit(v)).collect(),
            ))),
            Vec::new(),
            vec_ty,
            format!("{name}.vec"),
        );
        self.emit(
            step,
            OpKind::BroadcastInDim(crate::ir::ops::broadcast_in_dim::BroadcastInDim {
                dims: vec![ivd as i64],
            }),
            vec![v],
            ty.clone(),
            name,
        )
    }

    /// The device's block start of every index-vector component (0 for
    /// components whose dimension is not shifted), laid out like the
    /// indices `ty`.
    fn index_vector_offsets(
        &mut self,
        step: usize,
        offsets: &[Option<PerDevice<i64>>],
        ivd: usize,
        ty: &TensorType,
        name: &str,
    ) -> LocalId {
        let scalar_ty = TensorType::scalar(ty.elem);
        let parts: Vec<LocalId> = offsets
            .iter()
            .enumerate()
            .map(|(k, off)| match off {
                Some(table) => {
                    self.device_scalar(step, ty.elem, table.clone(), format!("{name}.off{k}"))
                }
                None => self.splat(
                    step,
                    Scalar::Int(0),
                    scalar_ty.clone(),
                    format!("{name}.zero{k}"),
                ),
            })
            .collect();
        if ivd >= ty.rank() {
            return self.emit(
                step,
                OpKind::BroadcastInDim(crate::ir::ops::broadcast_in_dim::BroadcastInDim {
                    dims: Vec::new(),
                }),
                vec![parts[0]],
                ty.clone(),
                format!("{name}.offsets"),
            );
        }
        let one_ty = TensorType::new(vec![1], ty.elem);
        let ones: Vec<LocalId> = parts
            .into_iter()
            .map(|p| {
                self.emit(
                    step,
                    OpKind::Reshape(crate::ir::ops::reshape::Reshape),
                    vec![p],
                    one_ty.clone(),
                    format!("{name}.part"),
                )
            })
            .collect();
        let vec_ty = TensorType::new(vec![offsets.len() as i64], ty.elem);
        let v = self.emit(
            step,
            OpKind::Concatenate(crate::ir::ops::concatenate::Concatenate { dim: 0 }),
            ones,
            vec_ty,
            format!("{name}.offvec"),
        );
        self.emit(
            step,
            OpKind::BroadcastInDim(crate::ir::ops::broadcast_in_dim::BroadcastInDim {
                dims: vec![ivd as i64],
            }),
            vec![v],
            ty.clone(),
            format!("{name}.offsets"),
        )
    }
}

/// A gather; see the module doc.
fn gather(
    b: &mut DeviceBuilder,
    i: usize,
    g: &Gather,
    operands: &[GValueId],
    locals: Vec<LocalId>,
    result: GValueId,
) -> Result<(), Diagnostic> {
    let dims = &g.dimension_numbers;
    let layout = b.layout(operands[0])?;
    let mut local = g.clone();
    // Dims sharded under a one-element slice: the device holds the row
    // only if it falls in its block.
    let mut shifted: Vec<usize> = Vec::new();
    for (d, dl) in layout.dims().iter().enumerate() {
        if dl.shards == 1 || dims.operand_batching_dims.contains(&(d as i64)) {
            continue;
        }
        if g.slice_sizes[d] == dl.global {
            local.slice_sizes[d] = dl.local;
        } else if g.slice_sizes[d] == 1 {
            shifted.push(d);
        } else {
            return Err(not_local(b, i, d));
        }
    }
    if shifted.is_empty() {
        b.op(i, OpKind::Gather(local), locals, &[result])?;
        return Ok(());
    }
    let name = b.name_of(result);
    let idx_ty = b.local_ty(locals[1]).clone();
    let ivd = dims.index_vector_dim as usize;
    let global_operand = b.prog.values[operands[0]].ty.clone();
    // Per index-vector component: the global clamp bounds, the shift and
    // the bound of the local block.
    let mut hi = Vec::new();
    let mut bound = Vec::new();
    let mut offsets = Vec::new();
    for &m in &dims.start_index_map {
        let d = m as usize;
        let top = global_operand.shape[d] - g.slice_sizes[d];
        hi.push(top);
        if shifted.contains(&d) {
            bound.push(layout.dims()[d].local);
            offsets.push(Some(b.block_starts(&layout, d)?));
        } else {
            bound.push(top + 1);
            offsets.push(None);
        }
    }
    let zeros = vec![0; hi.len()];
    let lo = b.index_vector_const(i, &zeros, ivd, &idx_ty, format!("{name}.lo"));
    let hi = b.index_vector_const(i, &hi, ivd, &idx_ty, format!("{name}.hi"));
    let clamped = b.emit(
        i,
        OpKind::Clamp(Clamp),
        vec![lo, locals[1], hi],
        idx_ty.clone(),
        format!("{name}.ids"),
    );
    let off = b.index_vector_offsets(i, &offsets, ivd, &idx_ty, &name);
    let shifted_ids = b.binary(
        i,
        BinaryOp::Subtract,
        clamped,
        off,
        format!("{name}.local_ids"),
    );
    let bound = b.index_vector_const(i, &bound, ivd, &idx_ty, format!("{name}.bound"));
    let lo_ok = b.compare(
        i,
        CompareDirection::Ge,
        shifted_ids,
        lo,
        format!("{name}.ge"),
    );
    let hi_ok = b.compare(
        i,
        CompareDirection::Lt,
        shifted_ids,
        bound,
        format!("{name}.lt"),
    );
    let ok = b.binary(i, BinaryOp::And, lo_ok, hi_ok, format!("{name}.in_block"));
    let batch_ty = TensorType::new(
        dims.indices_batch_dims(idx_ty.rank())
            .iter()
            .map(|&d| idx_ty.shape[d])
            .collect::<Vec<i64>>(),
        ElemType::I1,
    );
    let mut mask = if ivd < idx_ty.rank() {
        let yes = b.splat(
            i,
            Scalar::Bool(true),
            TensorType::scalar(ElemType::I1),
            format!("{name}.true"),
        );
        b.emit(
            i,
            OpKind::Reduce(crate::ir::ops::reduce::Reduce::with_kind(
                vec![ivd as i64],
                ReduceKind::And,
                &[ElemType::I1],
            )),
            vec![ok, yes],
            batch_ty.clone(),
            format!("{name}.mask"),
        )
    } else {
        ok
    };
    // A shifted dim no index names starts at 0: only the block holding
    // row 0 has it.
    for &d in shifted
        .iter()
        .filter(|&&d| !dims.start_index_map.contains(&(d as i64)))
    {
        let starts = b.block_starts(&layout, d)?;
        let holds = PerDevice(starts.0.iter().map(|&s| i64::from(s == 0)).collect());
        let flag = b.device_scalar(i, ElemType::I32, holds, format!("{name}.holds_row0"));
        let flag = b.emit(
            i,
            OpKind::Convert(crate::ir::ops::convert::Convert),
            vec![flag],
            TensorType::scalar(ElemType::I1),
            format!("{name}.holds"),
        );
        let flag = b.emit(
            i,
            OpKind::BroadcastInDim(crate::ir::ops::broadcast_in_dim::BroadcastInDim {
                dims: Vec::new(),
            }),
            vec![flag],
            batch_ty.clone(),
            format!("{name}.holds_all"),
        );
        mask = b.binary(i, BinaryOp::And, mask, flag, format!("{name}.mask"));
    }
    let out_ty = b.local_type(result)?;
    let gathered = b.emit(
        i,
        OpKind::Gather(local),
        vec![locals[0], shifted_ids],
        out_ty.clone(),
        format!("{name}.rows"),
    );
    let batch_dims: Vec<i64> = dims
        .slices_batch_dims(out_ty.rank())
        .iter()
        .map(|&d| d as i64)
        .collect();
    let wide = b.emit(
        i,
        OpKind::BroadcastInDim(crate::ir::ops::broadcast_in_dim::BroadcastInDim {
            dims: batch_dims,
        }),
        vec![mask],
        out_ty.with_elem(ElemType::I1),
        format!("{name}.mask_rows"),
    );
    let zero = b.splat(
        i,
        zero_of(out_ty.elem),
        out_ty.clone(),
        format!("{name}.zero"),
    );
    b.op(
        i,
        OpKind::Select(Select),
        vec![wide, gathered, zero],
        &[result],
    )
}

fn zero_of(elem: ElemType) -> Scalar {
    identity_of(ReduceKind::Add, elem)
}

/// A scatter; see the module doc.
fn scatter(
    b: &mut DeviceBuilder,
    i: usize,
    s: &Scatter,
    operands: &[GValueId],
    mut locals: Vec<LocalId>,
    results: &[GValueId],
) -> Result<(), Diagnostic> {
    let n = Scatter::num_inputs(operands.len());
    let dims = s.dims();
    let layout = b.layout(operands[0])?;
    let mut offsets: Vec<Option<PerDevice<i64>>> = vec![None; dims.start_index_map.len()];
    for (d, dl) in layout.dims().iter().enumerate() {
        if dl.shards == 1 || !dims.collapsed_dims.contains(&(d as i64)) {
            continue;
        }
        let Some(k) = dims.start_index_map.iter().position(|&m| m as usize == d) else {
            return Err(not_local(b, i, d));
        };
        offsets[k] = Some(b.block_starts(&layout, d)?);
    }
    let name = b.name_of(results[0]);
    // Padding rows of the indices' batch dims (the updates' scatter dims,
    // sharded alike) are no updates: their ids are set out of bounds, so
    // the scatter skips their windows whatever its region (an identity
    // fill of the updates would not do for replace). -1 stays out of
    // bounds after the shift below; in an unsigned type it is the largest
    // id.
    let idx_rank = b.local_ty(locals[n]).rank();
    for d in dims.indices_batch_dims(idx_rank) {
        locals[n] = b.mask_if_padded(i, locals[n], operands[n], d, Scalar::Int(-1))?;
    }
    if offsets.iter().any(Option::is_some) {
        let idx_ty = b.local_ty(locals[n]).clone();
        let ivd = dims.index_vector_dim as usize;
        let off = b.index_vector_offsets(i, &offsets, ivd, &idx_ty, &name);
        locals[n] = b.binary(
            i,
            BinaryOp::Subtract,
            locals[n],
            off,
            format!("{name}.local_ids"),
        );
    }
    // Partial results: the inputs count on one device per reduction group.
    let prog = b.prog;
    let partial = &prog.values[results[0]].sharding.unreduced;
    if let (false, Ok(ScatterUpdate::Combine(rk))) = (partial.is_empty(), s.update_kind()) {
        let mesh = b.mesh_of(results[0])?;
        let total: i64 = partial.iter().map(|a| a.size(mesh).unwrap_or(1)).product();
        let along = TensorSharding {
            dims: vec![DimSharding::closed(partial.clone())],
            ..prog.values[results[0]].sharding.clone()
        };
        let along = TensorSharding {
            unreduced: Vec::new(),
            ..along
        };
        let group_layout = TensorLayout::new(mesh, &along, &[total]).map_err(|e| {
            Diagnostic::new(
                DiagKind::Unsupported,
                b.prog.steps[i].cause.pos,
                e.to_string(),
            )
        })?;
        let first = b.shard_table(&group_layout, 0)?;
        let first = PerDevice(first.0.iter().map(|&p| i64::from(p == 0)).collect());
        let mut flag = None;
        for k in 0..n {
            let elem = b.local_ty(locals[k]).elem;
            let identity = identity_of(rk, elem);
            if is_splat_of(b, operands[k], &identity) {
                continue;
            }
            let f = match flag {
                Some(f) => f,
                None => {
                    let f =
                        b.device_scalar(i, ElemType::I32, first.clone(), format!("{name}.first"));
                    let f = b.emit(
                        i,
                        OpKind::Convert(crate::ir::ops::convert::Convert),
                        vec![f],
                        TensorType::scalar(ElemType::I1),
                        format!("{name}.is_first"),
                    );
                    flag = Some(f);
                    f
                }
            };
            let ty = b.local_ty(locals[k]).clone();
            let id = b.splat(i, identity, ty.clone(), format!("{name}.identity"));
            locals[k] = b.emit(
                i,
                OpKind::Select(Select),
                vec![f, locals[k], id],
                ty,
                format!("{name}.input{k}"),
            );
        }
    }
    b.op(i, OpKind::Scatter(s.clone()), locals, results)
}

/// Whether global value `g` is a constant splat of `value` (directly, or
/// broadcast from a scalar constant, as JAX writes zeros).
fn is_splat_of(b: &DeviceBuilder, g: GValueId, value: &Scalar) -> bool {
    let Some(step) = b.prog.steps.iter().find(|s| s.results.contains(&g)) else {
        return false;
    };
    match &step.kind {
        GStepKind::Compute(OpKind::Constant(Constant {
            value: DenseLiteral::Splat(v),
            ..
        })) => v == value,
        GStepKind::Compute(OpKind::BroadcastInDim(_)) | GStepKind::Reshard => {
            is_splat_of(b, step.operands[0], value)
        }
        _ => false,
    }
}

/// A dynamic_update_slice; see the module doc.
fn dynamic_update_slice(
    b: &mut DeviceBuilder,
    i: usize,
    kind: &OpKind,
    operands: &[GValueId],
    locals: Vec<LocalId>,
    result: GValueId,
) -> Result<(), Diagnostic> {
    let layout = b.layout(operands[0])?;
    let update = b.prog.values[operands[1]].ty.clone();
    let shifted: Vec<usize> = (0..layout.dims().len())
        .filter(|&d| layout.dims()[d].shards > 1 && update.shape[d] < layout.dims()[d].global)
        .collect();
    if shifted.is_empty() {
        return b.op(i, kind.clone(), locals, &[result]);
    }
    let name = b.name_of(result);
    let block = b.local_ty(locals[0]).clone();
    let rank = block.rank();
    let (mut low, mut high) = (vec![0; rank], vec![0; rank]);
    for &d in &shifted {
        low[d] = update.shape[d];
        high[d] = update.shape[d];
    }
    let padded_ty = block.with_shape(
        block
            .shape
            .iter()
            .enumerate()
            .map(|(d, &s)| s + low[d] + high[d])
            .collect::<Vec<i64>>(),
    );
    let zero = b.splat(
        i,
        zero_of(block.elem),
        TensorType::scalar(block.elem),
        format!("{name}.pad_value"),
    );
    let padded = b.emit(
        i,
        OpKind::Pad(crate::ir::ops::pad::Pad {
            low: low.clone(),
            high: high.clone(),
            interior: vec![0; rank],
        }),
        vec![locals[0], zero],
        padded_ty.clone(),
        format!("{name}.padded"),
    );
    let mut starts = locals[2..].to_vec();
    let global = b.prog.values[operands[0]].ty.clone();
    for &d in &shifted {
        let s_ty = b.local_ty(starts[d]).clone();
        let c = |b: &mut DeviceBuilder, v: i64, what: &str| {
            b.splat(i, Scalar::Int(v), s_ty.clone(), format!("{name}.{what}{d}"))
        };
        let lo = c(b, 0, "lo");
        let hi = c(b, global.shape[d] - update.shape[d], "hi");
        let clamped = b.emit(
            i,
            OpKind::Clamp(Clamp),
            vec![lo, starts[d], hi],
            s_ty.clone(),
            format!("{name}.start{d}"),
        );
        let table = b.block_starts(&layout, d)?;
        let table = PerDevice(table.0.iter().map(|&o| update.shape[d] - o).collect());
        let shift = b.device_scalar(i, s_ty.elem, table, format!("{name}.shift{d}"));
        starts[d] = b.binary(
            i,
            BinaryOp::Add,
            clamped,
            shift,
            format!("{name}.local_start{d}"),
        );
    }
    let mut operands_local = vec![padded, locals[1]];
    operands_local.extend(starts);
    let updated = b.emit(
        i,
        kind.clone(),
        operands_local,
        padded_ty,
        format!("{name}.updated"),
    );
    let limit: Vec<i64> = (0..rank).map(|d| low[d] + block.shape[d]).collect();
    b.op(
        i,
        OpKind::Slice(crate::ir::ops::slice::Slice {
            start: low,
            limit,
            strides: vec![1; rank],
        }),
        vec![updated],
        &[result],
    )
}
