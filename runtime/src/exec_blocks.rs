//! Running instructions on one device, block by block: the top level, and
//! the blocks of loop and branch instructions.
//!
//! Control flow is decided on the device from a replicated scalar (the
//! loop condition, the branch index) that [`Device::read_scalar`] brings
//! to the host; the partitioner made it whole, so every device decides
//! the same and they meet in the same collectives. Collectives are
//! numbered by a per-run counter rather than by their place in the
//! program, because one in a loop body runs once per iteration.
//!
//! Loop-carried values are buffer handles: binding them to a block's
//! arguments and taking the body's yields as the next values moves
//! handles, never data.

use meshrun_compiler::ir::OpKind;
use meshrun_compiler::partition::{BranchInstr, DeviceProgram, Instr, LocalId, LoopInstr};

use crate::backend::{Device, DeviceError, ShareHandle};
use crate::error::RuntimeError;
use crate::exec_options::{count_loop_iteration, ExecOptions};
use crate::exec_plan::BlockPlan;
use crate::exec_step::{self, instr_name, live_ref};
use crate::fusion::Unit;
use crate::replica_results::{Begin, ReplicaResults};

/// Only results of at least this many elements are shared: replicas
/// with the same blocks wait for the device computing them (a wake-up
/// costs tens of µs; a weight update of 512K elements, half a
/// millisecond), and every shared unit costs a lock and a handle per
/// operand.
const SHARE_MIN_ELEMS: i64 = 1 << 18;

/// One device's state while it runs a program.
pub(crate) struct BlockRun<'r, D: Device> {
    pub program: &'r DeviceProgram,
    pub dev: &'r mut D,
    /// The device's position in the program's device list.
    pub pos: usize,
    /// The buffer of each live value.
    pub env: &'r mut Vec<Option<D::Buffer>>,
    /// Collectives run so far.
    pub instances: &'r mut u64,
    /// Results replicas share at the top level (see `replica_results`).
    pub shared: Option<&'r ReplicaResults>,
    pub opts: &'r ExecOptions,
}

/// Whether a unit is a local computation from its operands alone, which
/// a replica holding the same blocks may take from another device (see
/// `replica_results`): not a collective, a loop or branch, an instruction
/// with per-device parameters, an op without operands but a constant or
/// an iota (`partition_id` has none) or a `custom_call`; and, but for
/// constants and iotas, one whose result has [`SHARE_MIN_ELEMS`]
/// elements at least. Constants are shared so that the chains reading
/// them (a learning rate) can be.
fn shareable(unit: &Unit, instr: &Instr, p: &DeviceProgram) -> bool {
    use OpKind as K;
    let big = unit_results(unit, instr).first().is_some_and(|&v| {
        p.values
            .get(v)
            .is_some_and(|x| x.ty.shape.iter().product::<i64>() >= SHARE_MIN_ELEMS)
    });
    match unit {
        Unit::Group(_) | Unit::DotChain(_) => big,
        Unit::TransposedDot(t) => big && t.reduce.is_none(),
        Unit::Instr(_) => match instr {
            Instr::Op {
                kind: K::Constant(..) | K::Iota { .. },
                ..
            } => true,
            Instr::Op { kind, operands, .. } => {
                big && !operands.is_empty() && same_on_replicas(kind)
            }
            _ => false,
        },
    }
}

/// What a unit is, for profiles: the instruction, or the fused group's
/// shape.
pub(crate) fn unit_name(unit: &Unit, instr: &Instr) -> String {
    match unit {
        Unit::Group(g) => format!("fused {} ops", g.members.len()),
        Unit::TransposedDot(t) if t.reduce.is_some() => {
            "transposed dot_general + all-reduce".into()
        }
        Unit::TransposedDot(_) => "transposed dot_general".into(),
        Unit::DotChain(c) => format!(
            "dot_general{} + fused {} ops",
            if c.dot_instrs.len() > 1 {
                " (transposed)"
            } else {
                ""
            },
            c.group.members.len()
        ),
        Unit::Instr(_) => instr_name(instr),
    }
}

/// Whether an op on local blocks gives every device holding the same
/// operand blocks the same result: not a collective, `partition_id`, a
/// `custom_call` or an op with regions.
pub(crate) fn same_on_replicas(kind: &OpKind) -> bool {
    use OpKind as K;
    !matches!(
        kind,
        K::AllGather(_)
            | K::AllReduce(_)
            | K::AllToAll(_)
            | K::CollectivePermute(_)
            | K::ReduceScatter(_)
            | K::PartitionId(_)
            | K::CustomCall(_)
            | K::Case(_)
            | K::While(_)
            | K::ManualComputation(_)
            | K::NamedComputation(_)
    )
}

/// Run `instrs` unit by unit (with their `plan`: at the top level some
/// units are fused groups); `top` marks the program's top level, where
/// test faults are injected.
pub(crate) fn run_block<D: Device>(
    r: &mut BlockRun<'_, D>,
    instrs: &[Instr],
    plan: &BlockPlan,
    top: bool,
) -> Result<(), RuntimeError>
where
    D::Buffer: Clone,
{
    let p = r.program;
    let id = r.dev.id();
    for (u, unit) in plan.units.iter().enumerate() {
        let i = unit.instr();
        let instr = &instrs[i];
        let fail = |e: DeviceError| instruction_error(id, instrs, i, e);
        if let Some(f) = r
            .opts
            .fault
            .filter(|f| top && f.device == id && unit.covers(f.instr))
        {
            if f.panic {
                panic!("injected fault at instruction {}", f.instr);
            }
            // Named by the instruction it was injected at, which may be
            // any member of a fused unit.
            let e = DeviceError::Invalid("injected fault".into());
            return Err(instruction_error(id, instrs, f.instr, e));
        }
        let started = crate::exec_profile::enabled().then(crate::exec_profile::Stamp::now);
        // A result a replica made from these very blocks.
        let share = r.shared.filter(|_| top && shareable(unit, instr, p));
        let keyed = share.and_then(|_| {
            let handles: Option<Vec<(usize, ShareHandle)>> = unit
                .operands(p)
                .iter()
                .map(|&v| r.dev.share_handle(r.env.get(v)?.as_ref()?))
                .collect();
            Some(handles?.into_iter().unzip::<_, _, Vec<_>, Vec<_>>())
        });
        let (taken, claim) = match (share, &keyed) {
            (Some(sh), Some((keys, _))) => {
                let dev = &*r.dev;
                match sh.begin(u, keys, |h| dev.shared_buffer(h)) {
                    Some(Begin::Hit(results)) => (Some(results), None),
                    Some(Begin::Compute(claim)) => (None, Some(claim)),
                    None => (None, None),
                }
            }
            _ => (None, None),
        };
        let from_replica = taken.is_some();
        let ids = unit_results(unit, instr);
        // Replicas sharing results key on operand blocks: none is handed
        // over there.
        let hand_over =
            share.is_none() && exec_step::handed_over(unit, instr, &plan.frees[u]).is_some();
        let results = match (unit, instr) {
            _ if from_replica => taken.unwrap_or_default(),
            (Unit::Group(g), _) => {
                vec![exec_step::fused(p, r.dev, r.pos, g, r.env).map_err(&fail)?]
            }
            (Unit::TransposedDot(t), _) => {
                let reduce = t.reduce.as_ref().map(|red| {
                    let instance = *r.instances;
                    *r.instances += 1;
                    (instance, plan.parts[red.instr].as_slice())
                });
                vec![exec_step::transposed_dot(p, r.dev, r.pos, t, reduce, r.env).map_err(&fail)?]
            }
            (Unit::DotChain(c), _) => {
                vec![exec_step::dot_chain(p, r.dev, r.pos, c, r.env).map_err(&fail)?]
            }
            (Unit::Instr(_), Instr::Loop(l)) => run_loop(r, l, &plan.subs[i], &fail)?,
            (Unit::Instr(_), Instr::Branch(b)) => run_branch(r, b, &plan.subs[i], &fail)?,
            (Unit::Instr(_), _) if hand_over => {
                exec_step::step_into(p, r.dev, instr, r.env).map_err(&fail)?
            }
            (Unit::Instr(_), _) => {
                let instance = *r.instances;
                if matches!(instr, Instr::Collective { .. }) {
                    *r.instances += 1;
                }
                exec_step::step(p, r.dev, r.pos, &plan.parts[i], instance, instr, r.env)
                    .map_err(&fail)?
            }
        };
        if let (Some(sh), false) = (share, from_replica) {
            // A constant is kept: its device lets go of it after its
            // last read, maybe before a replica comes for it.
            let keep = matches!(
                instr,
                Instr::Op {
                    kind: OpKind::Constant(_),
                    ..
                }
            ) && matches!(unit, Unit::Instr(_));
            let made: Option<Vec<ShareHandle>> = results
                .iter()
                .map(|b| match keep {
                    true => r.dev.share_kept(b),
                    false => r.dev.share_handle(b).map(|(_, h)| h),
                })
                .collect();
            match (keyed, claim, made) {
                (Some((_, operands)), Some(c), Some(made)) => c.done(operands, made),
                // The claim, dropped, lets waiting replicas go.
                _ => sh.passed(u),
            }
        }
        if let Some(t0) = started {
            let what = unit_name(unit, instr);
            let ty = ids.first().map(|&v| p.values[v].ty.to_string());
            let from = if from_replica { " (a replica's)" } else { "" };
            crate::exec_profile::add(format!("{what}{from} -> {}", ty.unwrap_or_default()), t0);
        }
        if results.len() != ids.len() {
            return Err(fail(DeviceError::Invalid(format!(
                "{} results for {} values",
                results.len(),
                ids.len()
            ))));
        }
        for (&v, b) in ids.iter().zip(results) {
            if !r.opts.skip_type_checks {
                let got = r.dev.buffer_type(&b);
                let want = &p.values[v].ty;
                if &got != want {
                    return Err(fail(DeviceError::Invalid(format!(
                        "made {got} for {} of local type {want}",
                        p.values[v].name
                    ))));
                }
            }
            r.env[v] = Some(b);
        }
        for &v in &plan.frees[u] {
            if let Some(b) = r.env[v].take() {
                r.dev.release(b);
            }
        }
    }
    for &v in &plan.leftovers {
        if let Some(b) = r.env[v].take() {
            r.dev.release(b);
        }
    }
    Ok(())
}

fn run_loop<D: Device>(
    r: &mut BlockRun<'_, D>,
    l: &LoopInstr,
    plans: &[BlockPlan],
    fail: &dyn Fn(DeviceError) -> RuntimeError,
) -> Result<Vec<D::Buffer>, RuntimeError>
where
    D::Buffer: Clone,
{
    let [cond_plan, body_plan] = plans else {
        return Err(fail(DeviceError::Invalid(
            "a loop without two blocks".into(),
        )));
    };
    let mut carried = l
        .inits
        .iter()
        .map(|&v| live(r, v))
        .collect::<Result<Vec<_>, _>>()
        .map_err(fail)?;
    let mut iterations = 0u64;
    loop {
        count_loop_iteration(&mut iterations, r.opts.max_loop_iterations)
            .map_err(|m| fail(DeviceError::Invalid(m)))?;
        bind(r, &l.cond.args, carried.clone());
        run_block(r, &l.cond.instrs, cond_plan, false)?;
        let pred = yielded(r, &l.cond.results, cond_plan).map_err(fail)?;
        let go = r.dev.read_scalar(&pred[0]).map_err(fail)?;
        for b in pred {
            r.dev.release(b);
        }
        let go = go.scalar_bool().ok_or_else(|| {
            fail(DeviceError::Invalid(
                "the loop condition is not a tensor<i1>".into(),
            ))
        })?;
        if !go {
            return Ok(carried);
        }
        bind(r, &l.body.args, carried);
        run_block(r, &l.body.instrs, body_plan, false)?;
        carried = yielded(r, &l.body.results, body_plan).map_err(fail)?;
    }
}

fn run_branch<D: Device>(
    r: &mut BlockRun<'_, D>,
    b: &BranchInstr,
    plans: &[BlockPlan],
    fail: &dyn Fn(DeviceError) -> RuntimeError,
) -> Result<Vec<D::Buffer>, RuntimeError>
where
    D::Buffer: Clone,
{
    let index = live(r, b.index).map_err(fail)?;
    let index = r.dev.read_scalar(&index).map_err(fail)?;
    let index = index.scalar_i64().ok_or_else(|| {
        fail(DeviceError::Invalid(
            "the branch index is not an integer scalar".into(),
        ))
    })?;
    let n = b.branches.len();
    // As `stablehlo.case`: an index out of range runs the last branch.
    let k = usize::try_from(index)
        .ok()
        .filter(|&k| k < n)
        .unwrap_or(n - 1);
    let (Some(block), Some(plan)) = (b.branches.get(k), plans.get(k)) else {
        return Err(fail(DeviceError::Invalid(format!("no branch {k}"))));
    };
    run_block(r, &block.instrs, plan, false)?;
    yielded(r, &block.results, plan).map_err(fail)
}

/// Device `device`'s error `e` at instruction `i` of `instrs`, or the
/// abort it is when a peer failed first.
pub(crate) fn instruction_error(
    device: i64,
    instrs: &[Instr],
    i: usize,
    e: DeviceError,
) -> RuntimeError {
    match e {
        DeviceError::PeerFailed(failed) => RuntimeError::Aborted { device, failed },
        e => RuntimeError::Instruction {
            device,
            instr: i,
            step: instrs[i].step(),
            what: instr_name(&instrs[i]),
            message: e.to_string(),
        },
    }
}

fn live<D: Device>(r: &BlockRun<'_, D>, v: LocalId) -> Result<D::Buffer, DeviceError>
where
    D::Buffer: Clone,
{
    live_ref(r.env, v).cloned()
}

fn bind<D: Device>(r: &mut BlockRun<'_, D>, args: &[LocalId], values: Vec<D::Buffer>) {
    for (&a, b) in args.iter().zip(values) {
        r.env[a] = Some(b);
    }
}

/// What a block yields: values it defined are taken out of the
/// environment (they belong to the caller now), values from around it
/// are shared.
fn yielded<D: Device>(
    r: &mut BlockRun<'_, D>,
    results: &[LocalId],
    plan: &BlockPlan,
) -> Result<Vec<D::Buffer>, DeviceError>
where
    D::Buffer: Clone,
{
    yielded_from(r.env, results, plan)
}

/// [`yielded`] from one device's environment `env`.
pub(crate) fn yielded_from<B: Clone>(
    env: &mut [Option<B>],
    results: &[LocalId],
    plan: &BlockPlan,
) -> Result<Vec<B>, DeviceError> {
    let mut out = Vec::with_capacity(results.len());
    for (k, &v) in results.iter().enumerate() {
        let owned = plan.owned_results.get(k).copied().unwrap_or(false);
        // A value yielded twice is taken by its last mention.
        let later = results[k + 1..].contains(&v);
        let b = if owned && !later {
            env[v].take()
        } else {
            env[v].clone()
        };
        out.push(b.ok_or_else(|| DeviceError::Invalid(format!("value #{v} is not live")))?);
    }
    Ok(out)
}

/// The values a unit defines, in the order it makes them (a loop's and a
/// branch's results are their instruction's).
pub(crate) fn unit_results(unit: &Unit, instr: &Instr) -> Vec<usize> {
    match unit {
        Unit::Group(g) => vec![g.result],
        Unit::TransposedDot(t) => vec![t.result],
        Unit::DotChain(c) => vec![c.group.result],
        Unit::Instr(_) => instr.results(),
    }
}
