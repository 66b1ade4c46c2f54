//! Device groups: the devices that differ only along some (sub-)axes of a
//! mesh. Every collective runs independently inside each such group, so the
//! groups (and the rank of each device inside its group) are what a runtime
//! needs to execute it.
//!
//! A device's rank in its group is the mixed-radix number formed by its
//! coordinates along the given axes, in the order given (the first axis is
//! the most significant digit). That is the same digit order a dimension
//! sharding uses for its shard index (SPEC §2), so "member `r` of the group"
//! and "shard `r` along those axes" coincide.

use std::collections::HashMap;

use crate::sharding::validate::validate_mesh_structure;
use crate::sharding::{AxisRef, Mesh};

/// Why a list of axes does not describe device groups of a mesh.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GroupError {
    #[error("invalid mesh: {0}")]
    InvalidMesh(String),
    #[error("axis {axis} is not in the mesh (axes: {available})")]
    UnknownAxis { axis: String, available: String },
    #[error("sub-axis {axis} does not fit axis \"{name}\" of size {size}")]
    BadSubAxis {
        axis: String,
        name: String,
        size: i64,
    },
    #[error(
        "axes {first} and {second} overlap: a device group cannot use one part of an axis twice"
    )]
    Overlap { first: String, second: String },
}

/// One digit of a group rank: the coordinate along `mesh_axis`, divided by
/// `stride`, modulo `size` (a full axis of size n is stride 1, size n;
/// `"x":(m)k` on an axis of size n is stride n/(m*k), size k).
#[derive(Debug, Clone, Copy)]
struct Digit {
    mesh_axis: usize,
    stride: i64,
    size: i64,
}

fn digits(mesh: &Mesh, axes: &[AxisRef]) -> Result<Vec<Digit>, GroupError> {
    let mut out = Vec::with_capacity(axes.len());
    // (mesh axis, [pre, pre*size)) of every reference, to detect overlaps.
    let mut spans: Vec<(usize, i64, i64, &AxisRef)> = Vec::with_capacity(axes.len());
    for a in axes {
        let Some(ix) = mesh.axis_index(&a.name) else {
            return Err(GroupError::UnknownAxis {
                axis: a.to_string(),
                available: mesh
                    .axes
                    .iter()
                    .map(|m| format!("\"{}\"", m.name))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        let n = mesh.axes[ix].size;
        let (pre, size) = match a.sub {
            Some(s) => (s.pre_size, s.size),
            None => (1, n),
        };
        let end = pre
            .checked_mul(size)
            .filter(|&e| pre >= 1 && size >= 1 && n % e == 0);
        let Some(end) = end else {
            return Err(GroupError::BadSubAxis {
                axis: a.to_string(),
                name: a.name.clone(),
                size: n,
            });
        };
        if let Some(&(_, _, _, other)) = spans
            .iter()
            .find(|&&(m, p, e, _)| m == ix && p < end && pre < e)
        {
            return Err(GroupError::Overlap {
                first: other.to_string(),
                second: a.to_string(),
            });
        }
        spans.push((ix, pre, end, a));
        out.push(Digit {
            mesh_axis: ix,
            stride: n / end,
            size,
        });
    }
    Ok(out)
}

/// The device groups of `mesh` along `axes`: each group lists its devices
/// by rank (mixed radix over `axes`, first axis most significant); groups
/// are ordered by the mesh position of their rank-0 device. With no axes
/// every device is a group of its own.
pub fn device_groups(mesh: &Mesh, axes: &[AxisRef]) -> Result<Vec<Vec<i64>>, GroupError> {
    validate_mesh_structure(mesh).map_err(|e| GroupError::InvalidMesh(e.to_string()))?;
    // Groups list every device: a mesh of absurd size is refused here
    // rather than allocated (the partitioner's own limit is the same).
    let devices = mesh
        .axes
        .iter()
        .try_fold(1i64, |n, a| n.checked_mul(a.size))
        .filter(|&n| n <= MAX_GROUP_DEVICES);
    if devices.is_none() {
        return Err(GroupError::InvalidMesh(format!(
            "more than {MAX_GROUP_DEVICES} devices"
        )));
    }
    let digits = digits(mesh, axes)?;
    let group_size: i64 = digits.iter().map(|d| d.size).product();
    let n = mesh.num_devices();
    // The group of each rank-0 device's mesh position (meshes have at most
    // MAX_GROUP_DEVICES devices: a table is cheaper than hashing).
    let mut index_of_base: Vec<usize> = vec![usize::MAX; n as usize];
    let mut groups: Vec<Vec<i64>> = Vec::with_capacity((n / group_size.max(1)) as usize);
    let strides = row_major_strides(mesh);
    // Mesh coordinates of `linear`, advanced as an odometer (last axis
    // fastest) rather than computed again for every device.
    let mut coords = vec![0i64; mesh.axes.len()];
    for linear in 0..n {
        let mut rank = 0;
        let mut base = linear;
        for d in &digits {
            let digit = (coords[d.mesh_axis] / d.stride) % d.size;
            rank = rank * d.size + digit;
            base -= digit * d.stride * strides[d.mesh_axis];
        }
        // The rank-0 member has the smallest mesh position of its group, so
        // groups appear in the order of their rank-0 device.
        let slot = &mut index_of_base[base as usize];
        if *slot == usize::MAX {
            *slot = groups.len();
            groups.push(vec![-1; group_size as usize]);
        }
        groups[*slot][rank as usize] = mesh.device_at(linear);
        for (c, a) in coords.iter_mut().zip(&mesh.axes).rev() {
            *c += 1;
            if *c < a.size {
                break;
            }
            *c = 0;
        }
    }
    Ok(groups)
}

/// The most devices a mesh may have for its groups to be listed.
pub const MAX_GROUP_DEVICES: i64 = 1 << 16;

/// For each device id, its (group index, rank) in [`device_groups`].
pub fn group_ranks(groups: &[Vec<i64>]) -> HashMap<i64, (usize, usize)> {
    let mut out = HashMap::new();
    for (g, members) in groups.iter().enumerate() {
        for (r, &d) in members.iter().enumerate() {
            out.insert(d, (g, r));
        }
    }
    out
}

/// Row-major strides of the mesh positions: moving one step along axis `i`
/// moves `strides[i]` positions.
fn row_major_strides(mesh: &Mesh) -> Vec<i64> {
    let mut strides = vec![1; mesh.axes.len()];
    for i in (0..mesh.axes.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * mesh.axes[i + 1].size;
    }
    strides
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(n: &str) -> AxisRef {
        AxisRef::full(n)
    }

    #[test]
    fn full_axes_in_given_order() {
        let m = Mesh::new(&[("x", 2), ("y", 2), ("z", 2)]);
        assert_eq!(
            device_groups(&m, &[full("y")]).unwrap(),
            vec![vec![0, 2], vec![1, 3], vec![4, 6], vec![5, 7]]
        );
        // z major, x minor: rank = 2*z + x.
        assert_eq!(
            device_groups(&m, &[full("z"), full("x")]).unwrap(),
            vec![vec![0, 4, 1, 5], vec![2, 6, 3, 7]]
        );
        assert_eq!(device_groups(&m, &[]).unwrap().len(), 8);
    }

    /// A mesh too large to list is an error, not a 16 GB allocation (a
    /// fuzzer case: mesh-axes replica groups on a mutated mesh).
    #[test]
    fn an_absurd_mesh_is_refused() {
        let m = Mesh::new(&[("x", 1 << 16), ("y", 1 << 15)]);
        let e = device_groups(&m, &[full("x")]).unwrap_err();
        assert!(e.to_string().contains("more than 65536 devices"), "{e}");
        let m = Mesh::new(&[("x", i64::MAX / 2), ("y", 4)]);
        assert!(device_groups(&m, &[full("y")]).is_err());
    }

    #[test]
    fn sub_axes_pick_the_right_digit() {
        let m = Mesh::new(&[("x", 4), ("y", 2)]);
        // "x":(1)2 is the major bit of x: x in {0,1} vs {2,3}.
        assert_eq!(
            device_groups(&m, &[AxisRef::sub("x", 1, 2)]).unwrap(),
            vec![vec![0, 4], vec![1, 5], vec![2, 6], vec![3, 7]]
        );
        // "x":(2)2 is the minor bit.
        assert_eq!(
            device_groups(&m, &[AxisRef::sub("x", 2, 2)]).unwrap(),
            vec![vec![0, 2], vec![1, 3], vec![4, 6], vec![5, 7]]
        );
    }

    #[test]
    fn device_ids_map_positions_to_devices() {
        let m = Mesh::new(&[("x", 2), ("y", 2)]).with_device_ids(vec![3, 1, 2, 0]);
        assert_eq!(
            device_groups(&m, &[full("x")]).unwrap(),
            vec![vec![3, 2], vec![1, 0]]
        );
        let ranks = group_ranks(&device_groups(&m, &[full("y")]).unwrap());
        assert_eq!(ranks[&0], (1, 1));
    }

    #[test]
    fn bad_axes_are_errors() {
        let m = Mesh::new(&[("x", 4)]);
        assert!(matches!(
            device_groups(&m, &[full("q")]),
            Err(GroupError::UnknownAxis { .. })
        ));
        assert!(matches!(
            device_groups(&m, &[AxisRef::sub("x", 3, 2)]),
            Err(GroupError::BadSubAxis { .. })
        ));
        assert!(matches!(
            device_groups(&m, &[full("x"), AxisRef::sub("x", 2, 2)]),
            Err(GroupError::Overlap { .. })
        ));
        let short_ids = Mesh::new(&[("x", 4)]).with_device_ids(vec![1, 0]);
        assert!(matches!(
            device_groups(&short_ids, &[full("x")]),
            Err(GroupError::InvalidMesh(_))
        ));
    }
}
