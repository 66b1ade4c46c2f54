//! One program run under MPI, from inputs to outputs: every rank places
//! its own device's input blocks ([`place_local`]), the executor runs the
//! program (each rank its device), and rank 0 gathers the outputs
//! ([`gather_to_root`]).
//!
//! **Outputs.** Rank 0 rebuilds every output with `shard_io::gather`, as the
//! other backends do; for each distinct block, the first device holding it
//! (in device order) sends it to rank 0 (with replica checking, every
//! holder sends and rank 0 checks that the copies are bitwise equal).
//! Only rank 0 has the outputs, so only rank 0 writes files and reports.
//!
//! **Backends.** The session runs on any [`RankBackend`]: a backend with
//! one device per MPI rank. [`MpiBackend`] (`--backend mpi`) keeps blocks
//! in host memory; [`super::cuda_rank::CudaRankBackend`] (`--backend cuda`
//! under mpirun) keeps them on the rank's GPU. Blocks enter through
//! [`Backend::upload`] and leave through [`Backend::download`]; the MPI
//! traffic of placing and gathering is always host bytes.
//!
//! Every function here is collective: all ranks call it with the same
//! program. An `Err` on one rank leaves the others waiting, so callers end
//! the job on any error ([`super::MpiBackend::or_abort`]).

use std::path::PathBuf;
use std::time::Instant;

use meshrun_compiler::partition::{DeviceProgram, ProgramIo};
use meshrun_kernels::HostTensor;
use mpi::traits::*;

use super::device::PERMUTE_TAGS;
use super::local_inputs::{block_of, read_block};
use super::wire::{from_bytes, to_bytes};
use super::MpiBackend;
use crate::backend::Backend;
use crate::error::RuntimeError;
use crate::executor::{DeviceOutputs, ExecOptions, Executor, Placed};
use crate::shard_io;

/// Where the inputs come from.
#[derive(Debug, Clone, Copy)]
pub enum Inputs<'a> {
    /// One `.npy` file per input, readable by every rank (a shared file
    /// system, or the same files on every node): each rank reads its block.
    Files(&'a [PathBuf]),
    /// The global inputs, the same on every rank (drawn from a seed): each
    /// rank keeps its block.
    Global(&'a [HostTensor]),
}

/// A backend that runs one mesh device per MPI rank: its `run_spmd` runs
/// this rank's device only (see [`Backend::run_spmd`]) and ends the job
/// when it fails.
pub trait RankBackend: Backend {
    /// The MPI side: ranks, the world, and ending the job.
    fn mpi(&self) -> &MpiBackend;
}

impl RankBackend for MpiBackend {
    fn mpi(&self) -> &MpiBackend {
        self
    }
}

/// MPI tag of output `index` on its way to rank 0.
fn output_tag(index: usize) -> i32 {
    (PERMUTE_TAGS as usize + index % 10_000) as i32
}

/// This rank's input blocks, placed for [`Executor::run`]: the local
/// device's blocks at its position, nothing at the others'.
pub fn place_local<B: RankBackend>(
    backend: &B,
    program: &DeviceProgram,
    inputs: Inputs<'_>,
) -> Result<Placed<B::Buffer>, RuntimeError> {
    let mpi = backend.mpi();
    let device = mpi.local_device(&program.devices)?;
    crate::capacity::program_fits_backend(program, backend).map_err(|e| {
        RuntimeError::TooLarge {
            pos: meshrun_compiler::SrcPos::UNKNOWN,
            message: e.message,
        }
    })?;
    backend.prepare(&program.devices)?;
    let given = match inputs {
        Inputs::Files(f) => f.len(),
        Inputs::Global(g) => g.len(),
    };
    if given != program.inputs.len() {
        return Err(RuntimeError::InputCount {
            func: program.name.clone(),
            expected: program.inputs.len(),
            got: given,
        });
    }
    let mut mine = Vec::with_capacity(program.inputs.len());
    for (index, io) in program.inputs.iter().enumerate() {
        let block = match inputs {
            Inputs::Files(files) => read_block(&files[index], io, device)?,
            Inputs::Global(global) => {
                block_of(&global[index], io, device).map_err(|message| RuntimeError::Layout {
                    what: "input",
                    index,
                    message,
                })?
            }
        };
        mine.push(backend.upload(device, block)?);
    }
    let pos = mpi.rank();
    let per_device = (0..program.num_devices())
        .map(|q| {
            if q == pos {
                std::mem::take(&mut mine)
            } else {
                Vec::new()
            }
        })
        .collect();
    Ok(Placed { per_device })
}

/// The positions (in `devices`) whose blocks of output `io` rank 0 reads,
/// in the order it reads them: the first holder of each block, or every
/// device with `check_replicas` (as `shard_io::gather` reads them).
fn senders(io: &ProgramIo, devices: &[i64], check_replicas: bool) -> Result<Vec<usize>, String> {
    let layout = shard_io::layout_of(io)?;
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for (pos, &d) in devices.iter().enumerate() {
        let slice = layout
            .slice(d)
            .ok_or_else(|| format!("device {d} is not in the mesh of {}", io.sharding))?;
        if seen.insert(slice.shard) || check_replicas {
            out.push(pos);
        }
    }
    Ok(out)
}

/// Rank 0: the global outputs, rebuilt from every rank's blocks; the other
/// ranks: `None`, after sending rank 0 the blocks it needs from them.
pub fn gather_to_root<B: RankBackend>(
    backend: &B,
    program: &DeviceProgram,
    outputs: DeviceOutputs<B::Buffer>,
    check_replicas: bool,
) -> Result<Option<Vec<HostTensor>>, RuntimeError> {
    let mpi = backend.mpi();
    let me = mpi.rank();
    let device = mpi.local_device(&program.devices)?;
    let local = outputs.per_device.into_iter().next().unwrap_or_default();
    if local.len() != program.outputs.len() {
        return Err(RuntimeError::Program(format!(
            "rank {me} holds {} output blocks for {} outputs",
            local.len(),
            program.outputs.len()
        )));
    }
    let world = mpi.world();
    let mut gathered = Vec::with_capacity(program.outputs.len());
    for (index, (io, buffer)) in program.outputs.iter().zip(local).enumerate() {
        let layout_err = |message: String| RuntimeError::Layout {
            what: "output",
            index,
            message,
        };
        let from = senders(io, &program.devices, check_replicas).map_err(layout_err)?;
        let tag = output_tag(index);
        // To the host (a copy off the GPU; none for host blocks the
        // executor alone holds).
        let block = backend.download(device, buffer)?;
        if me != 0 {
            if from.contains(&me) {
                world
                    .process_at_rank(0)
                    .send_with_tag(&to_bytes(&block)[..], tag);
            }
            continue;
        }
        let local_ty = shard_io::local_type(io).map_err(layout_err)?;
        let shape: Vec<usize> = local_ty.shape.iter().map(|&d| d.max(0) as usize).collect();
        let fetch = |pos: usize| -> Result<HostTensor, String> {
            if pos == me {
                return Ok(block.clone());
            }
            let rank = i32::try_from(pos).map_err(|_| format!("rank {pos} out of range"))?;
            let (bytes, _) = world.process_at_rank(rank).receive_vec_with_tag::<u8>(tag);
            from_bytes(local_ty.elem, &shape, &bytes)
                .map_err(|e| format!("device {}: {e}", program.devices[pos]))
        };
        gathered.push(
            shard_io::gather(io, &program.devices, check_replicas, fetch).map_err(layout_err)?,
        );
    }
    Ok((me == 0).then_some(gathered))
}

/// What a run leaves: the outputs (on rank 0 only) and the time of every
/// run in milliseconds (the slowest rank's, between barriers).
#[derive(Debug)]
pub struct MpiRun {
    pub outputs: Option<Vec<HostTensor>>,
    pub times_ms: Vec<f64>,
}

/// Place, run `repeat` times, and gather on rank 0 (with replica checking
/// when `check_replicas`). A rank that cannot place its inputs, or whose
/// device fails, ends the job ([`MpiBackend::settle`],
/// [`MpiBackend::abort`]).
pub fn run_program<B: RankBackend>(
    backend: &B,
    program: &DeviceProgram,
    inputs: Inputs<'_>,
    repeat: usize,
    check_replicas: bool,
    opts: &ExecOptions,
) -> Result<MpiRun, RuntimeError> {
    let mpi = backend.mpi();
    let exec = Executor::new(program)?;
    // A placement error (a bad or missing file) may hit every rank or a
    // few: either way the job ends here, with the error printed once.
    let placed = mpi.settle(place_local(backend, program, inputs));
    let mut times_ms = Vec::with_capacity(repeat);
    let mut last = None;
    for _ in 0..repeat.max(1) {
        mpi.barrier();
        let start = Instant::now();
        let outs = exec.run(backend, &placed, opts)?;
        mpi.barrier();
        times_ms.push(start.elapsed().as_secs_f64() * 1e3);
        last = Some(outs);
    }
    drop(placed);
    let outs = last.ok_or_else(|| RuntimeError::Program("the program did not run".into()))?;
    let outputs = gather_to_root(backend, program, outs, check_replicas)?;
    Ok(MpiRun { outputs, times_ms })
}
