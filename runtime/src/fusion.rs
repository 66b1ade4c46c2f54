//! Which instructions of a device program run fused: chains of
//! element-wise f32 ops (and the `broadcast_in_dim`s feeding them) become
//! one [`Group`], computed in one pass by a device that can
//! ([`crate::backend::Device::fused`]; the CPU device runs
//! `meshrun_kernels::cpu::fusion`), else op by op. A decision of the
//! runtime alone: the program (and what `meshrun partition` prints) is
//! unchanged.
//!
//! A group is a tree rooted at an element-wise op: it takes in an operand's
//! producer when that producer is itself fusible, has the root's shape (or
//! is a broadcast that only repeats its operand along leading dimensions),
//! and its result is read by nothing but that operand (not twice, not by
//! another instruction, not a program output). Broadcasts are the
//! exception: groups take them in whoever else reads them, and one runs
//! on its own only if a reader outside those groups (or the program's
//! outputs) still needs it. The group runs where its
//! root stood; its members' other operands are defined before them, so
//! before the root too. Only kinds listed in [`step_op`] fuse: every other
//! op, every other instruction (collectives, masks, remaps, and any kind
//! added later, loops and branches included) runs on its own. Like the
//! executor's freeing after last use, the planner relies on
//! `Instr::operands` naming every value an instruction reads (a body's
//! captured values included), so that a value read elsewhere is never
//! absorbed.
//!
//! A `dot_general` read only by a transpose that swaps its free
//! dimensions runs as one [`TransposedDot`], fused or not.
//!
//! Fused and unfused runs give bitwise the same results (the fused kernel
//! uses the ops' own element functions), so replicas, backends and the
//! MPI check agree whichever way a device runs a group.

use meshrun_compiler::ir::{DotDims, ElemType, OpKind, TensorType};
use meshrun_compiler::partition::{DeviceProgram, Instr};
use meshrun_kernels::cpu::fusion::{Arg, Chain, Step, StepOp};
use meshrun_kernels::cpu::reduce_precision::Format;

/// One fused chain of a program.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The instruction whose result is the group's (the last one).
    pub root: usize,
    /// Every instruction of the group, in program order.
    pub members: Vec<usize>,
    /// The values the group reads, in `Arg::Operand`/`Arg::Repeated` order.
    pub operands: Vec<usize>,
    /// The root's result.
    pub result: usize,
    pub chain: Chain,
}

/// A `dot_general` whose result only a transpose reads, where the
/// transpose swaps the lhs and rhs free dimensions: run as one
/// `dot_general` with its operands swapped, which makes the transposed
/// result directly (`(A·B)ᵀ = Bᵀ·Aᵀ`). Every weight gradient of a JAX
/// training step has this form (`dot_general(dy, x, [0]x[0])` then
/// `transpose [1, 0]`); materializing the transpose took a fifth of the
/// 1-device MLP step.
#[derive(Debug, Clone, PartialEq)]
pub struct TransposedDot {
    pub dot: usize,
    pub transpose: usize,
    /// The swapped `dot_general`.
    pub kind: OpKind,
    /// The dot's operands, swapped: `[rhs, lhs]`.
    pub operands: Vec<usize>,
    /// The transpose's result.
    pub result: usize,
}

/// What the executor runs, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Unit {
    Instr(usize),
    Group(Group),
    /// Runs where the transpose stood.
    TransposedDot(TransposedDot),
}

impl Unit {
    /// The values the unit reads.
    pub fn operands(&self, program: &DeviceProgram) -> Vec<usize> {
        match self {
            Unit::Instr(i) => program.instrs[*i].operands(),
            Unit::Group(g) => g.operands.clone(),
            Unit::TransposedDot(t) => t.operands.clone(),
        }
    }

    /// The instruction that names the unit in errors (a group's root).
    pub fn instr(&self) -> usize {
        match self {
            Unit::Instr(i) => *i,
            Unit::Group(g) => g.root,
            Unit::TransposedDot(t) => t.transpose,
        }
    }

    /// Whether instruction `i` is (part of) this unit.
    pub fn covers(&self, i: usize) -> bool {
        match self {
            Unit::Instr(j) => *j == i,
            Unit::Group(g) => g.members.contains(&i),
            Unit::TransposedDot(t) => t.dot == i || t.transpose == i,
        }
    }
}

/// The step an element-wise op is in a chain, if it fuses.
fn step_op(kind: &OpKind) -> Option<StepOp> {
    match kind {
        OpKind::Unary(op) if Chain::fusible_unary(*op) => Some(StepOp::Unary(*op)),
        OpKind::Binary(op) if Chain::fusible_binary(*op) => Some(StepOp::Binary(*op)),
        // A format the kernel refuses is left to the op's own kernel,
        // which gives the error.
        OpKind::ReducePrecision(r) => Format::new(r.exponent_bits, r.mantissa_bits)
            .ok()
            .map(StepOp::ReducePrecision),
        _ => None,
    }
}

fn dims(ty: &TensorType) -> Option<Vec<usize>> {
    ty.shape.iter().map(|&d| usize::try_from(d).ok()).collect()
}

/// The program's instructions as the planner sees them.
struct View<'p> {
    program: &'p DeviceProgram,
    /// Per value, the instruction that makes it.
    producer: Vec<Option<usize>>,
    /// Per value, how many times it is read (program outputs count once
    /// more).
    reads: Vec<usize>,
}

impl<'p> View<'p> {
    fn new(program: &'p DeviceProgram) -> View<'p> {
        let nv = program.values.len();
        let (mut producer, mut reads) = (vec![None; nv], vec![0; nv]);
        for (i, instr) in program.instrs.iter().enumerate() {
            for v in instr.results() {
                if let Some(p) = producer.get_mut(v) {
                    *p = Some(i);
                }
            }
            for v in instr.operands() {
                if let Some(r) = reads.get_mut(v) {
                    *r += 1;
                }
            }
        }
        for io in &program.outputs {
            if let Some(r) = reads.get_mut(io.value) {
                *r += 1;
            }
        }
        View {
            program,
            producer,
            reads,
        }
    }

    /// `(kind, operands, result)` of an op with one f32 result.
    fn f32_op(&self, i: usize) -> Option<(&'p OpKind, &'p [usize], usize)> {
        match &self.program.instrs[i] {
            Instr::Op {
                kind,
                operands,
                results,
                ..
            } if results.len() == 1 => {
                let ty = &self.program.values.get(results[0])?.ty;
                (ty.elem == ElemType::F32).then_some((kind, operands.as_slice(), results[0]))
            }
            _ => None,
        }
    }

    fn shape(&self, v: usize) -> Option<Vec<usize>> {
        dims(&self.program.values.get(v)?.ty)
    }

    /// An element-wise op of shape `shape` whose operands all have it.
    fn elementwise(&self, i: usize, shape: &[usize]) -> Option<(StepOp, &'p [usize], usize)> {
        let (kind, operands, result) = self.f32_op(i)?;
        let op = step_op(kind)?;
        let same = |v: usize| self.shape(v).as_deref() == Some(shape);
        (same(result) && operands.iter().all(|&v| same(v))).then_some((op, operands, result))
    }

    /// A broadcast to `shape` that repeats its f32 operand along leading
    /// dimensions; its operand.
    fn repeat(&self, i: usize, shape: &[usize]) -> Option<usize> {
        let (kind, operands, result) = self.f32_op(i)?;
        let OpKind::BroadcastInDim { dims: bdims } = kind else {
            return None;
        };
        let (&[x], Some(out)) = (operands, self.shape(result)) else {
            return None;
        };
        let src = self.shape(x)?;
        let lead = shape.len().checked_sub(src.len())?;
        let trailing = bdims
            .iter()
            .enumerate()
            .all(|(k, &d)| usize::try_from(d).ok() == Some(lead + k));
        let ok = out == shape
            && bdims.len() == src.len()
            && trailing
            && src == shape[lead..]
            && self.program.values[x].ty.elem == ElemType::F32;
        ok.then_some(x)
    }
}

/// Builds one group's chain, absorbing producers as it goes.
struct Builder<'v, 'p> {
    view: &'v View<'p>,
    shape: Vec<usize>,
    taken: &'v [bool],
    members: Vec<usize>,
    /// Members that others read too (broadcasts, see [`Builder::arg`]).
    shared: Vec<usize>,
    operands: Vec<usize>,
    steps: Vec<Step>,
}

impl Builder<'_, '_> {
    fn operand(&mut self, v: usize) -> usize {
        match self.operands.iter().position(|&o| o == v) {
            Some(k) => k,
            None => {
                self.operands.push(v);
                self.operands.len() - 1
            }
        }
    }

    /// The argument that reads `v`: its producer's step when it can be
    /// absorbed, else an operand.
    fn arg(&mut self, v: usize) -> Arg {
        let absorbable = self.view.reads.get(v) == Some(&1);
        if let Some(j) = self.view.producer[v].filter(|&j| !self.taken[j]) {
            // A broadcast is absorbed even when others read it too
            // (`shared`): repeating it costs a fill per block, while
            // making it costs a pass over memory (JAX's programs share one
            // broadcast learning rate between every weight update).
            if let Some(x) = self.view.repeat(j, &self.shape) {
                if !self.members.contains(&j) {
                    self.members.push(j);
                }
                if !absorbable && !self.shared.contains(&j) {
                    self.shared.push(j);
                }
                return Arg::Repeated(self.operand(x));
            }
            if absorbable {
                if let Some(step) = self.step(j) {
                    return Arg::Step(step);
                }
            }
        }
        Arg::Operand(self.operand(v))
    }

    /// Absorb instruction `i` (with its absorbable producers); its step.
    fn step(&mut self, i: usize) -> Option<usize> {
        let (op, operands, _) = self.view.elementwise(i, &self.shape)?;
        self.members.push(i);
        let args = operands.iter().map(|&v| self.arg(v)).collect();
        self.steps.push(Step { op, args });
        Some(self.steps.len() - 1)
    }
}

/// The units of `program`: fused groups and the instructions left alone,
/// in an order that runs every value's producer before its readers.
pub fn plan(program: &DeviceProgram) -> Vec<Unit> {
    let view = View::new(program);
    let n = program.instrs.len();
    let mut taken = vec![false; n];
    let mut groups: Vec<Option<Unit>> = transposed_dots(&view, &mut taken);
    let mut absorbed_reads: std::collections::BTreeMap<usize, usize> = Default::default();
    // Roots from the end, so that a chain's last op takes in the rest.
    for root in (0..n).rev() {
        if taken[root] {
            continue;
        }
        let Some((_, _, result)) = view.f32_op(root) else {
            continue;
        };
        let Some(shape) = view.shape(result) else {
            continue;
        };
        let mut b = Builder {
            view: &view,
            shape: shape.clone(),
            taken: &taken,
            members: Vec::new(),
            shared: Vec::new(),
            operands: Vec::new(),
            steps: Vec::new(),
        };
        if b.step(root).is_none() || b.members.len() < 2 {
            continue;
        }
        let (mut members, shared, operands, steps) = (b.members, b.shared, b.operands, b.steps);
        members.sort_unstable();
        for &m in &members {
            taken[m] |= !shared.contains(&m);
        }
        for &j in &shared {
            // The reads of the broadcast's result by this group's members.
            let v = program.instrs[j].results()[0];
            let reads = members
                .iter()
                .map(|&m| {
                    program.instrs[m]
                        .operands()
                        .iter()
                        .filter(|&&o| o == v)
                        .count()
                })
                .sum::<usize>();
            *absorbed_reads.entry(j).or_insert(0) += reads;
        }
        groups[root] = Some(Unit::Group(Group {
            root,
            members,
            operands,
            result,
            chain: Chain { steps, shape },
        }));
    }
    // A shared broadcast runs on its own only if someone still reads its
    // result (an instruction outside every group absorbing it, or the
    // program's outputs).
    for (j, absorbed) in absorbed_reads {
        let v = program.instrs[j].results()[0];
        taken[j] = view.reads.get(v) == Some(&absorbed);
    }
    in_order(groups, &taken)
}

/// `special[i]` where instruction `i` runs as one, else instruction `i`
/// unless it is part of another unit.
fn in_order(special: Vec<Option<Unit>>, taken: &[bool]) -> Vec<Unit> {
    let mut units = Vec::with_capacity(special.len());
    for (i, unit) in special.into_iter().enumerate() {
        match unit {
            Some(u) => units.push(u),
            None if !taken[i] => units.push(Unit::Instr(i)),
            None => {}
        }
    }
    units
}

/// Every instruction on its own, but for transposed dots (which give the
/// same bits fused or not, so that fused and unfused runs can be
/// compared bitwise).
pub fn unfused(program: &DeviceProgram) -> Vec<Unit> {
    let view = View::new(program);
    let mut taken = vec![false; program.instrs.len()];
    let special = transposed_dots(&view, &mut taken);
    in_order(special, &taken)
}

/// The [`TransposedDot`]s of the program, at their transposes' places;
/// both instructions of each marked taken.
fn transposed_dots(view: &View<'_>, taken: &mut [bool]) -> Vec<Option<Unit>> {
    let program = view.program;
    let mut out: Vec<Option<Unit>> = vec![None; program.instrs.len()];
    for (t, instr) in program.instrs.iter().enumerate() {
        let Instr::Op {
            kind: OpKind::Transpose { perm },
            operands,
            results,
            ..
        } = instr
        else {
            continue;
        };
        let (&[x], &[result]) = (operands.as_slice(), results.as_slice()) else {
            continue;
        };
        let Some(d) = view.producer.get(x).copied().flatten() else {
            continue;
        };
        if view.reads.get(x) != Some(&1) || taken[d] {
            continue;
        }
        let Instr::Op {
            kind: OpKind::DotGeneral {
                dims, precision, ..
            },
            operands: dot_operands,
            results: dot_results,
            ..
        } = &program.instrs[d]
        else {
            continue;
        };
        let (&[lhs, rhs], &[_]) = (dot_operands.as_slice(), dot_results.as_slice()) else {
            continue;
        };
        let rank = |v: usize| program.values.get(v).map(|x| x.ty.rank());
        let (Some(lr), Some(rr)) = (rank(lhs), rank(rhs)) else {
            continue;
        };
        let nb = dims.lhs_batch.len();
        let lf = lr.saturating_sub(nb + dims.lhs_contract.len());
        let rf = rr.saturating_sub(nb + dims.rhs_contract.len());
        // [batch, lhs free, rhs free] -> [batch, rhs free, lhs free].
        let swapping: Vec<i64> = (0..nb)
            .chain(nb + lf..nb + lf + rf)
            .chain(nb..nb + lf)
            .map(|a| a as i64)
            .collect();
        if *perm != swapping || lf == 0 || rf == 0 {
            continue;
        }
        let swapped = DotDims {
            lhs_batch: dims.rhs_batch.clone(),
            rhs_batch: dims.lhs_batch.clone(),
            lhs_contract: dims.rhs_contract.clone(),
            rhs_contract: dims.lhs_contract.clone(),
        };
        let precision = precision
            .as_ref()
            .map(|p| p.iter().rev().cloned().collect());
        taken[d] = true;
        taken[t] = true;
        out[t] = Some(Unit::TransposedDot(TransposedDot {
            dot: d,
            transpose: t,
            kind: OpKind::DotGeneral {
                dims: swapped,
                precision,
                is_dot: false,
            },
            operands: vec![rhs, lhs],
            result,
        }));
    }
    out
}
