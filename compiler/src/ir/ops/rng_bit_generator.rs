//! `stablehlo.rng_bit_generator`: random bits from a counter-based
//! generator and the state advanced past them. JAX's `rbg` and
//! `unsafe_rbg` PRNG implementations call it with a `tensor<2xui64>` state
//! (their `4xui32` key bitcast) and algorithm `DEFAULT`.
//!
//! `%state, %bits = stablehlo.rng_bit_generator %s, algorithm = DEFAULT :
//! (tensor<2xui64>) -> (tensor<2xui64>, tensor<8x6xui32>)`
//!
//! The bits are XLA's (its CPU backend's expansion, which JAX runs):
//! `DEFAULT` is Philox there, and the kernel (`meshrun-kernels`
//! `cpu::rng`) follows XLA's numbering of elements, so programs produce
//! the bits JAX produces.

use crate::attr_enum;
use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::{
    Arity, DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm,
};
use crate::ir::types::{ElemType, TensorType};
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{FactorKind, OpShardingRule, RuleOptions};

attr_enum! {
    /// The generator (`#stablehlo<rng_algorithm PHILOX>`).
    pub enum RngAlgorithm = "#stablehlo" "rng_algorithm" {
        Default => "DEFAULT",
        ThreeFry => "THREE_FRY",
        Philox => "PHILOX",
    }
}

define_attrs! {
    pub struct RngBitGenerator {
        algorithm: RngAlgorithm = "rng_algorithm",
    }
}

impl DecodeOp for RngBitGenerator {
    const SPEC: OpSpec = OpSpec {
        results: Arity::Exactly(2),
        pretty: Some(&[
            Fmt::Operands,
            Fmt::Punct(","),
            Fmt::Keyed("algorithm", "rng_algorithm"),
            Fmt::AttrDict,
            Fmt::Sig(SigForm::Functional),
        ]),
        ..OpSpec::new("stablehlo.rng_bit_generator")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        RngBitGenerator::decode_attrs(d)
    }
}

impl RngBitGenerator {
    /// The algorithm XLA's CPU backend runs for this op (`DEFAULT` is
    /// Philox there).
    pub fn effective_algorithm(&self) -> RngAlgorithm {
        match self.algorithm {
            RngAlgorithm::Default => RngAlgorithm::Philox,
            a => a,
        }
    }
}

/// The state sizes the algorithm reads: a key and one (ThreeFry) or two
/// (Philox) counter words; Philox also accepts two words in all.
fn check_state(algorithm: RngAlgorithm, state: &TensorType) -> Result<(), String> {
    if state.rank() != 1 || state.elem != ElemType::U64 {
        return Err(format!(
            "the state must be a rank-1 tensor of ui64 (JAX bitcasts its 4xui32 key), not {state}"
        ));
    }
    let n = state.shape[0];
    let ok = match algorithm {
        RngAlgorithm::ThreeFry => n == 2,
        RngAlgorithm::Philox | RngAlgorithm::Default => n == 2 || n == 3,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{} needs a state of {} ui64 words, not {n}",
            algorithm.name(),
            if algorithm == RngAlgorithm::ThreeFry {
                "2"
            } else {
                "2 or 3"
            }
        ))
    }
}

impl OpDef for RngBitGenerator {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.encode_attrs()
    }

    fn infer(&self, _operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        Err("the output type of stablehlo.rng_bit_generator is given, not inferred".into())
    }

    fn inferable(&self) -> bool {
        false
    }

    fn check(&self, operands: &[TensorType], results: &[TensorType]) -> Result<(), String> {
        let (state, out_state, bits) = match (operands, results) {
            ([s], [o, b]) => (s, o, b),
            _ => return Err("expects one operand and two results".into()),
        };
        check_state(self.algorithm, state)?;
        if out_state != state {
            return Err(format!(
                "the output state must have the state's type {state}, not {out_state}"
            ));
        }
        if !bits.elem.is_integer() && !bits.elem.is_float() {
            return Err(format!("cannot generate bits of {}", bits.elem));
        }
        if bits.elem.bit_width() > 64 {
            return Err(format!("cannot generate bits of {}", bits.elem));
        }
        if bits.shape.iter().any(|&d| d < 0) {
            return Err(format!("the output {bits} must have a static shape"));
        }
        Ok(())
    }

    /// Shardy's: the state's dimension (of the input and the output state)
    /// needs replication and is blocked;
    /// each output dimension is a factor of its own that only the output
    /// has (the partitioner still computes the bits whole: see
    /// `partition::global::explicit_reshards::op_reshards`).
    fn rule(
        &self,
        shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
        for (d, &size) in shapes.operands[0].iter().enumerate() {
            let f = b.add_factor_per_tensor(
                size,
                FactorKind::NeedReplication,
                &[Some(d)],
                &[Some(d), None],
            );
            b.block(f);
        }
        for (d, &size) in shapes.results[1].iter().enumerate() {
            b.add_factor_per_tensor(size, FactorKind::PassThrough, &[None], &[None, Some(d)]);
        }
        b.build().map(Some).map_err(|e| e.to_string())
    }
}
