//! The user's collectives and `partition_id` (from `jax.shard_map`
//! bodies, see `partition::global::explicit_reshards::manual`) in the device program: each
//! collective becomes one [`Instr::Collective`] on the same collective
//! machinery the partitioner's reshards use, with its device groups from
//! the op's `replica_groups` / `source_target_pairs` (partition ids, i.e.
//! mesh positions, mapped to device ids); `partition_id` becomes the
//! device's mesh position (an `iota` with a per-device offset).

use crate::diag::Diagnostic;
use crate::ir::ops::collectives::{reduction_of, AllGather, AllToAll, ReduceScatter};
use crate::ir::ops::replica_groups::GroupsForm;
use crate::ir::{ElemType, OpKind, TensorType};
use crate::partition::global::explicit_reshards::manual::WRITTEN_IN_SHARD_MAP;
use crate::partition::global::{Cause, GValueId};
use crate::partition::local::builder::{internal, DeviceBuilder};
use crate::partition::program::{Instr, LocalId, PerDevice};
use crate::partition::reshard::collective::{AllToAllDims, Collective, CollectiveKind};
use crate::sharding::{AxisRef, Mesh};

/// Device ids of partition ids (mesh positions).
fn devices_of(mesh: &Mesh, ids: &[i64]) -> Vec<i64> {
    ids.iter().map(|&p| mesh.device_at(p)).collect()
}

/// The mesh axes along which the members of `group` (partition ids)
/// differ, in mesh order: what the group spans, for listings.
fn spanned_axes(mesh: &Mesh, group: &[i64]) -> Vec<AxisRef> {
    let coords: Vec<Vec<i64>> = group.iter().map(|&p| mesh.coords_of_linear(p)).collect();
    mesh.axes
        .iter()
        .enumerate()
        .filter(|(k, _)| coords.iter().any(|c| c[*k] != coords[0][*k]))
        .map(|(_, a)| AxisRef::full(a.name.clone()))
        .collect()
}

impl DeviceBuilder<'_> {
    /// One user collective: `operand` (global value, local block `local`)
    /// to `result`.
    pub(super) fn user_collective(
        &mut self,
        i: usize,
        kind: &OpKind,
        operand: GValueId,
        local: LocalId,
        result: GValueId,
    ) -> Result<(), Diagnostic> {
        if let OpKind::AllToAll(a @ AllToAll { .. }) = kind {
            let rank = self.values[local].ty.rank();
            let (split, concat) = a
                .dims(rank)
                .map_err(|e| internal(self.prog.steps[i].cause.pos, e))?;
            if split == concat {
                let g = a.attrs.replica_groups.rows.first().map_or(1, |g| g.len());
                return self.same_dim_all_to_all(i, kind, operand, split, g, local, result);
            }
        }
        let out = self.local(result)?;
        self.push_user_collective(i, kind, operand, local, out, result, None)
    }

    /// The collective of `kind` from local block `local` to `out`, the
    /// block of global `result` (or a view of it: `a2a` then names the
    /// all-to-all's (source, target) dimensions of the view).
    #[allow(clippy::too_many_arguments)]
    fn push_user_collective(
        &mut self,
        i: usize,
        kind: &OpKind,
        operand: GValueId,
        local: LocalId,
        out: LocalId,
        result: GValueId,
        a2a: Option<(usize, usize)>,
    ) -> Result<(), Diagnostic> {
        let step = &self.prog.steps[i];
        let pos = step.cause.pos;
        let mesh = self.mesh_of(result)?.clone();
        let in_ty = self.values[local].ty.clone();
        let out_ty = self.values[out].ty.clone();
        let rank = in_ty.rank();
        let bad = |e: String| internal(pos, format!("{}: {e}", step.cause.op));
        let mut dim_factors = vec![1i64; rank];
        let mut all_to_all = None;
        let mut reduction = None;
        let (ckind, groups) = match kind {
            OpKind::AllReduce(a) => {
                reduction = reduction_of(&a.body);
                (CollectiveKind::AllReduce, Some(&a.attrs.replica_groups))
            }
            OpKind::AllGather(a @ AllGather { .. }) => {
                let d = a.dim(rank).map_err(bad)?;
                dim_factors[d] = a.attrs.replica_groups.rows.first().map_or(1, |g| g.len()) as i64;
                (CollectiveKind::AllGather, Some(&a.attrs.replica_groups))
            }
            OpKind::ReduceScatter(a @ ReduceScatter { .. }) => {
                let d = a.dim(rank).map_err(bad)?;
                dim_factors[d] = a.attrs.replica_groups.rows.first().map_or(1, |g| g.len()) as i64;
                reduction = reduction_of(&a.body);
                (CollectiveKind::ReduceScatter, Some(&a.attrs.replica_groups))
            }
            OpKind::AllToAll(a @ AllToAll { .. }) => {
                let (src_dim, tgt_dim) = match a2a {
                    Some(dims) => dims,
                    None => {
                        let (split, concat) = a.dims(rank).map_err(bad)?;
                        (concat, split)
                    }
                };
                all_to_all = Some(AllToAllDims { src_dim, tgt_dim });
                (CollectiveKind::AllToAll, Some(&a.attrs.replica_groups))
            }
            OpKind::CollectivePermute(_) => (CollectiveKind::CollectivePermute, None),
            other => return Err(bad(format!("{} is not a collective", other.name()))),
        };
        if matches!(
            ckind,
            CollectiveKind::AllReduce | CollectiveKind::ReduceScatter
        ) && reduction.is_none()
        {
            return Err(bad("its reduction body is not one binary op".into()));
        }
        // Groups written as mesh axes name their axes (in rank order, sub-axes
        // included); dense ones are read off the first group.
        let axes = match groups.map(|g| (&g.form, g.rows.first())) {
            None => Vec::new(),
            Some((GroupsForm::MeshAxes { axes, .. }, _)) => axes.clone(),
            Some((GroupsForm::Dense, first)) => {
                first.map_or_else(Vec::new, |g| spanned_axes(&mesh, g))
            }
        };
        let rows = match (kind, groups) {
            (OpKind::CollectivePermute(p), _) => &p.attrs.source_target_pairs.rows,
            (_, Some(g)) => &g.rows,
            (_, None) => return Err(bad("has no device groups".into())),
        };
        let dim_axes = (0..rank)
            .map(|d| {
                if dim_factors[d] > 1 {
                    axes.clone()
                } else {
                    Vec::new()
                }
            })
            .collect();
        let collective = Collective {
            kind: ckind,
            axes,
            dim_axes,
            dim_factors,
            all_to_all,
            reduction,
            groups: rows.iter().map(|g| devices_of(&mesh, g)).collect(),
            in_sharding: self.prog.values[operand].sharding.clone(),
            out_sharding: self.prog.values[result].sharding.clone(),
            global_shape: self.prog.values[operand].ty.shape.clone(),
            in_local_shape: in_ty.shape.clone(),
            out_local_shape: out_ty.shape.clone(),
            elem: in_ty.elem,
        };
        let cause = Cause {
            reason: WRITTEN_IN_SHARD_MAP.into(),
            ..step.cause.clone()
        };
        if ckind == CollectiveKind::AllReduce {
            self.zero_padded[out] = self.zero_padded[local];
        }
        self.instrs.push(Instr::Collective {
            collective: Box::new(collective),
            operand: local,
            result: out,
            step: i,
            cause,
        });
        Ok(())
    }

    /// An all-to-all that splits and concatenates one dimension `d`
    /// (`lax.all_to_all(x, axis, 0, 0)`, expert parallelism): member `m`'s
    /// chunk `r` of `d` becomes chunk `m` of member `r`'s result. The
    /// collective machinery moves chunks between two different dimensions,
    /// so `d` (length `g * c`) is viewed as `[1, g, c]`: the all-to-all
    /// splits the `g` dimension (one chunk per member) and concatenates
    /// along the unit one, giving `[g, 1, c]`, which reshapes back to
    /// `g * c` in member order. The reshapes are free (row-major views) and
    /// each device receives `(g - 1) * c` rows, as XLA's all-to-all does.
    #[allow(clippy::too_many_arguments)]
    fn same_dim_all_to_all(
        &mut self,
        i: usize,
        kind: &OpKind,
        operand: GValueId,
        d: usize,
        g: usize,
        local: LocalId,
        result: GValueId,
    ) -> Result<(), Diagnostic> {
        let in_ty = self.values[local].ty.clone();
        let pos = self.prog.steps[i].cause.pos;
        let (g, n) = (g as i64, in_ty.shape[d]);
        if g == 0 || n % g != 0 {
            return Err(internal(
                pos,
                format!("all_to_all: dimension {d} of {n} does not split into {g} chunks"),
            ));
        }
        let view = |outer: i64, inner: i64| {
            let mut s = in_ty.shape.clone();
            s.splice(d..=d, [outer, inner, n / g]);
            in_ty.with_shape(s)
        };
        let name = self.names[result].clone();
        let split = self.new_value(view(1, g), format!("{name}.chunks"));
        self.instrs.push(Instr::Op {
            kind: OpKind::Reshape(crate::ir::ops::reshape::Reshape),
            operands: vec![local],
            results: vec![split],
            step: i,
        });
        self.zero_padded[split] = self.zero_padded[local];
        let moved = self.new_value(view(g, 1), format!("{name}.moved"));
        self.push_user_collective(i, kind, operand, split, moved, result, Some((d, d + 1)))?;
        self.op(
            i,
            OpKind::Reshape(crate::ir::ops::reshape::Reshape),
            vec![moved],
            &[result],
        )
    }

    /// `partition_id`: the device's position in the mesh, as a one-element
    /// `iota` from that offset, reshaped to a scalar.
    pub(super) fn partition_id(&mut self, i: usize, result: GValueId) -> Result<(), Diagnostic> {
        let mesh = self.mesh_of(result)?.clone();
        let order = mesh.device_list();
        let pos = self.prog.steps[i].cause.pos;
        let mut offsets = Vec::with_capacity(self.devices.len());
        for &d in &self.devices {
            let p = order
                .iter()
                .position(|&x| x == d)
                .ok_or_else(|| internal(pos, format!("device {d} is not in the mesh")))?;
            offsets.push(p as i64);
        }
        let one = self.new_value(
            TensorType::new(vec![1], ElemType::U32),
            format!("{}.iota", self.names[result]),
        );
        self.instrs.push(Instr::Iota {
            result: one,
            dim: 0,
            offset: PerDevice(offsets),
            step: i,
        });
        self.op(
            i,
            OpKind::Reshape(crate::ir::ops::reshape::Reshape),
            vec![one],
            &[result],
        )
    }
}
