//! Why a reshard (or a collective) cannot be lowered.

use std::fmt;

use crate::diag::{DiagKind, Diagnostic, SrcPos};
use crate::sharding::groups::GroupError;
use crate::sharding::validate::ShardingError;

/// Which end of a reshard a problem is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    Source,
    Target,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Source => "source",
            Side::Target => "target",
        })
    }
}

/// A reshard that cannot be lowered to collectives, with what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReshardError {
    #[error("the {side} sharding has {dims} dimension shardings but the tensor has rank {rank}")]
    RankMismatch {
        side: Side,
        dims: usize,
        rank: usize,
    },

    #[error("axis {axis} of the {side} sharding is not in its mesh (axes: {available})")]
    UnknownAxis {
        side: Side,
        axis: String,
        available: String,
    },

    #[error("invalid {side} sharding: {error}")]
    InvalidSharding { side: Side, error: ShardingError },

    #[error("invalid {side} mesh: {error}")]
    InvalidMesh { side: Side, error: ShardingError },

    #[error("dimension {dim} has size {size}; tensor dimensions cannot be negative")]
    NegativeDimSize { dim: usize, size: i64 },

    #[error(
        "the source mesh is over devices {from} but the target mesh is over devices {to}; \
         a reshard only moves data between meshes over the same devices"
    )]
    DifferentDeviceSets { from: String, to: String },

    #[error(
        "unreduced axes differ ({from} -> {to}); a reshard moves data but does not reduce it: \
         insert an all-reduce over the axes that stop being unreduced first"
    )]
    UnreducedMismatch { from: String, to: String },

    #[error("invalid collective axes: {0}")]
    Groups(#[from] GroupError),

    #[error("internal error while lowering a reshard: {0}")]
    Internal(String),
}

impl ReshardError {
    fn kind(&self) -> DiagKind {
        match self {
            ReshardError::UnreducedMismatch { .. } | ReshardError::Internal(_) => {
                DiagKind::Unsupported
            }
            _ => DiagKind::Sharding,
        }
    }

    /// A diagnostic at `pos` (the `sdy.reshard` or the op needing it).
    pub fn to_diagnostic(&self, pos: SrcPos) -> Diagnostic {
        Diagnostic::new(self.kind(), pos, format!("cannot lower reshard: {self}"))
    }

    /// Maps a sharding validation failure to the typed variants the caller
    /// is most likely to act on.
    pub(crate) fn from_sharding(side: Side, error: ShardingError) -> ReshardError {
        match error {
            ShardingError::RankMismatch { dims, rank } => {
                ReshardError::RankMismatch { side, dims, rank }
            }
            ShardingError::UnknownAxis {
                axis, available, ..
            } => ReshardError::UnknownAxis {
                side,
                axis,
                available,
            },
            ShardingError::NegativeDimSize { dim, size } => {
                ReshardError::NegativeDimSize { dim, size }
            }
            error => ReshardError::InvalidSharding { side, error },
        }
    }
}

impl From<ReshardError> for Diagnostic {
    /// Without a position; prefer [`ReshardError::to_diagnostic`].
    fn from(e: ReshardError) -> Diagnostic {
        e.to_diagnostic(SrcPos::UNKNOWN)
    }
}
