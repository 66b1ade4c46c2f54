//! `stablehlo.while`: runs `body` on the loop-carried values while `cond`
//! says so; its results are the values after the last iteration. Both
//! regions take one block argument per operand (typed as it); `cond`
//! returns a `tensor<i1>`, `body` the next values (typed as the operands).
//!
//! ```text
//! %r:2 = stablehlo.while(%iterArg = %x, %iterArg_0 = %i) : tensor<4xf32>, tensor<i32>
//! cond {
//!   ... stablehlo.return %p : tensor<i1>
//! } do {
//!   ... stablehlo.return %x2, %i2 : tensor<4xf32>, tensor<i32>
//! }
//! ```
//!
//! Propagation ties each operand, the regions' block arguments, what
//! `body` returns and the result into one data-flow edge (Shardy); the op
//! has no factor rule of its own.

use crate::ir::ops::checks::type_list as list;
use crate::ir::ops::{
    Arity, DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RegionTypes, RuleShapes, SigForm,
};
use crate::ir::types::{ElemType, TensorType};
use crate::rules::rule::{OpShardingRule, RuleOptions};

#[derive(Debug, Clone, PartialEq)]
pub struct While;

impl DecodeOp for While {
    const SPEC: OpSpec = OpSpec {
        operands: Arity::AtLeast(0),
        results: Arity::AtLeast(0),
        pretty: Some(&[
            Fmt::IterArgs,
            Fmt::Sig(SigForm::TypeList),
            Fmt::KeywordAttrDict,
            Fmt::Newline,
            Fmt::Region("cond"),
            Fmt::Region("do"),
        ]),
        ..OpSpec::new("stablehlo.while")
    };
    const REGIONS: Arity = Arity::Exactly(2);

    fn decode(_d: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(While)
    }
}

impl OpDef for While {
    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        Ok(operands.to_vec())
    }

    fn takes_regions(&self) -> bool {
        true
    }

    fn check_with_regions(
        &self,
        operands: &[TensorType],
        results: &[TensorType],
        regions: &[RegionTypes],
    ) -> Result<(), String> {
        let [cond, body] = regions else {
            return Err(format!("has 2 regions (cond, body), not {}", regions.len()));
        };
        if results != operands {
            return Err(format!(
                "results ({}) must have the operand types ({})",
                list(results),
                list(operands)
            ));
        }
        for (name, r) in [("cond", cond), ("body", body)] {
            if r.args != operands {
                return Err(format!(
                    "the {name} region takes ({}) but the loop carries ({})",
                    list(&r.args),
                    list(operands)
                ));
            }
        }
        if cond.returns != [TensorType::scalar(ElemType::I1)] {
            return Err(format!(
                "the cond region must return one tensor<i1>, not ({})",
                list(&cond.returns)
            ));
        }
        if body.returns != operands {
            return Err(format!(
                "the body region returns ({}) but the loop carries ({})",
                list(&body.returns),
                list(operands)
            ));
        }
        Ok(())
    }

    fn rule(
        &self,
        _shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        Ok(None)
    }
}
