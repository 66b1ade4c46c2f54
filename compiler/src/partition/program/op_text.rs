//! A short text form of an op's attributes, for the partitioner's
//! listings (`dims = [1] x [0]`, `[2:14:2, 4:20]`, `dense<...>`). Not the
//! round-trip text format: that is [`crate::text`].

use crate::ir::attr::Attr;
use crate::ir::ops::constant::Constant;
use crate::ir::ops::reshard::Reshard;
use crate::ir::ops::sharding_constraint::ShardingConstraint;
use crate::ir::ops::sharding_group::ShardingGroup;
use crate::ir::{DenseLiteral, OpKind, Scalar};

fn list(v: &[i64]) -> String {
    let s: Vec<String> = v.iter().map(ToString::to_string).collect();
    format!("[{}]", s.join(", "))
}

fn scalar(s: &Scalar) -> String {
    match s {
        Scalar::Float(x) => format!("{x:?}"),
        Scalar::Int(i) => i.to_string(),
        Scalar::Bool(b) => b.to_string(),
    }
}

/// The attributes of `kind`, or an empty string.
pub fn op_attrs(kind: &OpKind) -> String {
    match kind {
        OpKind::Compare(crate::ir::ops::compare::Compare { direction, .. }) => {
            direction.name().to_string()
        }
        OpKind::Constant(Constant {
            value: DenseLiteral::Splat(s),
            ..
        }) => format!("dense<{}>", scalar(s)),
        OpKind::Constant(Constant {
            value: DenseLiteral::Elements(v),
            ..
        }) => {
            let head: Vec<String> = v.iter().take(4).map(scalar).collect();
            let more = if v.len() > 4 { ", ..." } else { "" };
            format!("dense<[{}{more}]>", head.join(", "))
        }
        OpKind::Iota(crate::ir::ops::iota::Iota { dim }) => format!("dim = {dim}"),
        OpKind::BroadcastInDim(crate::ir::ops::broadcast_in_dim::BroadcastInDim { dims }) => {
            format!("dims = {}", list(dims))
        }
        OpKind::Transpose(crate::ir::ops::transpose::Transpose { perm }) => {
            format!("dims = {}", list(perm))
        }
        OpKind::DotGeneral(dot) => {
            let dims = &dot.dims;
            let mut s = String::new();
            if !dims.lhs_batch.is_empty() {
                s.push_str(&format!(
                    "batching_dims = {} x {}, ",
                    list(&dims.lhs_batch),
                    list(&dims.rhs_batch)
                ));
            }
            s.push_str(&format!(
                "contracting_dims = {} x {}",
                list(&dims.lhs_contract),
                list(&dims.rhs_contract)
            ));
            s
        }
        OpKind::Reduce(r) => match r.kind() {
            Some(kind) => format!(
                "applies stablehlo.{} across dimensions = {}",
                kind.name(),
                list(r.dims())
            ),
            None => format!(
                "across dimensions = {} with a {}-op body",
                list(r.dims()),
                r.body.func().body.len()
            ),
        },
        OpKind::Concatenate(crate::ir::ops::concatenate::Concatenate { dim }) => {
            format!("dim = {dim}")
        }
        OpKind::Slice(crate::ir::ops::slice::Slice {
            start,
            limit,
            strides,
        }) => {
            let parts: Vec<String> = start
                .iter()
                .zip(limit)
                .zip(strides)
                .map(|((s, l), st)| {
                    if *st == 1 {
                        format!("{s}:{l}")
                    } else {
                        format!("{s}:{l}:{st}")
                    }
                })
                .collect();
            format!("[{}]", parts.join(", "))
        }
        OpKind::Pad(crate::ir::ops::pad::Pad {
            low,
            high,
            interior,
        }) => format!(
            "low = {}, high = {}, interior = {}",
            list(low),
            list(high),
            list(interior)
        ),
        OpKind::Call(c) => format!("@{}", c.callee),
        OpKind::ShardingGroup(ShardingGroup { group_id }) => format!("group_id={group_id}"),
        OpKind::Reshard(Reshard { sharding })
        | OpKind::ShardingConstraint(ShardingConstraint { sharding }) => sharding.to_string(),
        defined => match defined.def() {
            // Other defined ops: their attributes as the generic form
            // writes them (a unit attribute, `use_global_device_ids`, is
            // its bare name).
            Some(d) => d
                .attrs()
                .iter()
                .map(|(k, v)| match v {
                    Attr::Unit => k.to_string(),
                    v => format!("{k} = {v}"),
                })
                .collect::<Vec<_>>()
                .join(", "),
            None => String::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parse_module;

    /// A shard_map all_gather's `use_global_device_ids` was listed as
    /// `use_global_device_ids = ` (a unit attribute has no value).
    #[test]
    fn unit_attributes_are_listed_by_name() {
        let m = parse_module(
            r#"module @m {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{}]>] manual_axes={"x"} (%arg1: tensor<2xf32>) {
      %1 = "stablehlo.all_gather"(%arg1) <{all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> : (tensor<2xf32>) -> tensor<4xf32>
      sdy.return %1 : tensor<4xf32>
    } : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}"#,
        )
        .unwrap_or_else(|d| panic!("{d}"));
        let f = m.func("main").unwrap();
        let gather = f
            .all_ops()
            .into_iter()
            .find(|&o| matches!(f.op(o).kind, OpKind::AllGather(_)))
            .expect("an all_gather");
        let text = op_attrs(&f.op(gather).kind);
        assert!(text.ends_with(", use_global_device_ids"), "{text}");
    }
}
