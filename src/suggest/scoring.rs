//! Scoring assignments of argument shardings: what `meshrun run` would do
//! with the annotated module (Shardy's propagation, then the partitioner),
//! priced by `meshrun cost`'s model, plus the memory a device needs.
//!
//! Scores are cached by assignment, so the search pays once for an
//! assignment however many moves reach it. A *partial* assignment (some
//! arguments left open) is propagated once: propagation fills in the open
//! arguments, and the same propagated module is partitioned and scored as
//! the completed assignment. (The module the user gets has every argument
//! annotated; the suggestion and its rivals are scored again that way
//! before anything is reported.) Batches of uncached assignments are
//! scored on all cores.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::Mutex;

use meshrun_compiler::partition::{partition, PartitionedProgram};
use meshrun_compiler::propagation::{propagate, PropagationOptions};
use meshrun_compiler::sharding::TensorSharding;
use meshrun_compiler::{Diagnostic, Module};

use crate::cost::memory::{memory_per_device, MemoryEstimate};
use crate::cost::{cost_report, CostError, CostReport, Topology};
use crate::suggest::candidates::normalize;

/// One sharding per argument of the entry function.
pub type Assignment = Vec<TensorSharding>;

/// Some arguments annotated, the others (`None`) left to propagation.
pub type Partial = Vec<Option<TensorSharding>>;

/// What the search compares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score {
    /// Predicted step time (compute + communication, no overlap), seconds.
    pub step_s: f64,
    /// Arguments + peak of live values, bytes per device.
    pub memory_bytes: f64,
    /// Communicating collectives in the step.
    pub collectives: usize,
    /// Within the memory cap (always true without one).
    pub fits: bool,
}

/// Step times are compared in buckets this wide (relative): the model
/// is not more precise than that, and a sharding that is as fast with
/// fewer collectives or less memory is the better one.
const TIME_BUCKET: f64 = 0.002;

impl Score {
    /// The step time's bucket: equal buckets count as equal time.
    fn time_bucket(&self) -> i64 {
        if self.step_s > 0.0 && self.step_s.is_finite() {
            (self.step_s.ln() / TIME_BUCKET.ln_1p()).round() as i64
        } else if self.step_s > 0.0 {
            i64::MAX
        } else {
            i64::MIN
        }
    }

    /// True when the step times fall in the same bucket.
    pub fn same_time(&self, other: &Score) -> bool {
        self.time_bucket() == other.time_bucket()
    }

    /// Better first. Assignments that fit the cap come before those that
    /// do not. Among those that fit: the faster; at equal time (within
    /// [`TIME_BUCKET`]) the one with fewer collectives (all-reduce =
    /// reduce-scatter + all-gather in the α-β model; the single
    /// collective is the simpler program), then the one that needs less
    /// memory (an argument sharded for free beats one replicated), then
    /// the faster. Among those that do not fit: the smaller (closer to
    /// fitting), then the faster.
    pub fn order(&self, other: &Score) -> Ordering {
        match (self.fits, other.fits) {
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (true, true) => self
                .time_bucket()
                .cmp(&other.time_bucket())
                .then(self.collectives.cmp(&other.collectives))
                .then(self.memory_bytes.total_cmp(&other.memory_bytes))
                .then(self.step_s.total_cmp(&other.step_s)),
            (false, false) => self
                .memory_bytes
                .total_cmp(&other.memory_bytes)
                .then(self.step_s.total_cmp(&other.step_s)),
        }
    }
}

/// The full result for one assignment: the partitioned program and its
/// costs (kept for the few assignments that are reported).
#[derive(Debug, Clone)]
pub struct Evaluation {
    pub assignment: Assignment,
    pub program: PartitionedProgram,
    pub cost: CostReport,
    pub memory: MemoryEstimate,
    pub score: Score,
}

/// Why an assignment could not be scored.
#[derive(Debug, thiserror::Error)]
pub enum ScoreError {
    #[error("{0}")]
    Compile(Diagnostic),
    #[error("{0}")]
    Cost(#[from] CostError),
    #[error("propagation gave an argument no sharding")]
    Incomplete,
}

/// The fixed inputs of a scoring: safe to share between threads.
struct Setup<'a> {
    module: &'a Module,
    entry: usize,
    topology: &'a Topology,
    memory_cap: Option<f64>,
}

impl Setup<'_> {
    fn annotated(&self, shardings: &[Option<TensorSharding>]) -> Module {
        let mut m = self.module.clone();
        if let Some(f) = m.funcs.get_mut(self.entry) {
            for (attr, s) in f.arg_attrs.iter_mut().zip(shardings) {
                attr.sharding = s.clone();
            }
        }
        m
    }

    /// The argument shardings of a propagated module.
    fn read_back(&self, propagated: &Module) -> Result<Assignment, ScoreError> {
        // Propagation keeps calls and appends the callees it exports, so
        // the entry function is found by name, not by its input index.
        let f = propagated.entry().ok_or(ScoreError::Incomplete)?;
        let mesh = propagated.meshes.first().ok_or(ScoreError::Incomplete)?;
        Ok(f.arg_attrs
            .iter()
            .zip(&f.args)
            .map(|(attr, &v)| match &attr.sharding {
                Some(s) => normalize(s),
                None => TensorSharding::replicated(mesh.name.clone(), f.ty(v).rank()),
            })
            .collect())
    }

    fn finish(
        &self,
        assignment: Assignment,
        propagated: &Module,
    ) -> Result<Evaluation, ScoreError> {
        let program = partition(propagated).map_err(ScoreError::Compile)?;
        let cost = cost_report(&program, self.topology, None)?;
        let memory = memory_per_device(&program.device);
        let memory_bytes = memory.total_bytes();
        let score = Score {
            step_s: cost.step_seconds,
            memory_bytes,
            collectives: cost.collectives.len(),
            fits: self.memory_cap.is_none_or(|cap| memory_bytes <= cap),
        };
        Ok(Evaluation {
            assignment,
            program,
            cost,
            memory,
            score,
        })
    }

    fn evaluate(&self, a: &Assignment) -> Result<Evaluation, ScoreError> {
        let shardings: Partial = a.iter().cloned().map(Some).collect();
        let propagated = propagate(&self.annotated(&shardings), &PropagationOptions::default())
            .map_err(ScoreError::Compile)?;
        self.finish(a.clone(), &propagated)
    }

    /// Propagate `p` and read back the assignment it completes to.
    fn complete(&self, p: &Partial) -> Result<(Assignment, Module), ScoreError> {
        let propagated = propagate(&self.annotated(p), &PropagationOptions::default())
            .map_err(ScoreError::Compile)?;
        Ok((self.read_back(&propagated)?, propagated))
    }
}

/// Run `work` on every item, on all cores; results in item order.
fn parallel<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len());
    if threads <= 1 {
        return items.iter().map(work).collect();
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, AtomicOrdering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = work(item);
                if let Ok(mut all) = results.lock() {
                    all[i] = Some(r);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.expect("every item was worked on"))
        .collect()
}

/// Scores assignments of one module's entry arguments.
pub struct Evaluator<'a> {
    setup: Setup<'a>,
    scores: HashMap<Assignment, Option<Score>>,
    completions: HashMap<Partial, Option<Assignment>>,
    /// Assignments partitioned and priced (cache misses).
    pub evaluated: usize,
    /// Of those, how many failed to propagate or partition.
    pub failed: usize,
    /// Partial assignments propagated.
    pub completed: usize,
}

impl<'a> Evaluator<'a> {
    pub fn new(
        module: &'a Module,
        entry: usize,
        topology: &'a Topology,
        memory_cap: Option<f64>,
    ) -> Evaluator<'a> {
        Evaluator {
            setup: Setup {
                module,
                entry,
                topology,
                memory_cap,
            },
            scores: HashMap::new(),
            completions: HashMap::new(),
            evaluated: 0,
            failed: 0,
            completed: 0,
        }
    }

    pub fn memory_cap(&self) -> Option<f64> {
        self.setup.memory_cap
    }

    /// The score of every assignment (`None`: it does not compile).
    pub fn score_all(&mut self, items: &[Assignment]) -> Vec<Option<Score>> {
        let mut todo: Vec<Assignment> = Vec::new();
        for a in items {
            if !self.scores.contains_key(a) && !todo.contains(a) {
                todo.push(a.clone());
            }
        }
        let setup = &self.setup;
        let done = parallel(&todo, |a| setup.evaluate(a).map(|e| e.score).ok());
        for (a, s) in todo.into_iter().zip(done) {
            self.record(a, s);
        }
        items
            .iter()
            .map(|a| self.scores.get(a).copied().flatten())
            .collect()
    }

    pub fn score(&mut self, a: &Assignment) -> Option<Score> {
        self.score_all(std::slice::from_ref(a))[0]
    }

    /// Complete every partial assignment by propagation and score it.
    pub fn complete_all(&mut self, items: &[Partial]) -> Vec<Option<(Assignment, Score)>> {
        let mut todo: Vec<Partial> = Vec::new();
        for p in items {
            if !self.completions.contains_key(p) && !todo.contains(p) {
                todo.push(p.clone());
            }
        }
        let setup = &self.setup;
        let scores = &self.scores;
        let done = parallel(&todo, |p| {
            let (a, propagated) = setup.complete(p).ok()?;
            let score = match scores.get(&a) {
                Some(&s) => s,
                None => Some(setup.finish(a.clone(), &propagated).ok()?.score),
            };
            Some((a, score))
        });
        for (p, r) in todo.into_iter().zip(done) {
            self.completed += 1;
            let a = match r {
                Some((a, s)) => {
                    if !self.scores.contains_key(&a) {
                        self.record(a.clone(), s);
                    }
                    Some(a)
                }
                None => None,
            };
            self.completions.insert(p, a);
        }
        items
            .iter()
            .map(|p| {
                let a = self.completions.get(p).cloned().flatten()?;
                let s = self.scores.get(&a).copied().flatten()?;
                Some((a, s))
            })
            .collect()
    }

    fn record(&mut self, a: Assignment, s: Option<Score>) {
        self.evaluated += 1;
        if s.is_none() {
            self.failed += 1;
        }
        self.scores.insert(a, s);
    }

    /// Propagate, partition, cost and measure `a` with every argument
    /// annotated (not cached: for the few assignments reported in full).
    pub fn evaluate(&self, a: &Assignment) -> Result<Evaluation, ScoreError> {
        self.setup.evaluate(a)
    }
}
