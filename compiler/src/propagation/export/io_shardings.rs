//! Function argument and result shardings at export: users expect them to
//! divide their tensors evenly, so a non-divisible one is shrunk to its
//! longest prefix that divides (Shardy's
//! `UpdateNonDivisibleInputOutputShardingsPass`), and open dimensions of
//! the entry function's arguments and results drop everything from their
//! first sub-axis on (`RemoveSubAxesInInputOutputShardingsPass`).

use crate::ir::{Function, Module, TensorType};
use crate::rules::axis_algebra::axis_size;
use crate::sharding::{AxisRef, DimSharding, Mesh, TensorSharding};

use crate::propagation::axes::gcd;
use crate::propagation::state::Meshes;

/// The largest prefix of `sharding` that divides every dimension of `ty`
/// evenly: per dimension, whole axes while they divide what is left, then
/// at most one gcd-sized sub-axis.
pub fn evenly_sharded(sharding: &TensorSharding, ty: &TensorType, mesh: &Mesh) -> TensorSharding {
    let mut out = sharding.clone();
    for (dim, &size) in out.dims.iter_mut().zip(&ty.shape) {
        let sizes: Option<Vec<i64>> = dim.axes.iter().map(|a| axis_size(a, mesh).ok()).collect();
        let Some(sizes) = sizes else {
            continue;
        };
        let total: i64 = sizes.iter().product();
        if total != 0 && size % total == 0 {
            continue;
        }
        let mut left = size;
        let mut axes: Vec<AxisRef> = Vec::new();
        for (axis, &axis_size) in dim.axes.iter().zip(&sizes) {
            let common = gcd(axis_size, left);
            if common <= 1 {
                break;
            }
            if common == axis_size {
                axes.push(axis.clone());
                left /= common;
            } else {
                axes.push(AxisRef::sub(axis.name.clone(), axis.pre_size(), common));
                break;
            }
        }
        dim.axes = axes;
    }
    out
}

fn shrink_all(f: &mut Function, meshes: &Meshes) {
    for (i, &v) in f.args.iter().enumerate() {
        let ty = f.values[v.index()].ty.clone();
        if let Some(attrs) = f.arg_attrs.get_mut(i) {
            if let Some(s) = &attrs.sharding {
                if let Some(mesh) = meshes.resolve(&s.mesh) {
                    attrs.sharding = Some(evenly_sharded(s, &ty, mesh));
                }
            }
        }
    }
    for (i, ty) in f.result_types.clone().iter().enumerate() {
        if let Some(attrs) = f.result_attrs.get_mut(i) {
            if let Some(s) = &attrs.sharding {
                if let Some(mesh) = meshes.resolve(&s.mesh) {
                    attrs.sharding = Some(evenly_sharded(s, ty, mesh));
                }
            }
        }
    }
}

/// Open dimensions keep their axes up to the first sub-axis.
fn without_sub_axes_in_open_dims(s: &TensorSharding) -> TensorSharding {
    let mut out = s.clone();
    for d in out.dims.iter_mut().filter(|d| !d.is_closed) {
        let keep = d.axes.iter().take_while(|a| a.sub.is_none()).count();
        d.axes.truncate(keep);
    }
    out
}

/// Shrink non-divisible argument and result shardings of every function,
/// then drop sub-axes from the open dimensions of the entry function's.
pub fn fix_io_shardings(module: &mut Module) {
    let defs = module.meshes.clone();
    let meshes = Meshes { defs: &defs };
    for f in &mut module.funcs {
        shrink_all(f, &meshes);
    }
    let entry = module.entry().map(|f| f.name.clone());
    if let Some(f) = entry.and_then(|name| module.funcs.iter_mut().find(|f| f.name == name)) {
        for attrs in f.arg_attrs.iter_mut().chain(f.result_attrs.iter_mut()) {
            if let Some(s) = &attrs.sharding {
                attrs.sharding = Some(without_sub_axes_in_open_dims(s));
            }
        }
    }
}

/// `sharding` with every dimension closed, no priorities and no explicitly
/// replicated axes (Shardy's `getClosedLike`, as the close-shardings pass
/// uses it).
pub fn closed(sharding: &TensorSharding) -> TensorSharding {
    TensorSharding {
        mesh: sharding.mesh.clone(),
        dims: sharding
            .dims
            .iter()
            .map(|d| DimSharding::closed(d.axes.clone()))
            .collect(),
        replicated: Vec::new(),
        unreduced: sharding.unreduced.clone(),
        unreduced_op: sharding.unreduced_op,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::ElemType;

    /// Shardy's own examples for `getEvenlySharded` (mesh x=4, y=2).
    #[test]
    fn evenly_sharded_examples() {
        let mesh = Mesh::new(&[("x", 4), ("y", 2)]);
        let x = || AxisRef::full("x");
        let y = || AxisRef::full("y");
        type Dims = Vec<Vec<AxisRef>>;
        let cases: Vec<(Dims, Vec<i64>, Dims)> = vec![
            (vec![vec![x()]], vec![8], vec![vec![x()]]),
            (
                vec![vec![x()], vec![y()]],
                vec![2, 2],
                vec![vec![AxisRef::sub("x", 1, 2)], vec![y()]],
            ),
            (vec![vec![x()]], vec![3], vec![vec![]]),
            (vec![vec![y()]], vec![3], vec![vec![]]),
            (vec![vec![x(), y()]], vec![4], vec![vec![x()]]),
            (
                vec![vec![y(), x()]],
                vec![4],
                vec![vec![y(), AxisRef::sub("x", 1, 2)]],
            ),
        ];
        for (dims, shape, want) in cases {
            let s = TensorSharding::new("mesh", dims.into_iter().map(DimSharding::open).collect());
            let ty = TensorType::new(shape, ElemType::F32);
            let got = evenly_sharded(&s, &ty, &mesh);
            let got: Vec<Vec<AxisRef>> = got.dims.iter().map(|d| d.axes.clone()).collect();
            assert_eq!(got, want, "{s} on {ty}");
            assert!(s.dims.iter().all(|d| !d.is_closed), "closedness is kept");
        }
    }

    #[test]
    fn closing_drops_replicated_and_keeps_unreduced() {
        let mut s = TensorSharding::new("mesh", vec![DimSharding::open(vec![AxisRef::full("x")])]);
        s.replicated = vec![AxisRef::full("y")];
        s.unreduced = vec![AxisRef::full("z")];
        let c = closed(&s);
        assert_eq!(c.to_string(), r#"<@mesh, [{"x"}], unreduced={"z"}>"#);
    }
}
