//! Rebuilding a function with only the ops of its body, values numbered in
//! program order. Inlining, constant splitting and the export passes leave
//! unused ops and values in the arenas; the result of propagation should
//! not carry them.

use crate::diag::{DiagKind, Diagnostic};
use crate::ir::copy::OpCopier;
use crate::ir::{Function, Value};

/// Whether `f`'s arenas hold exactly its body, in order (then `compact`
/// would only copy it).
pub fn is_compact(f: &Function) -> bool {
    let results: usize = f.ops.iter().map(|o| o.results.len()).sum();
    f.body.len() == f.ops.len()
        && f.ops.iter().all(|o| o.regions.is_empty())
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
    let mut copier = OpCopier::new(f);
    for (&old, &new) in f.args.iter().zip(&g.args) {
        copier.map[old.index()] = Some(new);
    }
    let undefined = |v: Value, pos| {
        Diagnostic::new(
            DiagKind::UndefinedName,
            pos,
            format!("@{} uses value #{} before it is defined", f.name, v.0),
        )
    };
    for (id, op) in f.ops_in_order() {
        let new = copier
            .copy_op(&mut g, id)
            .map_err(|v| undefined(v, op.pos))?;
        g.body.push(new);
    }
    g.returns = f
        .returns
        .iter()
        .map(|&v| copier.lookup(v).map_err(|v| undefined(v, f.return_pos)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((g, copier.map))
}
