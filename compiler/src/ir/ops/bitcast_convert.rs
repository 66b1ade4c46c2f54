//! `stablehlo.bitcast_convert`: the bits of every element reinterpreted as
//! another element type. Between types of one width the shape is kept;
//! to a narrower type each element becomes a new minor dimension of
//! `in_bits / out_bits` elements (little-endian: element 0 holds the low
//! bits), from a narrower type that minor dimension is consumed.
//!
//! `%r = stablehlo.bitcast_convert %x : (tensor<8x16xui32>) -> tensor<8x16xf32>`
//! (JAX's `jax.random.uniform` makes floats in [1, 2) this way).

use crate::ir::ops::checks::check_static_shape;
use crate::ir::ops::{DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm};
use crate::ir::types::TensorType;
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{FactorKind, OpShardingRule, RuleOptions};

/// No attributes: the result type says everything.
#[derive(Debug, Clone, PartialEq)]
pub struct BitcastConvert;

impl DecodeOp for BitcastConvert {
    const SPEC: OpSpec = OpSpec {
        pretty: Some(&[Fmt::Operands, Fmt::AttrDict, Fmt::Sig(SigForm::Functional)]),
        ..OpSpec::new("stablehlo.bitcast_convert")
    };

    fn decode(_d: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(BitcastConvert)
    }
}

/// The result shape of a bitcast of `input` to an element type of
/// `out_bits`, or why there is none.
fn result_shape(input: &TensorType, out_bits: u32) -> Result<Vec<i64>, String> {
    let in_bits = input.elem.bit_width();
    let mut shape = input.shape.clone();
    if in_bits > out_bits {
        shape.push(i64::from(in_bits / out_bits));
    } else if in_bits < out_bits {
        let want = i64::from(out_bits / in_bits);
        if shape.last() != Some(&want) {
            return Err(format!(
                "a bitcast from {} to a {out_bits}-bit type needs a minor dimension of {want}, not {}",
                input,
                shape.last().map_or("none".to_string(), |d| d.to_string())
            ));
        }
        shape.pop();
    }
    Ok(shape)
}

impl OpDef for BitcastConvert {
    fn infer(&self, _operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        Err("the result type of stablehlo.bitcast_convert is given, not inferred".into())
    }

    fn inferable(&self) -> bool {
        false
    }

    fn check(&self, operands: &[TensorType], results: &[TensorType]) -> Result<(), String> {
        let (input, output) = match (operands, results) {
            ([i], [o]) => (i, o),
            _ => return Err("expects one operand and one result".into()),
        };
        check_static_shape(input, "operand")?;
        if input.elem.is_bool() || output.elem.is_bool() {
            return Err(format!(
                "cannot bitcast between {} and {} (i1 has no bit layout)",
                input.elem, output.elem
            ));
        }
        let want = result_shape(input, output.elem.bit_width())?;
        if want != output.shape {
            return Err(format!(
                "result type must be {}, not {output}",
                TensorType::new(want, output.elem)
            ));
        }
        Ok(())
    }

    /// Shardy's: pass-through on the dimensions both sides have; the extra
    /// minor dimension of the narrower side needs replication.
    fn rule(
        &self,
        shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        let (input, output) = (shapes.operands[0], shapes.results[0]);
        let common = if input.len() < output.len() {
            input
        } else {
            output
        };
        let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
        b.pointwise(common);
        if input.len() < output.len() {
            let d = output.len() - 1;
            b.add_factor_per_tensor(output[d], FactorKind::NeedReplication, &[None], &[Some(d)]);
        } else if input.len() > output.len() {
            let d = input.len() - 1;
            b.add_factor_per_tensor(input[d], FactorKind::NeedReplication, &[Some(d)], &[None]);
        }
        b.build().map(Some).map_err(|e| e.to_string())
    }
}
