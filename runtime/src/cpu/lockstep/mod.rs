//! The lockstep executor: every simulated device of a run driven from one
//! thread, unit by unit. Each unit (an instruction or a fused group) runs
//! for all devices before the next one starts:
//!
//! - local work ([`local`]) runs once per distinct set of operand blocks
//!   (replicas holding the same blocks share one result, bitwise the
//!   same), the distinct ones spread over the rayon pool, or one at a
//!   time with all of the pool's threads when there are few; a product
//!   whose devices split its rows runs as one product over the stacked
//!   blocks ([`stacked`]);
//! - a collective ([`collective`]) is a move of blocks in memory, computed
//!   once per group with the CPU backend's own pure functions (the same
//!   reductions in rank order, so the same bits as a thread per device),
//!   with no rendezvous and no thread handoff;
//! - loops and branches decide per device: devices that agree run on
//!   together; devices whose condition or branch index differs (code
//!   driven by `partition_id`) run their own way, each set of devices in
//!   lockstep, and rejoin after the region. A collective whose group
//!   spans devices on different paths is an error naming it.
//!
//! A thread per device ([`super::CpuExecutor::Threads`]) stays the way of
//! the MPI and CUDA backends; tests run both on the fixtures and compare.

mod collective;
mod local;
mod stacked;

use std::sync::Arc;

use meshrun_compiler::partition::{BranchInstr, DeviceProgram, Instr, LocalId, LoopInstr};

use super::rendezvous::Rendezvous;
use super::{CpuBackend, CpuBuffer};
use crate::backend::DeviceError;
use crate::error::RuntimeError;
use crate::exec_blocks::{instruction_error, unit_name, unit_results, yielded_from};
use crate::exec_options::{count_loop_iteration, ExecOptions};
use crate::exec_plan::{BlockPlan, PlannedProgram};
use crate::fusion::Unit;
use crate::spmd::catch_device_panic;

/// Each device's (by position) results of a unit.
type Made = Vec<(usize, Vec<CpuBuffer>)>;
/// The device (by position) that failed, and why.
type Failed = (usize, DeviceError);

/// One distinct computation of a unit and the devices that take its
/// results.
struct Job {
    /// The device whose blocks and parameters it runs with.
    leader: usize,
    /// Every device taking the results, the leader first.
    devices: Vec<usize>,
}

/// Each device's buffer of each live value: `env[pos][value]`.
type Env = Vec<Vec<Option<CpuBuffer>>>;

/// One lockstep run.
struct Run<'r> {
    program: &'r DeviceProgram,
    opts: &'r ExecOptions,
    backend: &'r CpuBackend,
    /// Never met: collectives run here, not in the devices (a device needs
    /// one to exist).
    comm: Arc<Rendezvous<CpuBuffer>>,
    env: Env,
}

impl Run<'_> {
    fn release(&mut self, pos: usize, v: LocalId) {
        if let Some(b) = self.env[pos][v].take() {
            if let Some(t) = Arc::into_inner(b) {
                super::alloc::recycle(t);
            }
        }
    }
}

/// Run `planned` on every device from this thread; each device's outputs,
/// in program order.
pub(crate) fn run(
    backend: &CpuBackend,
    planned: &PlannedProgram<'_>,
    inputs: &[Vec<CpuBuffer>],
    opts: &ExecOptions,
) -> Result<Vec<Vec<CpuBuffer>>, RuntimeError> {
    let p = planned.program;
    let n = p.num_devices();
    let mut env: Env = vec![vec![None; p.values.len()]; n];
    for (pos, bufs) in inputs.iter().enumerate() {
        if bufs.len() != p.inputs.len() {
            return Err(RuntimeError::Program(format!(
                "device {} got {} input blocks for {} inputs",
                p.devices[pos],
                bufs.len(),
                p.inputs.len()
            )));
        }
        for (io, b) in p.inputs.iter().zip(bufs) {
            env[pos][io.value] = Some(b.clone());
        }
    }
    let mut run = Run {
        program: p,
        opts,
        backend,
        comm: Arc::new(Rendezvous::new()),
        env,
    };
    let all: Vec<usize> = (0..n).collect();
    // A panic in a kernel (a bug) fails the run with an error instead of
    // aborting the process; one computation may serve many devices, so
    // it is reported as the first device's.
    catch_device_panic(p.devices[0], || {
        run_block(&mut run, &p.instrs, planned.plan, &all, true)
    })?;
    (0..n)
        .map(|pos| {
            p.outputs
                .iter()
                .map(|io| {
                    run.env[pos][io.value].clone().ok_or_else(|| {
                        RuntimeError::Program(format!(
                            "output value #{} was not computed",
                            io.value
                        ))
                    })
                })
                .collect()
        })
        .collect()
}

/// Run `instrs` (planned as `plan`) on the devices at positions `active`.
fn run_block(
    r: &mut Run<'_>,
    instrs: &[Instr],
    plan: &BlockPlan,
    active: &[usize],
    top: bool,
) -> Result<(), RuntimeError> {
    let p = r.program;
    for (u, unit) in plan.units.iter().enumerate() {
        let i = unit.instr();
        let instr = &instrs[i];
        if let Some(f) = r.opts.fault.filter(|f| {
            top && unit.covers(f.instr) && active.iter().any(|&q| p.devices[q] == f.device)
        }) {
            if f.panic {
                // The panic the device's kernel would raise, caught as
                // the device's.
                return catch_device_panic(f.device, || {
                    panic!("injected fault at instruction {}", f.instr)
                });
            }
            let e = DeviceError::Invalid("injected fault".into());
            return Err(instruction_error(f.device, instrs, f.instr, e));
        }
        let started = crate::exec_profile::enabled().then(crate::exec_profile::Stamp::now);
        let fail = |pos: usize, e: DeviceError| instruction_error(p.devices[pos], instrs, i, e);
        let made: Made = match (unit, instr) {
            (Unit::Instr(_), Instr::Loop(l)) => run_loop(r, l, &plan.subs[i], active, &fail)?,
            (Unit::Instr(_), Instr::Branch(b)) => run_branch(r, b, &plan.subs[i], active, &fail)?,
            (Unit::Instr(_), Instr::Collective { .. }) => {
                collective::run(r, instr, &plan.parts[i], active).map_err(|(q, e)| fail(q, e))?
            }
            (Unit::TransposedDot(t), _) if t.reduce.is_some() => {
                local::transposed_dot_reduced(r, t, plan, active).map_err(|(q, e)| fail(q, e))?
            }
            _ => local::run(r, unit, instr, active, &plan.frees[u]).map_err(|(q, e)| fail(q, e))?,
        };
        let ids = unit_results(unit, instr);
        for (pos, results) in made {
            if results.len() != ids.len() {
                return Err(fail(
                    pos,
                    DeviceError::Invalid(format!(
                        "{} results for {} values",
                        results.len(),
                        ids.len()
                    )),
                ));
            }
            for (&v, b) in ids.iter().zip(results) {
                if !r.opts.skip_type_checks {
                    let got = b.tensor_type();
                    let want = &p.values[v].ty;
                    if &got != want {
                        return Err(fail(
                            pos,
                            DeviceError::Invalid(format!(
                                "made {got} for {} of local type {want}",
                                p.values[v].name
                            )),
                        ));
                    }
                }
                r.env[pos][v] = Some(b);
            }
        }
        if let Some(t0) = started {
            let ty = ids.first().map(|&v| p.values[v].ty.to_string());
            let what = format!("lockstep {}", unit_name(unit, instr));
            crate::exec_profile::add(format!("{what} -> {}", ty.unwrap_or_default()), t0);
        }
        for &v in &plan.frees[u] {
            for &pos in active {
                r.release(pos, v);
            }
        }
    }
    for &v in &plan.leftovers {
        for &pos in active {
            r.release(pos, v);
        }
    }
    Ok(())
}

/// A loop on `active`: each device runs until its own condition says
/// stop; those still running run the body together.
fn run_loop(
    r: &mut Run<'_>,
    l: &LoopInstr,
    plans: &[BlockPlan],
    active: &[usize],
    fail: &dyn Fn(usize, DeviceError) -> RuntimeError,
) -> Result<Made, RuntimeError> {
    let [cond_plan, body_plan] = plans else {
        return Err(fail(
            active[0],
            DeviceError::Invalid("a loop without two blocks".into()),
        ));
    };
    let mut carried: Made = Vec::with_capacity(active.len());
    for &pos in active {
        let inits = l
            .inits
            .iter()
            .map(|&v| live(r, pos, v))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| fail(pos, e))?;
        carried.push((pos, inits));
    }
    let mut done: Made = Vec::with_capacity(active.len());
    let mut iterations = 0u64;
    while !carried.is_empty() {
        count_loop_iteration(&mut iterations, r.opts.max_loop_iterations)
            .map_err(|m| fail(carried[0].0, DeviceError::Invalid(m)))?;
        let running: Vec<usize> = carried.iter().map(|(q, _)| *q).collect();
        for (pos, values) in &carried {
            bind(r, *pos, &l.cond.args, values.clone());
        }
        run_block(r, &l.cond.instrs, cond_plan, &running, false)?;
        let mut next = Vec::with_capacity(carried.len());
        for (pos, values) in carried {
            let pred = yielded_from(&mut r.env[pos], &l.cond.results, cond_plan)
                .map_err(|e| fail(pos, e))?;
            let go = pred[0].scalar_bool().ok_or_else(|| {
                fail(
                    pos,
                    DeviceError::Invalid("the loop condition is not a tensor<i1>".into()),
                )
            })?;
            if go {
                next.push((pos, values));
            } else {
                done.push((pos, values));
            }
        }
        if next.is_empty() {
            break;
        }
        let running: Vec<usize> = next.iter().map(|(q, _)| *q).collect();
        for (pos, values) in next {
            bind(r, pos, &l.body.args, values);
        }
        run_block(r, &l.body.instrs, body_plan, &running, false)?;
        carried = running
            .iter()
            .map(|&pos| {
                yielded_from(&mut r.env[pos], &l.body.results, body_plan)
                    .map(|v| (pos, v))
                    .map_err(|e| fail(pos, e))
            })
            .collect::<Result<_, _>>()?;
    }
    Ok(done)
}

/// A branch on `active`: the devices that take the same branch run it
/// together.
fn run_branch(
    r: &mut Run<'_>,
    b: &BranchInstr,
    plans: &[BlockPlan],
    active: &[usize],
    fail: &dyn Fn(usize, DeviceError) -> RuntimeError,
) -> Result<Made, RuntimeError> {
    let n = b.branches.len();
    let mut taking: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &pos in active {
        let index = live(r, pos, b.index).map_err(|e| fail(pos, e))?;
        let index = index.scalar_i64().ok_or_else(|| {
            fail(
                pos,
                DeviceError::Invalid("the branch index is not an integer scalar".into()),
            )
        })?;
        // As `stablehlo.case`: an index out of range runs the last branch.
        let k = usize::try_from(index)
            .ok()
            .filter(|&k| k < n)
            .unwrap_or(n - 1);
        taking[k].push(pos);
    }
    let mut out = Vec::with_capacity(active.len());
    for (k, devices) in taking.iter().enumerate() {
        if devices.is_empty() {
            continue;
        }
        let (Some(block), Some(plan)) = (b.branches.get(k), plans.get(k)) else {
            return Err(fail(
                devices[0],
                DeviceError::Invalid(format!("no branch {k}")),
            ));
        };
        run_block(r, &block.instrs, plan, devices, false)?;
        for &pos in devices {
            let values =
                yielded_from(&mut r.env[pos], &block.results, plan).map_err(|e| fail(pos, e))?;
            out.push((pos, values));
        }
    }
    Ok(out)
}

fn live(r: &Run<'_>, pos: usize, v: LocalId) -> Result<CpuBuffer, DeviceError> {
    crate::exec_step::live_ref(&r.env[pos], v).cloned()
}

fn bind(r: &mut Run<'_>, pos: usize, args: &[LocalId], values: Vec<CpuBuffer>) {
    for (&a, b) in args.iter().zip(values) {
        r.env[pos][a] = Some(b);
    }
}
