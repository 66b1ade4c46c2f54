//! The machinery every op definition implements: [`OpSpec`] (an op kind's
//! static facts), [`OpDef`] (its checks, inference and sharding rule) and
//! [`DecodeOp`] (building it from what the text said).

use std::fmt;

use super::decode::{DecodeError, Decoder};
use super::format::Fmt;

use crate::ir::attr::Attr;
use crate::ir::types::TensorType;
use crate::ir::Computation;
use crate::rules::rule::{OpShardingRule, RuleOptions};

/// How many operands (or results) an op takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arity {
    Exactly(usize),
    AtLeast(usize),
}

impl Arity {
    pub fn allows(self, n: usize) -> bool {
        match self {
            Arity::Exactly(k) => n == k,
            Arity::AtLeast(k) => n >= k,
        }
    }
}

impl fmt::Display for Arity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arity::Exactly(k) => write!(f, "{k}"),
            Arity::AtLeast(k) => write!(f, "at least {k}"),
        }
    }
}

/// The static facts of an op kind.
#[derive(Debug)]
pub struct OpSpec {
    /// The name the printer writes, e.g. `stablehlo.dynamic_slice`.
    pub name: &'static str,
    /// Other names the parser accepts for the same op.
    pub aliases: &'static [&'static str],
    pub operands: Arity,
    pub results: Arity,
    /// Scalar bodies (a sort comparator, a scatter's update): regions that
    /// only compute on their block arguments, stored in the op's attributes
    /// as [`Computation`]s.
    pub computations: usize,
    /// Whether result element `i` depends only on operand elements `i`
    /// (every operand and result has the same shape).
    pub elementwise: bool,
    /// The pretty form (`None`: the op is always printed in the generic
    /// form `"name"(%a) <{...}> : (...) -> ...`).
    pub pretty: Option<&'static [Fmt]>,
}

impl OpSpec {
    /// The common case: one operand, one result, no aliases, no scalar
    /// bodies, not element-wise, no pretty form. A definition states what
    /// differs and takes the rest from here (`..OpSpec::new(name)`).
    pub const fn new(name: &'static str) -> OpSpec {
        OpSpec {
            name,
            aliases: &[],
            operands: Arity::Exactly(1),
            results: Arity::Exactly(1),
            computations: 0,
            elementwise: false,
            pretty: None,
        }
    }

    /// Whether `name` names this op.
    pub fn is_named(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }
}

/// The types of a structural region's block arguments and of what it
/// returns, for the verifier.
#[derive(Debug, Clone, PartialEq)]
pub struct RegionTypes {
    pub args: Vec<TensorType>,
    pub returns: Vec<TensorType>,
}

/// Shapes of an op's operands and results, for its sharding rule.
pub struct RuleShapes<'a> {
    pub operands: &'a [&'a [i64]],
    pub results: &'a [&'a [i64]],
    /// Whether each operand is defined by a constant op (Shardy's rule for
    /// `dynamic_update_slice` depends on it); empty when unknown.
    pub constant_operands: &'a [bool],
}

impl RuleShapes<'_> {
    /// `Err` unless the op has `operands` operands and `results` results.
    pub fn expect_counts(&self, operands: usize, results: usize) -> Result<(), String> {
        let (got_ops, got_res) = (self.operands.len(), self.results.len());
        if got_ops != operands || got_res != results {
            return Err(format!(
                "expected {operands} operand(s) and {results} result(s), got {got_ops} and {got_res}"
            ));
        }
        Ok(())
    }

    /// The shape of the op's one result.
    pub fn single_result(&self) -> Result<&[i64], String> {
        match self.results {
            [r] => Ok(r),
            other => Err(format!("expected 1 result, got {}", other.len())),
        }
    }

    /// `Err` unless every operand has `shape` (or is a scalar, where
    /// `allow_scalars`: select's predicate, clamp's bounds).
    pub fn expect_operands_of_shape(
        &self,
        shape: &[i64],
        allow_scalars: bool,
    ) -> Result<(), String> {
        for (k, s) in self.operands.iter().enumerate() {
            if *s != shape && !(allow_scalars && s.is_empty()) {
                return Err(format!(
                    "operand {k} has shape {s:?} but the op works on shape {shape:?}"
                ));
            }
        }
        Ok(())
    }
}

/// An op kind's static facts, derived for every type that decodes as one
/// ([`DecodeOp::SPEC`]), so that no definition repeats them; a supertrait
/// of [`OpDef`], so `&dyn OpDef` reaches it.
pub trait HasSpec {
    fn spec(&self) -> &'static OpSpec;
}

impl<T: DecodeOp> HasSpec for T {
    fn spec(&self) -> &'static OpSpec {
        self.spelling()
    }
}

/// What an op kind is. Implemented once per op kind, in `ir/ops/<op>.rs`.
pub trait OpDef: HasSpec + fmt::Debug {
    /// The name the printer writes: the spec's, unless the op's fields
    /// choose one of its aliases (`sdy.constant`).
    fn printed_name(&self) -> &'static str {
        self.spec().name
    }

    /// The dense literal the op holds, for [`Fmt::TypedLiteral`] (its
    /// type is the op's result type, which the definition does not hold).
    fn literal(&self) -> Option<&crate::ir::literal::DenseLiteral> {
        None
    }

    /// The function of the module the op calls, if it is a call: the
    /// verifier checks the op against that function's signature, the
    /// parser checks that it exists, and passes that inline or rename
    /// functions follow it.
    fn callee(&self) -> Option<&str> {
        None
    }

    /// The called function's name, mutably (passes that rename functions).
    fn callee_mut(&mut self) -> Option<&mut String> {
        None
    }

    /// The inherent attributes, in the order the generic form prints them
    /// (`encode_attrs`, derived by [`define_attrs!`]); none by default.
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        Vec::new()
    }

    /// The scalar bodies, in region order.
    fn computations(&self) -> Vec<&Computation> {
        Vec::new()
    }

    /// The scalar bodies, mutably, in the same order as
    /// [`OpDef::computations`] (passes that rewrite types reach them here).
    fn computations_mut(&mut self) -> Vec<&mut Computation> {
        Vec::new()
    }

    /// The scalar bodies the verifier checks as functions of their own
    /// before the op's checks, each with the name its errors use ("in its
    /// comparator at ..."). Bodies left out are checked by the op alone (a
    /// collective's reduction body may hold a manual computation's sharding
    /// constraint, which means nothing outside it).
    fn bodies_checked_as_functions(&self) -> Vec<(&'static str, &Computation)> {
        Vec::new()
    }

    /// The result types of the op on operands of these types, or why the
    /// operands are not valid for it. Ops whose result types the program
    /// states (e.g. `bitcast_convert`) return an error that says so and
    /// implement [`OpDef::check`] instead.
    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String>;

    /// Whether [`OpDef::infer`] determines the result types (false for
    /// ops whose result types the program states).
    fn inferable(&self) -> bool {
        true
    }

    /// Check given result types (the verifier). By default the operands'
    /// shapes must be static and the results must be what
    /// [`OpDef::infer`] gives.
    fn check(&self, operands: &[TensorType], results: &[TensorType]) -> Result<(), String> {
        super::checks::check_inferred(operands, results, |o| self.infer(o))
    }

    /// The terminator of the op's structural regions.
    fn terminator(&self) -> &'static str {
        "stablehlo.return"
    }

    /// Whether the op has structural regions (`while`, `case`): then the
    /// verifier calls [`OpDef::check_with_regions`].
    fn takes_regions(&self) -> bool {
        false
    }

    /// The verifier's check of an op with structural regions: operand,
    /// result and region types together. Ops without regions refuse any.
    fn check_with_regions(
        &self,
        operands: &[TensorType],
        results: &[TensorType],
        regions: &[RegionTypes],
    ) -> Result<(), String> {
        if !regions.is_empty() {
            return Err("cannot have regions".into());
        }
        self.check(operands, results)
    }

    /// Whether operands whose padding is zero give results whose padding
    /// is zero, with no new padding (a layout change, a sum).
    fn preserves_zero_padding(&self) -> bool {
        false
    }

    /// Whether every backend runs it as the identity on its operands (its
    /// results are its operands): barriers, which only constrain the
    /// compiler, and the custom calls meshrun runs.
    fn runs_as_identity(&self) -> bool {
        false
    }

    /// Resolve what the op says by reference to the module's meshes (a
    /// collective's replica groups written as mesh axes); the parser calls
    /// it once the module is read, builders once their meshes exist.
    fn bind_meshes(&mut self, _meshes: &[crate::sharding::MeshDef]) -> Result<(), String> {
        Ok(())
    }

    /// The module meshes the op names outside its shardings (a
    /// collective's mesh-axes replica groups), for passes that rename or
    /// merge meshes.
    fn mesh_symbols_mut(&mut self) -> Vec<&mut String> {
        Vec::new()
    }

    /// The sharding the op gives its value as an attribute of its own (a
    /// sharding constraint's, a reshard's): the sharding of its result for
    /// `Function::sharding_of`, checked by the verifier, as an
    /// `sdy.sharding` is, against the module's meshes and the value's type.
    fn value_sharding(&self) -> Option<&crate::sharding::TensorSharding> {
        None
    }

    /// The checks that need the module's meshes (a collective's device
    /// groups, a manual computation's local types).
    fn check_in_module(
        &self,
        _meshes: &[crate::sharding::MeshDef],
        _operands: &[TensorType],
        _results: &[TensorType],
        _regions: &[RegionTypes],
    ) -> Result<(), String> {
        Ok(())
    }

    /// Shardy's sharding rule for the op (`None`: the op has none and
    /// propagation does not pass through it).
    fn rule(
        &self,
        shapes: &RuleShapes,
        options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String>;
}

/// Building an op kind from what the text said. Each definition implements
/// this; `ir::ops::OpKind`'s registry calls it by name.
pub trait DecodeOp: OpDef + Sized {
    const SPEC: OpSpec;

    /// How many structural regions the op has (`while`: 2, `case`: at
    /// least 1); they are parsed into [`crate::ir::Region`]s on the op.
    const REGIONS: Arity = Arity::Exactly(0);

    /// Other spellings of the same op kind, each with its own name and
    /// pretty form (`stablehlo.dot`: `dot_general` without dimension
    /// numbers). The parser finds an op by any of them and tells `decode`
    /// which one the text used ([`Decoder::spelling`]).
    const SPELLINGS: &'static [OpSpec] = &[];

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError>;

    /// The spelling this op is printed as: [`DecodeOp::SPEC`] or one of
    /// [`DecodeOp::SPELLINGS`].
    fn spelling(&self) -> &'static OpSpec {
        &Self::SPEC
    }
}
