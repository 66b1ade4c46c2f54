//! The ground truth for collectives: run them on index tensors.
//!
//! Every device holds its local block as the *global flat indices* of the
//! elements it stores (`PAD` for padding), starting from the blocks a
//! sharding assigns ([`layout_blocks`], from `sharding::layout`). Each
//! collective moves those cells exactly as its description says — its
//! groups, per-dimension factors, dimensions and local shapes, nothing
//! else (see [`crate::partition::reshard::collective`] for the semantics) — so a
//! lowering is checked by comparing the final blocks with the blocks the
//! target sharding assigns ([`check_reshard`]). Cells also count how many
//! partial results were summed into them (`parts`), so all-reduce and
//! reduce-scatter can be checked the same way. The simulator also counts
//! the cells each device receives from other devices, per collective.

use std::collections::{BTreeMap, BTreeSet};

use crate::partition::reshard::collective::{Collective, CollectiveKind};
use crate::sharding::layout::TensorLayout;
use crate::sharding::{Mesh, TensorSharding};

/// The index of a padding cell.
pub const PAD: i64 = -1;

/// One stored element: its global flat (row-major) index, or [`PAD`], and
/// how many partial results it sums (1 for a plain value, 0 for padding).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cell {
    pub index: i64,
    pub parts: u32,
}

impl Cell {
    pub const PADDING: Cell = Cell {
        index: PAD,
        parts: 0,
    };

    pub fn is_pad(self) -> bool {
        self.index == PAD
    }
}

/// A device's local block, row-major.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub shape: Vec<i64>,
    pub cells: Vec<Cell>,
}

impl Block {
    fn padding(shape: &[i64]) -> Block {
        Block {
            shape: shape.to_vec(),
            cells: vec![Cell::PADDING; elems(shape)],
        }
    }

    /// The cell at `idx`, or padding outside the block.
    pub fn get(&self, idx: &[i64]) -> Cell {
        if idx.iter().zip(&self.shape).any(|(&i, &n)| i < 0 || i >= n) {
            return Cell::PADDING;
        }
        self.cells[flat(&self.shape, idx)]
    }
}

/// Every device's block, by device id.
pub type Blocks = BTreeMap<i64, Block>;

/// What went wrong in a simulation: a malformed collective, or a final
/// state that is not the target.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    #[error("cannot lay out the tensor: {0}")]
    Layout(String),
    #[error("collective {step} ({kind}): {reason}")]
    Malformed {
        step: usize,
        kind: CollectiveKind,
        reason: String,
    },
    #[error("device {device} ends with a block of shape {got:?}; the target's local shape is {expected:?}")]
    FinalShape {
        device: i64,
        expected: Vec<i64>,
        got: Vec<i64>,
    },
    #[error("device {device} ends with {got} at local position {position:?}; the target sharding puts {expected} there")]
    WrongCell {
        device: i64,
        position: Vec<i64>,
        expected: String,
        got: String,
    },
    #[error("the final state has devices {got:?}; the target mesh has {expected:?}")]
    Devices { expected: Vec<i64>, got: Vec<i64> },
}

/// The final blocks and, per collective, the cells each device received
/// from other devices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Simulation {
    pub blocks: Blocks,
    pub received: Vec<BTreeMap<i64, i64>>,
}

impl Simulation {
    /// Cells received in collective `step`, averaged over devices.
    pub fn avg_received(&self, step: usize) -> f64 {
        self.received.get(step).map_or(0.0, |r| {
            if r.is_empty() {
                0.0
            } else {
                r.values().sum::<i64>() as f64 / r.len() as f64
            }
        })
    }
}

fn elems(shape: &[i64]) -> usize {
    shape.iter().map(|&d| d.max(0) as usize).product()
}

fn flat(shape: &[i64], idx: &[i64]) -> usize {
    idx.iter()
        .zip(shape)
        .fold(0usize, |acc, (&i, &n)| acc * n as usize + i as usize)
}

fn unflat(shape: &[i64], mut f: usize) -> Vec<i64> {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        let n = shape[d].max(1) as usize;
        idx[d] = (f % n) as i64;
        f /= n;
    }
    idx
}

/// `rank` as mixed-radix digits over `factors` (first most significant).
fn digits(mut rank: i64, factors: &[i64]) -> Vec<i64> {
    let mut out = vec![0; factors.len()];
    for d in (0..factors.len()).rev() {
        let f = factors[d].max(1);
        out[d] = rank % f;
        rank /= f;
    }
    out
}

fn compose(digits: &[i64], factors: &[i64]) -> i64 {
    digits
        .iter()
        .zip(factors)
        .fold(0, |acc, (&q, &f)| acc * f.max(1) + q)
}

/// The blocks `sharding` assigns to the devices of `mesh`: global flat
/// indices, padding where a block runs past the tensor.
pub fn layout_blocks(
    mesh: &Mesh,
    sharding: &TensorSharding,
    shape: &[i64],
) -> Result<Blocks, SimError> {
    let layout =
        TensorLayout::new(mesh, sharding, shape).map_err(|e| SimError::Layout(e.to_string()))?;
    let local = layout.local_shape();
    let mut out = Blocks::new();
    for slice in layout.slices() {
        let mut block = Block::padding(&local);
        for (f, cell) in block.cells.iter_mut().enumerate() {
            let idx = unflat(&local, f);
            if idx.iter().zip(&slice.extent).all(|(&i, &e)| i < e) {
                let global: Vec<i64> = idx.iter().zip(&slice.offset).map(|(i, o)| i + o).collect();
                *cell = Cell {
                    index: flat(shape, &global) as i64,
                    parts: 1,
                };
            }
        }
        out.insert(slice.device, block);
    }
    Ok(out)
}

/// Applies `collectives` in order to `blocks`.
pub fn run(mut blocks: Blocks, collectives: &[Collective]) -> Result<Simulation, SimError> {
    let mut received = Vec::with_capacity(collectives.len());
    for (step, c) in collectives.iter().enumerate() {
        let (next, got) = apply(&blocks, c, step)?;
        blocks = next;
        received.push(got);
    }
    Ok(Simulation { blocks, received })
}

/// Runs the lowering of a reshard from `from` (on `from_mesh`) and checks
/// that every device ends with exactly the block `to` (on `to_mesh`)
/// assigns it, padding included.
pub fn check_reshard(
    from_mesh: &Mesh,
    to_mesh: &Mesh,
    shape: &[i64],
    from: &TensorSharding,
    to: &TensorSharding,
    collectives: &[Collective],
) -> Result<Simulation, SimError> {
    let sim = run(layout_blocks(from_mesh, from, shape)?, collectives)?;
    compare(&sim.blocks, &layout_blocks(to_mesh, to, shape)?)?;
    Ok(sim)
}

/// Checks `got` against `expected`, device by device, cell by cell.
pub fn compare(got: &Blocks, expected: &Blocks) -> Result<(), SimError> {
    let (g, e): (Vec<i64>, Vec<i64>) = (
        got.keys().copied().collect(),
        expected.keys().copied().collect(),
    );
    if g != e {
        return Err(SimError::Devices {
            expected: e,
            got: g,
        });
    }
    for (device, want) in expected {
        let have = &got[device];
        if have.shape != want.shape {
            return Err(SimError::FinalShape {
                device: *device,
                expected: want.shape.clone(),
                got: have.shape.clone(),
            });
        }
        if let Some(f) = (0..want.cells.len()).find(|&f| want.cells[f] != have.cells[f]) {
            let show = |c: Cell| {
                if c.is_pad() {
                    "padding".to_string()
                } else {
                    format!("element {} ({} parts)", c.index, c.parts)
                }
            };
            return Err(SimError::WrongCell {
                device: *device,
                position: unflat(&want.shape, f),
                expected: show(want.cells[f]),
                got: show(have.cells[f]),
            });
        }
    }
    Ok(())
}

/// One collective: the new blocks and the cells each device received.
pub fn apply(
    blocks: &Blocks,
    c: &Collective,
    step: usize,
) -> Result<(Blocks, BTreeMap<i64, i64>), SimError> {
    let bad = |reason: String| SimError::Malformed {
        step,
        kind: c.kind,
        reason,
    };
    for (device, b) in blocks {
        if b.shape != c.in_local_shape {
            return Err(bad(format!(
                "device {device} holds a block of shape {:?} but the collective expects {:?}",
                b.shape, c.in_local_shape
            )));
        }
    }
    if c.out_local_shape.len() != c.in_local_shape.len() {
        return Err(bad("input and output ranks differ".into()));
    }
    if c.kind == CollectiveKind::CollectivePermute {
        return permute(blocks, c).map_err(bad);
    }
    let groups = checked_groups(blocks, c).map_err(bad)?;
    let mut out = Blocks::new();
    let mut received: BTreeMap<i64, i64> = blocks.keys().map(|&d| (d, 0)).collect();
    for members in &groups {
        let inputs: Vec<&Block> = members.iter().map(|d| &blocks[d]).collect();
        for (rank, &device) in members.iter().enumerate() {
            let (block, got) = match c.kind {
                CollectiveKind::AllSlice => (slice(inputs[rank], rank as i64, c), 0),
                CollectiveKind::AllGather => gather(&inputs, rank, c).map_err(bad)?,
                CollectiveKind::AllToAll => all_to_all(&inputs, rank, c).map_err(bad)?,
                CollectiveKind::AllReduce => {
                    let sum = reduce(&inputs).map_err(bad)?;
                    (sum, others(&inputs, rank))
                }
                CollectiveKind::ReduceScatter => {
                    let sum = reduce(&inputs).map_err(bad)?;
                    (slice(&sum, rank as i64, c), others(&inputs, rank))
                }
                CollectiveKind::CollectivePermute => {
                    return Err(bad("a permute has pairs, not groups".into()))
                }
            };
            received.insert(device, got);
            out.insert(device, block);
        }
    }
    Ok((out, received))
}

/// Cells in the blocks of all members but `rank`.
fn others(inputs: &[&Block], rank: usize) -> i64 {
    inputs
        .iter()
        .enumerate()
        .filter(|&(r, _)| r != rank)
        .map(|(_, b)| b.cells.len() as i64)
        .sum()
}

/// The groups, after checking they split the devices into equal parts
/// consistent with the per-dimension factors.
fn checked_groups(blocks: &Blocks, c: &Collective) -> Result<Vec<Vec<i64>>, String> {
    let mut seen = BTreeSet::new();
    let size = c.groups.first().map_or(0, Vec::len);
    for g in &c.groups {
        if g.len() != size {
            return Err(format!(
                "groups of different sizes ({size} and {})",
                g.len()
            ));
        }
        for d in g {
            if !blocks.contains_key(d) || !seen.insert(*d) {
                return Err(format!("device {d} is unknown or in two groups"));
            }
        }
    }
    if seen.len() != blocks.len() {
        return Err(format!(
            "the groups cover {} of {} devices",
            seen.len(),
            blocks.len()
        ));
    }
    let by_dims: i64 = c.dim_factors.iter().product();
    let uses_factors = matches!(
        c.kind,
        CollectiveKind::AllSlice | CollectiveKind::AllGather | CollectiveKind::ReduceScatter
    );
    if uses_factors && (by_dims != size as i64 || c.dim_factors.len() != c.in_local_shape.len()) {
        return Err(format!(
            "per-dimension factors {:?} do not multiply to the group size {size}",
            c.dim_factors
        ));
    }
    Ok(c.groups.clone())
}

/// Member `rank`'s chunk of `input`: along each dimension, chunk
/// `digit_d` of length `out_local[d]`; padding past the input.
fn slice(input: &Block, rank: i64, c: &Collective) -> Block {
    let q = digits(rank, &c.dim_factors);
    let mut out = Block::padding(&c.out_local_shape);
    for (f, cell) in out.cells.iter_mut().enumerate() {
        let idx = unflat(&c.out_local_shape, f);
        let src: Vec<i64> = idx
            .iter()
            .enumerate()
            .map(|(d, &i)| q[d] * c.out_local_shape[d] + i)
            .collect();
        *cell = input.get(&src);
    }
    out
}

/// The members' blocks concatenated per dimension in rank order, cut to
/// the output shape.
fn gather(inputs: &[&Block], rank: usize, c: &Collective) -> Result<(Block, i64), String> {
    let in_shape = &c.in_local_shape;
    for (d, (&o, &i)) in c.out_local_shape.iter().zip(in_shape).enumerate() {
        if o > i * c.dim_factors[d] {
            return Err(format!(
                "dimension {d}: output of {o} is more than {} gathered blocks of {i}",
                c.dim_factors[d]
            ));
        }
    }
    let mut out = Block::padding(&c.out_local_shape);
    for (f, cell) in out.cells.iter_mut().enumerate() {
        let idx = unflat(&c.out_local_shape, f);
        let (q, inner): (Vec<i64>, Vec<i64>) = idx
            .iter()
            .zip(in_shape)
            .map(|(&o, &n)| if n == 0 { (0, 0) } else { (o / n, o % n) })
            .unzip();
        let member = compose(&q, &c.dim_factors) as usize;
        *cell = inputs[member].get(&inner);
    }
    Ok((out, others(inputs, rank)))
}

/// Member `rank` receives chunk `rank` (along the target dimension) of
/// every member's block and concatenates them along the source dimension.
fn all_to_all(inputs: &[&Block], rank: usize, c: &Collective) -> Result<(Block, i64), String> {
    let dims = c.all_to_all.ok_or("all-to-all without dimensions")?;
    let (s, t) = (dims.src_dim, dims.tgt_dim);
    let (in_shape, out_shape) = (&c.in_local_shape, &c.out_local_shape);
    if s == t || s >= in_shape.len() || t >= in_shape.len() {
        return Err(format!("bad all-to-all dimensions {s}->{t}"));
    }
    let g = inputs.len() as i64;
    if out_shape[s] > g * in_shape[s] {
        return Err(format!(
            "dimension {s}: output of {} is more than {g} blocks of {}",
            out_shape[s], in_shape[s]
        ));
    }
    let mut out = Block::padding(out_shape);
    for (f, cell) in out.cells.iter_mut().enumerate() {
        let idx = unflat(out_shape, f);
        let mut src = idx.clone();
        let from = if in_shape[s] == 0 {
            0
        } else {
            idx[s] / in_shape[s]
        };
        src[s] = if in_shape[s] == 0 {
            0
        } else {
            idx[s] % in_shape[s]
        };
        src[t] = rank as i64 * out_shape[t] + idx[t];
        *cell = inputs[from as usize].get(&src);
    }
    // One chunk (the input cut to the output's length along `t`) from each
    // other member.
    let mut chunk = in_shape.clone();
    chunk[t] = out_shape[t];
    let got = (g - 1) * elems(&chunk) as i64;
    Ok((out, got))
}

/// The element-wise sum of the members' partial blocks.
fn reduce(inputs: &[&Block]) -> Result<Block, String> {
    let mut out = inputs[0].clone();
    for b in &inputs[1..] {
        for (f, (acc, cell)) in out.cells.iter_mut().zip(&b.cells).enumerate() {
            if acc.index != cell.index {
                return Err(format!(
                    "members hold different elements at local offset {f} ({} and {})",
                    acc.index, cell.index
                ));
            }
            acc.parts += cell.parts;
        }
    }
    Ok(out)
}

fn permute(blocks: &Blocks, c: &Collective) -> Result<(Blocks, BTreeMap<i64, i64>), String> {
    if c.in_local_shape != c.out_local_shape {
        return Err("a collective-permute cannot change the local shape".into());
    }
    let (mut sources, mut targets) = (BTreeSet::new(), BTreeSet::new());
    let mut out = Blocks::new();
    let mut received: BTreeMap<i64, i64> = blocks.keys().map(|&d| (d, 0)).collect();
    for pair in &c.groups {
        let &[s, t] = pair.as_slice() else {
            return Err(format!("permute pair {pair:?} is not [source, target]"));
        };
        let Some(block) = blocks.get(&s) else {
            return Err(format!("unknown source device {s}"));
        };
        if !blocks.contains_key(&t) || !sources.insert(s) || !targets.insert(t) {
            return Err(format!(
                "pair [{s}, {t}]: unknown device or device used twice"
            ));
        }
        if s != t {
            received.insert(t, block.cells.len() as i64);
        }
        out.insert(t, block.clone());
    }
    if targets.len() != blocks.len() {
        return Err(format!(
            "{} of {} devices receive a block",
            targets.len(),
            blocks.len()
        ));
    }
    Ok((out, received))
}
