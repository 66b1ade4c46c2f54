//! Removing mesh axes of size 1 from every sharding (Shardy's
//! `RemoveSizeOneAxesPass`, run by its import pipeline right after
//! inlining, before constants are split).
//!
//! An axis of size 1 splits nothing, so dropping it never changes where
//! data lives; keeping it only gives propagation an axis that every
//! factor could claim at no cost, which makes conflicts out of nothing
//! (JAX + XLA drop them before Shardy sees the module, so propagated
//! shardings never name them). Open/closed flags are kept; a priority is
//! dropped where a closed dimension ends up with no axes (Shardy's
//! verifier forbids a priority there). Meshes keep their axes.

use crate::ir::Module;
use crate::sharding::{AxisRef, Mesh, MeshRef, TensorSharding};

/// Remove the axes of size 1 from every sharding of `module`
/// ([`Module::for_each_sharding_mut`]'s: manual computations' included).
/// Shardings over a mesh the module does not define are left alone
/// (validation reports them).
pub fn remove_size_one_axes(module: &mut Module) {
    // Named meshes with an axis of size 1 (inline meshes are looked at
    // where they appear).
    let named: Vec<(String, Mesh)> = module
        .meshes
        .iter()
        .filter(|d| has_size_one_axis(&d.mesh))
        .map(|d| (d.name.clone(), d.mesh.clone()))
        .collect();
    let fix = |s: &mut TensorSharding| {
        let mesh = match &s.mesh {
            MeshRef::Symbol(name) => named.iter().find(|(n, _)| n == name).map(|(_, m)| m),
            MeshRef::Inline(m) => Some(m).filter(|m| has_size_one_axis(m)),
        };
        if let Some(mesh) = mesh.cloned() {
            strip(s, &mesh);
        }
    };
    module.for_each_sharding_mut(|s, _| fix(s));
}

fn has_size_one_axis(mesh: &Mesh) -> bool {
    mesh.axes.iter().any(|a| a.size == 1)
}

/// `s` without the axes of size 1 of `mesh`.
fn strip(s: &mut TensorSharding, mesh: &Mesh) {
    // A sub-axis has size > 1 by construction; an unknown axis is kept
    // for validation to report.
    let keep = |a: &AxisRef| a.size(mesh) != Some(1);
    for dim in &mut s.dims {
        dim.axes.retain(keep);
        if dim.axes.is_empty() && dim.is_closed {
            dim.priority = None;
        }
    }
    s.replicated.retain(keep);
    s.unreduced.retain(keep);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::OpKind;
    use crate::text::parse_module;

    #[test]
    fn size_one_axes_leave_every_kind_of_sharding() {
        let src = r#"module @m {
  sdy.mesh @mesh = <["a"=1, "b"=2, "c"=1]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "b"}, {"c", ?}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}p1, {}], replicated={"c"}>}) {
    %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"c", ?}p2, {?}], unreduced={"a"}>]>} : tensor<8x8xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"b"}, {"a"}]> : tensor<8x8xf32>
    %2 = sdy.reshard %1 <@mesh, [{}, {"b", "a"}]> : tensor<8x8xf32>
    return %2 : tensor<8x8xf32>
  }
}"#;
        let mut m = parse_module(src).expect("parses");
        remove_size_one_axes(&mut m);
        let f = m.entry().expect("entry");
        let arg = f.arg_attrs[0].sharding.as_ref().expect("arg sharding");
        assert_eq!(arg.to_string(), r#"<@mesh, [{"b"}, {?}]>"#);
        let res = f.result_attrs[0]
            .sharding
            .as_ref()
            .expect("result sharding");
        // The closed dimension left empty loses its priority.
        assert_eq!(res.to_string(), r#"<@mesh, [{}, {}]>"#);
        let kinds: Vec<String> = f
            .ops_in_order()
            .map(|(_, op)| match (&op.kind, &op.shardings) {
                (OpKind::ShardingConstraint(c), _) => c.sharding.to_string(),
                (OpKind::Reshard(r), _) => r.sharding.to_string(),
                (_, Some(s)) => s[0].to_string(),
                _ => String::new(),
            })
            .collect();
        assert_eq!(
            kinds,
            vec![
                r#"<@mesh, [{?}p2, {?}]>"#.to_string(),
                r#"<@mesh, [{"b"}, {}]>"#.to_string(),
                r#"<@mesh, [{}, {"b"}]>"#.to_string(),
            ]
        );
        // The mesh keeps its axes.
        assert_eq!(m.meshes[0].mesh.axes.len(), 3);
    }
}
