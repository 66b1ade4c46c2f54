//! The IR: modules of functions whose bodies are SSA ops over tensors.

pub mod literal;
pub mod module;
pub mod ops;
pub mod types;
pub mod verify;

pub use literal::{DenseLiteral, Scalar};
pub use module::{
    find_attr, Function, Module, NamedAttr, OpData, OpId, ParamAttrs, Value, ValueData, ValueDef,
    Visibility,
};
pub use ops::{BinaryOp, CompareDirection, CompareType, DotDims, OpKind, ReduceKind, UnaryOp};
pub use types::{ElemType, TensorType};
