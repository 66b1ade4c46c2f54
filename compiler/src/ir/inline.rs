//! Inlining of `func.call` (what XLA does before Shardy sees the program,
//! and what the partitioner needs: it works on one function):
//! every call is replaced by a copy of the callee's body, then the private
//! functions nobody calls any more are dropped (MLIR's symbol DCE).
//!
//! The callee's argument and result shardings are not copied: a private
//! function's boundary has no sharding of its own once it is inlined.

use std::collections::HashMap;

use crate::diag::{DiagKind, Diagnostic};
use crate::ir::copy::OpCopier;
use crate::ir::{Function, Module, OpId, Visibility};

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
pub fn callees_first(module: &Module) -> Result<Vec<usize>, Diagnostic> {
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
            let ops = f.all_ops();
            while *pos < ops.len() {
                let op = f.op(ops[*pos]);
                *pos += 1;
                if let Some(callee) = op.kind.callee() {
                    let Some(&ci) = index.get(callee) else {
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

/// Inline the calls of `f`, whose callees in `done` have no calls left:
/// those in its body and, recursively, in the regions of its ops.
fn inline_in(f: &mut Function, done: &HashMap<String, Function>) -> Result<(), Diagnostic> {
    let body = std::mem::take(&mut f.body);
    f.body = inline_block(f, body, done)?;
    Ok(())
}

/// The ops of one block with every call replaced by the callee's body.
fn inline_block(
    f: &mut Function,
    ids: Vec<OpId>,
    done: &HashMap<String, Function>,
) -> Result<Vec<OpId>, Diagnostic> {
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        for r in 0..f.op(id).regions.len() {
            let inner = std::mem::take(&mut f.op_mut(id).regions[r].body);
            let inlined = inline_block(f, inner, done)?;
            f.op_mut(id).regions[r].body = inlined;
        }
        let Some(callee) = f.op(id).kind.callee() else {
            out.push(id);
            continue;
        };
        let callee = callee.to_string();
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
        let mut copier = OpCopier::new(g);
        for (&a, &operand) in g.args.iter().zip(&call.operands) {
            copier.map[a.index()] = Some(operand);
        }
        let undefined = |_| {
            Diagnostic::new(
                DiagKind::UndefinedName,
                call.pos,
                format!("@{callee} uses a value before defining it"),
            )
        };
        for &gid in &g.body {
            out.push(copier.copy_op(f, gid).map_err(undefined)?);
        }
        let mut replace = vec![None; f.values.len()];
        for (&r, &g_ret) in call.results.iter().zip(&g.returns) {
            replace[r.index()] = Some(copier.lookup(g_ret).map_err(undefined)?);
        }
        // Later ops (and region returns) refer to the call's results:
        // point them at the inlined values.
        f.replace_uses(&replace);
    }
    Ok(out)
}
