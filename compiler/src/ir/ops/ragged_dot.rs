//! `chlo.ragged_dot` (`lax.ragged_dot`, the mixture-of-experts grouped
//! matmul, as JAX's GPU/TPU lowering prints it):
//!
//! ```text
//! %0 = "chlo.ragged_dot"(%lhs, %rhs, %group_sizes) <{precision_config = [...],
//!   ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_contracting_dimensions = [1],
//!   rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0],
//!   rhs_group_dimensions = [0]>}> : (tensor<32x16xf32>, tensor<4x16x8xf32>,
//!   tensor<4xi32>) -> tensor<32x8xf32>
//! ```
//!
//! All three of StableHLO's modes, by the kind of lhs's one ragged
//! dimension (`RaggedMode`): a free dimension (mode 1, `lax.ragged_dot`:
//! rows `[s_i, s_i + group_sizes[i])`, `s_i` the sum of the sizes before,
//! are multiplied by group `i` of rhs's group dimension; rows past the
//! last group are zero), a contracting dimension (mode 2, its gradient
//! with respect to rhs: the result has a leading group dimension, group
//! `i` summing over its own range only), a batch dimension (mode 3: the
//! `dot_general`, as StableHLO legalizes it). The result is otherwise
//! `dot_general`'s: batch dims, lhs's free dims, rhs's free dims (the
//! group dim excluded). `group_sizes` is `[g]`, or `[b..., x..., g]`
//! with sizes per batch element and per earlier free (mode 1) or
//! contracting (mode 2) index.
//!
//! Sharding rule: batch, free and contracting factors as `dot_general`
//! (contracting → partial sums; a device holding a block of a ragged
//! contracting dimension sums over the groups' rows it holds; a device
//! holding some of mode 2's result groups computes only those). Two
//! differ from XLA's rule, which asks for replication of both: mode 1's
//! ragged dimension is pass-through (a device's block of rows is
//! multiplied by the groups it meets), and rhs's group dimension is a reduction factor (a device holding some
//! experts multiplies only the rows of its experts; every row belongs to
//! one group, so the sum over the group axis is the whole product: expert
//! parallelism with no weights gathered). `group_sizes` stays replicated
//! along its group dimension (its own need-replication factor): every
//! device needs every offset; its prefix dims go with lhs's.
//! `partition::local::ragged_dot` gives the local op the first global
//! index of its block of the ragged dimension and the first global group
//! of its block of groups (rhs's in mode 1, the result's in mode 2) as
//! two meshrun-internal rank-0 integer operands.

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::decode::{decode_int_list_params, encode_int_list_params};
use crate::ir::ops::{Arity, AttrCodec, DecodeError, DecodeOp, Decoder, OpDef, OpSpec, RuleShapes};
use crate::ir::types::TensorType;
use crate::ir::DotDims;
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{FactorKind, OpShardingRule, RuleOptions};

/// `#chlo.ragged_dot<...>`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RaggedDotDims {
    pub lhs_batch: Vec<i64>,
    pub rhs_batch: Vec<i64>,
    pub lhs_contract: Vec<i64>,
    pub rhs_contract: Vec<i64>,
    pub lhs_ragged: Vec<i64>,
    pub rhs_group: Vec<i64>,
}

const DIMS_NAME: &str = "#chlo.ragged_dot";
const KEYS: [&str; 6] = [
    "lhs_batching_dimensions",
    "rhs_batching_dimensions",
    "lhs_contracting_dimensions",
    "rhs_contracting_dimensions",
    "lhs_ragged_dimensions",
    "rhs_group_dimensions",
];

impl RaggedDotDims {
    fn fields(&self) -> [&Vec<i64>; 6] {
        [
            &self.lhs_batch,
            &self.rhs_batch,
            &self.lhs_contract,
            &self.rhs_contract,
            &self.lhs_ragged,
            &self.rhs_group,
        ]
    }
}

impl AttrCodec for RaggedDotDims {
    fn decode(a: &Attr) -> Result<Self, String> {
        let [lhs_batch, rhs_batch, lhs_contract, rhs_contract, lhs_ragged, rhs_group] =
            decode_int_list_params(a, DIMS_NAME, &KEYS)?;
        Ok(RaggedDotDims {
            lhs_batch,
            rhs_batch,
            lhs_contract,
            rhs_contract,
            lhs_ragged,
            rhs_group,
        })
    }

    fn encode(&self) -> Option<Attr> {
        Some(encode_int_list_params(DIMS_NAME, &KEYS, &self.fields()))
    }
}

define_attrs! {
    /// `chlo.ragged_dot`
    pub struct RaggedDot {
        dims: RaggedDotDims = "ragged_dot_dimension_numbers",
    }
}

/// Which kind of dimension of lhs is ragged (StableHLO's three modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaggedMode {
    /// Mode 1, `lax.ragged_dot`: a free dimension of lhs (the tokens);
    /// rhs has a group dimension `group`, the result has no group dim.
    Rows { group: usize },
    /// Mode 2, the gradient of mode 1 with respect to rhs: a contracting
    /// dimension (`rhs_ragged` is rhs's matching one); rhs has no group
    /// dimension and the result has a leading one: group `i`'s product
    /// sums over its own range of the ragged dimension only.
    Contracting { rhs_ragged: usize },
    /// Mode 3: a batch dimension. Groups add no dependence between batch
    /// elements: the op is its `dot_general` (StableHLO's legalization and
    /// JAX's reference implementation ignore the sizes).
    Batch,
}

/// The dimensions of one ragged dot, checked against operand ranks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RaggedPlan {
    pub mode: RaggedMode,
    /// lhs's ragged dimension.
    pub ragged: usize,
    /// The lhs dimensions that index `group_sizes` before its last (group)
    /// dimension when it has rank > 1: `[b..., x...]`, the batch dims then
    /// (mode 1) the free dims or (mode 2) the contracting dims that come
    /// before the ragged one; (mode 3) the batch dims listed before it.
    pub prefix: Vec<usize>,
    /// The `dot_general` of one group: lhs (a range of the ragged
    /// dimension) with rhs (its group removed in mode 1).
    pub per_group: DotDims,
    /// Where the ragged dimension lands in the result (mode 1); the
    /// result's group dimension, 0 (mode 2); the batch position (mode 3).
    pub out_ragged: usize,
}

/// Where one lhs dimension of `group_sizes`' prefix goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrefixDim {
    pub lhs: usize,
    /// rhs's matching dimension (batch or contracting), if any.
    pub rhs: Option<usize>,
    /// The result's dimension; `None` for a contracting one (summed).
    pub out: Option<usize>,
}

fn dim(d: i64, rank: usize, what: &str) -> Result<usize, String> {
    usize::try_from(d)
        .ok()
        .filter(|&d| d < rank)
        .ok_or_else(|| format!("{what} {d} is out of range for rank {rank}"))
}

impl RaggedPlan {
    /// Each prefix dimension with its rhs and result dimensions.
    pub fn prefix_dims(&self, dims: &RaggedDotDims, lhs_rank: usize) -> Vec<PrefixDim> {
        let lead = usize::from(matches!(self.mode, RaggedMode::Contracting { .. }));
        let free: Vec<usize> = (0..lhs_rank)
            .filter(|&k| {
                !dims.lhs_batch.contains(&(k as i64)) && !dims.lhs_contract.contains(&(k as i64))
            })
            .collect();
        self.prefix
            .iter()
            .map(|&l| {
                let li = l as i64;
                if let Some(k) = dims.lhs_batch.iter().position(|&b| b == li) {
                    PrefixDim {
                        lhs: l,
                        rhs: Some(dims.rhs_batch[k] as usize),
                        out: Some(lead + k),
                    }
                } else if let Some(k) = dims.lhs_contract.iter().position(|&c| c == li) {
                    PrefixDim {
                        lhs: l,
                        rhs: Some(dims.rhs_contract[k] as usize),
                        out: None,
                    }
                } else {
                    let k = free.iter().position(|&f| f == l).unwrap_or(0);
                    PrefixDim {
                        lhs: l,
                        rhs: None,
                        out: Some(lead + dims.lhs_batch.len() + k),
                    }
                }
            })
            .collect()
    }
}

impl RaggedDot {
    /// The plan for operands of ranks `lhs_rank`, `rhs_rank`.
    pub fn plan(&self, lhs_rank: usize, rhs_rank: usize) -> Result<RaggedPlan, String> {
        let d = &self.dims;
        let &[ragged] = d.lhs_ragged.as_slice() else {
            return Err("needs exactly one lhs ragged dimension".into());
        };
        let ragged = dim(ragged, lhs_rank, "lhs ragged dimension")?;
        for (v, rank, what) in [
            (&d.lhs_batch, lhs_rank, "lhs batching dimension"),
            (&d.lhs_contract, lhs_rank, "lhs contracting dimension"),
            (&d.rhs_batch, rhs_rank, "rhs batching dimension"),
            (&d.rhs_contract, rhs_rank, "rhs contracting dimension"),
            (&d.rhs_group, rhs_rank, "rhs group dimension"),
        ] {
            for &x in v.iter() {
                dim(x, rank, what)?;
            }
        }
        if d.lhs_batch.len() != d.rhs_batch.len() || d.lhs_contract.len() != d.rhs_contract.len() {
            return Err(
                "lhs and rhs have different numbers of batching or contracting dimensions".into(),
            );
        }
        let ri = ragged as i64;
        let free: Vec<usize> = (0..lhs_rank)
            .filter(|&k| {
                !d.lhs_batch.contains(&(k as i64)) && !d.lhs_contract.contains(&(k as i64))
            })
            .collect();
        let no_group = || -> Result<(), String> {
            if d.rhs_group.is_empty() {
                Ok(())
            } else {
                Err(
                    "rhs can have no group dimension when the ragged dimension is a batching or \
                     contracting one"
                        .into(),
                )
            }
        };
        let (mode, per_group, prefix, out_ragged) = if let Some(k) =
            d.lhs_contract.iter().position(|&c| c == ri)
        {
            no_group()?;
            let prefix = d
                .lhs_batch
                .iter()
                .chain(&d.lhs_contract[..k])
                .map(|&x| x as usize)
                .collect();
            let mode = RaggedMode::Contracting {
                rhs_ragged: d.rhs_contract[k] as usize,
            };
            (mode, self.dot_dims(), prefix, 0)
        } else if let Some(k) = d.lhs_batch.iter().position(|&b| b == ri) {
            no_group()?;
            let prefix = d.lhs_batch[..k].iter().map(|&x| x as usize).collect();
            (RaggedMode::Batch, self.dot_dims(), prefix, k)
        } else {
            let &[group] = d.rhs_group.as_slice() else {
                return Err(
                    "needs one rhs group dimension when the ragged dimension is a free one".into(),
                );
            };
            let group = group as usize;
            if d.rhs_contract.contains(&(group as i64)) || d.rhs_batch.contains(&(group as i64)) {
                return Err(
                    "the rhs group dimension cannot be a contracting or batch dimension".into(),
                );
            }
            // rhs without its group dimension: indices past it move down one.
            let shift = |v: &[i64]| -> Vec<i64> {
                v.iter()
                    .map(|&x| if x as usize > group { x - 1 } else { x })
                    .collect()
            };
            let per_group = DotDims {
                lhs_batch: d.lhs_batch.clone(),
                rhs_batch: shift(&d.rhs_batch),
                lhs_contract: d.lhs_contract.clone(),
                rhs_contract: shift(&d.rhs_contract),
            };
            let before: Vec<usize> = free.iter().copied().take_while(|&f| f < ragged).collect();
            let out_ragged = d.lhs_batch.len() + before.len();
            let prefix = d
                .lhs_batch
                .iter()
                .map(|&x| x as usize)
                .chain(before)
                .collect();
            (RaggedMode::Rows { group }, per_group, prefix, out_ragged)
        };
        Ok(RaggedPlan {
            mode,
            ragged,
            prefix,
            per_group,
            out_ragged,
        })
    }

    fn dot_dims(&self) -> DotDims {
        let d = &self.dims;
        DotDims {
            lhs_batch: d.lhs_batch.clone(),
            rhs_batch: d.rhs_batch.clone(),
            lhs_contract: d.lhs_contract.clone(),
            rhs_contract: d.rhs_contract.clone(),
        }
    }

    /// The number of groups and the checked shape of `group_sizes`:
    /// `[g]`, or `[prefix..., g]` with the prefix dims' sizes.
    fn check_group_sizes(
        &self,
        p: &RaggedPlan,
        lhs: &TensorType,
        sizes: &TensorType,
    ) -> Result<i64, String> {
        if sizes.rank() == 0 || !sizes.elem.is_integer() {
            return Err(format!(
                "group_sizes must be an integer tensor of rank >= 1, not {sizes}"
            ));
        }
        if sizes.rank() > 1 {
            let want: Vec<i64> = p.prefix.iter().map(|&d| lhs.shape[d]).collect();
            if sizes.rank() != want.len() + 1 || sizes.shape[..want.len()] != want[..] {
                return Err(format!(
                    "group_sizes {sizes} does not have the shape [{}g] (lhs's batch dims and the \
                     dims before its ragged one, then the groups)",
                    want.iter().map(|w| format!("{w}, ")).collect::<String>()
                ));
            }
        }
        Ok(sizes.shape[sizes.rank() - 1])
    }
}

impl DecodeOp for RaggedDot {
    const SPEC: OpSpec = OpSpec {
        aliases: &["mhlo.ragged_dot"],
        operands: Arity::AtLeast(3),
        ..OpSpec::new("chlo.ragged_dot")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        RaggedDot::decode_attrs(d)
    }
}

impl OpDef for RaggedDot {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.encode_attrs()
    }

    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        let is_start = |t: &TensorType| t.rank() == 0 && t.elem.is_integer();
        let (lhs, rhs, sizes, local) = match operands {
            [lhs, rhs, sizes] => (lhs, rhs, sizes, false),
            [lhs, rhs, sizes, row, group] if is_start(row) && is_start(group) => {
                (lhs, rhs, sizes, true)
            }
            _ => {
                return Err(
                    "takes lhs, rhs, group_sizes (and, on a device's blocks, the first \
                     global row and group as rank-0 integers)"
                        .into(),
                )
            }
        };
        let p = self.plan(lhs.rank(), rhs.rank())?;
        let groups = self.check_group_sizes(&p, lhs, sizes)?;
        if lhs.elem != rhs.elem {
            return Err(format!("lhs {lhs} and rhs {rhs} differ in element type"));
        }
        let infer = |rhs: TensorType| {
            super::dot_general::infer_dot_general(&p.per_group, false, &[lhs.clone(), rhs])
        };
        match p.mode {
            RaggedMode::Rows { group } => {
                // A device's rhs block may hold fewer groups than there are sizes.
                let have = rhs.shape[group];
                if have != groups && !(local && have <= groups) {
                    return Err(format!(
                        "group_sizes has {groups} groups but rhs has {have} in dimension {group}"
                    ));
                }
                let mut rhs_one = rhs.clone();
                rhs_one.shape.remove(group);
                Ok(vec![infer(rhs_one)?])
            }
            RaggedMode::Contracting { .. } => {
                let mut out = infer(rhs.clone())?;
                out.shape.insert(0, groups);
                Ok(vec![out])
            }
            RaggedMode::Batch => Ok(vec![infer(rhs.clone())?]),
        }
    }

    fn rule(&self, shapes: &RuleShapes, _o: RuleOptions) -> Result<Option<OpShardingRule>, String> {
        let (lhs, rhs, sizes) = (shapes.operands[0], shapes.operands[1], shapes.operands[2]);
        let p = self.plan(lhs.len(), rhs.len())?;
        let d = &self.dims;
        // `group_sizes`' prefix dims go with the lhs dims they index (a
        // device holding some batch elements holds their sizes); its
        // group dim is replicated: every device needs every offset.
        let prefix_of = |l: usize| -> Option<usize> {
            if sizes.len() > 1 {
                p.prefix.iter().position(|&x| x == l)
            } else {
                None
            }
        };
        let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
        let mut out_dim = 0;
        if let RaggedMode::Contracting { .. } = p.mode {
            // The result's groups: a device holding some computes only theirs.
            b.add_factor_per_tensor(
                shapes.results[0][0],
                FactorKind::PassThrough,
                &[None, None, None],
                &[Some(0)],
            );
            out_dim = 1;
        }
        for (&l, &r) in d.lhs_batch.iter().zip(&d.rhs_batch) {
            let (l, r) = (l as usize, r as usize);
            b.add_factor_per_tensor(
                lhs[l],
                FactorKind::PassThrough,
                &[Some(l), Some(r), prefix_of(l)],
                &[Some(out_dim)],
            );
            out_dim += 1;
        }
        for (l, &size) in lhs.iter().enumerate() {
            let li = l as i64;
            if d.lhs_batch.contains(&li) || d.lhs_contract.contains(&li) {
                continue;
            }
            b.add_factor_per_tensor(
                size,
                FactorKind::PassThrough,
                &[Some(l), None, prefix_of(l)],
                &[Some(out_dim)],
            );
            out_dim += 1;
        }
        let group = match p.mode {
            RaggedMode::Rows { group } => Some(group),
            _ => None,
        };
        for (r, &size) in rhs.iter().enumerate() {
            let ri = r as i64;
            if Some(r) == group || d.rhs_batch.contains(&ri) || d.rhs_contract.contains(&ri) {
                continue;
            }
            b.add_factor_per_tensor(
                size,
                FactorKind::PassThrough,
                &[None, Some(r), None],
                &[Some(out_dim)],
            );
            out_dim += 1;
        }
        for (&l, &r) in d.lhs_contract.iter().zip(&d.rhs_contract) {
            let (l, r) = (l as usize, r as usize);
            b.add_factor_per_tensor(
                lhs[l],
                FactorKind::Reduction,
                &[Some(l), Some(r), prefix_of(l)],
                &[None],
            );
        }
        if let Some(group) = group {
            // A device holding some experts multiplies only their rows.
            b.add_factor_per_tensor(
                rhs[group],
                FactorKind::Reduction,
                &[None, Some(group), None],
                &[None],
            );
        }
        b.add_factor_per_tensor(
            sizes[sizes.len() - 1],
            FactorKind::NeedReplication,
            &[None, None, Some(sizes.len() - 1)],
            &[None],
        );
        b.build().map(Some).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rd(lb: &[i64], rb: &[i64], lc: &[i64], rc: &[i64], ragged: i64, group: &[i64]) -> RaggedDot {
        RaggedDot {
            dims: RaggedDotDims {
                lhs_batch: lb.to_vec(),
                rhs_batch: rb.to_vec(),
                lhs_contract: lc.to_vec(),
                rhs_contract: rc.to_vec(),
                lhs_ragged: vec![ragged],
                rhs_group: group.to_vec(),
            },
        }
    }

    fn ty(shape: &[i64]) -> TensorType {
        TensorType::new(shape.to_vec(), crate::ir::ElemType::F32)
    }

    fn sizes(shape: &[i64]) -> TensorType {
        TensorType::new(shape.to_vec(), crate::ir::ElemType::I32)
    }

    #[test]
    fn plans_of_the_three_modes() {
        let p = rd(&[], &[], &[1], &[1], 0, &[0]).plan(2, 3).unwrap();
        assert_eq!(
            (p.mode, p.ragged, p.out_ragged),
            (RaggedMode::Rows { group: 0 }, 0, 0)
        );
        assert_eq!(p.per_group.rhs_contract, [0]);
        // [b, m, k] x [b, g, k, n]: group dim 1, contracting 2 -> 1 without it.
        let p = rd(&[0], &[0], &[2], &[2], 1, &[1]).plan(3, 4).unwrap();
        assert_eq!(p.per_group.rhs_contract, [1]);
        assert_eq!((p.out_ragged, p.prefix.clone()), (1, vec![0]));
        // The gradient with respect to rhs: [m, k] x [m, n], ragged m.
        let p = rd(&[], &[], &[0], &[0], 0, &[]).plan(2, 2).unwrap();
        assert_eq!(p.mode, RaggedMode::Contracting { rhs_ragged: 0 });
        // [b, k1, k2, m] x [b, k1, k2, n] ragged k2: sizes per b and k1.
        let r = rd(&[0], &[0], &[1, 2], &[1, 2], 2, &[]);
        let p = r.plan(4, 4).unwrap();
        assert_eq!(p.prefix, [0, 1]);
        let dims = p.prefix_dims(&r.dims, 4);
        assert_eq!(
            dims[0],
            PrefixDim {
                lhs: 0,
                rhs: Some(0),
                out: Some(1)
            }
        );
        assert_eq!(
            dims[1],
            PrefixDim {
                lhs: 1,
                rhs: Some(1),
                out: None
            }
        );
        let p = rd(&[0, 1], &[0, 1], &[3], &[2], 1, &[]).plan(4, 4).unwrap();
        assert_eq!((p.mode, p.prefix.clone()), (RaggedMode::Batch, vec![0]));
        assert!(rd(&[], &[], &[0], &[0], 0, &[0])
            .plan(2, 3)
            .unwrap_err()
            .contains("no group"));
        assert!(rd(&[], &[], &[1], &[1], 0, &[])
            .plan(2, 3)
            .unwrap_err()
            .contains("one rhs group"));
        assert!(rd(&[], &[], &[1], &[1], 5, &[0])
            .plan(2, 3)
            .unwrap_err()
            .contains("out of range"));
        let dims = rd(&[0], &[0], &[2], &[2], 1, &[1]).dims;
        assert_eq!(
            RaggedDotDims::decode(&dims.encode().unwrap()).unwrap(),
            dims
        );
    }

    /// Result types as StableHLO infers them: mode 2 adds the groups in
    /// front; `group_sizes` is `[g]` or `[prefix..., g]`.
    #[test]
    fn result_types_and_group_sizes_shapes() {
        let infer = |r: &RaggedDot, ops: &[TensorType]| r.infer(ops).map(|v| v[0].shape.clone());
        let mode1 = rd(&[0], &[1], &[2], &[2], 1, &[0]);
        let (lhs, rhs) = (ty(&[2, 6, 5]), ty(&[3, 2, 5, 4]));
        assert_eq!(
            infer(&mode1, &[lhs.clone(), rhs.clone(), sizes(&[3])]).unwrap(),
            [2, 6, 4]
        );
        assert_eq!(
            infer(&mode1, &[lhs.clone(), rhs.clone(), sizes(&[2, 3])]).unwrap(),
            [2, 6, 4]
        );
        let err = infer(&mode1, &[lhs, rhs, sizes(&[6, 3])]).unwrap_err();
        assert!(err.contains("[2, g]"), "{err}");
        let mode2 = rd(&[], &[], &[0], &[0], 0, &[]);
        assert_eq!(
            infer(&mode2, &[ty(&[64, 16]), ty(&[64, 8]), sizes(&[4])]).unwrap(),
            [4, 16, 8]
        );
        let mode3 = rd(&[0], &[0], &[2], &[1], 0, &[]);
        assert_eq!(
            infer(&mode3, &[ty(&[3, 4, 5]), ty(&[3, 5, 6]), sizes(&[2])]).unwrap(),
            [3, 4, 6]
        );
    }
}
