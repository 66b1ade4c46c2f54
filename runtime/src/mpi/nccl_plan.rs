//! Which NCCL calls carry each collective of the CUDA backend under MPI
//! (one GPU per rank, [`super::cuda_rank_device`]), and the seats of this
//! rank in a collective's groups. Pure: no GPU, no MPI; the table below is
//! what the unit tests check.
//!
//! | collective      | group of one / empty block | NCCL call                          | then, on this GPU                     |
//! |-----------------|----------------------------|------------------------------------|---------------------------------------|
//! | all-slice       | —                          | none                               | one box of the own block              |
//! | all-reduce      | the own block              | `ncclAllReduce` (native reduction) | —                                     |
//! |                 |                            | `ncclAllGather` (other reductions) | rank-order reduction                  |
//! | reduce-scatter  | one box of the own block   | `ncclAllReduce` (native reduction) | one box of the reduced block          |
//! |                 |                            | `ncclAllGather` (other reductions) | rank-order reduction, one box         |
//! | all-gather      | boxes of the own block     | `ncclAllGather`                    | one box per member                    |
//! | all-to-all      | boxes of the own block     | `ncclAllGather`                    | one chunk per member (box copies)     |
//! | permute         | —                          | grouped `ncclSend` + `ncclRecv`    | own block (self-pair) or zeros        |
//!
//! "Native" is [`native_reduce_op`]: sums and products of floats and
//! integers, max/min of integers and every reduction of `i1`. Float
//! max/min (NaN propagation) and integer and/or are reduced by the kernels
//! in rank order, as the CPU backend does. A native NCCL sum is not
//! bitwise the CPU backend's (NCCL picks the order); the rank-order paths
//! are.
//!
//! All-to-all through an all-gather moves every block to every member
//! (group size times the bytes a true all-to-all moves); correct, and
//! simple enough to trust without a GPU to test on.

use meshrun_compiler::ir::ElemType;
use meshrun_compiler::partition::reshard::collective::{Collective, CollectiveKind};

use super::comms::{membership, Membership};
use crate::cuda::routes::{native_reduce_op, NcclOp};

/// The NCCL call (if any) of one collective on one rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exchange {
    /// No communication.
    None,
    /// `ncclAllReduce` with this reduction on the group's communicator.
    AllReduce(NcclOp),
    /// `ncclAllGather` of every member's whole block, stacked by group rank.
    AllGather,
    /// Grouped `ncclSend` / `ncclRecv` on the world communicator, with
    /// world ranks as peers.
    SendRecv {
        send_to: Option<usize>,
        recv_from: Option<usize>,
    },
}

/// How the result is made from what the exchange left on this GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// The exchange's output (or the own block) is the result.
    Same,
    /// Box copies (`cuda::boxes::result_boxes`) from the members' blocks:
    /// the gathered ones, or the own block for every member when nothing
    /// was exchanged.
    Boxes,
    /// Box copies from the reduced block (reduce-scatter).
    BoxesOfReduced,
    /// The gathered blocks reduced element-wise in rank order.
    Reduce,
    /// The gathered blocks reduced in rank order, then one box of it.
    ReduceThenBoxes,
    /// Permute: the received block.
    Received,
    /// Permute: the own block (a self-pair).
    Own,
    /// Permute: no source, a block of zeros.
    Zeros,
}

/// What one rank does for one collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NcclPlan {
    pub exchange: Exchange,
    pub finish: Finish,
}

const fn plan(exchange: Exchange, finish: Finish) -> NcclPlan {
    NcclPlan { exchange, finish }
}

/// The plan of a group collective (every kind but collective-permute) for
/// a member of a group of `group_size` holding a block of `elem` with
/// `block_elems` elements (every member's block has the same shape).
pub fn group_plan(
    c: &Collective,
    elem: ElemType,
    block_elems: usize,
    group_size: usize,
) -> Result<NcclPlan, String> {
    use CollectiveKind as K;
    let alone = group_size <= 1 || block_elems == 0;
    let native = || {
        c.reduction
            .ok_or_else(|| format!("a {} without a reduction", c.kind))
            .map(|k| native_reduce_op(k, elem))
    };
    Ok(match c.kind {
        K::CollectivePermute => {
            return Err("a collective-permute has pairs, not groups: use permute_plan".into())
        }
        K::AllSlice => plan(Exchange::None, Finish::Boxes),
        K::AllReduce if alone => {
            native()?;
            plan(Exchange::None, Finish::Same)
        }
        K::ReduceScatter if alone => {
            native()?;
            plan(Exchange::None, Finish::Boxes)
        }
        K::AllGather | K::AllToAll if alone => plan(Exchange::None, Finish::Boxes),
        K::AllReduce => match native()? {
            Some(op) => plan(Exchange::AllReduce(op), Finish::Same),
            None => plan(Exchange::AllGather, Finish::Reduce),
        },
        K::ReduceScatter => match native()? {
            Some(op) => plan(Exchange::AllReduce(op), Finish::BoxesOfReduced),
            None => plan(Exchange::AllGather, Finish::ReduceThenBoxes),
        },
        K::AllGather | K::AllToAll => plan(Exchange::AllGather, Finish::Boxes),
    })
}

/// The plan of a collective-permute for the device at world rank `me`:
/// `send_to` / `recv_from` as the executor gives them (device ids, the
/// device itself for a self-pair), `devices[r]` running on world rank `r`.
pub fn permute_plan(
    devices: &[i64],
    me: usize,
    send_to: Option<i64>,
    recv_from: Option<i64>,
) -> Result<NcclPlan, String> {
    let id = *devices
        .get(me)
        .ok_or_else(|| format!("rank {me} runs no device of {devices:?}"))?;
    let rank_of = |d: i64| {
        devices
            .iter()
            .position(|&x| x == d)
            .ok_or_else(|| format!("device {d} is not one of the run's devices"))
    };
    let send_to = send_to.filter(|&d| d != id).map(rank_of).transpose()?;
    let (recv, finish) = match recv_from {
        Some(d) if d == id => (None, Finish::Own),
        Some(d) => (Some(rank_of(d)?), Finish::Received),
        None => (None, Finish::Zeros),
    };
    let exchange = if send_to.is_none() && recv.is_none() {
        Exchange::None
    } else {
        Exchange::SendRecv {
            send_to,
            recv_from: recv,
        }
    };
    Ok(plan(exchange, finish))
}

/// Where world rank `me` sits in a collective's groups (device ids, by
/// group rank): the groups as world ranks (the key of the group's MPI and
/// NCCL communicators) and this rank's group and place in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seats {
    pub partition: Vec<Vec<usize>>,
    pub me: Membership,
}

pub fn seats(groups: &[Vec<i64>], devices: &[i64], me: usize) -> Result<Seats, String> {
    let rank_of = |d: i64| {
        devices
            .iter()
            .position(|&x| x == d)
            .ok_or_else(|| format!("device {d} is not one of the run's devices"))
    };
    let partition = groups
        .iter()
        .map(|g| g.iter().map(|&d| rank_of(d)).collect())
        .collect::<Result<Vec<Vec<usize>>, String>>()?;
    let me = membership(&partition, me)?;
    Ok(Seats { partition, me })
}

/// The one group of every rank, for the world communicator that carries
/// collective-permutes.
pub fn world_partition(ranks: usize) -> Vec<Vec<usize>> {
    vec![(0..ranks).collect()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use meshrun_compiler::ir::ReduceKind;
    use meshrun_compiler::partition::reshard::collective::AllToAllDims;
    use meshrun_compiler::sharding::TensorSharding;

    fn collective(kind: CollectiveKind, reduction: Option<ReduceKind>) -> Collective {
        Collective {
            kind,
            axes: vec![],
            dim_axes: vec![vec![]; 2],
            dim_factors: vec![2, 1],
            all_to_all: (kind == CollectiveKind::AllToAll).then_some(AllToAllDims {
                src_dim: 0,
                tgt_dim: 1,
            }),
            reduction,
            groups: vec![vec![0, 1], vec![2, 3]],
            in_sharding: TensorSharding::replicated("m", 2),
            out_sharding: TensorSharding::replicated("m", 2),
            global_shape: vec![4, 2],
            in_local_shape: vec![2, 2],
            out_local_shape: vec![2, 2],
            elem: ElemType::F32,
        }
    }

    #[test]
    fn every_group_collective_has_its_calls() {
        use CollectiveKind as K;
        use ElemType as E;
        use Exchange as X;
        use Finish as F;
        use ReduceKind as R;
        let (sum, prod, max, min) = (
            X::AllReduce(NcclOp::Sum),
            X::AllReduce(NcclOp::Prod),
            X::AllReduce(NcclOp::Max),
            X::AllReduce(NcclOp::Min),
        );
        // (kind, reduction, element type, block elements, group size, plan)
        #[rustfmt::skip]
        let table = [
            (K::AllSlice, None, E::F32, 8, 4, X::None, F::Boxes),
            (K::AllReduce, Some(R::Add), E::F32, 8, 4, sum, F::Same),
            (K::AllReduce, Some(R::Multiply), E::I64, 8, 2, prod, F::Same),
            (K::AllReduce, Some(R::Maximum), E::I32, 8, 2, max, F::Same),
            (K::AllReduce, Some(R::Or), E::I1, 8, 2, max, F::Same),
            (K::AllReduce, Some(R::And), E::I1, 8, 2, min, F::Same),
            // NaN-propagating float max and integer and: the kernels reduce.
            (K::AllReduce, Some(R::Maximum), E::F32, 8, 2, X::AllGather, F::Reduce),
            (K::AllReduce, Some(R::And), E::I32, 8, 2, X::AllGather, F::Reduce),
            (K::AllReduce, Some(R::Add), E::F32, 8, 1, X::None, F::Same),
            (K::AllReduce, Some(R::Add), E::F32, 0, 4, X::None, F::Same),
            (K::ReduceScatter, Some(R::Add), E::BF16, 8, 4, sum, F::BoxesOfReduced),
            (K::ReduceScatter, Some(R::Minimum), E::F64, 8, 4, X::AllGather, F::ReduceThenBoxes),
            (K::ReduceScatter, Some(R::Add), E::F32, 8, 1, X::None, F::Boxes),
            (K::AllGather, None, E::F16, 8, 4, X::AllGather, F::Boxes),
            (K::AllGather, None, E::F16, 8, 1, X::None, F::Boxes),
            (K::AllGather, None, E::F16, 0, 4, X::None, F::Boxes),
            (K::AllToAll, None, E::I64, 8, 4, X::AllGather, F::Boxes),
            (K::AllToAll, None, E::I64, 8, 1, X::None, F::Boxes),
        ];
        for (kind, red, elem, n, size, exchange, finish) in table {
            let c = collective(kind, red);
            assert_eq!(
                group_plan(&c, elem, n, size),
                Ok(NcclPlan { exchange, finish }),
                "{kind} {red:?} {elem} of {n} elements in groups of {size}"
            );
        }
    }

    #[test]
    fn malformed_group_collectives_are_refused() {
        let e = group_plan(
            &collective(CollectiveKind::AllReduce, None),
            ElemType::F32,
            8,
            2,
        )
        .unwrap_err();
        assert!(e.contains("without a reduction"), "{e}");
        let e = group_plan(
            &collective(CollectiveKind::CollectivePermute, None),
            ElemType::F32,
            8,
            2,
        )
        .unwrap_err();
        assert!(e.contains("permute_plan"), "{e}");
    }

    #[test]
    fn permutes_send_and_receive_by_world_rank() {
        // Devices 10..14 on ranks 0..4.
        let devices = [10, 11, 12, 13];
        let sr = |send_to, recv_from| Exchange::SendRecv { send_to, recv_from };
        // (rank, send_to, recv_from, plan)
        #[rustfmt::skip]
        let table = [
            (1, Some(12), Some(10), sr(Some(2), Some(0)), Finish::Received),
            (0, Some(11), None, sr(Some(1), None), Finish::Zeros),
            (3, None, Some(12), sr(None, Some(2)), Finish::Received),
            (2, Some(12), Some(12), Exchange::None, Finish::Own),
            (2, None, None, Exchange::None, Finish::Zeros),
            // A self-pair never goes through NCCL, but the other side does.
            (1, Some(11), Some(13), sr(None, Some(3)), Finish::Received),
        ];
        for (me, to, from, exchange, finish) in table {
            assert_eq!(
                permute_plan(&devices, me, to, from),
                Ok(NcclPlan { exchange, finish }),
                "rank {me}: {to:?} <- {from:?}"
            );
        }
        let e = permute_plan(&devices, 0, Some(99), None).unwrap_err();
        assert!(e.contains("device 99"), "{e}");
        assert!(permute_plan(&devices, 4, None, None).is_err());
    }

    #[test]
    fn seats_are_world_ranks_and_a_place_in_the_group() {
        let devices = [4, 5, 6, 7];
        let s = seats(&[vec![7, 5], vec![4, 6]], &devices, 1).unwrap();
        assert_eq!(s.partition, vec![vec![3, 1], vec![0, 2]]);
        assert_eq!(
            s.me,
            Membership {
                group: 0,
                rank: 1,
                group_size: 2
            }
        );
        assert!(seats(&[vec![4, 9]], &devices, 0)
            .unwrap_err()
            .contains("device 9"));
        assert!(seats(&[vec![4, 5]], &devices, 2)
            .unwrap_err()
            .contains("no group"));
        assert_eq!(world_partition(3), vec![vec![0, 1, 2]]);
    }
}
