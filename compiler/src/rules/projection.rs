//! Projection between dimension shardings and factor shardings (Shardy's
//! `ShardingProjection`, SPEC §5).
//!
//! Propagation does not look at dimensions: it projects every operand and
//! result sharding onto the op's factors, decides per factor, and projects
//! back. Projecting a dimension walks its axes major to minor and gives
//! each factor the axes, or gcd-sized sub-axes, that divide what is left of
//! it; the minor-most factor of a dimension takes everything that remains
//! (it alone may be sharded non-divisibly, with padding). When a
//! non-minor-most factor meets an axis it shares nothing with, that axis
//! and all after it are *overflow* axes of the factor: kept only so that
//! projecting back restores the dimension, and the factors after it are
//! closed.
//!
//! `tensor<8>` on `{"x"}` (x=4) under `([ij])->([i, j]) {i=2, j=4}`
//! projects to `i: ["x":(1)2], j: ["x":(2)2]`; giving the result the same
//! factor shardings projects back to `[{"x":(1)2}, {"x":(2)2}]`.

use std::collections::BTreeMap;

use crate::diag::{DiagKind, Diagnostic, SrcPos};
use crate::rules::axis_algebra::{self, axis_size, push_or_merge, PrefixStatus, UnknownAxis};
use crate::rules::rule::{OpShardingRule, TensorId, TensorMapping};
use crate::sharding::{AxisRef, DimSharding, Mesh, MeshRef, ReductionOp, SubAxis, TensorSharding};

/// The axes along which one tensor shards one factor.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FactorSharding {
    /// Major to minor.
    pub axes: Vec<AxisRef>,
    /// Whether propagation may not add axes (the dimension was closed, or
    /// an earlier factor of the dimension overflowed).
    pub is_closed: bool,
    /// Whether this is the last factor of its dimension.
    pub is_minor_most: bool,
    /// Axes of the dimension that did not fit this non-minor-most factor
    /// (the first one shares no divisor with what was left of it), kept to
    /// restore the dimension sharding when projecting back.
    pub overflow_axes: Vec<AxisRef>,
}

/// The factor shardings of one operand or result.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TensorFactorShardings {
    /// Factor index → sharding, for the factors this tensor has. As in
    /// Shardy, a dimension whose factor overflowed records only the next
    /// factor (closed, empty); later factors of that dimension are absent.
    pub factors: BTreeMap<usize, FactorSharding>,
    pub replicated: Vec<AxisRef>,
    pub unreduced: Vec<AxisRef>,
    pub unreduced_op: ReductionOp,
}

/// The factor shardings of all operands and results of one op.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ShardingProjection {
    pub operands: Vec<TensorFactorShardings>,
    pub results: Vec<TensorFactorShardings>,
}

/// Which operands and results an update changed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UpdatedTensors {
    pub operands: Vec<bool>,
    pub results: Vec<bool>,
}

impl UpdatedTensors {
    pub fn any(&self) -> bool {
        self.operands.iter().chain(&self.results).any(|&b| b)
    }

    /// Mark everything `other` marks too.
    pub fn merge(&mut self, other: &UpdatedTensors) {
        for (a, b) in self.operands.iter_mut().zip(&other.operands) {
            *a |= *b;
        }
        for (a, b) in self.results.iter_mut().zip(&other.results) {
            *a |= *b;
        }
    }
}

/// Why shardings could not be projected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProjectionError {
    #[error("the rule has {expected} {what}s but {got} shardings were given")]
    TensorCount {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    #[error("{tensor:?} has rank {rank} but its sharding has {sharding_rank} dimensions")]
    RankMismatch {
        tensor: TensorId,
        rank: usize,
        sharding_rank: usize,
    },
    #[error(transparent)]
    UnknownAxis(#[from] UnknownAxis),
    #[error("factor {factor} has no sharding in this tensor")]
    MissingFactor { factor: usize },
    #[error("factor {factor} of size {factor_size} is sharded {sharded_size} ways but is not the minor-most factor of its dimension")]
    NonDivisibleFactor {
        factor: usize,
        factor_size: i64,
        sharded_size: i64,
    },
}

impl ProjectionError {
    /// This error as a diagnostic at the op's position.
    pub fn into_diagnostic(self, pos: SrcPos) -> Diagnostic {
        Diagnostic::new(DiagKind::Sharding, pos, self.to_string())
    }
}

impl From<ProjectionError> for Diagnostic {
    fn from(e: ProjectionError) -> Diagnostic {
        e.into_diagnostic(SrcPos::UNKNOWN)
    }
}

impl ShardingProjection {
    /// Project the operand and result shardings onto the factors of `rule`.
    /// A missing sharding (`None`) is fully open, or fully closed with
    /// `closed_if_missing`.
    pub fn build(
        rule: &OpShardingRule,
        operands: &[Option<&TensorSharding>],
        results: &[Option<&TensorSharding>],
        mesh: &Mesh,
        closed_if_missing: bool,
    ) -> Result<ShardingProjection, ProjectionError> {
        let project = |what,
                       mappings: &[TensorMapping],
                       shardings: &[Option<&TensorSharding>],
                       id: fn(usize) -> TensorId| {
            if mappings.len() != shardings.len() {
                return Err(ProjectionError::TensorCount {
                    what,
                    expected: mappings.len(),
                    got: shardings.len(),
                });
            }
            mappings
                .iter()
                .zip(shardings)
                .enumerate()
                .map(|(k, (mapping, sharding))| {
                    project_tensor(
                        id(k),
                        mapping,
                        *sharding,
                        &rule.factor_sizes,
                        mesh,
                        closed_if_missing,
                    )
                })
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(ShardingProjection {
            operands: project("operand", &rule.operands, operands, TensorId::Operand)?,
            results: project("result", &rule.results, results, TensorId::Result)?,
        })
    }

    /// A projection in which every tensor shards each of its factors along
    /// `axes_per_factor[factor]`, all closed, without overflow.
    pub fn from_axes_per_factor(
        axes_per_factor: &[Vec<AxisRef>],
        rule: &OpShardingRule,
    ) -> ShardingProjection {
        let project = |mapping: &TensorMapping| {
            let mut t = TensorFactorShardings::default();
            for dim in &mapping.dims {
                for &factor in &dim.factors {
                    t.factors.insert(
                        factor,
                        FactorSharding {
                            axes: axes_per_factor.get(factor).cloned().unwrap_or_default(),
                            is_closed: true,
                            is_minor_most: dim.is_minor_most(factor),
                            overflow_axes: Vec::new(),
                        },
                    );
                }
            }
            t
        };
        ShardingProjection {
            operands: rule.operands.iter().map(project).collect(),
            results: rule.results.iter().map(project).collect(),
        }
    }

    pub fn num_tensors(&self) -> usize {
        self.operands.len() + self.results.len()
    }

    pub fn get(&self, id: TensorId) -> Option<&TensorFactorShardings> {
        match id {
            TensorId::Operand(k) => self.operands.get(k),
            TensorId::Result(k) => self.results.get(k),
        }
    }

    pub fn get_mut(&mut self, id: TensorId) -> Option<&mut TensorFactorShardings> {
        match id {
            TensorId::Operand(k) => self.operands.get_mut(k),
            TensorId::Result(k) => self.results.get_mut(k),
        }
    }

    /// All tensors with their ids: operands, then results.
    pub fn tensors(&self) -> impl Iterator<Item = (TensorId, &TensorFactorShardings)> {
        let operands = self
            .operands
            .iter()
            .enumerate()
            .map(|(k, t)| (TensorId::Operand(k), t));
        let results = self
            .results
            .iter()
            .enumerate()
            .map(|(k, t)| (TensorId::Result(k), t));
        operands.chain(results)
    }

    fn update_each(
        &mut self,
        mut f: impl FnMut(&mut TensorFactorShardings) -> bool,
    ) -> UpdatedTensors {
        UpdatedTensors {
            operands: self.operands.iter_mut().map(&mut f).collect(),
            results: self.results.iter_mut().map(&mut f).collect(),
        }
    }

    /// Extend `factor` to `new_axes` in every tensor whose axes for it are
    /// a strict prefix of `new_axes`.
    pub fn expand_sharding(&mut self, factor: usize, new_axes: &[AxisRef]) -> UpdatedTensors {
        self.update_each(|t| t.expand_sharding_axes(factor, new_axes))
    }

    /// Set `factor` to `new_axes` and `new_overflow` in every tensor that
    /// has it.
    pub fn update_sharding(
        &mut self,
        factor: usize,
        new_axes: &[AxisRef],
        new_overflow: &[AxisRef],
    ) -> UpdatedTensors {
        self.update_each(|t| t.update_sharding_axes(factor, new_axes, new_overflow))
    }

    /// For every factor, the greatest common prefix of its axes over the
    /// tensors that have it (empty for factors no tensor has).
    pub fn greatest_common_prefix_axes(&self, num_factors: usize) -> Vec<Vec<AxisRef>> {
        let mut out: Vec<Option<Vec<AxisRef>>> = vec![None; num_factors];
        for (_, t) in self.tensors() {
            for (&factor, fs) in &t.factors {
                let Some(slot) = out.get_mut(factor) else {
                    continue;
                };
                *slot = Some(match slot.take() {
                    None => fs.axes.clone(),
                    Some(prev) => axis_algebra::greatest_common_prefix_of_lists(&prev, &fs.axes),
                });
            }
        }
        out.into_iter().map(Option::unwrap_or_default).collect()
    }

    /// Which tensors have overflow axes in some factor.
    pub fn tensors_with_overflow_axes(&self) -> UpdatedTensors {
        let has =
            |t: &TensorFactorShardings| t.factors.values().any(|f| !f.overflow_axes.is_empty());
        UpdatedTensors {
            operands: self.operands.iter().map(has).collect(),
            results: self.results.iter().map(has).collect(),
        }
    }

    /// Project tensor `id` back to a dimension sharding over `mesh_ref`.
    pub fn to_tensor_sharding(
        &self,
        id: TensorId,
        rule: &OpShardingRule,
        mesh_ref: &MeshRef,
        mesh: &Mesh,
    ) -> Result<TensorSharding, ProjectionError> {
        let (tensor, mapping) = match (self.get(id), rule.mapping(id)) {
            (Some(t), Some(m)) => (t, m),
            _ => {
                let (what, expected, got) = match id {
                    TensorId::Operand(k) => ("operand", rule.num_operands(), k),
                    TensorId::Result(k) => ("result", rule.num_results(), k),
                };
                return Err(ProjectionError::TensorCount {
                    what,
                    expected,
                    got,
                });
            }
        };
        tensor.to_tensor_sharding(mapping, &rule.factor_sizes, mesh_ref, mesh)
    }
}

impl TensorFactorShardings {
    /// Extend `factor` to `new_axes` if this tensor has it and its current
    /// axes are a strict prefix of `new_axes`. Returns whether it changed.
    pub fn expand_sharding_axes(&mut self, factor: usize, new_axes: &[AxisRef]) -> bool {
        match self.factors.get_mut(&factor) {
            Some(fs)
                if axis_algebra::prefix_status(&fs.axes, new_axes)
                    == PrefixStatus::StrictPrefix =>
            {
                fs.axes = new_axes.to_vec();
                true
            }
            _ => false,
        }
    }

    /// Set `factor` to `new_axes` and `new_overflow` if this tensor has it
    /// and they differ. Returns whether it changed.
    pub fn update_sharding_axes(
        &mut self,
        factor: usize,
        new_axes: &[AxisRef],
        new_overflow: &[AxisRef],
    ) -> bool {
        match self.factors.get_mut(&factor) {
            Some(fs) if fs.axes != new_axes || fs.overflow_axes != new_overflow => {
                fs.axes = new_axes.to_vec();
                fs.overflow_axes = new_overflow.to_vec();
                true
            }
            _ => false,
        }
    }

    /// The number of shards of the tensor: the product of the sizes of all
    /// its factors' axes, overflow included.
    pub fn sharding_size(&self, mesh: &Mesh) -> Result<i64, UnknownAxis> {
        let mut size = 1;
        for fs in self.factors.values() {
            for axis in fs.axes.iter().chain(&fs.overflow_axes) {
                size *= axis_size(axis, mesh)?;
            }
        }
        Ok(size)
    }

    /// Project back to a tensor sharding: each dimension takes the axes of
    /// its factors in order, merging sub-axes that meet at a factor
    /// boundary. A dimension stops at a factor with overflow axes (which it
    /// appends) or at one that is not fully sharded, since sharding the
    /// factors after it would need a strided view. A dimension is closed if
    /// any of its factors is; priorities are not kept (as in Shardy).
    pub fn to_tensor_sharding(
        &self,
        mapping: &TensorMapping,
        factor_sizes: &[i64],
        mesh_ref: &MeshRef,
        mesh: &Mesh,
    ) -> Result<TensorSharding, ProjectionError> {
        let mut dims = Vec::with_capacity(mapping.rank());
        for dim in &mapping.dims {
            let mut axes = Vec::new();
            let mut is_closed = false;
            for &factor in &dim.factors {
                let fs = self
                    .factors
                    .get(&factor)
                    .ok_or(ProjectionError::MissingFactor { factor })?;
                let factor_size = factor_sizes
                    .get(factor)
                    .copied()
                    .ok_or(ProjectionError::MissingFactor { factor })?;
                is_closed |= fs.is_closed;
                let sharded = append_axes(&mut axes, &fs.axes, mesh)?;
                if !fs.overflow_axes.is_empty() {
                    append_axes(&mut axes, &fs.overflow_axes, mesh)?;
                    break;
                }
                if !dim.is_minor_most(factor) && factor_size.checked_rem(sharded) != Some(0) {
                    return Err(ProjectionError::NonDivisibleFactor {
                        factor,
                        factor_size,
                        sharded_size: sharded,
                    });
                }
                if sharded < factor_size {
                    break;
                }
            }
            dims.push(DimSharding {
                axes,
                is_closed,
                priority: None,
            });
        }
        Ok(TensorSharding {
            mesh: mesh_ref.clone(),
            dims,
            replicated: self.replicated.clone(),
            unreduced: self.unreduced.clone(),
            unreduced_op: self.unreduced_op,
        })
    }
}

/// Append `new` to `axes`, merging its first axis into the last of `axes`
/// when they are consecutive sub-axes. Returns the product of the sizes of
/// `new`.
fn append_axes(axes: &mut Vec<AxisRef>, new: &[AxisRef], mesh: &Mesh) -> Result<i64, UnknownAxis> {
    let mut size = 1;
    for (i, axis) in new.iter().enumerate() {
        size *= axis_size(axis, mesh)?;
        if i == 0 {
            push_or_merge(axes, axis.clone(), mesh)?;
        } else {
            axes.push(axis.clone());
        }
    }
    Ok(size)
}

/// Walks the axes of one dimension sharding, handing out whole axes or
/// leading sub-axes of them.
struct AxisCursor<'a> {
    axes: &'a [AxisRef],
    index: usize,
    /// What is left of `axes[index]`: its size, and its pre-size once it
    /// has been split or if it was a sub-axis to begin with.
    piece: Option<Piece>,
}

#[derive(Clone, Copy)]
struct Piece {
    size: i64,
    pre_size: Option<i64>,
}

impl<'a> AxisCursor<'a> {
    fn new(axes: &'a [AxisRef], mesh: &Mesh) -> Result<AxisCursor<'a>, UnknownAxis> {
        let mut cursor = AxisCursor {
            axes,
            index: 0,
            piece: None,
        };
        cursor.load(mesh)?;
        Ok(cursor)
    }

    fn load(&mut self, mesh: &Mesh) -> Result<(), UnknownAxis> {
        self.piece = match self.axes.get(self.index) {
            Some(axis) => Some(Piece {
                size: axis_size(axis, mesh)?,
                pre_size: axis.sub.map(|s| s.pre_size),
            }),
            None => None,
        };
        Ok(())
    }

    fn name(&self) -> String {
        self.axes[self.index].name.clone()
    }

    /// The remaining piece as an axis reference.
    fn piece_ref(&self, piece: Piece) -> AxisRef {
        AxisRef {
            name: self.name(),
            sub: piece.pre_size.map(|pre_size| SubAxis {
                pre_size,
                size: piece.size,
            }),
        }
    }

    /// Hand out the whole remaining piece and move to the next axis.
    fn take_piece(&mut self, piece: Piece, mesh: &Mesh) -> Result<AxisRef, UnknownAxis> {
        let axis = self.piece_ref(piece);
        self.index += 1;
        self.load(mesh)?;
        Ok(axis)
    }

    /// Hand out the leading sub-axis of size `size` of the piece.
    fn split_piece(&mut self, piece: Piece, size: i64) -> AxisRef {
        let pre_size = piece.pre_size.unwrap_or(1);
        self.piece = Some(Piece {
            size: piece.size / size,
            pre_size: Some(pre_size * size),
        });
        AxisRef::sub(self.name(), pre_size, size)
    }

    /// Everything that is left, merged where consecutive.
    fn take_rest(&mut self, into: &mut Vec<AxisRef>, mesh: &Mesh) -> Result<(), UnknownAxis> {
        while let Some(piece) = self.piece {
            let axis = self.take_piece(piece, mesh)?;
            push_or_merge(into, axis, mesh)?;
        }
        Ok(())
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

/// The factor shardings of one tensor (Shardy's
/// `buildTensorFactorShardings`).
fn project_tensor(
    id: TensorId,
    mapping: &TensorMapping,
    sharding: Option<&TensorSharding>,
    factor_sizes: &[i64],
    mesh: &Mesh,
    closed_if_missing: bool,
) -> Result<TensorFactorShardings, ProjectionError> {
    if let Some(s) = sharding {
        if s.dims.len() != mapping.rank() {
            return Err(ProjectionError::RankMismatch {
                tensor: id,
                rank: mapping.rank(),
                sharding_rank: s.dims.len(),
            });
        }
    }
    let mut out = TensorFactorShardings::default();
    for (d, dim) in mapping.dims.iter().enumerate() {
        let dim_sharding = sharding.map(|s| &s.dims[d]);
        let axes = dim_sharding.map_or(&[][..], |s| s.axes.as_slice());
        let dim_closed = dim_sharding.map_or(closed_if_missing, |s| s.is_closed);
        let mut cursor = AxisCursor::new(axes, mesh)?;
        let mut overflowed = false;
        for &factor in &dim.factors {
            let fs = out.factors.entry(factor).or_default();
            fs.is_minor_most = dim.is_minor_most(factor);
            if overflowed {
                fs.is_closed = true;
                break;
            }
            fs.is_closed = dim_closed;
            if fs.is_minor_most {
                // The minor-most factor takes whatever is left, even if it
                // does not divide the factor (the dimension is padded).
                cursor.take_rest(&mut fs.axes, mesh)?;
                break;
            }
            let mut left = factor_sizes
                .get(factor)
                .copied()
                .ok_or(ProjectionError::MissingFactor { factor })?;
            while let Some(piece) = cursor.piece {
                if piece.size == 1 {
                    fs.axes.push(cursor.take_piece(piece, mesh)?);
                    continue;
                }
                let common = gcd(left, piece.size);
                if common <= 1 {
                    break;
                }
                if piece.size > common {
                    fs.axes.push(cursor.split_piece(piece, common));
                } else {
                    fs.axes.push(cursor.take_piece(piece, mesh)?);
                }
                left /= common;
            }
            if left > 1 && cursor.piece.is_some() {
                // The next axis shares nothing with what is left of the
                // factor: it and all after it overflow.
                overflowed = true;
                cursor.take_rest(&mut fs.overflow_axes, mesh)?;
            }
        }
    }
    if let Some(s) = sharding {
        out.replicated = s.replicated.clone();
        out.unreduced = s.unreduced.clone();
        out.unreduced_op = s.unreduced_op;
    }
    Ok(out)
}
