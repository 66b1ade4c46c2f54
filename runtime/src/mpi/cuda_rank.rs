//! The CUDA backend under MPI (`mpirun -np N meshrun run FILE --backend
//! cuda`, with the `mpi` feature): one process per mesh device, one GPU per
//! process. Rank `r` runs device `devices[r]` on its GPU; inputs are placed
//! and outputs gathered by [`super::session`] (host bytes over MPI, then
//! uploaded to or downloaded from the GPU), and collectives go over NCCL
//! communicators bootstrapped through MPI ([`super::cuda_rank_device`]).
//!
//! **Which GPU.** When `CUDA_VISIBLE_DEVICES` names exactly one GPU (what
//! `srun --gpus-per-task=1` sets, or a wrapper script), the rank uses that
//! one. Otherwise it uses GPU number *local rank* among the GPUs it sees
//! ([`super::gpu::local_rank`]: `OMPI_COMM_WORLD_LOCAL_RANK`, then
//! `MPI_LOCALRANKID`, then `SLURM_LOCALID`), and more ranks on a node than
//! GPUs is an error, never two ranks silently sharing a GPU.
//!
//! **Failures.** Opening fails with a one-line reason (no driver, no GPU,
//! too few GPUs, no NVRTC), never a panic; the CLI settles it over the
//! world, so a job where every rank fails prints the reason once and exits
//! non-zero. A device that fails during a run ends the job with
//! `MPI_Abort`, as for `--backend mpi`.
//!
//! **Untested.** This machine and CI have no GPU: the GPU choice is unit
//! tested and the no-driver failure runs under `mpirun` in
//! `tests/mpi_cli.rs`, but opening a GPU, every device op and every NCCL
//! call here have never run. `ci/gpu-check.sh` is where they would.

use super::gpu::{gpu_for_local_rank, local_rank};

/// The variable that restricts which GPUs a process sees.
pub const VISIBLE_ENV: &str = "CUDA_VISIBLE_DEVICES";

/// Whether `CUDA_VISIBLE_DEVICES` (its value, if set) pins the process to
/// exactly one GPU.
fn pinned_to_one(visible: Option<&str>) -> bool {
    visible.is_some_and(|v| v.split(',').filter(|s| !s.trim().is_empty()).count() == 1)
}

/// The GPU (ordinal among the `visible_gpus` this process sees) this rank
/// uses, from the launcher's environment (`lookup` is `std::env::var`
/// outside tests).
pub fn rank_gpu(
    lookup: impl Fn(&str) -> Option<String>,
    visible_gpus: usize,
) -> Result<usize, String> {
    if pinned_to_one(lookup(VISIBLE_ENV).as_deref()) {
        if visible_gpus == 0 {
            return Err(format!(
                "{VISIBLE_ENV}={:?} names a GPU the driver does not show",
                lookup(VISIBLE_ENV).unwrap_or_default()
            ));
        }
        return Ok(0);
    }
    let local = local_rank(&lookup)?;
    gpu_for_local_rank(local, visible_gpus)
}

#[cfg(feature = "cuda")]
pub use imp::CudaRankBackend;

#[cfg(feature = "cuda")]
mod imp {
    use std::sync::{Arc, Mutex, MutexGuard};

    use cudarc::driver::{CudaContext, CudaStream};
    use meshrun_kernels::HostTensor;

    use super::super::cuda_rank_device::{CudaRankDevice, RankState};
    use super::super::session::RankBackend;
    use super::super::{check_world, MpiBackend};
    use super::rank_gpu;
    use crate::backend::Backend;
    use crate::cuda::buffer::{CudaBuffer, DevData};
    use crate::cuda::{probe, CudaUnavailable};
    use crate::error::RuntimeError;
    use crate::spmd::catch_device_panic;

    /// The rank's GPU as a [`Backend`] with one device per rank (see the
    /// module doc). Borrows the [`MpiBackend`], which must outlive it.
    pub struct CudaRankBackend<'m> {
        mpi: &'m MpiBackend,
        ordinal: usize,
        ctx: Arc<CudaContext>,
        stream: Arc<CudaStream>,
        /// The device and its NCCL communicators, kept between runs; taken
        /// by a run.
        state: Mutex<Option<RankState>>,
    }

    fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
        m.lock().unwrap_or_else(|e| e.into_inner())
    }

    impl<'m> CudaRankBackend<'m> {
        /// Open this rank's GPU (see the module doc), or say in one line
        /// why not. Not collective: settle the result over the world.
        pub fn open(mpi: &'m MpiBackend) -> Result<CudaRankBackend<'m>, CudaUnavailable> {
            let count = probe::gpu_count().map_err(CudaUnavailable)?;
            let ordinal = rank_gpu(|v| std::env::var(v).ok(), count).map_err(CudaUnavailable)?;
            // The device id is set by each run.
            let device = crate::cuda::open_lone_device(0, ordinal).map_err(CudaUnavailable)?;
            Ok(CudaRankBackend {
                mpi,
                ordinal,
                ctx: device.ctx.clone(),
                stream: device.stream.clone(),
                state: Mutex::new(Some(RankState::new(device))),
            })
        }

        /// The ordinal of this rank's GPU among those the process sees.
        pub fn ordinal(&self) -> usize {
            self.ordinal
        }

        fn cuda_err(&self, what: &str, e: impl std::fmt::Display) -> RuntimeError {
            RuntimeError::Program(format!("GPU {}: {what}: {e}", self.ordinal))
        }
    }

    impl RankBackend for CudaRankBackend<'_> {
        fn mpi(&self) -> &MpiBackend {
            self.mpi
        }
    }

    impl Backend for CudaRankBackend<'_> {
        type Buffer = CudaBuffer;
        type Device = CudaRankDevice;

        fn name(&self) -> &'static str {
            "cuda"
        }

        fn prepare(&self, devices: &[i64]) -> Result<(), RuntimeError> {
            check_world(devices.len(), self.mpi.size())
        }

        /// Only this rank's device's blocks are ever uploaded
        /// ([`super::super::session::place_local`]).
        fn upload(&self, _device: i64, t: HostTensor) -> Result<CudaBuffer, RuntimeError> {
            let data = DevData::upload(&self.stream, &t).map_err(|e| self.cuda_err("upload", e))?;
            Ok(CudaBuffer {
                data: Arc::new(data),
                ty: t.tensor_type(),
                gpu: 0,
            })
        }

        fn download(&self, _device: i64, b: CudaBuffer) -> Result<HostTensor, RuntimeError> {
            b.data
                .download(&self.stream, &b.shape())
                .map_err(|e| self.cuda_err("download", e))
        }

        /// Runs `body` for this rank's device only and returns its result
        /// alone; a failure ends the job ([`MpiBackend::abort`]).
        fn run_spmd<R: Send>(
            &self,
            devices: &[i64],
            body: &(dyn Fn(&mut CudaRankDevice) -> Result<R, RuntimeError> + Sync),
        ) -> Result<Vec<R>, RuntimeError> {
            let id = self.mpi.local_device(devices)?;
            let state = lock(&self.state).take().ok_or_else(|| {
                RuntimeError::Program("this rank's GPU is already running a program".into())
            })?;
            if let Err(e) = self.ctx.bind_to_thread() {
                self.mpi.abort(self.cuda_err("bind context", e));
            }
            let mut dev = CudaRankDevice::new(state, id, devices.into(), self.mpi.rank());
            let outcome = catch_device_panic(id, || body(&mut dev));
            // Kernels and NCCL calls run asynchronously: their errors
            // surface here, and the run's time includes the GPU's work.
            let synced = self.stream.synchronize();
            *lock(&self.state) = Some(dev.into_state());
            match outcome {
                Ok(r) => match synced {
                    Ok(()) => Ok(vec![r]),
                    Err(e) => self.mpi.abort(format_args!("device {id}: CUDA: {e}")),
                },
                Err(e) => self.mpi.abort(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::mpi::test_env::env;

    /// The environment, the GPUs the process sees, and the GPU chosen or a
    /// piece of the error.
    type Case = (
        &'static [(&'static str, &'static str)],
        usize,
        Result<usize, &'static str>,
    );

    #[test]
    fn a_rank_uses_the_gpu_of_its_local_rank_or_the_one_it_is_pinned_to() {
        let table: [Case; 9] = [
            (&[("OMPI_COMM_WORLD_LOCAL_RANK", "3")], 8, Ok(3)),
            (&[("SLURM_LOCALID", "1")], 2, Ok(1)),
            // srun --gpus-per-task=1: one GPU per process, whatever the
            // local rank.
            (&[("SLURM_LOCALID", "5"), (VISIBLE_ENV, "5")], 1, Ok(0)),
            (&[(VISIBLE_ENV, " GPU-8f1c ")], 1, Ok(0)),
            // Several visible: the local rank picks among them.
            (
                &[("OMPI_COMM_WORLD_LOCAL_RANK", "1"), (VISIBLE_ENV, "2,3")],
                2,
                Ok(1),
            ),
            (
                &[("OMPI_COMM_WORLD_LOCAL_RANK", "2"), (VISIBLE_ENV, "2,3")],
                2,
                Err("at most 2 rank(s) per node"),
            ),
            (
                &[("OMPI_COMM_WORLD_LOCAL_RANK", "4")],
                4,
                Err("needs GPU 4"),
            ),
            (&[(VISIBLE_ENV, "0")], 0, Err("does not show")),
            (&[], 8, Err("OMPI_COMM_WORLD_LOCAL_RANK")),
        ];
        for (vars, gpus, want) in table {
            let got = rank_gpu(env(vars), gpus);
            match want {
                Ok(g) => assert_eq!(got, Ok(g), "{vars:?} on {gpus} GPUs"),
                Err(piece) => {
                    let e = got.expect_err(piece);
                    assert!(e.contains(piece), "{vars:?} on {gpus} GPUs: {e}");
                }
            }
        }
    }

    #[test]
    fn only_one_listed_gpu_pins() {
        assert!(pinned_to_one(Some("7")));
        assert!(pinned_to_one(Some("7,")));
        assert!(!pinned_to_one(Some("0,1")));
        assert!(!pinned_to_one(Some("")));
        assert!(!pinned_to_one(None));
    }
}
