//! `meshrun suggest`: which sharding should I use?
//!
//! Chooses a sharding for every argument of the entry function that
//! minimizes the predicted step time (compute + communication, as `meshrun
//! cost` computes it) within a per-device memory cap, and says why.
//!
//! - [`candidates`]: the shardings one argument may take;
//! - [`scoring`]: one assignment propagated, partitioned, priced and
//!   measured (memory from the device program's liveness,
//!   [`crate::cost::memory`]); scores cached;
//! - [`search`]: a beam over annotation sets completed by propagation,
//!   then single-argument moves;
//! - [`explain`]: one line per argument on why its sharding won;
//! - [`output`]: the report for people, the JSON for tools, the annotated
//!   module for `-o`;
//! - this file: the whole job on a loaded module.

pub mod candidates;
pub mod explain;
pub mod mesh_arg;
pub mod output;
pub mod scoring;
pub mod search;

pub use mesh_arg::parse_mesh;

use std::time::Instant;

use meshrun_compiler::ir::validate_module_shardings;
use meshrun_compiler::sharding::{Mesh, MeshDef, TensorSharding};
use meshrun_compiler::text::value_names;
use meshrun_compiler::Module;

use crate::cost::render::human_bytes;
use crate::cost::Topology;
use crate::suggest::candidates::normalize;
use crate::suggest::explain::{explain_choice, ArgReason};
use crate::suggest::scoring::{Assignment, Evaluation, Evaluator, Score};
use crate::suggest::search::{search, SearchOptions, SearchSpace};

/// What to search for.
#[derive(Debug, Clone)]
pub struct SuggestOptions {
    /// Use this mesh instead of the module's (required when it has none).
    pub mesh: Option<Mesh>,
    pub topology: Topology,
    /// Bytes per device the arguments and live values may take.
    pub memory_per_device: Option<f64>,
    /// Keep the arguments the user annotated as they are.
    pub keep_given: bool,
    /// How many alternatives to report.
    pub top: usize,
    pub search: SearchOptions,
}

/// Why no suggestion can be made.
#[derive(Debug, thiserror::Error)]
pub enum SuggestError {
    #[error("the module has no function")]
    NoFunction,
    #[error("the module declares no mesh: give one with --mesh \"data=4,model=2\"")]
    NoMesh,
    #[error("--mesh: the module's shardings do not fit the new mesh: {0}")]
    MeshMismatch(String),
    #[error("the current shardings do not compile: {0}")]
    Baseline(String),
    #[error(
        "no assignment fits {} per device; the smallest found needs {}",
        human_bytes(*cap),
        human_bytes(*best)
    )]
    NothingFits { cap: f64, best: f64 },
    #[error("no candidate sharding compiled")]
    NothingCompiled,
}

/// One argument of the entry function.
#[derive(Debug, Clone)]
pub struct ArgInfo {
    pub index: usize,
    /// `%arg0`, as `meshrun partition` prints it.
    pub name: String,
    pub shape: Vec<i64>,
    /// Kept as the user wrote it (`--keep-given`).
    pub fixed: bool,
}

/// An alternative to the suggestion.
#[derive(Debug, Clone)]
pub struct Alternative {
    pub assignment: Assignment,
    pub score: Score,
}

/// Everything `meshrun suggest` reports.
#[derive(Debug, Clone)]
pub struct Suggestion {
    /// The module as searched (mesh replaced or added by `--mesh`).
    pub module: Module,
    pub mesh: MeshDef,
    pub args: Vec<ArgInfo>,
    pub chosen: Evaluation,
    /// The user's shardings, or replicated where there are none.
    pub baseline: Evaluation,
    /// True when the module had no argument sharding (the baseline is
    /// fully replicated).
    pub baseline_replicated: bool,
    pub alternatives: Vec<Alternative>,
    pub reasons: Vec<ArgReason>,
    pub memory_cap: Option<f64>,
    /// Distinct assignments propagated and partitioned.
    pub evaluated: usize,
    /// Of those, how many did not compile.
    pub failed: usize,
    /// Partial assignments completed by propagation.
    pub completed: usize,
    /// Rounds of group moves and of single-argument moves.
    pub rounds: usize,
    pub polish_rounds: usize,
    pub seconds: f64,
}

impl Suggestion {
    /// The module annotated with the suggested shardings: `meshrun run`
    /// executes it as is.
    pub fn annotated_module(&self) -> Module {
        let mut m = self.module.clone();
        if let Some(f) = entry_index(&m).and_then(|i| m.funcs.get_mut(i)) {
            for (attr, s) in f.arg_attrs.iter_mut().zip(&self.chosen.assignment) {
                attr.sharding = Some(s.clone());
            }
        }
        m
    }
}

fn entry_index(m: &Module) -> Option<usize> {
    let entry = m.entry()?;
    m.funcs.iter().position(|f| std::ptr::eq(f, entry))
}

/// The module with `mesh` as its mesh: added when it has none; when its
/// first mesh differs, replaced, and the entry's argument shardings (made
/// for the old mesh) dropped.
fn with_mesh(mut module: Module, mesh: Option<&Mesh>) -> Result<Module, SuggestError> {
    let Some(mesh) = mesh else {
        return if module.meshes.is_empty() {
            Err(SuggestError::NoMesh)
        } else {
            Ok(module)
        };
    };
    match module.meshes.first_mut() {
        None => module.meshes.push(MeshDef {
            name: "mesh".into(),
            mesh: mesh.clone(),
            attrs: None,
            pos: meshrun_compiler::SrcPos::UNKNOWN,
        }),
        Some(def) if def.mesh == *mesh => return Ok(module),
        Some(def) => {
            def.mesh = mesh.clone();
            def.attrs = None;
            let i = entry_index(&module).ok_or(SuggestError::NoFunction)?;
            for a in &mut module.funcs[i].arg_attrs {
                a.sharding = None;
            }
        }
    }
    validate_module_shardings(&module).map_err(|d| SuggestError::MeshMismatch(d.to_string()))?;
    Ok(module)
}

/// Find the best sharding of `module`'s entry arguments.
pub fn suggest(module: &Module, opts: &SuggestOptions) -> Result<Suggestion, SuggestError> {
    let start = Instant::now();
    let module = with_mesh(module.clone(), opts.mesh.as_ref())?;
    let entry = entry_index(&module).ok_or(SuggestError::NoFunction)?;
    let mesh = module.meshes.first().cloned().ok_or(SuggestError::NoMesh)?;
    let f = &module.funcs[entry];
    let names = value_names(f);
    let given: Vec<Option<TensorSharding>> = f
        .arg_attrs
        .iter()
        .map(|a| a.sharding.as_ref().map(normalize))
        .collect();
    let baseline_replicated = given.iter().all(Option::is_none);
    let args: Vec<ArgInfo> = f
        .args
        .iter()
        .enumerate()
        .map(|(i, &v)| ArgInfo {
            index: i,
            name: names
                .get(v.index())
                .cloned()
                .flatten()
                .unwrap_or_else(|| format!("%arg{i}")),
            shape: f.ty(v).shape.clone(),
            fixed: opts.keep_given && given[i].is_some(),
        })
        .collect();
    let baseline: Assignment = args
        .iter()
        .map(|a| {
            given[a.index]
                .clone()
                .unwrap_or_else(|| TensorSharding::replicated(mesh.name.clone(), a.shape.len()))
        })
        .collect();
    let space = SearchSpace {
        mesh: mesh.mesh.clone(),
        types: f.args.iter().map(|&v| f.ty(v).clone()).collect(),
        mesh_name: mesh.name.clone(),
        fixed: args
            .iter()
            .map(|a| a.fixed.then(|| baseline[a.index].clone()))
            .collect(),
    };
    let replicated: Assignment = args
        .iter()
        .map(|a| {
            if a.fixed {
                baseline[a.index].clone()
            } else {
                TensorSharding::replicated(mesh.name.clone(), a.shape.len())
            }
        })
        .collect();

    let mut ev = Evaluator::new(&module, entry, &opts.topology, opts.memory_per_device);
    let baseline_eval = ev
        .evaluate(&baseline)
        .map_err(|e| SuggestError::Baseline(e.to_string()))?;
    let outcome = search(&mut ev, &space, &[baseline, replicated], &opts.search);

    // The best few with distinct scores, scored again with every argument
    // annotated (the search scored some through partial propagation).
    let mut finalists: Vec<Evaluation> = Vec::new();
    let mut kept: Vec<Score> = Vec::new();
    for r in &outcome.ranked {
        if finalists.len() > opts.top {
            break;
        }
        if kept.iter().any(|s| s.order(&r.score).is_eq()) {
            continue;
        }
        kept.push(r.score);
        if let Ok(e) = ev.evaluate(&r.assignment) {
            finalists.push(e);
        }
    }
    finalists.sort_by(|a, b| a.score.order(&b.score));
    let mut finalists = finalists.into_iter();
    let chosen = finalists.next().ok_or(SuggestError::NothingCompiled)?;
    if !chosen.score.fits {
        return Err(SuggestError::NothingFits {
            cap: opts.memory_per_device.unwrap_or(f64::INFINITY),
            best: chosen.score.memory_bytes,
        });
    }
    let alternatives: Vec<Alternative> = finalists
        .map(|e| Alternative {
            assignment: e.assignment,
            score: e.score,
        })
        .collect();
    let reasons = explain_choice(&mut ev, &space, &chosen, &args);
    Ok(Suggestion {
        mesh,
        args,
        baseline: baseline_eval,
        baseline_replicated,
        alternatives,
        reasons,
        memory_cap: opts.memory_per_device,
        evaluated: ev.evaluated,
        failed: ev.failed,
        completed: ev.completed,
        rounds: outcome.rounds,
        polish_rounds: outcome.polish_rounds,
        seconds: start.elapsed().as_secs_f64(),
        chosen,
        module,
    })
}
