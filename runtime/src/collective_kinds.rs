//! One definition per collective kind of what is known about it apart
//! from how a backend moves its data: its name and the names nccl-tests
//! gives it, whether its members come as groups or `[source, target]`
//! pairs, its traffic pattern (nccl-tests' bus-bandwidth factor and the
//! latency steps of a ring) and nccl-tests' message size `S`. The cost
//! model (`meshrun::cost`: α-β time, calibration, the CPU simulation) and
//! the benchmark read this table instead of matching on the kind, so a new
//! kind is described here once; the backends (`cpu`, `cuda`, `mpi`) each
//! implement only its transport, and `cpu::collectives` its semantics on
//! host blocks.

use meshrun_compiler::partition::{Collective, CollectiveKind};

/// How a collective's bytes travel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Traffic {
    /// Nothing moves (all-slice).
    None,
    /// Ring steps: `passes` times around a ring of the group (each pass
    /// `G−1` steps moving `(G−1)/G` of the message).
    Ring { passes: f64 },
    /// One message from a source to a target (send/recv).
    PointToPoint,
}

impl Traffic {
    /// nccl-tests' `busbw / algbw` on groups of `g` (0 for `g <= 1`).
    pub fn bus_factor(self, g: usize) -> f64 {
        if g <= 1 {
            return 0.0;
        }
        let g = g as f64;
        match self {
            Traffic::None => 0.0,
            Traffic::Ring { passes } => passes * (g - 1.0) / g,
            Traffic::PointToPoint => 1.0,
        }
    }

    /// How many α one collective on groups of `g` pays (0 for `g <= 1`).
    pub fn latency_steps(self, g: usize) -> f64 {
        if g <= 1 {
            return 0.0;
        }
        match self {
            Traffic::None => 0.0,
            Traffic::Ring { passes } => passes * (g - 1) as f64,
            Traffic::PointToPoint => 1.0,
        }
    }
}

/// What one collective kind is, transport aside.
#[derive(Debug)]
pub struct KindDef {
    pub kind: CollectiveKind,
    /// `all-gather`, ... (the kind's `Display`).
    pub name: &'static str,
    /// The names benchmark rows give it, lower case, letters and digits
    /// only (`allgather`, `sendrecv`); none for a kind nothing benchmarks.
    pub bench_names: &'static [&'static str],
    /// Members are `[source, target]` pairs (one per device), not groups.
    pub pairs: bool,
    pub traffic: Traffic,
    /// nccl-tests' size `S` of one such collective, in bytes: the padded
    /// blocks the partitioner moves (see `meshrun::cost::model`).
    pub nccl_size: fn(&Collective) -> f64,
}

impl KindDef {
    /// Whether it exchanges data between devices.
    pub fn moves_data(&self) -> bool {
        self.traffic != Traffic::None
    }
}

fn block_bytes(shape: &[i64], c: &Collective) -> f64 {
    shape.iter().product::<i64>() as f64 * c.elem.byte_size() as f64
}

fn group(c: &Collective) -> f64 {
    c.group_size() as f64
}

/// Every kind, in the order the cost model reports them.
pub const KINDS: [KindDef; 6] = [
    KindDef {
        kind: CollectiveKind::AllSlice,
        name: "all-slice",
        bench_names: &[],
        pairs: false,
        traffic: Traffic::None,
        nccl_size: |_| 0.0,
    },
    KindDef {
        kind: CollectiveKind::AllGather,
        name: "all-gather",
        bench_names: &["allgather"],
        pairs: false,
        traffic: Traffic::Ring { passes: 1.0 },
        // The gathered output: G × in.
        nccl_size: |c| group(c) * block_bytes(&c.in_local_shape, c),
    },
    KindDef {
        kind: CollectiveKind::ReduceScatter,
        name: "reduce-scatter",
        bench_names: &["reducescatter"],
        pairs: false,
        traffic: Traffic::Ring { passes: 1.0 },
        // The full input: G × out.
        nccl_size: |c| group(c) * block_bytes(&c.out_local_shape, c),
    },
    KindDef {
        kind: CollectiveKind::AllReduce,
        name: "all-reduce",
        bench_names: &["allreduce"],
        pairs: false,
        traffic: Traffic::Ring { passes: 2.0 },
        nccl_size: |c| block_bytes(&c.in_local_shape, c),
    },
    KindDef {
        kind: CollectiveKind::AllToAll,
        name: "all-to-all",
        bench_names: &["alltoall"],
        pairs: false,
        traffic: Traffic::Ring { passes: 1.0 },
        nccl_size: all_to_all_size,
    },
    KindDef {
        kind: CollectiveKind::CollectivePermute,
        name: "collective-permute",
        bench_names: &["collectivepermute", "permute", "sendrecv"],
        pairs: true,
        traffic: Traffic::PointToPoint,
        nccl_size: |c| block_bytes(&c.in_local_shape, c),
    },
];

/// One device's send buffer: `G` chunks, a chunk being the input block
/// cut, along the split dimension, to the output's length there.
fn all_to_all_size(c: &Collective) -> f64 {
    let mut chunk = c.in_local_shape.clone();
    match c.all_to_all {
        Some(dims) => {
            if let (Some(s), Some(&o)) = (
                chunk.get_mut(dims.tgt_dim),
                c.out_local_shape.get(dims.tgt_dim),
            ) {
                *s = o;
            }
            group(c) * block_bytes(&chunk, c)
        }
        None => block_bytes(&chunk, c),
    }
}

/// The definition of `kind`.
pub fn def(kind: CollectiveKind) -> &'static KindDef {
    KINDS
        .iter()
        .find(|d| d.kind == kind)
        .expect("every collective kind is in KINDS")
}

/// The kind a benchmark row's op name stands for (`all_gather`,
/// `AllGather`, `sendrecv`, ...).
pub fn kind_named(op: &str) -> Option<CollectiveKind> {
    let norm: String = op
        .to_ascii_lowercase()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    KINDS
        .iter()
        .find(|d| d.bench_names.contains(&norm.as_str()))
        .map(|d| d.kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_defined_once_under_its_display_name() {
        for d in &KINDS {
            assert_eq!(def(d.kind).name, d.name);
            assert_eq!(d.kind.to_string(), d.name);
            assert_eq!(d.moves_data(), !d.bench_names.is_empty(), "{}", d.name);
        }
        assert_eq!(kind_named("All_Gather"), Some(CollectiveKind::AllGather));
        assert_eq!(
            kind_named("sendrecv"),
            Some(CollectiveKind::CollectivePermute)
        );
        assert_eq!(kind_named("all-slice"), None);
        let ar = def(CollectiveKind::AllReduce).traffic;
        assert_eq!(ar.bus_factor(4), 1.5);
        assert_eq!(ar.latency_steps(4), 6.0);
        assert_eq!(ar.bus_factor(1), 0.0);
    }
}
