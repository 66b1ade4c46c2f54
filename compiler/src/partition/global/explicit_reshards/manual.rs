//! `sdy.manual_computation` in the global program: the body is inlined
//! into the steps, its values seen globally along the free (non-manual)
//! axes only.
//!
//! A body value of local type `T` is a global value of type `T` whose
//! sharding names no manual axis: along the free axes the partitioner
//! treats it as usual (reshards, compatible ops); along the manual axes
//! each device simply has its own. At the boundary no data moves:
//! operand `i` is first resharded to `in_shardings[i]` (manual axes lead
//! each dimension and divide it, which the verifier checked), and then its
//! local blocks *are* the blocks of the body argument under
//! `in_shardings[i]` with the manual axes removed — a [`GStepKind::Relabel`]
//! step. Results are the mirror image: the body's returned value is
//! resharded to `out_shardings[i]` without the manual axes, then relabelled
//! as the result with `out_shardings[i]`.
//!
//! The user's collectives and `partition_id` are compute steps of their own
//! op kind; the device program turns them into collectives and device
//! positions (`local_ops`), with the reason "written in shard_map".

use crate::diag::Diagnostic;
use crate::ir::ops::manual_computation::ManualComputation;
use crate::ir::{OpData, OpId};
use crate::partition::global::explicit_reshards::{op_label, Builder};
use crate::partition::global::{Cause, GStepKind};

/// The reason of every collective the user wrote.
pub const WRITTEN_IN_SHARD_MAP: &str = "written in shard_map";

impl Builder<'_> {
    pub(crate) fn manual_computation(
        &mut self,
        id: OpId,
        op: &OpData,
        mc: &ManualComputation,
    ) -> Result<(), Diagnostic> {
        let label = op_label(op, id);
        let f = self.f;
        let Some(body) = op.regions.first() else {
            return Ok(());
        };
        let cause = |reason: String| Cause {
            op: label.clone(),
            pos: op.pos,
            reason,
        };
        for (i, (&operand, &arg)) in op.operands.iter().zip(&body.args).enumerate() {
            let g = self.lookup(operand, op.pos)?;
            let rank = self.prog.values[g].ty.rank();
            let what = format!("{label} in_shardings[{i}]");
            let target = self.normalize(mc.in_shardings.get(i), rank, None, op.pos, &what)?;
            let at_target = self.reshard(
                g,
                &target,
                cause(format!("operand {i} to its in_sharding {target}")),
            )?;
            let inner = mc.body_sharding(&target);
            let local = self.new_value(f.ty(arg).clone(), inner);
            self.push(
                GStepKind::Relabel,
                vec![at_target],
                vec![local],
                cause(format!("operand {i} seen in the body")),
            );
            self.map.insert(arg, local);
        }
        for &inner_op in &body.body {
            self.op(inner_op, f.op(inner_op))?;
        }
        for (i, (&ret, &result)) in body.returns.iter().zip(&op.results).enumerate() {
            let g = self.lookup(ret, body.return_pos)?;
            let ty = f.ty(result).clone();
            let what = format!("{label} out_shardings[{i}]");
            let outer = self.normalize(mc.out_shardings.get(i), ty.rank(), None, op.pos, &what)?;
            let inner = mc.body_sharding(&outer);
            let at_inner = self.reshard(
                g,
                &inner,
                cause(format!(
                    "result {i} of the body to its out_sharding along the free axes {inner}"
                )),
            )?;
            let r = self.new_value(ty, outer);
            self.push(
                GStepKind::Relabel,
                vec![at_inner],
                vec![r],
                cause(format!("result {i} seen outside the body")),
            );
            self.map.insert(result, r);
        }
        Ok(())
    }
}
