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
use crate::ir::{DotDims, Function, OpData, OpId, OpKind, Value};
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{FactorKind, OpShardingRule, RuleOptions};

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
            let shapes = crate::ops::RuleShapes {
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
            OpKind::Unary(_) | OpKind::Binary(_) | OpKind::ShardingConstraint { .. } => {
                self.pointwise_all_same_shape()
            }
            OpKind::Reshard { .. } | OpKind::ShardingGroup { .. } => Ok(None),
            OpKind::DotGeneral { dims, is_dot, .. } => self.dot_general(dims, *is_dot),
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

    fn expect_counts(&self, operands: usize, results: usize) -> Result<(), Diagnostic> {
        let (got_ops, got_res) = (self.shapes.operands.len(), self.shapes.results.len());
        if got_ops != operands || got_res != results {
            return Err(self.error(format!(
                "expected {operands} operand(s) and {results} result(s), got {got_ops} and {got_res}"
            )));
        }
        Ok(())
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
    /// Batch factors (lhs, rhs, result), then the free dimensions of the
    /// lhs, then of the rhs (each with its result dimension), then the
    /// contracting factors (lhs, rhs; reduction).
    fn dot_general(&self, dims: &DotDims, is_dot: bool) -> RuleResult {
        self.expect_counts(2, 1)?;
        let (lhs, rhs, out) = (
            self.shapes.operands[0],
            self.shapes.operands[1],
            self.shapes.results[0],
        );
        let plain;
        let dims = if is_dot {
            plain = DotDims::for_dot(lhs.len());
            &plain
        } else {
            dims
        };
        let lhs_batch = self.dim_list(&dims.lhs_batch, lhs.len(), "lhs batching")?;
        let rhs_batch = self.dim_list(&dims.rhs_batch, rhs.len(), "rhs batching")?;
        let lhs_contract = self.dim_list(&dims.lhs_contract, lhs.len(), "lhs contracting")?;
        let rhs_contract = self.dim_list(&dims.rhs_contract, rhs.len(), "rhs contracting")?;
        if lhs_batch.len() != rhs_batch.len() || lhs_contract.len() != rhs_contract.len() {
            return Err(
                self.error("lhs and rhs must have as many batching and contracting dimensions")
            );
        }
        let lhs_free: Vec<usize> = (0..lhs.len())
            .filter(|d| !lhs_batch.contains(d) && !lhs_contract.contains(d))
            .collect();
        let rhs_free: Vec<usize> = (0..rhs.len())
            .filter(|d| !rhs_batch.contains(d) && !rhs_contract.contains(d))
            .collect();
        let out_rank = lhs_batch.len() + lhs_free.len() + rhs_free.len();
        if out.len() != out_rank {
            return Err(self.error(format!(
                "result must have rank {out_rank}, got {}",
                out.len()
            )));
        }
        let mut b = self.builder();
        let mut out_dim = 0;
        for (&l, &r) in lhs_batch.iter().zip(&rhs_batch) {
            self.check_sizes_match(lhs[l], rhs[r], "batching")?;
            b.add_factor_per_tensor(
                lhs[l],
                FactorKind::PassThrough,
                &[Some(l), Some(r)],
                &[Some(out_dim)],
            );
            out_dim += 1;
        }
        for &l in &lhs_free {
            b.add_factor_per_tensor(
                lhs[l],
                FactorKind::PassThrough,
                &[Some(l), None],
                &[Some(out_dim)],
            );
            out_dim += 1;
        }
        for &r in &rhs_free {
            b.add_factor_per_tensor(
                rhs[r],
                FactorKind::PassThrough,
                &[None, Some(r)],
                &[Some(out_dim)],
            );
            out_dim += 1;
        }
        for (&l, &r) in lhs_contract.iter().zip(&rhs_contract) {
            self.check_sizes_match(lhs[l], rhs[r], "contracting")?;
            b.add_factor_per_tensor(lhs[l], FactorKind::Reduction, &[Some(l), Some(r)], &[None]);
        }
        self.build(&b)
    }

    fn check_sizes_match(&self, lhs: i64, rhs: i64, what: &str) -> Result<(), Diagnostic> {
        if lhs != rhs {
            return Err(self.error(format!(
                "{what} dimensions have sizes {lhs} (lhs) and {rhs} (rhs)"
            )));
        }
        Ok(())
    }

    /// Distinct dimension indices below `rank`.
    fn dim_list(&self, dims: &[i64], rank: usize, what: &str) -> Result<Vec<usize>, Diagnostic> {
        let mut out: Vec<usize> = Vec::with_capacity(dims.len());
        for &d in dims {
            match usize::try_from(d)
                .ok()
                .filter(|&d| d < rank && !out.contains(&d))
            {
                Some(d) => out.push(d),
                None => {
                    return Err(self.error(format!(
                        "{what} dimension {d} is repeated or out of range for rank {rank}"
                    )))
                }
            }
        }
        Ok(out)
    }
}
