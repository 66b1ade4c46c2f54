//! The reference interpreter: runs a function of a module unsharded, on one
//! device, op by op through the CPU kernels. Every sharded run is checked
//! against it, so it favours plainness over speed (but frees each value
//! after its last use and lets `dot_general` use threads via `par`).
//!
//! Sharding ops (`sdy.sharding_constraint`, `sdy.reshard`,
//! `sdy.sharding_group`) do not change values and are the identity here;
//! `func.call` runs the callee.

use std::ops::Deref;
use std::rc::Rc;

use meshrun_compiler::ir::{Function, Module, OpData, OpKind, TensorType, Value};
use meshrun_kernels::{eval_op, HostTensor, Parallelism};

use crate::error::RuntimeError;

/// Calls nested deeper than this are reported instead of overflowing the
/// stack (StableHLO programs from JAX are never recursive).
pub const MAX_CALL_DEPTH: usize = 64;

/// Run `func` of `module` on `inputs` and return its results. Inputs must
/// match the function's argument types exactly (shape and element type).
pub fn run_function(
    module: &Module,
    func: &str,
    inputs: &[HostTensor],
    par: Parallelism,
) -> Result<Vec<HostTensor>, RuntimeError> {
    let f = module
        .func(func)
        .ok_or_else(|| RuntimeError::UnknownFunction(func.to_string()))?;
    check_inputs(f, inputs)?;
    let interp = Interpreter { module, par };
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
}

/// Where each value of a function is used for the last time (its position
/// in the body), so it can be freed right after; `None` for values that are
/// returned or never used.
fn last_uses(f: &Function) -> Vec<Option<usize>> {
    let mut last = vec![None; f.values.len()];
    for (pos, (_, op)) in f.ops_in_order().enumerate() {
        for v in &op.operands {
            if let Some(slot) = last.get_mut(v.index()) {
                *slot = Some(pos);
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
        let mut env: Vec<Option<Slot<'a>>> = vec![None; f.values.len()];
        for (&arg, slot) in f.args.iter().zip(args) {
            if let Some(e) = env.get_mut(arg.index()) {
                *e = Some(slot);
            }
        }
        let last = last_uses(f);
        for (index, (_, op)) in f.ops_in_order().enumerate() {
            let malformed = |message: String| RuntimeError::Malformed {
                func: f.name.clone(),
                op_index: index,
                pos: op.pos,
                message,
            };
            let operands = op
                .operands
                .iter()
                .map(|&v| lookup(&env, v).ok_or_else(|| malformed(undefined(v, op))))
                .collect::<Result<Vec<_>, _>>()?;
            let results = self.eval(f, index, op, operands, depth)?;
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
            for &v in &op.operands {
                if last.get(v.index()).copied().flatten() == Some(index) {
                    env[v.index()] = None;
                }
            }
        }
        f.returns
            .iter()
            .map(|&v| {
                lookup(&env, v).ok_or_else(|| RuntimeError::Malformed {
                    func: f.name.clone(),
                    op_index: f.body.len(),
                    pos: f.return_pos,
                    message: format!("return uses value #{} before it is defined", v.0),
                })
            })
            .collect()
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
            OpKind::Call { callee } => {
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
            OpKind::ShardingConstraint { .. }
            | OpKind::Reshard { .. }
            | OpKind::ShardingGroup { .. } => {
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
