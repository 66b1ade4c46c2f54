//! `chlo.ragged_dot` on local blocks. Batch, free and contracting
//! dimensions are handled as for `dot_general` (padded contracting blocks
//! masked to zero before the partial sums). When lhs's ragged dimension
//! (the tokens) is sharded, each device holds a block of rows
//! `[start, start + local)` of the global ragged dimension: the local op
//! gets that start as a fourth operand (a per-device scalar), and the
//! kernel intersects every group's global row range with the block, so
//! each device multiplies its own tokens by their experts with no data
//! moved (XLA keeps them local too). When rhs's group dimension (the
//! experts) is sharded, each device holds a block of groups: the local op
//! gets its first global group as a fifth operand, multiplies only the
//! rows of its groups, and the result is a partial sum over the group
//! axis (the rule's reduction factor), reduced where a use needs it.
//! `group_sizes` is replicated along its groups (the rule says so).
//!
//! Mode 2 (a ragged contracting dimension, the weight gradient of mode
//! 1): a device holding a block of the tokens sums each group over the
//! tokens it holds (a partial sum over that axis, as any contraction),
//! and a device holding a block of the result's groups computes only
//! those; the same two starts tell the kernel where its blocks lie.
//! Mode 3 (a ragged batch dimension) is its `dot_general`.

use crate::diag::Diagnostic;
use crate::ir::ops::ragged_dot::{RaggedDot, RaggedMode};
use crate::ir::{ElemType, OpKind, ReduceKind};
use crate::partition::global::GValueId;
use crate::partition::local::builder::{internal, DeviceBuilder};
use crate::partition::local::padding::identity_of;
use crate::partition::program::LocalId;

impl DeviceBuilder<'_> {
    pub(super) fn local_ragged_dot(
        &mut self,
        i: usize,
        r: &RaggedDot,
        operands: &[GValueId],
        mut locals: Vec<LocalId>,
        results: &[GValueId],
    ) -> Result<(), Diagnostic> {
        let pos = self.prog.steps[i].cause.pos;
        if operands.len() != 3 {
            return Err(internal(pos, "chlo.ragged_dot takes three operands".into()));
        }
        let lhs_rank = self.prog.values[operands[0]].ty.rank();
        let rhs_rank = self.prog.values[operands[1]].ty.rank();
        let plan = r.plan(lhs_rank, rhs_rank).map_err(|e| internal(pos, e))?;
        for (k, dims) in [(0, &r.dims.lhs_contract), (1, &r.dims.rhs_contract)] {
            for &d in dims.iter() {
                let fill = identity_of(ReduceKind::Add, self.local_ty(locals[k]).elem);
                locals[k] = self.mask_if_padded(i, locals[k], operands[k], d as usize, fill)?;
            }
        }
        // Where the device's blocks start: of the ragged dimension, and of
        // the groups (rhs's in mode 1, the result's in mode 2).
        let groups = match plan.mode {
            RaggedMode::Rows { group } => Some((self.layout(operands[1])?, group)),
            RaggedMode::Contracting { .. } => Some((self.layout(results[0])?, 0)),
            RaggedMode::Batch => None,
        };
        if let Some((groups, group_dim)) = groups {
            let rows = self.layout(operands[0])?;
            if rows.dims()[plan.ragged].shards > 1 || groups.dims()[group_dim].shards > 1 {
                for (layout, dim, what) in
                    [(&rows, plan.ragged, "row"), (&groups, group_dim, "group")]
                {
                    let starts = self.block_starts(layout, dim)?;
                    let name = format!("{}.{what}_start", self.name_of(results[0]));
                    locals.push(self.device_scalar(i, ElemType::I64, starts, name));
                }
            }
        }
        self.op(i, OpKind::RaggedDot(r.clone()), locals, results)
    }
}
