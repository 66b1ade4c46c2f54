//! The greedy reshard planner (SPEC §6, after Shardy's
//! `-sdy-reshard-to-collectives`).
//!
//! Both shardings are first split into matching pieces
//! ([`crate::partition::reshard::pieces::align`]). For each dimension the common major prefix of
//! the current and the target pieces stays where it is; the rest is the
//! *diff* (`ins(d)`: current pieces past the prefix, `outs(d)`: target pieces
//! past the prefix). Each round (at most two) tries, in this order:
//!
//! 1. **all-slice**: add target pieces the current sharding does not use,
//!    no more per dimension than the target shards it beyond the current
//!    sharding (its *capacity*), and, where a later all-to-all will carry a
//!    dimension's pieces to another one, the pieces that must follow them
//!    there;
//! 2. **collective-permute**: when all-to-alls and all-gathers alone cannot
//!    finish (axes in the wrong order or dimension, a piece to drop that
//!    another one should replace), or the device order changes: rebuild
//!    each dimension with the same number of shards — target prefix first,
//!    pieces to drop next, pieces bound for other dimensions last;
//! 3. **all-to-all**: move the minor-most run of pieces of a dimension that
//!    the target wants in one other dimension there (first only moves that
//!    land in their final place, then any);
//! 4. **all-gather**: drop the minor-most pieces the target does not use.
//!
//! Slices come first and gathers last, so the local tensor never grows
//! before the last collective. A step is only taken if it keeps every
//! block exact for non-divisible dimensions ([`exact`]); if two rounds do
//! not reach the target, [`Planner::run`] gives up and the caller falls
//! back to gather-then-slice.

use std::collections::VecDeque;

use crate::partition::reshard::pieces::{product, DimPieces, Piece};

/// What one planned collective does to the pieces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Move {
    /// Per dimension, the pieces appended (minor) to it.
    Slice(DimPieces),
    /// Per dimension, the minor-most pieces removed from it.
    Gather(DimPieces),
    /// `pieces` leave the minor end of `src` for the minor end of `tgt`.
    AllToAll {
        pieces: Vec<Piece>,
        src: usize,
        tgt: usize,
    },
    /// Same number of shards per dimension, other devices (or another
    /// mesh).
    Permute,
}

/// A planned collective and the sharding it produces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Step {
    pub mv: Move,
    pub after: DimPieces,
    /// Whether `after` is on the target mesh (it is on the source mesh
    /// until a permute moves the data over).
    pub on_target: bool,
}

/// How a piece fits into a capacity (a number of shards still wanted).
enum Fit {
    Whole,
    /// Only its major part of this size fits.
    Major(i64),
    No,
}

fn fit(p: Piece, cap: i64) -> Fit {
    if cap <= 1 || (p.size % cap != 0 && cap % p.size != 0) {
        Fit::No
    } else if p.size <= cap {
        Fit::Whole
    } else {
        Fit::Major(cap)
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a.max(1)
    } else {
        gcd(b, a % b)
    }
}

/// `d` elements split `n` ways, padded: `n * ceil(d/n)`.
fn padded(d: i64, n: i64) -> i64 {
    n * ((d + n - 1) / n)
}

/// Whether re-splitting a dimension of size `d` from `from` to `to` shards
/// by concatenating or cutting local blocks gives exactly the blocks of the
/// new sharding. Always true without padding; with padding only if the
/// padded extent stays the same or one side is the whole dimension (block
/// `s` starts at `s*ceil(d/n)`, so blocks of different padded extents do
/// not line up).
pub(crate) fn exact(d: i64, from: i64, to: i64) -> bool {
    from == to || from == 1 || to == 1 || padded(d, from) == padded(d, to)
}

/// Replaces piece `old` by `new` (its parts, in order) wherever it occurs.
fn replace_in(lists: &mut DimPieces, old: Piece, new: &[Piece]) {
    for dim in lists.iter_mut() {
        if let Some(i) = dim.iter().position(|&p| p == old) {
            dim.splice(i..=i, new.iter().copied());
        }
    }
}

/// Moves pieces from `pool` into `into[d]` for the dims of `dims` in order,
/// each while its capacity lasts; a piece too big is split, its minor rest
/// stays in the pool (and replaces it in `tgt`, if given).
fn distribute(
    pool: &mut Vec<Piece>,
    dims: impl Iterator<Item = usize>,
    cap: &mut [i64],
    into: &mut DimPieces,
    mut tgt: Option<&mut DimPieces>,
) {
    for d in dims {
        let mut i = 0;
        while cap[d] > 1 && i < pool.len() {
            let p = pool[i];
            match fit(p, cap[d]) {
                Fit::No => i += 1,
                Fit::Whole => {
                    pool.remove(i);
                    cap[d] /= p.size;
                    into[d].push(p);
                }
                Fit::Major(k) => {
                    let (a, b) = p.split(k);
                    if let Some(t) = tgt.as_deref_mut() {
                        replace_in(t, p, &[a, b]);
                    }
                    pool[i] = b;
                    cap[d] = 1;
                    into[d].push(a);
                }
            }
        }
    }
}

/// The planner's state: where the data is (`cur`), where it must go
/// (`tgt`), and the collectives so far.
#[derive(Debug, Clone)]
pub(crate) struct Planner<'a> {
    shape: &'a [i64],
    cur: DimPieces,
    tgt: DimPieces,
    steps: Vec<Step>,
    on_target: bool,
}

impl<'a> Planner<'a> {
    /// `cur` and `tgt` must be aligned; `on_target` is false when the data
    /// must still be moved to the target mesh (same axes, other device
    /// order), which takes a collective-permute even if the pieces match.
    pub fn new(shape: &'a [i64], cur: DimPieces, tgt: DimPieces, on_target: bool) -> Self {
        Planner {
            shape,
            cur,
            tgt,
            steps: Vec::new(),
            on_target,
        }
    }

    /// The collectives that turn `cur` into `tgt`, or `None` if two rounds
    /// do not get there.
    pub fn run(mut self) -> Option<Vec<Step>> {
        for _ in 0..2 {
            if self.done() {
                break;
            }
            self.try_slice();
            self.try_permute();
            self.try_all_to_alls(true);
            self.try_all_to_alls(false);
            self.try_gather();
        }
        self.done().then_some(self.steps)
    }

    fn done(&self) -> bool {
        self.on_target && self.cur == self.tgt
    }

    fn rank(&self) -> usize {
        self.cur.len()
    }

    fn prefix(&self, d: usize) -> usize {
        self.cur[d]
            .iter()
            .zip(&self.tgt[d])
            .take_while(|(a, b)| a == b)
            .count()
    }

    fn ins(&self, d: usize) -> &[Piece] {
        &self.cur[d][self.prefix(d)..]
    }

    fn outs(&self, d: usize) -> &[Piece] {
        &self.tgt[d][self.prefix(d)..]
    }

    fn in_cur(&self, p: Piece) -> bool {
        self.cur.iter().any(|dim| dim.contains(&p))
    }

    /// The target dimension of `p`, if the target uses it.
    fn tgt_dim(&self, p: Piece) -> Option<usize> {
        self.tgt.iter().position(|dim| dim.contains(&p))
    }

    fn push(&mut self, mv: Move) {
        self.steps.push(Step {
            mv,
            after: self.cur.clone(),
            on_target: self.on_target,
        });
    }

    // ---- 1. all-slice -------------------------------------------------

    fn try_slice(&mut self) {
        let rank = self.rank();
        let start: Vec<i64> = self.cur.iter().map(|d| product(d)).collect();
        // How much more the target shards each dimension than the diff of
        // the current sharding does.
        let mut cap: Vec<i64> = (0..rank)
            .map(|d| {
                let (i, o) = (product(self.ins(d)), product(self.outs(d)));
                o / gcd(i, o)
            })
            .collect();
        let mut added: DimPieces = vec![Vec::new(); rank];

        // Pieces that must follow a dimension's minor pieces to another
        // dimension are sliced at the source dimension, so that one
        // all-to-all later carries them all, in order.
        for (s, added_s) in added.iter_mut().enumerate() {
            if let Some((t, run, borrowed)) = self.slice_for_all_to_all(s) {
                if cap[t] % borrowed != 0 {
                    continue;
                }
                cap[t] /= borrowed;
                self.cur[s].extend(&run);
                added_s.extend(run);
            }
        }

        // Target pieces in their own dimension, within its capacity.
        let mut leftover: Vec<Piece> = Vec::new();
        for d in 0..rank {
            let wanted: Vec<Piece> = self.outs(d).to_vec();
            for p in wanted {
                if self.in_cur(p) {
                    continue;
                }
                let mut rest = Vec::new();
                if self.slice_piece(d, p, &mut cap, &start, &mut added, &mut rest) {
                    leftover.extend(rest);
                } else {
                    leftover.push(p);
                }
            }
        }

        // What is left, in the first dimension with room for it.
        for d in 0..rank {
            let mut i = 0;
            while cap[d] > 1 && i < leftover.len() {
                let p = leftover[i];
                let mut rest = Vec::new();
                if self.slice_piece(d, p, &mut cap, &start, &mut added, &mut rest) {
                    leftover.splice(i..=i, rest);
                } else {
                    i += 1;
                }
            }
        }

        if added.iter().any(|a| !a.is_empty()) {
            self.push(Move::Slice(added));
        }
    }

    /// Slices dimension `d` by `p`, or by its major part if only that fits
    /// (the minor rest goes to `rest`). False if nothing fits or the slice
    /// would not be exact.
    fn slice_piece(
        &mut self,
        d: usize,
        p: Piece,
        cap: &mut [i64],
        start: &[i64],
        added: &mut DimPieces,
        rest: &mut Vec<Piece>,
    ) -> bool {
        let k = match fit(p, cap[d]) {
            Fit::Whole => p.size,
            Fit::Major(k) => k,
            Fit::No => return false,
        };
        if !exact(self.shape[d], start[d], product(&self.cur[d]) * k) {
            return false;
        }
        let taken = if k < p.size {
            let (a, b) = p.split(k);
            replace_in(&mut self.tgt, p, &[a, b]);
            rest.push(b);
            a
        } else {
            p
        };
        cap[d] /= k;
        self.cur[d].push(taken);
        added[d].push(taken);
        true
    }

    /// If dimension `s` only has pieces to hand over and its minor-most
    /// pieces are the start of a run the target wants in dimension `t`,
    /// followed there by pieces nobody uses yet: those pieces, `t`, and how
    /// many of `t`'s shards the all-to-all will supply.
    fn slice_for_all_to_all(&self, s: usize) -> Option<(usize, Vec<Piece>, i64)> {
        let ins = self.ins(s);
        if ins.is_empty() || !self.outs(s).is_empty() {
            return None;
        }
        let last = *ins.last()?;
        let t = self.tgt_dim(last)?;
        if t == s || !self.ins(t).is_empty() {
            return None;
        }
        let outs_t = self.outs(t);
        let pos = outs_t.iter().position(|&q| q == last)?;
        let run: Vec<Piece> = outs_t[pos + 1..]
            .iter()
            .take_while(|&&q| !self.in_cur(q))
            .copied()
            .collect();
        if run.is_empty() {
            return None;
        }
        // The minor pieces of `s` that already match the run's start.
        let mut common = 0;
        while common < ins.len()
            && common <= pos
            && ins[ins.len() - 1 - common] == outs_t[pos - common]
        {
            common += 1;
        }
        let rest = &ins[..ins.len() - common];
        if rest.iter().any(|&q| self.tgt_dim(q) == Some(t)) {
            return None;
        }
        let new_count = product(&self.cur[s]) * product(&run);
        if self.shape[s] % new_count != 0 {
            return None;
        }
        let moved = product(&ins[ins.len() - common..]) * product(&run);
        Some((t, run, moved))
    }

    // ---- 2. collective-permute ----------------------------------------

    fn try_permute(&mut self) {
        let switch_mesh = !self.on_target;
        let mut changed = false;
        if !self.finishes_without_permute() {
            if let Some((cur, tgt)) = self.rearranged() {
                if cur != self.cur {
                    self.cur = cur;
                    self.tgt = tgt;
                    changed = true;
                }
            }
        }
        if changed || switch_mesh {
            self.on_target = true;
            self.push(Move::Permute);
        }
    }

    /// Whether all-to-alls and all-gathers alone reach the target now.
    fn finishes_without_permute(&self) -> bool {
        let mut probe = Planner {
            shape: self.shape,
            cur: self.cur.clone(),
            tgt: self.tgt.clone(),
            steps: Vec::new(),
            on_target: true,
        };
        probe.try_all_to_alls(true);
        probe.try_all_to_alls(false);
        probe.try_gather();
        probe.cur == probe.tgt
    }

    /// The sharding a collective-permute should produce: each dimension
    /// keeps its prefix and its number of shards, filled with (1) the next
    /// target pieces of that dimension, then (4, 3) pieces the target drops
    /// (to be gathered last), then (2) target pieces bound for other
    /// dimensions (to be moved there by all-to-alls first). Also returns the
    /// target with any piece split on the way. `None` if some dimension
    /// cannot be filled exactly.
    fn rearranged(&self) -> Option<(DimPieces, DimPieces)> {
        let rank = self.rank();
        let mut tgt = self.tgt.clone();
        let prefix: Vec<usize> = (0..rank).map(|d| self.prefix(d)).collect();
        let dropped: DimPieces = (0..rank)
            .map(|d| {
                self.ins(d)
                    .iter()
                    .filter(|&&p| self.tgt_dim(p).is_none())
                    .copied()
                    .collect()
            })
            .collect();
        let mut cap = vec![1; rank];
        let mut placed: DimPieces = vec![Vec::new(); rank];
        let mut spare_out: Vec<Piece> = Vec::new();
        let mut spare_in: DimPieces = vec![Vec::new(); rank];
        for d in 0..rank {
            let total = product(self.ins(d));
            cap[d] = total;
            let mut outs: VecDeque<Piece> = tgt[d][prefix[d]..].iter().copied().collect();
            while let Some(&f) = outs.front() {
                match fit(f, cap[d]) {
                    Fit::No => break,
                    Fit::Whole => {
                        outs.pop_front();
                        cap[d] /= f.size;
                        placed[d].push(f);
                    }
                    Fit::Major(k) => {
                        let (a, b) = f.split(k);
                        replace_in(&mut tgt, f, &[a, b]);
                        outs[0] = b;
                        cap[d] = 1;
                        placed[d].push(a);
                    }
                }
            }
            spare_out.extend(outs);
            // The placed pieces replace dropped pieces from the major end;
            // the ones not replaced come first when put back.
            let mut replaced = total / cap[d];
            let mut kept: VecDeque<Piece> = dropped[d].iter().copied().collect();
            let mut gone = Vec::new();
            while replaced > 1 {
                let Some(&f) = kept.front() else { break };
                match fit(f, replaced) {
                    Fit::No => break,
                    Fit::Whole => {
                        kept.pop_front();
                        replaced /= f.size;
                        gone.push(f);
                    }
                    Fit::Major(k) => {
                        let (a, b) = f.split(k);
                        kept[0] = b;
                        replaced = 1;
                        gone.push(a);
                    }
                }
            }
            spare_in[d] = kept.into_iter().chain(gone).collect();
        }
        let mut back: DimPieces = vec![Vec::new(); rank];
        distribute(&mut spare_out, 0..rank, &mut cap, &mut back, Some(&mut tgt));
        let mut own: DimPieces = vec![Vec::new(); rank];
        for (d, pool) in spare_in.iter_mut().enumerate() {
            distribute(pool, d..=d, &mut cap, &mut own, None);
        }
        let mut any_pool: Vec<Piece> = spare_in.concat();
        let mut any: DimPieces = vec![Vec::new(); rank];
        distribute(&mut any_pool, 0..rank, &mut cap, &mut any, None);
        if cap.iter().any(|&c| c != 1) {
            return None;
        }
        let cur = (0..rank)
            .map(|d| {
                let mut v = self.cur[d][..prefix[d]].to_vec();
                v.extend(&placed[d]);
                v.extend(&any[d]);
                v.extend(&own[d]);
                v.extend(&back[d]);
                v
            })
            .collect();
        Some((cur, tgt))
    }

    // ---- 3. all-to-all ------------------------------------------------

    fn try_all_to_alls(&mut self, in_place_only: bool) {
        for s in 0..self.rank() {
            while let Some((k, t)) = self.all_to_all_from(s, in_place_only) {
                let len = self.cur[s].len();
                let moved = self.cur[s].split_off(len - k);
                self.cur[t].extend(&moved);
                self.push(Move::AllToAll {
                    pieces: moved,
                    src: s,
                    tgt: t,
                });
            }
        }
    }

    /// How many minor pieces of `s` can move to which dimension.
    fn all_to_all_from(&self, s: usize, in_place_only: bool) -> Option<(usize, usize)> {
        let ins = self.ins(s);
        let mut k = 0;
        let mut t = None;
        for &p in ins.iter().rev() {
            match self.tgt_dim(p) {
                Some(d) if d != s && (t.is_none() || t == Some(d)) => {
                    t = Some(d);
                    k += 1;
                }
                _ => break,
            }
        }
        let t = t?;
        let moved = &ins[ins.len() - k..];
        if in_place_only && !(self.ins(t).is_empty() && self.outs(t).starts_with(moved)) {
            return None;
        }
        let g = product(moved);
        let (ns, nt) = (product(&self.cur[s]), product(&self.cur[t]));
        if !exact(self.shape[s], ns, ns / g) || !exact(self.shape[t], nt, nt * g) {
            return None;
        }
        Some((k, t))
    }

    // ---- 4. all-gather ------------------------------------------------

    fn try_gather(&mut self) {
        let rank = self.rank();
        let mut gathered: DimPieces = vec![Vec::new(); rank];
        for (d, out) in gathered.iter_mut().enumerate() {
            let ins = self.ins(d);
            let k = ins
                .iter()
                .rev()
                .take_while(|&&p| self.tgt_dim(p).is_none())
                .count();
            if k == 0 {
                continue;
            }
            let n = product(&self.cur[d]);
            if !exact(self.shape[d], n, n / product(&ins[ins.len() - k..])) {
                continue;
            }
            let len = self.cur[d].len();
            *out = self.cur[d].split_off(len - k);
        }
        if gathered.iter().any(|g| !g.is_empty()) {
            self.push(Move::Gather(gathered));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(axis: usize, size: i64) -> Piece {
        Piece { axis, pre: 1, size }
    }

    fn kinds(steps: &[Step]) -> Vec<&'static str> {
        steps
            .iter()
            .map(|s| match s.mv {
                Move::Slice(_) => "slice",
                Move::Gather(_) => "gather",
                Move::AllToAll { .. } => "a2a",
                Move::Permute => "permute",
            })
            .collect()
    }

    #[test]
    fn spec_examples() {
        let (x, y, z) = (p(0, 2), p(1, 2), p(2, 2));
        let shape = [8, 8, 8];
        let run = |cur: DimPieces, tgt: DimPieces| {
            Planner::new(&shape[..cur.len()], cur, tgt, true)
                .run()
                .expect("plans")
        };
        let s = run(
            vec![vec![x], vec![y], vec![]],
            vec![vec![], vec![y], vec![x]],
        );
        assert_eq!(kinds(&s), ["a2a"]);
        let s = run(vec![vec![x, y], vec![]], vec![vec![z], vec![]]);
        assert_eq!(kinds(&s), ["permute", "gather"]);
        assert_eq!(s[0].after, vec![vec![z, y], vec![]]);
        assert_eq!(
            kinds(&run(vec![vec![x], vec![]], vec![vec![], vec![]])),
            ["gather"]
        );
        assert_eq!(
            kinds(&run(vec![vec![], vec![]], vec![vec![x], vec![]])),
            ["slice"]
        );
    }

    #[test]
    fn exactness_of_padded_resplits() {
        assert!(exact(13, 4, 1));
        assert!(exact(13, 1, 2));
        assert!(!exact(13, 4, 2)); // blocks of 4 vs 7: [8,16) is not [7,14)
        assert!(exact(7, 4, 2)); // both pad to 8
        assert!(exact(16, 4, 2));
    }
}
