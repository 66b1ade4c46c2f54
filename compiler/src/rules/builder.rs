//! A builder that makes each op's rule a few lines (Shardy's
//! `OpShardingRuleBuilder`).
//!
//! Factors are numbered in the order they are added; that order is what the
//! notation prints (`i, j, k, ...`), so each op adds its factors in the
//! same order Shardy does. Dimensions left without a factor get a size-1
//! factor of their own when the rule is built, operands before results.

use crate::rules::rule::{DimMapping, FactorKind, OpShardingRule, TensorId, TensorMapping};

/// A dimension index given to the builder that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{tensor:?} has rank {rank}, so it has no dimension {dim}")]
pub struct DimOutOfRange {
    pub tensor: TensorId,
    pub dim: usize,
    pub rank: usize,
}

#[derive(Debug, Clone)]
pub struct RuleBuilder {
    factor_sizes: Vec<i64>,
    factor_kinds: Vec<FactorKind>,
    /// Shardy's `isBlocked`: propagation never moves a sharding through
    /// the factor (it may still be sharded where the user said so).
    factor_blocked: Vec<bool>,
    operands: Vec<Vec<Vec<usize>>>,
    results: Vec<Vec<Vec<usize>>>,
    /// The first bad dimension index seen; reported by `build`, so that
    /// the adding methods can chain without a `Result` each.
    error: Option<DimOutOfRange>,
}

impl RuleBuilder {
    /// A builder for an op whose operands and results have these ranks.
    pub fn new(operand_ranks: &[usize], result_ranks: &[usize]) -> RuleBuilder {
        RuleBuilder {
            factor_sizes: Vec::new(),
            factor_kinds: Vec::new(),
            factor_blocked: Vec::new(),
            operands: operand_ranks.iter().map(|&r| vec![Vec::new(); r]).collect(),
            results: result_ranks.iter().map(|&r| vec![Vec::new(); r]).collect(),
            error: None,
        }
    }

    /// A builder for an op whose operands and results have these shapes.
    pub fn for_shapes(operands: &[&[i64]], results: &[&[i64]]) -> RuleBuilder {
        let ranks = |shapes: &[&[i64]]| shapes.iter().map(|s| s.len()).collect::<Vec<_>>();
        RuleBuilder::new(&ranks(operands), &ranks(results))
    }

    pub fn num_factors(&self) -> usize {
        self.factor_sizes.len()
    }

    /// Add a factor of `size` and `kind` that composes the given
    /// dimensions (appended as their minor-most factor so far). Returns its
    /// index.
    pub fn add_factor(&mut self, size: i64, kind: FactorKind, dims: &[(TensorId, usize)]) -> usize {
        let factor = self.factor_sizes.len();
        self.factor_sizes.push(size);
        self.factor_kinds.push(kind);
        self.factor_blocked.push(false);
        for &(tensor, dim) in dims {
            self.map_dim(tensor, dim, factor);
        }
        factor
    }

    /// Shardy's `addFactor(operandDims, resultDims, size, kind)`: entry `k`
    /// of `operand_dims` is the dimension of operand `k` (or `None`), same
    /// for results. As in Shardy, a size-1 factor joins only dimensions
    /// that have no factor yet.
    pub fn add_factor_per_tensor(
        &mut self,
        size: i64,
        kind: FactorKind,
        operand_dims: &[Option<usize>],
        result_dims: &[Option<usize>],
    ) -> usize {
        let dims: Vec<(TensorId, usize)> = operand_dims
            .iter()
            .enumerate()
            .filter_map(|(k, d)| d.map(|d| (TensorId::Operand(k), d)))
            .chain(
                result_dims
                    .iter()
                    .enumerate()
                    .filter_map(|(k, d)| d.map(|d| (TensorId::Result(k), d))),
            )
            .filter(|&(t, d)| size != 1 || self.dim_factors(t, d).is_none_or(|f| f.is_empty()))
            .collect();
        self.add_factor(size, kind, &dims)
    }

    /// A factor that composes dimension `dim` of every non-scalar operand
    /// and result (scalars, e.g. a `clamp` bound, are skipped).
    pub fn add_factor_all(&mut self, dim: usize, size: i64, kind: FactorKind) -> usize {
        let dims: Vec<(TensorId, usize)> = self
            .tensor_ranks()
            .filter(|&(_, rank)| rank > 0)
            .map(|(id, _)| (id, dim))
            .collect();
        self.add_factor(size, kind, &dims)
    }

    /// One pass-through factor per dimension of `shape`, shared by every
    /// non-scalar tensor (element-wise ops).
    pub fn pointwise(&mut self, shape: &[i64]) -> &mut Self {
        self.pointwise_if(shape, |_| true, |_| FactorKind::PassThrough)
    }

    /// Like `pointwise`, with the kind of each dimension's factor chosen by
    /// `kind_of`.
    pub fn pointwise_with_kind(
        &mut self,
        shape: &[i64],
        kind_of: impl Fn(usize) -> FactorKind,
    ) -> &mut Self {
        self.pointwise_if(shape, |_| true, kind_of)
    }

    /// Like `pointwise_with_kind`, but only for the dimensions `keep`
    /// accepts; the others are left to get size-1 factors.
    pub fn pointwise_if(
        &mut self,
        shape: &[i64],
        keep: impl Fn(usize) -> bool,
        kind_of: impl Fn(usize) -> FactorKind,
    ) -> &mut Self {
        for (dim, &size) in shape.iter().enumerate() {
            if keep(dim) {
                self.add_factor_all(dim, size, kind_of(dim));
            }
        }
        self
    }

    /// A factor of the input size per dimension, shared by all tensors;
    /// dimensions whose input and output sizes differ get `mismatch_kind`
    /// (Shardy's `addPointwiseWithDiffTypeForMismatch`: slice, pad).
    pub fn pointwise_with_mismatch_kind(
        &mut self,
        in_shape: &[i64],
        out_shape: &[i64],
        mismatch_kind: FactorKind,
    ) -> &mut Self {
        for (dim, (&in_size, &out_size)) in in_shape.iter().zip(out_shape).enumerate() {
            let kind = if in_size == out_size {
                FactorKind::PassThrough
            } else {
                mismatch_kind
            };
            self.add_factor_all(dim, in_size, kind);
        }
        self
    }

    /// Block propagation through `factor` (Shardy's `isBlocked = true`).
    pub fn block(&mut self, factor: usize) -> &mut Self {
        if let Some(b) = self.factor_blocked.get_mut(factor) {
            *b = true;
        }
        self
    }

    /// [`RuleBuilder::pointwise_with_mismatch_kind`], with the mismatched
    /// dimensions' factors blocked when `block_mismatch` (Shardy's
    /// `mismatchFactorIsBlocked`).
    pub fn pointwise_with_mismatch_blocked(
        &mut self,
        in_shape: &[i64],
        out_shape: &[i64],
        mismatch_kind: FactorKind,
        block_mismatch: bool,
    ) -> &mut Self {
        for (dim, (&in_size, &out_size)) in in_shape.iter().zip(out_shape).enumerate() {
            if in_size == out_size {
                self.add_factor_all(dim, in_size, FactorKind::PassThrough);
            } else {
                let f = self.add_factor_all(dim, in_size, mismatch_kind);
                if block_mismatch {
                    self.block(f);
                }
            }
        }
        self
    }

    /// [`RuleBuilder::build`] as an op definition's rule returns it.
    pub fn build_rule(&self) -> Result<Option<OpShardingRule>, String> {
        self.build()
            .map(Some)
            .map_err(|e| format!("internal rule error: {e}"))
    }

    /// The finished rule. Every dimension still without a factor gets a new
    /// size-1 factor, operands first, then results, in dimension order.
    pub fn build(&self) -> Result<OpShardingRule, DimOutOfRange> {
        if let Some(err) = &self.error {
            return Err(err.clone());
        }
        let mut sizes = self.factor_sizes.clone();
        let mut kinds = self.factor_kinds.clone();
        let mut blocked = self.factor_blocked.clone();
        let mut finish = |tensors: &[Vec<Vec<usize>>]| -> Vec<TensorMapping> {
            tensors
                .iter()
                .map(|dims| {
                    let dims = dims
                        .iter()
                        .map(|factors| {
                            if factors.is_empty() {
                                sizes.push(1);
                                kinds.push(FactorKind::PassThrough);
                                blocked.push(false);
                                DimMapping::new(vec![sizes.len() - 1])
                            } else {
                                DimMapping::new(factors.clone())
                            }
                        })
                        .collect();
                    TensorMapping::new(dims)
                })
                .collect()
        };
        let operands = finish(&self.operands);
        let results = finish(&self.results);
        Ok(OpShardingRule {
            blocked_propagation: blocked,
            factor_sizes: sizes,
            factor_kinds: kinds,
            operands,
            results,
            is_custom: false,
        })
    }

    fn tensor_ranks(&self) -> impl Iterator<Item = (TensorId, usize)> + '_ {
        let operands = self
            .operands
            .iter()
            .enumerate()
            .map(|(k, t)| (TensorId::Operand(k), t.len()));
        let results = self
            .results
            .iter()
            .enumerate()
            .map(|(k, t)| (TensorId::Result(k), t.len()));
        operands.chain(results)
    }

    fn dim_factors(&self, tensor: TensorId, dim: usize) -> Option<&Vec<usize>> {
        match tensor {
            TensorId::Operand(k) => self.operands.get(k)?.get(dim),
            TensorId::Result(k) => self.results.get(k)?.get(dim),
        }
    }

    fn map_dim(&mut self, tensor: TensorId, dim: usize, factor: usize) {
        let dims = match tensor {
            TensorId::Operand(k) => self.operands.get_mut(k),
            TensorId::Result(k) => self.results.get_mut(k),
        };
        let rank = dims.as_ref().map_or(0, |d| d.len());
        match dims.and_then(|d| d.get_mut(dim)) {
            Some(factors) => factors.push(factor),
            None => {
                self.error
                    .get_or_insert(DimOutOfRange { tensor, dim, rank });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unmapped_dims_get_size_one_factors_operands_first() {
        let mut b = RuleBuilder::new(&[2], &[2]);
        b.add_factor(
            4,
            FactorKind::PassThrough,
            &[(TensorId::Operand(0), 0), (TensorId::Result(0), 0)],
        );
        let rule = b.build().expect("valid dims");
        assert_eq!(rule.factor_sizes, vec![4, 1, 1]);
        assert_eq!(rule.operands[0].dims[1].factors, vec![1]);
        assert_eq!(rule.results[0].dims[1].factors, vec![2]);
        assert!(rule.check().is_ok());
    }

    #[test]
    fn bad_dimension_is_reported_not_panicked() {
        let mut b = RuleBuilder::new(&[1], &[1]);
        b.add_factor(4, FactorKind::PassThrough, &[(TensorId::Operand(0), 3)]);
        let err = b.build().expect_err("dimension 3 of a rank-1 tensor");
        assert_eq!(err.dim, 3);
        assert_eq!(err.rank, 1);
    }

    #[test]
    fn scalars_are_skipped_by_shared_factors() {
        let mut b = RuleBuilder::new(&[0, 2, 0], &[2]);
        b.pointwise(&[8, 16]);
        let rule = b.build().expect("valid");
        assert!(rule.operands[0].is_scalar());
        assert_eq!(rule.operands[1].dims[1].factors, vec![1]);
        assert_eq!(rule.num_factors(), 2);
    }
}
