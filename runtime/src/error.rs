//! `RuntimeError`: why a program could not be run. Each variant says where
//! (function, source position of the op) and what is wrong.

use std::path::PathBuf;

use meshrun_compiler::ir::{ElemType, TensorType};
use meshrun_compiler::SrcPos;
use meshrun_kernels::KernelError;

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("function @{0} is not defined in the module")]
    UnknownFunction(String),

    #[error("@{func} takes {expected} inputs, got {got}")]
    InputCount {
        func: String,
        expected: usize,
        got: usize,
    },

    /// An input whose shape or element type differs from the argument's.
    #[error("input {index}: expected {expected}, got shape {got_shape:?} {got_elem}")]
    InputMismatch {
        index: usize,
        expected: TensorType,
        got_shape: Vec<usize>,
        got_elem: ElemType,
    },

    /// A kernel refused the op's operands or attributes.
    #[error("{}: {source}", at(.func, .pos, *.op_index))]
    Kernel {
        func: String,
        op_index: usize,
        pos: SrcPos,
        #[source]
        source: KernelError,
    },

    /// The program itself is malformed in a way the verifier should have
    /// caught (a value used before its definition, a call with the wrong
    /// number of operands, ...).
    #[error("{}: {message}", at(.func, .pos, *.op_index))]
    Malformed {
        func: String,
        op_index: usize,
        pos: SrcPos,
        message: String,
    },

    #[error("calls nested deeper than {limit} (recursion?) at @{func}")]
    CallDepth { func: String, limit: usize },

    /// A `.npy` file that could not be read or written.
    #[error("{}: {message}", .path.display())]
    Npy { path: PathBuf, message: String },

    /// One instruction of a device program failed on one device: a kernel
    /// refused its operands, or the instruction does not fit the values it
    /// reads (a table entry out of range, a block of the wrong shape).
    #[error("device {device}: instruction {instr} ({what}, global step {step}): {message}")]
    Instruction {
        device: i64,
        instr: usize,
        step: usize,
        /// The instruction, e.g. `stablehlo.add` or `all-gather`.
        what: String,
        message: String,
    },

    /// A device thread panicked (a bug, never bad input); the run failed
    /// instead of aborting the process.
    #[error("device {device} panicked: {message}")]
    DevicePanic { device: i64, message: String },

    /// A device stopped because another device of the same run failed first.
    /// The run reports the first device's error, so this is only seen when a
    /// backend cannot tell which device failed first.
    #[error("device {device} stopped: device {failed} failed")]
    Aborted { device: i64, failed: i64 },

    /// The device program and the inputs or the backend do not fit together
    /// (a device the program does not list, a collective whose groups miss
    /// a device, ...).
    #[error("{0}")]
    Program(String),

    /// The program needs more devices or memory than the backend or this
    /// machine has; found before anything was allocated (see
    /// [`crate::capacity`]).
    #[error("{}", with_pos(.pos, .message))]
    TooLarge { pos: SrcPos, message: String },

    /// An input or output could not be split into, or rebuilt from, the
    /// per-device blocks of its sharding.
    #[error("{what} {index}: {message}")]
    Layout {
        /// `input` or `output`.
        what: &'static str,
        index: usize,
        message: String,
    },
}

/// `12:5: message`, or the message alone when the position is unknown.
fn with_pos(pos: &SrcPos, message: &str) -> String {
    if pos.is_known() {
        format!("{pos}: {message}")
    } else {
        message.to_string()
    }
}

/// Where an op is: `12:5: @main` when it was parsed, `@main, op 3` (its
/// index in the body) when it was built in memory.
fn at(func: &str, pos: &SrcPos, op_index: usize) -> String {
    if pos.is_known() {
        format!("{pos}: @{func}")
    } else {
        format!("@{func}, op {op_index}")
    }
}
