//! `sdy.manual_computation` in propagation. Shardy treats the op as a
//! data-flow op whose `out_shardings` are the shardings of its results;
//! here they seed the results (as an annotation would), so that users of a
//! `shard_map` result see how its blocks lie. Propagation does not yet
//! enter the body along the free axes (the body stays as written: values
//! the user did not constrain are replicated along the free axes), nor
//! push `in_shardings` back to the operands; the partitioner reshards each
//! operand to its `in_shardings` entry.

use crate::ir::{Function, Module, OpKind};

/// Give every manual computation without an `sdy.sharding` its
/// `out_shardings` as the shardings of its results.
pub fn seed_out_shardings(module: &mut Module) {
    for f in &mut module.funcs {
        seed_function(f);
    }
}

fn seed_function(f: &mut Function) {
    for id in f.all_ops() {
        let op = f.op_mut(id);
        if let OpKind::ManualComputation(mc) = &op.kind {
            if op.shardings.is_none() && !mc.out_shardings.is_empty() {
                op.shardings = Some(mc.out_shardings.clone());
            }
        }
    }
}
