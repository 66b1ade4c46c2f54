//! What `gather` and `scatter` share: their dimension numbers
//! (`#stablehlo.gather<...>` / `#stablehlo.scatter<...>`, one
//! [`IndexDims`] with the spec's names mapped onto common roles), the
//! checks the spec puts on them, the map from a start-index vector to
//! operand dimensions, and Shardy's factors (`addGatherScatterFactors`).
//!
//! Roles (gather name / scatter name):
//! - `window_dims` — `offset_dims` / `update_window_dims`: dimensions of the
//!   result / updates that run over the slice;
//! - `collapsed_dims` — `collapsed_slice_dims` / `inserted_window_dims`:
//!   operand dimensions of slice size 1 that the result / updates drop;
//! - `operand_batching_dims` — `operand_batching_dims` /
//!   `input_batching_dims`, paired with `indices_batching_dims`;
//! - `start_index_map` — `start_index_map` / `scatter_dims_to_operand_dims`;
//! - `index_vector_dim`.

use crate::ir::attr::Attr;
use crate::ir::ops::AttrCodec;
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{FactorKind, TensorId};

/// The dimension numbers of a gather or scatter.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct IndexDims {
    pub window_dims: Vec<i64>,
    pub collapsed_dims: Vec<i64>,
    pub operand_batching_dims: Vec<i64>,
    pub indices_batching_dims: Vec<i64>,
    pub start_index_map: Vec<i64>,
    pub index_vector_dim: i64,
}

/// The spelling of one op's dimension numbers: the attribute name and the
/// parameter name of each role, in printing order.
pub struct DimsSyntax {
    pub attr: &'static str,
    pub window_dims: &'static str,
    pub collapsed_dims: &'static str,
    pub operand_batching_dims: &'static str,
    pub indices_batching_dims: &'static str,
    pub start_index_map: &'static str,
}

pub const GATHER_SYNTAX: DimsSyntax = DimsSyntax {
    attr: "#stablehlo.gather",
    window_dims: "offset_dims",
    collapsed_dims: "collapsed_slice_dims",
    operand_batching_dims: "operand_batching_dims",
    indices_batching_dims: "start_indices_batching_dims",
    start_index_map: "start_index_map",
};

pub const SCATTER_SYNTAX: DimsSyntax = DimsSyntax {
    attr: "#stablehlo.scatter",
    window_dims: "update_window_dims",
    collapsed_dims: "inserted_window_dims",
    operand_batching_dims: "input_batching_dims",
    indices_batching_dims: "scatter_indices_batching_dims",
    start_index_map: "scatter_dims_to_operand_dims",
};

impl IndexDims {
    fn lists(&self) -> [&Vec<i64>; 5] {
        [
            &self.window_dims,
            &self.collapsed_dims,
            &self.operand_batching_dims,
            &self.indices_batching_dims,
            &self.start_index_map,
        ]
    }

    fn lists_mut(&mut self) -> [&mut Vec<i64>; 5] {
        [
            &mut self.window_dims,
            &mut self.collapsed_dims,
            &mut self.operand_batching_dims,
            &mut self.indices_batching_dims,
            &mut self.start_index_map,
        ]
    }

    /// Decode `#stablehlo.gather<offset_dims = [1], ..., index_vector_dim =
    /// 1>` (absent lists are empty, an absent `index_vector_dim` is 0).
    pub fn decode_with(a: &Attr, syntax: &DimsSyntax) -> Result<IndexDims, String> {
        let Attr::Params { name, params } = a else {
            return Err(format!(
                "expected {}<...>, found {}",
                syntax.attr,
                a.kind_name()
            ));
        };
        if name != syntax.attr {
            return Err(format!("expected {}<...>, found {name}<...>", syntax.attr));
        }
        let keys = syntax.keys();
        let mut dims = IndexDims::default();
        let mut seen: Vec<&str> = Vec::new();
        for (key, value) in params {
            if seen.contains(&key.as_str()) {
                return Err(format!("parameter '{key}' is given twice"));
            }
            if key == "index_vector_dim" {
                dims.index_vector_dim =
                    i64::decode(value).map_err(|e| format!("index_vector_dim: {e}"))?;
                seen.push("index_vector_dim");
                continue;
            }
            let Some(i) = keys.iter().position(|k| k == key) else {
                return Err(format!(
                    "unknown parameter '{key}' (expected {}, index_vector_dim)",
                    keys.join(", ")
                ));
            };
            *dims.lists_mut()[i] = Vec::<i64>::decode(value).map_err(|e| format!("{key}: {e}"))?;
            seen.push(keys[i]);
        }
        Ok(dims)
    }

    /// The attribute back, leaving out empty lists and a zero
    /// `index_vector_dim` (as StableHLO prints it).
    pub fn encode_with(&self, syntax: &DimsSyntax) -> Attr {
        let mut params = Vec::new();
        for (key, list) in syntax.keys().iter().zip(self.lists()) {
            if !list.is_empty() {
                params.push((key.to_string(), Attr::int_list(list)));
            }
        }
        if self.index_vector_dim != 0 {
            params.push((
                "index_vector_dim".to_string(),
                Attr::Int {
                    value: self.index_vector_dim,
                    ty: None,
                },
            ));
        }
        Attr::Params {
            name: syntax.attr.to_string(),
            params,
        }
    }

    /// The number of indices in one start-index vector.
    pub fn index_vector_len(&self, indices_shape: &[i64]) -> i64 {
        match usize::try_from(self.index_vector_dim) {
            Ok(d) if d < indices_shape.len() => indices_shape[d],
            _ => 1,
        }
    }

    /// The indices dimensions that are batch (scatter) dimensions, in order:
    /// every dimension but `index_vector_dim`.
    pub fn indices_batch_dims(&self, indices_rank: usize) -> Vec<usize> {
        (0..indices_rank)
            .filter(|&d| d as i64 != self.index_vector_dim)
            .collect()
    }

    /// The dimensions of the result (gather) or updates (scatter) that are
    /// not window dims, in order: they run over the indices' batch dims.
    pub fn slices_batch_dims(&self, slices_rank: usize) -> Vec<usize> {
        (0..slices_rank)
            .filter(|&d| !self.window_dims.contains(&(d as i64)))
            .collect()
    }

    /// The operand dimensions a window dim runs over, in order: every
    /// dimension that is neither collapsed nor a batching dim.
    pub fn operand_window_dims(&self, operand_rank: usize) -> Vec<usize> {
        (0..operand_rank)
            .filter(|&d| {
                let d = d as i64;
                !self.collapsed_dims.contains(&d) && !self.operand_batching_dims.contains(&d)
            })
            .collect()
    }

    /// The spec's constraints on the dimension numbers (gather C1-C19,
    /// scatter C2, C7-C22), given the operand and indices ranks and the
    /// rank of the result (gather) or updates (scatter); `syntax` names the
    /// lists in messages.
    pub fn check(
        &self,
        syntax: &DimsSyntax,
        operand_rank: usize,
        indices_shape: &[i64],
        slices_rank: usize,
    ) -> Result<(), String> {
        let indices_rank = indices_shape.len();
        let name = |k: usize| syntax.keys()[k];
        let in_range = |list: &[i64], k: usize, bound: usize| -> Result<(), String> {
            if let Some(d) = list.iter().find(|&&d| d < 0 || d >= bound as i64) {
                return Err(format!("{} has {d}, outside [0, {bound})", name(k)));
            }
            Ok(())
        };
        let sorted_unique = |list: &[i64], k: usize, sorted: bool| -> Result<(), String> {
            for w in list.windows(2) {
                if w[0] == w[1] || (sorted && w[0] > w[1]) {
                    return Err(format!(
                        "{} must be {}, got {:?}",
                        name(k),
                        if sorted {
                            "sorted and unique"
                        } else {
                            "unique"
                        },
                        list
                    ));
                }
            }
            if !sorted {
                let mut s = list.to_vec();
                s.sort_unstable();
                if s.windows(2).any(|w| w[0] == w[1]) {
                    return Err(format!("{} must be unique, got {list:?}", name(k)));
                }
            }
            Ok(())
        };
        in_range(&self.window_dims, 0, slices_rank)?;
        sorted_unique(&self.window_dims, 0, true)?;
        in_range(&self.collapsed_dims, 1, operand_rank)?;
        sorted_unique(&self.collapsed_dims, 1, true)?;
        in_range(&self.operand_batching_dims, 2, operand_rank)?;
        sorted_unique(&self.operand_batching_dims, 2, true)?;
        in_range(&self.indices_batching_dims, 3, indices_rank)?;
        sorted_unique(&self.indices_batching_dims, 3, false)?;
        in_range(&self.start_index_map, 4, operand_rank)?;
        if let Some(d) = self
            .collapsed_dims
            .iter()
            .find(|d| self.operand_batching_dims.contains(d))
        {
            return Err(format!(
                "dimension {d} is both in {} and {}",
                name(1),
                name(2)
            ));
        }
        let mut mapped = self.start_index_map.clone();
        mapped.extend(&self.operand_batching_dims);
        sorted_unique(&mapped, 4, false).map_err(|_| {
            format!(
                "{} and {} must not repeat a dimension, got {:?} and {:?}",
                name(4),
                name(2),
                self.start_index_map,
                self.operand_batching_dims
            )
        })?;
        if self.index_vector_dim < 0 || self.index_vector_dim > indices_rank as i64 {
            return Err(format!(
                "index_vector_dim {} is outside [0, {indices_rank}]",
                self.index_vector_dim
            ));
        }
        if self.indices_batching_dims.contains(&self.index_vector_dim) {
            return Err(format!(
                "index_vector_dim {} is also in {}",
                self.index_vector_dim,
                name(3)
            ));
        }
        if self.operand_batching_dims.len() != self.indices_batching_dims.len() {
            return Err(format!(
                "{} has {} dimension(s) but {} has {}",
                name(2),
                self.operand_batching_dims.len(),
                name(3),
                self.indices_batching_dims.len()
            ));
        }
        let vector = self.index_vector_len(indices_shape);
        if self.start_index_map.len() as i64 != vector {
            return Err(format!(
                "{} has {} dimension(s) but the index vector has {vector} element(s)",
                name(4),
                self.start_index_map.len()
            ));
        }
        let operand_dims =
            self.window_dims.len() + self.collapsed_dims.len() + self.operand_batching_dims.len();
        if operand_dims != operand_rank {
            return Err(format!(
                "{} ({}) + {} ({}) + {} ({}) must be the operand rank {operand_rank}",
                name(0),
                self.window_dims.len(),
                name(1),
                self.collapsed_dims.len(),
                name(2),
                self.operand_batching_dims.len()
            ));
        }
        let batch = indices_rank - usize::from(self.index_vector_dim < indices_rank as i64);
        if slices_rank != batch + self.window_dims.len() {
            return Err(format!(
                "the {} rank must be {batch} batch + {} window dimension(s) = {}, not {slices_rank}",
                if syntax.attr == GATHER_SYNTAX.attr {
                    "result"
                } else {
                    "updates"
                },
                self.window_dims.len(),
                batch + self.window_dims.len()
            ));
        }
        Ok(())
    }
}

impl DimsSyntax {
    fn keys(&self) -> [&'static str; 5] {
        [
            self.window_dims,
            self.collapsed_dims,
            self.operand_batching_dims,
            self.indices_batching_dims,
            self.start_index_map,
        ]
    }
}

/// Gather's or scatter's dimension numbers as an attribute field.
macro_rules! dims_codec {
    ($name:ident, $syntax:expr) => {
        /// The dimension numbers, written with this op's names.
        #[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
        pub struct $name(pub IndexDims);

        impl AttrCodec for $name {
            fn decode(a: &Attr) -> Result<Self, String> {
                IndexDims::decode_with(a, &$syntax).map($name)
            }

            fn encode(&self) -> Option<Attr> {
                Some(self.0.encode_with(&$syntax))
            }
        }

        impl std::ops::Deref for $name {
            type Target = IndexDims;
            fn deref(&self) -> &IndexDims {
                &self.0
            }
        }
    };
}

dims_codec!(GatherDims, GATHER_SYNTAX);
dims_codec!(ScatterDims, SCATTER_SYNTAX);

/// Which op the factors are for, and for scatter whether its update is a
/// reduction Shardy supports (add, multiply, max, min; and/or on i1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FactorsFor {
    Gather,
    Scatter { reduces: bool },
}

/// One factor of a gather or scatter: the operand, indices and slices
/// (result / updates) dimension it maps, if any.
pub struct IndexFactor {
    pub operand: Option<usize>,
    pub indices: Option<usize>,
    pub slices: Option<usize>,
    pub size: i64,
    pub kind: FactorKind,
    pub blocked: bool,
}

/// Shardy's `addGatherScatterFactors`: walk the slices' dimensions (window
/// dims pair with operand dims; the others are batch dims of the indices,
/// and of the operand when they are explicit batching dims), then the
/// collapsed dims, then the index vector dim. Gather's collapsed dims are
/// reduction factors (a device holding some rows gathers zeros for the
/// others; the results are summed), scatter's are pass-through (a device
/// applies the updates that fall in its rows).
pub fn gather_scatter_factors(
    dims: &IndexDims,
    op: FactorsFor,
    operand_shape: &[i64],
    indices_shape: &[i64],
    slices_shape: &[i64],
) -> Vec<IndexFactor> {
    let is_scatter = matches!(op, FactorsFor::Scatter { .. });
    let mut out = Vec::new();
    let mut push = |operand, indices, slices, size, kind, blocked| {
        out.push(IndexFactor {
            operand,
            indices,
            slices,
            size,
            kind,
            blocked,
        })
    };
    let operand_window = dims.operand_window_dims(operand_shape.len());
    let mut window = operand_window.iter();
    let mut batch_pos = 0i64;
    for (slices_dim, &slices_size) in slices_shape.iter().enumerate() {
        if dims.window_dims.contains(&(slices_dim as i64)) {
            let Some(&input_dim) = window.next() else {
                break;
            };
            let input_size = operand_shape[input_dim];
            if input_size == slices_size {
                push(
                    Some(input_dim),
                    None,
                    Some(slices_dim),
                    input_size,
                    FactorKind::PassThrough,
                    false,
                );
            } else if is_scatter {
                push(
                    Some(input_dim),
                    None,
                    None,
                    input_size,
                    FactorKind::NeedReplication,
                    false,
                );
                push(
                    None,
                    None,
                    Some(slices_dim),
                    slices_size,
                    FactorKind::NeedReplication,
                    false,
                );
            } else if slices_size == 1 {
                push(
                    Some(input_dim),
                    None,
                    None,
                    input_size,
                    FactorKind::Reduction,
                    false,
                );
                push(
                    None,
                    None,
                    Some(slices_dim),
                    slices_size,
                    FactorKind::NeedReplication,
                    false,
                );
            } else {
                push(
                    Some(input_dim),
                    None,
                    Some(slices_dim),
                    input_size,
                    FactorKind::NeedReplication,
                    true,
                );
            }
        } else {
            let indices_dim = if batch_pos < dims.index_vector_dim {
                batch_pos
            } else {
                batch_pos + 1
            };
            let explicit = dims
                .indices_batching_dims
                .iter()
                .position(|&d| d == indices_dim);
            let operand_dim = explicit
                .and_then(|i| dims.operand_batching_dims.get(i))
                .map(|&d| d as usize);
            let kind = match op {
                FactorsFor::Scatter { reduces } if explicit.is_none() => {
                    if reduces {
                        FactorKind::Reduction
                    } else {
                        FactorKind::NeedReplication
                    }
                }
                _ => FactorKind::PassThrough,
            };
            push(
                operand_dim,
                Some(indices_dim as usize),
                Some(slices_dim),
                slices_size,
                kind,
                false,
            );
            batch_pos += 1;
        }
    }
    for &d in &dims.collapsed_dims {
        let size = operand_shape.get(d as usize).copied().unwrap_or(1);
        let kind = if is_scatter {
            FactorKind::PassThrough
        } else if size == 1 {
            FactorKind::NeedReplication
        } else {
            FactorKind::Reduction
        };
        push(Some(d as usize), None, None, size, kind, false);
    }
    if let Ok(d) = usize::try_from(dims.index_vector_dim) {
        if d < indices_shape.len() {
            push(
                None,
                Some(d),
                None,
                indices_shape[d],
                FactorKind::NeedReplication,
                false,
            );
        }
    }
    out
}

/// Add `factors` to `b`: each maps its operand dim on the tensors of
/// `operands`, its indices dim on `indices` and its slices dim on
/// `slices` (tensor ids of the op), and results like the operand.
pub fn add_index_factors(
    b: &mut RuleBuilder,
    factors: &[IndexFactor],
    operands: &[TensorId],
    indices: TensorId,
    slices: &[TensorId],
    results: &[TensorId],
) {
    for f in factors {
        let mut at: Vec<(TensorId, usize)> = Vec::new();
        if let Some(d) = f.operand {
            at.extend(operands.iter().map(|&t| (t, d)));
        }
        if let Some(d) = f.indices {
            at.push((indices, d));
        }
        if let Some(d) = f.slices {
            at.extend(slices.iter().map(|&t| (t, d)));
        }
        if let Some(d) = f.operand {
            at.extend(results.iter().map(|&t| (t, d)));
        }
        let index = b.add_factor(f.size, f.kind, &at);
        if f.blocked {
            b.block(index);
        }
    }
}
