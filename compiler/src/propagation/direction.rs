//! Propagation directions (Shardy's `PropagationDirection`) and the
//! op-priority schedules that choose one per op and factor.
//!
//! Op-priority propagation (SPEC §5) runs aggressive propagation five
//! times, each schedule adding to the previous one (Shardy's
//! `opPropagationSchedule`):
//! 0. pass-through ops (element-wise, reshape, transpose, the host-offload
//!    calls `@MoveToHost`/`@MoveToDevice`) none of whose
//!    non-scalar operands has another use: forward through a multi-use
//!    value would put its sharding on every user (one reshard per user
//!    later), backward could conflict with another user;
//! 1. pass-through ops whatever their operands' uses;
//! 2. plus the pass-through factors of every other op, where a broadcast
//!    only propagates backward (from its result to its operand);
//! 3. every factor of every op, a broadcast still only backward;
//! 4. everything, both ways (broadcast forward last).
//!
//! `dynamic_slice` and `dynamic_update_slice` count as pass-through ops in
//! 0 and 1, forward only. A blocked factor (`blocked_propagation`) never
//! moves. JAX 0.10.2's Shardy runs the same five schedules.

use crate::ir::ops::propagation_barrier::AllowedDirection;
use crate::ir::OpKind;
use crate::rules::OpShardingRule;

/// Which way shardings may flow through an op along one factor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    None,
    /// Operands to results.
    Forward,
    /// Results to operands.
    Backward,
    Both,
}

impl Direction {
    fn bits(self) -> u8 {
        match self {
            Direction::None => 0,
            Direction::Forward => 1,
            Direction::Backward => 2,
            Direction::Both => 3,
        }
    }

    fn from_bits(bits: u8) -> Direction {
        match bits & 3 {
            0 => Direction::None,
            1 => Direction::Forward,
            2 => Direction::Backward,
            _ => Direction::Both,
        }
    }

    pub fn union(self, other: Direction) -> Direction {
        Direction::from_bits(self.bits() | other.bits())
    }

    pub fn intersection(self, other: Direction) -> Direction {
        Direction::from_bits(self.bits() & other.bits())
    }
}

/// How an op takes part in op-priority scheduling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpClass {
    /// Element-wise ops, reshape and transpose: propagated first, at once
    /// when no non-scalar operand has another use (`multi_use` false),
    /// else one schedule later.
    PassThrough {
        multi_use: bool,
    },
    /// `dynamic_slice` and `dynamic_update_slice`: like pass-through ops,
    /// but only forward.
    ForwardPassThrough {
        multi_use: bool,
    },
    /// `broadcast_in_dim`: backward only until the last schedule.
    Broadcast,
    /// `sdy.propagation_barrier`: its own direction in every schedule and
    /// strategy (Shardy's `PropagatePropagationBarrier`).
    Barrier(Direction),
    Other,
}

/// Whether Shardy treats `kind` as element-wise (its `Elementwise`
/// trait): the element-wise StableHLO ops and `sdy.sharding_constraint`.
pub fn is_elementwise(kind: &OpKind) -> bool {
    kind.is_elementwise()
        || matches!(
            kind,
            OpKind::ShardingConstraint(_) | OpKind::PropagationBarrier(_)
        )
}

impl OpClass {
    /// The class of an op of `kind`; `multi_use` says whether one of its
    /// non-scalar operands has more than one use (MLIR's `hasOneUse`: an
    /// op using a value twice, a return and a sharding group each count).
    pub fn of(kind: &OpKind, multi_use: bool) -> OpClass {
        if let OpKind::PropagationBarrier(b) = kind {
            OpClass::Barrier(match b.allowed_direction {
                AllowedDirection::None => Direction::None,
                AllowedDirection::Forward => Direction::Forward,
                AllowedDirection::Backward => Direction::Backward,
                AllowedDirection::Both => Direction::Both,
            })
        } else if is_elementwise(kind)
            || matches!(kind, OpKind::CustomCall(c) if c.is_offload_move())
            || matches!(kind, OpKind::Reshape(_) | OpKind::Transpose(_))
        {
            OpClass::PassThrough { multi_use }
        } else if kind.def().is_some_and(|d| {
            matches!(
                d.spec().name,
                "stablehlo.dynamic_slice" | "stablehlo.dynamic_update_slice"
            )
        }) {
            OpClass::ForwardPassThrough { multi_use }
        } else if matches!(kind, OpKind::BroadcastInDim(_)) {
            OpClass::Broadcast
        } else {
            OpClass::Other
        }
    }
}

/// The direction policy of one propagation run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Policy {
    /// Every op and factor, both ways (basic and aggressive propagation).
    Any,
    /// Op-priority schedule 0 to 4 (cumulative).
    OpPriority(u8),
}

/// The number of op-priority schedules.
pub const OP_PRIORITY_SCHEDULES: u8 = 5;

impl Policy {
    /// The direction for `factor` of an op of class `class` with `rule`.
    /// A blocked factor (Shardy's `blocked_propagation`) never moves
    /// between tensors, whatever the policy.
    pub fn direction(self, class: OpClass, rule: &OpShardingRule, factor: usize) -> Direction {
        if rule.is_blocked(factor) {
            return Direction::None;
        }
        if let OpClass::Barrier(allowed) = class {
            return allowed;
        }
        match self {
            Policy::Any => Direction::Both,
            Policy::OpPriority(p) => (0..=p.min(OP_PRIORITY_SCHEDULES - 1))
                .map(|s| schedule(s, class, rule, factor))
                .fold(Direction::None, Direction::union),
        }
    }

    /// Whether no factor of the op can move at all (the op can be skipped).
    pub fn blocks_everything(self, class: OpClass, rule: &OpShardingRule) -> bool {
        (0..rule.num_factors()).all(|f| self.direction(class, rule, f) == Direction::None)
    }
}

fn schedule(index: u8, class: OpClass, rule: &OpShardingRule, factor: usize) -> Direction {
    match (index, class) {
        (0, OpClass::PassThrough { multi_use: false }) => Direction::Both,
        (0, OpClass::ForwardPassThrough { multi_use: false }) => Direction::Forward,
        (0, _) => Direction::None,
        (1, OpClass::PassThrough { .. }) => Direction::Both,
        (1, OpClass::ForwardPassThrough { .. }) => Direction::Forward,
        (1, _) => Direction::None,
        (2, _) if !rule.is_pass_through(factor) => Direction::None,
        (2 | 3, OpClass::Broadcast) => Direction::Backward,
        _ => Direction::Both,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{FactorKind, OpShardingRule};

    #[test]
    fn union_and_intersection_are_bitwise() {
        assert_eq!(
            Direction::Forward.union(Direction::Backward),
            Direction::Both
        );
        assert_eq!(
            Direction::Both.intersection(Direction::Backward),
            Direction::Backward
        );
        assert_eq!(
            Direction::Forward.intersection(Direction::Backward),
            Direction::None
        );
    }

    #[test]
    fn schedules_add_up() {
        let mut rule = OpShardingRule::identity(&[4, 4], 1, 1);
        rule.factor_kinds[1] = FactorKind::Reduction;
        let p = |n| Policy::OpPriority(n);
        let single = OpClass::PassThrough { multi_use: false };
        let multi = OpClass::PassThrough { multi_use: true };
        assert_eq!(p(0).direction(single, &rule, 0), Direction::Both);
        assert_eq!(p(0).direction(multi, &rule, 0), Direction::None);
        assert_eq!(p(1).direction(multi, &rule, 0), Direction::Both);
        assert_eq!(p(0).direction(OpClass::Other, &rule, 0), Direction::None);
        assert_eq!(p(1).direction(OpClass::Other, &rule, 0), Direction::None);
        assert_eq!(p(2).direction(OpClass::Other, &rule, 0), Direction::Both);
        assert_eq!(p(2).direction(OpClass::Other, &rule, 1), Direction::None);
        assert_eq!(p(3).direction(OpClass::Other, &rule, 1), Direction::Both);
        assert_eq!(
            p(2).direction(OpClass::Broadcast, &rule, 0),
            Direction::Backward
        );
        assert_eq!(
            p(3).direction(OpClass::Broadcast, &rule, 1),
            Direction::Backward
        );
        assert_eq!(
            p(4).direction(OpClass::Broadcast, &rule, 1),
            Direction::Both
        );
        assert!(p(1).blocks_everything(OpClass::Broadcast, &rule));
        assert!(!Policy::Any.blocks_everything(OpClass::Other, &rule));
    }

    #[test]
    fn blocked_factors_never_move() {
        let mut rule = OpShardingRule::identity(&[4, 4], 1, 1);
        rule.blocked_propagation[1] = true;
        assert_eq!(
            Policy::Any.direction(OpClass::Other, &rule, 0),
            Direction::Both
        );
        assert_eq!(
            Policy::Any.direction(OpClass::Other, &rule, 1),
            Direction::None
        );
        assert_eq!(
            Policy::OpPriority(4).direction(OpClass::Other, &rule, 1),
            Direction::None
        );
        assert!(!Policy::Any.blocks_everything(OpClass::Other, &rule));
        rule.blocked_propagation[0] = true;
        assert!(Policy::Any.blocks_everything(OpClass::Other, &rule));
    }
}
