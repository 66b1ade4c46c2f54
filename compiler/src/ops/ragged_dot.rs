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
//! meshrun takes the form `lax.ragged_dot` writes: the ragged dimension is
//! a non-contracting dimension of `lhs` (StableHLO's "mode 1"), `rhs` has
//! one group dimension, `group_sizes` is rank 1 with one size per group.
//! Rows `[s_i, s_i + group_sizes[i])` of the ragged dimension (`s_i` the
//! sum of the sizes before) are multiplied by group `i` of `rhs`; rows past
//! the last group are zero. The result is `lhs`'s batch dims, then its free
//! dims (the ragged one included), then `rhs`'s free dims (the group dim
//! excluded), as `dot_general`. Ragged contracting or batch dimensions
//! (modes 2 and 3) are one-line errors.
//!
//! Sharding rule: batch, free and contracting factors as `dot_general`
//! (contracting → partial sums). Two differ from XLA's rule, which asks
//! for replication of both: the ragged dimension is pass-through (a
//! device's block of rows is multiplied by the groups it meets), and
//! rhs's group dimension is a reduction factor (a device holding some
//! experts multiplies only the rows of its experts; every row belongs to
//! one group, so the sum over the group axis is the whole product: expert
//! parallelism with no weights gathered). `group_sizes` stays replicated
//! (its own need-replication factor): every device needs every offset.
//! `partition::local_ragged_dot` gives the local op the first global row
//! of its block and the first global group of its rhs block as two
//! meshrun-internal rank-0 integer operands.

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::types::TensorType;
use crate::ir::DotDims;
use crate::ops::{Arity, AttrCodec, DecodeError, DecodeOp, Decoder, OpDef, OpSpec, RuleShapes};
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
        let Attr::Params { name, params } = a else {
            return Err(format!(
                "expected {DIMS_NAME}<...>, found {}",
                a.kind_name()
            ));
        };
        if name != DIMS_NAME {
            return Err(format!("expected {DIMS_NAME}<...>, found {name}<...>"));
        }
        let mut out: [Vec<i64>; 6] = Default::default();
        for (key, value) in params {
            let i = KEYS
                .iter()
                .position(|k| k == key)
                .ok_or_else(|| format!("{DIMS_NAME} has no parameter '{key}'"))?;
            out[i] = Vec::<i64>::decode(value)?;
        }
        let [lhs_batch, rhs_batch, lhs_contract, rhs_contract, lhs_ragged, rhs_group] = out;
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
        let params = KEYS
            .iter()
            .zip(self.fields())
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| (k.to_string(), Attr::int_list(v)))
            .collect();
        Some(Attr::Params {
            name: DIMS_NAME.into(),
            params,
        })
    }
}

define_attrs! {
    /// `chlo.ragged_dot`
    pub struct RaggedDot {
        dims: RaggedDotDims = "ragged_dot_dimension_numbers",
    }
}

/// The dimensions of one ragged dot, checked against operand ranks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RaggedPlan {
    /// lhs's ragged dimension.
    pub ragged: usize,
    /// rhs's group dimension.
    pub group: usize,
    /// The `dot_general` of one group: lhs (a block of rows) with rhs's
    /// group removed.
    pub per_group: DotDims,
    /// Where the ragged dimension lands in the result.
    pub out_ragged: usize,
}

fn dim(d: i64, rank: usize, what: &str) -> Result<usize, String> {
    usize::try_from(d)
        .ok()
        .filter(|&d| d < rank)
        .ok_or_else(|| format!("{what} {d} is out of range for rank {rank}"))
}

impl RaggedDot {
    /// The plan for operands of ranks `lhs_rank`, `rhs_rank`.
    pub fn plan(&self, lhs_rank: usize, rhs_rank: usize) -> Result<RaggedPlan, String> {
        let d = &self.dims;
        let (&[ragged], &[group]) = (d.lhs_ragged.as_slice(), d.rhs_group.as_slice()) else {
            return Err(
                "needs one lhs ragged dimension and one rhs group dimension (a ragged \
                 contracting or batch dimension is not supported)"
                    .into(),
            );
        };
        let ragged = dim(ragged, lhs_rank, "lhs ragged dimension")?;
        let group = dim(group, rhs_rank, "rhs group dimension")?;
        if d.lhs_contract.contains(&(ragged as i64)) || d.lhs_batch.contains(&(ragged as i64)) {
            return Err(
                "a ragged contracting or batch dimension is not supported (only lax.ragged_dot's \
                 ragged non-contracting dimension)"
                    .into(),
            );
        }
        if d.rhs_contract.contains(&(group as i64)) || d.rhs_batch.contains(&(group as i64)) {
            return Err(
                "the rhs group dimension cannot be a contracting or batch dimension".into(),
            );
        }
        for (v, rank, what) in [
            (&d.lhs_batch, lhs_rank, "lhs batching dimension"),
            (&d.lhs_contract, lhs_rank, "lhs contracting dimension"),
            (&d.rhs_batch, rhs_rank, "rhs batching dimension"),
            (&d.rhs_contract, rhs_rank, "rhs contracting dimension"),
        ] {
            for &x in v.iter() {
                dim(x, rank, what)?;
            }
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
        let free_before = (0..ragged)
            .filter(|&k| {
                !d.lhs_batch.contains(&(k as i64)) && !d.lhs_contract.contains(&(k as i64))
            })
            .count();
        Ok(RaggedPlan {
            ragged,
            group,
            per_group,
            out_ragged: d.lhs_batch.len() + free_before,
        })
    }
}

impl DecodeOp for RaggedDot {
    const SPEC: OpSpec = OpSpec {
        name: "chlo.ragged_dot",
        aliases: &["mhlo.ragged_dot"],
        operands: Arity::AtLeast(3),
        results: Arity::Exactly(1),
        computations: 0,
        elementwise: false,
        pretty: None,
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        RaggedDot::decode_attrs(d)
    }
}

impl OpDef for RaggedDot {
    fn spec(&self) -> &'static OpSpec {
        &Self::SPEC
    }

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
        if sizes.rank() != 1 || !sizes.elem.is_integer() {
            return Err(format!(
                "group_sizes must be a rank-1 integer tensor (one size per group), not {sizes}"
            ));
        }
        // A device's rhs block may hold fewer groups than there are sizes.
        let groups = rhs.shape[p.group];
        if sizes.shape[0] != groups && !(local && groups <= sizes.shape[0]) {
            return Err(format!(
                "group_sizes has {} entries but rhs has {} groups",
                sizes.shape[0], rhs.shape[p.group]
            ));
        }
        if lhs.elem != rhs.elem {
            return Err(format!("lhs {lhs} and rhs {rhs} differ in element type"));
        }
        let mut rhs_one = rhs.clone();
        rhs_one.shape.remove(p.group);
        let out = crate::ir::infer::contraction::infer_dot_general(
            &p.per_group,
            false,
            &[lhs.clone(), rhs_one],
        )?;
        Ok(vec![out])
    }

    fn rule(&self, shapes: &RuleShapes, _o: RuleOptions) -> Result<Option<OpShardingRule>, String> {
        let (lhs, rhs) = (shapes.operands[0], shapes.operands[1]);
        let p = self.plan(lhs.len(), rhs.len())?;
        let d = &self.dims;
        let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
        let mut out_dim = 0;
        for (&l, &r) in d.lhs_batch.iter().zip(&d.rhs_batch) {
            let (l, r) = (l as usize, r as usize);
            b.add_factor_per_tensor(
                lhs[l],
                FactorKind::PassThrough,
                &[Some(l), Some(r), None],
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
                &[Some(l), None, None],
                &[Some(out_dim)],
            );
            out_dim += 1;
        }
        for (r, &size) in rhs.iter().enumerate() {
            let ri = r as i64;
            if r == p.group || d.rhs_batch.contains(&ri) || d.rhs_contract.contains(&ri) {
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
                &[Some(l), Some(r), None],
                &[None],
            );
        }
        b.add_factor_per_tensor(
            rhs[p.group],
            FactorKind::Reduction,
            &[None, Some(p.group), None],
            &[None],
        );
        b.add_factor_per_tensor(
            rhs[p.group],
            FactorKind::NeedReplication,
            &[None, None, Some(0)],
            &[None],
        );
        b.build().map(Some).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_of_lax_ragged_dot_and_of_a_batched_one() {
        let rd = |lb: &[i64], rb: &[i64], lc: i64, rc: i64, ragged: i64, group: i64| RaggedDot {
            dims: RaggedDotDims {
                lhs_batch: lb.to_vec(),
                rhs_batch: rb.to_vec(),
                lhs_contract: vec![lc],
                rhs_contract: vec![rc],
                lhs_ragged: vec![ragged],
                rhs_group: vec![group],
            },
        };
        let p = rd(&[], &[], 1, 1, 0, 0).plan(2, 3).unwrap();
        assert_eq!((p.ragged, p.group, p.out_ragged), (0, 0, 0));
        assert_eq!(p.per_group.rhs_contract, [0]);
        // [b, m, k] x [b, g, k, n]: group dim 1, contracting 2 -> 1 without it.
        let p = rd(&[0], &[0], 2, 2, 1, 1).plan(3, 4).unwrap();
        assert_eq!(p.per_group.rhs_contract, [1]);
        assert_eq!(p.out_ragged, 1);
        assert!(rd(&[], &[], 0, 1, 0, 0)
            .plan(2, 3)
            .unwrap_err()
            .contains("ragged contracting"));
        assert!(rd(&[], &[], 1, 1, 5, 0)
            .plan(2, 3)
            .unwrap_err()
            .contains("out of range"));
        let dims = rd(&[0], &[0], 2, 2, 1, 1).dims;
        assert_eq!(
            RaggedDotDims::decode(&dims.encode().unwrap()).unwrap(),
            dims
        );
    }
}
