//! Diagnostics: every error the compiler reports names a source position and
//! says what is wrong. The CLI prints them as `error: FILE:LINE:COL: message`.

use std::fmt;

/// A 1-based line/column position in the source text. `SrcPos::UNKNOWN`
/// (0:0) marks things built in memory rather than parsed.
///
/// Positions are *not* part of a program's meaning: two modules that differ
/// only in where their ops were written compare equal, which is what makes
/// `parse(print(m)) == m` a meaningful round-trip check.
#[derive(Debug, Clone, Copy, Default, Eq)]
pub struct SrcPos {
    pub line: u32,
    pub col: u32,
}

impl SrcPos {
    pub const UNKNOWN: SrcPos = SrcPos { line: 0, col: 0 };

    pub fn new(line: u32, col: u32) -> Self {
        SrcPos { line, col }
    }

    pub fn is_known(self) -> bool {
        self.line != 0
    }
}

impl PartialEq for SrcPos {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

impl fmt::Display for SrcPos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// What kind of problem a diagnostic reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiagKind {
    /// Malformed text: unexpected token, unterminated string, bad number.
    Syntax,
    /// An op name the compiler does not know.
    UnknownOp,
    /// A reference to an undefined value, function or mesh.
    UndefinedName,
    /// Operand/result types that break an op's shape rules.
    Type,
    /// A sharding that violates an invariant (SPEC §2).
    Sharding,
    /// Valid input that meshrun does not support (yet).
    Unsupported,
}

/// One error with a position. The message says what is wrong in words a
/// user can act on (it names the op, value, axis, ...).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{pos}: {message}")]
pub struct Diagnostic {
    pub kind: DiagKind,
    pub pos: SrcPos,
    pub message: String,
}

impl Diagnostic {
    pub fn new(kind: DiagKind, pos: SrcPos, message: impl Into<String>) -> Self {
        Diagnostic {
            kind,
            pos,
            message: message.into(),
        }
    }
}

pub type Result<T, E = Diagnostic> = std::result::Result<T, E>;
