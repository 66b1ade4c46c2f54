//! Which ops compute on partial results. An op whose result is annotated
//! unreduced may run on its operands' partial values instead of their
//! reduced ones only where that gives a partial result of the same
//! reduction: for sums, ops linear in their operands together (add,
//! subtract, negate, moves of elements) or in one of them (multiply,
//! dot_general); for maxima and minima, ops that preserve order (the same
//! extremum, monotone non-decreasing functions, moves of elements).
//! Anything else gets its operands whole, and its result becomes
//! unreduced afterwards if its annotation says so.

use crate::ir::{BinaryOp, OpKind, UnaryOp};
use crate::sharding::ReductionOp;

/// How partial operands pass through an op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PartialPass {
    /// Every operand partial along the same axes (those that are not are
    /// made so: zeros for sums, copies for extrema): `a + b`.
    Joint,
    /// At most one operand partial, the others whole: `a * b`.
    One,
    /// No operand partial.
    Reduce,
}

/// Whether `u` never decreases: f(max x_i) = max f(x_i), and the same for
/// minima.
fn monotone(u: UnaryOp) -> bool {
    use UnaryOp::*;
    matches!(
        u,
        Exp | Expm1
            | Log
            | Log1p
            | Tanh
            | Logistic
            | Sqrt
            | Cbrt
            | Floor
            | Ceil
            | RoundNearestEven
            | RoundNearestAfz
            | Erf
            | Asinh
            | Atan
            | Sinh
    )
}

/// Ops that only move, copy or convert elements, each element of the
/// result one element of one operand.
fn moves_elements(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::Reshape(_)
            | OpKind::Transpose(_)
            | OpKind::BroadcastInDim(_)
            | OpKind::Slice(_)
            | OpKind::Concatenate(_)
            | OpKind::Reverse(_)
    )
}

/// How partial results of `reduction` pass through `kind` (whose result
/// is a float if `float_result`: a conversion to floats is linear, one to
/// integers rounds each partial value).
pub(crate) fn partial_pass(
    kind: &OpKind,
    reduction: ReductionOp,
    float_result: bool,
) -> PartialPass {
    if moves_elements(kind) {
        return PartialPass::Joint;
    }
    match (reduction, kind) {
        (ReductionOp::Sum, OpKind::Convert(_)) if float_result => PartialPass::Joint,
        (ReductionOp::Max | ReductionOp::Min, OpKind::Convert(_)) => PartialPass::Joint,
        (ReductionOp::Sum, OpKind::Unary(UnaryOp::Negate))
        | (ReductionOp::Sum, OpKind::Binary(BinaryOp::Add | BinaryOp::Subtract))
        | (ReductionOp::Max, OpKind::Binary(BinaryOp::Maximum))
        | (ReductionOp::Min, OpKind::Binary(BinaryOp::Minimum)) => PartialPass::Joint,
        (ReductionOp::Max | ReductionOp::Min, OpKind::Unary(u)) if monotone(*u) => {
            PartialPass::Joint
        }
        (ReductionOp::Sum, OpKind::Binary(BinaryOp::Multiply) | OpKind::DotGeneral(_)) => {
            PartialPass::One
        }
        _ => PartialPass::Reduce,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_pass_linear_ops_and_extrema_pass_monotone_ones() {
        let add = OpKind::Binary(BinaryOp::Add);
        let exp = OpKind::Unary(UnaryOp::Exp);
        let neg = OpKind::Unary(UnaryOp::Negate);
        let mul = OpKind::Binary(BinaryOp::Multiply);
        assert_eq!(
            partial_pass(&add, ReductionOp::Sum, true),
            PartialPass::Joint
        );
        assert_eq!(
            partial_pass(&add, ReductionOp::Max, true),
            PartialPass::Reduce
        );
        assert_eq!(
            partial_pass(&exp, ReductionOp::Sum, true),
            PartialPass::Reduce
        );
        assert_eq!(
            partial_pass(&exp, ReductionOp::Max, true),
            PartialPass::Joint
        );
        // Negation turns maxima into minima.
        assert_eq!(
            partial_pass(&neg, ReductionOp::Max, true),
            PartialPass::Reduce
        );
        assert_eq!(partial_pass(&mul, ReductionOp::Sum, true), PartialPass::One);
        assert_eq!(
            partial_pass(
                &OpKind::Reshape(crate::ir::ops::reshape::Reshape),
                ReductionOp::Min,
                true
            ),
            PartialPass::Joint
        );
        // Rounding each partial sum to an integer is not rounding the sum.
        assert_eq!(
            partial_pass(
                &OpKind::Convert(crate::ir::ops::convert::Convert),
                ReductionOp::Sum,
                false
            ),
            PartialPass::Reduce
        );
        assert_eq!(
            partial_pass(
                &OpKind::Convert(crate::ir::ops::convert::Convert),
                ReductionOp::Sum,
                true
            ),
            PartialPass::Joint
        );
    }
}
