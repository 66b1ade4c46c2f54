//! The executor: runs a [`DeviceProgram`] on any [`Backend`], every device
//! concurrently, each one instruction after another.
//!
//! [`Executor::new`] checks the program once (value ids, per-device tables,
//! collective groups), decides which element-wise chains run fused
//! ([`crate::fusion`]), and works out, per collective, each device's group
//! and rank, and per value the unit (instruction or fused group) that reads
//! it last, so a device drops every value right after its last use. Then:
//!
//! 1. [`Executor::place`] splits global inputs into per-device blocks and
//!    uploads them (once; many runs can use them, like device arrays);
//! 2. [`Executor::run`] runs the program on every device and returns each
//!    device's output blocks;
//! 3. [`Executor::gather`] downloads them and rebuilds the global outputs.
//!
//! [`Executor::run_global`] does all three.

use std::collections::HashSet;

use meshrun_compiler::ir::TensorType;
use meshrun_compiler::partition::collective::CollectiveKind;
use meshrun_compiler::partition::{DeviceProgram, Instr, PerDevice};
use meshrun_kernels::HostTensor;

use crate::backend::{Backend, Device, DeviceError, Participation};
use crate::error::RuntimeError;
use crate::fusion::{self, Group, Unit};
use crate::shard_io;

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
}

/// A device's place in one collective, precomputed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Group {
        group: usize,
        rank: usize,
    },
    Permute {
        send_to: Option<i64>,
        recv_from: Option<i64>,
    },
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
    program: &'p DeviceProgram,
    /// What runs, in order: instructions and fused groups.
    units: Vec<Unit>,
    /// Per value, the last unit that reads it (`None`: never read, or a
    /// program output, which is kept).
    last_use: Vec<Option<usize>>,
    /// Per instruction, per device position, its place in the collective
    /// (empty for other instructions).
    parts: Vec<Vec<Part>>,
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
        let mut defined = vec![false; nv];
        let check_id = |v: usize, what: &str| {
            if v < nv {
                Ok(())
            } else {
                Err(bad(format!("{what} refers to value #{v} of {nv}")))
            }
        };
        for io in &program.inputs {
            check_id(io.value, "an input")?;
            defined[io.value] = true;
        }
        let mut parts = Vec::with_capacity(program.instrs.len());
        for (i, instr) in program.instrs.iter().enumerate() {
            for v in instr.operands() {
                check_id(v, &format!("instruction {i}"))?;
                if !defined[v] {
                    return Err(bad(format!(
                        "instruction {i} reads value #{v} before it is defined"
                    )));
                }
            }
            for v in instr.results() {
                check_id(v, &format!("instruction {i}"))?;
                defined[v] = true;
            }
            check_tables(instr, n).map_err(|m| bad(format!("instruction {i}: {m}")))?;
            parts.push(match instr {
                Instr::Collective { collective, .. } => {
                    plan_parts(&program.devices, collective.kind, &collective.groups)
                        .map_err(|m| bad(format!("instruction {i} ({}): {m}", collective.kind)))?
                }
                _ => Vec::new(),
            });
        }
        let units = if fuse {
            fusion::plan(program)
        } else {
            fusion::unfused(program)
        };
        let mut last_use = vec![None; nv];
        for (u, unit) in units.iter().enumerate() {
            for v in unit.operands(program) {
                last_use[v] = Some(u);
            }
        }
        for io in &program.outputs {
            check_id(io.value, "an output")?;
            if !defined[io.value] {
                return Err(bad(format!("output value #{} is never computed", io.value)));
            }
            last_use[io.value] = None;
        }
        Ok(Executor {
            program,
            units,
            last_use,
            parts,
        })
    }

    /// The fused groups of the plan.
    pub fn groups(&self) -> impl Iterator<Item = &Group> {
        self.units.iter().filter_map(|u| match u {
            Unit::Group(g) => Some(g),
            Unit::Instr(_) => None,
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
        let body = |dev: &mut B::Device| -> Result<Vec<B::Buffer>, RuntimeError> {
            let id = dev.id();
            let pos = p
                .position(id)
                .ok_or_else(|| bad(format!("device {id} is not one of @{}'s devices", p.name)))?;
            self.run_device(dev, pos, &placed.per_device[pos], opts)
        };
        let per_device = backend.run_spmd(&p.devices, &body)?;
        Ok(DeviceOutputs { per_device })
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
        for (u, unit) in self.units.iter().enumerate() {
            let i = unit.instr();
            let instr = &p.instrs[i];
            let what = instr_name(instr);
            let fail = |e: DeviceError| match e {
                DeviceError::PeerFailed(failed) => RuntimeError::Aborted { device: id, failed },
                e => RuntimeError::Instruction {
                    device: id,
                    instr: i,
                    step: instr.step(),
                    what: what.clone(),
                    message: e.to_string(),
                },
            };
            if let Some(f) = opts
                .fault
                .filter(|f| f.device == id && unit.covers(f.instr))
            {
                if f.panic {
                    panic!("injected fault at instruction {}", f.instr);
                }
                return Err(fail(DeviceError::Invalid("injected fault".into())));
            }
            let (ids, results) = match unit {
                Unit::Instr(_) => (
                    instr.results(),
                    self.step(dev, pos, i, instr, &env).map_err(fail)?,
                ),
                Unit::Group(g) => (
                    vec![g.result],
                    vec![self.fused(dev, pos, g, &mut env).map_err(fail)?],
                ),
            };
            if results.len() != ids.len() {
                return Err(fail(DeviceError::Invalid(format!(
                    "{} results for {} values",
                    results.len(),
                    ids.len()
                ))));
            }
            for (&v, b) in ids.iter().zip(results) {
                if !opts.skip_type_checks {
                    let got = dev.buffer_type(&b);
                    let want = &p.values[v].ty;
                    if &got != want {
                        return Err(fail(DeviceError::Invalid(format!(
                            "made {got} for {} of local type {want}",
                            p.values[v].name
                        ))));
                    }
                }
                env[v] = Some(b);
            }
            for v in unit.operands(p) {
                if self.last_use[v] == Some(u) {
                    if let Some(b) = env[v].take() {
                        dev.release(b);
                    }
                }
            }
        }
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
    fn fused<D: Device>(
        &self,
        dev: &mut D,
        pos: usize,
        g: &Group,
        env: &mut [Option<D::Buffer>],
    ) -> Result<D::Buffer, DeviceError> {
        {
            let ops = g
                .operands
                .iter()
                .map(|&v| {
                    env[v]
                        .as_ref()
                        .ok_or_else(|| DeviceError::Invalid(format!("value #{v} is not live")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            if let Some(r) = dev.fused(&g.chain, &ops) {
                return r;
            }
        }
        let p = self.program;
        let mut root = None;
        for &m in &g.members {
            let instr = &p.instrs[m];
            let mut results = self.step(dev, pos, m, instr, env)?;
            let (Some(&v), Some(b)) = (instr.results().first(), results.pop()) else {
                return Err(DeviceError::Invalid(format!(
                    "instruction {m} made no result"
                )));
            };
            if m == g.root {
                root = Some(b);
            } else {
                env[v] = Some(b);
            }
        }
        for &m in &g.members {
            if let Some(b) = p.instrs[m].results().first().and_then(|&v| env[v].take()) {
                dev.release(b);
            }
        }
        root.ok_or_else(|| DeviceError::Invalid("a fused group without its root".into()))
    }

    /// Run one instruction; its results in `instr.results()` order.
    fn step<D: Device>(
        &self,
        dev: &mut D,
        pos: usize,
        i: usize,
        instr: &Instr,
        env: &[Option<D::Buffer>],
    ) -> Result<Vec<D::Buffer>, DeviceError> {
        let p = self.program;
        let get = |v: usize| {
            env[v]
                .as_ref()
                .ok_or_else(|| DeviceError::Invalid(format!("value #{v} is not live")))
        };
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
                let part = match self.parts[i].get(pos) {
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
                vec![dev.collective(i as u64, collective, part, get(*operand)?, ty(*result))?]
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
        })
    }
}

/// A short name for errors: the op name, the collective kind, or the
/// instruction kind.
fn instr_name(instr: &Instr) -> String {
    match instr {
        Instr::Op { kind, .. } => kind.name(),
        Instr::Iota { .. } => "iota".into(),
        Instr::Collective { collective, .. } => collective.kind.to_string(),
        Instr::Mask { .. } => "mask".into(),
        Instr::SliceDim { .. } => "slice".into(),
        Instr::Remap { .. } => "remap".into(),
    }
}

/// Every per-device table has one entry per device.
fn check_tables(instr: &Instr, n: usize) -> Result<(), String> {
    let len = match instr {
        Instr::Iota { offset: t, .. }
        | Instr::Mask { valid: t, .. }
        | Instr::SliceDim { start: t, .. } => t.0.len(),
        Instr::Remap { table, .. } => table.0.len(),
        Instr::Op { .. } | Instr::Collective { .. } => return Ok(()),
    };
    if len == n {
        Ok(())
    } else {
        Err(format!(
            "a per-device table of {len} entries for {n} devices"
        ))
    }
}

/// Each device's place in a collective: its group and rank, or its permute
/// partners. Groups must split the devices into equal parts; permute pairs
/// may name each device at most once as a source and once as a target.
fn plan_parts(
    devices: &[i64],
    kind: CollectiveKind,
    groups: &[Vec<i64>],
) -> Result<Vec<Part>, String> {
    let position = |d: i64| {
        devices
            .iter()
            .position(|&x| x == d)
            .ok_or_else(|| format!("device {d} is not one of the program's devices"))
    };
    if kind == CollectiveKind::CollectivePermute {
        let mut parts = vec![
            Part::Permute {
                send_to: None,
                recv_from: None,
            };
            devices.len()
        ];
        let (mut sources, mut targets) = (HashSet::new(), HashSet::new());
        for pair in groups {
            let &[s, t] = pair.as_slice() else {
                return Err(format!("permute pair {pair:?} is not [source, target]"));
            };
            let (ps, pt) = (position(s)?, position(t)?);
            if !sources.insert(s) || !targets.insert(t) {
                return Err(format!("pair [{s}, {t}] repeats a source or a target"));
            }
            if let Part::Permute { send_to, .. } = &mut parts[ps] {
                *send_to = Some(t);
            }
            if let Part::Permute { recv_from, .. } = &mut parts[pt] {
                *recv_from = Some(s);
            }
        }
        return Ok(parts);
    }
    let size = groups.first().map_or(0, Vec::len);
    let mut parts: Vec<Option<Part>> = vec![None; devices.len()];
    for (g, members) in groups.iter().enumerate() {
        if members.len() != size || size == 0 {
            return Err(format!(
                "groups of different sizes ({size} and {})",
                members.len()
            ));
        }
        for (rank, &d) in members.iter().enumerate() {
            let slot = &mut parts[position(d)?];
            if slot.is_some() {
                return Err(format!("device {d} is in two groups"));
            }
            *slot = Some(Part::Group { group: g, rank });
        }
    }
    parts
        .into_iter()
        .zip(devices)
        .map(|(p, d)| p.ok_or_else(|| format!("device {d} is in no group")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_must_cover_every_device_once() {
        let devs = [0, 1, 2, 3];
        let ok = plan_parts(&devs, CollectiveKind::AllGather, &[vec![0, 2], vec![1, 3]]).unwrap();
        assert_eq!(ok[2], Part::Group { group: 0, rank: 1 });
        let missing = plan_parts(&devs, CollectiveKind::AllGather, &[vec![0, 2]]).unwrap_err();
        assert!(missing.contains("device 1 is in no group"), "{missing}");
        let twice =
            plan_parts(&devs, CollectiveKind::AllReduce, &[vec![0, 1], vec![1, 3]]).unwrap_err();
        assert!(twice.contains("two groups"), "{twice}");
        let unknown =
            plan_parts(&devs, CollectiveKind::AllReduce, &[vec![0, 9], vec![1, 3]]).unwrap_err();
        assert!(unknown.contains("device 9"), "{unknown}");
    }

    #[test]
    fn permute_pairs_give_partners() {
        let devs = [0, 1, 2];
        let parts = plan_parts(
            &devs,
            CollectiveKind::CollectivePermute,
            &[vec![0, 1], vec![2, 2]],
        )
        .unwrap();
        assert_eq!(
            parts[0],
            Part::Permute {
                send_to: Some(1),
                recv_from: None
            }
        );
        assert_eq!(
            parts[2],
            Part::Permute {
                send_to: Some(2),
                recv_from: Some(2)
            }
        );
        let dup = plan_parts(
            &devs,
            CollectiveKind::CollectivePermute,
            &[vec![0, 1], vec![2, 1]],
        );
        assert!(dup.is_err());
    }
}
