//! A unit of local work on every active device of a lockstep run.
//!
//! Devices whose operand blocks are the same blocks (the same `Arc`s) and
//! whose per-device parameters agree get one result, computed once: a
//! CPU kernel is a function of its operands, attributes and result types
//! alone, so a replica would compute bitwise the same. The distinct
//! computations ("jobs") then run either over the rayon pool, each on one
//! thread (as many jobs as threads at least), or one after another with
//! all of the pool's threads each (fewer): either way every core works
//! and no thread waits for a peer.

use std::collections::HashMap;
use std::sync::Arc;

use meshrun_compiler::partition::{DeviceProgram, Instr, LocalId, PerDevice};
use meshrun_kernels::Parallelism;
use rayon::prelude::*;

use super::{collective, stacked, Failed, Job, Made, Run};
use crate::backend::DeviceError;
use crate::cpu::rendezvous::Rendezvous;
use crate::cpu::{CpuBackend, CpuBuffer, CpuDevice};
use crate::exec_blocks::same_on_replicas;
use crate::exec_plan::BlockPlan;
use crate::exec_step;
use crate::fusion::{TransposedDot, Unit};

/// What a job needs besides its device's values (shared by all jobs).
struct Ctx<'a> {
    program: &'a DeviceProgram,
    backend: &'a CpuBackend,
    comm: &'a Arc<Rendezvous<CpuBuffer>>,
}

impl Ctx<'_> {
    fn device(&self, pos: usize, par: Parallelism) -> CpuDevice {
        let mut dev = CpuDevice::new(
            self.program.devices[pos],
            par,
            self.backend.chunked_min,
            self.comm.clone(),
        );
        dev.dot_epilogues = self.backend.dot_epilogues;
        dev
    }
}

/// Run `unit` (`instr` names it) on `active`; `frees` are the values
/// released after it.
pub(super) fn run(
    r: &mut Run<'_>,
    unit: &Unit,
    instr: &Instr,
    active: &[usize],
    frees: &[LocalId],
) -> Result<Made, Failed> {
    let jobs = jobs(r, unit, instr, active);
    let p = r.program;
    if let Some(v) = exec_step::handed_over(unit, instr, frees) {
        // The op writes into its first operand's block, which dies with
        // it, if the leader holds the last reference: the other devices
        // of a job hold the leader's block (that made them one job) and
        // release it after this unit anyway, so they let go first.
        for j in &jobs {
            for &pos in &j.devices[1..] {
                r.env[pos][v] = None;
            }
        }
        let made = run_jobs(r, &jobs, |dev, _, env| {
            exec_step::step_into(p, dev, instr, env)
        })?;
        return Ok(spread(&jobs, made));
    }
    match (unit, instr) {
        (
            Unit::Instr(_),
            Instr::Op {
                kind,
                operands,
                results,
                ..
            },
        ) if results.len() == 1 => {
            let ty = &p.values[results[0]].ty;
            if let Some(products) = stacked::product(r, kind, operands, ty, &jobs)? {
                let made = jobs.iter().zip(products).map(|(j, b)| (j.leader, vec![b]));
                return Ok(spread(&jobs, made.collect()));
            }
        }
        (Unit::DotChain(c), _) => {
            let ty = &p.values[c.dot_result].ty;
            if let Some(products) = stacked::product(r, &c.kind, &c.dot_operands, ty, &jobs)? {
                // The chain on each device's block of the product: the
                // bits of the chain run on the product's tiles.
                let by_leader: HashMap<usize, CpuBuffer> =
                    jobs.iter().map(|j| j.leader).zip(products).collect();
                let made = run_jobs(r, &jobs, |dev, pos, env| {
                    env[c.dot_result] = by_leader.get(&pos).cloned();
                    let out = exec_step::fused(p, dev, pos, &c.group, env);
                    env[c.dot_result] = None;
                    Ok(vec![out?])
                })?;
                return Ok(spread(&jobs, made));
            }
        }
        _ => {}
    }
    let made = run_jobs(r, &jobs, |dev, pos, env| match (unit, instr) {
        (Unit::Group(g), _) => Ok(vec![exec_step::fused(p, dev, pos, g, env)?]),
        (Unit::TransposedDot(t), _) => {
            Ok(vec![exec_step::transposed_dot(p, dev, pos, t, None, env)?])
        }
        (Unit::DotChain(c), _) => Ok(vec![exec_step::dot_chain(p, dev, pos, c, env)?]),
        (Unit::Instr(_), _) => exec_step::step(p, dev, pos, &[], 0, instr, env),
    })?;
    Ok(spread(&jobs, made))
}

/// A [`TransposedDot`] whose product an all-reduce sums: the products on
/// every device, then the all-reduce as a lockstep collective.
pub(super) fn transposed_dot_reduced(
    r: &mut Run<'_>,
    t: &TransposedDot,
    plan: &BlockPlan,
    active: &[usize],
) -> Result<Made, Failed> {
    let p = r.program;
    let parts = plan
        .parts
        .get(t.reduce.as_ref().map_or(usize::MAX, |red| red.instr));
    let parts = parts.map_or(&[][..], Vec::as_slice);
    if let Some(red) = &t.reduce {
        let ty = &p.values[t.result].ty;
        let summed =
            stacked::summed_products(r, &t.kind, &t.operands, ty, &red.collective, parts, active)?;
        if let Some(made) = summed {
            return Ok(made);
        }
    }
    let unit = Unit::TransposedDot(t.clone());
    let jobs = jobs(r, &unit, &p.instrs[t.transpose], active);
    let products = run_jobs(r, &jobs, |dev, pos, env| {
        Ok(vec![exec_step::transposed_dot(p, dev, pos, t, None, env)?])
    })?;
    let products = spread(&jobs, products);
    let Some(red) = &t.reduce else {
        return Ok(products);
    };
    let by_pos: HashMap<usize, CpuBuffer> = products
        .into_iter()
        .filter_map(|(q, mut v)| Some((q, v.pop()?)))
        .collect();
    let block = |pos: usize| {
        by_pos
            .get(&pos)
            .cloned()
            .ok_or_else(|| DeviceError::Invalid("the dot made no result".into()))
    };
    let out = &p.values[t.result].ty;
    collective::apply(p, &red.collective, parts, active, block, out)
}

/// The distinct computations of `unit` on `active`.
fn jobs(r: &Run<'_>, unit: &Unit, instr: &Instr, active: &[usize]) -> Vec<Job> {
    let p = r.program;
    // `unit.operands` reads the top level's instructions; in a nested
    // block an instruction unit is `instr`.
    let operands = match unit {
        Unit::Instr(_) => instr.operands(),
        _ => unit.operands(p),
    };
    let mut jobs: Vec<Job> = Vec::new();
    let mut seen: HashMap<Vec<usize>, usize> = HashMap::new();
    let share = r.backend.share_results;
    for &pos in active {
        let Some(mut key) = per_device_key(instr, unit, pos).filter(|_| share) else {
            jobs.push(Job {
                leader: pos,
                devices: vec![pos],
            });
            continue;
        };
        // A value that is not live makes no key: the job itself reports
        // it, as a device would.
        let blocks: Option<Vec<usize>> = operands
            .iter()
            .map(|&v| r.env[pos].get(v)?.as_ref().map(|b| Arc::as_ptr(b) as usize))
            .collect();
        let Some(blocks) = blocks else {
            jobs.push(Job {
                leader: pos,
                devices: vec![pos],
            });
            continue;
        };
        key.extend(blocks);
        match seen.get(&key) {
            Some(&j) => jobs[j].devices.push(pos),
            None => {
                seen.insert(key, jobs.len());
                jobs.push(Job {
                    leader: pos,
                    devices: vec![pos],
                });
            }
        }
    }
    jobs
}

/// What besides its operands makes a unit's result differ between
/// devices (its per-device parameters), or `None` when devices never
/// share it.
fn per_device_key(instr: &Instr, unit: &Unit, pos: usize) -> Option<Vec<usize>> {
    let at = |t: &PerDevice<i64>| t.at(pos).copied().unwrap_or(0) as usize;
    match (unit, instr) {
        (Unit::Instr(_), Instr::Iota { offset, .. }) => Some(vec![at(offset)]),
        (Unit::Instr(_), Instr::Mask { valid, .. }) => Some(vec![at(valid)]),
        (Unit::Instr(_), Instr::SliceDim { start, .. }) => Some(vec![at(start)]),
        (Unit::Instr(_), Instr::Remap { .. }) => None,
        (Unit::Instr(_), Instr::Op { kind, .. }) if !same_on_replicas(kind) => None,
        _ => Some(Vec::new()),
    }
}

/// Run `one` for each job on its leader's values; each job's results.
/// Many jobs spread over the rayon pool, a few run one at a time on all
/// of its threads.
fn run_jobs(
    r: &mut Run<'_>,
    jobs: &[Job],
    one: impl Fn(&mut CpuDevice, usize, &mut [Option<CpuBuffer>]) -> Result<Vec<CpuBuffer>, DeviceError>
        + Sync,
) -> Result<Made, Failed> {
    let ctx = Ctx {
        program: r.program,
        backend: r.backend,
        comm: &r.comm,
    };
    let threads = rayon::current_num_threads();
    // Each job's leader's values, out of the environment while it runs
    // (a fused group keeps intermediate values there).
    let mut rows: Vec<(usize, Vec<Option<CpuBuffer>>)> = jobs
        .iter()
        .map(|j| (j.leader, std::mem::take(&mut r.env[j.leader])))
        .collect();
    let results: Vec<Result<Vec<CpuBuffer>, DeviceError>> = if jobs.len() >= threads.max(2) {
        rows.par_iter_mut()
            .map(|(pos, env)| one(&mut ctx.device(*pos, Parallelism::None), *pos, env))
            .collect()
    } else {
        rows.iter_mut()
            .map(|(pos, env)| one(&mut ctx.device(*pos, Parallelism::Rayon(0)), *pos, env))
            .collect()
    };
    for (pos, env) in rows {
        r.env[pos] = env;
    }
    jobs.iter()
        .zip(results)
        .map(|(j, res)| res.map(|v| (j.leader, v)).map_err(|e| (j.leader, e)))
        .collect()
}

/// Every device's results from its job's (`made`: per job, by leader).
fn spread(jobs: &[Job], made: Made) -> Made {
    let mut out = Vec::with_capacity(jobs.iter().map(|j| j.devices.len()).sum());
    for (j, (_, results)) in jobs.iter().zip(made) {
        for &pos in &j.devices[1..] {
            out.push((pos, results.clone()));
        }
        out.push((j.leader, results));
    }
    out
}
