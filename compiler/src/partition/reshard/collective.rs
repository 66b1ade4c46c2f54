//! One collective on explicit device groups, as plain data: what the
//! partitioner emits for a reshard (or a partial sum) and what a runtime
//! executes. It prints in Shardy's notation (`sdy.all_gather [{"y"}, {}] %x
//! out_sharding=<@mesh, [...]> : tensor<...>`).
//!
//! Semantics, per group (the devices that differ only along `axes`, listed
//! by rank):
//! - **all-slice**: no communication; member `r` keeps, along each
//!   dimension `d`, chunk `r_d` of its local block (`r` written in mixed
//!   radix over `dim_factors`, dimension 0 most significant);
//! - **all-gather**: every member ends with the concatenation, along each
//!   dimension, of the members' blocks in rank order (cut to
//!   `out_local_shape`: padding past the end of the dimension);
//! - **all-to-all**: member `r` sends chunk `j` of its block along `tgt_dim`
//!   to member `j` and concatenates what it receives along `src_dim`, in
//!   rank order;
//! - **collective-permute**: `groups` are `[source, target]` pairs, one per
//!   device (self-pairs included): the target receives the source's block;
//! - **all-reduce**: every member ends with the element-wise reduction of
//!   the members' blocks;
//! - **reduce-scatter**: an all-reduce whose result is then sliced like an
//!   all-slice.

use std::fmt;

use crate::ir::{ElemType, ReduceKind, TensorType};
use crate::partition::reshard::error::{ReshardError, Side};
use crate::sharding::groups::device_groups;
use crate::sharding::{AxisRef, DimSharding, Mesh, TensorSharding, ValidSharding};

/// Which collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CollectiveKind {
    AllSlice,
    AllGather,
    AllToAll,
    AllReduce,
    ReduceScatter,
    CollectivePermute,
}

impl CollectiveKind {
    /// The `sdy` op name.
    pub fn op_name(self) -> &'static str {
        match self {
            CollectiveKind::AllSlice => "sdy.all_slice",
            CollectiveKind::AllGather => "sdy.all_gather",
            CollectiveKind::AllToAll => "sdy.all_to_all",
            CollectiveKind::AllReduce => "sdy.all_reduce",
            CollectiveKind::ReduceScatter => "sdy.reduce_scatter",
            CollectiveKind::CollectivePermute => "sdy.collective_permute",
        }
    }
}

impl fmt::Display for CollectiveKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CollectiveKind::AllSlice => "all-slice",
            CollectiveKind::AllGather => "all-gather",
            CollectiveKind::AllToAll => "all-to-all",
            CollectiveKind::AllReduce => "all-reduce",
            CollectiveKind::ReduceScatter => "reduce-scatter",
            CollectiveKind::CollectivePermute => "collective-permute",
        })
    }
}

/// The dimensions an all-to-all moves shards between.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AllToAllDims {
    /// The dimension that is gathered (its minor axes leave it).
    pub src_dim: usize,
    /// The dimension that is split (the axes are appended to it, minor).
    pub tgt_dim: usize,
}

/// One collective with explicit device groups. Plain data.
#[derive(Debug, Clone, PartialEq)]
pub struct Collective {
    pub kind: CollectiveKind,
    /// The mesh (sub-)axes it runs over, in group-rank order (the first is
    /// the most significant digit of a member's rank). Empty for a
    /// collective-permute, which is not confined to groups.
    pub axes: Vec<AxisRef>,
    /// Per tensor dimension, the axes it is sliced (all-slice,
    /// reduce-scatter) or gathered (all-gather) along; `axes` is their
    /// concatenation. All empty for the other kinds.
    pub dim_axes: Vec<Vec<AxisRef>>,
    /// Per tensor dimension, the number of group members along it (the
    /// product of `dim_axes[d]`'s sizes; 1 for an untouched dimension).
    pub dim_factors: Vec<i64>,
    /// The dimensions of an all-to-all.
    pub all_to_all: Option<AllToAllDims>,
    /// The combiner of an all-reduce or reduce-scatter.
    pub reduction: Option<ReduceKind>,
    /// Device ids per group, by rank; for a collective-permute, one
    /// `[source, target]` pair per device.
    pub groups: Vec<Vec<i64>>,
    pub in_sharding: TensorSharding,
    pub out_sharding: TensorSharding,
    /// The global (unsharded) shape.
    pub global_shape: Vec<i64>,
    /// The local block each device holds before and after (padding
    /// included: dimension `d` split `n` ways is `ceil(size/n)` long).
    pub in_local_shape: Vec<i64>,
    pub out_local_shape: Vec<i64>,
    pub elem: ElemType,
}

fn elems(shape: &[i64]) -> f64 {
    shape.iter().product::<i64>() as f64
}

impl Collective {
    /// Number of devices in each group (2 for a permute pair).
    pub fn group_size(&self) -> usize {
        self.groups.first().map_or(1, Vec::len)
    }

    /// This all-reduce over blocks transposed by `perm` (result dimension
    /// `d` is dimension `perm[d]` of the block), or `None` for any other
    /// kind or a `perm` that is not a permutation of the block's
    /// dimensions. An all-reduce combines the members' blocks element by
    /// element, so it commutes with a transpose: the runtime sums a weight
    /// gradient already made in the layout that is read next
    /// (`transpose(all_reduce(dot))` as `all_reduce(transposed dot)`).
    pub fn transposed(&self, perm: &[usize]) -> Option<Collective> {
        let rank = self.in_local_shape.len();
        let mut seen = vec![false; rank];
        let is_perm = perm.len() == rank
            && perm
                .iter()
                .all(|&d| d < rank && !std::mem::replace(&mut seen[d], true));
        let dims_fit = [self.out_local_shape.len(), self.global_shape.len()]
            .iter()
            .chain([self.dim_axes.len(), self.dim_factors.len()].iter())
            .all(|&n| n == rank)
            && self.in_sharding.dims.len() == rank
            && self.out_sharding.dims.len() == rank;
        if self.kind != CollectiveKind::AllReduce || !is_perm || !dims_fit {
            return None;
        }
        fn permuted<T: Clone>(v: &[T], perm: &[usize]) -> Vec<T> {
            perm.iter().map(|&d| v[d].clone()).collect()
        }
        let mut c = self.clone();
        c.dim_axes = permuted(&self.dim_axes, perm);
        c.dim_factors = permuted(&self.dim_factors, perm);
        c.global_shape = permuted(&self.global_shape, perm);
        c.in_local_shape = permuted(&self.in_local_shape, perm);
        c.out_local_shape = permuted(&self.out_local_shape, perm);
        c.in_sharding.dims = permuted(&self.in_sharding.dims, perm);
        c.out_sharding.dims = permuted(&self.out_sharding.dims, perm);
        Some(c)
    }

    /// True for the collectives that exchange data (all but all-slice).
    pub fn communicates(&self) -> bool {
        self.kind != CollectiveKind::AllSlice
    }

    /// Bytes each device receives, averaged over devices, for ring
    /// algorithms moving whole padded blocks: all-gather `(G-1) * in`
    /// (= out − in); reduce-scatter `(G-1) * out` (= in − out); all-reduce
    /// `2(G-1)/G * in`; all-to-all `(G-1)` chunks of `in` split `G` ways
    /// along the target dimension (= `(G-1)/G * in`); collective-permute
    /// `in` for each device whose source is another device, averaged over
    /// all devices; all-slice 0.
    pub fn bytes_per_device(&self) -> f64 {
        let e = self.elem.byte_size() as f64;
        let g = self.group_size() as f64;
        let input = elems(&self.in_local_shape) * e;
        let output = elems(&self.out_local_shape) * e;
        match self.kind {
            CollectiveKind::AllSlice => 0.0,
            CollectiveKind::AllGather => (g - 1.0) * input,
            CollectiveKind::ReduceScatter => (g - 1.0) * output,
            CollectiveKind::AllReduce => 2.0 * (g - 1.0) / g * input,
            CollectiveKind::AllToAll => {
                let chunk = match self.all_to_all {
                    Some(dims) => {
                        let mut shape = self.in_local_shape.clone();
                        if let (Some(s), Some(&o)) = (
                            shape.get_mut(dims.tgt_dim),
                            self.out_local_shape.get(dims.tgt_dim),
                        ) {
                            *s = o;
                        }
                        elems(&shape) * e
                    }
                    None => input / g,
                };
                (g - 1.0) * chunk
            }
            CollectiveKind::CollectivePermute => {
                let moving = self.groups.iter().filter(|p| p.first() != p.last()).count();
                if self.groups.is_empty() {
                    0.0
                } else {
                    input * moving as f64 / self.groups.len() as f64
                }
            }
        }
    }

    /// The op in Shardy's notation applied to `operand` (`%0`, `%arg1`).
    pub fn to_sdy(&self, operand: &str) -> String {
        let mut s = format!("{} ", self.kind.op_name());
        match self.kind {
            CollectiveKind::AllSlice
            | CollectiveKind::AllGather
            | CollectiveKind::ReduceScatter => {
                s.push('[');
                for (i, axes) in self.dim_axes.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    s.push_str(&braced(axes));
                }
                s.push_str("] ");
            }
            CollectiveKind::AllToAll => {
                if let Some(d) = self.all_to_all {
                    s.push_str(&format!(
                        "[{}: {}->{}] ",
                        braced(&self.axes),
                        d.src_dim,
                        d.tgt_dim
                    ));
                }
            }
            CollectiveKind::AllReduce => {
                s.push_str(&braced(&self.axes));
                s.push(' ');
            }
            CollectiveKind::CollectivePermute => {}
        }
        let ty = TensorType::new(self.global_shape.clone(), self.elem);
        s.push_str(&format!(
            "{operand} out_sharding={} : {ty}",
            self.out_sharding
        ));
        s
    }

    /// An all-reduce over `axes` of a value sharded by `input` (whose
    /// `unreduced` lists the axes it is a partial result along): the
    /// result is the same sharding without those axes unreduced.
    pub fn all_reduce(
        mesh: &Mesh,
        shape: &[i64],
        elem: ElemType,
        input: &TensorSharding,
        axes: &[AxisRef],
        reduction: ReduceKind,
    ) -> Result<Collective, ReshardError> {
        let input = checked_input(mesh, input, shape)?;
        Collective::all_reduce_of(input, shape, elem, axes, reduction)
    }

    /// [`Collective::all_reduce`] of an input already checked (see
    /// [`checked_input`]): only the result's sharding, new here, is checked.
    pub(crate) fn all_reduce_of(
        input: ValidSharding<'_>,
        shape: &[i64],
        elem: ElemType,
        axes: &[AxisRef],
        reduction: ReduceKind,
    ) -> Result<Collective, ReshardError> {
        let input = for_shape(input, shape)?;
        let mesh = input.mesh();
        let mut out = input.sharding().clone();
        out.unreduced.retain(|a| !axes.contains(a));
        let local = local_shape(input, shape);
        checked_input(mesh, &out, shape)?;
        let rank = shape.len();
        Ok(Collective {
            kind: CollectiveKind::AllReduce,
            axes: axes.to_vec(),
            dim_axes: vec![Vec::new(); rank],
            dim_factors: vec![1; rank],
            all_to_all: None,
            reduction: Some(reduction),
            groups: device_groups(mesh, axes)?,
            in_sharding: input.sharding().clone(),
            out_sharding: out,
            global_shape: shape.to_vec(),
            in_local_shape: local.clone(),
            out_local_shape: local,
            elem,
        })
    }

    /// A reduce-scatter: reduce over the axes of `dim_axes` (all of them)
    /// and split dimension `d` further by `dim_axes[d]` (appended as its
    /// minor axes).
    pub fn reduce_scatter(
        mesh: &Mesh,
        shape: &[i64],
        elem: ElemType,
        input: &TensorSharding,
        dim_axes: &[Vec<AxisRef>],
        reduction: ReduceKind,
    ) -> Result<Collective, ReshardError> {
        let input = checked_input(mesh, input, shape)?;
        let out = scattered(&input, dim_axes);
        let out = checked_input(mesh, &out, shape)?;
        Collective::reduce_scatter_of(input, out, shape, elem, dim_axes, reduction)
    }

    /// [`Collective::reduce_scatter`] from `input` onto `out`, both already
    /// checked (see [`checked_input`]); `out` is [`scattered`]`(input,
    /// dim_axes)`. The caller keeps `out`, checked, for what follows (an
    /// all-reduce over the other axes).
    pub(crate) fn reduce_scatter_of(
        input: ValidSharding<'_>,
        out: ValidSharding<'_>,
        shape: &[i64],
        elem: ElemType,
        dim_axes: &[Vec<AxisRef>],
        reduction: ReduceKind,
    ) -> Result<Collective, ReshardError> {
        let (input, out) = (for_shape(input, shape)?, for_shape(out, shape)?);
        let mesh = input.mesh();
        let axes: Vec<AxisRef> = dim_axes.concat();
        let in_local = local_shape(input, shape);
        let out_local = local_shape(out, shape);
        let dim_factors = (0..shape.len())
            .map(|d| {
                dim_axes
                    .get(d)
                    .map_or(1, |v| v.iter().map(|a| a.size(mesh).unwrap_or(1)).product())
            })
            .collect();
        let mut per_dim = dim_axes.to_vec();
        per_dim.resize(shape.len(), Vec::new());
        Ok(Collective {
            kind: CollectiveKind::ReduceScatter,
            groups: device_groups(mesh, &axes)?,
            axes,
            dim_axes: per_dim,
            dim_factors,
            all_to_all: None,
            reduction: Some(reduction),
            in_sharding: input.sharding().clone(),
            out_sharding: out.sharding().clone(),
            global_shape: shape.to_vec(),
            in_local_shape: in_local,
            out_local_shape: out_local,
            elem,
        })
    }
}

/// [`Collective::bytes_per_device`], except that a collective-permute is
/// averaged over all `num_devices` devices (its pairs may cover only
/// some): `in × (pairs with source ≠ target) / num_devices`, as XLA counts.
pub fn collective_bytes(c: &Collective, num_devices: usize) -> f64 {
    match c.kind {
        CollectiveKind::CollectivePermute => {
            let moving = c.groups.iter().filter(|p| p.first() != p.last()).count();
            let block: i64 = c.in_local_shape.iter().product();
            (block * c.elem.byte_size() as i64) as f64 * moving as f64 / num_devices.max(1) as f64
        }
        _ => c.bytes_per_device(),
    }
}

/// The sharding a reduce-scatter of `input` over `dim_axes` leaves: those
/// axes no longer unreduced, dimension `d` further split by `dim_axes[d]`
/// (appended as its minor axes).
pub(crate) fn scattered(input: &TensorSharding, dim_axes: &[Vec<AxisRef>]) -> TensorSharding {
    let mut out = input.clone();
    out.unreduced
        .retain(|a| !dim_axes.iter().any(|axes| axes.contains(a)));
    for (d, extra) in dim_axes.iter().enumerate() {
        if let Some(dim) = out.dims.get_mut(d) {
            let mut v = dim.axes.clone();
            v.extend(extra.iter().cloned());
            *dim = DimSharding::closed(v);
        }
    }
    out
}

/// `s` checked on `mesh` for a tensor of `shape`: the check an all-reduce
/// or reduce-scatter makes of its input (and of the sharding it makes).
pub(crate) fn checked_input<'a>(
    mesh: &'a Mesh,
    s: &'a TensorSharding,
    shape: &[i64],
) -> Result<ValidSharding<'a>, ReshardError> {
    ValidSharding::new(s, mesh, shape.len())
        .map_err(|e| ReshardError::from_sharding(Side::Source, e))
}

/// `s` as checked for a tensor of `shape`: as it is if it was checked for
/// that rank, else checked again (with [`checked_input`]'s error), so that
/// a caller's mistake is an error rather than a wrong local shape.
fn for_shape<'a>(s: ValidSharding<'a>, shape: &[i64]) -> Result<ValidSharding<'a>, ReshardError> {
    if s.rank() == shape.len() {
        Ok(s)
    } else {
        checked_input(s.mesh(), s.sharding(), shape)
    }
}

/// The local shape of `shape` under `s` (padding included).
fn local_shape(s: ValidSharding<'_>, shape: &[i64]) -> Vec<i64> {
    shape
        .iter()
        .enumerate()
        .map(|(d, &size)| {
            let n = s
                .dims
                .get(d)
                .map_or(1, |dim| dim.num_shards(s.mesh()))
                .max(1);
            (size + n - 1) / n
        })
        .collect()
}

/// `{"x", "y":(2)2}`.
fn braced(axes: &[AxisRef]) -> String {
    let inner: Vec<String> = axes.iter().map(ToString::to_string).collect();
    format!("{{{}}}", inner.join(", "))
}

impl fmt::Display for Collective {
    /// The op applied to a placeholder operand `%x`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_sdy("%x"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An all-reduce over `data` of blocks 4x6 whose global tensor is 8x6
    /// with rows on `model`.
    fn all_reduce() -> Collective {
        let model = TensorSharding::new(
            "mesh",
            vec![
                DimSharding::closed(vec![AxisRef::full("model")]),
                DimSharding::replicated(),
            ],
        );
        let mut partial = model.clone();
        partial.unreduced = vec![AxisRef::full("data")];
        Collective {
            kind: CollectiveKind::AllReduce,
            axes: vec![AxisRef::full("data")],
            dim_axes: vec![Vec::new(); 2],
            dim_factors: vec![1, 1],
            all_to_all: None,
            reduction: Some(ReduceKind::Add),
            groups: vec![vec![0, 2, 4, 6], vec![1, 3, 5, 7]],
            in_sharding: partial,
            out_sharding: model,
            global_shape: vec![8, 6],
            in_local_shape: vec![4, 6],
            out_local_shape: vec![4, 6],
            elem: ElemType::F32,
        }
    }

    #[test]
    fn an_all_reduce_transposes_its_shapes_and_shardings() {
        let c = all_reduce();
        let t = c.transposed(&[1, 0]).expect("an all-reduce transposes");
        assert_eq!(t.global_shape, vec![6, 8]);
        assert_eq!(
            (t.in_local_shape.clone(), t.out_local_shape.clone()),
            (vec![6, 4], vec![6, 4])
        );
        assert_eq!(
            t.out_sharding.dims,
            vec![
                c.out_sharding.dims[1].clone(),
                c.out_sharding.dims[0].clone()
            ]
        );
        assert_eq!(t.in_sharding.unreduced, c.in_sharding.unreduced);
        assert_eq!(
            (t.groups.clone(), t.axes.clone()),
            (c.groups.clone(), c.axes.clone())
        );
        assert_eq!(t.bytes_per_device(), c.bytes_per_device());
        assert_eq!(c.transposed(&[0, 1]), Some(c.clone()));
    }

    #[test]
    fn only_an_all_reduce_under_a_permutation_transposes() {
        let c = all_reduce();
        for bad in [&[0, 0][..], &[1], &[1, 0, 2], &[2, 0]] {
            assert_eq!(c.transposed(bad), None, "{bad:?}");
        }
        let gather = Collective {
            kind: CollectiveKind::AllGather,
            ..all_reduce()
        };
        assert_eq!(gather.transposed(&[1, 0]), None);
    }
}
