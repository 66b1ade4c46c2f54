//! Compute work of one device: floating-point operations of the local ops
//! of a device program (every device runs the same program on blocks of
//! the same local shapes, so the count holds for each device).
//!
//! Counting rules, on local (padded) shapes:
//! - `dot_general`: `2 · batch · M · N · K` = 2 × result elements × the
//!   product of the contracting dimensions;
//! - element-wise ops (unary, binary, compare, select, clamp, convert) and
//!   the partitioner's padding masks: one per result element;
//! - `reduce`: one per input element (per input, for a variadic reduce);
//! - everything else (constants, iota, broadcast, reshape, transpose,
//!   slice, concatenate, pad, collectives, remaps): data movement, zero.
//!
//! Loops multiply their body's count by a constant trip count; a loop
//! whose trip count depends on data counts one iteration.
//!
//! Each op's FLOPs are filed under the element type it computes in (its
//! result's; a dot's, reduce's or compare's operands'), so each type can be
//! charged at its own peak.

use meshrun_compiler::ir::ops::dot_general::DotGeneral;
use meshrun_compiler::ir::ops::ragged_dot::RaggedMode;
use meshrun_compiler::ir::{ElemType, OpKind, TensorType};
use meshrun_compiler::partition::{walk_instrs, DeviceProgram, Instr, Repeats};

/// FLOPs of one element type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DtypeFlops {
    pub elem: ElemType,
    pub flops: f64,
}

/// FLOPs per device, by element type in order of first appearance.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FlopCount {
    pub by_dtype: Vec<DtypeFlops>,
}

impl FlopCount {
    pub fn total(&self) -> f64 {
        self.by_dtype.iter().map(|d| d.flops).sum()
    }

    fn add(&mut self, elem: ElemType, flops: f64) {
        if flops == 0.0 {
            return;
        }
        match self.by_dtype.iter_mut().find(|d| d.elem == elem) {
            Some(d) => d.flops += flops,
            None => self.by_dtype.push(DtypeFlops { elem, flops }),
        }
    }
}

fn elements(ty: &TensorType) -> f64 {
    ty.shape.iter().product::<i64>() as f64
}

/// FLOPs of one op with these operand and result types.
pub fn op_flops(kind: &OpKind, operands: &[&TensorType], results: &[&TensorType]) -> f64 {
    let result_elems = || results.first().map_or(0.0, |t| elements(t));
    match kind {
        OpKind::DotGeneral(DotGeneral { dims, .. }) => {
            2.0 * result_elems() * contracted(operands, &dims.lhs_contract)
        }
        // Each result row is one group's product (rows past the groups are
        // charged too: an upper bound, as the group sizes are data); with a
        // ragged contracting dimension each contracted index belongs to one
        // of the result's groups.
        OpKind::RaggedDot(r) => {
            let per_group = match operands
                .first()
                .map(|lhs| r.plan(lhs.rank(), operands.get(1).map_or(0, |t| t.rank())))
            {
                Some(Ok(p)) if matches!(p.mode, RaggedMode::Contracting { .. }) => results
                    .first()
                    .and_then(|t| t.shape.first())
                    .map_or(1.0, |&g| g.max(1) as f64),
                _ => 1.0,
            };
            2.0 * result_elems() / per_group * contracted(operands, &r.dims.lhs_contract)
        }
        OpKind::Reduce { .. } => {
            // Operands are N inputs then N init values.
            let n = operands.len() / 2;
            operands.iter().take(n).map(|t| elements(t)).sum()
        }
        k if k.is_elementwise() => result_elems(),
        _ => 0.0,
    }
}

/// The product of lhs's contracting dimension sizes.
fn contracted(operands: &[&TensorType], lhs_contract: &[i64]) -> f64 {
    operands.first().map_or(0.0, |lhs| {
        lhs_contract
            .iter()
            .map(|&d| {
                usize::try_from(d)
                    .ok()
                    .and_then(|d| lhs.shape.get(d))
                    .copied()
                    .unwrap_or(1) as f64
            })
            .product()
    })
}

/// The element type an op is charged at: what it computes in (a compare's
/// operands, not its i1 result; a select's values, not its i1 predicate).
fn op_elem(kind: &OpKind, operands: &[&TensorType], results: &[&TensorType]) -> Option<ElemType> {
    let from_operands = matches!(
        kind,
        OpKind::DotGeneral(_) | OpKind::RaggedDot(_) | OpKind::Reduce { .. } | OpKind::Compare(_)
    );
    let (first, second) = if from_operands {
        (operands, results)
    } else {
        (results, operands)
    };
    first.first().or(second.first()).map(|t| t.elem)
}

/// FLOPs per device of `program`: an op in a counted loop counts once per
/// iteration, one in a loop of unknown trip count once (see
/// [`FlopCount::per_iteration_unknown`]), and every branch of a `case`
/// counts as if taken.
pub fn count_flops(program: &DeviceProgram) -> FlopCount {
    let mut count = FlopCount::default();
    walk_instrs(&program.instrs, Repeats::ONCE, &mut |instr, at| {
        if let Some((elem, flops)) = instr_flops(program, instr) {
            count.add(elem, flops * at.times);
        }
    });
    count
}

/// FLOPs of one run of `instr` alone (not of the blocks of a loop or
/// branch), with the element type they are charged at; `None` for data
/// movement.
pub fn instr_flops(program: &DeviceProgram, instr: &Instr) -> Option<(ElemType, f64)> {
    let ty = |id: usize| program.values.get(id).map(|v| &v.ty);
    match instr {
        Instr::Op {
            kind,
            operands,
            results,
            ..
        } => {
            let ops: Vec<&TensorType> = operands.iter().filter_map(|&o| ty(o)).collect();
            let res: Vec<&TensorType> = results.iter().filter_map(|&r| ty(r)).collect();
            let elem = op_elem(kind, &ops, &res)?;
            Some((elem, op_flops(kind, &ops, &res)))
        }
        Instr::Mask { result, .. } => ty(*result).map(|t| (t.elem, elements(t))),
        Instr::Iota { .. }
        | Instr::Collective { .. }
        | Instr::SliceDim { .. }
        | Instr::Remap { .. }
        | Instr::Loop(_)
        | Instr::Branch(_) => None,
    }
}
