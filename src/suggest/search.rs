//! The search: a beam over *annotation sets* completed by propagation,
//! then single-argument moves to polish; every assignment scored by the
//! partitioner and the cost model (`scoring`).
//!
//! **Annotation sets.** People shard a program by annotating a few
//! arguments and letting propagation do the rest: the batch of `x` on
//! `data`, the columns of `w1` and `w3` on `model`, and propagation shards
//! the activations by batch, `w2` and `w4` by rows, and the labels to
//! match the predictions. The search works the same way. A node is a set
//! of annotations (the other free arguments left open); its score is that
//! of the assignment propagation completes it to. A *decision* adds to the
//! set or changes it: one move (`candidates`: an axis onto a dimension, or
//! off) of one argument, or of a *group* of arguments of one type at once
//! (the layers' weights, their biases) or of a periodic subset of it
//! (every other weight: Megatron's columns and rows), so that one decision
//! can shard every weight for memory. The root is the user's kept
//! annotations alone; each round expands the best `beam` nodes not yet
//! expanded by every decision and scores the children; it stops when the
//! beam no longer changes, or after `max_rounds`.
//!
//! **Large programs.** With more than [`LARGE`] free arguments (a
//! transformer's ~150), arguments that have a group move only with it (in
//! its periodic subsets): the decisions number a few per group instead of
//! a few per argument, and the polish below uses the same decisions.
//!
//! **Polish.** From the best completed assignment, every single-argument
//! move (every decision, for a large program) with the rest as they are; the best improvement is taken until
//! none improves (at most `max_rounds` times). This settles what
//! propagation leaves replicated for want of a reason (a bias that could
//! be sharded for memory at no cost).
//!
//! Propagation is run once per distinct node and the partitioner once per
//! distinct assignment (the evaluator caches both), and each round's new
//! nodes are scored in parallel.

use std::collections::HashSet;
use std::sync::Arc;

use meshrun_compiler::ir::TensorType;
use meshrun_compiler::sharding::{Mesh, TensorSharding};

use crate::suggest::candidates::{apply_move, groups, moves, AxisMove};
use crate::suggest::scoring::{Assignment, Evaluator, Partial, Score};

/// What the search may change.
#[derive(Debug, Clone)]
pub struct SearchSpace {
    pub mesh: Mesh,
    /// The mesh's name, for replicated shardings.
    pub mesh_name: String,
    /// Per argument, its type.
    pub types: Vec<TensorType>,
    /// Per argument, the user's sharding where it must stay.
    pub fixed: Vec<Option<TensorSharding>>,
}

impl SearchSpace {
    fn is_free(&self, i: usize) -> bool {
        self.fixed[i].is_none()
    }

    /// Every sharding one move away from `s` for argument `i`.
    pub fn neighbours(&self, i: usize, s: &TensorSharding) -> Vec<TensorSharding> {
        if !self.is_free(i) {
            return Vec::new();
        }
        moves(self.types[i].rank(), &self.mesh)
            .iter()
            .filter_map(|mv| apply_move(s, mv, &self.types[i].shape, &self.mesh))
            .collect()
    }

    /// `p` after `mv` on each of `members` (an open member moves from
    /// replicated); `None` when nothing changes.
    fn decide(&self, p: &Partial, members: &[usize], mv: &AxisMove) -> Option<Partial> {
        let mut out = p.clone();
        let mut changed = false;
        for &i in members {
            let from = p[i].clone().unwrap_or_else(|| {
                TensorSharding::replicated(self.mesh_name.clone(), self.types[i].rank())
            });
            if let Some(s) = apply_move(&from, mv, &self.types[i].shape, &self.mesh) {
                out[i] = Some(s);
                changed = true;
            }
        }
        changed.then_some(out)
    }

    /// The root: the kept annotations, every free argument open.
    fn root(&self) -> Partial {
        self.fixed.clone()
    }

    /// Too many free arguments to move one at a time.
    pub fn is_large(&self) -> bool {
        (0..self.types.len()).filter(|&i| self.is_free(i)).count() > LARGE
    }

    /// Every decision: a move of each free argument alone (of those in no
    /// group, for a large program) and of each group subset.
    pub fn decisions(&self) -> Vec<Decision> {
        let n = self.types.len();
        let free: Vec<bool> = (0..n).map(|i| self.is_free(i)).collect();
        let groups = groups(&self.types, &free);
        let mut members: Vec<Vec<usize>> = Vec::new();
        for g in &groups {
            if g.len() == 1 || !self.is_large() {
                members.extend(g.iter().map(|&i| vec![i]));
            }
            if g.len() > 1 {
                members.extend(periodic_subsets(g));
            }
        }
        let mut out = Vec::new();
        for m in members {
            for mv in moves(self.types[m[0]].rank(), &self.mesh) {
                out.push(Decision {
                    members: m.clone(),
                    mv,
                });
            }
        }
        out
    }

    /// `a` after `d` (moved from each member's sharding in `a`); `None`
    /// when nothing changes.
    pub fn apply(&self, a: &Assignment, d: &Decision) -> Option<Assignment> {
        let p: Partial = a.iter().cloned().map(Some).collect();
        let moved = self.decide(&p, &d.members, &d.mv)?;
        moved.into_iter().collect()
    }
}

/// More free arguments than this and the search moves arguments of one
/// type only together (in the periodic subsets of their group), not one
/// at a time: a 12-layer transformer has ~150 arguments but a dozen
/// groups.
pub const LARGE: usize = 16;

/// One move of a set of arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub members: Vec<usize>,
    pub mv: AxisMove,
}

/// The subsets of a group taken with a period: all of it, every other
/// member (from the first or the second), every third, every fourth, for
/// the periods that divide the group and leave at least two members. The
/// layers of a model repeat, so the members of one type come in a
/// repeating order of parts: Megatron's alternating column and row
/// weights are the two halves of period 2, the four projections of an
/// attention layer the quarters of period 4.
fn periodic_subsets(group: &[usize]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = vec![group.to_vec()];
    for period in 2..=4 {
        if !group.len().is_multiple_of(period) || group.len() / period < 2 {
            continue;
        }
        for first in 0..period {
            let sub: Vec<usize> = group.iter().copied().skip(first).step_by(period).collect();
            if !out.contains(&sub) {
                out.push(sub);
            }
        }
    }
    out
}

#[derive(Debug, Clone)]
pub struct SearchOptions {
    /// How many nodes the beam keeps (and expands).
    pub beam: usize,
    /// At most this many rounds of decisions, and of polish.
    pub max_rounds: usize,
    /// Told after every round (a progress bar).
    pub progress: ProgressSink,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            beam: 1,
            max_rounds: 8,
            progress: ProgressSink::default(),
        }
    }
}

/// Where the search is: `step` of at most `steps` rounds (the decision
/// rounds, then the polish rounds; it may finish early, and then reports
/// `step == steps`), and how many assignments it has priced so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub step: usize,
    pub steps: usize,
    pub evaluated: usize,
}

/// Who hears of the search's [`Progress`] (nobody by default).
#[derive(Clone, Default)]
pub struct ProgressSink(Option<Arc<dyn Fn(Progress) + Send + Sync>>);

impl ProgressSink {
    pub fn new(f: impl Fn(Progress) + Send + Sync + 'static) -> ProgressSink {
        ProgressSink(Some(Arc::new(f)))
    }

    fn report(&self, p: Progress) {
        if let Some(f) = &self.0 {
            f(p);
        }
    }
}

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "ProgressSink(..)"
        } else {
            "ProgressSink(none)"
        })
    }
}

/// One scored assignment.
#[derive(Debug, Clone)]
pub struct Ranked {
    pub assignment: Assignment,
    pub score: Score,
}

/// The assignments the search scored, best first, and how it went.
#[derive(Debug, Clone)]
pub struct SearchOutcome {
    pub ranked: Vec<Ranked>,
    /// Rounds of decisions and of polish.
    pub rounds: usize,
    pub polish_rounds: usize,
}

/// Everything scored, by assignment.
#[derive(Default)]
struct Pool {
    /// Per distinct assignment, the smallest annotation set reaching it
    /// (`None` for assignments scored directly).
    scored: Vec<(Ranked, Option<Partial>)>,
    seen: HashSet<Assignment>,
}

fn annotations(p: &Partial) -> usize {
    p.iter().filter(|s| s.is_some()).count()
}

impl Pool {
    fn add(&mut self, a: Assignment, score: Score, partial: Option<Partial>) {
        if self.seen.insert(a.clone()) {
            self.scored.push((
                Ranked {
                    assignment: a,
                    score,
                },
                partial,
            ));
            return;
        }
        // Keep the smaller annotation set for an assignment seen before.
        if let (Some(p), Some(entry)) = (
            partial,
            self.scored.iter_mut().find(|(r, _)| r.assignment == a),
        ) {
            let smaller = entry
                .1
                .as_ref()
                .is_none_or(|q| annotations(&p) < annotations(q));
            if smaller {
                entry.1 = Some(p);
            }
        }
    }

    fn sort(&mut self) {
        self.scored.sort_by(|a, b| a.0.score.order(&b.0.score));
    }

    /// The annotation sets of the best `k` assignments reached by one.
    fn best_sets(&mut self, k: usize) -> Vec<Partial> {
        self.sort();
        self.scored
            .iter()
            .filter_map(|(_, p)| p.clone())
            .take(k)
            .collect()
    }

    fn best(&mut self) -> Option<Ranked> {
        self.sort();
        self.scored.first().map(|(r, _)| r.clone())
    }
}

/// Search for the best assignment; `starts` (the baseline and the fully
/// replicated assignment) are scored too, so the result is never worse.
pub fn search(
    ev: &mut Evaluator,
    space: &SearchSpace,
    starts: &[Assignment],
    opts: &SearchOptions,
) -> SearchOutcome {
    let steps = 2 * opts.max_rounds;
    let tell = |step: usize, ev: &Evaluator| {
        opts.progress.report(Progress {
            step,
            steps,
            evaluated: ev.evaluated,
        })
    };
    let mut pool = Pool::default();
    for (a, s) in starts.iter().zip(ev.score_all(starts)) {
        if let Some(s) = s {
            pool.add(a.clone(), s, None);
        }
    }
    let n = space.types.len();
    let free: Vec<bool> = (0..n).map(|i| space.is_free(i)).collect();
    let decisions = space.decisions();

    let root = space.root();
    for (a, s) in ev
        .complete_all(std::slice::from_ref(&root))
        .into_iter()
        .flatten()
    {
        pool.add(a, s, Some(root.clone()));
    }
    let mut expanded: HashSet<Partial> = HashSet::new();
    let mut rounds = 0;
    while rounds < opts.max_rounds {
        let todo: Vec<Partial> = pool
            .best_sets(opts.beam)
            .into_iter()
            .filter(|p| !expanded.contains(p))
            .collect();
        if todo.is_empty() {
            break;
        }
        rounds += 1;
        let mut children: Vec<Partial> = Vec::new();
        for set in todo {
            for d in &decisions {
                if let Some(child) = space.decide(&set, &d.members, &d.mv) {
                    if !children.contains(&child) {
                        children.push(child);
                    }
                }
            }
            expanded.insert(set);
        }
        let done = ev.complete_all(&children);
        for (p, r) in children.into_iter().zip(done) {
            if let Some((a, s)) = r {
                pool.add(a, s, Some(p));
            }
        }
        tell(rounds, ev);
    }

    let mut polish_rounds = 0;
    while polish_rounds < opts.max_rounds {
        let Some(best) = pool.best() else { break };
        polish_rounds += 1;
        let mut next = Vec::new();
        if space.is_large() {
            next.extend(
                decisions
                    .iter()
                    .filter_map(|d| space.apply(&best.assignment, d)),
            );
        } else {
            for i in (0..n).filter(|&i| free[i]) {
                for s in space.neighbours(i, &best.assignment[i]) {
                    let mut a = best.assignment.clone();
                    a[i] = s;
                    next.push(a);
                }
            }
        }
        for (a, s) in next.iter().zip(ev.score_all(&next)) {
            if let Some(s) = s {
                pool.add(a.clone(), s, None);
            }
        }
        tell(opts.max_rounds + polish_rounds, ev);
        if pool.best().map(|r| r.assignment) == Some(best.assignment) {
            break;
        }
    }
    pool.sort();
    tell(steps, ev);
    SearchOutcome {
        ranked: pool.scored.into_iter().map(|(r, _)| r).collect(),
        rounds,
        polish_rounds,
    }
}
