//! A brute-force check of the reshard planner: on small meshes, for every
//! pair of shardings of a small tensor, the cheapest sequence of
//! whole-block collectives found by search; meshrun's plan
//! (`plan_reshard`) must not move more bytes per device.
//!
//! This replaces arguments of the form "no cheaper plan exists" (see
//! `reshard_shardy.rs`) with a proof by enumeration over the model below,
//! and it shows where meshrun's plan is as good as any whole-block plan.
//!
//! # The model (independent of the planner's code)
//!
//! Meshes: `a=2, b=2, c=2`, and `x=4, y=2` whose `x` is split into the
//! sub-axes `"x":(1)2` and `"x":(2)2`. Either way the mesh is three
//! *pieces* of size 2 and a device's coordinate along piece `p` is bit
//! `2 - p` of its id; a sharding is, per tensor dimension, an ordered list
//! of pieces (major first; `"x":(1)2` right before `"x":(2)2` is `"x"`).
//!
//! A *state* is what every device holds: per dimension the pieces and the
//! block length `b`. The device whose shard index along a dimension is `i`
//! (its coordinates along that dimension's pieces in mixed radix) holds
//! elements `[i*b, i*b + b)` of it, padding past the dimension's end. The
//! target and the source have the sharding's own blocks (`ceil(d/n)`;
//! the whole dimension when unsharded); in between a padded dimension may
//! be laid out over longer blocks (that is how padded shards line up,
//! and how padding-only shards arise). Two states whose devices hold the
//! same data are one node of the search.
//!
//! Moves, each a collective on whole local blocks, defined by what it does
//! to the data (the semantics of `partition::reshard::collective`), not by
//! sharding rules:
//! - **all-slice** over unused pieces (per dimension, in any order): each
//!   member keeps chunk `q` of its block, `q` its rank along the
//!   dimension's new pieces; 0 bytes;
//! - **all-gather** over used pieces: members' blocks concatenated in rank
//!   order, cut to the new block length; `(G-1) * in` bytes;
//! - **all-to-all** over pieces leaving one dimension for another:
//!   gather along the source dimension, slice along the target one;
//!   `(G-1) * chunk` bytes, the chunk being the input block cut to the
//!   output's length along the target dimension;
//! - **collective-permute** between states with the same shards and
//!   blocks per dimension: `in * moved / 8` bytes, where a device moves
//!   if its block index changes (self-pairs stay, as meshrun counts).
//!
//! A move is allowed when its result is exactly some state's data on every
//! device (pieces of the result in any order, any block length), checked
//! dimension by dimension on all 8 devices. The byte counts are those of
//! `Collective::bytes_per_device`, in eighths of a byte so that Dijkstra's
//! sums are exact.
//!
//! The model is checked against meshrun's simulator, not trusted: the
//! sources' and targets' data in the model are `layout_blocks` of their
//! shardings, and every move on an optimal path is rebuilt as a meshrun
//! `Collective`, run by `simulate::run` on the model's blocks, and must
//! leave the model's blocks, receive the bytes the model counts and have
//! that `bytes_per_device`. So every optimum is a sequence meshrun could
//! emit and run.
//!
//! What the model leaves out: partial-sum collectives (no unreduced axes
//! here), and the remap of `partition::lower` (devices fetch single
//! elements; not a whole-block collective, and chosen after
//! `plan_reshard`). A state's blocks are compared per dimension, so a
//! device whose block is all padding along one dimension must still hold
//! the right rows of the others (meshrun's simulator would accept any);
//! if meshrun gained by that, it would show as "below the optimum", which
//! the test rejects.
//!
//! # Cases
//!
//! Rank 2 (`8x16`) on both meshes, any block lengths in between (1339
//! states); rank 3 (`8x8x8`) on `a, b, c` with the shardings' own blocks
//! only (106 states: `rank_2_needs_no_longer_blocks` shows that longer
//! blocks never pay without padding in rank 2; rank 3 on `x, y` is the
//! same graph under other names, as the rank-2 test checks); and the
//! non-divisible `6x5` on `x, y`, any block lengths.
//!
//! # The claim
//!
//! For every case and every (source, target) pair of valid shardings:
//! meshrun's lowering reaches the target (`lower_and_check`, simulated)
//! and its bytes per device are at most the optimum, except for the pairs
//! recorded in `tests/reshard_bruteforce/<case>.txt` (the test fails if
//! one appears, disappears or changes its bytes); and never below the
//! optimum (that would mean the model misses a move).

mod reshard_common;

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap};
use std::path::Path;
use std::time::Instant;

use meshrun_compiler::ir::ElemType;
use meshrun_compiler::partition::reshard::simulate::{
    self, compare, layout_blocks, Block, Blocks, Cell,
};
use meshrun_compiler::partition::{device_groups, AllToAllDims, Collective, CollectiveKind};
use meshrun_compiler::sharding::validate::validate_sharding;
use meshrun_compiler::sharding::{AxisRef, DimSharding, Mesh, TensorSharding};
use reshard_common::lower_and_check;

const ELEM: ElemType = ElemType::F32;
const ELEM_BYTES: u64 = 4;
/// Pieces per mesh, each of size 2, so 8 devices.
const PIECES: u8 = 3;
const DEVICES: i64 = 1 << PIECES;
/// Costs are integers in eighths of a byte: a permute's bytes average over
/// the 8 devices.
const UNIT: u64 = DEVICES as u64;
const PAD: i64 = -1;

// ---------------------------------------------------------------------------
// One dimension

/// Device `dev`'s coordinate along piece `p` (piece 0 is the most
/// significant, as in a row-major mesh).
fn coord(dev: i64, p: u8) -> i64 {
    (dev >> (PIECES - 1 - p)) & 1
}

/// `dev` with its coordinates along `order` set to the digits of `rank`
/// (the first piece most significant), as in a collective's group.
fn with_rank(dev: i64, order: &[u8], rank: i64) -> i64 {
    let mut out = dev;
    for (k, &p) in order.iter().enumerate() {
        let bit = (rank >> (order.len() - 1 - k)) & 1;
        let mask = 1 << (PIECES - 1 - p);
        out = (out & !mask) | (bit * mask);
    }
    out
}

/// The mixed-radix index of `dev` over `pieces` (a shard index, or a rank
/// in a group over those pieces).
fn index_over(pieces: &[u8], dev: i64) -> i64 {
    pieces.iter().fold(0, |acc, &p| acc * 2 + coord(dev, p))
}

/// One dimension of a state: its pieces (major first) and block length.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Dim1 {
    pieces: Vec<u8>,
    block: i64,
}

impl Dim1 {
    fn shards(&self) -> i64 {
        1 << self.pieces.len()
    }

    /// What `dev` holds along this dimension of `size` elements.
    fn content(&self, size: i64, dev: i64) -> Vec<i64> {
        let i = index_over(&self.pieces, dev);
        (0..self.block)
            .map(|p| {
                let g = i * self.block + p;
                if g < size {
                    g
                } else {
                    PAD
                }
            })
            .collect()
    }
}

/// Every ordering of every non-empty subset of `items`.
fn arrangements(items: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (i, &first) in items.iter().enumerate() {
        let rest: Vec<u8> = items
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i)
            .map(|(_, &p)| p)
            .collect();
        out.push(vec![first]);
        for tail in arrangements(&rest) {
            let mut v = vec![first];
            v.extend(tail);
            out.push(v);
        }
    }
    out
}

/// Every ordering of all of `items`.
fn permutations(items: &[u8]) -> Vec<Vec<u8>> {
    if items.is_empty() {
        return vec![Vec::new()];
    }
    arrangements(items)
        .into_iter()
        .filter(|v| v.len() == items.len())
        .collect()
}

/// The block lengths a dimension of `size` split `n` ways may have: the
/// sharding's own (`ceil(size/n)`, the whole dimension when `n == 1`), or,
/// with `any`, every length that still holds all the data, up to `size`.
fn block_lengths(size: i64, n: i64, any: bool) -> Vec<i64> {
    let own = (size + n - 1) / n;
    if n == 1 {
        vec![size]
    } else if any {
        (own..=size.max(own)).collect()
    } else {
        vec![own]
    }
}

/// Every state of one dimension of `size` elements, which hold the same
/// data (aliases), and the all-slices and all-gathers between them.
struct DimSpace {
    size: i64,
    states: Vec<Dim1>,
    /// Per state, a data class: equal classes hold the same data.
    class: Vec<usize>,
    /// Per state: (pieces sliced, in group order; resulting state).
    slices: Vec<Vec<(Vec<u8>, usize)>>,
    /// Per state: (pieces gathered, in group order; resulting state).
    gathers: Vec<Vec<(Vec<u8>, usize)>>,
}

impl DimSpace {
    fn new(size: i64, any_blocks: bool) -> DimSpace {
        let all: Vec<u8> = (0..PIECES).collect();
        let mut lists = vec![Vec::new()];
        lists.extend(arrangements(&all));
        let mut states = Vec::new();
        for pieces in lists {
            for block in block_lengths(size, 1 << pieces.len(), any_blocks) {
                states.push(Dim1 {
                    pieces: pieces.clone(),
                    block,
                });
            }
        }
        let index: HashMap<Dim1, usize> = states
            .iter()
            .enumerate()
            .map(|(i, s)| (s.clone(), i))
            .collect();
        let mut classes: HashMap<Vec<Vec<i64>>, usize> = HashMap::new();
        let class = states
            .iter()
            .map(|s| {
                let data: Vec<Vec<i64>> = (0..DEVICES).map(|d| s.content(size, d)).collect();
                let next = classes.len();
                *classes.entry(data).or_insert(next)
            })
            .collect();
        let mut space = DimSpace {
            size,
            states,
            class,
            slices: Vec::new(),
            gathers: Vec::new(),
        };
        for u in 0..space.states.len() {
            let from = space.states[u].clone();
            let unused: Vec<u8> = all
                .iter()
                .copied()
                .filter(|p| !from.pieces.contains(p))
                .collect();
            let mut slices = Vec::new();
            for order in arrangements(&unused) {
                let mut union = from.pieces.clone();
                union.extend(&order);
                for pieces in permutations(&union) {
                    for block in block_lengths(size, 1 << pieces.len(), any_blocks) {
                        let to = Dim1 {
                            pieces: pieces.clone(),
                            block,
                        };
                        if space.slice_ok(&from, &order, &to) {
                            slices.push((order.clone(), index[&to]));
                        }
                    }
                }
            }
            let mut gathers = Vec::new();
            for order in arrangements(&from.pieces) {
                let rest: Vec<u8> = from
                    .pieces
                    .iter()
                    .copied()
                    .filter(|p| !order.contains(p))
                    .collect();
                let limit = (1 << order.len()) * from.block;
                for pieces in permutations(&rest) {
                    for block in block_lengths(size, 1 << pieces.len(), any_blocks) {
                        let to = Dim1 {
                            pieces: pieces.clone(),
                            block,
                        };
                        // A gather cannot produce more than the members'
                        // blocks put together.
                        if block <= limit && space.gather_ok(&from, &order, &to) {
                            gathers.push((order.clone(), index[&to]));
                        }
                    }
                }
            }
            space.slices.push(slices);
            space.gathers.push(gathers);
        }
        space
    }

    /// Whether slicing `from` over `order` (member `q` keeps chunk `q` of
    /// length `to.block`, padding past its block) leaves exactly `to`'s
    /// data on every device.
    fn slice_ok(&self, from: &Dim1, order: &[u8], to: &Dim1) -> bool {
        (0..DEVICES).all(|dev| {
            let old = from.content(self.size, dev);
            let q = index_over(order, dev);
            let got: Vec<i64> = (0..to.block)
                .map(|i| {
                    let at = q * to.block + i;
                    if at < from.block {
                        old[at as usize]
                    } else {
                        PAD
                    }
                })
                .collect();
            got == to.content(self.size, dev)
        })
    }

    /// Whether gathering `from` over `order` (the members' blocks in rank
    /// order, cut to `to.block`) leaves exactly `to`'s data everywhere.
    fn gather_ok(&self, from: &Dim1, order: &[u8], to: &Dim1) -> bool {
        (0..DEVICES).all(|dev| {
            let got: Vec<i64> = (0..to.block)
                .map(|i| {
                    let member = with_rank(dev, order, i / from.block);
                    from.content(self.size, member)[(i % from.block) as usize]
                })
                .collect();
            got == to.content(self.size, dev)
        })
    }
}

// ---------------------------------------------------------------------------
// Whole tensors

/// A move between two states, for reporting and for rebuilding it as a
/// meshrun collective.
#[derive(Debug, Clone, PartialEq)]
enum Move {
    /// Per dimension, the pieces sliced (group order).
    Slice(Vec<Vec<u8>>),
    /// Per dimension, the pieces gathered (group order).
    Gather(Vec<Vec<u8>>),
    AllToAll {
        order: Vec<u8>,
        src: usize,
        tgt: usize,
    },
    Permute,
}

/// All states of a tensor: per dimension an index into its `DimSpace`,
/// pieces disjoint across dimensions.
struct Space {
    shape: Vec<i64>,
    dims: Vec<DimSpace>,
    states: Vec<Vec<usize>>,
    index: HashMap<Vec<usize>, usize>,
    /// Per state its node (data class); per node its states.
    node: Vec<usize>,
    members: Vec<Vec<usize>>,
    /// States with the same shards and blocks per dimension.
    same_blocks: HashMap<Vec<(i64, i64)>, Vec<usize>>,
    /// Per state, its successors and the cheapest cost to each.
    succ: Vec<Vec<(usize, u64)>>,
}

impl Space {
    fn new(shape: &[i64], any_blocks: bool) -> Space {
        let dims: Vec<DimSpace> = shape
            .iter()
            .map(|&d| DimSpace::new(d, any_blocks))
            .collect();
        let mut states = Vec::new();
        fn fill(dims: &[DimSpace], prefix: &mut Vec<usize>, used: u8, out: &mut Vec<Vec<usize>>) {
            let d = prefix.len();
            if d == dims.len() {
                out.push(prefix.clone());
                return;
            }
            for (i, s) in dims[d].states.iter().enumerate() {
                let mask = s.pieces.iter().fold(0u8, |m, &p| m | (1 << p));
                if mask & used == 0 {
                    prefix.push(i);
                    fill(dims, prefix, used | mask, out);
                    prefix.pop();
                }
            }
        }
        fill(&dims, &mut Vec::new(), 0, &mut states);
        let index = states
            .iter()
            .enumerate()
            .map(|(i, s)| (s.clone(), i))
            .collect();
        let mut classes: HashMap<Vec<usize>, usize> = HashMap::new();
        let mut members: Vec<Vec<usize>> = Vec::new();
        let mut node = Vec::with_capacity(states.len());
        let mut same_blocks: HashMap<Vec<(i64, i64)>, Vec<usize>> = HashMap::new();
        for (i, s) in states.iter().enumerate() {
            let key: Vec<usize> = s.iter().zip(&dims).map(|(&u, ds)| ds.class[u]).collect();
            let next = classes.len();
            let c = *classes.entry(key).or_insert(next);
            if c == members.len() {
                members.push(Vec::new());
            }
            members[c].push(i);
            node.push(c);
            let sig = s
                .iter()
                .zip(&dims)
                .map(|(&u, ds)| (ds.states[u].shards(), ds.states[u].block))
                .collect();
            same_blocks.entry(sig).or_default().push(i);
        }
        let mut space = Space {
            shape: shape.to_vec(),
            dims,
            states,
            index,
            node,
            members,
            same_blocks,
            succ: Vec::new(),
        };
        space.succ = (0..space.states.len())
            .map(|s| {
                let mut best: HashMap<usize, u64> = HashMap::new();
                for (to, cost, _) in space.moves(s) {
                    let e = best.entry(to).or_insert(cost);
                    *e = (*e).min(cost);
                }
                let mut v: Vec<(usize, u64)> = best.into_iter().collect();
                v.sort_unstable();
                v
            })
            .collect();
        space
    }

    fn dim(&self, s: usize, d: usize) -> &Dim1 {
        &self.dims[d].states[self.states[s][d]]
    }

    fn blocks(&self, s: usize) -> Vec<i64> {
        (0..self.shape.len())
            .map(|d| self.dim(s, d).block)
            .collect()
    }

    fn used(&self, s: usize) -> u8 {
        (0..self.shape.len())
            .flat_map(|d| self.dim(s, d).pieces.iter())
            .fold(0, |m, &p| m | (1 << p))
    }

    /// Every move out of state `s`: (state reached, cost, move).
    fn moves(&self, s: usize) -> Vec<(usize, u64, Move)> {
        let rank = self.shape.len();
        let cur = &self.states[s];
        let in_elems: u64 = self.blocks(s).iter().product::<i64>() as u64;
        let bytes = |elems: u64| elems * ELEM_BYTES * UNIT;
        let mut out = Vec::new();

        // All-slices and all-gathers: per dimension stay, or slice by
        // unused pieces (gather used ones); one collective over them all.
        self.per_dim_moves(s, true, &mut out);
        self.per_dim_moves(s, false, &mut out);

        // All-to-alls: a gather along `src` and a slice along `tgt` over
        // the same pieces in the same group order.
        for src in 0..rank {
            for tgt in 0..rank {
                if src == tgt {
                    continue;
                }
                for (order, vs) in &self.dims[src].gathers[cur[src]] {
                    for (o2, vt) in &self.dims[tgt].slices[cur[tgt]] {
                        if o2 != order {
                            continue;
                        }
                        let mut next = cur.clone();
                        next[src] = *vs;
                        next[tgt] = *vt;
                        let g = 1u64 << order.len();
                        let mut chunk = self.blocks(s);
                        chunk[tgt] = self.dims[tgt].states[*vt].block;
                        let elems = chunk.iter().product::<i64>() as u64;
                        out.push((
                            self.index[&next],
                            (g - 1) * bytes(elems),
                            Move::AllToAll {
                                order: order.clone(),
                                src,
                                tgt,
                            },
                        ));
                    }
                }
            }
        }

        // Collective-permutes to states with the same blocks.
        let sig: Vec<(i64, i64)> = (0..rank)
            .map(|d| (self.dim(s, d).shards(), self.dim(s, d).block))
            .collect();
        for &t in &self.same_blocks[&sig] {
            if t == s {
                continue;
            }
            let moved = (0..DEVICES)
                .filter(|&dev| self.block_index(s, dev) != self.block_index(t, dev))
                .count() as u64;
            // In eighths of a byte: in * moved / 8 bytes.
            out.push((t, moved * in_elems * ELEM_BYTES, Move::Permute));
        }
        out
    }

    /// The all-slices (`is_slice`) or all-gathers out of `s`: every
    /// combination of a per-dimension slice (gather) or nothing, over
    /// disjoint pieces, at least one dimension changing.
    fn per_dim_moves(&self, s: usize, is_slice: bool, out: &mut Vec<(usize, u64, Move)>) {
        let rank = self.shape.len();
        let cur = &self.states[s];
        let in_bytes = self.blocks(s).iter().product::<i64>() as u64 * ELEM_BYTES * UNIT;
        let used = self.used(s);
        // Depth-first over dimensions: next state so far, per-dimension
        // group orders, and the pieces the collective runs over.
        let mut stack: Vec<(Vec<usize>, Vec<Vec<u8>>, u8)> = vec![(Vec::new(), Vec::new(), 0)];
        while let Some((next, orders, taken)) = stack.pop() {
            let d = next.len();
            if d == rank {
                if taken != 0 {
                    let g = 1u64 << taken.count_ones();
                    let (cost, mv) = if is_slice {
                        (0, Move::Slice(orders))
                    } else {
                        ((g - 1) * in_bytes, Move::Gather(orders))
                    };
                    out.push((self.index[&next], cost, mv));
                }
                continue;
            }
            let space = &self.dims[d];
            let options = if is_slice {
                &space.slices[cur[d]]
            } else {
                &space.gathers[cur[d]]
            };
            for (order, v) in options.iter().rev() {
                let mask = order.iter().fold(0u8, |m, &p| m | (1 << p));
                // A slice must use pieces no dimension uses yet.
                if mask & taken != 0 || (is_slice && mask & used != 0) {
                    continue;
                }
                let mut n = next.clone();
                n.push(*v);
                let mut o = orders.clone();
                o.push(order.clone());
                stack.push((n, o, taken | mask));
            }
            let mut stay = next;
            stay.push(cur[d]);
            let mut o = orders;
            o.push(Vec::new());
            stack.push((stay, o, taken));
        }
    }

    fn block_index(&self, s: usize, dev: i64) -> Vec<i64> {
        (0..self.shape.len())
            .map(|d| index_over(&self.dim(s, d).pieces, dev))
            .collect()
    }

    /// Dijkstra over nodes from state `from`: per node its cost and the
    /// (state, state) move that reached it.
    fn search(&self, from: usize) -> (Vec<u64>, Vec<Option<(usize, usize)>>) {
        let n = self.members.len();
        let mut dist = vec![u64::MAX; n];
        let mut prev = vec![None; n];
        let mut heap = BinaryHeap::new();
        dist[self.node[from]] = 0;
        heap.push(Reverse((0u64, self.node[from])));
        while let Some(Reverse((d, c))) = heap.pop() {
            if d > dist[c] {
                continue;
            }
            for &s in &self.members[c] {
                for &(t, cost) in &self.succ[s] {
                    let nd = d + cost;
                    let tc = self.node[t];
                    if nd < dist[tc] {
                        dist[tc] = nd;
                        prev[tc] = Some((s, t));
                        heap.push(Reverse((nd, tc)));
                    }
                }
            }
        }
        (dist, prev)
    }

    /// The moves of a cheapest path to node `to`, first first.
    fn path(&self, prev: &[Option<(usize, usize)>], from: usize, to: usize) -> Vec<(usize, usize)> {
        let mut steps = Vec::new();
        let mut c = self.node[to];
        while c != self.node[from] {
            let (s, t) = prev[c].expect("a reached node has a predecessor");
            steps.push((s, t));
            c = self.node[s];
        }
        steps.reverse();
        steps
    }

    /// The cheapest move from `s` to `t` (as the search took it).
    fn move_between(&self, s: usize, t: usize) -> (u64, Move) {
        self.moves(s)
            .into_iter()
            .filter(|(to, _, _)| *to == t)
            .map(|(_, c, m)| (c, m))
            .min_by_key(|(c, _)| *c)
            .expect("the move the search took")
    }
}

// ---------------------------------------------------------------------------
// Meshes and meshrun's objects

/// A mesh of three pieces of size 2 and the axis each piece is.
struct MeshCase {
    mesh: Mesh,
    pieces: [AxisRef; 3],
    /// Pieces that, adjacent in this order in one dimension, are one
    /// whole axis (`"x":(1)2, "x":(2)2` is `"x"`).
    merges: Option<(u8, u8, &'static str)>,
}

fn abc() -> MeshCase {
    MeshCase {
        mesh: Mesh::new(&[("a", 2), ("b", 2), ("c", 2)]),
        pieces: [AxisRef::full("a"), AxisRef::full("b"), AxisRef::full("c")],
        merges: None,
    }
}

fn x4y2() -> MeshCase {
    MeshCase {
        mesh: Mesh::new(&[("x", 4), ("y", 2)]),
        pieces: [
            AxisRef::sub("x", 1, 2),
            AxisRef::sub("x", 2, 2),
            AxisRef::full("y"),
        ],
        merges: Some((0, 1, "x")),
    }
}

impl MeshCase {
    fn axes(&self, pieces: &[u8]) -> Vec<AxisRef> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < pieces.len() {
            match self.merges {
                Some((a, b, name)) if pieces[i] == a && pieces.get(i + 1) == Some(&b) => {
                    out.push(AxisRef::full(name));
                    i += 2;
                }
                _ => {
                    out.push(self.pieces[pieces[i] as usize].clone());
                    i += 1;
                }
            }
        }
        out
    }

    /// A collective's axes: the pieces themselves, in group order.
    fn group_axes(&self, pieces: &[u8]) -> Vec<AxisRef> {
        pieces
            .iter()
            .map(|&p| self.pieces[p as usize].clone())
            .collect()
    }
}

fn sharding(m: &MeshCase, space: &Space, s: usize) -> TensorSharding {
    TensorSharding::new(
        "m",
        (0..space.shape.len())
            .map(|d| DimSharding::closed(m.axes(&space.dim(s, d).pieces)))
            .collect(),
    )
}

/// The path's moves as meshrun collectives.
fn collectives(m: &MeshCase, space: &Space, path: &[(usize, usize)]) -> Vec<Collective> {
    let rank = space.shape.len();
    path.iter()
        .map(|&(s, t)| {
            let (_, mv) = space.move_between(s, t);
            let is_slice = matches!(mv, Move::Slice(_));
            let mut c = Collective {
                kind: CollectiveKind::CollectivePermute,
                axes: Vec::new(),
                dim_axes: vec![Vec::new(); rank],
                dim_factors: vec![1; rank],
                all_to_all: None,
                reduction: None,
                groups: Vec::new(),
                in_sharding: sharding(m, space, s),
                out_sharding: sharding(m, space, t),
                global_shape: space.shape.clone(),
                in_local_shape: space.blocks(s),
                out_local_shape: space.blocks(t),
                elem: ELEM,
            };
            match mv {
                Move::Slice(orders) | Move::Gather(orders) => {
                    c.kind = if is_slice {
                        CollectiveKind::AllSlice
                    } else {
                        CollectiveKind::AllGather
                    };
                    c.dim_axes = orders.iter().map(|o| m.group_axes(o)).collect();
                    c.dim_factors = orders.iter().map(|o| 1 << o.len()).collect();
                    c.axes = c.dim_axes.concat();
                    c.groups = device_groups(&m.mesh, &c.axes).expect("groups");
                }
                Move::AllToAll { order, src, tgt } => {
                    c.kind = CollectiveKind::AllToAll;
                    c.axes = m.group_axes(&order);
                    c.all_to_all = Some(AllToAllDims {
                        src_dim: src,
                        tgt_dim: tgt,
                    });
                    c.groups = device_groups(&m.mesh, &c.axes).expect("groups");
                }
                Move::Permute => {
                    // Devices keeping their block index stay; the others
                    // take it from a holder not already sending.
                    let mut pairs = Vec::new();
                    let mut sending = BTreeSet::new();
                    for dev in 0..DEVICES {
                        if space.block_index(s, dev) == space.block_index(t, dev) {
                            pairs.push(vec![dev, dev]);
                            sending.insert(dev);
                        }
                    }
                    for dev in 0..DEVICES {
                        let want = space.block_index(t, dev);
                        if space.block_index(s, dev) == want {
                            continue;
                        }
                        let src = (0..DEVICES)
                            .find(|&o| !sending.contains(&o) && space.block_index(s, o) == want)
                            .expect("a holder of every block");
                        sending.insert(src);
                        pairs.push(vec![src, dev]);
                    }
                    pairs.sort_unstable();
                    c.groups = pairs;
                }
            }
            c
        })
        .collect()
}

/// `{a}{b c}`: a sharding's dimensions, axes unquoted.
fn compact_sharding(t: &TensorSharding) -> String {
    t.dims
        .iter()
        .map(|d| format!("{{{}}}", compact_axes(&d.axes)))
        .collect()
}

fn compact_axes(axes: &[AxisRef]) -> String {
    axes.iter()
        .map(|a| a.to_string().replace('"', ""))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `a2a{a}1->0={a}{b}`, `slice{}{c}={c}{a b}`, `permute={b}{a}`: a
/// collective and the sharding it leaves, with the local block where it is
/// not the sharding's own (`=...[4x8]`).
fn compact(c: &Collective, mesh: &Mesh) -> String {
    let what = match c.kind {
        CollectiveKind::AllSlice | CollectiveKind::AllGather => {
            let dims: String = c
                .dim_axes
                .iter()
                .map(|a| format!("{{{}}}", compact_axes(a)))
                .collect();
            let name = if c.kind == CollectiveKind::AllSlice {
                "slice"
            } else {
                "gather"
            };
            format!("{name}{dims}")
        }
        CollectiveKind::AllToAll => {
            let d = c.all_to_all.expect("all-to-all dimensions");
            format!(
                "a2a{{{}}}{}->{}",
                compact_axes(&c.axes),
                d.src_dim,
                d.tgt_dim
            )
        }
        CollectiveKind::CollectivePermute => "permute".to_string(),
        other => other.to_string(),
    };
    let own: Vec<i64> = c
        .out_sharding
        .dims
        .iter()
        .zip(&c.global_shape)
        .map(|(d, &size)| {
            let n = d.num_shards(mesh);
            (size + n - 1) / n
        })
        .collect();
    let local = if own == c.out_local_shape {
        String::new()
    } else {
        let v: Vec<String> = c.out_local_shape.iter().map(ToString::to_string).collect();
        format!("[{}]", v.join("x"))
    };
    format!("{what}={}{local}", compact_sharding(&c.out_sharding))
}

fn compact_list(cs: &[Collective], mesh: &Mesh) -> String {
    if cs.is_empty() {
        return "-".to_string();
    }
    cs.iter()
        .map(|c| compact(c, mesh))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What every device holds in state `s`, as the simulator's blocks: the
/// product of the dimensions' contents, padding where any is padding.
fn blocks_of(space: &Space, s: usize) -> Blocks {
    let rank = space.shape.len();
    let local = space.blocks(s);
    let mut out = Blocks::new();
    for dev in 0..DEVICES {
        let per_dim: Vec<Vec<i64>> = (0..rank)
            .map(|d| space.dim(s, d).content(space.shape[d], dev))
            .collect();
        let count: i64 = local.iter().product();
        let cells = (0..count)
            .map(|mut f| {
                let mut global = 0;
                let mut stride = 1;
                let mut pad = false;
                for d in (0..rank).rev() {
                    let g = per_dim[d][(f % local[d]) as usize];
                    f /= local[d];
                    pad |= g == PAD;
                    global += g * stride;
                    stride *= space.shape[d];
                }
                if pad {
                    Cell::PADDING
                } else {
                    Cell {
                        index: global,
                        parts: 1,
                    }
                }
            })
            .collect();
        out.insert(
            dev,
            Block {
                shape: local.clone(),
                cells,
            },
        );
    }
    out
}

// ---------------------------------------------------------------------------
// The check

/// The pairs of a case where meshrun is above the optimum.
#[derive(Default)]
struct Above {
    /// By (source, target) pieces per dimension: meshrun's bytes and the
    /// optimum's (the mesh's axis names aside).
    bytes: BTreeMap<(Pieces, Pieces), (f64, f64)>,
    /// `source -> target: meshrun's bytes > the optimum's`, the line each
    /// has in the recorded list, and the line with both sequences.
    lines: BTreeMap<String, String>,
}

/// Per dimension, a state's pieces.
type Pieces = Vec<Vec<u8>>;

/// Per dimension, the pieces of state `s`.
fn pieces(space: &Space, s: usize) -> Pieces {
    (0..space.shape.len())
        .map(|d| space.dim(s, d).pieces.clone())
        .collect()
}

/// Runs one case: every pair of valid shardings on their own blocks,
/// meshrun's plan against the model's optimum. Prints a summary and
/// returns the pairs where meshrun is above the optimum.
fn run_case(name: &str, m: &MeshCase, shape: &[i64], any_blocks: bool) -> Above {
    let start = Instant::now();
    let space = Space::new(shape, any_blocks);
    let rank = shape.len();
    // Sources and targets: valid shardings on their own blocks. Their data
    // in the model must be the blocks meshrun lays out.
    let own: Vec<usize> = (0..space.states.len())
        .filter(|&s| {
            (0..rank).all(|d| {
                let dim = space.dim(s, d);
                dim.block == block_lengths(shape[d], dim.shards(), false)[0]
            }) && validate_sharding(&sharding(m, &space, s), &m.mesh, rank).is_ok()
        })
        .collect();
    for &s in &own {
        let laid = layout_blocks(&m.mesh, &sharding(m, &space, s), shape).expect("layout");
        compare(&blocks_of(&space, s), &laid)
            .unwrap_or_else(|e| panic!("{name}: the model lays out state {s} otherwise: {e}"));
    }

    let mut checked_moves: BTreeSet<(usize, usize)> = BTreeSet::new();
    let mut above = Above::default();
    let (mut equal, mut below) = (0, Vec::new());
    for &from in &own {
        let (dist, prev) = space.search(from);
        let from_s = sharding(m, &space, from);
        for &to in &own {
            let to_s = sharding(m, &space, to);
            let best = dist[space.node[to]];
            assert!(best != u64::MAX, "{name}: no path {from_s} -> {to_s}");
            let path = space.path(&prev, from, to);
            // The optimum is real: each of its moves, run on meshrun's
            // simulator from the model's blocks, leaves the model's blocks
            // and receives the bytes the model counts, which are also
            // meshrun's `bytes_per_device` of that collective.
            for &(s, t) in &path {
                if !checked_moves.insert((s, t)) {
                    continue;
                }
                let (cost, _) = space.move_between(s, t);
                let c = &collectives(m, &space, &[(s, t)])[0];
                let sim = simulate::run(blocks_of(&space, s), std::slice::from_ref(c))
                    .unwrap_or_else(|e| panic!("{name}: {c} does not run: {e}"));
                compare(&sim.blocks, &blocks_of(&space, t))
                    .unwrap_or_else(|e| panic!("{name}: {c} does not do what the model says: {e}"));
                assert_eq!(
                    c.bytes_per_device() * UNIT as f64,
                    cost as f64,
                    "{name}: the model and meshrun count {c} differently"
                );
                assert_eq!(
                    sim.avg_received(0) * (ELEM_BYTES * UNIT) as f64,
                    cost as f64,
                    "{name}: {c} receives other than the model counts"
                );
            }
            let optimum = best as f64 / UNIT as f64;
            let plan = lower_and_check(&m.mesh, &m.mesh, shape, &from_s, &to_s, false);
            let ours: f64 = plan
                .collectives
                .iter()
                .map(Collective::bytes_per_device)
                .sum();
            let tol = 1e-9 * optimum.max(1.0);
            if (ours - optimum).abs() <= tol {
                equal += 1;
                continue;
            }
            let optimal = collectives(m, &space, &path);
            let pair = format!(
                "{} -> {}: {ours} > {optimum}",
                compact_sharding(&from_s),
                compact_sharding(&to_s)
            );
            let detail = format!(
                "{pair} | meshrun: {} | optimum: {}",
                compact_list(&plan.collectives, &m.mesh),
                compact_list(&optimal, &m.mesh)
            );
            if ours > optimum {
                above
                    .bytes
                    .insert((pieces(&space, from), pieces(&space, to)), (ours, optimum));
                above.lines.insert(pair, detail);
            } else {
                below.push(detail);
            }
        }
    }
    let pairs = own.len() * own.len();
    eprintln!(
        "{name}: {} states ({} nodes), {} shardings, {pairs} pairs: {equal} at the optimum, \
         {} above it, {} below it; {} moves simulated; {:.1?}",
        space.states.len(),
        space.members.len(),
        own.len(),
        above.lines.len(),
        below.len(),
        checked_moves.len(),
        start.elapsed()
    );
    assert!(
        below.is_empty(),
        "{name}: meshrun below the model's optimum (the model misses a move):\n{}",
        below.join("\n")
    );
    above
}

/// Checks the pairs of a case above the optimum against the list recorded
/// in `tests/reshard_bruteforce/<file>.txt` (with
/// `MESHRUN_BRUTEFORCE_WRITE=1`, rewrites that list instead). Both
/// sequences of every pair are written to the test's scratch folder.
fn check_known(file: &str, above: &Above) {
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("reshard_bruteforce");
    std::fs::create_dir_all(&scratch).expect("scratch folder");
    let detailed = scratch.join(format!("{file}.txt"));
    let all: String = above.lines.values().map(|l| format!("{l}\n")).collect();
    std::fs::write(&detailed, all).expect("write the detailed pairs");
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/reshard_bruteforce")
        .join(format!("{file}.txt"));
    if std::env::var("MESHRUN_BRUTEFORCE_WRITE").is_ok_and(|v| v == "1") {
        let header = "\
# Pairs of shardings where meshrun's reshard plan (plan_reshard) moves more
# bytes per device than the cheapest sequence of whole-block collectives
# found by tests/reshard_bruteforce.rs: `source -> target: meshrun's bytes >
# the optimum's`. Both sequences of each pair: run the test and read the
# file of this name under target/tmp/reshard_bruteforce/.
# Regenerate: MESHRUN_BRUTEFORCE_WRITE=1 cargo test -p meshrun-compiler --test reshard_bruteforce
";
        let body: String = above.lines.keys().map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, format!("{header}{body}")).expect("write the known pairs");
        return;
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let known: BTreeSet<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    let new: Vec<&str> = above
        .lines
        .iter()
        .filter(|(k, _)| !known.contains(k.as_str()))
        .map(|(_, detail)| detail.as_str())
        .collect();
    let gone: Vec<&str> = known
        .iter()
        .copied()
        .filter(|k| !above.lines.contains_key(*k))
        .collect();
    let first = |v: &[&str]| v.iter().take(20).copied().collect::<Vec<_>>().join("\n");
    assert!(
        new.is_empty() && gone.is_empty(),
        "{file}: the pairs above the optimum changed ({} recorded, {} now; all of them with \
         both sequences in {}).\nNew ({}, first 20):\n{}\nNo longer, or other bytes ({}, first \
         20):\n{}\nIf the planner changed on purpose, regenerate {} with \
         MESHRUN_BRUTEFORCE_WRITE=1.",
        known.len(),
        above.lines.len(),
        detailed.display(),
        new.len(),
        first(&new),
        gone.len(),
        first(&gone),
        path.display()
    );
}

/// Rank 2 on `a=2, b=2, c=2`, and on `x=4, y=2` whose halves of `x` are
/// sub-axes (adjacent in order, they are `x` itself). The two meshes are
/// the same three pieces in the same device order, so meshrun must do
/// exactly as well on both: the sub-axes cost nothing.
#[test]
fn rank_2_on_three_axes_and_on_sub_axes() {
    let above = run_case("abc 8x16", &abc(), &[8, 16], true);
    check_known("abc_8x16", &above);
    let sub = run_case("x4y2 8x16", &x4y2(), &[8, 16], true);
    assert!(
        sub.bytes == above.bytes,
        "meshrun does otherwise with sub-axes than with axes"
    );
}

/// Rank 3 on `a=2, b=2, c=2`. Blocks are the shardings' own: every
/// dimension divides by 8, and in rank 2 no cheaper path goes through
/// longer blocks (`rank_2_needs_no_longer_blocks`).
#[test]
fn rank_3_on_three_axes() {
    let above = run_case("abc 8x8x8", &abc(), &[8, 8, 8], false);
    check_known("abc_8x8x8", &above);
}

/// A non-divisible shape on `x=4, y=2`: 6 rows and 5 columns pad when
/// split 4 or 8 ways (the columns also 2 ways), so blocks of different
/// shard counts do not line up and padding-only shards exist.
#[test]
fn padded_rank_2_on_sub_axes() {
    let above = run_case("x4y2 6x5", &x4y2(), &[6, 5], true);
    check_known("x4y2_6x5", &above);
}

/// Longer blocks than a sharding's own never make a divisible reshard
/// cheaper in rank 2 (which is why the rank-3 case may leave them out):
/// the optimum over every block length equals the optimum over own blocks.
#[test]
fn rank_2_needs_no_longer_blocks() {
    let shape = [8, 16];
    let (any, own) = (Space::new(&shape, true), Space::new(&shape, false));
    let own_states = |space: &Space| -> Vec<(Vec<Vec<u8>>, usize)> {
        (0..space.states.len())
            .filter(|&s| {
                (0..shape.len()).all(|d| {
                    let dim = space.dim(s, d);
                    dim.block == block_lengths(shape[d], dim.shards(), false)[0]
                })
            })
            .map(|s| {
                (
                    (0..shape.len())
                        .map(|d| space.dim(s, d).pieces.clone())
                        .collect(),
                    s,
                )
            })
            .collect()
    };
    let a: HashMap<Vec<Vec<u8>>, usize> = own_states(&any).into_iter().collect();
    let o = own_states(&own);
    assert_eq!(a.len(), o.len());
    let mut differ = Vec::new();
    for (pieces, from) in &o {
        let (d_own, _) = own.search(*from);
        let (d_any, _) = any.search(a[pieces]);
        for (p2, to) in &o {
            let (x, y) = (d_own[own.node[*to]], d_any[any.node[a[p2]]]);
            assert!(y <= x);
            if x != y {
                differ.push(format!("{pieces:?} -> {p2:?}: own blocks {x}, any {y}"));
            }
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
