//! User-priority propagation (Shardy's `UserPriorityPropagationPass`,
//! SPEC §5): dimension shardings with priority `p > 0` start empty and
//! closed, their axes held back as explicitly replicated; round `p`
//! (lowest first) restores them and runs a full op-priority propagation.
//! A dimension without a priority counts as `p0`, as in Shardy
//! (`kDefaultPriority = 0`). Because held-back dimensions are closed,
//! nothing propagated in an earlier round can take their place.

use std::collections::BTreeMap;

use crate::sharding::validate::sort_in_mesh_order;
use crate::sharding::{AxisRef, DimSharding, TensorSharding};

use super::provenance::{Origin, Slot};
use super::state::{FuncState, Meshes};

/// The shardings that have dimensions of a priority above 0, per priority,
/// with their original form.
pub type HeldBack = BTreeMap<i64, Vec<(Slot, TensorSharding)>>;

fn priority(d: &DimSharding) -> i64 {
    d.priority.unwrap_or(0)
}

/// The sharding of round 0: `p0` dimensions lose their priority, higher
/// ones become `{}` with their axes explicitly replicated.
fn initial(s: &TensorSharding, meshes: &Meshes) -> TensorSharding {
    let mut out = s.clone();
    for d in &mut out.dims {
        if priority(d) == 0 {
            d.priority = None;
        } else {
            out.replicated.append(&mut d.axes);
            *d = DimSharding::replicated();
        }
    }
    if let Some(mesh) = meshes.resolve(&s.mesh) {
        sort_in_mesh_order(mesh, &mut out.replicated);
    }
    out
}

/// Hold back every dimension of priority above 0 in `state`; returns what
/// was held back.
pub fn hold_back(state: &mut FuncState, meshes: &Meshes) -> HeldBack {
    let mut held = HeldBack::new();
    let slots = (0..state.values.len())
        .map(|i| Slot::Value(crate::ir::Value(i as u32)))
        .chain((0..state.results.len()).map(Slot::Result))
        .collect::<Vec<_>>();
    for slot in slots {
        let Some(s) = state.get(slot).cloned() else {
            continue;
        };
        let mut priorities: Vec<i64> = s.dims.iter().map(priority).filter(|&p| p > 0).collect();
        priorities.sort_unstable();
        priorities.dedup();
        for p in &priorities {
            held.entry(*p).or_default().push((slot, s.clone()));
        }
        let init = initial(&s, meshes);
        state
            .provenance
            .record(slot, Some(&init), |_, _| Origin::Annotated);
        state.set(slot, Some(init));
    }
    held
}

/// Restore the dimensions of priority `p` of the shardings held back.
pub fn restore(state: &mut FuncState, held: &[(Slot, TensorSharding)], p: i64) {
    for (slot, original) in held {
        let Some(current) = state.get(*slot).cloned() else {
            continue;
        };
        let mut next = current.clone();
        let mut restored: Vec<AxisRef> = Vec::new();
        for (d, o) in next.dims.iter_mut().zip(&original.dims) {
            if priority(o) == p {
                *d = DimSharding {
                    priority: None,
                    ..o.clone()
                };
                restored.extend(o.axes.iter().cloned());
            }
        }
        next.replicated.retain(|a| !restored.contains(a));
        state
            .provenance
            .record(*slot, Some(&next), |_, _| Origin::Annotated);
        state.set(*slot, Some(next));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::SrcPos;
    use crate::sharding::{Mesh, MeshDef};

    #[test]
    fn held_back_dimensions_return_in_their_round() {
        let defs = vec![MeshDef {
            name: "mesh".into(),
            mesh: Mesh::new(&[("a", 2), ("b", 2), ("c", 2)]),
            attrs: None,
            pos: SrcPos::UNKNOWN,
        }];
        let meshes = Meshes { defs: &defs };
        let dim = |axes: &[&str], closed: bool, p: Option<i64>| DimSharding {
            axes: axes.iter().map(|a| AxisRef::full(*a)).collect(),
            is_closed: closed,
            priority: p,
        };
        let original = TensorSharding::new(
            "mesh",
            vec![
                dim(&["c"], false, Some(2)),
                dim(&["a"], true, Some(1)),
                dim(&["b"], true, None),
            ],
        );
        let mut f = crate::ir::Function::new("f", vec![]);
        let v = crate::ir::Value(0);
        f.values.push(crate::ir::ValueData {
            ty: crate::ir::TensorType::new(vec![4, 4, 4], crate::ir::ElemType::F32),
            def: crate::ir::ValueDef::Arg(0),
        });
        let mut state = FuncState::load(&f);
        state.set(Slot::Value(v), Some(original));
        let held = hold_back(&mut state, &meshes);
        assert_eq!(held.keys().copied().collect::<Vec<_>>(), vec![1, 2]);
        let show = |st: &FuncState| st.get(Slot::Value(v)).map(|s| s.to_string()).unwrap();
        assert_eq!(
            show(&state),
            r#"<@mesh, [{}, {}, {"b"}], replicated={"a", "c"}>"#
        );
        restore(&mut state, &held[&1], 1);
        assert_eq!(
            show(&state),
            r#"<@mesh, [{}, {"a"}, {"b"}], replicated={"c"}>"#
        );
        restore(&mut state, &held[&2], 2);
        assert_eq!(show(&state), r#"<@mesh, [{"c", ?}, {"a"}, {"b"}]>"#);
    }
}
