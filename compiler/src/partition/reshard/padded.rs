//! Reshards of dimensions that do not divide evenly (SPEC §2: a dimension
//! of `d` elements split `n` ways is `n` blocks of `ceil(d/n)`, padding at
//! the end).
//!
//! Moving whole blocks keeps such a tensor exact only while the padded
//! extent `n * ceil(d/n)` stays the same ([`crate::partition::reshard::planner::exact`]);
//! Shardy's own test shapes (8 elements over 16 devices, 10 over 4) break
//! that at almost every step. Two views make more plans exact:
//!
//! - **Virtual extents.** The blocks of `n` shards of `d` elements are
//!   also the blocks of a longer dimension of `v` elements, whose tail past
//!   `d` is padding, for any `v` with `ceil(v/n) == ceil(d/n)`. The
//!   planner may lay a dimension out over such a `v` (within what the
//!   source's and the target's blocks allow) so that the numbers of shards
//!   it passes through divide it: then every step moves whole blocks.
//! - **Padding selectors.** When the major-most pieces of a target
//!   dimension can be dropped without changing its block size, every device
//!   whose digit along them is not 0 holds only padding. The planner then
//!   aims for the target without them, and they are added last, at the
//!   major end, without moving data (an all-slice keeps block 0 of 1, the
//!   rest is padding), or by an all-to-all that takes them from the
//!   dimension they leave.

use crate::partition::reshard::pieces::{align, product, DimPieces, Piece};
use crate::partition::reshard::planner::{exact, Move, Step};

/// Candidate plans are at most this many per reshard.
const MAX_CANDIDATES: usize = 64;

/// How one candidate plan lays the tensor out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Candidate {
    /// Per dimension, the extent a sharded dimension is laid out over.
    pub extent: Vec<i64>,
    /// All-to-alls that first move padding selectors of the source to
    /// where the target wants them (see [`source_moves`]).
    pub prefix: Vec<Step>,
    /// The source after `prefix`, aligned with `target` and `selectors`.
    pub start: DimPieces,
    /// The target without its padding selectors (what the planner aims
    /// for).
    pub target: DimPieces,
    /// Per dimension, the padding selectors (major-most target pieces).
    pub selectors: DimPieces,
}

fn padded(d: i64, n: i64) -> i64 {
    n * ((d + n - 1) / n)
}

/// Per dimension, the largest major part of `tgt`'s pieces whose removal
/// keeps the block size of a dimension of `shape[d]` elements (a piece is
/// split if only its major part qualifies), and the pieces after it.
fn padding_selectors(shape: &[i64], tgt: &DimPieces) -> (DimPieces, DimPieces) {
    tgt.iter()
        .zip(shape)
        .map(|(pieces, &d)| {
            let block = |ps: &[Piece]| (d + product(ps) - 1) / product(ps);
            let whole = block(pieces);
            let keeps = |rest: &[Piece]| !rest.is_empty() && block(rest) == whole;
            let k = (0..pieces.len())
                .take_while(|&k| keeps(&pieces[k + 1..]))
                .count();
            let mut selectors = pieces[..k].to_vec();
            let mut rest = pieces[k..].to_vec();
            if let Some(&p) = rest.first() {
                let major = (2..p.size).rev().filter(|f| p.size % f == 0).find(|&f| {
                    let (_, minor) = p.split(f);
                    let mut r = vec![minor];
                    r.extend(&rest[1..]);
                    keeps(&r)
                });
                if let Some(f) = major {
                    let (a, b) = p.split(f);
                    selectors.push(a);
                    rest[0] = b;
                }
            }
            (selectors, rest)
        })
        .unzip()
}

/// The extents dimension `d` may be laid out over: up to the padded
/// extent of the blocks of every sharding with `counts` shards it must
/// keep (the source's, after any selectors moved away, and the planner
/// target's), among the
/// padded extents `m * ceil(d/m)` of the divisors `m` of `devices` (the
/// real size first).
fn extents_of_dim(d: i64, devices: i64, counts: &[i64]) -> Vec<i64> {
    let limit = counts
        .iter()
        .copied()
        .filter(|&n| n > 1)
        .map(|n| padded(d, n))
        .min()
        .unwrap_or(i64::MAX);
    let mut out: Vec<i64> = (1..=devices)
        .filter(|m| devices % m == 0)
        .map(|m| padded(d, m))
        .filter(|&v| v <= limit)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The layouts worth planning a reshard of `shape` from `src` to `tgt`
/// (aligned pieces) on a mesh of `devices` devices: the real shape first
/// (with no selectors), then virtual extents, then the same with padding
/// selectors split off the target. Nothing but the first where no
/// dimension pads.
pub(crate) fn candidates(
    shape: &[i64],
    devices: i64,
    src: &DimPieces,
    tgt: &DimPieces,
) -> Vec<Candidate> {
    let rank = shape.len();
    let plain = Layout {
        origin: src.clone(),
        prefix: Vec::new(),
        start: src.clone(),
        target: tgt.clone(),
        selectors: vec![Vec::new(); rank],
    };
    let first = plain.with_extent(shape.to_vec());
    let divides = |d: usize| devices <= 1 || shape[d] % devices == 0;
    if (0..rank).all(divides) {
        return vec![first];
    }
    let mut layouts = vec![plain];
    if let Some(l) = target_selectors(shape, &layouts[0]) {
        layouts.push(l);
    }
    let moved: Vec<Layout> = layouts
        .iter()
        .filter_map(|l| source_moves(shape, l))
        .collect();
    layouts.extend(moved);
    let mut out = vec![first];
    for l in layouts {
        let per_dim: Vec<Vec<i64>> = (0..rank)
            .map(|d| {
                let counts = [&l.origin[d], &l.start[d], &l.target[d]].map(|p| product(p));
                extents_of_dim(shape[d], devices, &counts)
            })
            .collect();
        let mut extents: Vec<Vec<i64>> = vec![Vec::new()];
        for options in &per_dim {
            extents = extents
                .iter()
                .flat_map(|prefix| {
                    options.iter().map(move |&v| {
                        let mut e = prefix.clone();
                        e.push(v);
                        e
                    })
                })
                .collect();
        }
        // Fewest dimensions off their real size first.
        extents.sort_by_key(|e| e.iter().zip(shape).filter(|(v, d)| v != d).count());
        for extent in extents {
            let c = l.with_extent(extent);
            if !out.contains(&c) && c.prefix_exact() {
                out.push(c);
            }
        }
    }
    out.truncate(MAX_CANDIDATES);
    out
}

/// A candidate without its extent.
#[derive(Debug, Clone)]
struct Layout {
    /// The source, aligned with the rest.
    origin: DimPieces,
    prefix: Vec<Step>,
    start: DimPieces,
    target: DimPieces,
    selectors: DimPieces,
}

impl Layout {
    fn with_extent(&self, extent: Vec<i64>) -> Candidate {
        Candidate {
            extent,
            prefix: self.prefix.clone(),
            start: self.start.clone(),
            target: self.target.clone(),
            selectors: self.selectors.clone(),
        }
    }
}

impl Candidate {
    /// Whether the prefix's all-to-alls move whole blocks on this extent
    /// where they add pieces (where they take selectors away the blocks
    /// keep their size by construction, see [`extents_of_dim`]).
    fn prefix_exact(&self) -> bool {
        self.prefix.iter().all(|step| match &step.mv {
            Move::AllToAll { pieces, tgt, .. } => {
                let n = product(&step.after[*tgt]) / product(pieces);
                exact(self.extent[*tgt], n, n * product(pieces))
            }
            _ => true,
        })
    }
}

/// `pieces` split after its major part of `n` shards (`None` if no
/// prefix has that product).
fn split_at_product(pieces: &[Piece], n: i64) -> Option<(Vec<Piece>, Vec<Piece>)> {
    let k = (0..=pieces.len()).find(|&k| product(&pieces[..k]) == n)?;
    Some((pieces[..k].to_vec(), pieces[k..].to_vec()))
}

/// `l` with the padding selectors split off its target (`None` if the
/// target has none).
fn target_selectors(shape: &[i64], l: &Layout) -> Option<Layout> {
    let (selectors, rest) = padding_selectors(shape, &l.target);
    if selectors.iter().all(Vec::is_empty) {
        return None;
    }
    // Align the source with the selectors (they may split a piece), then
    // split the aligned target at the same place.
    let mut start = l.start.clone();
    let mut full: DimPieces = selectors
        .iter()
        .zip(&rest)
        .map(|(s, r)| [&s[..], &r[..]].concat())
        .collect();
    if !align(&mut start, &mut full) {
        return None;
    }
    let (sel, target): (DimPieces, DimPieces) = full
        .iter()
        .zip(&selectors)
        .map(|(f, s)| split_at_product(f, product(s)))
        .collect::<Option<Vec<_>>>()?
        .into_iter()
        .unzip();
    Some(Layout {
        origin: start.clone(),
        prefix: Vec::new(),
        start,
        target,
        selectors: sel,
    })
}

/// `l` with all-to-alls first that move padding selectors of the source
/// (major-most pieces whose removal keeps a dimension's block size, so
/// only the devices whose digit along them is 0 hold data there) straight
/// to the place the target wants them: the major-most selectors of a
/// dimension that the target has, in order, right after what the target
/// dimension already holds. `None` if there are none.
fn source_moves(shape: &[i64], l: &Layout) -> Option<Layout> {
    let (selectors, rest) = padding_selectors(shape, &l.start);
    if selectors.iter().all(Vec::is_empty) {
        return None;
    }
    let mut start: DimPieces = selectors
        .iter()
        .zip(&rest)
        .map(|(s, r)| [&s[..], &r[..]].concat())
        .collect();
    let mut full_target: DimPieces = l
        .selectors
        .iter()
        .zip(&l.target)
        .map(|(s, t)| [&s[..], &t[..]].concat())
        .collect();
    if !align(&mut start, &mut full_target) {
        return None;
    }
    let split = |list: &DimPieces, by: &DimPieces| -> Option<(DimPieces, DimPieces)> {
        let parts = list
            .iter()
            .zip(by)
            .map(|(f, s)| split_at_product(f, product(s)))
            .collect::<Option<Vec<_>>>()?;
        Some(parts.into_iter().unzip())
    };
    let (src_sel, _) = split(&start, &selectors)?;
    let (tgt_sel, target) = split(&full_target, &l.selectors)?;
    let origin = start.clone();
    let mut cur = start;
    let mut prefix = Vec::new();
    for (s, sel) in src_sel.iter().enumerate() {
        let Some(&first) = sel.first() else { continue };
        let Some(t) = target.iter().position(|dim| dim.contains(&first)) else {
            continue;
        };
        if t == s {
            continue;
        }
        let fits = |k: usize| {
            let mut want = cur[t].clone();
            want.extend(&sel[..k]);
            target[t].starts_with(&want)
        };
        let Some(k) = (1..=sel.len()).rev().find(|&k| fits(k)) else {
            continue;
        };
        let moved: Vec<Piece> = cur[s].drain(..k).collect();
        cur[t].extend(&moved);
        prefix.push(Step {
            mv: Move::AllToAll {
                pieces: moved,
                src: s,
                tgt: t,
            },
            after: cur.clone(),
            on_target: true,
        });
    }
    if prefix.is_empty() {
        return None;
    }
    Some(Layout {
        origin,
        prefix,
        start: cur,
        target,
        selectors: tgt_sel,
    })
}

/// Completes `steps` (which go from `c.start` to `c.target`) with
/// the padding selectors: a final gather of selector pieces that leave one
/// dimension for the selectors of another becomes an all-to-all placing
/// them at its major end; selectors nobody holds are sliced in, major,
/// before the remaining gather.
pub(crate) fn add_selectors(c: &Candidate, mut steps: Vec<Step>) -> Vec<Step> {
    let start = &c.start;
    if c.selectors.iter().all(Vec::is_empty) {
        return steps;
    }
    let on_target = steps.last().is_none_or(|s| s.on_target);
    // The state before a final gather, and what it gathers.
    let (mut cur, mut gathered) = match steps.last() {
        Some(Step {
            mv: Move::Gather(g),
            ..
        }) => {
            let g = g.clone();
            steps.pop();
            let before = steps
                .last()
                .map_or_else(|| start.clone(), |s| s.after.clone());
            (before, g)
        }
        _ => (
            steps
                .last()
                .map_or_else(|| start.clone(), |s| s.after.clone()),
            vec![Vec::new(); c.target.len()],
        ),
    };
    let mut placed: DimPieces = vec![Vec::new(); c.target.len()];
    for s in 0..gathered.len() {
        for t in (0..c.selectors.len()).filter(|&t| t != s) {
            let sel = &c.selectors[t];
            // The minor-most gathered pieces that end `t`'s selectors.
            let k = (1..=gathered[s].len().min(sel.len()))
                .rev()
                .find(|&k| gathered[s][gathered[s].len() - k..] == sel[sel.len() - k..]);
            let Some(k) = k else { continue };
            if !placed[t].is_empty() {
                continue;
            }
            let run: Vec<Piece> = gathered[s][gathered[s].len() - k..].to_vec();
            let (ns, left) = (
                product(&cur[s]),
                product(&gathered[s][..gathered[s].len() - k]),
            );
            let g = product(&run);
            let rest_exact = exact(c.extent[s], ns / g, ns / g / left);
            if !exact(c.extent[s], ns, ns / g) || !rest_exact {
                continue;
            }
            let len = gathered[s].len();
            gathered[s].truncate(len - k);
            let keep = cur[s].len() - k;
            cur[s].truncate(keep);
            let mut tgt_dim = run.clone();
            tgt_dim.extend(&cur[t]);
            cur[t] = tgt_dim;
            placed[t] = run.clone();
            steps.push(Step {
                mv: Move::AllToAll {
                    pieces: run,
                    src: s,
                    tgt: t,
                },
                after: cur.clone(),
                on_target,
            });
        }
    }
    let sliced: DimPieces = c
        .selectors
        .iter()
        .zip(&placed)
        .map(|(sel, p)| sel[..sel.len() - p.len()].to_vec())
        .collect();
    // Selectors still held elsewhere are sliced once the gather freed them
    // (any part of them: a selector "c" waits for a gather of "c":(2)2).
    let overlap = |p: &Piece, q: &Piece| p.axis == q.axis && p.pre < q.end() && q.pre < p.end();
    let held = sliced
        .iter()
        .flatten()
        .any(|p| gathered.iter().flatten().any(|q| overlap(p, q)));
    let slice = |cur: &mut DimPieces, steps: &mut Vec<Step>| {
        if sliced.iter().all(Vec::is_empty) {
            return;
        }
        for (dim, s) in cur.iter_mut().zip(&sliced) {
            let mut v = s.clone();
            v.extend(dim.iter().copied());
            *dim = v;
        }
        steps.push(Step {
            mv: Move::Slice(sliced.clone()),
            after: cur.clone(),
            on_target,
        });
    };
    if !held {
        slice(&mut cur, &mut steps);
    }
    if gathered.iter().any(|g| !g.is_empty()) {
        for (dim, g) in cur.iter_mut().zip(&gathered) {
            // The gathered pieces are still the minor end of their
            // dimension (all-to-alls took only pieces after them; selectors
            // went in at the major end).
            let keep = dim.len() - g.len();
            dim.truncate(keep);
        }
        steps.push(Step {
            mv: Move::Gather(gathered),
            after: cur.clone(),
            on_target,
        });
    }
    if held {
        slice(&mut cur, &mut steps);
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(axis: usize, size: i64) -> Piece {
        Piece { axis, pre: 1, size }
    }

    #[test]
    fn selectors_keep_the_block_size() {
        // 16 rows over x(4) y(2) z(4): blocks of 1; without x's first
        // half (as a piece of 2) 16 blocks of 1 still cover the rows.
        let (x1, x2, y, z) = (
            Piece {
                axis: 0,
                pre: 1,
                size: 2,
            },
            Piece {
                axis: 0,
                pre: 2,
                size: 2,
            },
            p(1, 2),
            p(2, 4),
        );
        let (sel, rest) = padding_selectors(&[16], &vec![vec![x1, x2, y, z]]);
        assert_eq!((sel, rest), (vec![vec![x1]], vec![vec![x2, y, z]]));
        // A whole x(4) is split: its major half selects.
        let x = p(0, 4);
        let (sel, rest) = padding_selectors(&[16], &vec![vec![x, y, z]]);
        assert_eq!((sel, rest), (vec![vec![x1]], vec![vec![x2, y, z]]));
        // 32 rows: every piece carries data.
        let (sel, _) = padding_selectors(&[32], &vec![vec![x1, x2, y, z]]);
        assert_eq!(sel, vec![vec![]]);
    }

    #[test]
    fn extents_stay_within_both_blocks() {
        // 8 over 16 shards pads to 16; unsharded on the other side.
        assert_eq!(extents_of_dim(8, 16, &[16, 1]), vec![8, 16]);
        // 10 over 4 pads to 12, over 8 to 16: only 10 and 12 keep both.
        assert_eq!(extents_of_dim(10, 8, &[4, 8]), vec![10, 12]);
        // Divisible: the size itself.
        assert_eq!(extents_of_dim(16, 8, &[4, 8]), vec![16]);
    }
}
