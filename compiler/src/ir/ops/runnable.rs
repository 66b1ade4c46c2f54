//! What `run` refuses that every other command accepts: custom_call
//! targets meshrun has no kernel for, and `!stablehlo.token` values (they
//! order side effects meshrun does not perform). Checked on the whole
//! module before any device starts, so the error names the op.

use crate::diag::{DiagKind, Diagnostic};
use crate::ir::{Function, Module, OpKind};

/// The first op or value of `module` (regions and bodies included) that
/// cannot run, as `run`'s error: a custom call first (its target says
/// most), then a token. Only ops in a body count: a rewrite that drops an
/// op (an async collective's done) leaves it in the arena.
pub fn first_unrunnable(module: &Module) -> Option<Diagnostic> {
    let call = module.funcs.iter().find_map(|f| {
        f.all_ops()
            .into_iter()
            .map(|id| f.op(id))
            .find_map(|op| match &op.kind {
                OpKind::CustomCall(c) => c
                    .run_error()
                    .map(|e| Diagnostic::new(DiagKind::Unsupported, op.pos, e)),
                _ => None,
            })
    });
    call.or_else(|| module.funcs.iter().find_map(first_token))
}

fn first_token(f: &Function) -> Option<Diagnostic> {
    if f.args.iter().any(|&a| f.ty(a).is_token()) || f.result_types.iter().any(|t| t.is_token()) {
        return Some(token_error(f.pos, &format!("@{}'s signature", f.name)));
    }
    f.all_ops().into_iter().map(|id| f.op(id)).find_map(|op| {
        let token = op
            .operands
            .iter()
            .chain(&op.results)
            .any(|&v| f.ty(v).is_token());
        token.then(|| token_error(op.pos, &op.kind.name()))
    })
}

fn token_error(pos: crate::diag::SrcPos, what: &str) -> Diagnostic {
    Diagnostic::new(
        DiagKind::Unsupported,
        pos,
        format!(
            "{what} has !stablehlo.token values, which cannot run: they order side effects \
             (callbacks, send/recv) meshrun does not perform (parse, propagate, partition, \
             show and cost accept them)"
        ),
    )
}
