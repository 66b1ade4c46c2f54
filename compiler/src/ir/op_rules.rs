//! The sharding rule of every op kind (Shardy's `createOpShardingRule`),
//! with the shapes taken from the op's operand and result types.
//!
//! Factor order and kinds follow Shardy exactly (JAX is the referee; see
//! `tests/rules_jax.rs`): element-wise ops share one factor per dimension;
//! `dot_general` numbers batch, lhs-free, rhs-free, then contracting
//! factors; sliced and padded dimensions are *permutation* factors of the
//! operand's size; the concatenated dimension is *need-replication*.
//! Ops that propagation handles without a rule get `None`: constants, iota,
//! calls, `sdy.reshard` and `sdy.sharding_group` (Shardy registers no rule
//! for them either).

use crate::diag::{DiagKind, Diagnostic, SrcPos};
use crate::ir::{Function, OpData, OpId, OpKind, Value};
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{OpShardingRule, RuleOptions};

/// The sharding rule of `op` in `f`, or `None` if the op has none.
pub fn rule_for_op(f: &Function, op: OpId) -> Result<Option<OpShardingRule>, Diagnostic> {
    rule_for_op_with(f, op, RuleOptions::default())
}

/// `rule_for_op` with explicit options.
pub fn rule_for_op_with(
    f: &Function,
    op: OpId,
    options: RuleOptions,
) -> Result<Option<OpShardingRule>, Diagnostic> {
    let data = f.ops.get(op.index()).ok_or_else(|| {
        Diagnostic::new(
            DiagKind::UndefinedName,
            f.pos,
            format!("function @{} has no op number {}", f.name, op.0),
        )
    })?;
    let shapes = OpShapes::of(f, data)?;
    RuleMaker {
        op: data,
        shapes,
        options,
    }
    .rule()
}

/// The shapes of an op's operands and results.
struct OpShapes<'f> {
    operands: Vec<&'f [i64]>,
    results: Vec<&'f [i64]>,
    /// Whether each operand is defined by a constant op.
    constant_operands: Vec<bool>,
}

impl<'f> OpShapes<'f> {
    fn of(f: &'f Function, op: &OpData) -> Result<OpShapes<'f>, Diagnostic> {
        let shape = |v: &Value| {
            f.values
                .get(v.index())
                .map(|d| d.ty.shape.as_slice())
                .ok_or_else(|| {
                    Diagnostic::new(
                        DiagKind::UndefinedName,
                        op.pos,
                        format!("{} uses an undefined value %{}", op.kind.name(), v.0),
                    )
                })
        };
        let constant = |v: &Value| match f.values.get(v.index()).map(|d| d.def) {
            Some(crate::ir::ValueDef::Result { op, .. }) => f
                .ops
                .get(op.index())
                .is_some_and(|o| matches!(o.kind, OpKind::Constant(_))),
            _ => false,
        };
        Ok(OpShapes {
            operands: op.operands.iter().map(shape).collect::<Result<_, _>>()?,
            results: op.results.iter().map(shape).collect::<Result<_, _>>()?,
            constant_operands: op.operands.iter().map(constant).collect(),
        })
    }
}

struct RuleMaker<'a> {
    op: &'a OpData,
    shapes: OpShapes<'a>,
    options: RuleOptions,
}

type RuleResult = Result<Option<OpShardingRule>, Diagnostic>;

impl<'a> RuleMaker<'a> {
    fn rule(&self) -> RuleResult {
        if let Some(def) = self.op.kind.def() {
            let shapes = crate::ir::ops::RuleShapes {
                operands: &self.shapes.operands,
                results: &self.shapes.results,
                constant_operands: &self.shapes.constant_operands,
            };
            // A custom call meshrun cannot interpret may carry its rule.
            if let OpKind::CustomCall(c) = &self.op.kind {
                if let Some(rule) = c
                    .written_rule(&self.op.attrs, &shapes)
                    .map_err(|e| self.error(e))?
                {
                    return Ok(Some(rule));
                }
            }
            return def.rule(&shapes, self.options).map_err(|e| self.error(e));
        }
        match &self.op.kind {
            OpKind::Unary(_) | OpKind::Binary(_) => self.pointwise_all_same_shape(),
            _ => Ok(None),
        }
    }

    fn error(&self, message: impl std::fmt::Display) -> Diagnostic {
        Diagnostic::new(
            DiagKind::Type,
            self.pos(),
            format!("{}: {message}", self.op.kind.name()),
        )
    }

    fn pos(&self) -> SrcPos {
        self.op.pos
    }

    fn build(&self, builder: &RuleBuilder) -> RuleResult {
        builder
            .build()
            .map(Some)
            .map_err(|e| self.error(format!("internal rule error: {e}")))
    }

    fn single_result(&self) -> Result<&'a [i64], Diagnostic> {
        match self.shapes.results.as_slice() {
            [r] => Ok(r),
            other => Err(self.error(format!("expected 1 result, got {}", other.len()))),
        }
    }

    fn builder(&self) -> RuleBuilder {
        RuleBuilder::for_shapes(&self.shapes.operands, &self.shapes.results)
    }

    /// Element-wise ops whose operands all have the result's shape.
    fn pointwise_all_same_shape(&self) -> RuleResult {
        let shape = self.single_result()?;
        self.check_same_shape_or_scalar(shape, false)?;
        self.build(self.builder().pointwise(shape))
    }

    /// Every operand has `shape` (or is a scalar, where `allow_scalars`).
    fn check_same_shape_or_scalar(
        &self,
        shape: &[i64],
        allow_scalars: bool,
    ) -> Result<(), Diagnostic> {
        for (k, s) in self.shapes.operands.iter().enumerate() {
            let scalar_ok = allow_scalars && s.is_empty();
            if *s != shape && !scalar_ok {
                return Err(self.error(format!(
                    "operand {k} has shape {s:?} but the op works on shape {shape:?}"
                )));
            }
        }
        Ok(())
    }
}
