//! A bounded cheapest-path search for a reshard, run next to the greedy
//! planner (`planner.rs`) when the greedy plan needs a collective-permute.
//!
//! The greedy planner fixes one order of moves, so it can miss cheaper
//! plans: one all-to-all over several axes followed by a gather instead of
//! a permute first (`{a b c}{} -> {a}{b}`), all-to-alls one piece at a
//! time that land pieces in another order, or another choice of pieces to
//! slice before a permute or of the order of the pieces a permute leaves
//! to be gathered (fewer devices move). Dijkstra over the aligned pieces
//! finds such plans by estimated bytes per device; the caller lowers the
//! result and keeps it only if its real cost is lower.
//!
//! The search keeps the caller's order (slices, permutes and all-to-alls,
//! then one final gather), so the tensor never becomes less sharded before
//! the last collective, and every move keeps padded blocks exact
//! ([`exact`]). Where the greedy planner finds nothing and the caller falls
//! back to gathering and slicing again, the final gather may be followed
//! by a slice of the target pieces it leaves missing (moving data first
//! makes that gather smaller), and a permute may then put any pieces in
//! any order. It works on at most [`MAX_PIECES`] pieces and gives up after
//! [`MAX_STATES`] states, and only prices a permute whose pieces take at
//! most [`MAX_PERMUTE_ASSIGNMENTS`] device coordinates to enumerate, so it
//! stays cheap on large meshes.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use crate::partition::reshard::pieces::{product, DimPieces, Piece};
use crate::partition::reshard::planner::{exact, Move, Step};

/// The most pieces (source, target and free ones together) the search
/// works on.
const MAX_PIECES: usize = 6;
/// The most free pieces (in neither sharding) the search may slice.
const MAX_FREE: usize = 2;
/// States expanded before the search gives up.
const MAX_STATES: usize = 4000;
/// The most pool pieces whose every order a permute tries (4! = 24).
const MAX_ORDERED: usize = 4;
/// The most coordinate assignments enumerated to price one permute.
const MAX_PERMUTE_ASSIGNMENTS: i64 = 4096;

/// A search from `start` to `target` (aligned pieces, same mesh and device
/// order) over a tensor of `shape` laid out over `extent`; `free` are mesh pieces
/// neither uses, which the search may slice and gather again at the end
/// (a permute of a smaller block: `{b a}{} -> {a}{b}` slices `c`, permutes
/// onto `{a c}{b}` and gathers `c`). `bound` is the estimated cost
/// (elements per device) to beat. The steps of the cheapest plan found
/// below `bound`, if any. With `regather` (only where the caller's best
/// plan already grows the tensor: the gather-then-slice fallback) the
/// plan may also end in a gather of more than the target leaves sharded
/// and a free slice of the target pieces still missing
/// (`{x}{y} -> {y}{x:(2)2}`: permute onto `{x:(1)2 y}{x:(2)2}`, gather
/// `{x:(1)2 y}{}`, slice `{y}{}`).
pub(crate) fn search(
    shape: &[i64],
    extent: &[i64],
    start: &DimPieces,
    target: &DimPieces,
    free: &[Piece],
    bound: f64,
    regather: bool,
) -> Option<Vec<Step>> {
    let (start, target) = atoms(start, target);
    let mut pieces = all_pieces(&start, &target);
    if pieces.len() > MAX_PIECES {
        return None;
    }
    let free = offered(free, MAX_PIECES - pieces.len());
    pieces.extend(&free);
    Search {
        extent,
        shape,
        target: &target,
        free,
        pieces,
        regather,
    }
    .run(&start, bound)
}

/// The free pieces the search may slice: at most [`MAX_FREE`] and `room`,
/// cut into pieces of prime size where that still fits (so that part of
/// a free axis can fill a shard count), the smallest first (they fit
/// shard counts most often).
fn offered(free: &[Piece], room: usize) -> Vec<Piece> {
    let room = room.min(MAX_FREE);
    let cut: Vec<Piece> = free.iter().flat_map(|&p| prime_parts(p)).collect();
    let mut out = if cut.len() <= room {
        cut
    } else {
        free.to_vec()
    };
    out.retain(|p| p.size > 1);
    out.sort_by_key(|p| p.size);
    out.truncate(room);
    out
}

/// Every piece of both cut into pieces of prime size (major first), so that the
/// search may move part of an axis as it moves a whole one (`"x"` of size
/// 4 is `"x":(1)2, "x":(2)2`, as two axes of size 2 would be). Pieces
/// stay whole if cutting them all would make more than [`MAX_PIECES`].
fn atoms(start: &DimPieces, target: &DimPieces) -> (DimPieces, DimPieces) {
    let cut = |dims: &DimPieces| -> DimPieces {
        dims.iter()
            .map(|d| d.iter().flat_map(|&p| prime_parts(p)).collect())
            .collect()
    };
    let (a, b) = (cut(start), cut(target));
    if all_pieces(&a, &b).len() > MAX_PIECES {
        (start.clone(), target.clone())
    } else {
        (a, b)
    }
}

fn prime_parts(mut p: Piece) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut f = 2;
    while f * f <= p.size {
        if p.size % f == 0 {
            let (a, b) = p.split(f);
            out.push(a);
            p = b;
        } else {
            f += 1;
        }
    }
    out.push(p);
    out
}

fn all_pieces(a: &DimPieces, b: &DimPieces) -> Vec<Piece> {
    let mut v: Vec<Piece> = a.iter().chain(b).flatten().copied().collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// A node of the search: the state reached, how, and from where.
struct Node {
    state: DimPieces,
    parent: Option<(usize, Move)>,
}

struct Search<'a> {
    extent: &'a [i64],
    /// The tensor's real shape (the local length of an unsplit dimension).
    shape: &'a [i64],
    target: &'a DimPieces,
    /// Pieces in neither sharding that may be sliced (and gathered last).
    free: Vec<Piece>,
    /// Every piece of the source and the target, and the free ones.
    pieces: Vec<Piece>,
    /// Whether the plan may end in a gather followed by a slice.
    regather: bool,
}

/// How a plan ends from a state: per dimension, the minor pieces gathered
/// and then the target pieces sliced (both empty where nothing is left).
struct Finish {
    cost: f64,
    gathered: DimPieces,
    /// The state after the gather (a prefix of the target per dimension).
    kept: DimPieces,
    sliced: DimPieces,
}

/// Costs are compared as integers (elements, scaled for permutes).
fn key(cost: f64) -> u64 {
    (cost * 1024.0).round() as u64
}

impl Search<'_> {
    fn run(&self, start: &DimPieces, bound: f64) -> Option<Vec<Step>> {
        let mut nodes = vec![Node {
            state: start.clone(),
            parent: None,
        }];
        let bound = key(bound);
        let mut best_at: HashMap<DimPieces, u64> = HashMap::new();
        best_at.insert(start.clone(), 0);
        let mut heap = BinaryHeap::new();
        heap.push(Reverse((0u64, 0usize)));
        let mut best: Option<(u64, usize, Finish)> = None;
        let mut expanded = 0;
        while let Some(Reverse((cost, id))) = heap.pop() {
            if best.as_ref().is_some_and(|b| b.0 <= cost) || cost >= bound {
                break;
            }
            let state = nodes[id].state.clone();
            if best_at.get(&state).is_some_and(|&c| c < cost) {
                continue;
            }
            expanded += 1;
            if expanded > MAX_STATES {
                break;
            }
            if let Some(end) = self.finish(&state) {
                let total = cost + key(end.cost);
                if total < bound && best.as_ref().is_none_or(|b| total < b.0) {
                    best = Some((total, id, end));
                }
            }
            for (next, mv, c) in self.moves(&state) {
                let total = cost + key(c);
                if best_at.get(&next).is_some_and(|&old| old <= total) {
                    continue;
                }
                best_at.insert(next.clone(), total);
                nodes.push(Node {
                    state: next,
                    parent: Some((id, mv)),
                });
                heap.push(Reverse((total, nodes.len() - 1)));
            }
        }
        let (_, id, end) = best?;
        let mut steps = path(&nodes, id);
        if end.gathered.iter().any(|g| !g.is_empty()) {
            steps.push(Step {
                mv: Move::Gather(end.gathered),
                after: end.kept,
                on_target: true,
            });
        }
        if end.sliced.iter().any(|s| !s.is_empty()) {
            steps.push(Step {
                mv: Move::Slice(end.sliced),
                after: self.target.clone(),
                on_target: true,
            });
        }
        Some(steps)
    }

    /// The local elements per device in `state`.
    fn local(&self, state: &DimPieces) -> f64 {
        state
            .iter()
            .enumerate()
            .map(|(d, pieces)| self.len(d, product(pieces)))
            .product()
    }

    /// The local length of dimension `d` split `n` ways: a block of the
    /// padded extent, or the real size where it is not split (as the
    /// lowering's local shapes have it, so that estimates follow real
    /// bytes on padded dimensions).
    fn len(&self, d: usize, n: i64) -> f64 {
        if n == 1 {
            self.shape[d] as f64
        } else {
            ((self.extent[d] + n - 1) / n) as f64
        }
    }

    /// How the plan ends from `state`: if it is the target followed, per
    /// dimension, by pieces the target does not use, the final gather of
    /// those. With [`Search::regather`], a dimension may also keep only a
    /// shorter prefix of its target (the longest whose gather and slice are
    /// exact), gather the rest and slice the target's missing pieces after
    /// the gather. `None` if no dimension ending fits.
    fn finish(&self, state: &DimPieces) -> Option<Finish> {
        let rank = state.len();
        let mut end = Finish {
            cost: 0.0,
            gathered: Vec::with_capacity(rank),
            kept: Vec::with_capacity(rank),
            sliced: Vec::with_capacity(rank),
        };
        for (d, (cur, want)) in state.iter().zip(self.target).enumerate() {
            let common = cur.iter().zip(want).take_while(|(a, b)| a == b).count();
            let lowest = if self.regather { 0 } else { want.len() };
            if common < lowest {
                return None;
            }
            let n = product(cur);
            let k = (lowest..=common).rev().find(|&k| {
                let kept = product(&want[..k]);
                exact(self.extent[d], n, kept) && exact(self.extent[d], kept, product(want))
            })?;
            end.gathered.push(cur[k..].to_vec());
            end.kept.push(want[..k].to_vec());
            end.sliced.push(want[k..].to_vec());
        }
        let g = end.gathered.iter().map(|r| product(r)).product::<i64>() as f64;
        end.cost = (g - 1.0) * self.local(state);
        Some(end)
    }

    /// Every move from `state`, with the state it makes and its cost.
    fn moves(&self, state: &DimPieces) -> Vec<(DimPieces, Move, f64)> {
        let mut out = Vec::new();
        self.slices(state, &mut out);
        self.all_to_alls(state, &mut out);
        self.permute(state, &mut out);
        out
    }

    /// One target or free piece nobody holds, appended to any dimension.
    fn slices(&self, state: &DimPieces, out: &mut Vec<(DimPieces, Move, f64)>) {
        let used = |p: &Piece| state.iter().any(|d| d.contains(p));
        let candidates = self.target.iter().flatten().chain(&self.free);
        for &p in candidates.filter(|p| !used(p)) {
            for d in 0..state.len() {
                let n = product(&state[d]);
                if !exact(self.extent[d], n, n * p.size) {
                    continue;
                }
                let mut next = state.clone();
                next[d].push(p);
                let mut added = vec![Vec::new(); state.len()];
                added[d].push(p);
                out.push((next, Move::Slice(added), 0.0));
            }
        }
    }

    /// The minor-most `k` pieces of a dimension to the minor end of
    /// another: `(G-1)` chunks of the input cut to the output's length
    /// along the target dimension.
    fn all_to_alls(&self, state: &DimPieces, out: &mut Vec<(DimPieces, Move, f64)>) {
        let rank = state.len();
        for s in 0..rank {
            for k in 1..=state[s].len() {
                let moved = state[s][state[s].len() - k..].to_vec();
                let g = product(&moved);
                let ns = product(&state[s]);
                if !exact(self.extent[s], ns, ns / g) {
                    continue;
                }
                for t in (0..rank).filter(|&t| t != s) {
                    let nt = product(&state[t]);
                    if !exact(self.extent[t], nt, nt * g) {
                        continue;
                    }
                    let mut next = state.clone();
                    next[s].truncate(state[s].len() - k);
                    next[t].extend(&moved);
                    let chunk = self.local(state) / self.len(t, nt) * self.len(t, nt * g);
                    let mv = Move::AllToAll {
                        pieces: moved.clone(),
                        src: s,
                        tgt: t,
                    };
                    out.push((next, mv, (g as f64 - 1.0) * chunk));
                }
            }
        }
    }

    /// Permutes that keep the shard counts per dimension: each dimension
    /// becomes the longest prefix of its target that fits, then pieces of
    /// the pool ([`Search::permute_pool`]) in some order: pieces the target
    /// does not use (gathered last; their order decides how many devices
    /// keep their block) or target pieces of other dimensions (an
    /// all-to-all carries them there later: `{a b}{c}{} -> {}{a}{c b}`
    /// permutes onto `{c b}{a}{}`).
    fn permute(&self, state: &DimPieces, out: &mut Vec<(DimPieces, Move, f64)>) {
        let mut seen: Vec<DimPieces> = Vec::new();
        let (prefix, pool) = self.permute_pool(state);
        let mut tries: Vec<(DimPieces, Vec<Piece>)> = vec![(prefix, pool)];
        if self.regather {
            // Ending in a gather and a slice, a dimension need not start
            // with its target: any order of the pieces may be cheaper.
            let mut all: Vec<Piece> = state.iter().flatten().copied().collect();
            for &p in self.target.iter().flatten() {
                if !all.contains(&p) {
                    all.push(p);
                }
            }
            tries.push((vec![Vec::new(); state.len()], all));
        }
        for (prefix, order) in tries
            .iter()
            .flat_map(|(prefix, pool)| orders(pool).into_iter().map(move |o| (prefix, o)))
        {
            let Some(next) = self.permute_fill(state, prefix, &order) else {
                continue;
            };
            if next == *state || seen.contains(&next) {
                continue;
            }
            if let Some(moved) = self.moved_fraction(state, &next) {
                let cost = self.local(state) * moved;
                out.push((next.clone(), Move::Permute, cost));
            }
            seen.push(next);
        }
    }

    /// Per dimension, the longest prefix of the target whose shard count
    /// divides the state's; and the pieces left to fill the rest: the
    /// state's pieces the target does not use (in the state's order), then
    /// the target's pieces outside those prefixes (in the target's order).
    fn permute_pool(&self, state: &DimPieces) -> (DimPieces, Vec<Piece>) {
        let prefix: DimPieces = state
            .iter()
            .zip(self.target)
            .map(|(have, want)| {
                let n = product(have);
                let k = (0..=want.len())
                    .rev()
                    .find(|&k| n % product(&want[..k]) == 0)
                    .unwrap_or(0);
                want[..k].to_vec()
            })
            .collect();
        let in_target = |p: &Piece| self.target.iter().any(|d| d.contains(p));
        let in_prefix = |p: &Piece| prefix.iter().any(|d| d.contains(p));
        let spare = state.iter().flatten().filter(|p| !in_target(p));
        let rest = self.target.iter().flatten().filter(|p| !in_prefix(p));
        let pool = spare.chain(rest).copied().collect();
        (prefix, pool)
    }

    /// Each dimension's prefix filled from `order` (first fit) up to the
    /// state's shard count; `None` if a dimension cannot be filled, or if
    /// the pieces after a whole target dimension cannot be gathered
    /// exactly. Pieces of `order` left over are dropped (every block is
    /// still held by as many devices: `{a c}{} -> {b c}{}` moves block
    /// `(a, c)` to `(b, c)`), or sliced later.
    fn permute_fill(
        &self,
        state: &DimPieces,
        prefix: &DimPieces,
        order: &[Piece],
    ) -> Option<DimPieces> {
        let mut pool = order.to_vec();
        let mut next = prefix.clone();
        for (d, dim) in next.iter_mut().enumerate() {
            let mut cap = product(&state[d]) / product(dim);
            let mut i = 0;
            while cap > 1 && i < pool.len() {
                if cap % pool[i].size == 0 {
                    cap /= pool[i].size;
                    dim.push(pool.remove(i));
                } else {
                    i += 1;
                }
            }
            let whole = dim.starts_with(&self.target[d]) && dim.len() > self.target[d].len();
            // (Ending in a gather and a slice, `finish` checks what it
            // gathers.)
            if cap != 1 || (whole && !self.regather && !self.exact_gather(d, dim)) {
                return None;
            }
        }
        Some(next)
    }

    fn exact_gather(&self, d: usize, dim: &[Piece]) -> bool {
        let n = product(dim);
        exact(self.extent[d], n, product(&self.target[d]))
    }

    /// The fraction of devices whose block changes from `a` to `b`, by
    /// enumerating the coordinates along the pieces involved (each piece
    /// an independent digit); `None` if there are too many.
    fn moved_fraction(&self, a: &DimPieces, b: &DimPieces) -> Option<f64> {
        let involved: Vec<Piece> = self
            .pieces
            .iter()
            .filter(|p| a.iter().chain(b).flatten().any(|q| q == *p))
            .copied()
            .collect();
        let total: i64 = product(&involved);
        if total > MAX_PERMUTE_ASSIGNMENTS {
            return None;
        }
        let digit_of = |p: &Piece, assign: i64| -> i64 {
            let mut rest = assign;
            for q in involved.iter().rev() {
                if q == p {
                    return rest % q.size;
                }
                rest /= q.size;
            }
            0
        };
        let index = |dim: &[Piece], assign: i64| {
            dim.iter()
                .fold(0, |acc, p| acc * p.size + digit_of(p, assign))
        };
        let moved = (0..total)
            .filter(|&x| a.iter().zip(b).any(|(da, db)| index(da, x) != index(db, x)))
            .count();
        Some(moved as f64 / total as f64)
    }
}

/// The orders in which [`Search::permute_fill`] tries the pool: all of
/// them for up to [`MAX_ORDERED`] pieces, else the pool's own and its
/// reverse.
fn orders(pool: &[Piece]) -> Vec<Vec<Piece>> {
    if pool.len() > MAX_ORDERED {
        let rev = pool.iter().rev().copied().collect();
        return vec![pool.to_vec(), rev];
    }
    let mut out: Vec<Vec<Piece>> = vec![Vec::new()];
    for _ in 0..pool.len() {
        let mut longer = Vec::new();
        for pre in &out {
            for &p in pool.iter().filter(|p| !pre.contains(p)) {
                longer.push([pre.as_slice(), &[p]].concat());
            }
        }
        out = longer;
    }
    out
}

/// The steps from the root to node `id`, consecutive slices merged into
/// one collective (slices commute; each appends its pieces in turn).
fn path(nodes: &[Node], mut id: usize) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    while let Some((parent, mv)) = &nodes[id].parent {
        steps.push(Step {
            mv: mv.clone(),
            after: nodes[id].state.clone(),
            on_target: true,
        });
        id = *parent;
    }
    steps.reverse();
    let mut out: Vec<Step> = Vec::with_capacity(steps.len());
    for step in steps {
        if let (
            Some(Step {
                mv: Move::Slice(prev),
                after,
                ..
            }),
            Move::Slice(added),
        ) = (out.last_mut(), &step.mv)
        {
            for (p, a) in prev.iter_mut().zip(added) {
                p.extend(a);
            }
            *after = step.after;
            continue;
        }
        out.push(step);
    }
    out
}
