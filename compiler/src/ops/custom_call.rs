//! `stablehlo.custom_call`: a call of a target the compiler backend
//! provides. meshrun runs the targets JAX emits around sharding and
//! placement, each the identity on its one operand: `@Sharding` (XLA's
//! sharding annotation, its `mhlo.sharding` kept verbatim as a hint
//! meshrun does not read) and the host-memory placements
//! (`@annotate_device_placement`, which `jax.device_put(x,
//! memory_kind=...)` inside jit and the offloading remat policies write,
//! its `_xla_buffer_placement` frontend attribute kept verbatim; XLA's
//! `@MoveToHost` / `@MoveToDevice`): on the CPU backend host memory is
//! ordinary memory. Every other target is an error that names it: the SPMD
//! shape changes (`@SPMDFullToShardShape`, `@SPMDShardToFullShape`) and
//! `@xla.sdy.*` only occur in programs lowered without Shardy or already
//! partitioned by XLA (JAX 0.10.2 with Shardy lowers `shard_map` to
//! `sdy.manual_computation`), and the rest are backend-specific kernels.
//!
//! `%1 = stablehlo.custom_call @Sharding(%0) {mhlo.sharding = "{replicated}"}
//! : (tensor<8x4xf32>) -> tensor<8x4xf32>`

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::types::TensorType;
use crate::ops::{Arity, DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm};
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{OpShardingRule, RuleOptions};

define_attrs! {
    pub struct CustomCall {
        /// The target's name, without the `@`.
        target: String = "call_target_name",
    }
}

/// The targets meshrun runs (all the identity).
const SUPPORTED: &[&str] = &[
    "Sharding",
    "annotate_device_placement",
    "MoveToHost",
    "MoveToDevice",
];

/// The halves of async collectives (`lax.psum_scatter_start(...).done()`):
/// read, then rewritten into the collective they start when the module is
/// loaded (`text::async_collectives`).
pub const ASYNC_TARGETS: &[&str] = &["reduce-scatter-start", "reduce-scatter-done"];

/// Why a target is not run, for the error.
fn unsupported(target: &str) -> String {
    let why = if target.starts_with("SPMD") || target.starts_with("xla.sdy.") {
        "it belongs to programs lowered without Shardy or already partitioned by XLA; \
         export with Shardy (JAX's default), which lowers shard_map to sdy.manual_computation"
    } else {
        "it is a backend-specific kernel meshrun does not have"
    };
    format!("custom_call target '@{target}' is not supported: {why} (meshrun runs @Sharding and the host-placement annotations)")
}

impl DecodeOp for CustomCall {
    const SPEC: OpSpec = OpSpec {
        name: "stablehlo.custom_call",
        aliases: &[],
        operands: Arity::AtLeast(0),
        results: Arity::AtLeast(0),
        computations: 0,
        elementwise: false,
        pretty: Some(&[
            Fmt::Symbol("call_target_name"),
            Fmt::Punct("("),
            Fmt::Operands,
            Fmt::Punct(")"),
            Fmt::AttrDict,
            Fmt::Sig(SigForm::Functional),
        ]),
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        let call = CustomCall::decode_attrs(d)?;
        let target = call.target.as_str();
        if !SUPPORTED.contains(&target) && !ASYNC_TARGETS.contains(&target) {
            return Err(DecodeError::attr(
                "call_target_name",
                unsupported(&call.target),
            ));
        }
        Ok(call)
    }
}

impl OpDef for CustomCall {
    fn spec(&self) -> &'static OpSpec {
        &Self::SPEC
    }

    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.encode_attrs()
    }

    /// Every supported target is the identity on one operand.
    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        match operands {
            [x] => Ok(vec![x.clone()]),
            _ => Err(format!(
                "@{} takes one operand, not {}",
                self.target,
                operands.len()
            )),
        }
    }

    /// Pass-through on every dimension (XLA imports `@Sharding` as a
    /// sharding constraint, which propagation passes through; a placement
    /// moves a value between memories, not devices).
    fn rule(
        &self,
        shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
        b.pointwise(shapes.operands[0]);
        b.build().map(Some).map_err(|e| e.to_string())
    }
}
