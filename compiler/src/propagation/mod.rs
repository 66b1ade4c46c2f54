//! Sharding propagation (SPEC §5), as OpenXLA Shardy does it: starting
//! from the tensors the user annotated, infer the sharding of every tensor.
//!
//! Layout, innermost first:
//! - `factor_basic` / `factor_aggressive`: the per-op strategies on factor
//!   shardings (`rules::ShardingProjection`);
//! - `driver`: the fixed point over a function (Shardy's worklist order),
//!   with `direction` choosing per op and factor which way shardings flow;
//! - `user_priority`: the `pN` rounds around op-priority propagation;
//! - `import` / `export`: the passes before and after (calls as named
//!   computations and back, constant
//!   splitting, sharding constraints and groups; merging, reshards,
//!   argument/result fixes, closing);
//! - `provenance`: where each axis of each sharding came from;
//! - this file: the entry point and the pipeline.
//!
//! Where Shardy's code and the design docs disagree, Shardy's code wins
//! (JAX 0.10.2's dumps are the referee, see `tests/propagation_jax.rs`).

pub mod axes;
pub mod blocks;
pub mod compact;
pub mod data_flow;
pub mod direction;
pub mod driver;
pub mod explain;
pub mod export;
pub mod factor_aggressive;
pub mod factor_basic;
pub mod graph;
pub mod import;
pub mod manual;
pub mod provenance;
pub mod state;
pub mod user_priority;
pub mod values;
pub mod worklist;

use std::fmt;

use crate::diag::{DiagKind, Diagnostic};
use crate::ir::ops::sharding_constraint::ShardingConstraint;
use crate::ir::validate_module_shardings;
use crate::ir::{Module, OpKind};
use crate::sharding::ValidSharding;

pub use direction::{Direction, Policy};
pub use driver::FactorStrategy;
pub use provenance::{AxisOrigin, FuncProvenance, Origin, Slot};

/// Which propagation to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// Basic propagation alone (`sdy-basic-propagate`).
    Basic,
    /// Aggressive propagation alone (`sdy-aggressive-propagate`).
    Aggressive,
    /// The three op-priority schedules (`sdy-op-priority-propagate`).
    OpPriority,
    /// User priorities around op priorities (`sdy-user-priority-propagate`).
    UserPriority,
    /// The whole pipeline with the import and export passes
    /// (`sdy-propagation-pipeline`, as XLA runs it for JAX).
    #[default]
    Full,
}

impl Strategy {
    pub const ALL: [Strategy; 5] = [
        Strategy::Basic,
        Strategy::Aggressive,
        Strategy::OpPriority,
        Strategy::UserPriority,
        Strategy::Full,
    ];

    /// The command-line spelling.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Basic => "basic",
            Strategy::Aggressive => "aggressive",
            Strategy::OpPriority => "op-priority",
            Strategy::UserPriority => "user-priority",
            Strategy::Full => "full",
        }
    }

    pub fn from_name(s: &str) -> Option<Strategy> {
        Strategy::ALL.iter().copied().find(|x| x.name() == s)
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PropagationOptions {
    pub strategy: Strategy,
    /// Close every sharding at the end. The single-strategy runs can leave
    /// shardings open (as Shardy's single passes do) by turning this off;
    /// `Full` always closes.
    pub close: bool,
    /// After closing, give every value left without a sharding an explicit
    /// replicated one, so that the partitioner replicates it rather than
    /// choosing a sharding for it (what it does for unannotated ops of
    /// text propagated elsewhere). Off, the output is what Shardy prints:
    /// a replicated value carries no sharding (`meshrun propagate`).
    pub explicit_replication: bool,
    /// Shardy's conservative propagation (`conservative-propagation=true`):
    /// no sharding moves through a dimension that a reshape splits or
    /// merges (no sub-axes are propagated), a sliced or a padded dimension,
    /// or a concatenated one.
    pub conservative: bool,
}

impl Default for PropagationOptions {
    fn default() -> Self {
        PropagationOptions {
            strategy: Strategy::Full,
            close: true,
            explicit_replication: true,
            conservative: false,
        }
    }
}

impl PropagationOptions {
    pub fn with_strategy(strategy: Strategy) -> Self {
        PropagationOptions {
            strategy,
            ..Self::default()
        }
    }
}

/// A propagated module and the provenance of its shardings.
#[derive(Debug, Clone)]
pub struct Propagated {
    pub module: Module,
    /// One per function of `module`, in order.
    pub provenance: Vec<FuncProvenance>,
    /// The names of the propagation stages provenance entries refer to.
    pub stages: Vec<String>,
}

/// Propagate the shardings of `module` (see [`PropagationOptions`]).
pub fn propagate(module: &Module, opts: &PropagationOptions) -> Result<Module, Diagnostic> {
    Ok(propagate_with_provenance(module, opts)?.module)
}

/// [`propagate`], also returning where every axis came from.
pub fn propagate_with_provenance(
    module: &Module,
    opts: &PropagationOptions,
) -> Result<Propagated, Diagnostic> {
    manual::with_bodies(module, opts, propagate_around_manual)
}

/// The pipeline over every function, manual computations' bodies left as
/// written (see `manual`).
fn propagate_around_manual(
    module: &Module,
    opts: &PropagationOptions,
) -> Result<Propagated, Diagnostic> {
    // Constraints first, for messages that name the constrained value;
    // then well-formed IR, which the passes below rely on (ids in range,
    // values defined before use, types that fit the ops).
    check_constraints(module)?;
    crate::ir::verify_module(module)?;
    validate_module_shardings(module)?;
    let mut module = module.clone();
    let full = opts.strategy == Strategy::Full;
    // Where the import passes got shardings from, per function.
    let seeds = if full {
        import_passes(&mut module)?
    } else {
        vec![Vec::new(); module.funcs.len()]
    };
    let mut stages = Vec::new();
    let mut provenance = Vec::with_capacity(module.funcs.len());
    let defs = module.meshes.clone();
    let meshes = state::Meshes { defs: &defs };
    let entry = module.entry().map(|f| f.name.clone());
    for (f, seeds) in module.funcs.iter_mut().zip(&seeds) {
        let mut seeds = seeds.clone();
        // Every strategy starts by making each sharding group's members
        // agree (Shardy's `syncGroupMemberShardings`).
        for (v, from) in import::sync_groups(f)?.seeded {
            seeds.push((
                v,
                Origin::Group {
                    from: Slot::Value(from),
                },
            ));
        }
        if !compact::is_compact(f) {
            let (compacted, map) = compact::compact(f)?;
            *f = compacted;
            seeds = renumber_seeds(seeds, &map);
        }
        let rule_options = crate::rules::RuleOptions {
            conservative: opts.conservative,
        };
        let graph = graph::FuncGraph::build(f, rule_options)?;
        let mut st = state::FuncState::load_with(f, &seeds);
        Runner {
            f,
            graph: &graph,
            meshes,
            conservative: opts.conservative,
            entry: Some(f.name.as_str()) == entry.as_deref(),
            stages: &mut stages,
            log: driver::VisitLog::new(f, &graph),
        }
        .strategy(&mut st, opts.strategy)?;
        st.store(f);
        provenance.push(st.provenance);
    }
    if full {
        export::export_calls(&mut module, &mut provenance);
        for f in &mut module.funcs {
            export::merge_constants(f);
            export::remove_sharding_groups(f);
            export::constraints_to_reshards(f);
            export::remove_unused_reshards(f);
        }
        export::fix_io_shardings(&mut module);
    }
    if full || opts.close {
        for f in &mut module.funcs {
            export::close_shardings(f);
            if full {
                export::insert_all_reduces(f);
            }
        }
        if opts.explicit_replication {
            export::make_module_explicit(&mut module);
        }
    }
    for (f, prov) in module.funcs.iter_mut().zip(&mut provenance) {
        if !compact::is_compact(f) {
            let (compacted, map) = compact::compact(f)?;
            *f = compacted;
            prov.renumber(&map, f.values.len());
        }
        // Export only removes axes (closing, shrinking arguments): forget
        // those, and account for shardings added at export.
        for i in 0..f.values.len() {
            let v = crate::ir::Value(i as u32);
            prov.record(Slot::Value(v), values::sharding_of(f, v), |_, _| {
                Origin::Annotated
            });
        }
        for i in 0..f.returns.len() {
            let s = f.result_attrs.get(i).and_then(|a| a.sharding.as_ref());
            prov.record(Slot::Result(i), s, |_, _| Origin::Annotated);
        }
    }
    Ok(Propagated {
        module,
        provenance,
        stages,
    })
}

/// The import passes of the full pipeline; returns, per function, the
/// values they gave a sharding and where it came from.
fn import_passes(module: &mut Module) -> Result<Vec<Vec<(crate::ir::Value, Origin)>>, Diagnostic> {
    import::import_calls(module)?;
    import::lift_inline_meshes(module);
    import::remove_size_one_axes(module);
    let mut seeds = Vec::with_capacity(module.funcs.len());
    for f in &mut module.funcs {
        import::fold_selects(f);
        import::split_constants(f);
        let mut func_seeds = Vec::new();
        for (v, from) in import::apply_constraints(f) {
            func_seeds.push((
                v,
                Origin::Constraint {
                    from: Slot::Value(from),
                },
            ));
        }
        seeds.push(func_seeds);
    }
    Ok(seeds)
}

/// `seeds` in a compacted function's numbering.
fn renumber_seeds(
    seeds: Vec<(crate::ir::Value, Origin)>,
    map: &[Option<crate::ir::Value>],
) -> Vec<(crate::ir::Value, Origin)> {
    let new = |v: crate::ir::Value| map.get(v.index()).copied().flatten();
    seeds
        .into_iter()
        .filter_map(|(v, origin)| {
            let origin = match origin {
                Origin::Constraint {
                    from: Slot::Value(f),
                } => Origin::Constraint {
                    from: Slot::Value(new(f)?),
                },
                Origin::Group {
                    from: Slot::Value(f),
                } => Origin::Group {
                    from: Slot::Value(new(f)?),
                },
                other => other,
            };
            Some((new(v)?, origin))
        })
        .collect()
}

/// Runs the propagation passes of one function, labelling each for
/// provenance.
struct Runner<'a> {
    f: &'a crate::ir::Function,
    graph: &'a graph::FuncGraph,
    meshes: state::Meshes<'a>,
    conservative: bool,
    /// Whether `f` is the module's entry function (see `driver::Run`).
    entry: bool,
    stages: &'a mut Vec<String>,
    log: driver::VisitLog,
}

impl Runner<'_> {
    fn run(
        &mut self,
        st: &mut state::FuncState,
        factor: FactorStrategy,
        policy: Policy,
        label: String,
    ) -> Result<(), Diagnostic> {
        let stage = self.stages.len();
        self.stages.push(label);
        driver::Run {
            f: self.f,
            graph: self.graph,
            meshes: self.meshes,
            strategy: factor,
            policy,
            conservative: self.conservative,
            stage,
            sync_results: self.entry,
        }
        .propagate(st, &mut self.log)
    }

    /// The three op-priority schedules, each an aggressive propagation.
    fn op_priority(&mut self, st: &mut state::FuncState, prefix: &str) -> Result<(), Diagnostic> {
        for p in 0..direction::OP_PRIORITY_SCHEDULES {
            let label = format!("{prefix}op-priority schedule {p}");
            self.run(st, FactorStrategy::Aggressive, Policy::OpPriority(p), label)?;
        }
        Ok(())
    }

    fn strategy(
        &mut self,
        st: &mut state::FuncState,
        strategy: Strategy,
    ) -> Result<(), Diagnostic> {
        match strategy {
            Strategy::Basic => self.run(st, FactorStrategy::Basic, Policy::Any, "basic".into()),
            Strategy::Aggressive => self.run(
                st,
                FactorStrategy::Aggressive,
                Policy::Any,
                "aggressive".into(),
            ),
            Strategy::OpPriority => self.op_priority(st, ""),
            Strategy::UserPriority | Strategy::Full => {
                let held = user_priority::hold_back(st, &self.meshes);
                self.op_priority(st, if held.is_empty() { "" } else { "p0, " })?;
                for (p, refs) in &held {
                    for (slot, _) in refs {
                        self.log.changed(*slot);
                    }
                    user_priority::restore(st, refs, *p);
                    self.op_priority(st, &format!("p{p}, "))?;
                }
                Ok(())
            }
        }
    }
}

/// Sharding constraints must name known meshes and axes and fit their
/// tensor; a bad one is reported with the constraint and the value it
/// constrains.
fn check_constraints(module: &Module) -> Result<(), Diagnostic> {
    for f in &module.funcs {
        for id in f.all_ops() {
            let op = f.op(id);
            let OpKind::ShardingConstraint(ShardingConstraint { sharding }) = &op.kind else {
                continue;
            };
            let Some(input_ty) = op.operands.first().and_then(|v| f.values.get(v.index())) else {
                continue;
            };
            let rank = input_ty.ty.rank();
            let value = values::describe_value(f, op.operands[0]);
            let Some(mesh) = module.resolve_mesh(&sharding.mesh) else {
                return Err(Diagnostic::new(
                    DiagKind::Sharding,
                    op.pos,
                    format!(
                        "sdy.sharding_constraint on {value} refers to mesh {}, which the module does not define",
                        sharding.mesh
                    ),
                ));
            };
            if let Some(axis) = sharding
                .dim_axes()
                .chain(&sharding.replicated)
                .chain(&sharding.unreduced)
                .find(|a| mesh.axis(&a.name).is_none())
            {
                return Err(Diagnostic::new(
                    DiagKind::Sharding,
                    op.pos,
                    format!(
                        "sdy.sharding_constraint on {value} uses axis \"{}\", which mesh {} does not have",
                        axis.name, sharding.mesh
                    ),
                ));
            }
            if let Err(e) = ValidSharding::new(sharding, mesh, rank) {
                return Err(Diagnostic::new(
                    DiagKind::Sharding,
                    op.pos,
                    format!("sdy.sharding_constraint on {value} cannot be satisfied: {e}"),
                ));
            }
        }
    }
    Ok(())
}
