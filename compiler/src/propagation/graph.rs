//! What propagation needs to know about a function's structure, computed
//! once: every op's sharding rule and op-priority class, the data-flow
//! edges of structural ops, the users of every value (in the order
//! Shardy's worklist is notified), and sharding groups.
//!
//! The worklist holds *nodes*: node `i < ops.len()` is op `i`, node
//! `ops.len() + k` is data-flow edge `k` (Shardy's `sdy.data_flow_edge`
//! ops, which sit right after their owner).

use std::collections::HashMap;

use crate::diag::Diagnostic;
use crate::ir::op_rules::rule_for_op_with;
use crate::ir::{Function, OpId, OpKind, Value, ValueDef};
use crate::rules::{OpShardingRule, RuleOptions};

use super::data_flow::{self, DataFlowEdge, Use};
use super::direction::OpClass;
use crate::ir::ops::sharding_group::ShardingGroup;

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
        for id in f.all_ops() {
            let op = f.op(id);
            if let (OpKind::ShardingGroup(ShardingGroup { group_id }), Some(&v)) =
                (&op.kind, op.operands.first())
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
    /// without one (constants, iota, calls, reshards, groups, structural
    /// ops).
    pub rules: Vec<Option<OpShardingRule>>,
    pub classes: Vec<OpClass>,
    pub elementwise: Vec<bool>,
    /// The data-flow edges; edge `k` is node `ops.len() + k`.
    pub edges: Vec<DataFlowEdge>,
    /// The identity rule of each edge (its sources to its owner).
    pub edge_rules: Vec<OpShardingRule>,
    /// The edge each value owns, if any.
    pub edge_of_owner: HashMap<Value, usize>,
    /// The value that holds each value's sharding (see
    /// `data_flow::owners`).
    pub owners: Vec<Value>,
    /// Users of each value as nodes, latest use first (MLIR use-list
    /// order), each once; a use as an edge's source is the edge. The
    /// function's return and the terminators of regions that feed no edge
    /// are not listed.
    pub users: Vec<Vec<OpId>>,
    /// Every node in the order MLIR's top-down driver first visits it: an
    /// op, its block-argument edges, the ops of its regions, its result
    /// edges.
    pub order: Vec<OpId>,
    pub groups: Groups,
}

impl FuncGraph {
    /// The facts of `f`, with the op rules that `options` choose
    /// (conservative propagation changes some rules).
    pub fn build(f: &Function, options: RuleOptions) -> Result<FuncGraph, Diagnostic> {
        let n = f.ops.len();
        let mut rules = vec![None; n];
        let mut classes = vec![OpClass::Other; n];
        let mut elementwise = vec![false; n];
        let uses = super::values::use_counts(f);
        for id in f.all_ops() {
            let op = f.op(id);
            rules[id.index()] = rule_for_op_with(f, id, options)?;
            // Scalars cannot be sharded, so their other uses do not matter.
            let multi_use = op
                .operands
                .iter()
                .any(|v| uses.get(v.index()).copied().unwrap_or(0) > 1 && f.ty(*v).rank() > 0);
            classes[id.index()] = OpClass::of(&op.kind, multi_use);
            elementwise[id.index()] = super::direction::is_elementwise(&op.kind);
        }
        let mut walk = Walk {
            f,
            edges: Vec::new(),
            uses: Vec::new(),
            order: Vec::new(),
        };
        walk.block(&f.body, 0);
        let edge_of_owner = walk
            .edges
            .iter()
            .enumerate()
            .map(|(k, e)| (e.owner, k))
            .collect();
        let mut users: Vec<Vec<OpId>> = vec![Vec::new(); f.values.len()];
        for &(v, node) in walk.uses.iter().rev() {
            if let Some(list) = users.get_mut(v.index()) {
                if list.last() != Some(&node) {
                    list.push(node);
                }
            }
        }
        let edge_rules = walk
            .edges
            .iter()
            .map(|e| {
                // A manual computation's block argument is in local shapes;
                // its edge's sharding is in the operand's view.
                let shape = match (&f.op(e.op).kind, e.sources.first()) {
                    (OpKind::ManualComputation(_), Some(&src)) => &f.ty(src).shape,
                    _ => &f.ty(e.owner).shape,
                };
                OpShardingRule::identity(shape, e.sources.len(), 1)
            })
            .collect();
        let owners = data_flow::owners(f, &walk.edges);
        Ok(FuncGraph {
            rules,
            classes,
            elementwise,
            edges: walk.edges,
            edge_rules,
            edge_of_owner,
            owners,
            users,
            order: walk.order,
            groups: Groups::build(f),
        })
    }

    /// The node of data-flow edge `k`.
    pub fn edge_node(&self, k: usize) -> OpId {
        OpId((self.rules.len() + k) as u32)
    }

    /// The data-flow edge a node stands for, if it is one.
    pub fn edge_index(&self, node: OpId) -> Option<usize> {
        node.index()
            .checked_sub(self.rules.len())
            .filter(|&k| k < self.edges.len())
    }

    /// The value that holds `v`'s sharding.
    pub fn owner(&self, v: Value) -> Value {
        self.owners.get(v.index()).copied().unwrap_or(v)
    }

    /// How many nodes there are (ops and edges).
    pub fn num_nodes(&self) -> usize {
        self.rules.len() + self.edges.len()
    }
}

/// The walk that numbers data-flow edges and lists uses in program order.
struct Walk<'f> {
    f: &'f Function,
    edges: Vec<DataFlowEdge>,
    /// `(value, node)` for every use, in program order.
    uses: Vec<(Value, OpId)>,
    order: Vec<OpId>,
}

/// Regions nest at most this deep (the parser and `ir::copy` allow less).
const MAX_DEPTH: usize = 64;

impl Walk<'_> {
    fn block(&mut self, ids: &[OpId], depth: usize) {
        let f = self.f;
        for &id in ids {
            self.order.push(id);
            let op = f.op(id);
            let first = self.edges.len();
            let own = data_flow::edges_of(f, id);
            let node = |local: usize| OpId((f.ops.len() + first + local) as u32);
            for (k, &v) in op.operands.iter().enumerate() {
                let user = data_flow::edge_of_use(f, id, Use::Operand(k)).map_or(id, node);
                self.uses.push((v, user));
            }
            // Block-argument edges sit at the start of the body, result
            // edges after the op.
            let (arg_edges, result_edges): (Vec<usize>, Vec<usize>) =
                (0..own.len()).partition(|&k| {
                    matches!(
                        f.values[own[k].owner.index()].def,
                        ValueDef::RegionArg { .. }
                    )
                });
            self.edges.extend(own);
            self.order.extend(arg_edges.into_iter().map(node));
            // A manual computation's body is propagated on its own
            // (`manual`), in its local shapes.
            let isolated = matches!(op.kind, OpKind::ManualComputation(_));
            if depth < MAX_DEPTH && !isolated {
                for (ri, r) in op.regions.iter().enumerate() {
                    self.block(&r.body, depth + 1);
                    for (k, &v) in r.returns.iter().enumerate() {
                        let at = Use::Return {
                            region: ri,
                            index: k,
                        };
                        if let Some(local) = data_flow::edge_of_use(f, id, at) {
                            self.uses.push((v, node(local)));
                        }
                    }
                }
            }
            self.order.extend(result_edges.into_iter().map(node));
        }
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
        let graph = FuncGraph::build(f, RuleOptions::default()).unwrap();
        assert_eq!(graph.users[f.args[0].index()].len(), 2);
    }
}
