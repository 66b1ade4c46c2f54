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
use meshrun_compiler::partition::reshard::collective::Collective;

use super::device::MpiDevice;
use super::MpiBackend;
use crate::backend::Device;
use crate::comm_bench::{check_result, pattern_input, position_of, prepare, result_of};
use crate::comm_bench::{CommBench, CommBenchResult};
use crate::cpu::rendezvous::Rendezvous;
use crate::cpu::CpuDevice;
use crate::error::RuntimeError;
use crate::random_inputs::random_tensor;

pub use crate::comm_bench::{devices_of, participation};

/// This rank's device `id` of a benchmark over `devices`: a CPU device
/// whose collectives go over MPI.
fn rank_device(backend: &MpiBackend, id: i64, devices: Vec<i64>) -> MpiDevice {
    let local = CpuDevice::new(
        id,
        meshrun_kernels::Parallelism::None,
        crate::cpu::CHUNKED_ALL_REDUCE_MIN_ELEMS,
        Arc::new(Rendezvous::new()),
    );
    MpiDevice::new(
        local,
        id,
        devices.into(),
        backend.rank(),
        crate::cpu::CHUNKED_ALL_REDUCE_MIN_ELEMS,
    )
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
    let mut dev = rank_device(backend, id, devices);
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

/// `bench-comm --backend mpi`: [`crate::comm_bench::time_collective`] for
/// one rank per device. Every rank places its pattern block, runs
/// `warmup + iters` collectives (each after a barrier, releasing each
/// result), and checks its last result; times are the slowest rank's and
/// the result is the same on every rank. A rank whose result is wrong
/// prints what was wrong on stderr; the returned error names the lowest
/// such device.
pub fn time_comm_bench(
    backend: &MpiBackend,
    bench: &CommBench,
) -> Result<CommBenchResult, RuntimeError> {
    let c = prepare(bench)?;
    let devices = devices_of(&c);
    let id = backend.local_device(&devices)?;
    let position = position_of(&c, id)
        .ok_or_else(|| RuntimeError::Program(format!("device {id} is not in the benchmark")))?;
    let part = participation(&c, id).map_err(RuntimeError::Program)?;
    let out = TensorType::new(c.out_local_shape.clone(), c.elem);
    let x = Arc::new(pattern_input(&c, position).map_err(RuntimeError::Program)?);
    let mut dev = rank_device(backend, id, devices);
    let total = bench.warmup + bench.iters;
    let mut times = Vec::with_capacity(bench.iters);
    let mut last = None;
    for i in 0..total {
        backend.barrier();
        let start = Instant::now();
        let r = dev
            .collective(i as u64, &c, part, &x, &out)
            .map_err(|e| RuntimeError::Program(format!("device {id}: {} : {e}", c.kind)))?;
        let slowest = backend.max_over_ranks(start.elapsed().as_secs_f64());
        if i >= bench.warmup {
            times.push(slowest);
        }
        if i + 1 == total {
            last = Some(r);
        } else {
            dev.release(r);
        }
    }
    let mine = match last {
        Some(r) => check_result(bench.op, &c, id, &r).err(),
        None => Some(format!("device {id}: no run")),
    };
    if let Some(e) = &mine {
        eprintln!("error: rank {}: {e}", backend.rank());
    }
    // The lowest wrong device, on every rank (-1: none).
    let flag = mine.as_ref().map_or(f64::NEG_INFINITY, |_| -(id as f64));
    let worst = backend.max_over_ranks(flag);
    let error = (worst.is_finite()).then(|| {
        let d = -worst as i64;
        mine.filter(|_| d == id).unwrap_or_else(|| {
            format!(
                "device {d}: the {} result is wrong (its rank printed the first wrong element)",
                bench.op
            )
        })
    });
    Ok(result_of(bench, &c, times, error))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Participation;
    use meshrun_compiler::partition::reshard::collective::CollectiveKind;

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
