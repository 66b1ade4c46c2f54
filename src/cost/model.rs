//! The α-β model of one collective, with nccl-tests' conventions
//! (`doc/PERFORMANCE.md` of NVIDIA/nccl-tests).
//!
//! nccl-tests reports, per op, a size `S` (bytes), the time `t`, the
//! algorithm bandwidth `algbw = S / t` and the bus bandwidth
//! `busbw = algbw × factor`, where `factor` makes busbw comparable with the
//! link speed: `(G−1)/G` for all-gather, reduce-scatter and all-to-all,
//! `2(G−1)/G` for all-reduce, 1 for send/recv (a collective-permute). So
//! with a link of bus bandwidth `B` and per-step latency `α`:
//!
//! | kind               | `S` (nccl-tests' size)            | time                        |
//! |--------------------|-----------------------------------|-----------------------------|
//! | all-gather         | the gathered output = `G × in`    | `(G−1)/G · S/B + (G−1)α`    |
//! | reduce-scatter     | the full input = `G × out`        | `(G−1)/G · S/B + (G−1)α`    |
//! | all-reduce         | the buffer = `in`                 | `2(G−1)/G · S/B + 2(G−1)α`  |
//! | all-to-all         | one device's send buffer = `G × chunk` | `(G−1)/G · S/B + (G−1)α` |
//! | collective-permute | one device's block = `in`         | `S/B + α`                   |
//!
//! `G` is the group size, `in`/`out` the padded local blocks, `chunk` the
//! block one device sends to one peer. The α term counts the steps of a
//! ring (G−1 for a gather or scatter, twice that for an all-reduce). For an
//! all-to-all we also charge `(G−1)α`: a pairwise exchange takes G−1 rounds
//! of one message each, and NCCL posts the G−1 sends together but each
//! still pays its own start-up; this is pessimistic for tiny messages.
//!
//! `factor × S` is then exactly the partitioner's `bytes_per_device` (what
//! each device receives), so the bandwidth term is `bytes_per_device / B`
//! for every kind but the permute. A permute's `bytes_per_device` averages
//! over all devices (some may not send), while its time is that of a device
//! that does: `S/B + α`, or nothing when no pair moves data.
//!
//! All groups of a collective run at once; its time is that of the slowest
//! group (the one on the slowest link).

use meshrun_compiler::partition::{Collective, CollectiveKind};
use meshrun_runtime::collective_kinds as kinds;

use crate::cost::error::CostError;
use crate::cost::topology::{Link, Topology};

/// nccl-tests' `busbw / algbw` for `kind` on groups of `g`.
pub fn bus_factor(kind: CollectiveKind, g: usize) -> f64 {
    kinds::def(kind).traffic.bus_factor(g)
}

/// How many α a collective of `kind` on groups of `g` pays.
pub fn latency_steps(kind: CollectiveKind, g: usize) -> f64 {
    kinds::def(kind).traffic.latency_steps(g)
}

/// The α-β time in seconds of one `kind` collective of nccl-tests size
/// `size_bytes` on groups of `g` over `link`.
pub fn alpha_beta_seconds(kind: CollectiveKind, g: usize, size_bytes: f64, link: &Link) -> f64 {
    bus_factor(kind, g) * size_bytes / link.bytes_per_second()
        + latency_steps(kind, g) * link.latency_s()
}

/// nccl-tests' size `S` of `c`, in bytes (see the module table): the
/// padded blocks the partitioner moves.
pub fn nccl_size_bytes(c: &Collective) -> f64 {
    (kinds::def(c.kind).nccl_size)(c)
}

/// What the model says about one collective.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectiveEstimate {
    pub kind: CollectiveKind,
    /// Devices per group (2 for a permute's source/target pair).
    pub group_size: usize,
    /// nccl-tests' size `S`.
    pub nccl_bytes: f64,
    /// `bus_factor × S`: bytes over the slowest device's link.
    pub bus_bytes: f64,
    /// The slowest group's link.
    pub link: Link,
    /// True when that group spans nodes.
    pub crosses_nodes: bool,
    /// Number of α paid.
    pub latency_steps: f64,
    /// Estimated time, seconds.
    pub seconds: f64,
}

/// Estimate `c` on `topo`. Every device of every group must exist in the
/// topology.
pub fn estimate_collective(
    c: &Collective,
    topo: &Topology,
) -> Result<CollectiveEstimate, CostError> {
    let g = c.group_size();
    let s = nccl_size_bytes(c);
    // The groups that actually exchange data: a permute's self-pairs and
    // one-device groups move nothing.
    let def = kinds::def(c.kind);
    let moving: Vec<&Vec<i64>> = if !def.moves_data() {
        Vec::new()
    } else if def.pairs {
        c.groups.iter().filter(|p| p.first() != p.last()).collect()
    } else {
        c.groups.iter().filter(|grp| grp.len() > 1).collect()
    };
    let mut slowest = None;
    let mut worst = 0.0_f64;
    for grp in moving {
        let choice = topo.link_for(grp)?;
        let t = alpha_beta_seconds(c.kind, g, s, &choice.link);
        if slowest.is_none() || t > worst {
            worst = t;
            slowest = Some(choice);
        }
    }
    let (link, crosses_nodes, seconds, steps, bus_bytes) = match slowest {
        Some(choice) => (
            choice.link,
            choice.crosses_nodes,
            worst,
            latency_steps(c.kind, g),
            bus_factor(c.kind, g) * s,
        ),
        None => (topo.intra_node.clone(), false, 0.0, 0.0, 0.0),
    };
    Ok(CollectiveEstimate {
        kind: c.kind,
        group_size: g,
        nccl_bytes: s,
        bus_bytes,
        link,
        crosses_nodes,
        latency_steps: steps,
        seconds,
    })
}
