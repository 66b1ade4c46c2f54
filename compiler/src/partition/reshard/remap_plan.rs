//! Planning a *remap* of one dimension: rebuilding every device's block of
//! a result, along dimension `d`, element by element from blocks of one or
//! more sources, with point-to-point messages for the elements a device
//! does not hold.
//!
//! It serves slices, pads and concatenations along a sharded dimension
//! (halo exchanges) and reshards that change one dimension's sharding where
//! whole-block collectives would move more data (e.g. non-divisible
//! dimensions whose padded blocks shift).
//!
//! Source `k` is split along `d` by some axes (or none). A device holds its
//! own source block `s` (its shard index along those axes); result element
//! `o` it needs lives in source block `q`. When `q != s` it comes from the
//! *holder*: the device that differs only along the source's axes and
//! holds block `q`. All elements with the same shift `q - s` travel in one
//! round: each holder cuts one slab (the same length for all devices, at
//! its own offset) and a collective-permute sends it; for a given shift
//! every holder sends to at most one device, so a round is a (partial)
//! permutation.

use std::collections::HashMap;
use std::sync::Arc;

use crate::partition::limits::MAX_REMAP_ENTRIES;
use crate::sharding::groups::{device_groups, group_ranks};
use crate::sharding::layout::TensorLayout;
use crate::sharding::{AxisRef, Mesh};

/// The receiving device positions (ascending) of one (source, shift)
/// slot with the `[lo, hi]` elements each needs from it: sparse, as on a
/// large mesh most slots serve few devices.
type PerDeviceRange = Vec<(usize, i64, i64)>;

/// One source of a remap.
#[derive(Debug, Clone)]
pub struct RemapSource<'a> {
    pub layout: &'a TensorLayout,
    /// The axes that split dimension `d` of the source (empty: every
    /// device holds all of it).
    pub axes: &'a [AxisRef],
}

/// Where result element `o` (global index along `d`) comes from:
/// `(source, global index in it)`, or `None` for the fill value.
pub type IndexMap<'m> = &'m dyn Fn(i64) -> Option<(usize, i64)>;

/// One round of messages: every holder cuts `len` elements along `d` of
/// source `source`, starting at its entry of `start`, and sends them.
#[derive(Debug, Clone, PartialEq)]
pub struct Round {
    pub source: usize,
    /// Source block shift (holder's block − receiver's block).
    pub shift: i64,
    pub len: i64,
    /// Per device position, the first element the device cuts (0 when it
    /// sends nothing).
    pub start: Vec<i64>,
    /// `[holder, receiver]` device pairs.
    pub pairs: Vec<Vec<i64>>,
}

/// Where an element of a device's result block comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// Element `index` of the device's own block of source `source`.
    Local {
        source: usize,
        index: i64,
    },
    /// Element `index` of the slab received in round `round`.
    Received {
        round: usize,
        index: i64,
    },
    Fill,
}

/// A planned remap of dimension `dim`.
#[derive(Debug, Clone, PartialEq)]
pub struct RemapPlan {
    pub dim: usize,
    pub rounds: Vec<Round>,
    /// Per device position, per local result element along `dim` (one
    /// shared row for the devices of a class: a plan on a large mesh is
    /// often judged and dropped, and copies would dominate its cost).
    pub picks: Vec<Arc<[Pick]>>,
}

impl RemapPlan {
    /// Bytes received per device, averaged over all devices, when a slab
    /// element along `dim` carries `row_bytes` bytes (the product of the
    /// other local dimensions times the element size).
    pub fn bytes_per_device(&self, row_bytes: i64, num_devices: usize) -> f64 {
        let total: i64 = self
            .rounds
            .iter()
            .map(|r| r.len * row_bytes * r.pairs.len() as i64)
            .sum();
        total as f64 / num_devices.max(1) as f64
    }
}

/// Plan the remap of dimension `dim` of a result laid out by `result` on
/// `mesh` (run by `devices`, in order) from `sources`.
pub fn plan_remap(
    mesh: &Mesh,
    devices: &[i64],
    result: &TensorLayout,
    dim: usize,
    sources: &[RemapSource<'_>],
    map: IndexMap<'_>,
) -> Result<RemapPlan, String> {
    let r_dim = *result
        .dims()
        .get(dim)
        .ok_or_else(|| format!("the result has no dimension {dim}"))?;
    struct Src {
        block: i64,
        /// Per device: (group index, own shard) along the source's axes.
        own: HashMap<i64, (usize, usize)>,
        groups: Vec<Vec<i64>>,
    }
    let mut srcs = Vec::with_capacity(sources.len());
    for s in sources {
        let groups = device_groups(mesh, s.axes).map_err(|e| e.to_string())?;
        let own = group_ranks(&groups);
        let block = s
            .layout
            .dims()
            .get(dim)
            .ok_or_else(|| format!("a source has no dimension {dim}"))?
            .local;
        srcs.push(Src { block, own, groups });
    }
    let position: HashMap<i64, usize> = devices.iter().enumerate().map(|(i, &d)| (d, i)).collect();
    // The plan has an entry per device and result element, and a range
    // per device and block shift: bounded, so absurd sizes are an error
    // (or, for a reshard, a reason to keep whole-block collectives).
    let too_large = || {
        format!(
            "a remap of dimension {dim} on {} devices needs a table larger than the partitioner handles ({MAX_REMAP_ENTRIES} entries)",
            devices.len()
        )
    };
    let entries = |rows: i64| i64::try_from(devices.len()).ok()?.checked_mul(rows);
    if entries(r_dim.local).is_none_or(|n| n > MAX_REMAP_ENTRIES) {
        return Err(too_large());
    }

    // First pass: what each device needs. Devices with the same result
    // block along `dim` and the same own block of every source need the
    // same elements from the same shifts: one row per such class (on a
    // large mesh a few classes stand for hundreds of devices).
    #[derive(Clone, Copy)]
    enum Need {
        Local(usize, i64),
        Halo(usize, i64, i64),
        Fill,
    }
    struct Class {
        row: Vec<Need>,
        /// Per (source, shift) slot, the `[lo, hi]` elements needed.
        ranges: Vec<(usize, i64, i64)>,
        /// The first device position of the class.
        first: usize,
    }
    let mut classes: Vec<Class> = Vec::new();
    let mut class_of_key: HashMap<(i64, Vec<i64>), usize> = HashMap::new();
    let mut class_of: Vec<usize> = Vec::with_capacity(devices.len());
    // (source, shift) -> per receiving device position, [lo, hi].
    let mut ranges: Vec<((usize, i64), PerDeviceRange)> = Vec::new();
    let mut slot_of: HashMap<(usize, i64), usize> = HashMap::new();
    for (p, &t) in devices.iter().enumerate() {
        let r = *result
            .shard_index(t)
            .ok_or_else(|| format!("device {t} is not in the mesh"))?
            .get(dim)
            .unwrap_or(&0);
        let owns: Vec<i64> = srcs
            .iter()
            .map(|src| src.own.get(&t).map_or(0, |&(_, o)| o as i64))
            .collect();
        let key = (r, owns);
        if let Some(&c) = class_of_key.get(&key) {
            class_of.push(c);
            continue;
        }
        let owns = &key.1;
        let mut row = Vec::with_capacity(r_dim.local as usize);
        // Per slot, its range; the slot of the last halo element (most
        // elements share their neighbour's shift).
        let mut class_ranges: Vec<(usize, i64, i64)> = Vec::new();
        let mut last: Option<(usize, i64, usize)> = None;
        for k in 0..r_dim.local {
            let o = r * r_dim.local + k;
            let entry = if o >= r_dim.global { None } else { map(o) };
            let Some((s, idx)) = entry else {
                row.push(Need::Fill);
                continue;
            };
            let src = srcs
                .get(s)
                .ok_or_else(|| format!("remap source {s} does not exist"))?;
            let block = src.block.max(1);
            let (q, i) = (idx / block, idx % block);
            let shift = q - owns[s];
            if shift == 0 {
                row.push(Need::Local(s, i));
                continue;
            }
            row.push(Need::Halo(s, shift, i));
            let slot = match last {
                Some((ls, lshift, slot)) if (ls, lshift) == (s, shift) => slot,
                _ => match slot_of.get(&(s, shift)) {
                    Some(&x) => x,
                    None => {
                        if entries(ranges.len() as i64 + 1).is_none_or(|n| n > MAX_REMAP_ENTRIES) {
                            return Err(too_large());
                        }
                        ranges.push(((s, shift), Vec::new()));
                        slot_of.insert((s, shift), ranges.len() - 1);
                        ranges.len() - 1
                    }
                },
            };
            last = Some((s, shift, slot));
            match class_ranges.iter_mut().find(|(x, _, _)| *x == slot) {
                Some((_, lo, hi)) => (*lo, *hi) = ((*lo).min(i), (*hi).max(i)),
                None => class_ranges.push((slot, i, i)),
            }
        }
        class_of_key.insert(key, classes.len());
        class_of.push(classes.len());
        classes.push(Class {
            row,
            ranges: class_ranges,
            first: p,
        });
    }
    for (p, &c) in class_of.iter().enumerate() {
        for &(slot, lo, hi) in &classes[c].ranges {
            ranges[slot].1.push((p, lo, hi));
        }
    }

    // Rounds: one slab length per (source, shift); each holder's offset.
    let mut rounds = Vec::with_capacity(ranges.len());
    // Per round, per receiving device position: the holder's start.
    let mut recv_start: Vec<Vec<i64>> = Vec::with_capacity(ranges.len());
    for ((s, shift), per_device) in &ranges {
        let src = &srcs[*s];
        let len = per_device
            .iter()
            .map(|(_, lo, hi)| hi - lo + 1)
            .max()
            .unwrap_or(0);
        let mut start = vec![0; devices.len()];
        let mut got = vec![0; devices.len()];
        let mut pairs = Vec::new();
        for &(p, lo, _) in per_device {
            let t = devices[p];
            let &(g, own) = src
                .own
                .get(&t)
                .ok_or_else(|| format!("device {t} is in no group"))?;
            let q = own as i64 + shift;
            let holder = *usize::try_from(q)
                .ok()
                .and_then(|q| src.groups[g].get(q))
                .ok_or_else(|| format!("device {t} needs block {q}, which no device holds"))?;
            let hp = *position
                .get(&holder)
                .ok_or_else(|| format!("device {holder} is not one of the program's devices"))?;
            let st = lo.min(src.block - len).max(0);
            start[hp] = st;
            got[p] = st;
            pairs.push(vec![holder, t]);
        }
        pairs.sort_unstable();
        rounds.push(Round {
            source: *s,
            shift: *shift,
            len,
            start,
            pairs,
        });
        recv_start.push(got);
    }

    // A class's picks are the same for all its devices: the holders cut
    // at the same offsets for all of them.
    let class_picks: Vec<Arc<[Pick]>> = classes
        .iter()
        .map(|c| {
            c.row
                .iter()
                .map(|n| match *n {
                    Need::Fill => Pick::Fill,
                    Need::Local(source, index) => Pick::Local { source, index },
                    Need::Halo(s, shift, i) => {
                        let round = slot_of.get(&(s, shift)).copied().unwrap_or(0);
                        Pick::Received {
                            round,
                            index: i - recv_start[round][c.first],
                        }
                    }
                })
                .collect()
        })
        .collect();
    let picks = class_of.iter().map(|&c| class_picks[c].clone()).collect();
    Ok(RemapPlan { dim, rounds, picks })
}
