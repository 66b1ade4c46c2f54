//! The global program with explicit reshards (the result of
//! `explicit_reshards`): the entry function as a flat
//! list of steps over global values, each value with its final sharding.
//!
//! Every compute step is *compatible* (SPEC §6): its operands and results
//! shard every factor the same way, so each device can run it on its local
//! blocks. Data moves only in the two other kinds of step: a reshard (one
//! value to another sharding, later lowered to collectives) and an
//! all-reduce (a partial result summed, or max-ed, over mesh axes). Every
//! reshard and all-reduce records *why* it exists.
//!
//! This is a side structure rather than new IR op kinds: the IR has no
//! all-reduce op, and adding one would touch every exhaustive match over
//! `OpKind` in the workspace.

pub mod compat;
pub(crate) mod cse;
pub mod explicit_reshards;
pub mod hoist;
pub mod inline;
pub(crate) mod partial_ops;
pub mod trip_count;
pub(crate) mod whole_dims;

use crate::diag::SrcPos;
use crate::ir::{OpKind, ReduceKind, TensorType};
use crate::sharding::{AxisRef, Mesh, MeshDef, MeshRef, TensorSharding};

/// Index into [`GlobalProgram::values`].
pub type GValueId = usize;

/// A global (unsharded-shape) value and where its data lives.
#[derive(Debug, Clone, PartialEq)]
pub struct GValue {
    pub ty: TensorType,
    /// Closed, over a mesh of [`GlobalProgram::meshes`] (by name). Its
    /// `unreduced` axes make the value a partial result along them.
    pub sharding: TensorSharding,
}

/// What a step does.
#[derive(Debug, Clone, PartialEq)]
pub enum GStepKind {
    /// A StableHLO op, run on local blocks.
    Compute(OpKind),
    /// Move the operand's data to the result's sharding.
    Reshard,
    /// Reduce the partial operand over `axes` (the result is no longer
    /// unreduced along them).
    AllReduce {
        axes: Vec<AxisRef>,
        reduction: ReduceKind,
    },
    /// The same local blocks seen as another global value, with no data
    /// movement: an `sdy.manual_computation` operand as the body's
    /// argument, the body's result as the op's (see `partition::global::explicit_reshards::manual`).
    Relabel,
    /// `stablehlo.while`: operands are the initial loop-carried values and
    /// results the final ones, all in the loop's one sharding per carried
    /// value (the *group* sharding: Shardy's data-flow edge). `cond`'s one
    /// result is the replicated predicate; `body` yields the next values.
    Loop {
        cond: GBlock,
        body: GBlock,
        /// Iterations of a counted loop (constant bounds, as `fori_loop`
        /// and `scan` lower); `None` when it depends on data.
        trip_count: Option<i64>,
    },
    /// `stablehlo.case`: operand 0 is the replicated branch index; each
    /// branch yields the results in their group shardings. Branches read
    /// values from around the op directly.
    Branch { branches: Vec<GBlock> },
    /// The operand is partial along `axes`; the result (the operand's shape
    /// plus a last dimension of one entry per shard, sharded on `axes`)
    /// holds each device's partial value as its block of that dimension. No
    /// data moves: each device reshapes its block (see
    /// `partition::global::explicit_reshards::combine_partials`).
    StackPartials { axes: Vec<AxisRef> },
    /// The operand, not partial along `axes`, becomes a partial sum over
    /// them with no data moved (Shardy's `sdy.replicated_to_unreduced` /
    /// `sdy.sharded_to_unreduced`; see `partition::local::to_unreduced`): the
    /// result's dims are the operand's without the axes that ended them.
    ToUnreduced { axes: Vec<AxisRef> },
}

/// A region of a [`GStepKind::Loop`] / [`GStepKind::Branch`]: its
/// arguments, its own steps (indices into [`GlobalProgram::steps`], in
/// order; a nested region's steps are listed by its own block, not here)
/// and the values it yields. Region steps sit in `steps` before the step
/// that owns them, so the arena stays in definition order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GBlock {
    pub args: Vec<GValueId>,
    pub steps: Vec<usize>,
    pub results: Vec<GValueId>,
}

/// Where a step comes from and, for data movement, why it is needed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Cause {
    /// The source op (`stablehlo.dot_general at 5:10`), or the function
    /// result, that needs this step.
    pub op: String,
    /// Position of that op in the source text.
    pub pos: SrcPos,
    /// Why the data moves: which operand/factor conflict, partial sum or
    /// annotation. Empty for compute steps.
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GStep {
    pub kind: GStepKind,
    pub operands: Vec<GValueId>,
    pub results: Vec<GValueId>,
    pub cause: Cause,
}

/// Whether an argument's buffer may be reused for a result
/// (`jax.jit(..., donate_argnums=...)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Donation {
    #[default]
    None,
    /// `tf.aliasing_output = K`: result `K` is written into it.
    Output(usize),
    /// `jax.buffer_donor = true`: any result of its type may be.
    Any,
}

/// The entry function with explicit reshards and all-reduces.
#[derive(Debug, Clone, PartialEq)]
pub struct GlobalProgram {
    /// Name of the partitioned function.
    pub name: String,
    /// Every mesh a sharding refers to (inline meshes get a generated
    /// name); the first is the default mesh of unannotated values.
    pub meshes: Vec<MeshDef>,
    pub values: Vec<GValue>,
    pub args: Vec<GValueId>,
    pub results: Vec<GValueId>,
    /// Each argument's and result's `mhlo.memory_kind` (`"pinned_host"`,
    /// `"device"`), when the function names one.
    pub arg_memory: Vec<Option<String>>,
    pub result_memory: Vec<Option<String>>,
    /// Each argument's donation: the result whose buffer it becomes
    /// (`tf.aliasing_output = K`), or any result that fits
    /// (`jax.buffer_donor = true`).
    pub arg_donation: Vec<Donation>,
    pub steps: Vec<GStep>,
}

impl GlobalProgram {
    pub fn mesh(&self, name: &str) -> Option<&Mesh> {
        self.meshes.iter().find(|m| m.name == name).map(|m| &m.mesh)
    }

    /// The mesh a sharding of this program refers to.
    pub fn mesh_of<'s>(&'s self, s: &'s TensorSharding) -> Option<&'s Mesh> {
        match &s.mesh {
            MeshRef::Symbol(name) => self.mesh(name),
            MeshRef::Inline(m) => Some(m),
        }
    }

    pub fn value(&self, v: GValueId) -> &GValue {
        &self.values[v]
    }

    /// The sorted ids of the devices the program runs on (those of the
    /// default mesh; every mesh it uses has the same set).
    pub fn devices(&self) -> Vec<i64> {
        let mut ids = self
            .meshes
            .first()
            .map_or_else(|| vec![0], |m| m.mesh.device_list());
        ids.sort_unstable();
        ids
    }

    /// The blocks of a structured step (none for other steps).
    pub fn blocks_of(&self, step: usize) -> Vec<&GBlock> {
        match &self.steps[step].kind {
            GStepKind::Loop { cond, body, .. } => vec![cond, body],
            GStepKind::Branch { branches } => branches.iter().collect(),
            _ => Vec::new(),
        }
    }

    /// For every step, the structured step whose region lists it (`None`
    /// at the top level).
    pub fn owners(&self) -> Vec<Option<usize>> {
        let mut owner = vec![None; self.steps.len()];
        for i in 0..self.steps.len() {
            for b in self.blocks_of(i) {
                for &s in &b.steps {
                    owner[s] = Some(i);
                }
            }
        }
        owner
    }

    /// The top-level steps in order (those no region lists).
    pub fn top_level(&self) -> Vec<usize> {
        let owner = self.owners();
        (0..self.steps.len())
            .filter(|&i| owner[i].is_none())
            .collect()
    }

    /// Whether any step has regions.
    pub fn has_regions(&self) -> bool {
        self.steps
            .iter()
            .any(|s| matches!(s.kind, GStepKind::Loop { .. } | GStepKind::Branch { .. }))
    }

    /// For every value, the steps that use it (in program order; a value a
    /// region yields is used by the step that owns the region).
    pub fn uses(&self) -> Vec<Vec<usize>> {
        let mut uses = vec![Vec::new(); self.values.len()];
        for (i, s) in self.steps.iter().enumerate() {
            // What a region yields is read by the step that owns it.
            let yielded = self.blocks_of(i).into_iter().flat_map(|b| b.results.iter());
            for &v in s.operands.iter().chain(yielded) {
                if !uses[v].contains(&i) {
                    uses[v].push(i);
                }
            }
        }
        for u in &mut uses {
            u.sort_unstable();
        }
        uses
    }
}

/// `%argN` for arguments, `%N` for everything else in definition order.
pub fn value_names(prog: &GlobalProgram) -> Vec<String> {
    let mut names = vec![String::new(); prog.values.len()];
    for (i, &a) in prog.args.iter().enumerate() {
        names[a] = format!("%arg{i}");
    }
    let mut next = 0;
    for s in &prog.steps {
        let args = match &s.kind {
            GStepKind::Loop { cond, body, .. } => [&cond.args[..], &body.args[..]].concat(),
            _ => Vec::new(),
        };
        for (k, &a) in args.iter().enumerate() {
            if names[a].is_empty() {
                names[a] = format!("%iterArg{next}_{k}");
            }
        }
        for &r in &s.results {
            if names[r].is_empty() {
                names[r] = format!("%{next}");
                next += 1;
            }
        }
    }
    for n in names.iter_mut().filter(|n| n.is_empty()) {
        *n = format!("%{next}");
        next += 1;
    }
    names
}
