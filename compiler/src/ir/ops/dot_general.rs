//! `stablehlo.dot_general`: batched matrix products over any dimensions,
//! and `stablehlo.dot`, its spelling for rank ≤ 2 operands without
//! dimension numbers (lhs's last dimension contracts with rhs's first).
//!
//! ```text
//! %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1],
//!   precision = [DEFAULT, DEFAULT] : (tensor<2x4x8xf32>, tensor<2x8x3xf32>) -> tensor<2x4x3xf32>
//! %1 = stablehlo.dot %m, %n : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
//! ```
//!
//! The generic form writes the dimension numbers as
//! `dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], ...>`
//! and the precisions as `precision_config = [#stablehlo<precision DEFAULT>, ...]`.
//! A dot's `algorithm = <...>` (`#stablehlo.dot_algorithm<...>`) is kept
//! verbatim among the op's other attributes.

use crate::ir::attr::Attr;
use crate::ir::ops::checks::{
    check_static_shape, expect_operands, expect_results, plural, unique_dim_indices,
};
use crate::ir::ops::decode::{decode_int_list_params, encode_int_list_params};
use crate::ir::ops::{Arity, SigForm};
use crate::ir::ops::{AttrCodec, DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes};
use crate::ir::types::{ElemType, TensorType};
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{FactorKind, OpShardingRule, RuleOptions};

/// The dialect prefix of a dot's `algorithm` attribute, which the pretty
/// form leaves out.
pub const DOT_ALGORITHM: &str = "#stablehlo.dot_algorithm";

/// Dimension numbers of `stablehlo.dot_general`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct DotDims {
    pub lhs_batch: Vec<i64>,
    pub rhs_batch: Vec<i64>,
    pub lhs_contract: Vec<i64>,
    pub rhs_contract: Vec<i64>,
}

impl DotDims {
    /// The dims of a plain rank-2 (or rank-1) `stablehlo.dot`.
    pub fn for_dot(lhs_rank: usize) -> DotDims {
        DotDims {
            lhs_batch: vec![],
            rhs_batch: vec![],
            lhs_contract: vec![lhs_rank as i64 - 1],
            rhs_contract: vec![0],
        }
    }
}

const DIMS_NAME: &str = "#stablehlo.dot";
const DIMS_ATTR: &str = "dot_dimension_numbers";
const PRECISION_ATTR: &str = "precision_config";
const KEYS: [&str; 4] = [
    "lhs_batching_dimensions",
    "rhs_batching_dimensions",
    "lhs_contracting_dimensions",
    "rhs_contracting_dimensions",
];

/// `#stablehlo.dot<lhs_batching_dimensions = [0], ...>`; absent fields are
/// empty (and left out when written).
impl AttrCodec for DotDims {
    fn decode(a: &Attr) -> Result<Self, String> {
        let [lhs_batch, rhs_batch, lhs_contract, rhs_contract] =
            decode_int_list_params(a, DIMS_NAME, &KEYS)?;
        Ok(DotDims {
            lhs_batch,
            rhs_batch,
            lhs_contract,
            rhs_contract,
        })
    }

    fn encode(&self) -> Option<Attr> {
        let fields = [
            &self.lhs_batch,
            &self.rhs_batch,
            &self.lhs_contract,
            &self.rhs_contract,
        ];
        Some(encode_int_list_params(DIMS_NAME, &KEYS, &fields))
    }
}

/// `[#stablehlo<precision DEFAULT>, ...]`, the names kept verbatim.
fn decode_precision(a: &Attr) -> Result<Vec<String>, String> {
    let Attr::List(items) = a else {
        return Err(format!(
            "expected a list of #stablehlo<precision ...>, found {}",
            a.kind_name()
        ));
    };
    items
        .iter()
        .map(|item| match item {
            Attr::Enum {
                dialect,
                keyword,
                value,
            } if dialect == "#stablehlo" && keyword == "precision" => Ok(value.clone()),
            other => Err(format!(
                "expected #stablehlo<precision ...>, found {}",
                other.kind_name()
            )),
        })
        .collect()
}

fn encode_precision(names: &[String]) -> Attr {
    Attr::List(
        names
            .iter()
            .map(|value| Attr::Enum {
                dialect: "#stablehlo".into(),
                keyword: "precision".into(),
                value: value.clone(),
            })
            .collect(),
    )
}

/// The op. `is_dot` records that the text used `stablehlo.dot` (no dims,
/// rank ≤ 2; `dims` are then [`DotDims::for_dot`]) so the printer writes
/// it back the same way. `precision` is kept verbatim (`DEFAULT`,
/// `HIGHEST`, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct DotGeneral {
    pub dims: DotDims,
    pub precision: Option<Vec<String>>,
    pub is_dot: bool,
}

impl DotGeneral {
    /// A `dot_general` with these dimension numbers and no precision.
    pub fn new(dims: DotDims) -> DotGeneral {
        DotGeneral {
            dims,
            precision: None,
            is_dot: false,
        }
    }

    /// A `stablehlo.dot` of an lhs of rank `lhs_rank`.
    pub fn dot(lhs_rank: usize) -> DotGeneral {
        DotGeneral {
            dims: DotDims::for_dot(lhs_rank),
            precision: None,
            is_dot: true,
        }
    }
}

/// `, precision = [...], algorithm = <...>`: the optional entries both
/// spellings share.
const PRECISION: Fmt = Fmt::EnumList {
    key: "precision",
    attr: PRECISION_ATTR,
    dialect: "#stablehlo",
    keyword: "precision",
};
const ALGORITHM: Fmt = Fmt::Prefixed("algorithm", DOT_ALGORITHM);

/// `stablehlo.dot`: no dimension numbers.
const DOT: OpSpec = OpSpec {
    name: "stablehlo.dot",
    pretty: Some(&[
        Fmt::Operands,
        Fmt::Trailing(&[PRECISION, ALGORITHM]),
        Fmt::AttrDict,
        Fmt::Sig(SigForm::Functional),
    ]),
    ..DotGeneral::SPEC
};

impl DecodeOp for DotGeneral {
    const SPEC: OpSpec = OpSpec {
        operands: Arity::Exactly(2),
        pretty: Some(&[
            Fmt::Operands,
            Fmt::Trailing(&[
                Fmt::DimsPair {
                    key: "batching_dims",
                    attr: DIMS_ATTR,
                    dialect: DIMS_NAME,
                    lhs: KEYS[0],
                    rhs: KEYS[1],
                    always: false,
                },
                Fmt::DimsPair {
                    key: "contracting_dims",
                    attr: DIMS_ATTR,
                    dialect: DIMS_NAME,
                    lhs: KEYS[2],
                    rhs: KEYS[3],
                    always: true,
                },
                PRECISION,
                ALGORITHM,
            ]),
            Fmt::AttrDict,
            Fmt::Sig(SigForm::Functional),
        ]),
        ..OpSpec::new("stablehlo.dot_general")
    };

    const SPELLINGS: &'static [OpSpec] = &[DOT];

    /// A dot's dims follow from the lhs's rank.
    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        let precision = match d.take(PRECISION_ATTR) {
            Some(a) => {
                Some(decode_precision(&a).map_err(|m| DecodeError::attr(PRECISION_ATTR, m))?)
            }
            None => None,
        };
        let is_dot = d.spelling == DOT.name;
        let dims = if is_dot {
            DotDims::for_dot(d.operand_types.first().map_or(0, |t| t.rank()))
        } else {
            d.required(DIMS_ATTR)?
        };
        Ok(DotGeneral {
            dims,
            precision,
            is_dot,
        })
    }

    fn spelling(&self) -> &'static OpSpec {
        if self.is_dot {
            &Self::SPELLINGS[0]
        } else {
            &Self::SPEC
        }
    }
}

impl OpDef for DotGeneral {
    /// A sum of products: zeros in the padding contribute nothing.
    fn preserves_zero_padding(&self) -> bool {
        true
    }

    /// A dot has no dimension numbers to write.
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        let mut out = Vec::new();
        if !self.is_dot {
            out.extend(self.dims.encode().map(|a| (DIMS_ATTR, a)));
        }
        if let Some(p) = &self.precision {
            out.push((PRECISION_ATTR, encode_precision(p)));
        }
        out
    }

    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        infer_dot_general(&self.dims, self.is_dot, operands).map(|t| vec![t])
    }

    /// The result element type may differ from the operands'
    /// (`preferred_element_type`, see [`dot_result_elem_ok`]).
    fn check(&self, operands: &[TensorType], results: &[TensorType]) -> Result<(), String> {
        for (i, ty) in operands.iter().enumerate() {
            check_static_shape(ty, &format!("operand {i}"))?;
        }
        let mut want = self.infer(operands)?;
        if let ([w], [r]) = (want.as_mut_slice(), results) {
            if dot_result_elem_ok(w.elem, r.elem) {
                w.elem = r.elem;
            }
        }
        expect_results(&want, results)
    }

    /// Batch factors (lhs, rhs, result), then the free dimensions of the
    /// lhs, then of the rhs (each with its result dimension), then the
    /// contracting factors (lhs, rhs; reduction).
    fn rule(
        &self,
        shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        shapes.expect_counts(2, 1)?;
        let (lhs, rhs, out) = (shapes.operands[0], shapes.operands[1], shapes.results[0]);
        let plain;
        let dims = if self.is_dot {
            plain = DotDims::for_dot(lhs.len());
            &plain
        } else {
            &self.dims
        };
        let lhs_batch = dim_list(&dims.lhs_batch, lhs.len(), "lhs batching")?;
        let rhs_batch = dim_list(&dims.rhs_batch, rhs.len(), "rhs batching")?;
        let lhs_contract = dim_list(&dims.lhs_contract, lhs.len(), "lhs contracting")?;
        let rhs_contract = dim_list(&dims.rhs_contract, rhs.len(), "rhs contracting")?;
        if lhs_batch.len() != rhs_batch.len() || lhs_contract.len() != rhs_contract.len() {
            return Err("lhs and rhs must have as many batching and contracting dimensions".into());
        }
        let lhs_free: Vec<usize> = (0..lhs.len())
            .filter(|d| !lhs_batch.contains(d) && !lhs_contract.contains(d))
            .collect();
        let rhs_free: Vec<usize> = (0..rhs.len())
            .filter(|d| !rhs_batch.contains(d) && !rhs_contract.contains(d))
            .collect();
        let out_rank = lhs_batch.len() + lhs_free.len() + rhs_free.len();
        if out.len() != out_rank {
            return Err(format!(
                "result must have rank {out_rank}, got {}",
                out.len()
            ));
        }
        let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
        let mut out_dim = 0;
        for (&l, &r) in lhs_batch.iter().zip(&rhs_batch) {
            check_sizes_match(lhs[l], rhs[r], "batching")?;
            b.add_factor_per_tensor(
                lhs[l],
                FactorKind::PassThrough,
                &[Some(l), Some(r)],
                &[Some(out_dim)],
            );
            out_dim += 1;
        }
        for &l in &lhs_free {
            b.add_factor_per_tensor(
                lhs[l],
                FactorKind::PassThrough,
                &[Some(l), None],
                &[Some(out_dim)],
            );
            out_dim += 1;
        }
        for &r in &rhs_free {
            b.add_factor_per_tensor(
                rhs[r],
                FactorKind::PassThrough,
                &[None, Some(r)],
                &[Some(out_dim)],
            );
            out_dim += 1;
        }
        for (&l, &r) in lhs_contract.iter().zip(&rhs_contract) {
            check_sizes_match(lhs[l], rhs[r], "contracting")?;
            b.add_factor_per_tensor(lhs[l], FactorKind::Reduction, &[Some(l), Some(r)], &[None]);
        }
        b.build_rule()
    }
}

fn check_sizes_match(lhs: i64, rhs: i64, what: &str) -> Result<(), String> {
    if lhs != rhs {
        return Err(format!(
            "{what} dimensions have sizes {lhs} (lhs) and {rhs} (rhs)"
        ));
    }
    Ok(())
}

/// Distinct dimension indices below `rank` (the rule's check, worded as
/// Shardy's).
fn dim_list(dims: &[i64], rank: usize, what: &str) -> Result<Vec<usize>, String> {
    let mut out: Vec<usize> = Vec::with_capacity(dims.len());
    for &d in dims {
        match usize::try_from(d)
            .ok()
            .filter(|&d| d < rank && !out.contains(&d))
        {
            Some(d) => out.push(d),
            None => {
                return Err(format!(
                    "{what} dimension {d} is repeated or out of range for rank {rank}"
                ))
            }
        }
    }
    Ok(out)
}

/// `stablehlo.dot_general` (and `stablehlo.dot` when `is_dot`): result
/// shape is batch dims ++ lhs free dims ++ rhs free dims, each group in
/// order. The element type inferred here is the operands'; a verifier
/// accepts another result element type of the same kind (JAX's
/// `preferred_element_type`, see [`dot_result_elem_ok`]).
pub(crate) fn infer_dot_general(
    dims: &DotDims,
    is_dot: bool,
    operands: &[TensorType],
) -> Result<TensorType, String> {
    expect_operands(operands, 2)?;
    let (lhs, rhs) = (&operands[0], &operands[1]);
    if is_dot {
        for (ty, side) in [(lhs, "lhs"), (rhs, "rhs")] {
            if !(1..=2).contains(&ty.rank()) {
                return Err(format!("{side} must have rank 1 or 2, got {ty}"));
            }
        }
    }
    if lhs.elem != rhs.elem {
        return Err(format!(
            "operand element types differ: lhs is {}, rhs is {}",
            lhs.elem, rhs.elem
        ));
    }
    let (lb, rb, lc, rc) = (
        &dims.lhs_batch,
        &dims.rhs_batch,
        &dims.lhs_contract,
        &dims.rhs_contract,
    );
    if lb.len() != rb.len() {
        return Err(format!(
            "lhs has {} batching dimension{} but rhs has {}",
            lb.len(),
            plural(lb.len()),
            rb.len()
        ));
    }
    if lc.len() != rc.len() {
        return Err(format!(
            "lhs has {} contracting dimension{} but rhs has {}",
            lc.len(),
            plural(lc.len()),
            rc.len()
        ));
    }
    let lhs_used = side_dims(lb, lc, lhs, "lhs")?;
    let rhs_used = side_dims(rb, rc, rhs, "rhs")?;
    let n_batch = lb.len();
    for (k, (&l, &r)) in lhs_used.iter().zip(&rhs_used).enumerate() {
        if lhs.shape[l] != rhs.shape[r] {
            let what = if k < n_batch {
                "batching"
            } else {
                "contracting"
            };
            return Err(format!(
                "{what} dimension sizes differ: lhs dim {l} has size {}, rhs dim {r} has size {}",
                lhs.shape[l], rhs.shape[r]
            ));
        }
    }
    let batch = lhs_used[..n_batch].iter().map(|&d| lhs.shape[d]);
    let lhs_free = free_dims(lhs, &lhs_used);
    let rhs_free = free_dims(rhs, &rhs_used);
    let shape: Vec<i64> = batch.chain(lhs_free).chain(rhs_free).collect();
    Ok(lhs.with_shape(shape))
}

/// Batching then contracting dimension indices of one side, each in range
/// and used once.
fn side_dims(
    batch: &[i64],
    contract: &[i64],
    ty: &TensorType,
    side: &str,
) -> Result<Vec<usize>, String> {
    let all: Vec<i64> = batch.iter().chain(contract).copied().collect();
    // Range errors name the list the bad entry is in; repeats span both.
    unique_dim_indices(batch, ty.rank(), &format!("{side} batching dimension"))?;
    unique_dim_indices(
        contract,
        ty.rank(),
        &format!("{side} contracting dimension"),
    )?;
    unique_dim_indices(
        &all,
        ty.rank(),
        &format!("{side} dimension (batching or contracting)"),
    )
}

/// Sizes of the dimensions of `ty` not in `used`, in order.
fn free_dims<'a>(ty: &'a TensorType, used: &'a [usize]) -> impl Iterator<Item = i64> + 'a {
    (0..ty.rank())
        .filter(move |d| !used.contains(d))
        .map(move |d| ty.shape[d])
}

/// Whether a `dot_general` over `operand` elements may produce `result`
/// elements: the same type, or another of the same kind (float→float,
/// integer→integer), as JAX emits for `preferred_element_type`.
pub fn dot_result_elem_ok(operand: ElemType, result: ElemType) -> bool {
    operand == result
        || (operand.is_float() && result.is_float())
        || (operand.is_integer() && result.is_integer())
}
