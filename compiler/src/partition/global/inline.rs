//! The partitioner works on one function: the entry function with every
//! `func.call` inlined (`ir::inline`): propagation keeps calls and their
//! callees' signature shardings, as Shardy does; each inlined op keeps its
//! own sharding, and the partitioner reshards op by op. Then ops that
//! repeat an earlier op are merged (`cse`): JAX calls a helper afresh at
//! every use, and XLA merges the inlined copies too.

use crate::diag::{DiagKind, Diagnostic, SrcPos};
use crate::ir::inline::inline_calls;
use crate::ir::{Function, Module, OpKind};
use crate::partition::global::cse::merge_repeated_ops;

/// The entry function of `module` (`Module::entry`) with all calls
/// inlined and repeated ops merged.
pub fn inlined_entry(module: &Module) -> Result<Function, Diagnostic> {
    let no_entry = || {
        Diagnostic::new(
            DiagKind::UndefinedName,
            SrcPos::UNKNOWN,
            "the module has no function to partition",
        )
    };
    let entry = module.entry().ok_or_else(no_entry)?;
    // Propagation keeps calls (as Shardy does), in loop and branch regions too.
    let has_calls = entry
        .all_ops()
        .into_iter()
        .any(|id| matches!(entry.op(id).kind, OpKind::Call(_)));
    let mut f = if has_calls {
        let mut inlined = module.clone();
        inline_calls(&mut inlined)?;
        inlined.func(&entry.name).cloned().ok_or_else(no_entry)?
    } else {
        entry.clone()
    };
    merge_repeated_ops(&mut f);
    Ok(f)
}
