//! What a sharding means for data placement (SPEC §2): the local shape,
//! padding of non-divisible dimensions, and which block of the global tensor
//! each device holds.
//!
//! Dimension `i` of size `d` split `n` ways has blocks of `ceil(d/n)`
//! elements; block `s` starts at `s*ceil(d/n)` and its last elements may lie
//! past `d` (padding), so the last blocks can be partial or entirely empty.
//! A device's block index along a dimension is the mixed-radix number of its
//! mesh coordinates along that dimension's axes, major to minor.

use crate::sharding::mesh::Mesh;
use crate::sharding::tensor::TensorSharding;
use crate::sharding::validate::{
    is_maximal_mesh, validate_mesh_structure, validate_sharding, ShardingError,
};

/// How one tensor dimension is split.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DimLayout {
    /// Size of the dimension in the global tensor.
    pub global: i64,
    /// Number of blocks (product of the dimension's axis sizes).
    pub shards: i64,
    /// Size of every block on a device: `ceil(global / shards)`.
    pub local: i64,
    /// Elements past the end of the global dimension: `local*shards - global`.
    pub padding: i64,
}

impl DimLayout {
    /// `global >= 0`, `shards >= 1`; written so that no intermediate
    /// overflows for any such sizes.
    fn new(global: i64, shards: i64) -> DimLayout {
        let rem = global % shards;
        DimLayout {
            global,
            shards,
            local: global / shards + i64::from(rem != 0),
            padding: if rem == 0 { 0 } else { shards - rem },
        }
    }
}

/// The block of the global tensor one device holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DeviceSlice {
    pub device: i64,
    /// Block index per dimension.
    pub shard: Vec<i64>,
    /// First global element of the block per dimension (`shard * local`).
    pub offset: Vec<i64>,
    /// Number of valid (unpadded) elements per dimension, `0..=local`; 0 for
    /// a block that lies entirely in the padding.
    pub extent: Vec<i64>,
}

impl DeviceSlice {
    /// True when the block holds no element of the global tensor.
    pub fn is_empty(&self) -> bool {
        self.extent.contains(&0)
    }
}

/// One digit of a dimension's mixed-radix block index: the device's
/// coordinate along `mesh_axis`, divided by `stride`, modulo `size`.
/// A full axis is stride 1, size n; `"x":(m)k` on an axis of size n is
/// stride `n/(m*k)`, size k.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Digit {
    mesh_axis: usize,
    stride: i64,
    size: i64,
}

/// The placement of a tensor of a given shape under a given sharding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorLayout {
    mesh: Mesh,
    dims: Vec<DimLayout>,
    /// Per dimension, its digits major to minor.
    digits: Vec<Vec<Digit>>,
}

impl TensorLayout {
    /// Validates `sharding` (against `mesh` and the rank of `shape`) and the
    /// structure of `mesh`, then computes the layout. A sharding on a
    /// single-device (maximal) mesh leaves every dimension whole.
    pub fn new(
        mesh: &Mesh,
        sharding: &TensorSharding,
        shape: &[i64],
    ) -> Result<TensorLayout, ShardingError> {
        validate_mesh_structure(mesh)?;
        let maximal = is_maximal_mesh(mesh);
        validate_sharding(sharding, mesh, if maximal { 0 } else { shape.len() })?;
        if let Some((dim, &size)) = shape.iter().enumerate().find(|(_, &s)| s < 0) {
            return Err(ShardingError::NegativeDimSize { dim, size });
        }
        let mut dims = Vec::with_capacity(shape.len());
        let mut digits = Vec::with_capacity(shape.len());
        for (i, &global) in shape.iter().enumerate() {
            let axes = sharding.dims.get(i).map_or(&[][..], |d| &d.axes[..]);
            let mut dim_digits = Vec::with_capacity(axes.len());
            for a in axes {
                // Validated above: the axis exists and sub-axes divide it.
                let (mesh_axis, n) = match mesh.axis_index(&a.name) {
                    Some(ix) => (ix, mesh.axes[ix].size),
                    None => continue,
                };
                let (stride, size) = match a.sub {
                    Some(s) => (n / (s.pre_size * s.size), s.size),
                    None => (1, n),
                };
                dim_digits.push(Digit {
                    mesh_axis,
                    stride,
                    size,
                });
            }
            let shards = dim_digits.iter().map(|d| d.size).product();
            dims.push(DimLayout::new(global, shards));
            digits.push(dim_digits);
        }
        Ok(TensorLayout {
            mesh: mesh.clone(),
            dims,
            digits,
        })
    }

    pub fn dims(&self) -> &[DimLayout] {
        &self.dims
    }

    /// The shape of the block every device stores (padding included).
    pub fn local_shape(&self) -> Vec<i64> {
        self.dims.iter().map(|d| d.local).collect()
    }

    /// True if some dimension does not divide evenly, so some blocks carry
    /// padding.
    pub fn is_padded(&self) -> bool {
        self.dims.iter().any(|d| d.padding > 0)
    }

    /// Block index per dimension of device `device_id`; `None` if the mesh
    /// has no such device.
    pub fn shard_index(&self, device_id: i64) -> Option<Vec<i64>> {
        let coords = self.mesh.coords_of_device(device_id)?;
        let index = self
            .digits
            .iter()
            .map(|digits| {
                digits.iter().fold(0, |acc, d| {
                    acc * d.size + (coords[d.mesh_axis] / d.stride) % d.size
                })
            })
            .collect();
        Some(index)
    }

    /// The block device `device_id` holds; `None` if the mesh has no such
    /// device.
    pub fn slice(&self, device_id: i64) -> Option<DeviceSlice> {
        let shard = self.shard_index(device_id)?;
        let offset: Vec<i64> = shard
            .iter()
            .zip(&self.dims)
            .map(|(s, d)| s * d.local)
            .collect();
        let extent = offset
            .iter()
            .zip(&self.dims)
            .map(|(o, d)| (d.global - o).clamp(0, d.local))
            .collect();
        Some(DeviceSlice {
            device: device_id,
            shard,
            offset,
            extent,
        })
    }

    /// Every device's block, by ascending device id.
    pub fn slices(&self) -> Vec<DeviceSlice> {
        let mut ids = self.mesh.device_list();
        ids.sort_unstable();
        ids.into_iter().filter_map(|id| self.slice(id)).collect()
    }

    /// How many devices hold each element: the number of devices divided by
    /// the number of distinct blocks.
    pub fn replication_factor(&self) -> i64 {
        let blocks: i64 = self.dims.iter().map(|d| d.shards).product();
        self.mesh.num_devices() / blocks
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sharding::tensor::{AxisRef, DimSharding};

    fn dim(axes: &[AxisRef]) -> DimSharding {
        DimSharding::closed(axes.to_vec())
    }

    fn full(n: &str) -> AxisRef {
        AxisRef::full(n)
    }

    #[test]
    fn seed_4x8_on_x_then_z_y_has_local_2x1() {
        let mesh = Mesh::new(&[("x", 2), ("y", 4), ("z", 2)]);
        let s = TensorSharding::new("m", vec![dim(&[full("x")]), dim(&[full("z"), full("y")])]);
        let l = TensorLayout::new(&mesh, &s, &[4, 8]).expect("valid");
        assert_eq!(l.local_shape(), vec![2, 1]);
        assert!(!l.is_padded());
        assert_eq!(l.replication_factor(), 1);
        // Device 13 = coords (x=1, y=2, z=1): dim 1 index = z*4 + y = 6.
        assert_eq!(l.shard_index(13), Some(vec![1, 6]));
        let s13 = l.slice(13).expect("device exists");
        assert_eq!(s13.offset, vec![2, 6]);
        assert_eq!(s13.extent, vec![2, 1]);
        assert_eq!(l.shard_index(16), None);
    }

    #[test]
    fn seed_sub_axis_y_2_2_is_shared_by_devices_with_same_middle_bit() {
        let mesh = Mesh::new(&[("x", 2), ("y", 8), ("z", 2)]);
        let s = TensorSharding::new(
            "m",
            vec![dim(&[full("x")]), dim(&[AxisRef::sub("y", 2, 2)])],
        );
        let l = TensorLayout::new(&mesh, &s, &[4, 8]).expect("valid");
        assert_eq!(l.local_shape(), vec![2, 4]);
        assert_eq!(l.replication_factor(), 8);
        // y coordinate c contributes (c / 2) % 2: y=0,1,4,5 -> 0; y=2,3,6,7 -> 1.
        for y in 0..8 {
            let device = y * 2; // x=0, z=0
            assert_eq!(l.shard_index(device), Some(vec![0, (y / 2) % 2]), "y={y}");
        }
        let holders: Vec<i64> = l
            .slices()
            .into_iter()
            .filter(|s| s.shard == vec![0, 1])
            .map(|s| s.device)
            .collect();
        assert_eq!(holders, vec![4, 5, 6, 7, 12, 13, 14, 15]);
    }

    #[test]
    fn seed_reshape_example_keeps_data_in_place() {
        // `tensor<8>` on `[{"x"}]` (x=4) reshaped to `2x4` is
        // `[{"x":(1)2}, {"x":(2)2}]`: device c keeps flat elements 2c, 2c+1.
        let mesh = Mesh::new(&[("x", 4)]);
        let s = TensorSharding::new(
            "m",
            vec![
                dim(&[AxisRef::sub("x", 1, 2)]),
                dim(&[AxisRef::sub("x", 2, 2)]),
            ],
        );
        let l = TensorLayout::new(&mesh, &s, &[2, 4]).expect("valid");
        assert_eq!(l.local_shape(), vec![1, 2]);
        for c in 0..4 {
            let slice = l.slice(c).expect("device exists");
            assert_eq!(slice.offset, vec![c / 2, 2 * (c % 2)], "device {c}");
            assert_eq!(slice.offset[0] * 4 + slice.offset[1], 2 * c);
        }
    }

    #[test]
    fn seed_7x3x8_non_divisible_pads_last_shards() {
        let mesh = Mesh::new(&[("x", 8), ("y", 2), ("z", 3)]);
        let s = TensorSharding::new(
            "m",
            vec![dim(&[full("x")]), dim(&[full("y")]), dim(&[full("z")])],
        );
        let l = TensorLayout::new(&mesh, &s, &[7, 3, 8]).expect("valid");
        assert_eq!(l.local_shape(), vec![1, 2, 3]);
        assert_eq!(
            l.dims(),
            &[
                DimLayout {
                    global: 7,
                    shards: 8,
                    local: 1,
                    padding: 1
                },
                DimLayout {
                    global: 3,
                    shards: 2,
                    local: 2,
                    padding: 1
                },
                DimLayout {
                    global: 8,
                    shards: 3,
                    local: 3,
                    padding: 1
                },
            ]
        );
        assert!(l.is_padded());
        // The last device: x=7 (empty row), y=1 (one of two), z=2 (two of three).
        let last = l.slice(47).expect("device exists");
        assert_eq!(last.shard, vec![7, 1, 2]);
        assert_eq!(last.offset, vec![7, 2, 6]);
        assert_eq!(last.extent, vec![0, 1, 2]);
        assert!(last.is_empty());
        let empty = l.slices().iter().filter(|s| s.is_empty()).count();
        assert_eq!(empty, 6, "the x=7 devices hold only padding");
    }

    #[test]
    fn device_ids_move_blocks_between_devices_but_keep_the_set() {
        let plain = Mesh::new(&[("x", 2), ("y", 2)]);
        let permuted = plain.clone().with_device_ids(vec![3, 1, 2, 0]);
        let s = TensorSharding::new("m", vec![dim(&[full("x")]), dim(&[full("y")])]);
        let a = TensorLayout::new(&plain, &s, &[4, 4]).expect("valid");
        let b = TensorLayout::new(&permuted, &s, &[4, 4]).expect("valid");
        // Device 0 sits at coords (1, 1) in the permuted mesh.
        assert_eq!(a.shard_index(0), Some(vec![0, 0]));
        assert_eq!(b.shard_index(0), Some(vec![1, 1]));
        assert_eq!(b.shard_index(3), Some(vec![0, 0]));
        let blocks = |l: &TensorLayout| {
            let mut v: Vec<_> = l
                .slices()
                .into_iter()
                .map(|s| (s.offset, s.extent))
                .collect();
            v.sort();
            v
        };
        assert_eq!(blocks(&a), blocks(&b));
        let devices: Vec<i64> = b.slices().iter().map(|s| s.device).collect();
        assert_eq!(devices, vec![0, 1, 2, 3]);
    }

    #[test]
    fn maximal_mesh_keeps_the_tensor_whole_on_its_device() {
        let mesh = Mesh::new(&[]).with_device_ids(vec![5]);
        let s = TensorSharding::new("m", vec![]);
        let l = TensorLayout::new(&mesh, &s, &[3, 2]).expect("valid");
        assert_eq!(l.local_shape(), vec![3, 2]);
        let slices = l.slices();
        assert_eq!(slices.len(), 1);
        assert_eq!(slices[0].device, 5);
        assert_eq!(slices[0].extent, vec![3, 2]);
    }

    #[test]
    fn rank_and_shape_errors() {
        let mesh = Mesh::new(&[("x", 2)]);
        let s = TensorSharding::new("m", vec![dim(&[full("x")])]);
        assert_eq!(
            TensorLayout::new(&mesh, &s, &[4, 4]),
            Err(ShardingError::RankMismatch { dims: 1, rank: 2 })
        );
        assert_eq!(
            TensorLayout::new(&mesh, &s, &[-1]),
            Err(ShardingError::NegativeDimSize { dim: 0, size: -1 })
        );
        let huge = TensorLayout::new(&mesh, &s, &[i64::MAX]).expect("no overflow");
        assert_eq!(huge.dims()[0].local, i64::MAX / 2 + 1);
        assert_eq!(huge.dims()[0].padding, 1);
        let zero = TensorLayout::new(&mesh, &s, &[0]).expect("empty tensors are fine");
        assert_eq!(zero.local_shape(), vec![0]);
        assert!(!zero.is_padded());
    }
}
