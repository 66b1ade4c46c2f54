//! [`CudaBackend`]: the GPUs of this machine as a `Backend`.
//!
//! Opening it probes the driver and NVRTC without panicking (`probe`),
//! creates one context per GPU and loads every kernel into it (compiled
//! once per process and architecture, cached on disk). [`prepare`]
//! places the run's mesh devices on the GPUs (`placement`) and gives each
//! its own stream; the executor calls it before it uploads anything.
//! `run_spmd` runs one thread per mesh device, bound to its GPU's
//! context, holding the device's stream, cuBLAS handle and NCCL
//! communicators, which live across runs.
//!
//! Needs a GPU to run; CI builds it and checks that opening it without
//! one fails with a reason.
//!
//! [`prepare`]: crate::Backend::prepare

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::driver::{CudaContext, CudaStream};
use meshrun_kernels::HostTensor;

use super::buffer::{CudaBuffer, DevData};
use super::device::{CudaDevice, DeviceState};
use super::kernels::GpuKernels;
use super::nvrtc;
use super::placement::Placement;
use super::probe::{self, GpuInfo};
use super::run_shared::{NcclIds, RunShared};
use crate::backend::Backend;
use crate::cpu::rendezvous::Rendezvous;
use crate::error::RuntimeError;
use crate::spmd::{catch_device_panic, run_per_device, Threads};

/// Use at most this many GPUs (e.g. `MESHRUN_CUDA_GPUS=2` to run 8 mesh
/// devices on 2 GPUs of an 8-GPU machine; `CUDA_VISIBLE_DEVICES` works
/// too).
pub const GPUS_ENV: &str = "MESHRUN_CUDA_GPUS";

struct Gpu {
    ctx: Arc<CudaContext>,
    kernels: Arc<GpuKernels>,
    info: GpuInfo,
}

/// One mesh device's seat: its GPU, its stream, and what it keeps
/// between runs.
struct Slot {
    gpu: usize,
    stream: Arc<CudaStream>,
    state: Mutex<Option<DeviceState>>,
}

struct Seating {
    placement: Placement,
    slots: HashMap<i64, Arc<Slot>>,
}

/// The CUDA backend.
pub struct CudaBackend {
    gpus: Vec<Gpu>,
    seating: Mutex<Option<Arc<Seating>>>,
    nccl_ids: Mutex<NcclIds>,
    fallbacks: Arc<AtomicUsize>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn cuda_err(what: &str) -> impl Fn(cudarc::driver::DriverError) -> RuntimeError + '_ {
    move |e| RuntimeError::Program(format!("CUDA: {what}: {e}"))
}

impl CudaBackend {
    /// Open every GPU (at most `$MESHRUN_CUDA_GPUS`), or say in one line
    /// why there is none to open.
    pub fn new() -> Result<CudaBackend, String> {
        let mut infos = probe::gpus()?;
        if let Some(max) = std::env::var(GPUS_ENV)
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
        {
            infos.truncate(max.max(1));
        }
        nvrtc::version().map_err(|e| e.to_string())?;
        let mut gpus = Vec::with_capacity(infos.len());
        for info in infos {
            let ctx = CudaContext::new(info.ordinal)
                .map_err(|e| format!("GPU {}: cannot create a context: {e}", info.ordinal))?;
            let arch = info.arch();
            let kernels = GpuKernels::load(&ctx, &arch)
                .map_err(|e| format!("GPU {} ({}): {e}", info.ordinal, info.name))?;
            gpus.push(Gpu {
                ctx,
                kernels: Arc::new(kernels),
                info,
            });
        }
        Ok(CudaBackend {
            gpus,
            seating: Mutex::new(None),
            nccl_ids: Mutex::new(Arc::new(Mutex::new(HashMap::new()))),
            fallbacks: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// The GPUs in use.
    pub fn gpus(&self) -> Vec<GpuInfo> {
        self.gpus.iter().map(|g| g.info.clone()).collect()
    }

    /// The current placement of mesh devices, once prepared.
    pub fn placement(&self) -> Option<Placement> {
        lock(&self.seating).as_ref().map(|s| s.placement.clone())
    }

    /// How many ops were computed on the host so far (integer dots).
    pub fn host_fallbacks(&self) -> usize {
        self.fallbacks.load(Ordering::Relaxed)
    }

    fn seating(&self) -> Result<Arc<Seating>, RuntimeError> {
        lock(&self.seating).clone().ok_or_else(|| {
            RuntimeError::Program(
                "the CUDA backend places mesh devices in prepare(); call it before upload".into(),
            )
        })
    }

    fn slot(&self, device: i64) -> Result<Arc<Slot>, RuntimeError> {
        self.seating()?
            .slots
            .get(&device)
            .cloned()
            .ok_or_else(|| RuntimeError::Program(format!("device {device} is not placed on a GPU")))
    }

    /// Place `devices` and give each a stream (again only when the list
    /// changes: streams, cuBLAS handles and communicators then start over).
    fn place(&self, devices: &[i64]) -> Result<(), RuntimeError> {
        let mut seating = lock(&self.seating);
        if seating
            .as_ref()
            .is_some_and(|s| s.placement.devices() == devices)
        {
            return Ok(());
        }
        let placement =
            Placement::blocks(devices, self.gpus.len()).map_err(RuntimeError::Program)?;
        let mut slots = HashMap::with_capacity(devices.len());
        for &d in devices {
            let gpu = placement
                .gpu(d)
                .ok_or_else(|| RuntimeError::Program(format!("device {d} has no GPU")))?;
            let stream = self.gpus[gpu]
                .ctx
                .new_stream()
                .map_err(cuda_err("new stream"))?;
            slots.insert(
                d,
                Arc::new(Slot {
                    gpu,
                    stream,
                    state: Mutex::new(Some(DeviceState::default())),
                }),
            );
        }
        *seating = Some(Arc::new(Seating { placement, slots }));
        *lock(&self.nccl_ids) = Arc::new(Mutex::new(HashMap::new()));
        Ok(())
    }
}

impl Backend for CudaBackend {
    type Buffer = CudaBuffer;
    type Device = CudaDevice;

    fn name(&self) -> &'static str {
        "cuda"
    }

    /// The smallest GPU's memory (mesh devices sharing a GPU share it).
    fn device_memory_bytes(&self) -> Option<u64> {
        self.gpus.iter().map(|g| g.info.memory_bytes as u64).min()
    }

    fn prepare(&self, devices: &[i64]) -> Result<(), RuntimeError> {
        self.place(devices)
    }

    fn upload(&self, device: i64, t: HostTensor) -> Result<CudaBuffer, RuntimeError> {
        let slot = self.slot(device)?;
        let data = DevData::upload(&slot.stream, &t).map_err(RuntimeError::Program)?;
        Ok(CudaBuffer {
            data: Arc::new(data),
            ty: t.tensor_type(),
            gpu: slot.gpu,
        })
    }

    /// One copy per GPU, shared by the mesh devices on it (buffers are
    /// never written in place; cudarc orders the other streams' reads).
    fn upload_shared(
        &self,
        devices: &[i64],
        t: HostTensor,
    ) -> Result<Vec<CudaBuffer>, RuntimeError> {
        let mut per_gpu: HashMap<usize, CudaBuffer> = HashMap::new();
        devices
            .iter()
            .map(|&d| {
                let slot = self.slot(d)?;
                if let Some(b) = per_gpu.get(&slot.gpu) {
                    return Ok(b.clone());
                }
                let b = self.upload(d, t.clone())?;
                per_gpu.insert(slot.gpu, b.clone());
                Ok(b)
            })
            .collect()
    }

    fn download(&self, device: i64, b: CudaBuffer) -> Result<HostTensor, RuntimeError> {
        let slot = self.slot(device)?;
        b.data
            .download(&slot.stream, &b.shape())
            .map_err(|e| RuntimeError::Program(format!("device {device}: {e}")))
    }

    fn run_spmd<R: Send>(
        &self,
        devices: &[i64],
        body: &(dyn Fn(&mut CudaDevice) -> Result<R, RuntimeError> + Sync),
    ) -> Result<Vec<R>, RuntimeError> {
        self.place(devices)?;
        let seating = self.seating()?;
        let shared = Arc::new(RunShared {
            rendezvous: Rendezvous::new(),
            placement: seating.placement.clone(),
            nccl_ids: lock(&self.nccl_ids).clone(),
            fallbacks: self.fallbacks.clone(),
        });
        let run_one = |id: i64| -> Result<R, RuntimeError> {
            let slot = seating
                .slots
                .get(&id)
                .cloned()
                .ok_or_else(|| RuntimeError::Program(format!("device {id} is not placed")))?;
            let gpu = &self.gpus[slot.gpu];
            gpu.ctx.bind_to_thread().map_err(cuda_err("bind context"))?;
            let state = lock(&slot.state).take().unwrap_or_default();
            let mut dev = CudaDevice {
                id,
                gpu: slot.gpu,
                ctx: gpu.ctx.clone(),
                stream: slot.stream.clone(),
                kernels: gpu.kernels.clone(),
                state,
                shared: shared.clone(),
            };
            let result = catch_device_panic(id, || body(&mut dev));
            // Kernels run asynchronously: their errors surface here, and
            // the run's time includes the GPU's work.
            let result = result.and_then(|r| {
                slot.stream
                    .synchronize()
                    .map(|_| r)
                    .map_err(|e| RuntimeError::Program(format!("device {id}: CUDA: {e}")))
            });
            *lock(&slot.state) = Some(dev.into_state());
            if result.is_err() {
                shared.rendezvous.poison(id);
            }
            result
        };
        run_per_device(
            devices,
            Threads::Spawned("cuda-device"),
            &run_one,
            &|id| shared.rendezvous.poison(id),
            &|| shared.rendezvous.failed(),
        )
    }
}

/// GPU `ordinal` opened for a process that runs one mesh device on it
/// (the CUDA backend under MPI, one rank per GPU): a context, the kernels
/// loaded for its architecture, a stream, and the device's own run state.
/// The MPI backend drives the device's local ops through this
/// `CudaDevice` and does its collectives itself, over NCCL
/// communicators bootstrapped through MPI. Needs a GPU: untested
/// in CI.
#[cfg(all(feature = "cuda", feature = "mpi"))]
pub(crate) fn open_lone_device(
    id: i64,
    ordinal: usize,
) -> Result<crate::cuda::device::CudaDevice, String> {
    use std::collections::HashMap;
    use std::sync::atomic::AtomicUsize;
    use std::sync::{Arc, Mutex};

    use super::device::{CudaDevice, DeviceState};
    use super::kernels::GpuKernels;
    use super::placement::Placement;
    use crate::cpu::rendezvous::Rendezvous;

    super::probe::gpu_count()?;
    super::nvrtc::version().map_err(|e| e.to_string())?;
    let ctx = cudarc::driver::CudaContext::new(ordinal)
        .map_err(|e| format!("GPU {ordinal}: cannot create a context: {e}"))?;
    let (major, minor) = ctx
        .compute_capability()
        .map_err(|e| format!("GPU {ordinal}: compute capability: {e}"))?;
    let kernels = GpuKernels::load(&ctx, &format!("sm_{major}{minor}"))
        .map_err(|e| format!("GPU {ordinal}: {e}"))?;
    let stream = ctx
        .new_stream()
        .map_err(|e| format!("GPU {ordinal}: cannot create a stream: {e}"))?;
    // The device meets no other device of this process: its rendezvous and
    // NCCL ids stay unused; only the host-fallback count matters.
    let shared = Arc::new(RunShared {
        rendezvous: Rendezvous::new(),
        placement: Placement::blocks(&[id], 1)?,
        nccl_ids: Arc::new(Mutex::new(HashMap::new())),
        fallbacks: Arc::new(AtomicUsize::new(0)),
    });
    Ok(CudaDevice {
        id,
        gpu: 0,
        ctx,
        stream,
        kernels: Arc::new(kernels),
        state: DeviceState::default(),
        shared,
    })
}
