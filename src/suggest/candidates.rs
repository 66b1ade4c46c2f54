//! The shardings the search may give an argument, as moves from the one
//! it has: put one mesh axis on one dimension (taking it off wherever it
//! was), or take it off. Every dimension an op uses is one of the op's
//! factors (a batch, contracting or free dimension of a matmul, a reduced
//! dimension, ...), so a move is "a factor × an axis" from the argument's
//! point of view: propagation carries it through the factor to the other
//! operands and results. From a replicated tensor the moves give every
//! single-axis sharding; repeated moves reach every assignment of axes to
//! dimensions (axes on one dimension go major to minor in mesh order).
//!
//! A move must divide the dimension evenly: padded shards waste compute
//! and memory and are never what a person would write for an argument.
//!
//! Arguments of the same shape and element type usually play the same part
//! (the weights of the layers, their biases, the inputs and labels), so
//! the search also moves such a *group* at once: one move applied to every
//! member (Megatron's alternating column and row shardings stay
//! alternating when `data` is added to all of them).

use meshrun_compiler::ir::TensorType;
use meshrun_compiler::sharding::validate::sort_in_mesh_order;
use meshrun_compiler::sharding::{AxisRef, DimSharding, Mesh, TensorSharding};

/// Put `axis` on dimension `dim`, or take it off everywhere (`None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AxisMove {
    pub axis: String,
    pub dim: Option<usize>,
}

/// Every move on a tensor of rank `rank`: each axis of size > 1 to each
/// dimension, and each axis off.
pub fn moves(rank: usize, mesh: &Mesh) -> Vec<AxisMove> {
    let mut out = Vec::new();
    for a in mesh.axes.iter().filter(|a| a.size > 1) {
        for d in (0..rank).map(Some).chain([None]) {
            out.push(AxisMove {
                axis: a.name.clone(),
                dim: d,
            });
        }
    }
    out
}

/// `s` after `mv` on a tensor of `shape`; `None` when nothing changes or
/// the result would not divide its dimension.
pub fn apply_move(
    s: &TensorSharding,
    mv: &AxisMove,
    shape: &[i64],
    mesh: &Mesh,
) -> Option<TensorSharding> {
    let mut out = s.clone();
    for d in &mut out.dims {
        d.axes.retain(|a| a.name != mv.axis);
    }
    if let Some(d) = mv.dim {
        let dim = out.dims.get_mut(d)?;
        dim.axes.push(AxisRef::full(mv.axis.clone()));
        sort_in_mesh_order(mesh, &mut dim.axes);
        let n: i64 = dim.axes.iter().map(|a| a.size(mesh).unwrap_or(1)).product();
        let size = *shape.get(d)?;
        if size % n != 0 {
            return None;
        }
    }
    (out != *s).then_some(out)
}

/// The same sharding with every dimension closed and no priorities,
/// replicated or unreduced lists: the form moves produce, so shardings
/// read back from propagation compare equal to them.
pub fn normalize(s: &TensorSharding) -> TensorSharding {
    TensorSharding {
        mesh: s.mesh.clone(),
        dims: s
            .dims
            .iter()
            .map(|d| DimSharding::closed(d.axes.clone()))
            .collect(),
        replicated: Vec::new(),
        unreduced: Vec::new(),
        unreduced_op: Default::default(),
    }
}

/// True when no dimension is sharded.
pub fn is_replicated(s: &TensorSharding) -> bool {
    s.dims.iter().all(|d| d.axes.is_empty())
}

/// The free arguments (indices into `types`) grouped by type, in order of
/// first appearance.
pub fn groups(types: &[TensorType], free: &[bool]) -> Vec<Vec<usize>> {
    let mut out: Vec<(TensorType, Vec<usize>)> = Vec::new();
    for (i, t) in types.iter().enumerate() {
        if !free[i] {
            continue;
        }
        match out.iter_mut().find(|(u, _)| u == t) {
            Some((_, members)) => members.push(i),
            None => out.push((t.clone(), vec![i])),
        }
    }
    out.into_iter().map(|(_, m)| m).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mesh() -> Mesh {
        Mesh::new(&[("data", 4), ("model", 2)])
    }

    fn all_from(s: &TensorSharding, shape: &[i64]) -> Vec<String> {
        moves(shape.len(), &mesh())
            .iter()
            .filter_map(|m| apply_move(s, m, shape, &mesh()))
            .map(|s| s.to_string())
            .collect()
    }

    #[test]
    fn from_replicated_every_single_axis_sharding() {
        let r = TensorSharding::replicated("mesh", 2);
        assert_eq!(
            all_from(&r, &[16, 32]),
            [
                r#"<@mesh, [{"data"}, {}]>"#,
                r#"<@mesh, [{}, {"data"}]>"#,
                r#"<@mesh, [{"model"}, {}]>"#,
                r#"<@mesh, [{}, {"model"}]>"#,
            ]
        );
    }

    #[test]
    fn axes_join_in_mesh_order_and_move_between_dims() {
        let s = TensorSharding::new(
            "mesh",
            vec![
                DimSharding::closed(vec![AxisRef::full("model")]),
                DimSharding::closed(vec![]),
            ],
        );
        let got = all_from(&s, &[16, 32]);
        assert!(
            got.contains(&r#"<@mesh, [{"data", "model"}, {}]>"#.to_string()),
            "{got:?}"
        );
        assert!(
            got.contains(&r#"<@mesh, [{}, {"model"}]>"#.to_string()),
            "{got:?}"
        );
        assert!(got.contains(&r#"<@mesh, [{}, {}]>"#.to_string()), "{got:?}");
    }

    #[test]
    fn moves_that_do_not_divide_are_refused() {
        let r = TensorSharding::replicated("mesh", 2);
        // 6 splits 2 ways, not 4; 1 splits not at all.
        assert_eq!(all_from(&r, &[6, 1]), [r#"<@mesh, [{"model"}, {}]>"#]);
        assert!(all_from(&TensorSharding::replicated("mesh", 0), &[]).is_empty());
    }
}
