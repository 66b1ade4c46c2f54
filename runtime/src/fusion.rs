//! Which instructions of a device program run fused: chains of
//! element-wise f32 ops (and the `broadcast_in_dim`s feeding them) become
//! one [`Group`], computed in one pass by a device that can
//! ([`crate::backend::Device::fused`]; the CPU device runs
//! `meshrun_kernels::cpu::fusion`), else op by op. A decision of the
//! runtime alone: the program (and what `meshrun partition` prints) is
//! unchanged.
//!
//! A group is rooted at an element-wise op and takes in an operand's
//! producer when that producer is itself fusible and has the root's shape
//! (or is a broadcast that only repeats its operand along leading
//! dimensions, or only each of its elements along trailing ones: see
//! [`View::stretch`]), and either
//!
//! - its result is read by one instruction alone (once or more) and is no
//!   program output, or
//! - it may be *recomputed*: its result is no program output and is read
//!   by at most [`MAX_READERS`] instructions, each an element-wise op of
//!   its shape (so each is computed in a group that can take it in too).
//!   Every reader's group then computes it again, as XLA duplicates cheap
//!   producers into each consumer's fusion, instead of one pass writing it
//!   and each reader reading it back (JAX's softmax reads `x - max` twice:
//!   for `exp` and for `- log(sum)`). What this costs is bounded: the
//!   steps a recomputed producer adds to a group (with what it takes in),
//!   weighed by [`step_cost`] (a transcendental 4, arithmetic 1) and
//!   times the number of its readers outside the group, may cost at most
//!   [`RECOMPUTE_BUDGET`] (this is spent top-down, so recomputation nested
//!   through several levels shares one budget rather than multiplying),
//!   and no group grows past [`MAX_MEMBERS`] by recomputation.
//!
//! Within a group a producer read twice is computed once (a step reads any
//! earlier step). Broadcasts are taken in whoever else reads them: a fill
//! per block is cheaper than a pass over memory.
//!
//! Instructions are decided from the last, so when one comes every reader
//! of its result is decided: an instruction some group took in runs on
//! its own (or as the root of its own group) only if a unit that runs (or
//! the program's outputs) still reads its result as made — a reader left
//! alone, a group that reads it as an operand (when a cap stopped it
//! taking it in). So a recomputed or shared value also read by a reduce
//! is made, and its element-wise readers then read it (no recomputation
//! is planned for a producer with a non-element-wise reader). The group
//! runs where its root stood; its operands are made before its members,
//! so before the root too. Only kinds listed in [`step_op`] fuse: every other
//! op, every other instruction (collectives, masks, remaps, and any kind
//! added later, loops and branches included) runs on its own. Like the
//! executor's freeing after last use, the planner relies on
//! `Instr::operands` naming every value an instruction reads (a body's
//! captured values included), so that a value read elsewhere is never
//! absorbed.
//!
//! A `dot_general` read only by a transpose that swaps its free
//! dimensions runs as one [`TransposedDot`], fused or not; so does one
//! whose transpose reads the dot's partial products summed by an
//! all-reduce ([`ReduceBetween`]).
//!
//! Fused and unfused runs give bitwise the same results (the fused kernel
//! uses the ops' own element functions, and a recomputed step gives the
//! same bits each time), so replicas, backends and the MPI check agree
//! whichever way a device runs a group.

use meshrun_compiler::ir::ops::dot_general::DotGeneral;
use meshrun_compiler::ir::{DotDims, ElemType, OpKind, TensorType};
use meshrun_compiler::partition::reshard::collective::Collective;
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
    /// The values the group reads, in `Arg::Operand`/`Arg::Repeated`/
    /// `Arg::Stretched` order.
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
    /// An all-reduce between the dot and the transpose, run on the
    /// swapped product.
    pub reduce: Option<ReduceBetween>,
}

/// The all-reduce of a [`TransposedDot`] whose transpose reads a sum of
/// partial products: `transpose(all_reduce(dot_general(dy, x)))`, every
/// weight gradient of a data-parallel JAX training step (the partitioner
/// sums the partial products where they are made). An all-reduce adds
/// the members' blocks element by element, so summing the swapped
/// product gives the transpose's result, bit for bit: the transpose is
/// never materialized (it was a quarter of an 8-device MLP step's CPU
/// time; see [`Collective::transposed`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ReduceBetween {
    /// The all-reduce instruction (its place in the program's collectives).
    pub instr: usize,
    /// The all-reduce over the transposed blocks.
    pub collective: Box<Collective>,
}

/// A `dot_general` (or a [`TransposedDot`]) whose f32 result one group
/// alone reads, element by element: the group runs on each tile of the
/// product as soon as it is computed (`meshrun_kernels::cpu::dot_chain`),
/// so the product is never written out and read back. A training step's
/// weight update `w - lr · (xᵀ·dy)` and a layer's `tanh(x·W + b)` have
/// this form.
#[derive(Debug, Clone, PartialEq)]
pub struct DotChain {
    /// The dot's instructions: the `dot_general`, and the transpose of a
    /// [`TransposedDot`].
    pub dot_instrs: Vec<usize>,
    /// The `dot_general` run (swapped for a [`TransposedDot`]).
    pub kind: OpKind,
    pub dot_operands: Vec<usize>,
    /// The value the group reads: the dot's (or the transpose's) result.
    pub dot_result: usize,
    /// The group; its operand `slot` is `dot_result`.
    pub group: Group,
    pub slot: usize,
}

impl DotChain {
    /// The values it reads: the dot's operands, then the group's others.
    pub fn operands(&self) -> Vec<usize> {
        let others = self.group.operands.iter().enumerate();
        let others = others.filter(|&(k, _)| k != self.slot).map(|(_, &v)| v);
        self.dot_operands.iter().copied().chain(others).collect()
    }
}

/// What the executor runs, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Unit {
    Instr(usize),
    Group(Group),
    /// Runs where the transpose stood.
    TransposedDot(TransposedDot),
    /// Runs where the group's root stood.
    DotChain(DotChain),
}

impl Unit {
    /// The values the unit reads.
    pub fn operands(&self, program: &DeviceProgram) -> Vec<usize> {
        match self {
            Unit::Instr(i) => program.instrs[*i].operands(),
            Unit::Group(g) => g.operands.clone(),
            Unit::TransposedDot(t) => t.operands.clone(),
            Unit::DotChain(c) => c.operands(),
        }
    }

    /// The instruction that names the unit in errors (a group's root).
    pub fn instr(&self) -> usize {
        match self {
            Unit::Instr(i) => *i,
            Unit::Group(g) => g.root,
            Unit::TransposedDot(t) => t.transpose,
            Unit::DotChain(c) => c.group.root,
        }
    }

    /// Whether instruction `i` is (part of) this unit.
    pub fn covers(&self, i: usize) -> bool {
        match self {
            Unit::Instr(j) => *j == i,
            Unit::Group(g) => g.members.contains(&i),
            Unit::TransposedDot(t) => {
                t.dot == i || t.transpose == i || t.reduce.as_ref().is_some_and(|r| r.instr == i)
            }
            Unit::DotChain(c) => c.dot_instrs.contains(&i) || c.group.members.contains(&i),
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
    /// Per value, the instructions that read it (each once).
    readers: Vec<Vec<usize>>,
    /// Per value, whether the program returns it.
    output: Vec<bool>,
}

impl<'p> View<'p> {
    fn new(program: &'p DeviceProgram) -> View<'p> {
        let nv = program.values.len();
        let (mut producer, mut reads) = (vec![None; nv], vec![0; nv]);
        let (mut readers, mut output) = (vec![Vec::new(); nv], vec![false; nv]);
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
                if let Some(rs) = readers.get_mut(v) {
                    if rs.last() != Some(&i) {
                        rs.push(i);
                    }
                }
            }
        }
        for io in &program.outputs {
            if let Some(r) = reads.get_mut(io.value) {
                *r += 1;
            }
            if let Some(o) = output.get_mut(io.value) {
                *o = true;
            }
        }
        View {
            program,
            producer,
            reads,
            readers,
            output,
        }
    }

    /// Whether `v` is read by one instruction alone (once or more) and is
    /// no output: its producer can be computed within that reader's group.
    fn exclusive(&self, v: usize) -> bool {
        !self.output[v] && self.readers[v].len() == 1
    }

    /// Whether `v` may be computed again within each of its readers'
    /// groups: no output, read by at most [`MAX_READERS`] instructions,
    /// each of them an element-wise op of `v`'s shape (so each is a member
    /// of a group that can take `v`'s producer in, and nobody else needs
    /// `v` made).
    fn recomputable(&self, v: usize) -> bool {
        let Some(shape) = self.shape(v) else {
            return false;
        };
        let rs = &self.readers[v];
        !self.output[v]
            && (2..=MAX_READERS).contains(&rs.len())
            && rs.iter().all(|&r| self.elementwise(r, &shape).is_some())
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

    /// A broadcast of an f32 operand to `shape`: its operand, the
    /// operand's shape and the broadcast's dims (one per operand dim).
    fn broadcast_to(&self, i: usize, shape: &[usize]) -> Option<(usize, Vec<usize>, &'p [i64])> {
        let (kind, operands, result) = self.f32_op(i)?;
        let OpKind::BroadcastInDim(meshrun_compiler::ir::ops::broadcast_in_dim::BroadcastInDim {
            dims,
        }) = kind
        else {
            return None;
        };
        let (&[x], Some(out)) = (operands, self.shape(result)) else {
            return None;
        };
        let src = self.shape(x)?;
        let ok = out == shape
            && dims.len() == src.len()
            && src.len() <= shape.len()
            && self.program.values[x].ty.elem == ElemType::F32;
        ok.then_some((x, src, dims.as_slice()))
    }

    /// A broadcast to `shape` that repeats its f32 operand along leading
    /// dimensions; its operand. The operand's own leading size-1
    /// dimensions do not count (`1x1024 -> 64x1024`, as JAX broadcasts a
    /// bias): its elements are in the same order without them.
    fn repeat(&self, i: usize, shape: &[usize]) -> Option<usize> {
        let (x, src, bdims) = self.broadcast_to(i, shape)?;
        let ones = src.iter().take_while(|&&d| d == 1).count();
        let (src, bdims) = (&src[ones..], &bdims[ones..]);
        let lead = shape.len() - src.len();
        let trailing = bdims
            .iter()
            .enumerate()
            .all(|(k, &d)| usize::try_from(d).ok() == Some(lead + k));
        (trailing && *src == shape[lead..]).then_some(x)
    }

    /// A broadcast to `shape` that repeats each element of its f32 operand
    /// along trailing dimensions (`Arg::Stretched`); its operand. Only
    /// this provable layout: `dims = [0, 1, .., r-1]` (operand dim `k` is
    /// result dim `k`) and, for some `d`, operand dims `..d` equal the
    /// result's and dims `d..` are 1. Then the operand's elements are those
    /// of `shape[..d]` in row-major order and result element `p` is
    /// operand element `p / prod(shape[d..])`. A transposing broadcast, one
    /// into non-consecutive dims, or a size-1 dim before a kept one (a
    /// middle block) is left unfused.
    fn stretch(&self, i: usize, shape: &[usize]) -> Option<usize> {
        let (x, src, bdims) = self.broadcast_to(i, shape)?;
        let in_order = bdims
            .iter()
            .enumerate()
            .all(|(k, &d)| usize::try_from(d).ok() == Some(k));
        let d = src.iter().rposition(|&s| s != 1).map_or(0, |p| p + 1);
        (in_order && src[..d] == shape[..d]).then_some(x)
    }
}

/// A producer read by more instructions than this is never recomputed:
/// each reader's group would compute it again.
const MAX_READERS: usize = 4;

/// A group stops taking in recomputed producers once it has this many
/// members, so that chains of values each read twice cannot grow groups
/// without bound (each group computes every member once, so its work is
/// at most this many steps plus the producers only it reads).
const MAX_MEMBERS: usize = 32;

/// How much extra element work recomputing one producer may cost, in
/// units of one plain arithmetic step per element: the steps taking the
/// producer in adds to a group (the producer and what it takes in with
/// it, nearest first until the budget is spent), times the number of its
/// readers outside the group, which compute them again. Materializing the
/// producer instead costs a write of the whole tensor and a read per
/// reader, each a few times an arithmetic step per element once the
/// tensor is out of cache (plus a pass of its own), and a vectorized
/// transcendental costs a few arithmetic steps: so with the weights of
/// [`step_cost`], an arithmetic producer (with a few steps it takes in) is
/// recomputed for up to four readers, an `exp` for up to three.
const RECOMPUTE_BUDGET: usize = 8;

/// The cost of one step per element, in plain arithmetic steps: the
/// vectorized transcendentals (and `power`) weigh 4, everything else
/// (IEEE arithmetic, `sqrt`, `max`, rounding) 1.
fn step_cost(op: StepOp) -> usize {
    use meshrun_compiler::ir::{BinaryOp, UnaryOp as U};
    match op {
        StepOp::Unary(U::Negate | U::Abs | U::Square | U::Sqrt | U::Rsqrt) => 1,
        StepOp::Unary(_) | StepOp::Binary(BinaryOp::Power) => 4,
        StepOp::Binary(_) | StepOp::ReducePrecision(_) => 1,
    }
}

/// Builds one group's chain, absorbing producers as it goes.
struct Builder<'v, 'p> {
    view: &'v View<'p>,
    shape: Vec<usize>,
    /// Instructions that run as another unit (transposed dots).
    fixed: &'v [bool],
    /// Members in the order they were taken in (broadcasts included).
    members: Vec<usize>,
    /// `(instruction, step)` of every element-wise member: a producer
    /// read twice within the group is computed once.
    at: Vec<(usize, usize)>,
    operands: Vec<usize>,
    steps: Vec<Step>,
    /// The cost (see [`step_cost`]) the steps taken in from here on may
    /// still add: unbounded but within a recomputed producer.
    room: usize,
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
        let Some(j) = self.view.producer[v].filter(|&j| !self.fixed[j]) else {
            return Arg::Operand(self.operand(v));
        };
        if let Some(&(_, s)) = self.at.iter().find(|&&(m, _)| m == j) {
            return Arg::Step(s);
        }
        // A broadcast is absorbed even when others read it too: repeating
        // it costs a fill per block, while making it costs a pass over
        // memory (JAX's programs share one broadcast learning rate between
        // every weight update).
        if let Some(x) = self.view.repeat(j, &self.shape) {
            if !self.members.contains(&j) {
                self.members.push(j);
            }
            return Arg::Repeated(self.operand(x));
        }
        // Likewise a broadcast along trailing dimensions (a softmax's row
        // max or sum, a layernorm's mean and variance).
        if let Some(x) = self.view.stretch(j, &self.shape) {
            if !self.members.contains(&j) {
                self.members.push(j);
            }
            return Arg::Stretched(self.operand(x));
        }
        if self.view.exclusive(v) {
            if let Some(step) = self.step(j) {
                return Arg::Step(step);
            }
        } else if self.view.recomputable(v) {
            // Computed here, and again in the group of every reader that
            // is not a member of this one (yet: one that joins later reads
            // the same step); what it takes in with it is too. So the
            // steps it adds may cost RECOMPUTE_BUDGET / copies, within
            // what the producer that takes it in may still add, and may
            // not grow the group past MAX_MEMBERS.
            let copies = self.view.readers[v]
                .iter()
                .filter(|r| !self.members.contains(r))
                .count();
            let outer = self.room;
            let room = match copies {
                // Every reader is a member: computed once, as if exclusive.
                0 => outer,
                _ => (RECOMPUTE_BUDGET / copies)
                    .min(MAX_MEMBERS.saturating_sub(self.members.len()))
                    .min(outer),
            };
            self.room = room;
            let step = self.step(j);
            self.room = outer - (room - self.room);
            if let Some(step) = step {
                return Arg::Step(step);
            }
        }
        Arg::Operand(self.operand(v))
    }

    /// Absorb instruction `i` (with its absorbable producers) if its step
    /// fits in [`Builder::room`]; its step. Returns `None` having changed
    /// nothing.
    fn step(&mut self, i: usize) -> Option<usize> {
        let (op, operands, _) = self.view.elementwise(i, &self.shape)?;
        self.room = self.room.checked_sub(step_cost(op))?;
        self.members.push(i);
        let args = operands.iter().map(|&v| self.arg(v)).collect();
        self.steps.push(Step { op, args });
        let s = self.steps.len() - 1;
        self.at.push((i, s));
        Some(s)
    }
}

/// The group rooted at instruction `root`, if it takes in anything.
fn group(view: &View<'_>, fixed: &[bool], root: usize) -> Option<Group> {
    let (_, _, result) = view.f32_op(root)?;
    let shape = view.shape(result)?;
    let mut b = Builder {
        view,
        shape: shape.clone(),
        fixed,
        members: Vec::new(),
        at: Vec::new(),
        operands: Vec::new(),
        steps: Vec::new(),
        room: usize::MAX,
    };
    b.step(root)?;
    if b.members.len() < 2 {
        return None;
    }
    let mut members = b.members;
    members.sort_unstable();
    Some(Group {
        root,
        members,
        operands: b.operands,
        result,
        chain: Chain {
            steps: b.steps,
            shape,
        },
    })
}

/// The units of `program`: fused groups and the instructions left alone,
/// in an order that runs every value's producer before its readers.
///
/// Instructions are decided from the last: when instruction `i` comes, the
/// readers of its results are decided, so it is known whether a unit that
/// runs (or the program's outputs) reads a result as made (`needed`). An
/// instruction some group took in whose results nobody needs so does not
/// run; any other runs, as the root of a group if it can be one.
pub fn plan(program: &DeviceProgram) -> Vec<Unit> {
    let view = View::new(program);
    let n = program.instrs.len();
    let mut taken = vec![false; n];
    let mut units: Vec<Option<Unit>> = transposed_dots(&view, &mut taken);
    let fixed = taken.clone();
    let mut needed = vec![false; program.values.len()];
    for io in &program.outputs {
        if let Some(x) = needed.get_mut(io.value) {
            *x = true;
        }
    }
    let mut absorbed = vec![false; n];
    for i in (0..n).rev() {
        let reads = if fixed[i] {
            match &units[i] {
                Some(u) => u.operands(program),
                None => continue,
            }
        } else {
            let results = program.instrs[i].results();
            if absorbed[i]
                && results
                    .iter()
                    .all(|&v| !needed.get(v).copied().unwrap_or(true))
            {
                // Computed within every group that reads it.
                taken[i] = true;
                continue;
            }
            match group(&view, &fixed, i) {
                Some(g) => {
                    for &m in &g.members {
                        absorbed[m] |= m != i;
                    }
                    let reads = g.operands.clone();
                    units[i] = Some(Unit::Group(g));
                    reads
                }
                None => program.instrs[i].operands(),
            }
        };
        for v in reads {
            if let Some(x) = needed.get_mut(v) {
                *x = true;
            }
        }
    }
    dot_chains(&view, in_order(units, &taken))
}

/// `units` with each group that reads a dot's f32 result element by
/// element, as the only reader of it, run on the dot's tiles
/// ([`DotChain`]). The dot moves from its place to the group's (later):
/// its operands stay live until then, and nothing else reads its result.
fn dot_chains(view: &View<'_>, units: Vec<Unit>) -> Vec<Unit> {
    let program = view.program;
    let f32_value = |v: usize| {
        program
            .values
            .get(v)
            .is_some_and(|x| x.ty.elem == ElemType::F32)
    };
    // Per value, the unit (index) of a plain f32 dot that makes it.
    let mut dot_of = std::collections::HashMap::new();
    for (u, unit) in units.iter().enumerate() {
        let (kind, operands, result) = match unit {
            Unit::Instr(i) => match &program.instrs[*i] {
                Instr::Op {
                    kind: kind @ OpKind::DotGeneral(_),
                    operands,
                    results,
                    ..
                } if results.len() == 1 => (kind, operands.as_slice(), results[0]),
                _ => continue,
            },
            // A summed product is not the dot's tiles.
            Unit::TransposedDot(t) if t.reduce.is_none() => {
                (&t.kind, t.operands.as_slice(), t.result)
            }
            _ => continue,
        };
        if operands.len() == 2
            && [operands[0], operands[1], result]
                .into_iter()
                .all(f32_value)
        {
            dot_of.insert(result, (u, kind.clone(), operands.to_vec()));
        }
    }
    // Units reading each value: a value one instruction reads may still be
    // read by several groups (that instruction recomputed in each).
    let mut unit_reads = vec![0usize; program.values.len()];
    for unit in &units {
        let mut seen = unit.operands(program);
        seen.sort_unstable();
        seen.dedup();
        for v in seen {
            if let Some(r) = unit_reads.get_mut(v) {
                *r += 1;
            }
        }
    }
    let mut merged: Vec<Option<Unit>> = units.into_iter().map(Some).collect();
    for j in 0..merged.len() {
        let Some(Unit::Group(g)) = &merged[j] else {
            continue;
        };
        let found = g.operands.iter().enumerate().find_map(|(k, &v)| {
            let (u, kind, dot_operands) = dot_of.get(&v)?;
            let read_in_place = g.chain.steps.iter().all(|s| {
                s.args
                    .iter()
                    .all(|a| !matches!(a, Arg::Repeated(x) | Arg::Stretched(x) if *x == k))
            });
            let alone = !view.output[v]
                && unit_reads.get(v) == Some(&1)
                && g.operands.iter().filter(|&&o| o == v).count() == 1;
            (read_in_place && alone && *u < j && merged[*u].is_some())
                .then(|| (k, v, *u, kind.clone(), dot_operands.clone()))
        });
        let Some((slot, dot_result, u, kind, dot_operands)) = found else {
            continue;
        };
        let dot_instrs = match merged[u].take() {
            Some(Unit::Instr(i)) => vec![i],
            Some(Unit::TransposedDot(t)) => vec![t.dot, t.transpose],
            _ => continue,
        };
        let Some(Unit::Group(group)) = merged[j].take() else {
            continue;
        };
        merged[j] = Some(Unit::DotChain(DotChain {
            dot_instrs,
            kind,
            dot_operands,
            dot_result,
            group,
            slot,
        }));
    }
    merged.into_iter().flatten().collect()
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
            kind: OpKind::Transpose(meshrun_compiler::ir::ops::transpose::Transpose { perm }),
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
        let read_once = |v: usize| view.reads.get(v) == Some(&1);
        let Some(mut d) = view.producer.get(x).copied().flatten() else {
            continue;
        };
        if !read_once(x) || taken[d] {
            continue;
        }
        let mut reduce = None;
        if let Instr::Collective {
            collective,
            operand,
            ..
        } = &program.instrs[d]
        {
            let Some(p) = view.producer.get(*operand).copied().flatten() else {
                continue;
            };
            let perm: Option<Vec<usize>> = perm.iter().map(|&a| usize::try_from(a).ok()).collect();
            let Some(c) = perm.and_then(|perm| collective.transposed(&perm)) else {
                continue;
            };
            if !read_once(*operand) || taken[p] {
                continue;
            }
            reduce = Some(ReduceBetween {
                instr: d,
                collective: Box::new(c),
            });
            d = p;
        }
        let Instr::Op {
            kind: OpKind::DotGeneral(DotGeneral {
                dims, precision, ..
            }),
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
        if let Some(r) = &reduce {
            taken[r.instr] = true;
        }
        out[t] = Some(Unit::TransposedDot(TransposedDot {
            dot: d,
            transpose: t,
            kind: OpKind::DotGeneral(DotGeneral {
                dims: swapped,
                precision,
                is_dot: false,
            }),
            operands: vec![rhs, lhs],
            result,
            reduce,
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use meshrun_compiler::text::parse_module;

    fn program(text: &str) -> DeviceProgram {
        let module = parse_module(text).expect("parses");
        crate::pipeline::compile(&module).expect("compiles").device
    }

    fn groups(units: &[Unit]) -> Vec<&Group> {
        units
            .iter()
            .filter_map(|u| match u {
                Unit::Group(g) => Some(g),
                _ => None,
            })
            .collect()
    }

    /// The bits of `p`'s outputs on random inputs, fused or not.
    fn outputs(p: &DeviceProgram, fuse: bool) -> Vec<Vec<u64>> {
        use crate::{CpuBackend, ExecOptions, Executor};
        let types: Vec<TensorType> = p
            .inputs
            .iter()
            .map(|io| p.values[io.value].ty.clone())
            .collect();
        let inputs = crate::random_inputs::random_inputs(&types, 3).expect("inputs");
        let exec = Executor::with_fusion(p, fuse).expect("executor");
        let backend = CpuBackend::new();
        let placed = exec.place(&backend, &inputs).expect("placed");
        let outs = exec
            .run(&backend, &placed, &ExecOptions::default())
            .expect("runs");
        let outs = exec.gather(&backend, outs, true).expect("gathered");
        outs.iter()
            .map(|t| t.to_f64_vec().iter().map(|v| v.to_bits()).collect())
            .collect()
    }

    /// The `k`-th `stablehlo.<op>` of `p`.
    fn nth(p: &DeviceProgram, op: &str, k: usize) -> usize {
        (0..p.instrs.len())
            .filter(|&i| match &p.instrs[i] {
                Instr::Op { kind, .. } => kind.name() == format!("stablehlo.{op}"),
                _ => false,
            })
            .nth(k)
            .unwrap_or_else(|| panic!("no {op} #{k}"))
    }

    /// A log-softmax over dimension 0, as JAX writes it: `s = x - m` is read
    /// by `exp(s)` (summed) and by `s - log(sum)`.
    const SOFTMAX: &str = r#"
func.func public @main(%x: tensor<8x16xf32>, %m: tensor<8x16xf32>) -> (tensor<16xf32>, tensor<8x16xf32>) {
  %s = stablehlo.subtract %x, %m : tensor<8x16xf32>
  %e = stablehlo.exponential %s : tensor<8x16xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [0] : (tensor<8x16xf32>, tensor<f32>) -> tensor<16xf32>
  %rb = stablehlo.broadcast_in_dim %r, dims = [1] : (tensor<16xf32>) -> tensor<8x16xf32>
  %l = stablehlo.log %rb : tensor<8x16xf32>
  %o = stablehlo.subtract %s, %l : tensor<8x16xf32>
  return %r, %o : tensor<16xf32>, tensor<8x16xf32>
}
"#;

    #[test]
    fn a_value_read_by_two_element_wise_ops_is_computed_in_both_groups() {
        let p = program(SOFTMAX);
        let units = plan(&p);
        let s = nth(&p, "subtract", 0);
        let (e, o) = (nth(&p, "exponential", 0), nth(&p, "subtract", 1));
        let gs = groups(&units);
        assert_eq!(gs.len(), 2, "{units:#?}");
        assert_eq!(gs[0].root, e);
        assert_eq!(gs[0].members, vec![s, e], "{:#?}", gs[0]);
        assert_eq!(gs[1].root, o);
        assert!(gs[1].members.contains(&s), "{:#?}", gs[1]);
        // Both read x and m, neither reads s made; s does not run.
        let sv = p.instrs[s].results()[0];
        for g in &gs {
            assert_eq!(&g.operands[..2], p.instrs[s].operands().as_slice());
            assert!(!g.operands.contains(&sv));
        }
        assert!(!units.iter().any(|u| matches!(u, Unit::Instr(i) if *i == s)));
    }

    #[test]
    fn a_value_also_reduced_or_returned_runs_and_is_read_made() {
        // Read also by a reduce, or returned: s runs, and its element-wise
        // readers read it rather than compute it again.
        let reduced = SOFTMAX
            .replace("(tensor<16xf32>, tensor<8x16xf32>) {", "(tensor<16xf32>, tensor<8x16xf32>, tensor<16xf32>) {")
            .replace(
                "  return %r, %o : tensor<16xf32>, tensor<8x16xf32>",
                "  %r2 = stablehlo.reduce(%s init: %z) applies stablehlo.add across dimensions = [0] : (tensor<8x16xf32>, tensor<f32>) -> tensor<16xf32>\n  \
                 return %r, %o, %r2 : tensor<16xf32>, tensor<8x16xf32>, tensor<16xf32>",
            );
        let returned = SOFTMAX
            .replace(
                "(tensor<16xf32>, tensor<8x16xf32>) {",
                "(tensor<16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {",
            )
            .replace(
                "  return %r, %o : tensor<16xf32>, tensor<8x16xf32>",
                "  return %r, %o, %s : tensor<16xf32>, tensor<8x16xf32>, tensor<8x16xf32>",
            );
        for text in [reduced, returned] {
            let p = program(&text);
            let units = plan(&p);
            let s = nth(&p, "subtract", 0);
            let (e, o) = (nth(&p, "exponential", 0), nth(&p, "subtract", 1));
            let sv = p.instrs[s].results()[0];
            assert!(
                units.iter().any(|u| matches!(u, Unit::Instr(i) if *i == s)),
                "{units:#?}"
            );
            // exp alone is no group; s - log(sum) is, reading s.
            assert!(
                units.iter().any(|u| matches!(u, Unit::Instr(i) if *i == e)),
                "{units:#?}"
            );
            let gs = groups(&units);
            assert_eq!(gs.len(), 1, "{units:#?}");
            assert_eq!(gs[0].root, o);
            assert!(!gs[0].members.contains(&s) && gs[0].operands.contains(&sv));
        }
    }

    /// `n` rungs: `x(k+1) = (x(k) + c) * x(k)`, and, when `reduced`, each
    /// `x(k) * x(k)` summed, so that every `x(k)` has two readers in
    /// different groups.
    fn ladder(n: usize, reduced: bool) -> String {
        let mut body = String::from("  %z = stablehlo.constant dense<0.0> : tensor<f32>\n");
        let (mut outs, mut tys) = (Vec::new(), Vec::new());
        for k in 0..n {
            body += &format!(
                "  %a{k} = stablehlo.add %x{k}, %c : tensor<4x8xf32>\n  \
                 %x{k1} = stablehlo.multiply %a{k}, %x{k} : tensor<4x8xf32>\n",
                k1 = k + 1
            );
            if reduced {
                body += &format!(
                    "  %t{k} = stablehlo.multiply %x{k}, %x{k} : tensor<4x8xf32>\n  \
                     %r{k} = stablehlo.reduce(%t{k} init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>\n"
                );
                outs.push(format!("%r{k}"));
                tys.push("tensor<8xf32>");
            }
        }
        outs.push(format!("%x{n}"));
        tys.push("tensor<4x8xf32>");
        let tys = tys.join(", ");
        format!(
            "func.func public @main(%x0: tensor<4x8xf32>, %c: tensor<4x8xf32>) -> ({tys}) {{\n{body}  return {} : {tys}\n}}\n",
            outs.join(", ")
        )
    }

    #[test]
    fn recomputation_through_a_ladder_of_values_read_twice_stays_bounded() {
        let n = 60;
        for reduced in [false, true] {
            let p = program(&ladder(n, reduced));
            let units = plan(&p);
            let gs = groups(&units);
            assert!(!gs.is_empty());
            let binary = |i: usize| {
                matches!(
                    &p.instrs[i],
                    Instr::Op {
                        kind: OpKind::Binary(_),
                        ..
                    }
                )
            };
            let ops = (0..p.instrs.len()).filter(|&i| binary(i)).count();
            let alone = units
                .iter()
                .filter(|u| matches!(u, Unit::Instr(i) if binary(*i)))
                .count();
            let total = alone + gs.iter().map(|g| g.chain.steps.len()).sum::<usize>();
            // Every op is computed somewhere, and the copies stay within
            // the recomputation budget per op.
            assert!(total >= ops, "{total} steps for {ops} ops");
            assert!(
                total <= ops * (RECOMPUTE_BUDGET + 1),
                "{total} steps for {ops} ops"
            );
            if reduced {
                // Each `x(k)` is computed again for `x(k) * x(k)`, within
                // the budget, and no group outgrows the cap.
                assert!(total > ops, "{units:#?}");
                for g in &gs {
                    assert!(g.members.len() <= MAX_MEMBERS, "{:#?}", g);
                }
                assert_eq!(outputs(&p, true), outputs(&p, false));
            } else {
                // Read twice within one group, each value is computed
                // once: one group, nothing repeated.
                assert_eq!(gs.len(), 1, "{units:#?}");
                assert_eq!(total, ops);
            }
        }
    }

    /// A softmax over the last dim (as JAX writes it) and `bcast` (an
    /// operand `%b` broadcast into `%x`'s shape), subtracted from `%x`.
    fn broadcast_program(bcast: &str, bty: &str) -> String {
        format!(
            r#"
func.func public @main(%x: tensor<4x6x40xf32>, %b: {bty}) -> (tensor<4x6x40xf32>, tensor<4x6x40xf32>) {{
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [2] : (tensor<4x6x40xf32>, tensor<f32>) -> tensor<4x6xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1] : (tensor<4x6xf32>) -> tensor<4x6x40xf32>
  %s = stablehlo.subtract %x, %mb : tensor<4x6x40xf32>
  %e = stablehlo.exponential %s : tensor<4x6x40xf32>
  %bb = stablehlo.broadcast_in_dim %b, {bcast} : ({bty}) -> tensor<4x6x40xf32>
  %o = stablehlo.subtract %x, %bb : tensor<4x6x40xf32>
  %o2 = stablehlo.exponential %o : tensor<4x6x40xf32>
  return %e, %o2 : tensor<4x6x40xf32>, tensor<4x6x40xf32>
}}
"#
        )
    }

    #[test]
    fn a_broadcast_along_trailing_dims_is_stretched_and_no_other_is() {
        let cases = [
            // Prefix layouts: stretched.
            ("dims = [0, 1]", "tensor<4x6xf32>", true),
            ("dims = [0, 1, 2]", "tensor<4x6x1xf32>", true),
            ("dims = [0]", "tensor<4xf32>", true),
            ("dims = [0, 1]", "tensor<4x1xf32>", true),
            // A transpose, a gap, a middle block, a leading 1: not.
            ("dims = [1, 0]", "tensor<6x4xf32>", false),
            ("dims = [0, 2]", "tensor<4x40xf32>", false),
            ("dims = [0, 1, 2]", "tensor<1x6x1xf32>", false),
            ("dims = [0, 1, 2]", "tensor<4x1x40xf32>", false),
        ];
        for (bcast, bty, stretched) in cases {
            let text = broadcast_program(bcast, bty);
            let p = program(&text);
            let units = plan(&p);
            let (mb, bb) = (
                nth(&p, "broadcast_in_dim", 0),
                nth(&p, "broadcast_in_dim", 1),
            );
            let gs = groups(&units);
            // The softmax's broadcast(max) is always taken in, stretched.
            let g = gs
                .iter()
                .find(|g| g.members.contains(&mb))
                .expect("max group");
            assert!(
                g.chain.steps[0].args.contains(&Arg::Stretched(1)),
                "{bcast} {bty}: {g:#?}"
            );
            assert!(!units
                .iter()
                .any(|u| matches!(u, Unit::Instr(i) if *i == mb)));
            let taken = gs.iter().any(|g| g.members.contains(&bb));
            assert_eq!(taken, stretched, "{bcast} {bty}: {units:#?}");
            assert_eq!(
                units
                    .iter()
                    .any(|u| matches!(u, Unit::Instr(i) if *i == bb)),
                !stretched,
                "{bcast} {bty}"
            );
            assert_eq!(outputs(&p, true), outputs(&p, false), "{bcast} {bty}");
        }
    }
}
