//! What the partitioner produces: the per-device program every backend
//! executes (SPEC §6), and [`PartitionedProgram`], which adds the global
//! program and its lowering it was built from.
//!
//! **One SPMD program for all devices.** Every device runs the same
//! instructions on values of the same local types; where an instruction
//! depends on the device (an iota's offset, how much of a padded block is
//! real, which slab to send, where a remapped element comes from) it
//! carries a [`PerDevice`] table with one entry per device, in
//! [`DeviceProgram::devices`] order. Collectives carry their explicit
//! device groups. So a runtime needs nothing but the program and its own
//! device id.
//!
//! Values are local blocks: dimension `d` of a global value sharded `n`
//! ways is `ceil(size/n)` long; the last blocks may hold padding past the
//! end of the global tensor. Padding holds unspecified values, except that
//! the program masks it (to the reduction's identity) before any
//! instruction that would read it into a real element: a `reduce` or a
//! `dot_general` contraction over a padded dimension. Inputs are sharded by
//! the runtime per [`ProgramIo::sharding`] (padding may hold anything);
//! outputs are gathered the same way, their padding ignored.

pub mod op_text;
pub mod print;
pub mod regions;
pub mod report;

use std::fmt;

use crate::ir::{OpKind, Scalar, TensorType};
use crate::partition::global::{Cause, Donation, GlobalProgram};
use crate::partition::lower::Lowering;
use crate::partition::program::regions::{
    structured_operands, walk_instrs, BranchInstr, LoopInstr, Repeats,
};
use crate::partition::reshard::collective::{collective_bytes, Collective};
use crate::sharding::{Mesh, TensorSharding};

/// Index into [`DeviceProgram::values`].
pub type LocalId = usize;

/// One entry per device, in [`DeviceProgram::devices`] order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerDevice<T>(pub Vec<T>);

impl<T> PerDevice<T> {
    /// The entry of the device at `position` in the program's device list.
    pub fn at(&self, position: usize) -> Option<&T> {
        self.0.get(position)
    }
}

/// A local value: the block one device holds.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalValue {
    /// The local (ceil-divided, padded) type.
    pub ty: TensorType,
    /// A name for listings (`%3`, `%arg0`, `%3.slab1`).
    pub name: String,
}

/// A program input or output: which local value it is, and how the global
/// tensor is split into local blocks (so a runtime can shard inputs and
/// gather outputs, e.g. with `sharding::layout::TensorLayout`).
#[derive(Debug, Clone, PartialEq)]
pub struct ProgramIo {
    pub value: LocalId,
    pub global: TensorType,
    pub sharding: TensorSharding,
    pub mesh: Mesh,
    /// `mhlo.memory_kind` (`"pinned_host"`, `"device"`), if given.
    pub memory_kind: Option<String>,
    /// For an input: whether a result may be written into its buffer
    /// (always `None` for an output).
    pub donation: Donation,
}

impl ProgramIo {
    /// Whether the value lives in host memory (`pinned_host`,
    /// `unpinned_host`): the CPU backend holds it as any other; a device
    /// copies it over the host link.
    pub fn on_host(&self) -> bool {
        self.memory_kind
            .as_deref()
            .is_some_and(|k| k.contains("host"))
    }
}

/// Where one element of a [`Instr::Remap`] result comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RemapEntry {
    /// Element `index` (along the remapped dimension) of source `source`.
    Source { source: u32, index: i64 },
    /// The fill value (a padded position of a pad, or padding).
    Fill,
}

/// One instruction. Operands are always defined before use.
#[derive(Debug, Clone, PartialEq)]
pub enum Instr {
    /// A StableHLO op on local blocks, attributes already rewritten for
    /// local shapes; `results` have the local types in
    /// [`DeviceProgram::values`].
    Op {
        kind: OpKind,
        operands: Vec<LocalId>,
        results: Vec<LocalId>,
        /// The global step it implements.
        step: usize,
    },
    /// `iota` along `dim`, plus the device's offset: element `k` along
    /// `dim` is `offset + k` (converted to the element type).
    Iota {
        result: LocalId,
        dim: usize,
        offset: PerDevice<i64>,
        step: usize,
    },
    /// A collective over explicit device groups (see
    /// [`crate::partition::reshard::collective`] for the semantics). A
    /// collective-permute may list pairs for only some devices: a device
    /// that is no pair's target receives a block of zeros.
    Collective {
        collective: Box<Collective>,
        operand: LocalId,
        result: LocalId,
        step: usize,
        cause: Cause,
    },
    /// Copy of `operand` with every element whose index along `dim` is
    /// `>= valid` (the device's entry) set to `fill`: padding masked to a
    /// reduction's identity.
    Mask {
        operand: LocalId,
        result: LocalId,
        dim: usize,
        valid: PerDevice<i64>,
        fill: Scalar,
        step: usize,
    },
    /// The `size` elements along `dim` starting at the device's `start`
    /// (always within the block).
    SliceDim {
        operand: LocalId,
        result: LocalId,
        dim: usize,
        start: PerDevice<i64>,
        size: i64,
        step: usize,
    },
    /// Rebuild the result along `dim` element by element: entry `k` of the
    /// device's table says where result element `k` comes from. All other
    /// dimensions are copied (sources have the result's shape there).
    /// `fill` is a scalar value (or zero when `None`).
    Remap {
        sources: Vec<LocalId>,
        fill: Option<LocalId>,
        result: LocalId,
        dim: usize,
        table: PerDevice<Vec<RemapEntry>>,
        step: usize,
    },
    /// A loop over sub-programs (see [`crate::partition::program::regions`]).
    Loop(Box<LoopInstr>),
    /// One of several sub-programs, chosen by a replicated index.
    Branch(Box<BranchInstr>),
}

impl Instr {
    /// The values this instruction reads (for a loop or branch: its initial
    /// values or index, then every value its blocks read from around it).
    pub fn operands(&self) -> Vec<LocalId> {
        match self {
            Instr::Loop(l) => structured_operands(&l.inits, &[&l.cond, &l.body]),
            Instr::Branch(b) => {
                structured_operands(&[b.index], &b.branches.iter().collect::<Vec<_>>())
            }
            Instr::Op { operands, .. } => operands.clone(),
            Instr::Iota { .. } => Vec::new(),
            Instr::Collective { operand, .. }
            | Instr::Mask { operand, .. }
            | Instr::SliceDim { operand, .. } => vec![*operand],
            Instr::Remap { sources, fill, .. } => sources.iter().copied().chain(*fill).collect(),
        }
    }

    /// The values this instruction defines.
    pub fn results(&self) -> Vec<LocalId> {
        match self {
            Instr::Op { results, .. } => results.clone(),
            Instr::Loop(l) => l.results.clone(),
            Instr::Branch(b) => b.results.clone(),
            Instr::Iota { result, .. }
            | Instr::Collective { result, .. }
            | Instr::Mask { result, .. }
            | Instr::SliceDim { result, .. }
            | Instr::Remap { result, .. } => vec![*result],
        }
    }

    /// The global step this instruction implements.
    pub fn step(&self) -> usize {
        match self {
            Instr::Op { step, .. }
            | Instr::Iota { step, .. }
            | Instr::Collective { step, .. }
            | Instr::Mask { step, .. }
            | Instr::SliceDim { step, .. }
            | Instr::Remap { step, .. } => *step,
            Instr::Loop(l) => l.step,
            Instr::Branch(b) => b.step,
        }
    }
}

/// The SPMD program of one partitioned function.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceProgram {
    pub name: String,
    /// Device ids, sorted; [`PerDevice`] tables follow this order.
    pub devices: Vec<i64>,
    pub values: Vec<LocalValue>,
    pub inputs: Vec<ProgramIo>,
    pub outputs: Vec<ProgramIo>,
    pub instrs: Vec<Instr>,
}

impl DeviceProgram {
    pub fn num_devices(&self) -> usize {
        self.devices.len()
    }

    /// Position of `device` in [`DeviceProgram::devices`].
    pub fn position(&self, device: i64) -> Option<usize> {
        self.devices.iter().position(|&d| d == device)
    }

    /// Every collective with its cause, in program order (inside loops and
    /// branches too, each listed once).
    pub fn collectives(&self) -> impl Iterator<Item = (&Collective, &Cause)> {
        self.collectives_repeated()
            .into_iter()
            .map(|(c, k, _)| (c, k))
    }

    /// Every collective with its cause and how often it runs.
    pub fn collectives_repeated(&self) -> Vec<(&Collective, &Cause, Repeats)> {
        let mut out = Vec::new();
        walk_instrs(&self.instrs, Repeats::ONCE, &mut |i, at| {
            if let Instr::Collective {
                collective, cause, ..
            } = i
            {
                out.push((&**collective, cause, at));
            }
        });
        out
    }

    /// Whether some instruction sits in a loop of unknown trip count.
    pub fn has_unknown_trip_count(&self) -> bool {
        let mut unknown = false;
        walk_instrs(&self.instrs, Repeats::ONCE, &mut |i, _| {
            unknown |= matches!(i, Instr::Loop(l) if l.trip_count.is_none());
        });
        unknown
    }

    /// Bytes a device receives over the whole program, averaged over all
    /// devices (ring formulas; see [`collective_bytes`]); a collective in a
    /// counted loop counts once per iteration, one in a loop of unknown
    /// trip count once.
    pub fn total_bytes_per_device(&self) -> f64 {
        self.collectives_repeated()
            .into_iter()
            .map(|(c, _, at)| collective_bytes(c, self.num_devices()) * at.times)
            .fold(0.0, |a, b| a + b)
    }
}

/// Everything the partitioner produced for one module.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionedProgram {
    /// The entry function with explicit reshards and all-reduces.
    pub global: GlobalProgram,
    /// The collectives of each reshard / all-reduce step.
    pub lowering: Lowering,
    /// What every device runs.
    pub device: DeviceProgram,
}

impl PartitionedProgram {
    pub fn total_bytes_per_device(&self) -> f64 {
        self.device.total_bytes_per_device()
    }
}

impl fmt::Display for RemapEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RemapEntry::Source { source, index } => write!(f, "s{source}[{index}]"),
            RemapEntry::Fill => f.write_str("fill"),
        }
    }
}
