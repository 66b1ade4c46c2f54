//! The partitioner works on one function: the entry function with every
//! `func.call` inlined (`ir::inline`). Shardy's propagation leaves no calls
//! behind, but an unpropagated module (`input.mlir`) may still have them.

use crate::diag::{DiagKind, Diagnostic, SrcPos};
use crate::ir::inline::inline_calls;
use crate::ir::{Function, Module, OpKind};

/// The entry function of `module` (`Module::entry`) with all calls inlined.
pub fn inlined_entry(module: &Module) -> Result<Function, Diagnostic> {
    let no_entry = || {
        Diagnostic::new(
            DiagKind::UndefinedName,
            SrcPos::UNKNOWN,
            "the module has no function to partition",
        )
    };
    let entry = module.entry().ok_or_else(no_entry)?;
    // Calls inside loop and branch regions count too.
    let has_calls = entry
        .all_ops()
        .into_iter()
        .any(|id| matches!(entry.op(id).kind, OpKind::Call { .. }));
    if !has_calls {
        return Ok(entry.clone());
    }
    let mut inlined = module.clone();
    inline_calls(&mut inlined)?;
    inlined.func(&entry.name).cloned().ok_or_else(no_entry)
}
