//! Rebuilding a function with only the ops of its body, values numbered in
//! program order. Inlining, constant splitting and the export passes leave
//! unused ops and values in the arenas; the result of propagation should
//! not carry them.

use crate::diag::{DiagKind, Diagnostic};
use crate::ir::{Function, Value};

/// Whether `f`'s arenas hold exactly its body, in order (then `compact`
/// would only copy it).
pub fn is_compact(f: &Function) -> bool {
    let results: usize = f.ops.iter().map(|o| o.results.len()).sum();
    f.body.len() == f.ops.len()
        && f.body.iter().enumerate().all(|(i, id)| id.index() == i)
        && f.values.len() == f.args.len() + results
        && f.args.iter().enumerate().all(|(i, v)| v.index() == i)
}

/// `f` without dead arena entries, and the new value of every old one.
pub fn compact(f: &Function) -> Result<(Function, Vec<Option<Value>>), Diagnostic> {
    let arg_types = f.args.iter().map(|&a| f.ty(a).clone()).collect();
    let mut g = Function::new(f.name.clone(), arg_types);
    g.visibility = f.visibility;
    g.arg_attrs = f.arg_attrs.clone();
    g.result_types = f.result_types.clone();
    g.result_attrs = f.result_attrs.clone();
    g.attrs = f.attrs.clone();
    g.pos = f.pos;
    g.return_pos = f.return_pos;
    let mut map: Vec<Option<Value>> = vec![None; f.values.len()];
    for (&old, &new) in f.args.iter().zip(&g.args) {
        map[old.index()] = Some(new);
    }
    let lookup = |map: &[Option<Value>], v: Value, pos| {
        map.get(v.index()).copied().flatten().ok_or_else(|| {
            Diagnostic::new(
                DiagKind::UndefinedName,
                pos,
                format!("@{} uses value #{} before it is defined", f.name, v.0),
            )
        })
    };
    for (_, op) in f.ops_in_order() {
        let operands = op
            .operands
            .iter()
            .map(|&v| lookup(&map, v, op.pos))
            .collect::<Result<Vec<_>, _>>()?;
        let types = op.results.iter().map(|&r| f.ty(r).clone()).collect();
        let id = g.push_op(op.kind.clone(), operands, types);
        let new = g.op_mut(id);
        new.shardings = op.shardings.clone();
        new.attrs = op.attrs.clone();
        new.pos = op.pos;
        for (&old, &new) in op.results.iter().zip(&g.op(id).results) {
            map[old.index()] = Some(new);
        }
    }
    g.returns = f
        .returns
        .iter()
        .map(|&v| lookup(&map, v, f.return_pos))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((g, map))
}
