//! How one collective group's data moves between GPUs (pure; tested on
//! the CPU).
//!
//! NCCL refuses two ranks of one communicator on the same GPU, and mesh
//! devices may share GPUs (`placement`). So each group gets a route:
//!
//! - [`Route::Local`]: every member is on one GPU. Members swap buffer
//!   handles in process memory and read each other's blocks with
//!   device-to-device copies and reduction kernels; no NCCL.
//! - [`Route::Nccl`]: every member has a GPU of its own. One NCCL
//!   communicator over the members (rank = group rank) runs the native
//!   collective (all-reduce, all-gather), or grouped send/recv.
//! - [`Route::Staged`]: mixed (e.g. 8 mesh devices on 2 GPUs and a group
//!   that spans both). The first member on each GPU is its *leader*; the
//!   leaders share one NCCL communicator (rank = GPU index in the plan)
//!   and move whole blocks between GPUs with grouped send/recv
//!   ([`GroupPlan::transfers`]); on each GPU, members swap handles as in
//!   the local route. After the exchange every member can read, on its own
//!   GPU, every block it needs, and computes its result from them like the
//!   local route does.
//!
//! Communicators are keyed by the list of mesh devices that drive them
//! ([`GroupPlan::comm_members`]), so two groups over the same GPUs driven
//! by different mesh devices (different streams) never share one, and
//! each communicator is only ever used by its members' own threads.

use meshrun_compiler::ir::{ElemType, ReduceKind};

use super::placement::Placement;

/// How a group communicates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Local,
    Nccl,
    Staged,
}

/// The members of a group on one GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuMembers {
    pub gpu: usize,
    /// Group ranks, ascending; the first is the GPU's leader.
    pub ranks: Vec<usize>,
}

/// One whole block moving between GPUs: member `rank`'s block, from the
/// leader of `gpus[from]` to the leader of `gpus[to]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Transfer {
    pub from: usize,
    pub to: usize,
    pub rank: usize,
}

/// Which members' blocks each member reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Needs {
    /// Every member reads every block (all-gather, all-to-all, reductions).
    All,
    /// Member `r` reads only the block of member `sources[r]` (a
    /// collective-permute; `None`: it receives nothing).
    Sources(Vec<Option<usize>>),
}

/// The route of one group of one collective.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupPlan {
    /// Mesh device ids by group rank.
    pub members: Vec<i64>,
    pub route: Route,
    /// The GPUs the group spans, by GPU ordinal.
    pub gpus: Vec<GpuMembers>,
    /// Blocks to move between GPUs (staged route, and the send/recv
    /// collectives of the NCCL route), in the one order both sides issue
    /// them.
    pub transfers: Vec<Transfer>,
}

impl GroupPlan {
    pub fn new(members: &[i64], placement: &Placement, needs: &Needs) -> Result<GroupPlan, String> {
        if members.is_empty() {
            return Err("a group without members".into());
        }
        let mut gpus: Vec<GpuMembers> = Vec::new();
        for (rank, &d) in members.iter().enumerate() {
            let gpu = placement
                .gpu(d)
                .ok_or_else(|| format!("device {d} has no GPU"))?;
            match gpus.iter_mut().find(|g| g.gpu == gpu) {
                Some(g) => g.ranks.push(rank),
                None => gpus.push(GpuMembers {
                    gpu,
                    ranks: vec![rank],
                }),
            }
        }
        gpus.sort_by_key(|g| g.gpu);
        let route = if gpus.len() == 1 {
            Route::Local
        } else if gpus.iter().all(|g| g.ranks.len() == 1) {
            Route::Nccl
        } else {
            Route::Staged
        };
        let gpu_index = |rank: usize| gpus.iter().position(|g| g.ranks.contains(&rank));
        let mut transfers = Vec::new();
        match needs {
            Needs::All => {
                for to in 0..gpus.len() {
                    for rank in 0..members.len() {
                        let from = gpu_index(rank).ok_or("a member on no GPU")?;
                        if from != to {
                            transfers.push(Transfer { from, to, rank });
                        }
                    }
                }
            }
            Needs::Sources(sources) => {
                if sources.len() != members.len() {
                    return Err(format!(
                        "{} sources for a group of {}",
                        sources.len(),
                        members.len()
                    ));
                }
                for (r, s) in sources.iter().enumerate() {
                    let Some(s) = *s else { continue };
                    if s >= members.len() {
                        return Err(format!("member {r} reads member {s} of {}", members.len()));
                    }
                    let (from, to) = (
                        gpu_index(s).ok_or("a member on no GPU")?,
                        gpu_index(r).ok_or("a member on no GPU")?,
                    );
                    let t = Transfer { from, to, rank: s };
                    if from != to && !transfers.contains(&t) {
                        transfers.push(t);
                    }
                }
            }
        }
        transfers.sort_unstable();
        Ok(GroupPlan {
            members: members.to_vec(),
            route,
            gpus,
            transfers,
        })
    }

    /// The index (in `gpus`) of the GPU member `rank` runs on.
    pub fn gpu_index(&self, rank: usize) -> Option<usize> {
        self.gpus.iter().position(|g| g.ranks.contains(&rank))
    }

    /// The ranks on the same GPU as `rank` (itself included).
    pub fn local_ranks(&self, rank: usize) -> &[usize] {
        self.gpu_index(rank)
            .map(|i| self.gpus[i].ranks.as_slice())
            .unwrap_or(&[])
    }

    /// Whether `rank` drives its GPU's side of the inter-GPU traffic.
    pub fn is_leader(&self, rank: usize) -> bool {
        self.local_ranks(rank).first() == Some(&rank)
    }

    /// The mesh devices that share this group's NCCL communicator (its
    /// key), in communicator rank order: the leaders of the GPUs. Empty
    /// for the local route.
    pub fn comm_members(&self) -> Vec<i64> {
        if self.route == Route::Local {
            return Vec::new();
        }
        self.gpus.iter().map(|g| self.members[g.ranks[0]]).collect()
    }

    /// Whether the collective needs a communicator at all (every leader
    /// must then join its creation, even one with nothing to send).
    pub fn needs_comm(&self, native: bool) -> bool {
        self.route != Route::Local && (native || !self.transfers.is_empty())
    }
}

/// NCCL's reduction for a native all-reduce, or `None` when the kernels
/// must reduce instead: float maximum / minimum (StableHLO propagates NaN,
/// NCCL's `fmax` does not) and bitwise and / or of integers (no NCCL op).
/// `i1` is one byte 0/1, so or is max and and is min.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NcclOp {
    Sum,
    Prod,
    Max,
    Min,
}

#[cfg(feature = "cuda")]
impl NcclOp {
    /// The `ncclRedOp_t` it is.
    pub fn nccl(self) -> cudarc::nccl::ReduceOp {
        use cudarc::nccl::ReduceOp;
        match self {
            NcclOp::Sum => ReduceOp::Sum,
            NcclOp::Prod => ReduceOp::Prod,
            NcclOp::Max => ReduceOp::Max,
            NcclOp::Min => ReduceOp::Min,
        }
    }
}

pub fn native_reduce_op(kind: ReduceKind, elem: ElemType) -> Option<NcclOp> {
    use ReduceKind as K;
    match elem {
        ElemType::I1 => Some(match kind {
            K::Add | K::Or | K::Maximum => NcclOp::Max,
            K::Multiply | K::And | K::Minimum => NcclOp::Min,
        }),
        ElemType::F64 | ElemType::F32 | ElemType::F16 | ElemType::BF16 => match kind {
            K::Add => Some(NcclOp::Sum),
            K::Multiply => Some(NcclOp::Prod),
            _ => None,
        },
        ElemType::I32 | ElemType::I64 => match kind {
            K::Add => Some(NcclOp::Sum),
            K::Multiply => Some(NcclOp::Prod),
            K::Maximum => Some(NcclOp::Max),
            K::Minimum => Some(NcclOp::Min),
            K::And | K::Or => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eight_on(gpus: usize) -> Placement {
        Placement::blocks(&(0..8).collect::<Vec<i64>>(), gpus).unwrap()
    }

    #[test]
    fn routes_follow_the_placement() {
        let two = eight_on(2);
        // A minor-axis group stays on one GPU.
        let g = GroupPlan::new(&[0, 1, 2, 3], &two, &Needs::All).unwrap();
        assert_eq!(g.route, Route::Local);
        assert!(g.transfers.is_empty());
        assert!(g.comm_members().is_empty());
        assert!(!g.needs_comm(true));
        // A major-axis group has one member per GPU: plain NCCL.
        let g = GroupPlan::new(&[1, 5], &two, &Needs::All).unwrap();
        assert_eq!(g.route, Route::Nccl);
        assert_eq!(g.comm_members(), vec![1, 5]);
        assert_eq!(
            g.transfers,
            vec![
                Transfer {
                    from: 0,
                    to: 1,
                    rank: 0
                },
                Transfer {
                    from: 1,
                    to: 0,
                    rank: 1
                }
            ]
        );
        // Both axes: staged through the leaders 0 and 4.
        let all: Vec<i64> = (0..8).collect();
        let g = GroupPlan::new(&all, &two, &Needs::All).unwrap();
        assert_eq!(g.route, Route::Staged);
        assert_eq!(g.comm_members(), vec![0, 4]);
        assert!(g.is_leader(4) && !g.is_leader(5));
        assert_eq!(g.local_ranks(6), &[4, 5, 6, 7]);
        // Each GPU receives the other's 4 blocks.
        assert_eq!(g.transfers.len(), 8);
        assert!(g.transfers.iter().all(|t| t.from != t.to));
        assert!(g.transfers.windows(2).all(|w| w[0] < w[1]));
        // On 8 GPUs everything is NCCL.
        let g = GroupPlan::new(&all, &eight_on(8), &Needs::All).unwrap();
        assert_eq!(g.route, Route::Nccl);
    }

    #[test]
    fn group_ranks_need_not_follow_gpu_order() {
        let two = eight_on(2);
        // Ranks interleave the GPUs: rank 0 on GPU 1, rank 1 on GPU 0, ...
        let g = GroupPlan::new(&[4, 0, 5, 1], &two, &Needs::All).unwrap();
        assert_eq!(g.route, Route::Staged);
        assert_eq!(
            g.gpus[0],
            GpuMembers {
                gpu: 0,
                ranks: vec![1, 3]
            }
        );
        assert_eq!(g.comm_members(), vec![0, 4]);
        assert_eq!(g.gpu_index(2), Some(1));
    }

    #[test]
    fn permutes_move_only_the_blocks_read_across_gpus() {
        let two = eight_on(2);
        let all: Vec<i64> = (0..8).collect();
        // A shift by one: 3 -> 4 and 7 -> 0 cross GPUs, the rest stay.
        let sources: Vec<Option<usize>> = (0..8).map(|r| Some((r + 7) % 8)).collect();
        let g = GroupPlan::new(&all, &two, &Needs::Sources(sources)).unwrap();
        assert_eq!(
            g.transfers,
            vec![
                Transfer {
                    from: 0,
                    to: 1,
                    rank: 3
                },
                Transfer {
                    from: 1,
                    to: 0,
                    rank: 7
                }
            ]
        );
        assert!(g.needs_comm(false));
        // Swaps within each GPU need no communicator at all.
        let swaps = vec![
            Some(1),
            Some(0),
            None,
            Some(2),
            Some(5),
            Some(4),
            Some(6),
            Some(7),
        ];
        let g = GroupPlan::new(&all, &two, &Needs::Sources(swaps)).unwrap();
        assert!(g.transfers.is_empty());
        assert!(!g.needs_comm(false));
        assert!(GroupPlan::new(&all, &two, &Needs::Sources(vec![Some(9); 8])).is_err());
        assert!(GroupPlan::new(&[0, 9], &two, &Needs::All).is_err());
    }

    /// For many groups, placements and needs: after the transfers, every
    /// member can read every block it needs on its own GPU, nothing moves
    /// that no one reads, and the communicator has one leader per GPU.
    #[test]
    fn transfers_deliver_exactly_the_blocks_members_read() {
        let mut state = 12345u64;
        let mut next = |n: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) as usize) % n
        };
        for _ in 0..500 {
            let n = 1 + next(8);
            let mut devices: Vec<i64> = (0..n as i64).collect();
            for i in (1..n).rev() {
                devices.swap(i, next(i + 1));
            }
            let placement = Placement::blocks(&devices, 1 + next(4)).unwrap();
            let size = 1 + next(n);
            let members: Vec<i64> = devices[..size].to_vec();
            let needs = if next(2) == 0 {
                Needs::All
            } else {
                Needs::Sources(
                    (0..size)
                        .map(|_| (next(3) > 0).then(|| next(size)))
                        .collect(),
                )
            };
            let plan = GroupPlan::new(&members, &placement, &needs).unwrap();
            let reads = |r: usize| -> Vec<usize> {
                match &needs {
                    Needs::All => (0..size).collect(),
                    Needs::Sources(s) => s[r].into_iter().collect(),
                }
            };
            for (r, &member) in members.iter().enumerate() {
                let to = plan.gpu_index(r).unwrap();
                assert_eq!(plan.gpus[to].gpu, placement.gpu(member).unwrap());
                for m in reads(r) {
                    let from = plan.gpu_index(m).unwrap();
                    if from != to {
                        assert!(
                            plan.transfers.contains(&Transfer { from, to, rank: m }),
                            "{plan:?}"
                        );
                    }
                }
            }
            for t in &plan.transfers {
                assert_ne!(t.from, t.to);
                assert_eq!(plan.gpu_index(t.rank), Some(t.from));
                assert!(plan.gpus[t.to]
                    .ranks
                    .iter()
                    .any(|&r| reads(r).contains(&t.rank)));
            }
            let leaders = plan.comm_members();
            if plan.route != Route::Local {
                let gpus: Vec<usize> = leaders.iter().map(|&d| placement.gpu(d).unwrap()).collect();
                let mut distinct = gpus.clone();
                distinct.dedup();
                assert_eq!(gpus.len(), plan.gpus.len());
                assert_eq!(distinct.len(), gpus.len());
            }
        }
    }

    #[test]
    fn native_reductions_keep_stablehlo_semantics() {
        assert_eq!(
            native_reduce_op(ReduceKind::Add, ElemType::BF16),
            Some(NcclOp::Sum)
        );
        assert_eq!(native_reduce_op(ReduceKind::Maximum, ElemType::F32), None);
        assert_eq!(
            native_reduce_op(ReduceKind::Maximum, ElemType::I32),
            Some(NcclOp::Max)
        );
        assert_eq!(native_reduce_op(ReduceKind::Or, ElemType::I64), None);
        assert_eq!(
            native_reduce_op(ReduceKind::Add, ElemType::I1),
            Some(NcclOp::Max)
        );
        assert_eq!(
            native_reduce_op(ReduceKind::And, ElemType::I1),
            Some(NcclOp::Min)
        );
        assert_eq!(native_reduce_op(ReduceKind::Add, ElemType::U8), None);
    }
}
