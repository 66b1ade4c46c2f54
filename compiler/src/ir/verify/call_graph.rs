//! Call cycles. meshrun inlines or partitions callees one by one, so a
//! function that (indirectly) calls itself has no finite meaning here and is
//! rejected.

use crate::diag::{DiagKind, Diagnostic, SrcPos};
use crate::ir::Module;

/// One call edge: the callee's index in `Module::funcs` and the call's
/// position.
struct Call {
    callee: usize,
    pos: SrcPos,
}

/// A diagnostic for every call that closes a cycle, at that call's
/// position, naming the functions around the cycle.
pub(super) fn cycle_errors(m: &Module) -> Vec<Diagnostic> {
    let calls = call_edges(m);
    let mut state = vec![Visit::New; m.funcs.len()];
    let mut errors = Vec::new();
    for root in 0..m.funcs.len() {
        if state[root] != Visit::New {
            continue;
        }
        // Iterative depth-first search: (function, next edge to follow).
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        state[root] = Visit::OnStack;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            let Some(call) = calls[node].get(*next) else {
                state[node] = Visit::Done;
                stack.pop();
                continue;
            };
            *next += 1;
            match state[call.callee] {
                Visit::New => {
                    state[call.callee] = Visit::OnStack;
                    stack.push((call.callee, 0));
                }
                Visit::OnStack => errors.push(cycle_error(m, &stack, call)),
                Visit::Done => {}
            }
        }
    }
    errors
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Visit {
    New,
    OnStack,
    Done,
}

/// The calls in each function's body, resolved to function indices (calls
/// of unknown functions are the per-function check's business).
fn call_edges(m: &Module) -> Vec<Vec<Call>> {
    m.funcs
        .iter()
        .map(|f| {
            f.body
                .iter()
                .filter_map(|id| f.ops.get(id.index()))
                .filter_map(|op| {
                    let callee = op.kind.callee()?;
                    m.funcs
                        .iter()
                        .position(|g| g.name == callee)
                        .map(|callee| Call {
                            callee,
                            pos: op.pos,
                        })
                })
                .collect()
        })
        .collect()
}

/// `func.call: call cycle @a -> @b -> @a ...` for the back edge `call`
/// from the top of `stack`.
fn cycle_error(m: &Module, stack: &[(usize, usize)], call: &Call) -> Diagnostic {
    let start = stack
        .iter()
        .position(|&(f, _)| f == call.callee)
        .unwrap_or(0);
    let names: Vec<String> = stack[start..]
        .iter()
        .map(|&(f, _)| format!("@{}", m.funcs[f].name))
        .chain(std::iter::once(format!("@{}", m.funcs[call.callee].name)))
        .collect();
    Diagnostic::new(
        DiagKind::Type,
        call.pos,
        format!(
            "func.call: call cycle {}; recursive calls are not supported",
            names.join(" -> ")
        ),
    )
}
