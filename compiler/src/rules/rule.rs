//! The op sharding rule as plain data (Shardy's `OpShardingRuleAttr`).
//!
//! A rule names the *factors* of an op (abstract iteration dimensions with a
//! size) and says, for every operand and result dimension, which factors
//! compose it, major to minor. Propagation works on factors instead of
//! dimensions, so that one algorithm serves every op kind (SPEC §4).

/// How sharding a factor affects the computation (Shardy's `FactorType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FactorKind {
    /// Appears in operands and results alike (batch, non-contracting and
    /// element-wise dims): sharding it keeps the op local.
    #[default]
    PassThrough,
    /// Appears in operands only (contracting dims, reduced dims): sharding
    /// it makes the results partial and needs an all-reduce.
    Reduction,
    /// The op cannot be computed locally if the factor is sharded (e.g. the
    /// concatenated dimension): it must be replicated before the op.
    NeedReplication,
    /// Sharding it needs data to move between devices (a collective
    /// permute) but no replication, e.g. a sliced or padded dimension.
    Permutation,
}

impl FactorKind {
    pub const ALL: [FactorKind; 4] = [
        FactorKind::PassThrough,
        FactorKind::Reduction,
        FactorKind::NeedReplication,
        FactorKind::Permutation,
    ];

    /// The keyword of the factor list in the rule notation
    /// (`reduction={...}`); `None` for pass-through factors, which are not
    /// listed.
    pub fn keyword(self) -> Option<&'static str> {
        match self {
            FactorKind::PassThrough => None,
            FactorKind::Reduction => Some("reduction"),
            FactorKind::NeedReplication => Some("need_replication"),
            FactorKind::Permutation => Some("permutation"),
        }
    }
}

/// The factors of one tensor dimension, major to minor. Empty only while a
/// rule is being built: a built rule gives every dimension at least one
/// factor (a size-1 factor if nothing else).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct DimMapping {
    pub factors: Vec<usize>,
}

impl DimMapping {
    pub fn new(factors: Vec<usize>) -> DimMapping {
        DimMapping { factors }
    }

    /// Whether `factor` is the last (minor-most) factor of this dimension:
    /// only that factor may be sharded non-divisibly (padded).
    pub fn is_minor_most(&self, factor: usize) -> bool {
        self.factors.last() == Some(&factor)
    }

    /// A dimension made of several factors (a reshape merge or split).
    pub fn is_compound(&self) -> bool {
        self.factors.len() > 1
    }
}

/// The factors of every dimension of one operand or result.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct TensorMapping {
    pub dims: Vec<DimMapping>,
}

impl TensorMapping {
    pub fn new(dims: Vec<DimMapping>) -> TensorMapping {
        TensorMapping { dims }
    }

    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    pub fn is_scalar(&self) -> bool {
        self.dims.is_empty()
    }

    /// The dimension that `factor` is part of, if this tensor has it.
    pub fn dim_of_factor(&self, factor: usize) -> Option<usize> {
        self.dims.iter().position(|d| d.factors.contains(&factor))
    }

    pub fn contains_factor(&self, factor: usize) -> bool {
        self.dim_of_factor(factor).is_some()
    }

    /// Every factor of this tensor, dimension by dimension, major to minor.
    pub fn factors(&self) -> impl Iterator<Item = usize> + '_ {
        self.dims.iter().flat_map(|d| d.factors.iter().copied())
    }
}

/// Which operand or result of an op a mapping belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TensorId {
    Operand(usize),
    Result(usize),
}

/// An op's sharding rule. Factors are numbered `0..num_factors()`; the
/// notation names them `i, j, k, ...` in that order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct OpShardingRule {
    /// The size of every factor.
    pub factor_sizes: Vec<i64>,
    /// The kind of every factor (same length as `factor_sizes`).
    pub factor_kinds: Vec<FactorKind>,
    /// Factors along which propagation must not move shardings at all
    /// (Shardy's `blocked_propagation`). Orthogonal to the kind; no op of
    /// meshrun's op set uses it, but rules written by others may.
    pub blocked_propagation: Vec<bool>,
    pub operands: Vec<TensorMapping>,
    pub results: Vec<TensorMapping>,
    /// A rule the user attached to the op (`, custom` in the notation)
    /// rather than one derived from the op kind.
    pub is_custom: bool,
}

impl OpShardingRule {
    /// The identity rule of `num_operands` operands and `num_results`
    /// results of the same shape: one pass-through factor per dimension
    /// (Shardy's `createIdentityShardingRule`).
    pub fn identity(shape: &[i64], num_operands: usize, num_results: usize) -> OpShardingRule {
        let mapping =
            TensorMapping::new((0..shape.len()).map(|d| DimMapping::new(vec![d])).collect());
        OpShardingRule {
            factor_sizes: shape.to_vec(),
            factor_kinds: vec![FactorKind::PassThrough; shape.len()],
            blocked_propagation: vec![false; shape.len()],
            operands: vec![mapping.clone(); num_operands],
            results: vec![mapping; num_results],
            is_custom: false,
        }
    }

    pub fn num_factors(&self) -> usize {
        self.factor_sizes.len()
    }

    pub fn num_operands(&self) -> usize {
        self.operands.len()
    }

    pub fn num_results(&self) -> usize {
        self.results.len()
    }

    pub fn num_tensors(&self) -> usize {
        self.operands.len() + self.results.len()
    }

    pub fn factor_size(&self, factor: usize) -> i64 {
        self.factor_sizes[factor]
    }

    pub fn kind(&self, factor: usize) -> FactorKind {
        self.factor_kinds[factor]
    }

    pub fn is_pass_through(&self, factor: usize) -> bool {
        self.kind(factor) == FactorKind::PassThrough
    }

    pub fn is_reduction(&self, factor: usize) -> bool {
        self.kind(factor) == FactorKind::Reduction
    }

    pub fn is_need_replication(&self, factor: usize) -> bool {
        self.kind(factor) == FactorKind::NeedReplication
    }

    pub fn is_permutation(&self, factor: usize) -> bool {
        self.kind(factor) == FactorKind::Permutation
    }

    pub fn is_blocked(&self, factor: usize) -> bool {
        self.blocked_propagation
            .get(factor)
            .copied()
            .unwrap_or(false)
    }

    /// The factors of `kind`, in index order.
    pub fn factors_of_kind(&self, kind: FactorKind) -> Vec<usize> {
        (0..self.num_factors())
            .filter(|&f| self.kind(f) == kind)
            .collect()
    }

    /// The blocked-propagation factors, in index order.
    pub fn blocked_factors(&self) -> Vec<usize> {
        (0..self.num_factors())
            .filter(|&f| self.is_blocked(f))
            .collect()
    }

    /// The mapping of an operand or result.
    pub fn mapping(&self, id: TensorId) -> Option<&TensorMapping> {
        match id {
            TensorId::Operand(i) => self.operands.get(i),
            TensorId::Result(i) => self.results.get(i),
        }
    }

    /// The mapping of tensor number `index` counting operands first, then
    /// results (Shardy's tensor numbering).
    pub fn tensor(&self, index: usize) -> Option<&TensorMapping> {
        self.mapping(self.tensor_id(index))
    }

    /// The operand/result of flat tensor number `index`.
    pub fn tensor_id(&self, index: usize) -> TensorId {
        if index < self.operands.len() {
            TensorId::Operand(index)
        } else {
            TensorId::Result(index - self.operands.len())
        }
    }

    /// All mappings with their ids: operands, then results.
    pub fn tensors(&self) -> impl Iterator<Item = (TensorId, &TensorMapping)> {
        let operands = self
            .operands
            .iter()
            .enumerate()
            .map(|(i, m)| (TensorId::Operand(i), m));
        let results = self
            .results
            .iter()
            .enumerate()
            .map(|(i, m)| (TensorId::Result(i), m));
        operands.chain(results)
    }

    /// The tensors that have `factor`, with the dimension it is part of.
    pub fn tensors_with_factor(
        &self,
        factor: usize,
    ) -> impl Iterator<Item = (TensorId, usize)> + '_ {
        self.tensors()
            .filter_map(move |(id, m)| m.dim_of_factor(factor).map(|d| (id, d)))
    }

    /// Whether every non-scalar operand and result has `factor` (scalars,
    /// like a `reduce` init value or a `pad` value, are ignored).
    pub fn is_factor_in_all_non_scalar_tensors(&self, factor: usize) -> bool {
        self.tensors()
            .filter(|(_, m)| !m.is_scalar())
            .all(|(_, m)| m.contains_factor(factor))
    }

    /// A pass-through factor that every non-scalar tensor has: sharding it
    /// splits the op into fully independent pieces.
    pub fn is_batching_factor(&self, factor: usize) -> bool {
        self.is_pass_through(factor) && self.is_factor_in_all_non_scalar_tensors(factor)
    }

    /// Whether some dimension is made of more than one factor.
    pub fn has_compound_dims(&self) -> bool {
        self.tensors()
            .any(|(_, m)| m.dims.iter().any(DimMapping::is_compound))
    }

    /// Checks the invariants a rule must satisfy: one kind and one blocked
    /// flag per factor, every factor index in range and used at most once
    /// per tensor, no negative factor size, no empty dimension mapping.
    pub fn check(&self) -> Result<(), String> {
        let n = self.num_factors();
        if self.factor_kinds.len() != n || self.blocked_propagation.len() != n {
            return Err(format!(
                "rule has {n} factor sizes but {} kinds and {} blocked flags",
                self.factor_kinds.len(),
                self.blocked_propagation.len()
            ));
        }
        // Size 0 is allowed: Shardy gives ops on empty tensors such factors.
        if let Some((f, size)) = self.factor_sizes.iter().enumerate().find(|(_, &s)| s < 0) {
            return Err(format!("factor {f} has negative size {size}"));
        }
        for (id, mapping) in self.tensors() {
            let mut seen = vec![false; n];
            for (d, dim) in mapping.dims.iter().enumerate() {
                if dim.factors.is_empty() {
                    return Err(format!("{id:?} dimension {d} has no factor"));
                }
                for &f in &dim.factors {
                    match seen.get_mut(f) {
                        None => {
                            return Err(format!(
                                "{id:?} dimension {d} uses factor {f}, but the rule has {n} factors"
                            ))
                        }
                        Some(true) => return Err(format!("{id:?} uses factor {f} more than once")),
                        Some(s) => *s = true,
                    }
                }
            }
        }
        Ok(())
    }
}

/// Choices that change which rule an op gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RuleOptions {
    /// Shardy's conservative propagation: a sliced or padded dimension's
    /// factor is blocked, and a concatenated dimension gets no shared
    /// factor (each side its own size-1 factor), so shardings never move
    /// through one.
    pub conservative: bool,
}
