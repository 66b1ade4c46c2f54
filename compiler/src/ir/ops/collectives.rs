//! The user's own collectives, as JAX lowers them inside `shard_map`
//! (`lax.psum`/`pmax`/`pmin` → `stablehlo.all_reduce`, `all_gather`,
//! `psum_scatter` → `reduce_scatter`, `all_to_all`, `ppermute` →
//! `collective_permute`). Always in the generic form:
//!
//! ```text
//! %1 = "stablehlo.all_reduce"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 1,
//!   type = 1>, replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>,
//!   use_global_device_ids}> ({ ^bb0(%a: tensor<f32>, %b: tensor<f32>): ... })
//!   : (tensor<16x8xf32>) -> tensor<16x8xf32>
//! ```
//!
//! Device ids in `replica_groups` / `source_target_pairs` are partition
//! ids: positions in the mesh's row-major device order (JAX always sets a
//! channel handle, and `use_global_device_ids` where the op has it). The
//! groups of one op must partition all devices of the module's mesh; the
//! pairs of a permute name each source and each target at most once.
//! Sharding rules are Shardy's (pass-through except the gathered, scattered
//! or exchanged dimensions, which need replication).

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::body::check_signature;
use crate::ir::ops::decode::I64Rows;
use crate::ir::ops::replica_groups::ReplicaGroups;
use crate::ir::ops::{
    Arity, AttrCodec, DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RegionTypes, RuleShapes,
    SigForm,
};
use crate::ir::types::TensorType;
use crate::ir::Computation;
use crate::ir::{OpKind, ReduceKind};
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{FactorKind, OpShardingRule, RuleOptions};
use crate::sharding::MeshDef;

/// `#stablehlo.channel_handle<handle = 1, type = 1>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChannelHandle {
    pub handle: i64,
    pub kind: i64,
}

impl AttrCodec for ChannelHandle {
    fn decode(a: &Attr) -> Result<Self, String> {
        let Attr::Params { name, params } = a else {
            return Err(format!(
                "expected #stablehlo.channel_handle<...>, found {}",
                a.kind_name()
            ));
        };
        if name != "#stablehlo.channel_handle" {
            return Err(format!(
                "expected #stablehlo.channel_handle<...>, found {name}<...>"
            ));
        }
        let field = |key: &str| {
            params
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| i64::decode(v))
                .unwrap_or(Ok(0))
        };
        Ok(ChannelHandle {
            handle: field("handle")?,
            kind: field("type")?,
        })
    }

    fn encode(&self) -> Option<Attr> {
        let int = |value| Attr::Int { value, ty: None };
        Some(Attr::Params {
            name: "#stablehlo.channel_handle".into(),
            params: vec![
                ("handle".into(), int(self.handle)),
                ("type".into(), int(self.kind)),
            ],
        })
    }
}

/// A unit attribute (`use_global_device_ids`): present or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Flag(pub bool);

impl AttrCodec for Flag {
    fn decode(a: &Attr) -> Result<Self, String> {
        bool::decode(a).map(Flag)
    }

    fn encode(&self) -> Option<Attr> {
        self.0.then_some(Attr::Unit)
    }

    fn absent() -> Option<Self> {
        Some(Flag(false))
    }
}

define_attrs! {
    /// `stablehlo.all_reduce`
    pub struct AllReduceAttrs {
        channel_handle: Option<ChannelHandle> = "channel_handle" default None,
        replica_groups: ReplicaGroups = "replica_groups",
        use_global_device_ids: Flag = "use_global_device_ids" default Flag(false),
    }
}

define_attrs! {
    /// `stablehlo.all_gather`
    pub struct AllGatherAttrs {
        all_gather_dim: i64 = "all_gather_dim",
        channel_handle: Option<ChannelHandle> = "channel_handle" default None,
        replica_groups: ReplicaGroups = "replica_groups",
        use_global_device_ids: Flag = "use_global_device_ids" default Flag(false),
    }
}

define_attrs! {
    /// `stablehlo.reduce_scatter`
    pub struct ReduceScatterAttrs {
        channel_handle: Option<ChannelHandle> = "channel_handle" default None,
        replica_groups: ReplicaGroups = "replica_groups",
        scatter_dimension: i64 = "scatter_dimension",
        use_global_device_ids: Flag = "use_global_device_ids" default Flag(false),
    }
}

define_attrs! {
    /// `stablehlo.all_to_all`
    pub struct AllToAllAttrs {
        channel_handle: Option<ChannelHandle> = "channel_handle" default None,
        concat_dimension: i64 = "concat_dimension",
        replica_groups: ReplicaGroups = "replica_groups",
        split_count: i64 = "split_count",
        split_dimension: i64 = "split_dimension",
    }
}

define_attrs! {
    /// `stablehlo.collective_permute`
    pub struct CollectivePermuteAttrs {
        channel_handle: Option<ChannelHandle> = "channel_handle" default None,
        source_target_pairs: I64Rows = "source_target_pairs",
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct AllReduce {
    pub attrs: AllReduceAttrs,
    pub body: Computation,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AllGather {
    pub attrs: AllGatherAttrs,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ReduceScatter {
    pub attrs: ReduceScatterAttrs,
    pub body: Computation,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AllToAll {
    pub attrs: AllToAllAttrs,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CollectivePermute {
    pub attrs: CollectivePermuteAttrs,
}

/// The combiner of an all-reduce / reduce-scatter body: one binary op of
/// the two block arguments, returned — possibly through the
/// `sdy.sharding_constraint` JAX adds inside partly manual bodies (an
/// `sdy.reshard` once Shardy has propagated them).
pub fn reduction_of(body: &Computation) -> Option<ReduceKind> {
    let f = body.func();
    let (&[a0, a1], &[ret]) = (f.args.as_slice(), f.returns.as_slice()) else {
        return None;
    };
    let mut combined = None;
    let mut current = None;
    for &id in &f.body {
        let op = f.op(id);
        match &op.kind {
            OpKind::Binary(b) if combined.is_none() => {
                let in_order = op.operands == [a0, a1] || op.operands == [a1, a0];
                if !in_order {
                    return None;
                }
                combined = Some(ReduceKind::from_binary_op(*b)?);
                current = op.results.first().copied();
            }
            // JAX adds a constraint; Shardy's propagation (JAX 0.12) turns it
            // into an `sdy.reshard` of the replicated scalar.
            OpKind::ShardingConstraint(_) | OpKind::Reshard(_) if current.is_some() => {
                if op.operands.first().copied() != current {
                    return None;
                }
                current = op.results.first().copied();
            }
            _ => return None,
        }
    }
    (current == Some(ret)).then_some(combined?)
}

/// A collective's reduction body: two scalars of the operand's type to
/// one, combined by one binary op ([`reduction_of`]). Not
/// `ir::ops::body::check_body`'s element-wise check: JAX's partly manual bodies
/// hold a `sdy.sharding_constraint`.
fn check_reduction_body(body: &Computation, t: &TensorType) -> Result<(), String> {
    let scalar = TensorType::scalar(t.elem);
    check_signature(
        body,
        "reduction body",
        &[scalar.clone(), scalar.clone()],
        &[scalar],
    )?;
    if reduction_of(body).is_none() {
        return Err(
            "the reduction body must be one add, multiply, maximum, minimum, and or or of its \
             two arguments"
                .into(),
        );
    }
    Ok(())
}

fn one_operand(operands: &[TensorType]) -> Result<&TensorType, String> {
    match operands {
        [t] => Ok(t),
        _ => Err(format!(
            "takes one operand here, not {} (several are not supported)",
            operands.len()
        )),
    }
}

fn dim_index(dim: i64, rank: usize, what: &str) -> Result<usize, String> {
    usize::try_from(dim)
        .ok()
        .filter(|&d| d < rank)
        .ok_or_else(|| format!("{what} {dim} is out of range for rank {rank}"))
}

/// Equal-sized groups that together hold every device `0..n` once.
pub fn check_partition(groups: &ReplicaGroups, meshes: &[MeshDef]) -> Result<(), String> {
    groups.check_bound(meshes)?;
    check_rows_partition(&groups.rows, device_count(meshes)?)
}

/// Equal-sized groups that together hold every device `0..n` once.
fn check_rows_partition(groups: &[Vec<i64>], n: i64) -> Result<(), String> {
    // Memory is bounded by the groups as written, not by the mesh's device
    // count (a mesh may claim trillions of devices).
    let mut seen = std::collections::HashSet::new();
    for g in groups {
        for &d in g {
            if !(0..n).contains(&d) {
                return Err(format!(
                    "replica group {g:?} names device {d}, but the mesh has {n} devices"
                ));
            }
            if !seen.insert(d) {
                return Err(format!("replica groups name device {d} twice"));
            }
        }
    }
    if (seen.len() as i64) < n {
        let mut named: Vec<i64> = seen.into_iter().collect();
        named.sort_unstable();
        let missing = named
            .iter()
            .zip(0i64..)
            .find(|(d, i)| *d != i)
            .map_or(named.len() as i64, |(_, i)| i);
        return Err(format!(
            "replica groups do not partition the {n} devices: device {missing} is in no group"
        ));
    }
    Ok(())
}

/// The number of devices of the module (its first mesh); collectives need
/// one.
pub fn device_count(meshes: &[MeshDef]) -> Result<i64, String> {
    meshes
        .first()
        .map(|m| m.mesh.num_devices())
        .ok_or_else(|| "needs a mesh (sdy.mesh) to name its devices".into())
}

fn group_size(groups: &ReplicaGroups) -> Result<i64, String> {
    match groups.rows.first() {
        Some(g) if !g.is_empty() => Ok(g.len() as i64),
        _ => Err("needs at least one non-empty replica group".into()),
    }
}

fn pointwise_rule(shapes: &RuleShapes) -> Result<Option<OpShardingRule>, String> {
    let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
    b.pointwise(shapes.operands[0]);
    b.build().map(Some).map_err(|e| e.to_string())
}

/// Shardy's rule for ops that change the size of some dimensions: the
/// others pass through; each changed one is a need-replication factor of
/// the operand and another of the result.
fn resized_rule(shapes: &RuleShapes, changed: &[usize]) -> Result<Option<OpShardingRule>, String> {
    let (operand, result) = (shapes.operands[0], shapes.results[0]);
    let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
    for (d, &size) in operand.iter().enumerate() {
        if !changed.contains(&d) {
            b.add_factor_all(d, size, FactorKind::PassThrough);
        }
    }
    for &d in changed {
        b.add_factor_per_tensor(operand[d], FactorKind::NeedReplication, &[Some(d)], &[None]);
        b.add_factor_per_tensor(result[d], FactorKind::NeedReplication, &[None], &[Some(d)]);
    }
    b.build().map(Some).map_err(|e| e.to_string())
}

impl DecodeOp for AllReduce {
    const SPEC: OpSpec = OpSpec {
        computations: 1,
        ..OpSpec::new("stablehlo.all_reduce")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(AllReduce {
            attrs: AllReduceAttrs::decode_attrs(d)?,
            body: d.computation()?,
        })
    }
}

/// The [`OpDef`] methods of a collective whose groups are
/// `self.attrs.replica_groups`: mesh-axes groups are resolved against the
/// module's meshes when it is read (`bind_meshes`), follow renamed meshes
/// (`mesh_symbols_mut`), and must partition the devices
/// (`check_in_module`).
macro_rules! replica_groups_hooks {
    () => {
        fn bind_meshes(&mut self, meshes: &[MeshDef]) -> Result<(), String> {
            self.attrs.replica_groups.bind(meshes)
        }

        fn mesh_symbols_mut(&mut self) -> Vec<&mut String> {
            self.attrs
                .replica_groups
                .mesh_symbol_mut()
                .into_iter()
                .collect()
        }

        fn check_in_module(
            &self,
            meshes: &[MeshDef],
            _operands: &[TensorType],
            _results: &[TensorType],
            _regions: &[RegionTypes],
        ) -> Result<(), String> {
            check_partition(&self.attrs.replica_groups, meshes)
        }
    };
}

impl OpDef for AllReduce {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.attrs.encode_attrs()
    }

    fn computations(&self) -> Vec<&Computation> {
        vec![&self.body]
    }

    fn computations_mut(&mut self) -> Vec<&mut Computation> {
        vec![&mut self.body]
    }

    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        let t = one_operand(operands)?;
        check_reduction_body(&self.body, t)?;
        group_size(&self.attrs.replica_groups)?;
        Ok(vec![t.clone()])
    }

    replica_groups_hooks!();

    fn rule(&self, shapes: &RuleShapes, _o: RuleOptions) -> Result<Option<OpShardingRule>, String> {
        pointwise_rule(shapes)
    }
}

impl AllGather {
    pub fn dim(&self, rank: usize) -> Result<usize, String> {
        dim_index(self.attrs.all_gather_dim, rank, "all_gather_dim")
    }
}

impl DecodeOp for AllGather {
    const SPEC: OpSpec = OpSpec::new("stablehlo.all_gather");

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(AllGather {
            attrs: AllGatherAttrs::decode_attrs(d)?,
        })
    }
}

impl OpDef for AllGather {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.attrs.encode_attrs()
    }

    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        let t = one_operand(operands)?;
        let d = self.dim(t.rank())?;
        let g = group_size(&self.attrs.replica_groups)?;
        let mut out = t.clone();
        out.shape[d] = t.shape[d]
            .checked_mul(g)
            .ok_or("the gathered dimension overflows")?;
        Ok(vec![out])
    }

    replica_groups_hooks!();

    fn rule(&self, shapes: &RuleShapes, _o: RuleOptions) -> Result<Option<OpShardingRule>, String> {
        resized_rule(shapes, &[self.dim(shapes.operands[0].len())?])
    }
}

impl ReduceScatter {
    pub fn dim(&self, rank: usize) -> Result<usize, String> {
        dim_index(self.attrs.scatter_dimension, rank, "scatter_dimension")
    }
}

impl DecodeOp for ReduceScatter {
    const SPEC: OpSpec = OpSpec {
        computations: 1,
        ..OpSpec::new("stablehlo.reduce_scatter")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(ReduceScatter {
            attrs: ReduceScatterAttrs::decode_attrs(d)?,
            body: d.computation()?,
        })
    }
}

impl OpDef for ReduceScatter {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.attrs.encode_attrs()
    }

    fn computations(&self) -> Vec<&Computation> {
        vec![&self.body]
    }

    fn computations_mut(&mut self) -> Vec<&mut Computation> {
        vec![&mut self.body]
    }

    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        let t = one_operand(operands)?;
        check_reduction_body(&self.body, t)?;
        let d = self.dim(t.rank())?;
        let g = group_size(&self.attrs.replica_groups)?;
        if t.shape[d] % g != 0 {
            return Err(format!(
                "scatter dimension {d} of size {} is not divisible by the group size {g}",
                t.shape[d]
            ));
        }
        let mut out = t.clone();
        out.shape[d] /= g;
        Ok(vec![out])
    }

    replica_groups_hooks!();

    fn rule(&self, shapes: &RuleShapes, _o: RuleOptions) -> Result<Option<OpShardingRule>, String> {
        resized_rule(shapes, &[self.dim(shapes.operands[0].len())?])
    }
}

impl AllToAll {
    /// `(split_dimension, concat_dimension)` for a tensor of `rank`.
    pub fn dims(&self, rank: usize) -> Result<(usize, usize), String> {
        Ok((
            dim_index(self.attrs.split_dimension, rank, "split_dimension")?,
            dim_index(self.attrs.concat_dimension, rank, "concat_dimension")?,
        ))
    }
}

impl DecodeOp for AllToAll {
    const SPEC: OpSpec = OpSpec::new("stablehlo.all_to_all");

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(AllToAll {
            attrs: AllToAllAttrs::decode_attrs(d)?,
        })
    }
}

impl OpDef for AllToAll {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.attrs.encode_attrs()
    }

    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        let t = one_operand(operands)?;
        let (split, concat) = self.dims(t.rank())?;
        let n = self.attrs.split_count;
        let g = group_size(&self.attrs.replica_groups)?;
        if n != g {
            return Err(format!("split_count {n} differs from the group size {g}"));
        }
        if t.shape[split] % n != 0 {
            return Err(format!(
                "split dimension {split} of size {} is not divisible by split_count {n}",
                t.shape[split]
            ));
        }
        let mut out = t.clone();
        out.shape[split] /= n;
        out.shape[concat] = out.shape[concat]
            .checked_mul(n)
            .ok_or("the concatenated dimension overflows")?;
        Ok(vec![out])
    }

    replica_groups_hooks!();

    fn rule(&self, shapes: &RuleShapes, _o: RuleOptions) -> Result<Option<OpShardingRule>, String> {
        let (split, concat) = self.dims(shapes.operands[0].len())?;
        if split == concat {
            resized_rule(shapes, &[split])
        } else {
            resized_rule(shapes, &[split, concat])
        }
    }
}

impl DecodeOp for CollectivePermute {
    const SPEC: OpSpec = OpSpec::new("stablehlo.collective_permute");

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(CollectivePermute {
            attrs: CollectivePermuteAttrs::decode_attrs(d)?,
        })
    }
}

impl OpDef for CollectivePermute {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.attrs.encode_attrs()
    }

    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        let t = one_operand(operands)?;
        let pairs = &self.attrs.source_target_pairs;
        if pairs.width != 2 && !pairs.rows.is_empty() {
            return Err("source_target_pairs must have two columns".into());
        }
        Ok(vec![t.clone()])
    }

    fn check_in_module(
        &self,
        meshes: &[MeshDef],
        _operands: &[TensorType],
        _results: &[TensorType],
        _regions: &[RegionTypes],
    ) -> Result<(), String> {
        let n = device_count(meshes)?;
        let rows = &self.attrs.source_target_pairs.rows;
        for (col, what) in [(0, "source"), (1, "target")] {
            let mut seen = vec![false; usize::try_from(n).unwrap_or(0)];
            for r in rows {
                let d = r[col];
                match usize::try_from(d).ok().and_then(|i| seen.get_mut(i)) {
                    None => {
                        return Err(format!(
                            "source_target_pairs name device {d}, but the mesh has {n} devices"
                        ))
                    }
                    Some(true) => {
                        return Err(format!("device {d} is the {what} of two pairs"));
                    }
                    Some(s) => *s = true,
                }
            }
        }
        Ok(())
    }

    fn rule(&self, shapes: &RuleShapes, _o: RuleOptions) -> Result<Option<OpShardingRule>, String> {
        pointwise_rule(shapes)
    }
}

/// `stablehlo.partition_id : tensor<ui32>`: the device's position in the
/// mesh (JAX computes `lax.axis_index` from it). Only meaningful where
/// every mesh axis is manual.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionId;

impl DecodeOp for PartitionId {
    const SPEC: OpSpec = OpSpec {
        operands: Arity::Exactly(0),
        pretty: Some(&[Fmt::AttrDict, Fmt::Sig(SigForm::Results)]),
        ..OpSpec::new("stablehlo.partition_id")
    };

    fn decode(_d: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(PartitionId)
    }
}

impl OpDef for PartitionId {
    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        if !operands.is_empty() {
            return Err("takes no operands".into());
        }
        Ok(vec![TensorType::scalar(crate::ir::ElemType::U32)])
    }

    fn rule(&self, shapes: &RuleShapes, _o: RuleOptions) -> Result<Option<OpShardingRule>, String> {
        let b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
        b.build().map(Some).map_err(|e| e.to_string())
    }
}
