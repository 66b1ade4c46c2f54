//! Printer: `Module` → text in the dialect the parser reads.

use crate::ir::Module;

pub fn print_module(_m: &Module) -> String {
    String::new()
}
