//! The rule of `reshape`: compound factors found by walking both shapes
//! major to minor with gcds (seed 001, "compound factors").
//!
//! `8x4 -> 2x16` is `([ij, k])->([i, jk]) {i=2, j=4, k=4}`: the walk takes
//! the largest common piece of the current input and output dimensions as a
//! shared factor; where the two sides have no common piece it gives each
//! side its own factor and keeps going until the products of the factors on
//! both sides meet again. Size-1 dimensions get their own size-1 factor.
//! The factors, their order and sizes are exactly those Shardy produces
//! (checked against JAX for the shape pairs in `tests/rules_ops.rs`).

use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{FactorKind, OpShardingRule, TensorId};

/// Why a reshape has no rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReshapeRuleError {
    #[error("reshape from {from} elements to {to} elements")]
    ElementCountMismatch { from: i64, to: i64 },
    #[error("reshape has a dimension of negative size {0}")]
    NegativeDim(i64),
    /// A safety net: the walk gives up instead of looping forever.
    #[error("reshape from {from:?} to {to:?} could not be factored")]
    Unfactorable { from: Vec<i64>, to: Vec<i64> },
}

/// The rule of `reshape` from `in_shape` to `out_shape`; `None` when the
/// tensor has no elements (Shardy gives such reshapes no rule: there is
/// nothing to shard).
pub fn reshape_rule(
    in_shape: &[i64],
    out_shape: &[i64],
) -> Result<Option<OpShardingRule>, ReshapeRuleError> {
    if let Some(&d) = in_shape.iter().chain(out_shape).find(|&&d| d < 0) {
        return Err(ReshapeRuleError::NegativeDim(d));
    }
    let from = checked_product(in_shape);
    let to = checked_product(out_shape);
    if from != to || from.is_none() {
        return Err(ReshapeRuleError::ElementCountMismatch {
            from: from.unwrap_or(i64::MAX),
            to: to.unwrap_or(i64::MAX),
        });
    }
    if from == Some(0) {
        return Ok(None);
    }
    let mut walk = Walk::new(in_shape, out_shape);
    let unfactorable = || ReshapeRuleError::Unfactorable {
        from: in_shape.to_vec(),
        to: out_shape.to_vec(),
    };
    if !walk.run() {
        return Err(unfactorable());
    }
    walk.builder.build().map(Some).map_err(|_| unfactorable())
}

fn checked_product(shape: &[i64]) -> Option<i64> {
    shape.iter().try_fold(1i64, |acc, &d| acc.checked_mul(d))
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// One side (input or output) of the walk.
struct Side<'a> {
    shape: &'a [i64],
    /// The dimension being factored.
    dim: usize,
    /// Product of the sizes of the dimensions entered so far.
    dims_product: i64,
    /// Product of the sizes of the factors given to this side so far.
    factors_product: i64,
}

impl Side<'_> {
    fn has_dim(&self) -> bool {
        self.dim < self.shape.len()
    }

    fn at_unit_dim(&self) -> bool {
        self.has_dim() && self.shape[self.dim] == 1
    }

    /// Start factoring the current dimension if the previous one is done.
    fn enter_dim(&mut self) {
        if self.has_dim() && self.dims_product == self.factors_product {
            self.dims_product *= self.shape[self.dim];
        }
    }

    /// What is left of the current dimension to give factors to.
    fn remaining(&self) -> i64 {
        self.dims_product / self.factors_product
    }

    /// Move to the next dimension once the current one is fully factored.
    fn leave_dim_if_done(&mut self) {
        if self.has_dim() && self.dims_product == self.factors_product {
            self.dim += 1;
        }
    }
}

struct Walk<'a> {
    input: Side<'a>,
    output: Side<'a>,
    builder: RuleBuilder,
}

impl<'a> Walk<'a> {
    fn new(in_shape: &'a [i64], out_shape: &'a [i64]) -> Walk<'a> {
        let side = |shape| Side {
            shape,
            dim: 0,
            dims_product: 1,
            factors_product: 1,
        };
        Walk {
            input: side(in_shape),
            output: side(out_shape),
            builder: RuleBuilder::new(&[in_shape.len()], &[out_shape.len()]),
        }
    }

    fn factor(&mut self, size: i64, on_input: bool, on_output: bool) {
        let mut dims = Vec::with_capacity(2);
        if on_input {
            dims.push((TensorId::Operand(0), self.input.dim));
            self.input.factors_product *= size;
        }
        if on_output {
            dims.push((TensorId::Result(0), self.output.dim));
            self.output.factors_product *= size;
        }
        self.builder
            .add_factor(size, FactorKind::PassThrough, &dims);
    }

    /// Factor both shapes; false if the walk stopped making progress
    /// (which a valid pair of shapes never does: every step adds a factor
    /// of size > 1 or passes a size-1 dimension).
    fn run(&mut self) -> bool {
        let bits = |s: &[i64]| {
            s.iter()
                .map(|&d| 64 - d.leading_zeros() as usize + 1)
                .sum::<usize>()
        };
        let mut budget = 2 * (bits(self.input.shape) + bits(self.output.shape)) + 4;
        while self.input.has_dim() || self.output.has_dim() {
            if budget == 0 {
                return false;
            }
            budget -= 1;
            if self.input.at_unit_dim() {
                self.builder.add_factor(
                    1,
                    FactorKind::PassThrough,
                    &[(TensorId::Operand(0), self.input.dim)],
                );
                self.input.dim += 1;
                continue;
            }
            if self.output.at_unit_dim() {
                self.builder.add_factor(
                    1,
                    FactorKind::PassThrough,
                    &[(TensorId::Result(0), self.output.dim)],
                );
                self.output.dim += 1;
                continue;
            }
            self.input.enter_dim();
            self.output.enter_dim();
            let next_in = self.input.remaining();
            let next_out = self.output.remaining();
            let common = gcd(next_in, next_out);
            let (in_done, out_done) = (self.input.factors_product, self.output.factors_product);
            if in_done == out_done {
                if common > 1 {
                    self.factor(common, true, true);
                } else {
                    // Nothing in common: each side gets its own factor and
                    // the two diverge until their products meet again.
                    self.factor(next_in, true, false);
                    self.factor(next_out, false, true);
                }
            } else if in_done < out_done {
                let size = catch_up_factor(next_in, in_done, out_done, common);
                self.factor(size, true, false);
            } else {
                let size = catch_up_factor(next_out, out_done, in_done, common);
                self.factor(size, false, true);
            }
            self.input.leave_dim_if_done();
            self.output.leave_dim_if_done();
        }
        true
    }
}

/// The next factor of the side that is behind (`behind < ahead` are the
/// products of the factors given so far): the piece that makes both
/// products equal if the current dimension has it; else the part of the
/// dimension beyond what it shares with the other side, so the shared part
/// (`common`) stays available; else the whole rest of the dimension.
fn catch_up_factor(next: i64, behind: i64, ahead: i64, common: i64) -> i64 {
    if ahead % behind == 0 && next % (ahead / behind) == 0 {
        ahead / behind
    } else if next > common {
        next / common
    } else {
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dims(rule: &OpShardingRule, result: bool) -> Vec<Vec<usize>> {
        let m = if result {
            &rule.results[0]
        } else {
            &rule.operands[0]
        };
        m.dims.iter().map(|d| d.factors.clone()).collect()
    }

    #[test]
    fn split_and_merge_share_one_compound_factor_list() {
        let rule = reshape_rule(&[8, 4], &[2, 16]).expect("ok").expect("rule");
        assert_eq!(rule.factor_sizes, vec![2, 4, 4]);
        assert_eq!(dims(&rule, false), vec![vec![0, 1], vec![2]]);
        assert_eq!(dims(&rule, true), vec![vec![0], vec![1, 2]]);
    }

    #[test]
    fn element_count_mismatch_is_an_error() {
        assert_eq!(
            reshape_rule(&[8], &[3, 3]),
            Err(ReshapeRuleError::ElementCountMismatch { from: 8, to: 9 })
        );
    }

    #[test]
    fn empty_tensors_have_no_rule() {
        assert_eq!(reshape_rule(&[0, 4], &[4, 0]), Ok(None));
    }
}
