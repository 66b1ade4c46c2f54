//! The IR: modules of functions whose bodies are SSA ops over tensors.

pub mod attr;
pub mod copy;
pub mod infer;
pub mod inline;
pub mod literal;
pub mod module;
pub mod ops;
pub mod types;
pub mod verify;
pub mod widen;

pub use infer::{check_result_types, infer_result_types};
pub use literal::{DenseLiteral, Scalar};
pub use module::{
    find_attr, Computation, Function, Module, NamedAttr, OpData, OpId, ParamAttrs, Region, Value,
    ValueData, ValueDef, Visibility,
};
pub use ops::{
    BinaryOp, CompareDirection, CompareType, ConstantDialect, DotDims, OpKind, ReduceKind, UnaryOp,
};
pub use types::{ElemType, TensorType};
pub use verify::shardings::validate_module_shardings;
pub use verify::{function_errors, module_errors, verify_function, verify_module};
