//! Selects between a value and itself: `select(p, x, x)` is `x`. JAX's
//! scatter with repeated indices (the gradient of `.at[idx].set`) writes
//! them, choosing between two copies of one zero; XLA's algebraic
//! simplifier folds them before its sharding propagation runs. Left in,
//! the predicate would take `x`'s sharding backward through the select
//! and hand it to the scatter of ids that computes it — a table every
//! device can build whole with no communication would then be built in
//! blocks and gathered again. Uses of the select become uses of `x`; the
//! select and the ops that only fed its predicate go (they compute
//! nothing anyone reads). A select the program annotates with a sharding
//! stays: the user asked for that sharding there.

use crate::ir::{Function, OpKind, Value, ValueDef};
use crate::propagation::blocks;

/// Ops that compute a value and nothing else, so one nobody reads can go.
fn is_pure(kind: &OpKind) -> bool {
    kind.is_elementwise()
        || matches!(
            kind,
            OpKind::Compare(_)
                | OpKind::Select(_)
                | OpKind::BroadcastInDim(_)
                | OpKind::Reshape(_)
                | OpKind::Transpose(_)
                | OpKind::Constant(_)
                | OpKind::Iota(_)
                | OpKind::Slice(_)
                | OpKind::Convert(_)
                | OpKind::Gather(_)
                | OpKind::Scatter(_)
        )
}

/// Fold `select(p, x, x)` to `x` in every block of `f`; returns how many.
pub fn fold_selects(f: &mut Function) -> usize {
    let mut map: Vec<Option<Value>> = vec![None; f.values.len()];
    let mut dropped = vec![false; f.ops.len()];
    let mut predicates = Vec::new();
    for id in f.all_ops() {
        let op = f.op(id);
        if let (OpKind::Select(_), [p, a, b]) = (&op.kind, op.operands.as_slice()) {
            let r = op.results[0];
            if same_value(f, *a, *b, 0)
                && f.sharding_of(r).is_none()
                && f.value(*a).ty == f.value(r).ty
            {
                map[r.index()] = Some(resolve(&map, *a));
                dropped[id.index()] = true;
                predicates.push(*p);
            }
        }
    }
    if predicates.is_empty() {
        return 0;
    }
    let folded = predicates.len();
    f.replace_uses(&map);
    // Drop what only fed the dropped selects' predicates.
    let mut uses = vec![0usize; f.values.len()];
    for id in f.all_ops() {
        if dropped[id.index()] {
            continue;
        }
        let op = f.op(id);
        for v in op
            .operands
            .iter()
            .chain(op.regions.iter().flat_map(|r| &r.returns))
        {
            uses[v.index()] += 1;
        }
    }
    for v in &f.returns {
        uses[v.index()] += 1;
    }
    while let Some(v) = predicates.pop() {
        if uses[v.index()] > 0 {
            continue;
        }
        let ValueDef::Result { op: id, .. } = f.value(v).def else {
            continue;
        };
        let op = f.op(id);
        if dropped[id.index()]
            || !is_pure(&op.kind)
            || !(op.regions.is_empty() || matches!(op.kind, OpKind::Scatter(_)))
            || op
                .results
                .iter()
                .any(|r| uses[r.index()] > 0 || f.sharding_of(*r).is_some())
        {
            continue;
        }
        dropped[id.index()] = true;
        for &o in &op.operands {
            uses[o.index()] -= 1;
            predicates.push(o);
        }
    }
    blocks::retain_ops(f, |_, id| !dropped[id.index()]);
    folded
}

/// Whether `a` and `b` hold the same elements by construction: one value,
/// or the same pure op (no regions) of the same operands, such as two
/// broadcasts of one zero (JAX writes each `jnp.zeros` on its own).
fn same_value(f: &Function, a: Value, b: Value, depth: usize) -> bool {
    if a == b {
        return true;
    }
    let (ValueDef::Result { op: x, index: i }, ValueDef::Result { op: y, index: j }) =
        (f.value(a).def, f.value(b).def)
    else {
        return false;
    };
    let (x, y) = (f.op(x), f.op(y));
    depth < 8
        && i == j
        && f.value(a).ty == f.value(b).ty
        && is_pure(&x.kind)
        && x.regions.is_empty()
        && y.regions.is_empty()
        && x.kind == y.kind
        && x.operands.len() == y.operands.len()
        && x.operands
            .iter()
            .zip(&y.operands)
            .all(|(&p, &q)| same_value(f, p, q, depth + 1))
}

/// What `v` stands for after earlier folds (a chain of selects).
fn resolve(map: &[Option<Value>], mut v: Value) -> Value {
    while let Some(next) = map[v.index()] {
        v = next;
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parse_module;

    #[test]
    fn a_select_between_one_value_is_that_value_and_its_predicate_goes() {
        let mut m = parse_module(
            r#"
sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, %arg1: tensor<8xi32>) -> tensor<8xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<8xi32>
  %p = stablehlo.compare EQ, %arg1, %z : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
  %s = stablehlo.select %p, %arg0, %arg0 : tensor<8xi1>, tensor<8xf32>
  %t = stablehlo.select %p, %s, %s {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>]>} : tensor<8xi1>, tensor<8xf32>
  %c0 = stablehlo.constant dense<0.0> : tensor<f32>
  %z0 = stablehlo.broadcast_in_dim %c0, dims = [] : (tensor<f32>) -> tensor<8xf32>
  %c1 = stablehlo.constant dense<0.0> : tensor<f32>
  %z1 = stablehlo.broadcast_in_dim %c1, dims = [] : (tensor<f32>) -> tensor<8xf32>
  %w = stablehlo.select %p, %z0, %z1 : tensor<8xi1>, tensor<8xf32>
  %c2 = stablehlo.constant dense<1.0> : tensor<f32>
  %z2 = stablehlo.broadcast_in_dim %c2, dims = [] : (tensor<f32>) -> tensor<8xf32>
  %v = stablehlo.select %p, %z0, %z2 : tensor<8xi1>, tensor<8xf32>
  %u0 = stablehlo.add %s, %t : tensor<8xf32>
  %u1 = stablehlo.add %u0, %w : tensor<8xf32>
  %u = stablehlo.add %u1, %v : tensor<8xf32>
  return %u : tensor<8xf32>
}
"#,
        )
        .unwrap();
        let f = &mut m.funcs[0];
        // Two selects fold (one between two broadcasts of one zero); the
        // one between 0 and 1 does not.
        assert_eq!(fold_selects(f), 2);
        let kinds: Vec<String> = f
            .body
            .iter()
            .map(|&id| f.op(id).kind.name().to_string())
            .collect();
        // The annotated select and the one between 0 and 1 stay, and so
        // does what feeds their predicate.
        assert_eq!(
            kinds.iter().filter(|k| k.contains("select")).count(),
            2,
            "{kinds:?}"
        );
        assert!(kinds.iter().any(|k| k.contains("compare")), "{kinds:?}");
        let add = f
            .body
            .iter()
            .copied()
            .find(|&id| f.op(id).kind == OpKind::Binary(crate::ir::BinaryOp::Add))
            .unwrap();
        assert_eq!(f.op(add).operands[0], f.args[0]);
    }
}
