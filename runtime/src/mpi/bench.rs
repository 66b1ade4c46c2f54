//! Timing one collective on every rank, for `meshrun bench-comm --backend
//! mpi`: the caller builds a [`Collective`] (kind, groups over the world's
//! devices, local shapes, element type) and gets the time of each run.
//!
//! Each timed run starts after a barrier; its time is the slowest rank's
//! (an `MPI_Allreduce` of the per-rank times), so every rank gets the same
//! numbers and rank 0 can print them.

use std::sync::Arc;
use std::time::Instant;

use meshrun_compiler::ir::TensorType;
use meshrun_compiler::partition::collective::{Collective, CollectiveKind};

use super::device::MpiDevice;
use super::MpiBackend;
use crate::backend::{Device, Participation};
use crate::cpu::rendezvous::Rendezvous;
use crate::cpu::CpuDevice;
use crate::error::RuntimeError;
use crate::random_inputs::random_tensor;

/// The devices a collective runs on: every id its groups name, sorted.
pub fn devices_of(c: &Collective) -> Vec<i64> {
    let mut ids: Vec<i64> = c.groups.iter().flatten().copied().collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// Where `device` stands in `c` (what the executor would compute).
pub fn participation(c: &Collective, device: i64) -> Result<Participation<'_>, String> {
    if c.kind == CollectiveKind::CollectivePermute {
        let partner = |side: usize, other: usize| {
            c.groups
                .iter()
                .find(|p| p.get(side) == Some(&device))
                .and_then(|p| p.get(other).copied())
        };
        return Ok(Participation::Permute {
            send_to: partner(0, 1),
            recv_from: partner(1, 0),
        });
    }
    c.groups
        .iter()
        .enumerate()
        .find_map(|(group, members)| {
            let rank = members.iter().position(|&d| d == device)?;
            Some(Participation::Group {
                group,
                rank,
                members,
            })
        })
        .ok_or_else(|| format!("device {device} is in no group of the {}", c.kind))
}

/// Run `c` `warmup` times untimed, then `iters` times timed, on every rank
/// (one device each); the seconds of every timed run, the slowest rank's,
/// on every rank. The world must have one rank per device of `c`.
pub fn time_collective(
    backend: &MpiBackend,
    c: &Collective,
    warmup: usize,
    iters: usize,
) -> Result<Vec<f64>, RuntimeError> {
    let devices = devices_of(c);
    let id = backend.local_device(&devices)?;
    let part = participation(c, id).map_err(RuntimeError::Program)?;
    let input = TensorType::new(c.in_local_shape.clone(), c.elem);
    let out = TensorType::new(c.out_local_shape.clone(), c.elem);
    let x = Arc::new(random_tensor(&input, 1, backend.rank()).map_err(RuntimeError::Program)?);
    let local = CpuDevice::new(
        id,
        meshrun_kernels::Parallelism::None,
        crate::cpu::CHUNKED_ALL_REDUCE_MIN_ELEMS,
        Arc::new(Rendezvous::new()),
    );
    let mut dev = MpiDevice::new(
        local,
        id,
        devices.into(),
        backend.rank(),
        crate::cpu::CHUNKED_ALL_REDUCE_MIN_ELEMS,
    );
    let mut times = Vec::with_capacity(iters);
    for i in 0..warmup + iters {
        backend.barrier();
        let start = Instant::now();
        dev.collective(i as u64, c, part, &x, &out)
            .map_err(|e| RuntimeError::Program(format!("device {id}: {} : {e}", c.kind)))?;
        let mine = start.elapsed().as_secs_f64();
        let slowest = backend.max_over_ranks(mine);
        if i >= warmup {
            times.push(slowest);
        }
    }
    Ok(times)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permute_partners_come_from_the_pairs() {
        let c = Collective {
            kind: CollectiveKind::CollectivePermute,
            axes: vec![],
            dim_axes: vec![],
            dim_factors: vec![],
            all_to_all: None,
            reduction: None,
            groups: vec![vec![0, 1], vec![1, 0], vec![2, 2]],
            in_sharding: meshrun_compiler::sharding::TensorSharding::replicated("mesh", 0),
            out_sharding: meshrun_compiler::sharding::TensorSharding::replicated("mesh", 0),
            global_shape: vec![],
            in_local_shape: vec![],
            out_local_shape: vec![],
            elem: meshrun_compiler::ir::ElemType::F32,
        };
        assert_eq!(devices_of(&c), vec![0, 1, 2]);
        assert_eq!(
            participation(&c, 1).unwrap(),
            Participation::Permute {
                send_to: Some(0),
                recv_from: Some(0)
            }
        );
        assert_eq!(
            participation(&c, 2).unwrap(),
            Participation::Permute {
                send_to: Some(2),
                recv_from: Some(2)
            }
        );
        let g = Collective {
            kind: CollectiveKind::AllGather,
            groups: vec![vec![0, 2], vec![1, 3]],
            ..c
        };
        assert_eq!(
            participation(&g, 3).unwrap(),
            Participation::Group {
                group: 1,
                rank: 1,
                members: &[1, 3]
            }
        );
        assert!(participation(&g, 5).is_err());
    }
}
