//! `stablehlo.custom_call`: a call of a target the compiler backend
//! provides. meshrun runs the targets JAX emits around sharding and
//! placement, each the identity on its one operand: `@Sharding` (XLA's
//! sharding annotation, its `mhlo.sharding` kept verbatim as a hint
//! meshrun does not read) and the host-memory placements
//! (`@annotate_device_placement`, which `jax.device_put(x,
//! memory_kind=...)` inside jit and the offloading remat policies write,
//! its `_xla_buffer_placement` frontend attribute kept verbatim; XLA's
//! `@MoveToHost` / `@MoveToDevice`): on the CPU backend host memory is
//! ordinary memory.
//!
//! Every other target is *opaque*: parsed, verified (its result types are
//! the program's), propagated, partitioned, shown and costed like Shardy
//! and XLA treat it, and refused only by `run` (`ir::ops::runnable`),
//! with the target named. Its sharding rule is the one the program
//! attaches (`sdy.sharding_rule = #sdy.op_sharding_rule<..., custom>`),
//! else none: propagation does not pass through it, and the partitioner
//! gives it whole operands and takes whole results
//! ([`replicating_rule`], XLA's default for a custom call it cannot
//! partition). The SPMD shape changes (`@SPMDFullToShardShape`, ...) and
//! `@xla.sdy.*` only occur in programs lowered without Shardy or already
//! partitioned by XLA; `run`'s error says so.
//!
//! `%1 = stablehlo.custom_call @Sharding(%0) {mhlo.sharding = "{replicated}"}
//! : (tensor<8x4xf32>) -> tensor<8x4xf32>`

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::{
    Arity, AttrCodec, DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm,
};
use crate::ir::types::TensorType;
use crate::ir::{find_attr, NamedAttr};
use crate::rules::builder::RuleBuilder;
use crate::rules::notation::parse_rule;
use crate::rules::rule::{FactorKind, OpShardingRule, RuleOptions, TensorId};

define_attrs! {
    pub struct CustomCall {
        /// The target's name, without the `@`.
        target: String = "call_target_name",
        /// `mhlo.frontend_attributes`: where `@annotate_device_placement`
        /// puts its value (`_xla_buffer_placement`), kept whole.
        frontend: Option<FrontendAttributes> = "mhlo.frontend_attributes",
    }
}

/// `mhlo.frontend_attributes = {key = "value", ...}`, every entry kept in
/// order so the op prints back as written.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontendAttributes(pub Vec<(String, Attr)>);

impl FrontendAttributes {
    /// The string value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| match v {
                Attr::Str(s) => Some(s.as_str()),
                _ => None,
            })
    }
}

impl AttrCodec for FrontendAttributes {
    fn decode(a: &Attr) -> Result<Self, String> {
        match a {
            Attr::Dict(entries) => Ok(FrontendAttributes(entries.clone())),
            other => Err(format!(
                "expected a dictionary, found {}",
                other.kind_name()
            )),
        }
    }

    fn encode(&self) -> Option<Attr> {
        Some(Attr::Dict(self.0.clone()))
    }
}

/// The memory a placement call moves its value to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Host memory (`pinned_host`, `unpinned_host`; `@MoveToHost`).
    Host,
    /// The device's own memory (`device`; `@MoveToDevice`).
    Device,
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

/// What meshrun does with a call's target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    /// Runs as the identity on its one operand.
    Identity,
    /// Half of an async collective, rewritten when the module is loaded.
    Async,
    /// Anything else: carried through every pass, refused by `run`.
    Opaque,
}

/// Why a target cannot run, for `run`'s error.
fn cannot_run(target: &str) -> String {
    let why = if target.starts_with("SPMD") || target.starts_with("xla.sdy.") {
        "it belongs to programs lowered without Shardy or already partitioned by XLA; \
         export with Shardy (JAX's default), which lowers shard_map to sdy.manual_computation"
    } else if target.contains("callback") {
        "it calls back into the Python process that lowered the program"
    } else {
        "it is a backend-specific kernel meshrun does not have"
    };
    format!("custom_call target '@{target}' cannot run: {why} (meshrun runs @Sharding and the host-placement annotations; parse, propagate, partition, show and cost accept any target)")
}

impl CustomCall {
    pub fn target_kind(&self) -> TargetKind {
        let t = self.target.as_str();
        if SUPPORTED.contains(&t) {
            TargetKind::Identity
        } else if ASYNC_TARGETS.contains(&t) {
            TargetKind::Async
        } else {
            TargetKind::Opaque
        }
    }

    /// Whether it is one of JAX's host-offload moves (`@MoveToHost`,
    /// `@MoveToDevice`), which Shardy's op-priority propagation schedules
    /// with the pass-through ops (`isOffloadCustomCallOp`).
    pub fn is_offload_move(&self) -> bool {
        matches!(self.target.as_str(), "MoveToHost" | "MoveToDevice")
    }

    /// Where the call puts its value, for the host-memory placements:
    /// `@annotate_device_placement` by its `_xla_buffer_placement`
    /// (any memory kind naming the host is the host), `@MoveToHost` and
    /// `@MoveToDevice` by their names. `None` for every other target, and
    /// for an annotation without a placement.
    pub fn placement(&self) -> Option<Placement> {
        match self.target.as_str() {
            "MoveToHost" => Some(Placement::Host),
            "MoveToDevice" => Some(Placement::Device),
            "annotate_device_placement" => {
                let kind = self.frontend.as_ref()?.get("_xla_buffer_placement")?;
                Some(if kind.contains("host") {
                    Placement::Host
                } else {
                    Placement::Device
                })
            }
            _ => None,
        }
    }

    /// Why the call cannot run (`None`: it runs, as the identity).
    pub fn run_error(&self) -> Option<String> {
        (self.target_kind() != TargetKind::Identity).then(|| cannot_run(&self.target))
    }

    /// The rule the program attaches to an opaque call
    /// (`sdy.sharding_rule`), checked against the call's shapes.
    pub fn written_rule(
        &self,
        attrs: &[NamedAttr],
        shapes: &RuleShapes,
    ) -> Result<Option<OpShardingRule>, String> {
        if self.target_kind() != TargetKind::Opaque {
            return Ok(None);
        }
        let Some(text) = find_attr(attrs, "sdy.sharding_rule").and_then(|a| a.value.as_deref())
        else {
            return Ok(None);
        };
        let rule = parse_rule(text).map_err(|e| format!("sdy.sharding_rule: {e}"))?;
        rule_fits(&rule, shapes).map_err(|e| format!("sdy.sharding_rule {text}: {e}"))?;
        Ok(Some(rule))
    }
}

/// Whether `rule` describes tensors of these shapes: as many operands and
/// results, the same ranks, and each dimension the product of its
/// factors' sizes.
fn rule_fits(rule: &OpShardingRule, shapes: &RuleShapes) -> Result<(), String> {
    rule.check()?;
    if rule.num_operands() != shapes.operands.len() || rule.num_results() != shapes.results.len() {
        return Err(format!(
            "it has {} operands and {} results, the op {} and {}",
            rule.num_operands(),
            rule.num_results(),
            shapes.operands.len(),
            shapes.results.len()
        ));
    }
    let tensors = shapes
        .operands
        .iter()
        .enumerate()
        .map(|(k, s)| (TensorId::Operand(k), *s))
        .chain(
            shapes
                .results
                .iter()
                .enumerate()
                .map(|(k, s)| (TensorId::Result(k), *s)),
        );
    for (id, shape) in tensors {
        let m = rule
            .mapping(id)
            .ok_or_else(|| format!("{id:?} has no mapping"))?;
        if m.rank() != shape.len() {
            return Err(format!(
                "{id:?} has rank {}, the op's {}",
                m.rank(),
                shape.len()
            ));
        }
        for (d, (dim, &size)) in m.dims.iter().zip(shape).enumerate() {
            let product = dim
                .factors
                .iter()
                .try_fold(1i64, |p, &f| p.checked_mul(rule.factor_size(f)));
            if product != Some(size) {
                return Err(format!(
                    "{id:?} dimension {d} has size {size} but its factors make {}",
                    product.map_or_else(|| "an overflow".into(), |p| p.to_string())
                ));
            }
        }
    }
    Ok(())
}

/// The rule the partitioner gives an op it has no rule for: every
/// dimension of every operand and result its own need-replication factor,
/// so the op runs on whole values on every device and its results are
/// then cut to their shardings (XLA's default for a custom call).
pub fn replicating_rule(operands: &[&[i64]], results: &[&[i64]]) -> OpShardingRule {
    let mut b = RuleBuilder::for_shapes(operands, results);
    let tensors = operands
        .iter()
        .enumerate()
        .map(|(k, s)| (TensorId::Operand(k), *s))
        .chain(
            results
                .iter()
                .enumerate()
                .map(|(k, s)| (TensorId::Result(k), *s)),
        );
    for (id, shape) in tensors {
        for (d, &size) in shape.iter().enumerate() {
            b.add_factor(size, FactorKind::NeedReplication, &[(id, d)]);
        }
    }
    b.build()
        .expect("one factor per dimension of the given shapes")
}

impl DecodeOp for CustomCall {
    const SPEC: OpSpec = OpSpec {
        operands: Arity::AtLeast(0),
        results: Arity::AtLeast(0),
        pretty: Some(&[
            Fmt::Symbol("call_target_name"),
            Fmt::Punct("("),
            Fmt::Operands,
            Fmt::Punct(")"),
            Fmt::AttrDict,
            Fmt::Sig(SigForm::Functional),
        ]),
        ..OpSpec::new("stablehlo.custom_call")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        CustomCall::decode_attrs(d)
    }
}

impl OpDef for CustomCall {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.encode_attrs()
    }

    /// Every target meshrun runs is the identity on one operand; the
    /// others' result types are the program's.
    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        match (self.target_kind(), operands) {
            (TargetKind::Identity, [x]) => Ok(vec![x.clone()]),
            (TargetKind::Identity, _) => Err(format!(
                "@{} takes one operand, not {}",
                self.target,
                operands.len()
            )),
            _ => Err(format!(
                "the result types of @{} are the program's",
                self.target
            )),
        }
    }

    fn inferable(&self) -> bool {
        self.target_kind() == TargetKind::Identity
    }

    /// The targets meshrun runs are all the identity; the others cannot run.
    fn runs_as_identity(&self) -> bool {
        self.target_kind() == TargetKind::Identity
    }

    fn check(&self, operands: &[TensorType], results: &[TensorType]) -> Result<(), String> {
        if self.target_kind() != TargetKind::Identity {
            return Ok(());
        }
        let want = self.infer(operands)?;
        if want.as_slice() != results {
            return Err(format!(
                "@{} is the identity: its result type must be {}",
                self.target, want[0]
            ));
        }
        Ok(())
    }

    /// The identities: pass-through on every dimension (XLA imports
    /// `@Sharding` as a sharding constraint, which propagation passes
    /// through; a placement moves a value between memories, not devices).
    /// Opaque targets: none here (`rules::ops` reads a rule the program
    /// attaches, [`CustomCall::written_rule`]).
    fn rule(
        &self,
        shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        if self.target_kind() != TargetKind::Identity {
            return Ok(None);
        }
        let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
        b.pointwise(shapes.operands[0]);
        b.build().map(Some).map_err(|e| e.to_string())
    }
}
