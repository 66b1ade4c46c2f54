//! The executor: runs a [`DeviceProgram`] on any [`Backend`], every device
//! concurrently, each one instruction after another.
//!
//! [`Executor::new`] checks the program once (value ids, per-device tables,
//! collective groups; `exec_plan`, block by block for loops and branches),
//! decides which element-wise chains of the top level run fused
//! ([`crate::fusion`]), and works out, per collective, each device's group
//! and rank, and per value the unit (instruction or fused group) that reads
//! it last, so a device drops every value right after its last use
//! (`exec_blocks` runs the units). Then:
//!
//! 1. [`Executor::place`] splits global inputs into per-device blocks and
//!    uploads them (once; many runs can use them, like device arrays);
//! 2. [`Executor::run`] runs the program on every device and returns each
//!    device's output blocks;
//! 3. [`Executor::gather`] downloads them and rebuilds the global outputs.
//!
//! [`Executor::run_global`] does all three.

use meshrun_compiler::ir::TensorType;
use meshrun_compiler::partition::{DeviceProgram, Instr, PerDevice};
use meshrun_kernels::HostTensor;

use crate::backend::{Backend, Device, DeviceError, Participation};
use crate::error::RuntimeError;
use crate::exec_blocks::BlockRun;
use crate::exec_plan::{plan_block, BlockPlan, Part};
use crate::fusion::{self, DotChain, Group, TransposedDot, Unit};
use crate::replica_results::ReplicaResults;
use crate::shard_io;

/// Value `v`'s buffer in `env`, or the error that it is not live (a
/// program the plan checked never gets it).
pub(crate) fn live_ref<B>(env: &[Option<B>], v: usize) -> Result<&B, DeviceError> {
    env.get(v)
        .and_then(Option::as_ref)
        .ok_or_else(|| DeviceError::Invalid(format!("value #{v} is not live")))
}

/// `live_ref` of each of `values`.
fn live_refs<'e, B>(env: &'e [Option<B>], values: &[usize]) -> Result<Vec<&'e B>, DeviceError> {
    values.iter().map(|&v| live_ref(env, v)).collect()
}

/// A test hook: make one device fail at one instruction, with an error or
/// a panic, to check that a failing device fails the whole run promptly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InjectedFault {
    pub device: i64,
    pub instr: usize,
    pub panic: bool,
}

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct ExecOptions {
    /// Do not check each result's type against the program's local type.
    /// The check is cheap and turns a wrong block shape into an error at
    /// the instruction that made it, so it is on by default.
    pub skip_type_checks: bool,
    /// See [`InjectedFault`]; `None` outside tests.
    pub fault: Option<InjectedFault>,
    /// Stop a `while` loop that has run this many iterations with an
    /// error instead of running on (`None`: no limit, as XLA). Every device
    /// evaluates the same predicate, so all stop at the same iteration.
    /// The fuzzer sets it: a mutated program may never terminate.
    pub max_loop_iterations: Option<u64>,
}

/// Count one more iteration of a `while` loop, or say why the run stops:
/// the loop already ran `max` iterations (see
/// [`ExecOptions::max_loop_iterations`]). The executor and both reference
/// interpreters count with it, so they stop at the same iteration.
pub(crate) fn count_loop_iteration(iterations: &mut u64, max: Option<u64>) -> Result<(), String> {
    if max.is_some_and(|max| *iterations >= max) {
        return Err(format!(
            "the loop ran {iterations} iterations, the limit set for this run"
        ));
    }
    *iterations += 1;
    Ok(())
}

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
            dev,
            pos,
            env: &mut env,
            instances: &mut instances,
            shared,
            opts,
        };
        self.run_block(&mut run, &p.instrs, &self.plan, true)?;
        p.outputs
            .iter()
            .map(|io| {
                env[io.value]
                    .clone()
                    .ok_or_else(|| bad(format!("output value #{} was not computed", io.value)))
            })
            .collect()
    }

    /// Run a fused group: in one pass if the device can, else its members
    /// one by one (their intermediate values live in `env` meanwhile and
    /// are released after the root).
    pub(crate) fn fused<D: Device>(
        &self,
        dev: &mut D,
        pos: usize,
        g: &Group,
        env: &mut [Option<D::Buffer>],
    ) -> Result<D::Buffer, DeviceError> {
        {
            let ops = live_refs(env, &g.operands)?;
            if let Some(r) = dev.fused(&g.chain, &ops) {
                return r;
            }
        }
        let p = self.program;
        let mut root = None;
        let mut made = Vec::with_capacity(g.members.len());
        for &m in &g.members {
            let instr = &p.instrs[m];
            // A shared broadcast that also ran on its own is live already.
            if m != g.root && instr.results().first().is_some_and(|&v| env[v].is_some()) {
                continue;
            }
            // Members are element-wise ops: no collective place or number.
            let mut results = self.step(dev, pos, &[], 0, instr, env)?;
            let (Some(&v), Some(b)) = (instr.results().first(), results.pop()) else {
                return Err(DeviceError::Invalid(format!(
                    "instruction {m} made no result"
                )));
            };
            if m == g.root {
                root = Some(b);
            } else {
                env[v] = Some(b);
                made.push(v);
            }
        }
        for v in made {
            if let Some(b) = env[v].take() {
                dev.release(b);
            }
        }
        root.ok_or_else(|| DeviceError::Invalid("a fused group without its root".into()))
    }

    /// Run a [`DotChain`]: on the dot's tiles if the device can, else the
    /// dot, then its group (fused or op by op) reading it.
    pub(crate) fn dot_chain<D: Device>(
        &self,
        dev: &mut D,
        pos: usize,
        c: &DotChain,
        env: &mut [Option<D::Buffer>],
    ) -> Result<D::Buffer, DeviceError> {
        let dot_ty = self.program.values[c.dot_result].ty.clone();
        let product = {
            let dot_ops = live_refs(env, &c.dot_operands)?;
            let chain_ops = c
                .group
                .operands
                .iter()
                .enumerate()
                .map(|(k, &v)| (k != c.slot).then(|| live_ref(env, v)).transpose())
                .collect::<Result<Vec<_>, _>>()?;
            if let Some(r) = dev.dot_fused(&c.kind, &dot_ops, &dot_ty, &c.group.chain, &chain_ops) {
                return r;
            }
            dev.op(&c.kind, &dot_ops, &[dot_ty])?
                .pop()
                .ok_or_else(|| DeviceError::Invalid("the dot made no result".into()))?
        };
        env[c.dot_result] = Some(product);
        let r = self.fused(dev, pos, &c.group, env);
        if let Some(b) = env[c.dot_result].take() {
            dev.release(b);
        }
        r
    }

    /// Run a [`TransposedDot`]: its swapped `dot_general`, which makes the
    /// transpose's result, then its all-reduce if it has one (`reduce`:
    /// the collective's instance and each device's place in it).
    pub(crate) fn transposed_dot<D: Device>(
        &self,
        dev: &mut D,
        pos: usize,
        t: &TransposedDot,
        reduce: Option<(u64, &[Part])>,
        env: &[Option<D::Buffer>],
    ) -> Result<D::Buffer, DeviceError> {
        let ops = live_refs(env, &t.operands)?;
        let ty = &self.program.values[t.result].ty;
        let product = dev
            .op(&t.kind, &ops, std::slice::from_ref(ty))?
            .pop()
            .ok_or_else(|| DeviceError::Invalid("the dot made no result".into()))?;
        let (Some(red), Some((instance, parts))) = (&t.reduce, reduce) else {
            return Ok(product);
        };
        let part = match parts.get(pos) {
            Some(&Part::Group { group, rank }) => Participation::Group {
                group,
                rank,
                members: &red.collective.groups[group],
            },
            _ => return Err(DeviceError::Invalid("no place in the all-reduce".into())),
        };
        let summed = dev.collective(instance, &red.collective, part, &product, ty);
        dev.release(product);
        summed
    }

    /// Run one instruction without blocks; its results in
    /// `instr.results()` order. `parts` is each device's place in it if it
    /// is a collective, `instance` numbers the collective within the run
    /// (the same on every device: all run the same control flow).
    pub(crate) fn step<D: Device>(
        &self,
        dev: &mut D,
        pos: usize,
        parts: &[Part],
        instance: u64,
        instr: &Instr,
        env: &[Option<D::Buffer>],
    ) -> Result<Vec<D::Buffer>, DeviceError> {
        let p = self.program;
        let get = |v: usize| live_ref(env, v);
        let ty = |v: usize| -> &TensorType { &p.values[v].ty };
        let at = |t: &PerDevice<i64>| t.at(pos).copied().unwrap_or(0);
        Ok(match instr {
            Instr::Op {
                kind,
                operands,
                results,
                ..
            } => {
                let ops = operands
                    .iter()
                    .map(|&v| get(v))
                    .collect::<Result<Vec<_>, _>>()?;
                let tys: Vec<TensorType> = results.iter().map(|&v| ty(v).clone()).collect();
                dev.op(kind, &ops, &tys)?
            }
            Instr::Iota {
                result,
                dim,
                offset,
                ..
            } => vec![dev.iota(ty(*result), *dim, at(offset))?],
            Instr::Collective {
                collective,
                operand,
                result,
                ..
            } => {
                let part = match parts.get(pos) {
                    Some(&Part::Group { group, rank }) => Participation::Group {
                        group,
                        rank,
                        members: &collective.groups[group],
                    },
                    Some(&Part::Permute { send_to, recv_from }) => {
                        Participation::Permute { send_to, recv_from }
                    }
                    None => return Err(DeviceError::Invalid("no place in the collective".into())),
                };
                vec![dev.collective(instance, collective, part, get(*operand)?, ty(*result))?]
            }
            Instr::Mask {
                operand,
                dim,
                valid,
                fill,
                ..
            } => vec![dev.mask(get(*operand)?, *dim, at(valid), *fill)?],
            Instr::SliceDim {
                operand,
                dim,
                start,
                size,
                ..
            } => vec![dev.slice_dim(get(*operand)?, *dim, at(start), *size)?],
            Instr::Remap {
                sources,
                fill,
                result,
                dim,
                table,
                ..
            } => {
                let srcs = sources
                    .iter()
                    .map(|&v| get(v))
                    .collect::<Result<Vec<_>, _>>()?;
                let fill = fill.map(get).transpose()?;
                let entries = table
                    .at(pos)
                    .ok_or_else(|| DeviceError::Invalid("no remap table for this device".into()))?;
                vec![dev.remap(&srcs, fill, ty(*result), *dim, entries)?]
            }
            Instr::Loop(_) | Instr::Branch(_) => {
                return Err(DeviceError::Invalid(
                    "a loop or branch is run by run_block".into(),
                ))
            }
        })
    }
}

/// A short name for errors: the op name, the collective kind, or the
/// instruction kind.
pub(crate) fn instr_name(instr: &Instr) -> String {
    match instr {
        Instr::Op { kind, .. } => kind.name(),
        Instr::Iota { .. } => "iota".into(),
        Instr::Collective { collective, .. } => collective.kind.to_string(),
        Instr::Mask { .. } => "mask".into(),
        Instr::SliceDim { .. } => "slice".into(),
        Instr::Remap { .. } => "remap".into(),
        Instr::Loop(_) => "loop".into(),
        Instr::Branch(_) => "branch".into(),
    }
}
