//! `stablehlo.case`: runs the branch `index` selects (an out-of-range
//! index selects the last branch) and returns what it returns.
//! `lax.cond` lowers to a two-branch case on its converted predicate
//! (branch 0 is the false one). Branches take no arguments; they use the
//! values around the op directly.
//!
//! JAX prints it in the generic form:
//! `%r = "stablehlo.case"(%i) ({ ... stablehlo.return %a : t }, { ... })
//! : (tensor<i32>) -> t`
//!
//! Propagation ties each result with what every branch returns (Shardy's
//! data-flow edges); the op has no factor rule of its own.

use crate::ir::ops::checks::type_list as list;
use crate::ir::ops::{
    Arity, DecodeError, DecodeOp, Decoder, OpDef, OpSpec, RegionTypes, RuleShapes,
};
use crate::ir::types::{ElemType, TensorType};
use crate::rules::rule::{OpShardingRule, RuleOptions};

#[derive(Debug, Clone, PartialEq)]
pub struct Case;

impl DecodeOp for Case {
    const SPEC: OpSpec = OpSpec {
        results: Arity::AtLeast(0),
        ..OpSpec::new("stablehlo.case")
    };
    const REGIONS: Arity = Arity::AtLeast(1);

    fn decode(_d: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(Case)
    }
}

impl OpDef for Case {
    fn infer(&self, _operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        Err("the result types come from the branches".into())
    }

    fn inferable(&self) -> bool {
        false
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
        if operands != [TensorType::scalar(ElemType::I32)] {
            return Err("the branch index must be one tensor<i32>".into());
        }
        if regions.is_empty() {
            return Err("needs at least one branch".into());
        }
        for (k, r) in regions.iter().enumerate() {
            if !r.args.is_empty() {
                return Err(format!("branch {k} must take no arguments"));
            }
            if r.returns != results {
                return Err(format!(
                    "branch {k} returns ({}) but the op's results are ({})",
                    list(&r.returns),
                    list(results)
                ));
            }
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
