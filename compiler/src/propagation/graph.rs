//! What propagation needs to know about a function's structure, computed
//! once: every op's sharding rule and op-priority class, the users of every
//! value (in the order Shardy's worklist is notified), and sharding groups.

use std::collections::HashMap;

use crate::diag::Diagnostic;
use crate::ir::{Function, OpId, OpKind, Value};
use crate::rules::{rule_for_op, OpShardingRule};

use super::direction::OpClass;

/// The sharding groups of a function: every member value shares one
/// sharding. Groups written with different ids on a common value are one
/// group; members are in the order their `sdy.sharding_group` ops appear.
#[derive(Debug, Clone, Default)]
pub struct Groups {
    group_of: HashMap<Value, usize>,
    pub members: Vec<Vec<Value>>,
    /// The first `sdy.sharding_group` op of each group (for diagnostics).
    pub first_op: Vec<OpId>,
}

impl Groups {
    pub fn build(f: &Function) -> Groups {
        // Union-find over the written group ids.
        let mut parent: HashMap<i64, i64> = HashMap::new();
        fn find(parent: &mut HashMap<i64, i64>, x: i64) -> i64 {
            let mut root = x;
            while let Some(&p) = parent.get(&root) {
                if p == root {
                    break;
                }
                root = p;
            }
            parent.insert(x, root);
            root
        }
        let mut first_id_of_value: HashMap<Value, i64> = HashMap::new();
        let mut ops = Vec::new();
        for (id, op) in f.ops_in_order() {
            if let (OpKind::ShardingGroup { group_id }, Some(&v)) = (&op.kind, op.operands.first())
            {
                parent.entry(*group_id).or_insert(*group_id);
                let first = *first_id_of_value.entry(v).or_insert(*group_id);
                let (a, b) = (find(&mut parent, first), find(&mut parent, *group_id));
                if a != b {
                    // The smaller id leads, as in Shardy's import.
                    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
                    parent.insert(hi, lo);
                }
                ops.push((id, *group_id, v));
            }
        }
        let mut groups = Groups::default();
        let mut index_of_root: HashMap<i64, usize> = HashMap::new();
        let mut roots: Vec<i64> = ops.iter().map(|&(_, g, _)| find(&mut parent, g)).collect();
        let mut sorted = roots.clone();
        sorted.sort_unstable();
        sorted.dedup();
        for (i, r) in sorted.iter().enumerate() {
            index_of_root.insert(*r, i);
        }
        groups.members = vec![Vec::new(); sorted.len()];
        groups.first_op = vec![OpId(0); sorted.len()];
        let mut seen_first = vec![false; sorted.len()];
        for ((id, _, v), root) in ops.into_iter().zip(roots.drain(..)) {
            let Some(&g) = index_of_root.get(&root) else {
                continue;
            };
            if !seen_first[g] {
                seen_first[g] = true;
                groups.first_op[g] = id;
            }
            if !groups.members[g].contains(&v) {
                groups.members[g].push(v);
            }
            groups.group_of.insert(v, g);
        }
        groups
    }

    /// The other values in `v`'s group (empty if it has none).
    pub fn members_of(&self, v: Value) -> &[Value] {
        match self.group_of.get(&v) {
            Some(&g) => &self.members[g],
            None => &[],
        }
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
}

/// The per-function facts propagation reads.
#[derive(Debug, Clone)]
pub struct FuncGraph {
    /// The sharding rule of each op (indexed by `OpId`), `None` for ops
    /// without one (constants, iota, calls, reshards, groups).
    pub rules: Vec<Option<OpShardingRule>>,
    pub classes: Vec<OpClass>,
    pub elementwise: Vec<bool>,
    /// Users of each value, latest op first (MLIR use-list order), each op
    /// once; the function's return is not listed.
    pub users: Vec<Vec<OpId>>,
    pub groups: Groups,
}

impl FuncGraph {
    pub fn build(f: &Function) -> Result<FuncGraph, Diagnostic> {
        let n = f.ops.len();
        let mut rules = vec![None; n];
        let mut classes = vec![OpClass::Other; n];
        let mut elementwise = vec![false; n];
        let mut users: Vec<Vec<OpId>> = vec![Vec::new(); f.values.len()];
        let uses = super::values::use_counts(f);
        for (id, op) in f.ops_in_order() {
            rules[id.index()] = rule_for_op(f, id)?;
            // Scalars cannot be sharded, so their other uses do not matter.
            let multi_use = op
                .operands
                .iter()
                .any(|v| uses.get(v.index()).copied().unwrap_or(0) > 1 && f.ty(*v).rank() > 0);
            classes[id.index()] = OpClass::of(&op.kind, multi_use);
            elementwise[id.index()] = super::direction::is_elementwise(&op.kind);
        }
        for &id in f.body.iter().rev() {
            let Some(op) = f.ops.get(id.index()) else {
                continue;
            };
            for v in op.operands.iter().rev() {
                if let Some(list) = users.get_mut(v.index()) {
                    if list.last() != Some(&id) {
                        list.push(id);
                    }
                }
            }
        }
        Ok(FuncGraph {
            rules,
            classes,
            elementwise,
            users,
            groups: Groups::build(f),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parse_module;

    #[test]
    fn groups_sharing_a_value_are_one_group() {
        let m = parse_module(
            r#"module @m {
  func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4xf32>) -> tensor<4xf32> {
    sdy.sharding_group %arg0 group_id=7 : tensor<4xf32>
    sdy.sharding_group %arg1 group_id=3 : tensor<4xf32>
    sdy.sharding_group %arg1 group_id=7 : tensor<4xf32>
    sdy.sharding_group %arg2 group_id=9 : tensor<4xf32>
    sdy.sharding_group %arg0 group_id=7 : tensor<4xf32>
    return %arg0 : tensor<4xf32>
  }
}"#,
        )
        .expect("parses");
        let f = m.entry().unwrap();
        let g = Groups::build(f);
        assert_eq!(g.members.len(), 2);
        assert_eq!(g.members_of(f.args[1]), &[f.args[0], f.args[1]]);
        assert_eq!(g.members_of(f.args[2]), &[f.args[2]]);
        // Users are listed latest first, once per op.
        let graph = FuncGraph::build(f).unwrap();
        assert_eq!(graph.users[f.args[0].index()].len(), 2);
    }
}
