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
//! another instruction, not a program output). The group runs where its
//! root stood; its members' other operands are defined before them, so
//! before the root too. Only kinds listed in [`step_op`] fuse: every other
//! op, every other instruction (collectives, masks, remaps, and any kind
//! added later, loops and branches included) runs on its own. Like the
//! executor's freeing after last use, the planner relies on
//! `Instr::operands` naming every value an instruction reads (a body's
//! captured values included), so that a value read elsewhere is never
//! absorbed.
//!
//! Fused and unfused runs give bitwise the same results (the fused kernel
//! uses the ops' own element functions), so replicas, backends and the
//! MPI check agree whichever way a device runs a group.

use meshrun_compiler::ir::{ElemType, OpKind, TensorType};
use meshrun_compiler::partition::{DeviceProgram, Instr};
use meshrun_kernels::cpu::fusion::{Arg, Chain, Step, StepOp};

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

/// What the executor runs, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Unit {
    Instr(usize),
    Group(Group),
}

impl Unit {
    /// The values the unit reads.
    pub fn operands(&self, program: &DeviceProgram) -> Vec<usize> {
        match self {
            Unit::Instr(i) => program.instrs[*i].operands(),
            Unit::Group(g) => g.operands.clone(),
        }
    }

    /// The instruction that names the unit in errors (a group's root).
    pub fn instr(&self) -> usize {
        match self {
            Unit::Instr(i) => *i,
            Unit::Group(g) => g.root,
        }
    }

    /// Whether instruction `i` is (part of) this unit.
    pub fn covers(&self, i: usize) -> bool {
        match self {
            Unit::Instr(j) => *j == i,
            Unit::Group(g) => g.members.contains(&i),
        }
    }
}

/// The step an element-wise op is in a chain, if it fuses.
fn step_op(kind: &OpKind) -> Option<StepOp> {
    match kind {
        OpKind::Unary(op) if Chain::fusible_unary(*op) => Some(StepOp::Unary(*op)),
        OpKind::Binary(op) if Chain::fusible_binary(*op) => Some(StepOp::Binary(*op)),
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
        if let Some(j) = self.view.producer[v].filter(|&j| absorbable && !self.taken[j]) {
            if let Some(x) = self.view.repeat(j, &self.shape) {
                self.members.push(j);
                return Arg::Repeated(self.operand(x));
            }
            if let Some(step) = self.step(j) {
                return Arg::Step(step);
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
    let mut groups: Vec<Option<Group>> = vec![None; n];
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
            operands: Vec::new(),
            steps: Vec::new(),
        };
        if b.step(root).is_none() || b.members.len() < 2 {
            continue;
        }
        let (mut members, operands, steps) = (b.members, b.operands, b.steps);
        members.sort_unstable();
        for &m in &members {
            taken[m] = true;
        }
        groups[root] = Some(Group {
            root,
            members,
            operands,
            result,
            chain: Chain { steps, shape },
        });
    }
    let mut units = Vec::with_capacity(n);
    for (i, group) in groups.into_iter().enumerate() {
        match group {
            Some(g) => units.push(Unit::Group(g)),
            None if !taken[i] => units.push(Unit::Instr(i)),
            None => {}
        }
    }
    units
}

/// Every instruction on its own.
pub fn unfused(program: &DeviceProgram) -> Vec<Unit> {
    (0..program.instrs.len()).map(Unit::Instr).collect()
}
