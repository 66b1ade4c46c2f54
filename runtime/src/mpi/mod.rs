//! The MPI backend (feature `mpi`): one process per mesh device, launched
//! by `mpirun -np N` or Slurm's `srun -n N`, collectives over MPI.
//!
//! **Devices and ranks.** A program's devices, sorted by id, are the world
//! ranks in order: rank `r` runs device `devices[r]`, which is device `r`
//! for the usual mesh over ids `0..N` (a mesh's `device_ids` permutes which
//! coordinates device `r` has, not which rank runs it). The world must have
//! exactly as many ranks as the program has devices; anything else is an
//! error naming both numbers.
//!
//! **Runs.** The executor is the same as for the other backends; this
//! backend's [`Backend::run_spmd`] runs only this rank's device and returns
//! its result alone. [`session`] places inputs (each rank reads only its own
//! block of every `.npy` file), runs, and gathers the outputs on rank 0.
//!
//! **Failures.** A rank whose device fails cannot wake the others, which
//! wait in MPI calls, so it prints its error (`error: rank R of N: ...`)
//! and calls `MPI_Abort`: the job ends at once with status 1 and that
//! message. [`MpiBackend::abort`] does the same for errors outside a run,
//! and [`MpiBackend::settle`] prints an error every rank hit (a bad file, a
//! wrong `-np`) once instead of N times.
//!
//! **Threads.** MPI is initialized with `MPI_THREAD_FUNNELED`: the thread
//! that calls [`MpiBackend::init`] makes every MPI call (devices run on the
//! calling thread; kernels may still use rayon's threads).
//!
//! Modules: [`device`] (the device and its collectives), [`comms`] (group
//! communicators), [`exchange`] (the MPI calls), [`wire`] (blocks as
//! bytes), [`local_inputs`] (reading one block of an `.npy` file),
//! [`session`] (place, run, gather; generic over [`session::RankBackend`]),
//! [`bench`] (timing one collective, for `bench-comm`).
//!
//! **GPUs.** With `--backend cuda` under mpirun, each rank runs its device
//! on one GPU instead ([`cuda_rank`]: which GPU, the backend;
//! [`cuda_rank_device`]: local ops by the CUDA backend's device code,
//! collectives over NCCL; [`nccl_plan`]: which NCCL calls; [`gpu`]: local
//! rank and the NCCL unique id broadcast over MPI). That path has never
//! run on a GPU: only its GPU-free logic is tested.

pub mod bench;
pub mod comms;
pub mod cuda_rank;
#[cfg(feature = "cuda")]
pub mod cuda_rank_device;
pub mod device;
pub mod exchange;
pub mod gpu;
pub mod local_inputs;
pub mod nccl_plan;
pub mod session;
pub mod wire;

use std::fmt::Display;
use std::io::Write;
use std::sync::Arc;

use meshrun_kernels::{HostTensor, Parallelism};
use mpi::environment::{Threading, Universe};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;

pub use device::{MpiBuffer, MpiDevice};

use crate::backend::Backend;
use crate::cpu::rendezvous::Rendezvous;
use crate::cpu::{CpuDevice, CHUNKED_ALL_REDUCE_MIN_ELEMS};
use crate::error::RuntimeError;
use crate::spmd::catch_device_panic;

/// Environment variables that tell how many ranks share this node
/// (Open MPI, MPICH/Hydra, Slurm), in the order they are consulted.
const LOCAL_SIZE_ENV: [&str; 3] = [
    "OMPI_COMM_WORLD_LOCAL_SIZE",
    "MPI_LOCALNRANKS",
    "SLURM_NTASKS_PER_NODE",
];

/// The MPI backend. Owns MPI: creating it initializes MPI, dropping it
/// frees the group communicators and finalizes MPI.
pub struct MpiBackend {
    // Field order matters only for `Drop`, which clears the communicator
    // cache before `universe` finalizes MPI.
    universe: Universe,
    rank: usize,
    size: usize,
    kernel_par: Parallelism,
    chunked_min: usize,
}

impl MpiBackend {
    /// Initialize MPI (at most once per process) and open the backend.
    /// Kernels run single-threaded when several ranks share this node (the
    /// usual `mpirun -np 8` on one machine) and on all cores otherwise.
    pub fn init() -> Result<MpiBackend, RuntimeError> {
        let (universe, _threading) = mpi::initialize_with_threading(Threading::Funneled)
            .ok_or_else(|| {
                RuntimeError::Program("MPI is already initialized in this process".into())
            })?;
        let world = universe.world();
        // Alone on the node only when the launcher says so.
        let alone = LOCAL_SIZE_ENV
            .iter()
            .find_map(|v| std::env::var(v).ok()?.trim().parse::<usize>().ok())
            == Some(1);
        Ok(MpiBackend {
            rank: world.rank() as usize,
            size: world.size() as usize,
            universe,
            kernel_par: if alone {
                Parallelism::Rayon(0)
            } else {
                Parallelism::None
            },
            chunked_min: CHUNKED_ALL_REDUCE_MIN_ELEMS,
        })
    }

    /// Run every kernel with `par` (tests use `Parallelism::None` to compare
    /// bitwise with the CPU backend's multi-device runs).
    pub fn with_kernel_parallelism(mut self, par: Parallelism) -> MpiBackend {
        self.kernel_par = par;
        self
    }

    /// Do all-reduces of at least `elems` elements in two phases (every
    /// rank must use the same value).
    pub fn with_chunked_all_reduce_min(mut self, elems: usize) -> MpiBackend {
        self.chunked_min = elems;
        self
    }

    /// This process's world rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Rank 0, which gathers outputs, checks and reports.
    pub fn is_root(&self) -> bool {
        self.rank == 0
    }

    /// The world communicator (for callers that exchange more, e.g. a
    /// benchmark's timings).
    pub fn world(&self) -> SimpleCommunicator {
        self.universe.world()
    }

    /// Wait until every rank gets here.
    pub fn barrier(&self) {
        self.world().barrier();
    }

    /// The largest `x` over all ranks, on every rank.
    pub fn max_over_ranks(&self, x: f64) -> f64 {
        let mut out = 0.0f64;
        self.world()
            .all_reduce_into(&x, &mut out, mpi::collective::SystemOperation::max());
        out
    }

    /// The device this rank runs, checking that the world has one rank per
    /// device of `devices` (sorted ids).
    pub fn local_device(&self, devices: &[i64]) -> Result<i64, RuntimeError> {
        check_world(devices.len(), self.size)?;
        Ok(devices[self.rank])
    }

    /// End the whole job: print `error: rank R: message` on stderr and call
    /// `MPI_Abort` with status 1. For any error that only some ranks may
    /// see, where returning would leave the others waiting forever.
    pub fn abort(&self, message: impl Display) -> ! {
        // One write of the whole line: stderr is unbuffered, so `writeln!`
        // would write it piece by piece, and mpirun's own abort message
        // (from another process, on the same pipe) could land inside it.
        // A write below the pipe's atomic size is never split.
        let line = format!("error: rank {} of {}: {message}\n", self.rank, self.size);
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(line.as_bytes());
        let _ = err.flush();
        drop(err);
        self.world().abort(1)
    }

    /// `r`'s value, or [`MpiBackend::abort`] with its error.
    pub fn or_abort<T, E: Display>(&self, r: Result<T, E>) -> T {
        match r {
            Ok(v) => v,
            Err(e) => self.abort(e),
        }
    }

    /// `r`'s value when every rank's step succeeded; otherwise the job ends
    /// with the error, printed once: by rank 0 when every rank failed (the
    /// same error, e.g. a bad program file or a wrong `-np`), else by each
    /// rank that failed (e.g. a file missing on one node). A collective:
    /// every rank must call it.
    pub fn settle<T, E: Display>(&self, r: Result<T, E>) -> T {
        let failed = self.count_over_ranks(r.is_err());
        match r {
            Ok(v) if failed == 0 => v,
            Err(e) if failed < self.size || self.is_root() => self.abort(e),
            _ => self.wait_for_abort(),
        }
    }

    /// On how many ranks `flag` holds (a collective).
    pub fn count_over_ranks(&self, flag: bool) -> usize {
        let mine = u32::from(flag);
        let mut sum = 0u32;
        self.world()
            .all_reduce_into(&mine, &mut sum, mpi::collective::SystemOperation::sum());
        sum as usize
    }

    /// Wait for a failing rank's `MPI_Abort` to end this process: the
    /// failing rank never enters the barrier.
    fn wait_for_abort(&self) -> ! {
        self.barrier();
        self.abort("a rank that failed did not end the job")
    }
}

impl Drop for MpiBackend {
    fn drop(&mut self) {
        // Communicators must be freed before `universe` finalizes MPI.
        comms::clear();
    }
}

/// The world must have one rank per device.
pub fn check_world(devices: usize, ranks: usize) -> Result<(), RuntimeError> {
    if devices == ranks {
        return Ok(());
    }
    Err(RuntimeError::Program(format!(
        "the program runs on {devices} devices but MPI started {ranks} processes: launch one process per device (mpirun -np {devices} / srun -n {devices})"
    )))
}

impl Backend for MpiBackend {
    type Buffer = MpiBuffer;
    type Device = MpiDevice;

    fn name(&self) -> &'static str {
        "mpi"
    }

    /// A rank's device is this process, on this machine's memory.
    fn device_memory_bytes(&self) -> Option<u64> {
        crate::capacity::host_memory_bytes()
    }

    fn prepare(&self, devices: &[i64]) -> Result<(), RuntimeError> {
        check_world(devices.len(), self.size)
    }

    /// Any device's buffer is host memory of this process; only the local
    /// device's are ever used ([`session::place_local`] uploads no others).
    fn upload(&self, _device: i64, t: HostTensor) -> Result<MpiBuffer, RuntimeError> {
        Ok(Arc::new(t))
    }

    fn download(&self, _device: i64, b: MpiBuffer) -> Result<HostTensor, RuntimeError> {
        Ok(Arc::try_unwrap(b).unwrap_or_else(|shared| (*shared).clone()))
    }

    /// Runs `body` for this rank's device only and returns its result alone
    /// (a vector of one). A failure ends the job ([`MpiBackend::abort`]):
    /// the other ranks cannot be told otherwise.
    fn run_spmd<R: Send>(
        &self,
        devices: &[i64],
        body: &(dyn Fn(&mut MpiDevice) -> Result<R, RuntimeError> + Sync),
    ) -> Result<Vec<R>, RuntimeError> {
        let id = self.local_device(devices)?;
        let local = CpuDevice::new(
            id,
            self.kernel_par,
            self.chunked_min,
            Arc::new(Rendezvous::new()),
        );
        let mut dev = MpiDevice::new(local, id, devices.into(), self.rank, self.chunked_min);
        match catch_device_panic(id, || body(&mut dev)) {
            Ok(r) => Ok(vec![r]),
            Err(e) => self.abort(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_world_of_the_wrong_size_says_what_to_launch() {
        assert!(check_world(8, 8).is_ok());
        let e = check_world(8, 4).unwrap_err().to_string();
        assert!(
            e.contains("8 devices") && e.contains("4 processes") && e.contains("-np 8"),
            "{e}"
        );
    }
}

/// A made-up environment for the launcher-variable tests.
#[cfg(test)]
pub(crate) mod test_env {
    pub fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }
}
