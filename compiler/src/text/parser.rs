//! Parser: text → `Module`.

use crate::diag::{DiagKind, Diagnostic, SrcPos};
use crate::ir::Module;

/// Parse a module. Errors carry the line and column of the problem.
pub fn parse_module(_src: &str) -> Result<Module, Diagnostic> {
    Err(Diagnostic::new(
        DiagKind::Unsupported,
        SrcPos::new(1, 1),
        "parser not implemented yet",
    ))
}
