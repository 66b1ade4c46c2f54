//! Partial results of a `reduce` whose body is not one all-reduce op
//! (`jnp.argmax`: a value and an index combined by a comparator). When its
//! reduction dimension is sharded, each device reduces its block; the
//! partial results are then combined with the op's own body, as XLA does:
//! each device's partial becomes its block of a new last dimension
//! ([`GStepKind::StackPartials`], a local reshape), that dimension is
//! all-gathered, and the same reduce runs over it.

use crate::diag::{DiagKind, Diagnostic};
use crate::ir::ops::reduce::{Reduce, ReduceAttrs};
use crate::ir::OpKind;
use crate::partition::global::explicit_reshards::{braced, Builder};
use crate::partition::global::{Cause, GStepKind, GValueId};
use crate::sharding::validate::sort_in_mesh_order;
use crate::sharding::{AxisRef, DimSharding, Mesh};

impl Builder<'_> {
    /// Combine `partials` (results of `reduce`, partial along `axes`) into
    /// full results. `inits` are the reduce's init operands.
    pub(crate) fn combine_partials(
        &mut self,
        reduce: &Reduce,
        partials: &[GValueId],
        inits: &[GValueId],
        axes: &[AxisRef],
        mesh: &Mesh,
        cause: &Cause,
    ) -> Result<Vec<GValueId>, Diagnostic> {
        let mut axes = axes.to_vec();
        sort_in_mesh_order(mesh, &mut axes);
        let mut shards = 1i64;
        for a in &axes {
            shards *= a.size(mesh).ok_or_else(|| {
                Diagnostic::new(
                    DiagKind::Sharding,
                    cause.pos,
                    format!("{}: axis {a} is not in the mesh", cause.op),
                )
            })?;
        }
        let reason = format!(
            "partial results of {} (its reduction dimension is sharded on {}) are combined with \
             its body: each device gathers the {shards} partial results",
            cause.op,
            braced(&axes)
        );
        let mut gathered = Vec::with_capacity(partials.len());
        for &p in partials {
            let v = self.prog.values[p].clone();
            let mut stacked_sharding = v.sharding.clone();
            stacked_sharding.unreduced.retain(|a| !axes.contains(a));
            let mut whole = stacked_sharding.clone();
            stacked_sharding
                .dims
                .push(DimSharding::closed(axes.clone()));
            whole.dims.push(DimSharding::closed(Vec::new()));
            let mut shape = v.ty.shape.clone();
            shape.push(shards);
            let stacked = self.new_value(v.ty.with_shape(shape), stacked_sharding);
            self.push(
                GStepKind::StackPartials { axes: axes.clone() },
                vec![p],
                vec![stacked],
                Cause {
                    reason: String::new(),
                    ..cause.clone()
                },
            );
            let g = self.reshard(
                stacked,
                &whole,
                Cause {
                    reason: reason.clone(),
                    ..cause.clone()
                },
            )?;
            gathered.push(g);
        }
        let rank = self.prog.values[partials[0]].ty.rank() as i64;
        let again = Reduce {
            attrs: ReduceAttrs {
                dimensions: vec![rank],
            },
            body: reduce.body.clone(),
        };
        let mut results = Vec::with_capacity(partials.len());
        for &p in partials {
            let v = self.prog.values[p].clone();
            let mut s = v.sharding.clone();
            s.unreduced.retain(|a| !axes.contains(a));
            results.push(self.new_value(v.ty, s));
        }
        let mut operands = gathered;
        operands.extend_from_slice(inits);
        self.push(
            GStepKind::Compute(OpKind::Reduce(again)),
            operands,
            results.clone(),
            Cause {
                reason: String::new(),
                ..cause.clone()
            },
        );
        Ok(results)
    }
}
