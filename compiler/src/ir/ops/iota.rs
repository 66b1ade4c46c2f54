//! `stablehlo.iota`: a tensor whose every element is its index along
//! `iota_dimension` (`jnp.arange`, broadcast along the other dimensions).
//! The program states the result type.
//!
//! `%r = stablehlo.iota dim = 1 : tensor<4x3xi32>`

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::checks::not_inferable;
use crate::ir::ops::checks::{check_static_shape, dim_index, expect_operands, single_result};
use crate::ir::ops::{
    Arity, DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm,
};
use crate::ir::types::TensorType;
use crate::rules::rule::{OpShardingRule, RuleOptions};

define_attrs! {
    /// The dimension the values count along.
    pub struct Iota {
        dim: i64 = "iota_dimension",
    }
}

impl DecodeOp for Iota {
    const SPEC: OpSpec = OpSpec {
        operands: Arity::Exactly(0),
        pretty: Some(&[
            Fmt::Keyed("dim", "iota_dimension"),
            Fmt::AttrDict,
            Fmt::Sig(SigForm::Results),
        ]),
        ..OpSpec::new("stablehlo.iota")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        Iota::decode_attrs(d)
    }
}

/// `stablehlo.iota dim = d : ty`: `d` indexes a dimension of `ty`, whose
/// elements are integers or floats.
pub fn infer_iota(dim: i64, ty: &TensorType) -> Result<TensorType, String> {
    check_static_shape(ty, "result")?;
    if ty.elem.is_bool() {
        return Err(format!(
            "result must have integer or floating-point elements, got {ty}"
        ));
    }
    dim_index(dim, ty.rank(), "iota dimension")?;
    Ok(ty.clone())
}

impl OpDef for Iota {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.encode_attrs()
    }

    fn infer(&self, _operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        Err(not_inferable("infer_iota"))
    }

    fn inferable(&self) -> bool {
        false
    }

    fn check(&self, operands: &[TensorType], results: &[TensorType]) -> Result<(), String> {
        expect_operands(operands, 0)?;
        infer_iota(self.dim, single_result(results)?).map(drop)
    }

    /// None: propagation gives an iota the sharding its users want (as
    /// Shardy, which registers no rule for it).
    fn rule(
        &self,
        _shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        Ok(None)
    }
}
