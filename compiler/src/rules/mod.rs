//! Op sharding rules (SPEC §4): the factors of every operand and result
//! dimension of an op, and projection between dimension and factor
//! shardings.
//!
//! - `rule`: the rule as plain data (`OpShardingRule`, `FactorKind`, ...);
//! - `builder`: `RuleBuilder`, so each op's rule is a few lines;
//! - `ops`: `rule_for_op`, the rule of every op kind;
//! - `reshape`: the compound factors of `reshape`;
//! - `notation`: Shardy's `#sdy.op_sharding_rule<...>` text, both ways;
//! - `axis_algebra`: prefixes, overlap and merging of (sub-)axes;
//! - `projection`: `ShardingProjection`, dimension ⇄ factor shardings.

pub mod axis_algebra;
pub mod builder;
pub mod notation;
pub mod projection;
pub mod reshape;
pub mod rule;

pub use builder::RuleBuilder;
pub use notation::{factor_symbol, parse_rule, NotationError};
pub use projection::{
    FactorSharding, ProjectionError, ShardingProjection, TensorFactorShardings, UpdatedTensors,
};
pub use rule::RuleOptions;
pub use rule::{DimMapping, FactorKind, OpShardingRule, TensorId, TensorMapping};
