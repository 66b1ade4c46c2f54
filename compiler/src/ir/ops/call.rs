//! `func.call`: a call of another function of the module, on any number
//! of operands, with as many results as the callee returns. The result
//! types are the program's; the verifier checks them, and the operands,
//! against the callee's signature (which needs the module:
//! [`OpDef::callee`]).
//!
//! `%r = call @f(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>`
//! (`func.call @f(...)` in nested regions, where `func`'s default dialect
//! does not apply).

use crate::ir::attr::Attr;
use crate::ir::ops::checks::not_inferable;
use crate::ir::ops::{
    Arity, DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm,
};
use crate::ir::types::TensorType;
use crate::rules::rule::{OpShardingRule, RuleOptions};

/// The called function's name (without `@`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub callee: String,
}

impl Call {
    pub fn new(callee: impl Into<String>) -> Call {
        Call {
            callee: callee.into(),
        }
    }
}

impl DecodeOp for Call {
    const SPEC: OpSpec = OpSpec {
        aliases: &["call"],
        operands: Arity::AtLeast(0),
        results: Arity::AtLeast(0),
        pretty: Some(&[
            Fmt::Symbol("callee"),
            Fmt::Punct("("),
            Fmt::Operands,
            Fmt::Punct(")"),
            Fmt::AttrDict,
            Fmt::Sig(SigForm::FunctionType),
        ]),
        ..OpSpec::new("func.call")
    };

    /// The `callee` attribute, a symbol `@f`.
    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        match d.take("callee") {
            Some(Attr::Symbol(callee) | Attr::Str(callee)) => Ok(Call { callee }),
            Some(other) => Err(DecodeError::attr(
                "callee",
                format!("expected a symbol name (@...), found {}", other.kind_name()),
            )),
            None => Err(DecodeError::op("needs attribute 'callee'")),
        }
    }
}

impl OpDef for Call {
    /// As a symbol, which the generic form writes `callee = @f`.
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        vec![("callee", Attr::Symbol(self.callee.clone()))]
    }

    fn callee(&self) -> Option<&str> {
        Some(&self.callee)
    }

    fn callee_mut(&mut self) -> Option<&mut String> {
        Some(&mut self.callee)
    }

    fn infer(&self, _operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        Err(not_inferable("check_call"))
    }

    fn inferable(&self) -> bool {
        false
    }

    /// Only the callee's signature says what is right: the verifier checks
    /// that (`check_call`), with the module.
    fn check(&self, _operands: &[TensorType], _results: &[TensorType]) -> Result<(), String> {
        Err(format!(
            "the result types of a call of @{} are checked against the callee (use check_call)",
            self.callee
        ))
    }

    /// None: propagation goes through the callee's body instead (the
    /// import inlines or splits calls).
    fn rule(
        &self,
        _shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        Ok(None)
    }
}
