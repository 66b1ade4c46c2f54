//! The executor: runs a [`DeviceProgram`] on any [`Backend`], every device
//! concurrently, each one instruction after another.
//!
//! [`Executor::new`] checks the program once (value ids, per-device tables,
//! collective groups; `exec_plan`, block by block for loops and branches),
//! decides which element-wise chains of the top level run fused
//! ([`crate::fusion`]), and works out, per collective, each device's group
//! and rank, and per value the unit (instruction or fused group) that reads
//! it last, so a device drops every value right after its last use
//! (`exec_blocks` runs the blocks, `exec_step` each unit). Then:
//!
//! 1. [`Executor::place`] splits global inputs into per-device blocks and
//!    uploads them (once; many runs can use them, like device arrays);
//! 2. [`Executor::run`] runs the program on every device and returns each
//!    device's output blocks;
//! 3. [`Executor::gather`] downloads them and rebuilds the global outputs.
//!
//! [`Executor::run_global`] does all three.

use meshrun_compiler::partition::DeviceProgram;
use meshrun_kernels::HostTensor;

use crate::backend::{Backend, Device};
use crate::error::RuntimeError;
use crate::exec_blocks::{run_block, BlockRun};
pub use crate::exec_options::{ExecOptions, InjectedFault};
use crate::exec_plan::{plan_block, BlockPlan, PlannedProgram};
use crate::fusion::{self, Group, Unit};
use crate::replica_results::ReplicaResults;
use crate::shard_io;

/// Inputs split and uploaded: per device (program order), one buffer per
/// program input.
pub struct Placed<B> {
    pub per_device: Vec<Vec<B>>,
}

/// What a run leaves on the devices: per device (program order), one
/// buffer per program output.
pub struct DeviceOutputs<B> {
    pub per_device: Vec<Vec<B>>,
}

/// A checked program, ready to run many times.
pub struct Executor<'p> {
    pub(crate) program: &'p DeviceProgram,
    /// What runs at the top level (instructions and fused groups), the
    /// releases after each and each device's place in each collective;
    /// nested, the same for every loop and branch block (never fused).
    plan: BlockPlan,
}

fn bad(msg: String) -> RuntimeError {
    RuntimeError::Program(msg)
}

impl<'p> Executor<'p> {
    /// Check `program` and plan its runs, element-wise chains fused.
    pub fn new(program: &'p DeviceProgram) -> Result<Executor<'p>, RuntimeError> {
        Executor::with_fusion(program, true)
    }

    /// [`Executor::new`], with or without fusion (benchmarks and tests
    /// compare the two; the results are bitwise the same).
    pub fn with_fusion(
        program: &'p DeviceProgram,
        fuse: bool,
    ) -> Result<Executor<'p>, RuntimeError> {
        let n = program.num_devices();
        if n == 0 {
            return Err(bad(format!("@{} runs on no device", program.name)));
        }
        let nv = program.values.len();
        let mut inputs = Vec::with_capacity(program.inputs.len());
        for io in &program.inputs {
            if io.value >= nv {
                return Err(bad(format!(
                    "an input refers to value #{} of {nv}",
                    io.value
                )));
            }
            inputs.push(io.value);
        }
        let outputs: Vec<usize> = program.outputs.iter().map(|io| io.value).collect();
        let units = if fuse {
            fusion::plan(program)
        } else {
            fusion::unfused(program)
        };
        let plan = plan_block(
            program,
            &program.instrs,
            &inputs,
            &outputs,
            vec![false; nv],
            units,
            "",
        )?;
        Ok(Executor { program, plan })
    }

    /// The fused groups of the plan.
    pub fn groups(&self) -> impl Iterator<Item = &Group> {
        self.plan.units.iter().filter_map(|u| match u {
            Unit::Group(g) => Some(g),
            Unit::DotChain(c) => Some(&c.group),
            Unit::Instr(_) | Unit::TransposedDot(_) => None,
        })
    }

    pub fn program(&self) -> &DeviceProgram {
        self.program
    }

    /// Check the number, shapes and element types of global inputs.
    pub fn check_inputs(&self, inputs: &[HostTensor]) -> Result<(), RuntimeError> {
        let p = self.program;
        if inputs.len() != p.inputs.len() {
            return Err(RuntimeError::InputCount {
                func: p.name.clone(),
                expected: p.inputs.len(),
                got: inputs.len(),
            });
        }
        for (index, (io, t)) in p.inputs.iter().zip(inputs).enumerate() {
            if t.tensor_type() != io.global {
                return Err(RuntimeError::InputMismatch {
                    index,
                    expected: io.global.clone(),
                    got_shape: t.shape().to_vec(),
                    got_elem: t.elem_type(),
                });
            }
        }
        Ok(())
    }

    /// Split `inputs` into per-device blocks and upload them.
    pub fn place<B: Backend>(
        &self,
        backend: &B,
        inputs: &[HostTensor],
    ) -> Result<Placed<B::Buffer>, RuntimeError> {
        self.check_inputs(inputs)?;
        let p = self.program;
        crate::capacity::program_fits_backend(p, backend).map_err(|e| RuntimeError::TooLarge {
            pos: meshrun_compiler::SrcPos::UNKNOWN,
            message: e.message,
        })?;
        backend.prepare(&p.devices)?;
        let n = p.num_devices();
        let mut per_device: Vec<Vec<B::Buffer>> = (0..n).map(|_| Vec::new()).collect();
        for (index, (io, t)) in p.inputs.iter().zip(inputs).enumerate() {
            let blocks =
                shard_io::shard(t, io, &p.devices).map_err(|message| RuntimeError::Layout {
                    what: "input",
                    index,
                    message,
                })?;
            // Placeholders until every block is placed, then in order.
            let mut bufs: Vec<Option<B::Buffer>> = (0..n).map(|_| None).collect();
            for (block, positions) in blocks {
                let ids: Vec<i64> = positions.iter().map(|&q| p.devices[q]).collect();
                let placed = backend.upload_shared(&ids, block)?;
                for (q, b) in positions.into_iter().zip(placed) {
                    bufs[q] = Some(b);
                }
            }
            for (pos, b) in bufs.into_iter().enumerate() {
                let b = b.ok_or_else(|| {
                    bad(format!(
                        "input {index} has no block for device {}",
                        p.devices[pos]
                    ))
                })?;
                per_device[pos].push(b);
            }
        }
        Ok(Placed { per_device })
    }

    /// Run the program on every device on placed inputs.
    pub fn run<B: Backend>(
        &self,
        backend: &B,
        placed: &Placed<B::Buffer>,
        opts: &ExecOptions,
    ) -> Result<DeviceOutputs<B::Buffer>, RuntimeError> {
        let p = self.program;
        if placed.per_device.len() != p.num_devices() {
            return Err(bad(format!(
                "inputs placed on {} devices; @{} runs on {}",
                placed.per_device.len(),
                p.name,
                p.num_devices()
            )));
        }
        let planned = PlannedProgram {
            program: p,
            plan: &self.plan,
        };
        if let Some(per_device) = backend.run_whole(&planned, &placed.per_device, opts) {
            let per_device = per_device?;
            if crate::exec_profile::enabled() {
                eprint!("{}", crate::exec_profile::report());
            }
            return Ok(DeviceOutputs { per_device });
        }
        let shared = (backend.shares_results() && p.num_devices() > 1)
            .then(|| ReplicaResults::new(self.plan.units.len(), p.num_devices()));
        let body = |dev: &mut B::Device| -> Result<Vec<B::Buffer>, RuntimeError> {
            let id = dev.id();
            let pos = p
                .position(id)
                .ok_or_else(|| bad(format!("device {id} is not one of @{}'s devices", p.name)))?;
            self.run_device(dev, pos, &placed.per_device[pos], shared.as_ref(), opts)
        };
        let per_device = backend.run_spmd(&p.devices, &body)?;
        if crate::exec_profile::enabled() {
            eprint!("{}", crate::exec_profile::report());
        }
        Ok(DeviceOutputs { per_device })
    }

    /// Hand a run's outputs back to the backend unread (see
    /// [`Backend::discard`]): a loop of runs that keeps only the last one's
    /// outputs gives the others back here.
    pub fn discard<B: Backend>(&self, backend: &B, outputs: DeviceOutputs<B::Buffer>) {
        for (&d, bufs) in self.program.devices.iter().zip(outputs.per_device) {
            for b in bufs {
                backend.discard(d, b);
            }
        }
    }

    /// Download the devices' output blocks and rebuild the global outputs.
    /// With `check_replicas`, every device holding a copy of a block must
    /// hold bitwise the same values.
    pub fn gather<B: Backend>(
        &self,
        backend: &B,
        outputs: DeviceOutputs<B::Buffer>,
        check_replicas: bool,
    ) -> Result<Vec<HostTensor>, RuntimeError> {
        let p = self.program;
        let mut per_device: Vec<Vec<Option<B::Buffer>>> = outputs
            .per_device
            .into_iter()
            .map(|v| v.into_iter().map(Some).collect())
            .collect();
        let mut out = Vec::with_capacity(p.outputs.len());
        for (index, io) in p.outputs.iter().enumerate() {
            let layout = |message: String| RuntimeError::Layout {
                what: "output",
                index,
                message,
            };
            let fetch = |pos: usize| -> Result<HostTensor, String> {
                let buf = per_device
                    .get_mut(pos)
                    .and_then(|v| v.get_mut(index))
                    .and_then(Option::take)
                    .ok_or_else(|| {
                        format!("device {} returned no output {index}", p.devices[pos])
                    })?;
                backend
                    .download(p.devices[pos], buf)
                    .map_err(|e| e.to_string())
            };
            out.push(shard_io::gather(io, &p.devices, check_replicas, fetch).map_err(layout)?);
        }
        Ok(out)
    }

    /// Place, run and gather.
    pub fn run_global<B: Backend>(
        &self,
        backend: &B,
        inputs: &[HostTensor],
        opts: &ExecOptions,
    ) -> Result<Vec<HostTensor>, RuntimeError> {
        let placed = self.place(backend, inputs)?;
        let outs = self.run(backend, &placed, opts)?;
        drop(placed);
        self.gather(backend, outs, false)
    }

    /// The program on one device.
    fn run_device<D: Device>(
        &self,
        dev: &mut D,
        pos: usize,
        inputs: &[D::Buffer],
        shared: Option<&ReplicaResults>,
        opts: &ExecOptions,
    ) -> Result<Vec<D::Buffer>, RuntimeError>
    where
        D::Buffer: Clone,
    {
        let p = self.program;
        let id = dev.id();
        if inputs.len() != p.inputs.len() {
            return Err(bad(format!(
                "device {id} got {} input blocks for {} inputs",
                inputs.len(),
                p.inputs.len()
            )));
        }
        let mut env: Vec<Option<D::Buffer>> = (0..p.values.len()).map(|_| None).collect();
        for (io, b) in p.inputs.iter().zip(inputs) {
            env[io.value] = Some(b.clone());
        }
        let mut instances = 0u64;
        let mut run = BlockRun {
            program: p,
            dev,
            pos,
            env: &mut env,
            instances: &mut instances,
            shared,
            opts,
        };
        run_block(&mut run, &p.instrs, &self.plan, true)?;
        p.outputs
            .iter()
            .map(|io| {
                env[io.value]
                    .clone()
                    .ok_or_else(|| bad(format!("output value #{} was not computed", io.value)))
            })
            .collect()
    }
}
