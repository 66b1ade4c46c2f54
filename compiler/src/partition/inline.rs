//! Inlining calls: the partitioner works on one function, so every
//! `func.call` of the entry function is replaced by a copy of the callee's
//! body (recursively). Shardy's propagation leaves no calls behind, but an
//! unpropagated module (`input.mlir`) may still have them.
//!
//! The copied ops keep their shardings and positions; the callee's argument
//! and result attributes are dropped (propagation has already moved them
//! onto the values if they mattered).

use std::collections::HashMap;

use crate::diag::{DiagKind, Diagnostic};
use crate::ir::{Function, Module, OpKind, Value};

/// How deep calls may nest before we assume a cycle the verifier missed.
const MAX_CALL_DEPTH: usize = 64;

/// The entry function of `module` (`Module::entry`) with all calls inlined.
pub fn inlined_entry(module: &Module) -> Result<Function, Diagnostic> {
    let entry = module.entry().ok_or_else(|| {
        Diagnostic::new(
            DiagKind::UndefinedName,
            crate::diag::SrcPos::UNKNOWN,
            "the module has no function to partition",
        )
    })?;
    if !has_calls(entry) {
        return Ok(entry.clone());
    }
    let mut out = Function::new(
        entry.name.clone(),
        entry.args.iter().map(|&a| entry.ty(a).clone()).collect(),
    );
    out.visibility = entry.visibility;
    out.arg_attrs = entry.arg_attrs.clone();
    out.attrs = entry.attrs.clone();
    out.pos = entry.pos;
    out.return_pos = entry.return_pos;
    let args: Vec<Value> = out.args.clone();
    let returns = copy_body(module, entry, &args, &mut out, 0)?;
    out.set_returns(returns);
    out.result_types = entry.result_types.clone();
    out.result_attrs = entry.result_attrs.clone();
    Ok(out)
}

fn has_calls(f: &Function) -> bool {
    f.ops_in_order()
        .any(|(_, op)| matches!(op.kind, OpKind::Call { .. }))
}

/// Append `src`'s body to `dst` with `src`'s arguments bound to `args`;
/// returns the values `src` returns.
fn copy_body(
    module: &Module,
    src: &Function,
    args: &[Value],
    dst: &mut Function,
    depth: usize,
) -> Result<Vec<Value>, Diagnostic> {
    let mut map: HashMap<Value, Value> =
        src.args.iter().copied().zip(args.iter().copied()).collect();
    let lookup = |map: &HashMap<Value, Value>, v: Value, pos| {
        map.get(&v).copied().ok_or_else(|| {
            Diagnostic::new(
                DiagKind::UndefinedName,
                pos,
                format!("@{} uses value %{} before it is defined", src.name, v.0),
            )
        })
    };
    for (_, op) in src.ops_in_order() {
        let operands = op
            .operands
            .iter()
            .map(|&v| lookup(&map, v, op.pos))
            .collect::<Result<Vec<_>, _>>()?;
        if let OpKind::Call { callee } = &op.kind {
            if depth >= MAX_CALL_DEPTH {
                return Err(Diagnostic::new(
                    DiagKind::Unsupported,
                    op.pos,
                    format!("calls nest more than {MAX_CALL_DEPTH} deep at the call of @{callee}"),
                ));
            }
            let f = module.func(callee).ok_or_else(|| {
                Diagnostic::new(
                    DiagKind::UndefinedName,
                    op.pos,
                    format!("call of unknown function @{callee}"),
                )
            })?;
            if f.args.len() != operands.len() || f.returns.len() != op.results.len() {
                return Err(Diagnostic::new(
                    DiagKind::Type,
                    op.pos,
                    format!(
                        "call of @{callee} passes {} operands and expects {} results; the function has {} arguments and {} results",
                        operands.len(),
                        op.results.len(),
                        f.args.len(),
                        f.returns.len()
                    ),
                ));
            }
            let returned = copy_body(module, f, &operands, dst, depth + 1)?;
            for (&r, v) in op.results.iter().zip(returned) {
                map.insert(r, v);
            }
            continue;
        }
        let types = op.results.iter().map(|&r| src.ty(r).clone()).collect();
        let id = dst.push_op(op.kind.clone(), operands, types);
        let new = dst.op_mut(id);
        new.shardings = op.shardings.clone();
        new.attrs = op.attrs.clone();
        new.pos = op.pos;
        let results = new.results.clone();
        for (&old, new) in op.results.iter().zip(results) {
            map.insert(old, new);
        }
    }
    src.returns
        .iter()
        .map(|&v| lookup(&map, v, src.return_pos))
        .collect()
}
