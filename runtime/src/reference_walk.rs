//! The reference interpreter's one walk over a function's ops: operands
//! looked up, results bound and freed after their last use, `func.call`,
//! `while`, `case`, the sharding ops (the identity) and local ops (the CPU
//! kernels, [`eval_op`]).
//!
//! The walk runs the ops on the devices of a [`Mode`] in lockstep, each
//! value held as one tensor per device ([`Lanes`]): the unsharded program
//! is the mode of one device (`reference`), a `sdy.manual_computation`
//! body the mode of every device of its mesh (`reference_manual`). The
//! mode runs the ops whose meaning depends on the devices: collectives,
//! `partition_id` and manual computations. So the unsharded program and
//! a shard_map body share every other rule, and cannot drift apart.
//!
//! Control flow need not be uniform across devices (`active`: the devices
//! running the current block): a `case` runs each branch for the devices
//! whose index picks it, a `while` runs until every device's condition is
//! false (a device whose condition is false keeps its values).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use meshrun_compiler::ir::ops::call::Call;
use meshrun_compiler::ir::{Function, Module, OpData, OpId, OpKind, Region, TensorType, Value};
use meshrun_compiler::SrcPos;
use meshrun_kernels::{eval_op, HostTensor, KernelError, Parallelism};

use crate::error::RuntimeError;
use crate::exec_options::count_loop_iteration;
use crate::reference_scope::{block_last_uses, MAX_CALL_DEPTH};
use crate::reference_value::{matches_type, Lanes, Slot};

/// The values of one function run so far, on every device.
pub(crate) type Env<'a> = Vec<Option<Lanes<'a>>>;

/// Which devices run the ops, and what the ops that depend on them do.
pub(crate) trait Mode {
    /// How many devices run in lockstep: every value has this many lanes.
    fn lanes(&self) -> usize;

    /// Run `at`'s op on `operands` if what it does depends on the devices;
    /// `None` leaves it to the walk.
    fn device_op<'a>(
        &self,
        walk: &Walk<'_>,
        at: &Site<'_>,
        env: &mut Env<'a>,
        operands: &[Lanes<'a>],
        active: &[bool],
        depth: usize,
    ) -> Option<Result<Vec<Lanes<'a>>, RuntimeError>>;
}

/// Op `index` (its place in its block) of `f`: what errors name.
pub(crate) struct Site<'f> {
    pub f: &'f Function,
    pub index: usize,
    pub op: &'f OpData,
}

impl Site<'_> {
    pub(crate) fn malformed(&self, message: String) -> RuntimeError {
        RuntimeError::Malformed {
            func: self.f.name.clone(),
            op_index: self.index,
            pos: self.op.pos,
            message,
        }
    }

    fn kernel(&self, source: KernelError) -> RuntimeError {
        RuntimeError::Kernel {
            func: self.f.name.clone(),
            op_index: self.index,
            pos: self.op.pos,
            source,
        }
    }

    /// The op gave `got` results where it declares another count.
    fn produced(&self, got: usize) -> RuntimeError {
        self.malformed(format!(
            "{} produced {} results but declares {}",
            self.op.kind.name(),
            got,
            self.op.results.len()
        ))
    }
}

/// A device that should hold a value does not (a malformed program).
pub(crate) fn no_value(p: usize) -> String {
    format!("device {p} has no value for an operand")
}

/// When each value of a block dies ([`block_last_uses`]), per block of
/// the module, computed the first time the block runs: a loop body runs
/// once per iteration, its plan once per run. Keyed by the block's op
/// list (its address and length), which the borrowed module keeps fixed.
pub(crate) type LastUses = RefCell<HashMap<(usize, usize), Rc<Vec<Vec<Value>>>>>;

/// A module run in one mode.
#[derive(Clone, Copy)]
pub(crate) struct Walk<'w> {
    pub module: &'w Module,
    pub par: Parallelism,
    pub max_loop_iterations: Option<u64>,
    pub mode: &'w dyn Mode,
    pub last_uses: &'w LastUses,
}

impl<'w> Walk<'w> {
    /// The same module and options on the devices of `mode`.
    pub(crate) fn with<'v>(&self, mode: &'v dyn Mode) -> Walk<'v>
    where
        'w: 'v,
    {
        Walk { mode, ..*self }
    }

    /// Every device of the mode running: how a program or a manual
    /// computation's body starts.
    pub(crate) fn all_devices(&self) -> Vec<bool> {
        vec![true; self.mode.lanes()]
    }

    /// Run function `g` on the `active` devices; its results.
    pub(crate) fn run_function<'a>(
        &self,
        g: &Function,
        args: Vec<Lanes<'a>>,
        active: &[bool],
        depth: usize,
    ) -> Result<Vec<Lanes<'a>>, RuntimeError> {
        if depth > MAX_CALL_DEPTH {
            return Err(RuntimeError::CallDepth {
                func: g.name.clone(),
                limit: MAX_CALL_DEPTH,
            });
        }
        let mut env: Env<'a> = vec![None; g.values.len()];
        bind(&mut env, &g.args, args);
        self.run_block(g, &mut env, &g.body, &g.returns, active, depth)?;
        values(g, &env, &g.returns, g.body.len(), g.return_pos, "return")
    }

    /// Run region `r` of a function `f` with its arguments bound to
    /// `args`; what it returns.
    pub(crate) fn run_region<'a>(
        &self,
        f: &Function,
        env: &mut Env<'a>,
        r: &Region,
        args: Vec<Lanes<'a>>,
        active: &[bool],
        depth: usize,
    ) -> Result<Vec<Lanes<'a>>, RuntimeError> {
        bind(env, &r.args, args);
        self.run_block(f, env, &r.body, &r.returns, active, depth)?;
        let (end, pos) = (r.body.len(), r.return_pos);
        values(f, env, &r.returns, end, pos, "region return")
    }

    /// Run the ops `ids` on the `active` devices, freeing each value
    /// defined in the block after its last use in it (`keep`: the block's
    /// returns).
    fn run_block<'a>(
        &self,
        f: &Function,
        env: &mut Env<'a>,
        ids: &[OpId],
        keep: &[Value],
        active: &[bool],
        depth: usize,
    ) -> Result<(), RuntimeError> {
        let key = (ids.as_ptr() as usize, ids.len());
        let cached = self.last_uses.borrow().get(&key).cloned();
        let last = match cached {
            Some(last) => last,
            None => {
                let last = Rc::new(block_last_uses(f, ids, keep));
                self.last_uses.borrow_mut().insert(key, Rc::clone(&last));
                last
            }
        };
        for (index, (&id, dead)) in ids.iter().zip(last.iter()).enumerate() {
            let at = Site {
                f,
                index,
                op: f.op(id),
            };
            let operands = at
                .op
                .operands
                .iter()
                .map(|&v| {
                    lookup(env, v).ok_or_else(|| {
                        at.malformed(format!(
                            "{} uses value #{} before it is defined",
                            at.op.kind.name(),
                            v.0
                        ))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            let results = self.op(&at, env, operands, active, depth)?;
            if results.len() != at.op.results.len() {
                return Err(at.produced(results.len()));
            }
            bind(env, &at.op.results, results);
            for v in dead {
                if let Some(e) = env.get_mut(v.index()) {
                    *e = None;
                }
            }
        }
        Ok(())
    }

    /// One op on the `active` devices.
    fn op<'a>(
        &self,
        at: &Site<'_>,
        env: &mut Env<'a>,
        operands: Vec<Lanes<'a>>,
        active: &[bool],
        depth: usize,
    ) -> Result<Vec<Lanes<'a>>, RuntimeError> {
        if let Some(out) = self.mode.device_op(self, at, env, &operands, active, depth) {
            return out;
        }
        let op = at.op;
        match (&op.kind, op.regions.as_slice()) {
            (OpKind::Call(Call { callee }), []) => self.call(at, callee, operands, active, depth),
            (OpKind::ShardingConstraint(_) | OpKind::Reshard(_) | OpKind::ShardingGroup(_), []) => {
                if op.results.len() > operands.len() {
                    return Err(at.malformed(format!(
                        "{} has {} results for {} operands",
                        op.kind.name(),
                        op.results.len(),
                        operands.len()
                    )));
                }
                Ok(operands.into_iter().take(op.results.len()).collect())
            }
            (kind, []) => self.local(at, kind, &operands, active),
            (OpKind::While(_), [cond, body]) => {
                self.run_while(at, env, operands, [cond, body], active, depth)
            }
            (OpKind::Case(_), branches) => self.case(at, env, &operands, branches, active, depth),
            (kind, regions) => Err(at.malformed(format!(
                "{} with {} region(s) cannot be interpreted",
                kind.name(),
                regions.len()
            ))),
        }
    }

    /// A local op: its kernel on each active device's operands.
    fn local<'a>(
        &self,
        at: &Site<'_>,
        kind: &OpKind,
        operands: &[Lanes<'a>],
        active: &[bool],
    ) -> Result<Vec<Lanes<'a>>, RuntimeError> {
        let types: Vec<TensorType> = at.op.results.iter().map(|&v| at.f.ty(v).clone()).collect();
        let mut out: Vec<Lanes<'a>> = vec![vec![None; active.len()]; types.len()];
        for p in (0..active.len()).filter(|&p| active[p]) {
            let refs = operands
                .iter()
                .map(|l| l[p].as_deref().ok_or_else(|| at.malformed(no_value(p))))
                .collect::<Result<Vec<_>, _>>()?;
            let rs = eval_op(kind, &refs, &types, self.par).map_err(|e| at.kernel(e))?;
            if rs.len() != types.len() {
                return Err(at.produced(rs.len()));
            }
            for (o, r) in out.iter_mut().zip(rs) {
                o[p] = Some(Slot::new(r));
            }
        }
        Ok(out)
    }

    /// `func.call`: the callee runs on the same devices.
    fn call<'a>(
        &self,
        at: &Site<'_>,
        callee: &str,
        operands: Vec<Lanes<'a>>,
        active: &[bool],
        depth: usize,
    ) -> Result<Vec<Lanes<'a>>, RuntimeError> {
        let g = self
            .module
            .func(callee)
            .ok_or_else(|| at.malformed(format!("call of @{callee}, which is not defined")))?;
        for (i, (lanes, &arg)) in operands.iter().zip(&g.args).enumerate() {
            let ty = g.ty(arg);
            let held = lanes.iter().zip(active).filter(|(_, &on)| on);
            if let Some(t) = held
                .filter_map(|(t, _)| t.as_deref())
                .find(|t| !matches_type(t, ty))
            {
                return Err(at.malformed(format!(
                    "argument {i} of @{callee} is {} but the callee takes {ty}",
                    t.tensor_type()
                )));
            }
        }
        if operands.len() != g.args.len() {
            return Err(at.malformed(format!(
                "@{callee} takes {} arguments, the call passes {}",
                g.args.len(),
                operands.len()
            )));
        }
        self.run_function(g, operands, active, depth + 1)
    }

    /// `while`: each device loops until its own condition is false.
    fn run_while<'a>(
        &self,
        at: &Site<'_>,
        env: &mut Env<'a>,
        mut carried: Vec<Lanes<'a>>,
        [cond, body]: [&Region; 2],
        active: &[bool],
        depth: usize,
    ) -> Result<Vec<Lanes<'a>>, RuntimeError> {
        let mut running = active.to_vec();
        let mut iterations = 0u64;
        loop {
            count_loop_iteration(&mut iterations, self.max_loop_iterations)
                .map_err(|m| at.malformed(m))?;
            let p = self.run_region(at.f, env, cond, carried.clone(), &running, depth)?;
            for (d, on) in running.iter_mut().enumerate().filter(|(_, on)| **on) {
                *on = p
                    .first()
                    .and_then(|l| l.get(d)?.as_deref())
                    .and_then(HostTensor::scalar_bool)
                    .ok_or_else(|| {
                        at.malformed("the cond region must return an i1 scalar".into())
                    })?;
            }
            if !running.contains(&true) {
                return Ok(carried);
            }
            let next = self.run_region(at.f, env, body, carried.clone(), &running, depth)?;
            if next.len() != carried.len() {
                return Err(at.malformed(format!(
                    "the body region returns {} values but the loop carries {}",
                    next.len(),
                    carried.len()
                )));
            }
            for (c, nx) in carried.iter_mut().zip(next) {
                for ((held, v), &on) in c.iter_mut().zip(nx).zip(&running) {
                    if on {
                        *held = v;
                    }
                }
            }
        }
    }

    /// `case`: each branch runs for the devices whose index picks it; an
    /// index out of range runs the last branch (StableHLO).
    fn case<'a>(
        &self,
        at: &Site<'_>,
        env: &mut Env<'a>,
        operands: &[Lanes<'a>],
        branches: &[Region],
        active: &[bool],
        depth: usize,
    ) -> Result<Vec<Lanes<'a>>, RuntimeError> {
        let [which] = operands else {
            return Err(at.malformed("case takes one operand, the branch index".into()));
        };
        let n = active.len();
        let count = branches.len() as i64;
        let mut taken = vec![None; n];
        for p in (0..n).filter(|&p| active[p]) {
            let k = which[p]
                .as_deref()
                .and_then(HostTensor::scalar_i64)
                .ok_or_else(|| at.malformed("the branch index must be an integer scalar".into()))?;
            taken[p] = Some(if (0..count).contains(&k) {
                k
            } else {
                count - 1
            });
        }
        let mut out: Vec<Lanes<'a>> = vec![vec![None; n]; at.op.results.len()];
        for (k, branch) in branches.iter().enumerate() {
            let on: Vec<bool> = taken.iter().map(|t| *t == Some(k as i64)).collect();
            if !on.contains(&true) {
                continue;
            }
            let rs = self.run_region(at.f, env, branch, Vec::new(), &on, depth)?;
            if rs.len() != out.len() {
                return Err(at.produced(rs.len()));
            }
            for (o, r) in out.iter_mut().zip(rs) {
                for ((held, v), &here) in o.iter_mut().zip(r).zip(&on) {
                    if here {
                        *held = v;
                    }
                }
            }
        }
        Ok(out)
    }
}

fn bind<'a>(env: &mut Env<'a>, vs: &[Value], lanes: Vec<Lanes<'a>>) {
    for (&v, l) in vs.iter().zip(lanes) {
        if let Some(e) = env.get_mut(v.index()) {
            *e = Some(l);
        }
    }
}

fn lookup<'a>(env: &Env<'a>, v: Value) -> Option<Lanes<'a>> {
    env.get(v.index()).and_then(|s| s.clone())
}

/// The values `vs` from `env` (a block's returns, `what` in errors).
fn values<'a>(
    f: &Function,
    env: &Env<'a>,
    vs: &[Value],
    op_index: usize,
    pos: SrcPos,
    what: &str,
) -> Result<Vec<Lanes<'a>>, RuntimeError> {
    vs.iter()
        .map(|&v| {
            lookup(env, v).ok_or_else(|| RuntimeError::Malformed {
                func: f.name.clone(),
                op_index,
                pos,
                message: format!("{what} uses value #{} before it is defined", v.0),
            })
        })
        .collect()
}
