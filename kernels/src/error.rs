//! `KernelError`: why a kernel refused its inputs. Kernels validate shapes,
//! attributes and element types before touching data, so bad input becomes
//! one of these instead of a panic deep inside `ndarray` or `gemm`.

use meshrun_compiler::ir::ElemType;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KernelError {
    /// The op is defined for this element type in StableHLO, but meshrun's
    /// host tensors or this kernel do not handle it.
    #[error("{op}: element type {elem} is not supported")]
    UnsupportedType { op: String, elem: ElemType },

    /// The op is not a local computation (`func.call`, sharding ops): the
    /// interpreter or executor must handle it before reaching the kernels.
    #[error("{op} is not a local computation; it has no CPU kernel")]
    NotAKernel { op: String },

    /// Wrong number of operands or result types for the op.
    #[error("{op}: expected {expected} {what}, got {got}")]
    Arity {
        op: String,
        what: &'static str,
        expected: usize,
        got: usize,
    },

    /// Operands (or attributes) whose shapes or element types break the op's
    /// rules; `message` names the operand and what is wrong.
    #[error("{op}: {message}")]
    Invalid { op: String, message: String },
}

impl KernelError {
    pub(crate) fn invalid(op: &str, message: impl Into<String>) -> KernelError {
        KernelError::Invalid {
            op: op.to_string(),
            message: message.into(),
        }
    }

    pub(crate) fn unsupported(op: &str, elem: ElemType) -> KernelError {
        KernelError::UnsupportedType {
            op: op.to_string(),
            elem,
        }
    }
}

pub type Result<T, E = KernelError> = std::result::Result<T, E>;
