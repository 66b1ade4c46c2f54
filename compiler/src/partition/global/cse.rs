//! Common subexpressions merged in the inlined entry function, as XLA's
//! CSE runs after its sharding propagation: an op that repeats an earlier op of
//! the same block — same kind and attributes, same operands, same result
//! shardings — is that op. JAX repeats whole computations (a helper
//! function called at every use, inlined; Shardy's propagation keeps the
//! copies), and each copy partitioned on its own would move its own
//! halos or gather its own operand. Ops with effects (custom calls,
//! tokens, sends and receives) and ops with structural regions stay.

use std::collections::HashMap;

use crate::ir::{Function, OpId, OpKind, Value};

/// Whether an op may do more than compute its results.
fn has_effects(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::CustomCall(_)
            | OpKind::Send(_)
            | OpKind::Recv(_)
            | OpKind::AfterAll(_)
            | OpKind::CreateToken(_)
            | OpKind::Call(_)
    )
}

/// Merge the repeated ops of `f` (calls inlined); returns how many went.
pub(crate) fn merge_repeated_ops(f: &mut Function) -> usize {
    let merged = repeats(f);
    if merged.is_empty() {
        return 0;
    }
    let mut map: Vec<Option<Value>> = vec![None; f.values.len()];
    let mut dropped = vec![false; f.ops.len()];
    for &(id, first) in &merged {
        let pairs: Vec<(Value, Value)> = f
            .op(id)
            .results
            .iter()
            .copied()
            .zip(f.op(first).results.iter().copied())
            .collect();
        for (r, r0) in pairs {
            map[r.index()] = Some(r0);
        }
        dropped[id.index()] = true;
    }
    f.replace_uses(&map);
    f.body.retain(|id| !dropped[id.index()]);
    for id in f.all_ops() {
        for r in &mut f.op_mut(id).regions {
            r.body.retain(|id| !dropped[id.index()]);
        }
    }
    merged.len()
}

/// Each repeated op with the earlier op it repeats (an op repeating a
/// repeat maps to the first), in program order.
fn repeats(f: &Function) -> Vec<(OpId, OpId)> {
    let mut out = Vec::new();
    let mut same: HashMap<Value, Value> = HashMap::new();
    let mut blocks = vec![f.body.clone()];
    for id in f.all_ops() {
        blocks.extend(f.op(id).regions.iter().map(|r| r.body.clone()));
    }
    for block in blocks {
        let mut seen: HashMap<(String, Vec<Value>), Vec<OpId>> = HashMap::new();
        for id in block {
            let op = f.op(id);
            if has_effects(&op.kind) || !op.regions.is_empty() || op.results.is_empty() {
                continue;
            }
            let operands: Vec<Value> = op
                .operands
                .iter()
                .map(|v| *same.get(v).unwrap_or(v))
                .collect();
            let earlier = seen.entry((op.kind.name(), operands)).or_default();
            let found = earlier.iter().copied().find(|&e| {
                let e = f.op(e);
                e.kind == op.kind
                    && e.shardings == op.shardings
                    && e.attrs == op.attrs
                    && e.results.len() == op.results.len()
                    && e.results
                        .iter()
                        .zip(&op.results)
                        .all(|(a, b)| f.value(*a).ty == f.value(*b).ty)
            });
            match found {
                Some(first) => {
                    for (&r, &r0) in op.results.iter().zip(&f.op(first).results) {
                        same.insert(r, r0);
                    }
                    out.push((id, first));
                }
                None => earlier.push(id),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parse_module;

    /// Repeats merge, chains of repeats too; another sharding, another
    /// attribute or an op with effects stays.
    #[test]
    fn repeated_ops_merge_and_differing_ones_stay() {
        let m = parse_module(
            r#"
sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>
  %1 = stablehlo.add %arg0, %arg0 : tensor<4xf32>
  %2 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : tensor<4xf32>
  %3 = stablehlo.negate %0 : tensor<4xf32>
  %4 = stablehlo.negate %1 : tensor<4xf32>
  %5 = stablehlo.custom_call @foo(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  %6 = stablehlo.custom_call @foo(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  %7 = stablehlo.add %3, %4 : tensor<4xf32>
  %8 = stablehlo.add %7, %2 : tensor<4xf32>
  %9 = stablehlo.add %8, %5 : tensor<4xf32>
  %10 = stablehlo.add %9, %6 : tensor<4xf32>
  return %10 : tensor<4xf32>
}
"#,
        )
        .unwrap();
        let mut f = m.funcs[0].clone();
        assert_eq!(
            merge_repeated_ops(&mut f),
            2,
            "the second add and its negate"
        );
        assert_eq!(f.body.len(), 9);
        let sum = f.body[5];
        assert!(matches!(f.op(sum).kind, OpKind::Binary(_)));
        let [a, b] = f.op(sum).operands[..] else {
            panic!("two operands")
        };
        assert_eq!(a, b, "negate(%0) + negate(%1) reads one negate twice");
    }
}
