//! `sdy.named_computation`: a named block of ops with its own arguments
//! and results — how Shardy keeps a `func.call` during propagation. The
//! import pass (`propagation::import::calls`) turns every call into one,
//! with the callee's body as its region; the export pass turns each back
//! into a private function and a call, with the shardings propagation
//! gave the block arguments and results as the function's signature.
//!
//! ```text
//! %r = "sdy.named_computation"(%x) <{name = "foo"}> ({
//! ^bb0(%arg1: tensor<8xf32>):
//!   ... sdy.return %y : tensor<8xf32>
//! }) : (tensor<8xf32>) -> tensor<8xf32>
//! ```
//!
//! The block arguments' shardings (Shardy's `in_shardings`) live in
//! [`NamedComputation::in_shardings`] while the op exists; the results'
//! are the op's `sdy.sharding`. Propagation ties operand `i` to block
//! argument `i` and what the body returns at `i` to result `i`
//! (`propagation::data_flow`); the op has no factor rule of its own.

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::checks::type_list as list;
use crate::ir::ops::{
    Arity, DecodeError, DecodeOp, Decoder, OpDef, OpSpec, RegionTypes, RuleShapes,
};
use crate::ir::types::TensorType;
use crate::rules::rule::{OpShardingRule, RuleOptions};
use crate::sharding::TensorSharding;

define_attrs! {
    pub struct NamedComputationAttrs {
        /// The name of the function it came from (and goes back to).
        name: String = "name",
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct NamedComputation {
    pub attrs: NamedComputationAttrs,
    /// The sharding of each block argument, once one has any. Kept only
    /// while propagation runs (the generic form does not print it).
    pub in_shardings: Option<Vec<Option<TensorSharding>>>,
}

impl NamedComputation {
    pub fn new(name: impl Into<String>) -> NamedComputation {
        NamedComputation {
            attrs: NamedComputationAttrs { name: name.into() },
            in_shardings: None,
        }
    }

    pub fn name(&self) -> &str {
        &self.attrs.name
    }
}

impl DecodeOp for NamedComputation {
    const SPEC: OpSpec = OpSpec {
        operands: Arity::AtLeast(0),
        results: Arity::AtLeast(0),
        ..OpSpec::new("sdy.named_computation")
    };
    const REGIONS: Arity = Arity::Exactly(1);

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(NamedComputation {
            attrs: NamedComputationAttrs::decode_attrs(d)?,
            in_shardings: None,
        })
    }
}

impl OpDef for NamedComputation {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.attrs.encode_attrs()
    }

    fn infer(&self, _operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        Err("the result types come from the body".into())
    }

    fn inferable(&self) -> bool {
        false
    }

    fn terminator(&self) -> &'static str {
        "sdy.return"
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
        let [body] = regions else {
            return Err(format!("has one region, not {}", regions.len()));
        };
        if body.args != operands {
            return Err(format!(
                "the body takes ({}) but the operands are ({})",
                list(&body.args),
                list(operands)
            ));
        }
        if body.returns != results {
            return Err(format!(
                "the body returns ({}) but the results are ({})",
                list(&body.returns),
                list(results)
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
