//! The CPU backend: every mesh device is simulated by one OS thread with
//! its own buffers; collectives go through shared memory.
//!
//! - [`device`]: [`CpuDevice`], one device's ops and collectives;
//! - [`collectives`]: what each collective computes from the members'
//!   blocks (pure functions);
//! - [`reduce`]: combining blocks element by element in rank order;
//! - [`bands`]: filling one big result on helper threads (scoped threads,
//!   never rayon: see there);
//! - [`local`]: the device program's local instructions (iota, masks,
//!   slices, remaps) on host tensors;
//! - [`rendezvous`]: where device threads meet and how a failure wakes them;
//! - [`alloc`]: big blocks a device frees are reused for later results
//!   (fresh multi-megabyte buffers cost a page fault per page);
//! - `pool`: the persistent device threads.
//!
//! A run borrows persistent threads, one per device, from a pool cache
//! (`pool`); a one-device run runs on the caller's thread. A device that
//! returns an error or panics (caught with `catch_unwind`) poisons the
//! run's rendezvous, so the others stop at their next collective, and the
//! run returns the error of the device that failed first. Devices that
//! hold the same block of an input share one read-only copy of it, and the
//! members of an all-gather or an all-reduce share one result, built once
//! (see [`SHARED_ALL_REDUCE_MIN_ELEMS`]).

pub mod alloc;
pub mod bands;
pub mod collectives;
pub mod device;
pub mod local;
mod lockstep;
mod pool;
pub mod reduce;
pub mod rendezvous;

use std::sync::Arc;

use meshrun_kernels::{HostTensor, Parallelism};

pub use device::{CpuBuffer, CpuDevice, CHUNKED_ALL_REDUCE_MIN_ELEMS, SHARED_ALL_REDUCE_MIN_ELEMS};
use pool::PoolLease;
use rendezvous::Rendezvous;

use crate::backend::Backend;
use crate::error::RuntimeError;
use crate::exec_options::ExecOptions;
use crate::exec_plan::PlannedProgram;
use crate::spmd::{catch_device_panic, run_per_device, Threads};

/// The CPU backend. `Parallelism::None` inside each device when a run has
/// several devices, always: they share the cores, and their threads are
/// workers of a rayon pool, where a kernel waiting on rayon jobs would run
/// a peer device's job meanwhile (a deadlock, see `comm_bench`). A
/// one-device run runs on the caller's thread with all of rayon's threads,
/// unless [`CpuBackend::with_kernel_parallelism`] says otherwise.
#[derive(Debug, Clone, Copy)]
pub struct CpuBackend {
    kernel_par: Option<Parallelism>,
    chunked_min: usize,
    dot_epilogues: bool,
    share_results: bool,
    executor: CpuExecutor,
}

/// How a run of several simulated devices executes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuExecutor {
    /// One thread drives every device, unit by unit (`lockstep`): local
    /// work once per distinct block, over all cores; collectives as block
    /// moves.
    Lockstep,
    /// One thread per device, meeting in collectives (the way of the MPI
    /// and CUDA backends).
    Threads,
}

impl CpuExecutor {
    /// `lockstep` or `threads`.
    pub fn parse(s: &str) -> Result<CpuExecutor, String> {
        match s {
            "lockstep" => Ok(CpuExecutor::Lockstep),
            "threads" => Ok(CpuExecutor::Threads),
            other => Err(format!(
                "unknown executor '{other}' (available: lockstep, threads)"
            )),
        }
    }

    /// The executor of [`CpuBackend::new`]: [`EXECUTOR_ENV`] if set (and
    /// valid), else lockstep.
    fn from_env() -> CpuExecutor {
        std::env::var(EXECUTOR_ENV)
            .ok()
            .and_then(|v| CpuExecutor::parse(v.trim()).ok())
            .unwrap_or(CpuExecutor::Lockstep)
    }
}

impl Default for CpuBackend {
    fn default() -> Self {
        CpuBackend::new()
    }
}

impl CpuBackend {
    pub fn new() -> CpuBackend {
        CpuBackend {
            kernel_par: None,
            chunked_min: SHARED_ALL_REDUCE_MIN_ELEMS,
            dot_epilogues: true,
            share_results: std::env::var(SHARE_RESULTS_ENV).map_or(true, |v| v != "0"),
            executor: CpuExecutor::from_env(),
        }
    }

    /// Run several devices with `executor` (see [`CpuExecutor`]).
    pub fn with_executor(mut self, executor: CpuExecutor) -> CpuBackend {
        self.executor = executor;
        self
    }

    pub fn executor(&self) -> CpuExecutor {
        self.executor
    }

    /// With `false`, a dot and the fused chain reading it
    /// (`fusion::DotChain`) run one after the other, as on a device
    /// without `Device::dot_fused`: tests compare the two ways bitwise,
    /// benchmarks time them.
    pub fn with_dot_epilogues(mut self, on: bool) -> CpuBackend {
        self.dot_epilogues = on;
        self
    }

    /// Whether a device takes the result a replica made from the same
    /// blocks instead of computing it again (on by default; tests and
    /// benchmarks compare without).
    pub fn with_shared_results(mut self, on: bool) -> CpuBackend {
        self.share_results = on;
        self
    }

    /// Run a one-device run's kernels with `par` (runs of several devices
    /// always run theirs single-threaded).
    pub fn with_kernel_parallelism(mut self, par: Parallelism) -> CpuBackend {
        self.kernel_par = Some(par);
        self
    }

    /// Reduce all-reduces of at least `elems` elements once per group and
    /// share the result, smaller ones in every member (the default shares
    /// all: [`SHARED_ALL_REDUCE_MIN_ELEMS`]); tests use it to reach both
    /// paths.
    pub fn with_chunked_all_reduce_min(mut self, elems: usize) -> CpuBackend {
        self.chunked_min = elems;
        self
    }

    fn parallelism(&self, devices: usize) -> Parallelism {
        if devices == 1 {
            self.kernel_par.unwrap_or(Parallelism::Rayon(0))
        } else {
            Parallelism::None
        }
    }
}

/// How long a device waiting in a collective yields before it sleeps
/// (see `rendezvous`): a few device threads per core spin, so that a small
/// collective completes without a wake-up per member; many more threads
/// than cores sleep at once, so that simulating hundreds of devices stays
/// cheap (each yield would hand the core to another waiter).
const SPIN: std::time::Duration = std::time::Duration::from_micros(50);
const SPIN_MAX_THREADS_PER_CORE: usize = 4;

/// Overrides the spin time (µs), for measuring what it buys.
/// `0` turns [`CpuBackend::with_shared_results`] off (to time replicas
/// computing everything themselves).
pub const SHARE_RESULTS_ENV: &str = "MESHRUN_CPU_SHARE_RESULTS";
pub const SPIN_ENV: &str = "MESHRUN_CPU_SPIN_US";
/// `lockstep` or `threads`: the executor of [`CpuBackend::new`].
pub const EXECUTOR_ENV: &str = "MESHRUN_CPU_EXECUTOR";

fn spin_time(devices: usize) -> std::time::Duration {
    static OVERRIDE: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    let set = OVERRIDE.get_or_init(|| std::env::var(SPIN_ENV).ok().and_then(|v| v.parse().ok()));
    if let Some(us) = *set {
        return std::time::Duration::from_micros(us);
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if devices <= SPIN_MAX_THREADS_PER_CORE * cores {
        SPIN
    } else {
        std::time::Duration::ZERO
    }
}

/// Make the calling thread (a program's main thread) one of the threads
/// of rayon's global pool, before anything else uses the pool: a 1-device
/// run then runs on it (see `run_spmd`), with one pool thread fewer
/// started. On another worker the run's memory comes from that thread's
/// malloc arena, which glibc trims less: the 1-device B=256 H=2048 MLP
/// training step peaked at 440 MB that way against 322 MB on the main
/// thread (same speed). Does nothing if the pool is already built.
pub fn join_global_pool() {
    let _ = rayon::ThreadPoolBuilder::new()
        .use_current_thread()
        .build_global();
}

/// The most simulated devices of one run: each is a thread blocked in
/// collectives until its peers arrive, and with a thousand threads a
/// trivial program already takes 15 s on two cores (4096: over 100 s),
/// the time going to scheduling them.
pub const MAX_SIMULATED_DEVICES: usize = 1024;

impl Backend for CpuBackend {
    type Buffer = CpuBuffer;
    type Device = CpuDevice;

    fn name(&self) -> &'static str {
        "cpu"
    }

    fn shares_results(&self) -> bool {
        self.share_results
    }

    fn max_devices(&self) -> usize {
        MAX_SIMULATED_DEVICES
    }

    /// The devices share the host's memory.
    fn device_memory_bytes(&self) -> Option<u64> {
        crate::capacity::host_memory_bytes()
    }

    fn upload(&self, _device: i64, t: HostTensor) -> Result<CpuBuffer, RuntimeError> {
        Ok(Arc::new(t))
    }

    fn download(&self, _device: i64, b: CpuBuffer) -> Result<HostTensor, RuntimeError> {
        Ok(Arc::try_unwrap(b).unwrap_or_else(|shared| (*shared).clone()))
    }

    /// Into the block pool (`alloc`) when this was the last handle: the
    /// next run's results then come from warm pages, not fresh ones (four
    /// 4 MiB weights written per MLP training step faulted in every run).
    fn discard(&self, _device: i64, b: CpuBuffer) {
        if let Some(t) = Arc::into_inner(b) {
            alloc::recycle(t);
        }
    }

    fn run_whole(
        &self,
        planned: &PlannedProgram<'_>,
        inputs: &[Vec<CpuBuffer>],
        opts: &ExecOptions,
    ) -> Option<Result<Vec<Vec<CpuBuffer>>, RuntimeError>> {
        // One device runs with all cores either way (`run_spmd`). The
        // lockstep driver runs on one of the pool's threads, as a lone
        // device does: its kernels cut over the threads then compute a
        // part themselves instead of sleeping until the pool is done.
        (self.executor == CpuExecutor::Lockstep && inputs.len() > 1)
            .then(|| rayon::scope(|_| lockstep::run(self, planned, inputs, opts)))
    }

    fn run_spmd<R: Send>(
        &self,
        devices: &[i64],
        body: &(dyn Fn(&mut CpuDevice) -> Result<R, RuntimeError> + Sync),
    ) -> Result<Vec<R>, RuntimeError> {
        let par = self.parallelism(devices.len());
        let comm: Arc<Rendezvous<CpuBuffer>> =
            Arc::new(Rendezvous::with_spin(spin_time(devices.len())));
        let run_one = |id: i64| -> Result<R, RuntimeError> {
            let mut dev = CpuDevice::new(id, par, self.chunked_min, comm.clone());
            dev.dot_epilogues = self.dot_epilogues;
            let result = catch_device_panic(id, || body(&mut dev));
            if result.is_err() {
                comm.poison(id);
            }
            result
        };
        if let [id] = devices {
            // One device needs no peers: its kernels use the global rayon
            // pool, and it runs on one of the pool's threads, so that a
            // kernel cut over the threads computes a part itself and hands
            // the rest to the others. Called from outside the pool, every
            // cut sent the calling thread to sleep until the pool's threads
            // were done: a wake-up per op. (Where the calling thread is a
            // worker, see [`join_global_pool`], it runs here.)
            return rayon::scope(|_| run_one(*id)).map(|r| vec![r]);
        }
        let lease = PoolLease::take(devices.len()).map_err(RuntimeError::Program)?;
        run_per_device(
            devices,
            Threads::Pool(lease.pool()),
            &run_one,
            &|id| comm.poison(id),
            &|| comm.failed(),
        )
    }

    fn upload_shared(
        &self,
        devices: &[i64],
        t: HostTensor,
    ) -> Result<Vec<CpuBuffer>, RuntimeError> {
        // Buffers are never written in place, so devices holding the same
        // block can read one copy.
        let shared = Arc::new(t);
        Ok(devices.iter().map(|_| shared.clone()).collect())
    }
}
