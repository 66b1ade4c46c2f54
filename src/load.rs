//! Loading a program from a file: read → parse → verify types → validate
//! shardings. Every failure is a [`LoadError`] that names the file and, for
//! problems in the text, the line and column.

use std::fmt;
use std::path::{Path, PathBuf};

use meshrun_compiler::ir::validate_module_shardings;
use meshrun_compiler::ir::verify::verify_module;
use meshrun_compiler::{text, Diagnostic, Module};

/// An error tied to a file: `FILE:LINE:COL: message` (or `FILE: message`
/// when the problem has no position, e.g. the file cannot be read).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}", DiagAt(path, diag))]
    Invalid { path: PathBuf, diag: Diagnostic },
}

struct DiagAt<'a>(&'a Path, &'a Diagnostic);

impl fmt::Display for DiagAt<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (path, d) = (self.0.display(), self.1);
        if d.pos.is_known() {
            write!(f, "{path}:{}: {}", d.pos, d.message)
        } else {
            write!(f, "{path}: {}", d.message)
        }
    }
}

/// Parse `src` (read from `path`) and check it: op types, then shardings.
pub fn load_str(path: &Path, src: &str) -> Result<Module, LoadError> {
    let at = |diag| LoadError::Invalid {
        path: path.to_path_buf(),
        diag,
    };
    let module = text::parse_module(src).map_err(at)?;
    verify_module(&module).map_err(at)?;
    validate_module_shardings(&module).map_err(at)?;
    Ok(module)
}

/// Read, parse and check the module in `path`.
pub fn load_file(path: &Path) -> Result<Module, LoadError> {
    let src = std::fs::read_to_string(path).map_err(|source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    load_str(path, &src)
}
