//! Why each argument got its sharding: the chosen assignment set against
//! the best assignment that differs in that argument alone. The difference
//! is said in the partitioner's own terms — the collectives one needs and
//! the other does not (kind, bytes, the op that causes it), the compute
//! per device and the memory — e.g. "rather than P(None, None): +3.1 µs;
//! that needs all-reduce of 1.00 MiB at stablehlo.dot_general at 16:11".

use std::collections::HashMap;

use meshrun_compiler::sharding::TensorSharding;

use crate::cost::render::{human_bytes, human_flops, human_time};
use crate::cost::report::CollectiveCost;
use crate::suggest::output::partition_spec;
use crate::suggest::scoring::{Assignment, Evaluation, Evaluator, Score};
use crate::suggest::search::{Decision, SearchSpace};
use crate::suggest::ArgInfo;

/// The reason for one argument's sharding.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgReason {
    pub index: usize,
    /// The best other sharding of this argument, the rest unchanged.
    pub runner_up: Option<TensorSharding>,
    /// Its step time minus the chosen one's, seconds.
    pub extra_step_s: f64,
    /// Its memory minus the chosen one's, bytes.
    pub extra_memory_bytes: f64,
    /// One line for people.
    pub text: String,
}

/// A collective as the comparison sees it: same kind, op and bytes are
/// the same data movement.
fn signature(c: &CollectiveCost) -> (String, String, u64) {
    (
        c.entry.kind.clone(),
        c.entry.op.clone(),
        c.entry.bytes_per_device.round() as u64,
    )
}

/// The collectives of `a` that `b` does not have (as a multiset), slowest
/// first.
fn only_in<'e>(a: &'e Evaluation, b: &Evaluation) -> Vec<&'e CollectiveCost> {
    let mut rest: Vec<_> = b.cost.collectives.iter().map(signature).collect();
    let mut out: Vec<&CollectiveCost> = Vec::new();
    for c in &a.cost.collectives {
        let s = signature(c);
        match rest.iter().position(|r| *r == s) {
            Some(k) => {
                rest.swap_remove(k);
            }
            None => out.push(c),
        }
    }
    out.sort_by(|x, y| y.estimate.seconds.total_cmp(&x.estimate.seconds));
    out
}

/// "all-reduce of 16.0 KiB at stablehlo.dot_general at 9:10" (and "+ N
/// more" when there are several).
fn describe(cs: &[&CollectiveCost]) -> String {
    let Some(first) = cs.first() else {
        return String::new();
    };
    let mut s = format!(
        "{} of {} at {}",
        first.entry.kind,
        human_bytes(first.entry.bytes_per_device),
        first.entry.op
    );
    if cs.len() > 1 {
        let total: f64 = cs.iter().map(|c| c.entry.bytes_per_device).sum();
        s.push_str(&format!(
            " and {} more ({} in all)",
            cs.len() - 1,
            human_bytes(total)
        ));
    }
    s
}

fn spec(s: &TensorSharding) -> String {
    partition_spec(s)
}

/// The sentence comparing `chosen` with `alt` (which differs in one
/// argument).
fn compare(
    chosen: &Evaluation,
    alt: &Evaluation,
    runner_up: &TensorSharding,
    cap: Option<f64>,
) -> String {
    let mut parts = Vec::new();
    let dt = alt.score.step_s - chosen.score.step_s;
    let dm = alt.score.memory_bytes - chosen.score.memory_bytes;
    if !alt.score.fits && chosen.score.fits {
        parts.push(format!(
            "that needs {} per device, over the {} cap",
            human_bytes(alt.score.memory_bytes),
            human_bytes(cap.unwrap_or(f64::INFINITY))
        ));
    }
    let extra = only_in(alt, chosen);
    let saved = only_in(chosen, alt);
    match (extra.is_empty(), saved.is_empty()) {
        (false, true) => parts.push(format!("that needs {}", describe(&extra))),
        (false, false) => parts.push(format!(
            "that needs {} where this needs {}",
            describe(&extra),
            describe(&saved)
        )),
        (true, false) => parts.push(format!(
            "this needs {}, paid for elsewhere",
            describe(&saved)
        )),
        (true, true) => {}
    }
    let (fc, fa) = (chosen.cost.compute.flops, alt.cost.compute.flops);
    if (fa - fc).abs() > 0.01 * fc.max(fa) {
        parts.push(format!(
            "compute {} instead of {} per device",
            human_flops(fa),
            human_flops(fc)
        ));
    }
    if dm.abs() >= 1.0 {
        parts.push(format!(
            "{} {} per device",
            human_bytes(dm.abs()),
            if dm > 0.0 {
                "more memory"
            } else {
                "less memory"
            }
        ));
    }
    let head = if !alt.score.same_time(&chosen.score) {
        format!(
            "{}{}",
            if dt > 0.0 { "+" } else { "-" },
            human_time(dt.abs())
        )
    } else if alt.score.collectives > chosen.score.collectives {
        format!(
            "as fast, {} more collective(s)",
            alt.score.collectives - chosen.score.collectives
        )
    } else {
        "as fast".to_string()
    };
    if parts.is_empty() {
        format!("rather than {} ({head})", spec(runner_up))
    } else {
        format!(
            "rather than {} ({head}): {}",
            spec(runner_up),
            parts.join("; ")
        )
    }
}

/// True when `c` is `mine` with some axes taken off (and none added or
/// moved): the same split, coarser.
fn drops_axes_only(c: &TensorSharding, mine: &TensorSharding) -> bool {
    c.dims
        .iter()
        .zip(&mine.dims)
        .all(|(x, y)| x.axes.iter().all(|a| y.axes.contains(a)))
}

/// The alternatives an argument's reason is drawn from: every sharding
/// one move away with the rest as chosen; for a large program, where
/// arguments of one type moved together, the moves of the subsets of its
/// group that contain it (or of itself, when it has no group).
fn alternatives(
    space: &SearchSpace,
    decisions: &[Decision],
    chosen: &Assignment,
    i: usize,
) -> Vec<Assignment> {
    let grouped = space.is_large()
        && decisions
            .iter()
            .any(|d| d.members.len() > 1 && d.members.contains(&i));
    if grouped {
        return decisions
            .iter()
            .filter(|d| d.members.contains(&i))
            .filter_map(|d| space.apply(chosen, d))
            .collect();
    }
    space
        .neighbours(i, &chosen[i])
        .into_iter()
        .map(|c| {
            let mut a = chosen.clone();
            a[i] = c;
            a
        })
        .collect()
}

/// One reason per argument of `chosen`.
pub fn explain_choice(
    ev: &mut Evaluator,
    space: &SearchSpace,
    chosen: &Evaluation,
    args: &[ArgInfo],
) -> Vec<ArgReason> {
    let cap = ev.memory_cap();
    let decisions = space.decisions();
    // Full evaluations of runners-up, shared by the arguments of a group.
    let mut evaluated: HashMap<Assignment, Result<Evaluation, String>> = HashMap::new();
    args.iter()
        .map(|a| {
            let i = a.index;
            if space.fixed[i].is_some() {
                return ArgReason {
                    index: i,
                    runner_up: None,
                    extra_step_s: 0.0,
                    extra_memory_bytes: 0.0,
                    text: "kept as given (--keep-given)".into(),
                };
            }
            // The best alternative: one that places this argument
            // differently if there is one (a sharding that only drops axes
            // of the chosen one splits the same way, locally).
            let mine = &chosen.assignment[i];
            let tries = alternatives(space, &decisions, &chosen.assignment, i);
            let mut best_other: Option<(Assignment, Score)> = None;
            let mut best_sub: Option<(Assignment, Score)> = None;
            for (alt, s) in tries.iter().zip(ev.score_all(&tries)) {
                let Some(s) = s else { continue };
                let slot = if drops_axes_only(&alt[i], mine) {
                    &mut best_sub
                } else {
                    &mut best_other
                };
                if slot.as_ref().is_none_or(|(_, b)| s.order(b).is_lt()) {
                    *slot = Some((alt.clone(), s));
                }
            }
            // "P(None, None) is as fast but needs 16 MiB more per device."
            let coarser = best_sub.as_ref().and_then(|(c, s)| {
                let more = s.memory_bytes - chosen.score.memory_bytes;
                (best_other.is_some() && s.order(&chosen.score).is_gt() && more >= 1.0).then(|| {
                    let over = if s.fits { "" } else { ", over the cap" };
                    if s.same_time(&chosen.score) {
                        format!(
                            "; {} is as fast but needs {} more per device{over}",
                            spec(&c[i]),
                            human_bytes(more)
                        )
                    } else {
                        format!(
                            "; {} takes {} and {} more per device{over}",
                            spec(&c[i]),
                            human_time(s.step_s),
                            human_bytes(more)
                        )
                    }
                })
            });
            let Some((alt, _)) = best_other.or(best_sub) else {
                return ArgReason {
                    index: i,
                    runner_up: None,
                    extra_step_s: 0.0,
                    extra_memory_bytes: 0.0,
                    text: "the only sharding that divides its shape on this mesh".into(),
                };
            };
            let runner_up = alt[i].clone();
            let others = alt
                .iter()
                .zip(&chosen.assignment)
                .enumerate()
                .filter(|(j, (x, y))| *j != i && x != y)
                .count();
            let full = evaluated
                .entry(alt.clone())
                .or_insert_with(|| ev.evaluate(&alt).map_err(|e| e.to_string()));
            match full {
                Ok(alt) => {
                    let mut text = compare(chosen, alt, &runner_up, cap);
                    if others > 0 {
                        text = text.replacen(
                            &spec(&runner_up),
                            &format!("{} (with {others} more of its type)", spec(&runner_up)),
                            1,
                        );
                    }
                    ArgReason {
                        index: i,
                        extra_step_s: alt.score.step_s - chosen.score.step_s,
                        extra_memory_bytes: alt.score.memory_bytes - chosen.score.memory_bytes,
                        text: text + &coarser.unwrap_or_default(),
                        runner_up: Some(runner_up),
                    }
                }
                Err(e) => ArgReason {
                    index: i,
                    runner_up: Some(runner_up),
                    extra_step_s: 0.0,
                    extra_memory_bytes: 0.0,
                    text: format!("the alternatives do not compile ({e})"),
                },
            }
        })
        .collect()
}
