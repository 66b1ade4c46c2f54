//! The reference interpreter: runs a function of a module unsharded, on one
//! device, op by op through the CPU kernels. Every sharded run is checked
//! against it, so it favours plainness over speed (but frees each value
//! after its last use and lets `dot_general` use threads via `par`).
//!
//! Sharding ops (`sdy.sharding_constraint`, `sdy.reshard`,
//! `sdy.sharding_group`) do not change values and are the identity here;
//! `func.call` runs the callee; `while` and `case` run their regions;
//! `sdy.manual_computation` (`jax.shard_map`) runs its body once per device
//! of its mesh, collectives included (`reference_manual`).

use std::ops::Deref;
use std::rc::Rc;

use meshrun_compiler::ir::ops::call::Call;
use meshrun_compiler::ir::{Function, Module, OpData, OpId, OpKind, Region, TensorType, Value};
use meshrun_kernels::{eval_op, HostTensor, Parallelism};

use crate::capacity::{self, host_memory_bytes};
use crate::error::RuntimeError;
use crate::reference_manual;
use crate::reference_scope::region_uses;
pub use crate::reference_scope::MAX_CALL_DEPTH;

/// Run `func` of `module` on `inputs` and return its results. Inputs must
/// match the function's argument types exactly (shape and element type).
pub fn run_function(
    module: &Module,
    func: &str,
    inputs: &[HostTensor],
    par: Parallelism,
) -> Result<Vec<HostTensor>, RuntimeError> {
    run_function_limited(module, func, inputs, par, None)
}

/// [`run_function`], stopping with an error a `while` loop that has run
/// `max_loop_iterations` iterations (see `ExecOptions::max_loop_iterations`).
pub fn run_function_limited(
    module: &Module,
    func: &str,
    inputs: &[HostTensor],
    par: Parallelism,
    max_loop_iterations: Option<u64>,
) -> Result<Vec<HostTensor>, RuntimeError> {
    let f = module
        .func(func)
        .ok_or_else(|| RuntimeError::UnknownFunction(func.to_string()))?;
    check_inputs(f, inputs)?;
    // Every value is held whole: refuse what this machine cannot hold
    // before allocating any of it.
    capacity::module_fits(module, "reference", usize::MAX, host_memory_bytes(), true).map_err(
        |d| RuntimeError::TooLarge {
            pos: d.pos,
            message: d.message,
        },
    )?;
    let interp = Interpreter {
        module,
        par,
        max_loop_iterations,
    };
    let args = inputs.iter().map(Slot::Input).collect();
    let results = interp.run(f, args, 0)?;
    Ok(results.into_iter().map(Slot::into_owned).collect())
}

/// Check count, shapes and element types of `inputs` against `f`'s args.
pub fn check_inputs(f: &Function, inputs: &[HostTensor]) -> Result<(), RuntimeError> {
    if inputs.len() != f.args.len() {
        return Err(RuntimeError::InputCount {
            func: f.name.clone(),
            expected: f.args.len(),
            got: inputs.len(),
        });
    }
    for (index, (&arg, input)) in f.args.iter().zip(inputs).enumerate() {
        let expected = f.ty(arg);
        if !matches_type(input, expected) {
            return Err(RuntimeError::InputMismatch {
                index,
                expected: expected.clone(),
                got_shape: input.shape().to_vec(),
                got_elem: input.elem_type(),
            });
        }
    }
    Ok(())
}

fn matches_type(t: &HostTensor, ty: &TensorType) -> bool {
    t.elem_type() == ty.elem
        && t.shape().len() == ty.shape.len()
        && t.shape()
            .iter()
            .zip(&ty.shape)
            .all(|(&a, &b)| a as i64 == b)
}

/// A value during interpretation: a caller's input (borrowed) or a computed
/// tensor (shared, so identity ops and call arguments do not copy).
#[derive(Clone)]
enum Slot<'a> {
    Input(&'a HostTensor),
    Computed(Rc<HostTensor>),
}

impl Deref for Slot<'_> {
    type Target = HostTensor;
    fn deref(&self) -> &HostTensor {
        match self {
            Slot::Input(t) => t,
            Slot::Computed(t) => t,
        }
    }
}

impl Slot<'_> {
    fn into_owned(self) -> HostTensor {
        match self {
            Slot::Input(t) => t.clone(),
            Slot::Computed(rc) => Rc::try_unwrap(rc).unwrap_or_else(|rc| (*rc).clone()),
        }
    }
}

struct Interpreter<'m> {
    module: &'m Module,
    par: Parallelism,
    max_loop_iterations: Option<u64>,
}

/// Where each value of a function is used for the last time (its position
/// in the body), so it can be freed right after; `None` for values that are
/// returned or never used. A use inside an op's regions counts as a use by
/// that op.
fn last_uses(f: &Function) -> Vec<Option<usize>> {
    let mut last = vec![None; f.values.len()];
    let mut mark = |v: Value, pos: usize| {
        if let Some(slot) = last.get_mut(v.index()) {
            *slot = Some(pos);
        }
    };
    for (pos, (_, op)) in f.ops_in_order().enumerate() {
        for &v in &op.operands {
            mark(v, pos);
        }
        for r in &op.regions {
            for v in region_uses(f, r) {
                mark(v, pos);
            }
        }
    }
    for v in &f.returns {
        if let Some(slot) = last.get_mut(v.index()) {
            *slot = None;
        }
    }
    last
}

/// The values of one function run so far.
type Env<'a> = Vec<Option<Slot<'a>>>;

impl<'m> Interpreter<'m> {
    fn run<'a>(
        &self,
        f: &Function,
        args: Vec<Slot<'a>>,
        depth: usize,
    ) -> Result<Vec<Slot<'a>>, RuntimeError> {
        if depth > MAX_CALL_DEPTH {
            return Err(RuntimeError::CallDepth {
                func: f.name.clone(),
                limit: MAX_CALL_DEPTH,
            });
        }
        let mut env: Env<'a> = vec![None; f.values.len()];
        for (&arg, slot) in f.args.iter().zip(args) {
            if let Some(e) = env.get_mut(arg.index()) {
                *e = Some(slot);
            }
        }
        let last = last_uses(f);
        self.run_block(f, &mut env, &f.body, Some(&last), depth)?;
        self.values(f, &env, &f.returns, f.body.len(), f.return_pos, "return")
    }

    /// Run the ops `ids` (the body, or a region's ops) in `env`. With
    /// `last`, values are freed after their last use (the body only:
    /// region values live until the region runs again).
    fn run_block<'a>(
        &self,
        f: &Function,
        env: &mut Env<'a>,
        ids: &[OpId],
        last: Option<&[Option<usize>]>,
        depth: usize,
    ) -> Result<(), RuntimeError> {
        for (index, &id) in ids.iter().enumerate() {
            let op = f.op(id);
            let malformed = |message: String| RuntimeError::Malformed {
                func: f.name.clone(),
                op_index: index,
                pos: op.pos,
                message,
            };
            let operands = op
                .operands
                .iter()
                .map(|&v| lookup(env, v).ok_or_else(|| malformed(undefined(v, op))))
                .collect::<Result<Vec<_>, _>>()?;
            let results = if op.regions.is_empty() {
                self.eval(f, index, op, operands, depth)?
            } else {
                self.structured(f, env, index, op, operands, depth)?
            };
            if results.len() != op.results.len() {
                return Err(malformed(format!(
                    "{} produced {} results but declares {}",
                    op.kind.name(),
                    results.len(),
                    op.results.len()
                )));
            }
            for (&v, r) in op.results.iter().zip(results) {
                if let Some(e) = env.get_mut(v.index()) {
                    *e = Some(r);
                }
            }
            if let Some(last) = last {
                for &v in &op.operands {
                    if last.get(v.index()).copied().flatten() == Some(index) {
                        env[v.index()] = None;
                    }
                }
                for r in &op.regions {
                    for v in region_uses(f, r) {
                        if last.get(v.index()).copied().flatten() == Some(index) {
                            env[v.index()] = None;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The values `vs` from `env` (a block's returns).
    fn values<'a>(
        &self,
        f: &Function,
        env: &Env<'a>,
        vs: &[Value],
        op_index: usize,
        pos: meshrun_compiler::SrcPos,
        what: &str,
    ) -> Result<Vec<Slot<'a>>, RuntimeError> {
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

    /// Run region `r` of `op` with its block arguments bound to `args`;
    /// what it returns.
    fn run_region<'a>(
        &self,
        f: &Function,
        env: &mut Env<'a>,
        r: &Region,
        args: Vec<Slot<'a>>,
        depth: usize,
    ) -> Result<Vec<Slot<'a>>, RuntimeError> {
        for (&a, slot) in r.args.iter().zip(args) {
            if let Some(e) = env.get_mut(a.index()) {
                *e = Some(slot);
            }
        }
        self.run_block(f, env, &r.body, None, depth)?;
        self.values(
            f,
            env,
            &r.returns,
            r.body.len(),
            r.return_pos,
            "region return",
        )
    }

    /// `while` and `case`: ops that run their regions.
    fn structured<'a>(
        &self,
        f: &Function,
        env: &mut Env<'a>,
        index: usize,
        op: &OpData,
        operands: Vec<Slot<'a>>,
        depth: usize,
    ) -> Result<Vec<Slot<'a>>, RuntimeError> {
        let malformed = |message: String| RuntimeError::Malformed {
            func: f.name.clone(),
            op_index: index,
            pos: op.pos,
            message,
        };
        match (&op.kind, op.regions.as_slice()) {
            (OpKind::While(_), [cond, body]) => {
                let mut carried = operands;
                let mut iterations = 0u64;
                loop {
                    crate::exec_options::count_loop_iteration(
                        &mut iterations,
                        self.max_loop_iterations,
                    )
                    .map_err(malformed)?;
                    let p = self.run_region(f, env, cond, carried.clone(), depth)?;
                    let go = match p.first().map(|t| t.scalar_bool()) {
                        Some(Some(b)) => b,
                        _ => {
                            return Err(malformed(
                                "the cond region must return an i1 scalar".into(),
                            ))
                        }
                    };
                    if !go {
                        return Ok(carried);
                    }
                    carried = self.run_region(f, env, body, carried, depth)?;
                }
            }
            (OpKind::Case(_), branches) => {
                let index = operands
                    .first()
                    .and_then(|t| t.scalar_i64())
                    .ok_or_else(|| {
                        malformed("the branch index must be an integer scalar".into())
                    })?;
                // An index out of range runs the last branch (StableHLO).
                let n = branches.len() as i64;
                let k = if (0..n).contains(&index) {
                    index
                } else {
                    n - 1
                };
                self.run_region(f, env, &branches[k as usize], Vec::new(), depth)
            }
            (OpKind::ManualComputation(_), [_]) => {
                let refs: Vec<&HostTensor> = operands.iter().map(|s| &**s).collect();
                let out = reference_manual::run_manual(
                    self.module,
                    self.par,
                    self.max_loop_iterations,
                    f,
                    index,
                    op,
                    &refs,
                    depth,
                )?;
                Ok(out
                    .into_iter()
                    .map(|t| Slot::Computed(Rc::new(t)))
                    .collect())
            }
            _ => Err(malformed(format!(
                "{} with {} region(s) cannot be interpreted",
                op.kind.name(),
                op.regions.len()
            ))),
        }
    }

    /// Evaluate one op on its operands.
    fn eval<'a>(
        &self,
        f: &Function,
        index: usize,
        op: &OpData,
        operands: Vec<Slot<'a>>,
        depth: usize,
    ) -> Result<Vec<Slot<'a>>, RuntimeError> {
        let malformed = |message: String| RuntimeError::Malformed {
            func: f.name.clone(),
            op_index: index,
            pos: op.pos,
            message,
        };
        match &op.kind {
            OpKind::Call(Call { callee }) => {
                let g = self
                    .module
                    .func(callee)
                    .ok_or_else(|| malformed(format!("call of @{callee}, which is not defined")))?;
                for (i, (t, &arg)) in operands.iter().zip(&g.args).enumerate() {
                    if !matches_type(t, g.ty(arg)) {
                        return Err(malformed(format!(
                            "argument {i} of @{callee} is {} but the callee takes {}",
                            t.tensor_type(),
                            g.ty(arg)
                        )));
                    }
                }
                if operands.len() != g.args.len() {
                    return Err(malformed(format!(
                        "@{callee} takes {} arguments, the call passes {}",
                        g.args.len(),
                        operands.len()
                    )));
                }
                self.run(g, operands, depth + 1)
            }
            OpKind::ShardingConstraint(_) | OpKind::Reshard(_) | OpKind::ShardingGroup(_) => {
                if op.results.len() > operands.len() {
                    return Err(malformed(format!(
                        "{} has {} results for {} operands",
                        op.kind.name(),
                        op.results.len(),
                        operands.len()
                    )));
                }
                Ok(operands.into_iter().take(op.results.len()).collect())
            }
            kind => {
                let refs: Vec<&HostTensor> = operands.iter().map(|s| &**s).collect();
                let types: Vec<TensorType> = op.results.iter().map(|&v| f.ty(v).clone()).collect();
                let out = eval_op(kind, &refs, &types, self.par).map_err(|source| {
                    RuntimeError::Kernel {
                        func: f.name.clone(),
                        op_index: index,
                        pos: op.pos,
                        source,
                    }
                })?;
                Ok(out
                    .into_iter()
                    .map(|t| Slot::Computed(Rc::new(t)))
                    .collect())
            }
        }
    }
}

fn lookup<'a>(env: &[Option<Slot<'a>>], v: Value) -> Option<Slot<'a>> {
    env.get(v.index()).and_then(|s| s.clone())
}

fn undefined(v: Value, op: &OpData) -> String {
    format!(
        "{} uses value #{} before it is defined",
        op.kind.name(),
        v.0
    )
}
