//! Inlining of `func.call` (what XLA does before Shardy sees the program,
//! and what the partitioner needs: it works on one function):
//! every call is replaced by a copy of the callee's body, then the private
//! functions nobody calls any more are dropped (MLIR's symbol DCE).
//!
//! The callee's argument and result shardings are not copied: a private
//! function's boundary has no sharding of its own once it is inlined.

use std::collections::HashMap;

use crate::diag::{DiagKind, Diagnostic};
use crate::ir::{Function, Module, OpKind, Value, Visibility};

/// Inline every call of `module`, callees first; drop private functions.
pub fn inline_calls(module: &mut Module) -> Result<(), Diagnostic> {
    let order = callees_first(module)?;
    let mut done: HashMap<String, Function> = HashMap::new();
    for index in order {
        let mut f = module.funcs[index].clone();
        inline_in(&mut f, &done)?;
        done.insert(f.name.clone(), f.clone());
        module.funcs[index] = f;
    }
    module.funcs.retain(|f| f.visibility != Visibility::Private);
    Ok(())
}

/// Function indices so that every callee comes before its callers; a
/// recursive call is an error (it cannot be inlined).
fn callees_first(module: &Module) -> Result<Vec<usize>, Diagnostic> {
    let index: HashMap<&str, usize> = module
        .funcs
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.as_str(), i))
        .collect();
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Active,
        Done,
    }
    let mut marks = vec![Mark::New; module.funcs.len()];
    let mut order = Vec::new();
    // Iterative DFS: (function, next op position to look at).
    for root in 0..module.funcs.len() {
        if marks[root] != Mark::New {
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        marks[root] = Mark::Active;
        while let Some(&mut (fi, ref mut pos)) = stack.last_mut() {
            let f = &module.funcs[fi];
            let mut next = None;
            while *pos < f.body.len() {
                let op = f.op(f.body[*pos]);
                *pos += 1;
                if let OpKind::Call { callee } = &op.kind {
                    let Some(&ci) = index.get(callee.as_str()) else {
                        return Err(Diagnostic::new(
                            DiagKind::UndefinedName,
                            op.pos,
                            format!("call of unknown function @{callee}"),
                        ));
                    };
                    match marks[ci] {
                        Mark::Done => {}
                        Mark::Active => {
                            return Err(Diagnostic::new(
                                DiagKind::Unsupported,
                                op.pos,
                                format!(
                                    "@{} calls @{callee} recursively; recursive calls cannot be inlined",
                                    f.name
                                ),
                            ))
                        }
                        Mark::New => {
                            next = Some(ci);
                            break;
                        }
                    }
                }
            }
            match next {
                Some(ci) => {
                    marks[ci] = Mark::Active;
                    stack.push((ci, 0));
                }
                None => {
                    marks[fi] = Mark::Done;
                    order.push(fi);
                    stack.pop();
                }
            }
        }
    }
    Ok(order)
}

/// Inline the calls of `f`, whose callees in `done` have no calls left.
fn inline_in(f: &mut Function, done: &HashMap<String, Function>) -> Result<(), Diagnostic> {
    let body = std::mem::take(&mut f.body);
    let mut new_body = Vec::with_capacity(body.len());
    for id in body {
        let OpKind::Call { callee } = &f.op(id).kind else {
            new_body.push(id);
            continue;
        };
        let callee = callee.clone();
        let call = f.op(id).clone();
        let g = done.get(callee.as_str()).ok_or_else(|| {
            Diagnostic::new(
                DiagKind::UndefinedName,
                call.pos,
                format!("call of unknown function @{callee}"),
            )
        })?;
        if g.args.len() != call.operands.len() || g.returns.len() != call.results.len() {
            return Err(Diagnostic::new(
                DiagKind::Type,
                call.pos,
                format!(
                    "call of @{callee} passes {} operands for {} arguments and expects {} results of {}",
                    call.operands.len(),
                    g.args.len(),
                    call.results.len(),
                    g.returns.len()
                ),
            ));
        }
        let mut map: Vec<Option<Value>> = vec![None; g.values.len()];
        for (&a, &operand) in g.args.iter().zip(&call.operands) {
            map[a.index()] = Some(operand);
        }
        let lookup = |map: &[Option<Value>], v: Value| {
            map.get(v.index()).copied().flatten().ok_or_else(|| {
                Diagnostic::new(
                    DiagKind::UndefinedName,
                    call.pos,
                    format!("@{callee} uses a value before defining it"),
                )
            })
        };
        for &gid in &g.body {
            let gop = g.op(gid);
            let operands = gop
                .operands
                .iter()
                .map(|&v| lookup(&map, v))
                .collect::<Result<Vec<_>, _>>()?;
            let types = gop.results.iter().map(|&r| g.ty(r).clone()).collect();
            let nid = f.create_op(gop.kind.clone(), operands, types);
            let new_op = f.op_mut(nid);
            new_op.attrs = gop.attrs.clone();
            new_op.shardings = gop.shardings.clone();
            new_op.pos = gop.pos;
            for (&old, &new) in gop.results.iter().zip(&f.op(nid).results.clone()) {
                map[old.index()] = Some(new);
            }
            new_body.push(nid);
        }
        let mut replace = vec![None; f.values.len()];
        for (&r, &g_ret) in call.results.iter().zip(&g.returns) {
            replace[r.index()] = Some(lookup(&map, g_ret)?);
        }
        // Later ops refer to the call's results: point them at the
        // inlined values (ops already in `new_body` come first).
        f.body = new_body;
        f.replace_uses(&replace);
        new_body = std::mem::take(&mut f.body);
    }
    f.body = new_body;
    Ok(())
}
