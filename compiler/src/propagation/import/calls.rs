//! Calls as Shardy keeps them (its conservative pipeline:
//! `FlattenCallGraphPass` then `ImportFuncCallsPass`): every `func.call`
//! becomes an `sdy.named_computation` named after its callee, holding its
//! own copy of the callee's body (a function called from two places gets
//! two copies, so each can be sharded for its caller). The named
//! computation's block arguments start with the callee's argument
//! shardings and its results with the call's `sdy.sharding`; the callee's
//! result shardings are not read (as in Shardy). Propagation then sees
//! one function with nested regions, tied to their callers by data-flow
//! edges (`propagation::data_flow`), and `export::calls` turns each named
//! computation back into a function and a call.
//!
//! Functions that were called, and private functions nobody calls, are
//! dropped (Shardy's symbol DCE).

use std::collections::{HashMap, HashSet};

use crate::diag::{DiagKind, Diagnostic};
use crate::ir::copy::OpCopier;
use crate::ir::inline::callees_first;
use crate::ir::ops::named_computation::NamedComputation;
use crate::ir::{Function, Module, OpId, OpKind, Region, Value, Visibility};
use crate::propagation::blocks;
use crate::sharding::{DimSharding, MeshRef, TensorSharding};

/// Replace every call of `module` by a named computation.
pub fn import_calls(module: &mut Module) -> Result<(), Diagnostic> {
    let order = callees_first(module)?;
    let mut done: HashMap<String, Function> = HashMap::new();
    let mut called: HashSet<String> = HashSet::new();
    for index in order {
        let mut f = module.funcs[index].clone();
        import_in(&mut f, &done, &mut called)?;
        done.insert(f.name.clone(), f.clone());
        module.funcs[index] = f;
    }
    // Symbol DCE: what was called now lives in its callers, and a private
    // function no one calls is dead.
    module
        .funcs
        .retain(|f| f.visibility != Visibility::Private && !called.contains(&f.name));
    Ok(())
}

/// Replace the calls of `f` (in its body and in regions) whose callees in
/// `done` have none left.
fn import_in(
    f: &mut Function,
    done: &HashMap<String, Function>,
    called: &mut HashSet<String>,
) -> Result<(), Diagnostic> {
    let mut replace: Vec<Option<Value>> = Vec::new();
    for b in blocks::blocks(f) {
        let ids = blocks::ops(f, b).to_vec();
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let Some(callee) = f.op(id).kind.callee() else {
                out.push(id);
                continue;
            };
            let callee = callee.to_string();
            let g = done.get(callee.as_str()).ok_or_else(|| {
                Diagnostic::new(
                    DiagKind::UndefinedName,
                    f.op(id).pos,
                    format!("call of unknown function @{callee}"),
                )
            })?;
            called.insert(callee);
            let nc = named_computation(f, id, g)?;
            replace.resize(f.values.len(), None);
            let call = f.op(id);
            for (&old, &new) in call.results.iter().zip(&f.op(nc).results) {
                replace[old.index()] = Some(new);
            }
            out.push(nc);
        }
        blocks::set_ops(f, b, out);
    }
    if !replace.is_empty() {
        f.replace_uses(&replace);
    }
    Ok(())
}

/// A named computation in `f` standing for call `call` of `g` (created,
/// not placed in a block).
fn named_computation(f: &mut Function, call: OpId, g: &Function) -> Result<OpId, Diagnostic> {
    let data = f.op(call).clone();
    if g.args.len() != data.operands.len() || g.returns.len() != data.results.len() {
        return Err(Diagnostic::new(
            DiagKind::Type,
            data.pos,
            format!(
                "call of @{} passes {} operands for {} arguments and expects {} results of {}",
                g.name,
                data.operands.len(),
                g.args.len(),
                data.results.len(),
                g.returns.len()
            ),
        ));
    }
    let mut kind = NamedComputation::new(g.name.clone());
    let in_shardings: Vec<_> = g.arg_attrs.iter().map(|a| a.sharding.clone()).collect();
    if in_shardings.iter().any(Option::is_some) {
        kind.in_shardings = Some(in_shardings);
    }
    let types = data.results.iter().map(|&r| f.ty(r).clone()).collect();
    let nc = f.create_op(OpKind::NamedComputation(kind), data.operands.clone(), types);
    let mut copier = OpCopier::new(g);
    let mut args = Vec::with_capacity(g.args.len());
    for (i, &a) in g.args.iter().enumerate() {
        let v = f.new_region_arg(g.ty(a).clone(), nc, 0, i as u32);
        copier.map[a.index()] = Some(v);
        args.push(v);
    }
    let undefined = |_| {
        Diagnostic::new(
            DiagKind::UndefinedName,
            data.pos,
            format!("@{} uses a value before defining it", g.name),
        )
    };
    let mut body = Vec::with_capacity(g.body.len());
    for &gid in &g.body {
        body.push(copier.copy_op(f, gid).map_err(undefined)?);
    }
    let returns = g
        .returns
        .iter()
        .map(|&v| copier.lookup(v).map_err(undefined))
        .collect::<Result<Vec<_>, _>>()?;
    f.set_regions(
        nc,
        vec![Region {
            args,
            body,
            returns,
            return_pos: g.return_pos,
        }],
    );
    // Shardy's `PropagateShardingFromFuncToCallPass`: a call without
    // result shardings takes its callee's (the others fully open).
    let from_callee = g
        .result_attrs
        .iter()
        .any(|a| a.sharding.is_some())
        .then(|| {
            let mesh = g
                .result_attrs
                .iter()
                .find_map(|a| a.sharding.as_ref())
                .map(|s| s.mesh.clone());
            g.returns
                .iter()
                .zip(&g.result_attrs)
                .map(|(&r, a)| {
                    a.sharding.clone().unwrap_or_else(|| TensorSharding {
                        mesh: mesh.clone().unwrap_or(MeshRef::Symbol(String::new())),
                        dims: vec![DimSharding::open(vec![]); g.ty(r).rank()],
                        replicated: Vec::new(),
                        unreduced: Vec::new(),
                        unreduced_op: Default::default(),
                    })
                })
                .collect()
        });
    let op = f.op_mut(nc);
    op.shardings = data.shardings.or(from_callee);
    op.attrs = data.attrs;
    op.pos = data.pos;
    Ok(nc)
}
