//! Structure in a [`DeviceProgram`]: a loop instruction (a `cond` and a
//! `body` sub-program over loop-carried values) and a branch instruction
//! (one sub-program per branch, chosen by an index).
//!
//! Sub-programs are [`Block`]s: arguments, instructions, results, over the
//! program's one value arena, so an instruction inside may read a value
//! defined around the loop or branch (a *free* value of the block). Every
//! device runs the same control flow: the partitioner makes the loop
//! condition and the branch index whole (replicated) before they are read,
//! so all devices run the same trip count and take the same branch, and
//! they meet in the same collectives in the same order.
//!
//! [`DeviceProgram`]: crate::partition::program::DeviceProgram

use std::collections::HashSet;

use crate::partition::global::Cause;
use crate::partition::program::{Instr, LocalId};

/// A sub-program: `args` are bound on entry, `results` read on exit.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Block {
    pub args: Vec<LocalId>,
    pub instrs: Vec<Instr>,
    pub results: Vec<LocalId>,
}

/// `while cond(carried) { carried = body(carried) }`: `cond`'s one result
/// is a replicated `tensor<i1>`; `body` yields the next carried values, of
/// the same local types as `inits`, `results` and both blocks' arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopInstr {
    pub inits: Vec<LocalId>,
    pub cond: Block,
    pub body: Block,
    pub results: Vec<LocalId>,
    /// Iterations of a counted loop (constant bounds); `None` when the
    /// trip count depends on data.
    pub trip_count: Option<i64>,
    pub step: usize,
    /// The `stablehlo.while` it implements.
    pub cause: Cause,
}

/// Runs `branches[index]` (an index out of range runs the last branch, as
/// `stablehlo.case` does); `index` is a replicated integer scalar.
#[derive(Debug, Clone, PartialEq)]
pub struct BranchInstr {
    pub index: LocalId,
    pub branches: Vec<Block>,
    pub results: Vec<LocalId>,
    pub step: usize,
    /// The `stablehlo.case` it implements.
    pub cause: Cause,
}

impl Block {
    /// Values the block reads but does not define (its own arguments and
    /// results of its instructions, nested blocks included), in first-read
    /// order.
    pub fn free_values(&self) -> Vec<LocalId> {
        let mut defined: HashSet<LocalId> = self.args.iter().copied().collect();
        let mut free = Vec::new();
        let mut seen = HashSet::new();
        for instr in &self.instrs {
            for v in instr.operands() {
                if !defined.contains(&v) && seen.insert(v) {
                    free.push(v);
                }
            }
            defined.extend(instr.results());
        }
        for &v in &self.results {
            if !defined.contains(&v) && seen.insert(v) {
                free.push(v);
            }
        }
        free
    }

    /// The values the block defines: its arguments, then every result of
    /// its own instructions (not of nested blocks).
    pub fn defined_values(&self) -> Vec<LocalId> {
        let mut out = self.args.clone();
        for instr in &self.instrs {
            out.extend(instr.results());
        }
        out
    }
}

/// The operands of a structured instruction: `first` (the initial values
/// or the index), then the blocks' free values, each once.
pub(crate) fn structured_operands(first: &[LocalId], blocks: &[&Block]) -> Vec<LocalId> {
    let mut out = first.to_vec();
    let mut seen: HashSet<LocalId> = first.iter().copied().collect();
    for b in blocks {
        for v in b.free_values() {
            if seen.insert(v) {
                out.push(v);
            }
        }
    }
    out
}

/// How often an instruction runs in one run of the program.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Repeats {
    /// The product of the trip counts of the counted loops around it (a
    /// loop's `cond` runs once more than its body).
    pub times: f64,
    /// It sits in a loop whose trip count depends on data: `times` then
    /// counts one iteration of that loop.
    pub unknown_trips: bool,
    /// It sits in a branch of a `case` (counted as if taken).
    pub in_branch: bool,
}

impl Repeats {
    pub const ONCE: Repeats = Repeats {
        times: 1.0,
        unknown_trips: false,
        in_branch: false,
    };

    /// How often the body and the condition of a loop with `trip_count`
    /// run, the loop running this often (one iteration counted when the
    /// trip count depends on data).
    pub fn in_loop(self, trip_count: Option<i64>) -> (Repeats, Repeats) {
        match trip_count {
            Some(n) => {
                let n = n.max(0) as f64;
                (
                    Repeats {
                        times: self.times * n,
                        ..self
                    },
                    Repeats {
                        times: self.times * (n + 1.0),
                        ..self
                    },
                )
            }
            None => {
                let per_iteration = Repeats {
                    unknown_trips: true,
                    ..self
                };
                (per_iteration, per_iteration)
            }
        }
    }
}

/// Call `f` on every instruction of `instrs`, nested ones included, with
/// how often it runs (structured instructions themselves included).
pub fn walk_instrs<'a>(instrs: &'a [Instr], at: Repeats, f: &mut dyn FnMut(&'a Instr, Repeats)) {
    for instr in instrs {
        f(instr, at);
        match instr {
            Instr::Loop(l) => {
                let (body, cond) = at.in_loop(l.trip_count);
                walk_instrs(&l.cond.instrs, cond, f);
                walk_instrs(&l.body.instrs, body, f);
            }
            Instr::Branch(b) => {
                for block in &b.branches {
                    let inside = Repeats {
                        in_branch: true,
                        ..at
                    };
                    walk_instrs(&block.instrs, inside, f);
                }
            }
            _ => {}
        }
    }
}
