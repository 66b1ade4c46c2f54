//! Op definitions: each op kind defined once, in one file.
//!
//! A definition (MLIR's ODS, Cranelift's meta crate) says everything about
//! an op that is not a backend's business:
//! - its names, operand/result counts, scalar bodies and structural
//!   regions, and whether it is element-wise ([`OpSpec`]);
//! - its inherent attributes, as fields of a Rust struct declared with
//!   [`define_attrs!`], which derives their decoding from the generic
//!   form's attribute values and their encoding back ([`decode`]);
//! - its pretty form, if it has one, as a list of directives
//!   ([`format::Fmt`]) that the text parser *and* printer interpret;
//! - its result types and verifier checks ([`OpDef::infer`],
//!   [`OpDef::check`]);
//! - its sharding rule ([`OpDef::rule`], with `rules::RuleBuilder`).
//!
//! The list of op kinds is [`OpKind`] (one line per defined op, plus the
//! element-wise tables); the text parser and printer, inference, the
//! verifier and rule lookup dispatch through [`OpDef`] and the tables
//! instead of matching on op kinds. What stays per op elsewhere is what is per backend
//! or per pass: kernels (`meshrun-kernels`), and how the partitioner
//! computes the op on sharded operands (`partition`).
//!
//! The op set (SPEC §3): StableHLO ops JAX emits for tensor programs, calls of
//! private functions, and the `sdy` ops that carry sharding intent.
//!
//! Each op kind holds its attributes as plain data; operands and results live
//! on [`crate::ir::OpData`]. `name()` is the MLIR op name used by the text
//! format and in diagnostics.

pub mod bitcast_convert;
pub mod body;
pub mod broadcast_in_dim;
pub mod call;
pub mod case;
pub mod checks;
pub mod clamp;
pub mod collectives;
pub mod compare;
pub mod concatenate;
pub mod constant;
pub mod convert;
pub mod convolution;
pub mod custom_call;
pub mod decode;
pub mod def;
pub mod dot_general;
pub mod dynamic_slice;
pub mod dynamic_update_slice;
pub mod format;
pub mod gather;
pub mod index_dims;
pub mod iota;
pub mod manual_computation;
pub mod named_computation;
pub mod optimization_barrier;
pub mod pad;
pub mod propagation_barrier;
pub mod ragged_dot;
pub mod ragged_dot_steps;
pub mod reduce;
pub mod reduce_precision;
pub mod reduce_window;
pub mod replica_groups;
pub mod reshape;
pub mod reshard;
pub mod reverse;
pub mod rng_bit_generator;
pub mod runnable;
pub mod scatter;
pub mod sdy_all_reduce;
pub mod select;
pub mod select_and_scatter;
pub mod send_recv;
pub mod sharding_constraint;
pub mod sharding_group;
pub mod slice;
pub mod sort;
pub mod token;
pub mod top_k;
pub mod transpose;
pub mod while_loop;
pub mod window;

pub use decode::{AttrCodec, DecodeError, Decoder};
pub use def::*;
pub use format::{Fmt, SigForm};

use crate::ir::types::ElemClass;

pub use dot_general::DotDims;

macro_rules! name_enum {
    ($(#[$meta:meta])* $vis:vis enum $ty:ident { $($var:ident => $name:literal),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $ty { $($var),* }

        impl $ty {
            pub const ALL: &'static [$ty] = &[$($ty::$var),*];

            /// Every spelling, in declaration order (pretty forms list
            /// them in errors).
            pub const NAMES: &'static [&'static str] = &[$($name),*];

            /// The spelling in the text format.
            pub fn name(self) -> &'static str {
                match self { $($ty::$var => $name),* }
            }

            pub fn from_name(s: &str) -> Option<$ty> {
                match s { $($name => Some($ty::$var),)* _ => None }
            }
        }
    };
}

/// An element-wise op family: one row per op with its dialect, its name,
/// the element types it accepts (StableHLO's constraints) and its facts
/// (`+ zero_to_zero`: f(0) = 0, or f(0, 0) = 0) — the one place an
/// element-wise op is named. The text format, shape inference,
/// the verifier, Shardy's (element-wise) rule and the partitioner all
/// work from this table; kernels stay per backend.
macro_rules! elementwise_enum {
    ($(#[$meta:meta])* $vis:vis enum $ty:ident {
        $($var:ident => $dialect:ident . $name:literal : $class:ident $(+ $fact:ident)*),* $(,)?
    }) => {
        name_enum! { $(#[$meta])* $vis enum $ty { $($var => $name),* } }

        impl $ty {
            /// The element types the op accepts.
            pub fn class(self) -> ElemClass {
                match self { $($ty::$var => ElemClass::$class),* }
            }

            /// Whether zeros map to zero (f(0) = 0, or f(0, 0) = 0): the
            /// padding of a zero-padded operand stays zero through it.
            pub fn maps_zero_to_zero(self) -> bool {
                match self { $($ty::$var => false $(|| stringify!($fact) == "zero_to_zero")*),* }
            }

            /// Whether the op is CHLO's (`chlo.erf %x : t -> t`) rather
            /// than StableHLO's (`stablehlo.exponential %x : t`).
            pub fn is_chlo(self) -> bool {
                match self { $($ty::$var => stringify!($dialect) == "chlo"),* }
            }
        }
    };
}

elementwise_enum! {
    /// Element-wise ops with one operand.
    pub enum UnaryOp {
        Negate => stablehlo."negate": IntOrFloat + zero_to_zero,
        Exp => stablehlo."exponential": Float,
        Expm1 => stablehlo."exponential_minus_one": Float + zero_to_zero,
        Log => stablehlo."log": Float,
        Log1p => stablehlo."log_plus_one": Float + zero_to_zero,
        Tanh => stablehlo."tanh": Float + zero_to_zero,
        Sine => stablehlo."sine": Float + zero_to_zero,
        Cosine => stablehlo."cosine": Float,
        Tan => stablehlo."tan": Float + zero_to_zero,
        Logistic => stablehlo."logistic": Float,
        Sqrt => stablehlo."sqrt": Float + zero_to_zero,
        Rsqrt => stablehlo."rsqrt": Float,
        Cbrt => stablehlo."cbrt": Float + zero_to_zero,
        Abs => stablehlo."abs": SignedOrFloat + zero_to_zero,
        Sign => stablehlo."sign": SignedOrFloat + zero_to_zero,
        Floor => stablehlo."floor": Float + zero_to_zero,
        Ceil => stablehlo."ceil": Float + zero_to_zero,
        RoundNearestEven => stablehlo."round_nearest_even": Float + zero_to_zero,
        RoundNearestAfz => stablehlo."round_nearest_afz": Float + zero_to_zero,
        Not => stablehlo."not": BoolOrInt,
        IsFinite => stablehlo."is_finite": Float,
        Popcnt => stablehlo."popcnt": Int + zero_to_zero,
        CountLeadingZeros => stablehlo."count_leading_zeros": Int,
        // CHLO's element-wise ops that JAX leaves in lowered text.
        Square => chlo."square": IntOrFloat + zero_to_zero,
        Erf => chlo."erf": Float + zero_to_zero,
        Erfc => chlo."erfc": Float,
        ErfInv => chlo."erf_inv": Float,
        Lgamma => chlo."lgamma": Float,
        Digamma => chlo."digamma": Float,
        BesselI1e => chlo."bessel_i1e": Float + zero_to_zero,
        Acos => chlo."acos": Float,
        Acosh => chlo."acosh": Float,
        Asin => chlo."asin": Float + zero_to_zero,
        Asinh => chlo."asinh": Float + zero_to_zero,
        Atan => chlo."atan": Float + zero_to_zero,
        Atanh => chlo."atanh": Float + zero_to_zero,
        Cosh => chlo."cosh": Float,
        Sinh => chlo."sinh": Float + zero_to_zero,
    }
}

elementwise_enum! {
    /// Element-wise ops with two operands of the same type.
    pub enum BinaryOp {
        Add => stablehlo."add": Any + zero_to_zero,
        Subtract => stablehlo."subtract": IntOrFloat + zero_to_zero,
        Multiply => stablehlo."multiply": Any + zero_to_zero,
        Divide => stablehlo."divide": IntOrFloat,
        Remainder => stablehlo."remainder": IntOrFloat,
        Maximum => stablehlo."maximum": Any + zero_to_zero,
        Minimum => stablehlo."minimum": Any + zero_to_zero,
        Power => stablehlo."power": IntOrFloat,
        Atan2 => stablehlo."atan2": Float,
        And => stablehlo."and": BoolOrInt + zero_to_zero,
        Or => stablehlo."or": BoolOrInt + zero_to_zero,
        Xor => stablehlo."xor": BoolOrInt + zero_to_zero,
        ShiftLeft => stablehlo."shift_left": Int + zero_to_zero,
        ShiftRightLogical => stablehlo."shift_right_logical": Int + zero_to_zero,
        ShiftRightArithmetic => stablehlo."shift_right_arithmetic": Int + zero_to_zero,
        NextAfter => chlo."next_after": Float,
        Polygamma => chlo."polygamma": Float,
        Zeta => chlo."zeta": Float,
    }
}

impl UnaryOp {
    /// The full MLIR name: `stablehlo.sine`, `chlo.erf`.
    pub fn full_name(self) -> String {
        format!("{}.{}", dialect(self.is_chlo()), self.name())
    }

    /// The op called `name` (with its dialect prefix). XLA's propagated
    /// dumps print erf, the one CHLO op XLA keeps as an instruction, as
    /// `mhlo.erf`; it reads as `chlo.erf`.
    pub fn from_full_name(name: &str) -> Option<UnaryOp> {
        if name == "mhlo.erf" {
            return Some(UnaryOp::Erf);
        }
        let (d, short) = name.split_once('.')?;
        UnaryOp::from_name(short).filter(|u| d == dialect(u.is_chlo()))
    }
}

impl BinaryOp {
    /// The full MLIR name: `stablehlo.add`, `chlo.zeta`.
    pub fn full_name(self) -> String {
        format!("{}.{}", dialect(self.is_chlo()), self.name())
    }

    /// The op called `name` (with its dialect prefix).
    pub fn from_full_name(name: &str) -> Option<BinaryOp> {
        let (d, short) = name.split_once('.')?;
        BinaryOp::from_name(short).filter(|b| d == dialect(b.is_chlo()))
    }
}

fn dialect(chlo: bool) -> &'static str {
    if chlo {
        "chlo"
    } else {
        "stablehlo"
    }
}

name_enum! {
    /// `stablehlo.compare` directions.
    pub enum CompareDirection {
        Eq => "EQ",
        Ne => "NE",
        Lt => "LT",
        Le => "LE",
        Gt => "GT",
        Ge => "GE",
    }
}

name_enum! {
    /// `stablehlo.compare` comparison types (optional in the text).
    pub enum CompareType {
        Float => "FLOAT",
        TotalOrder => "TOTALORDER",
        Signed => "SIGNED",
        Unsigned => "UNSIGNED",
    }
}

name_enum! {
    /// A reduction with a known identity and a native collective: the fast
    /// path of a reduce whose body is one of these binary ops per input
    /// (`ir::ops::reduce::Reduce::kinds`), and the op of an all-reduce.
    pub enum ReduceKind {
        Add => "add",
        Multiply => "multiply",
        Maximum => "maximum",
        Minimum => "minimum",
        And => "and",
        Or => "or",
    }
}

impl ReduceKind {
    pub fn binary_op(self) -> BinaryOp {
        match self {
            ReduceKind::Add => BinaryOp::Add,
            ReduceKind::Multiply => BinaryOp::Multiply,
            ReduceKind::Maximum => BinaryOp::Maximum,
            ReduceKind::Minimum => BinaryOp::Minimum,
            ReduceKind::And => BinaryOp::And,
            ReduceKind::Or => BinaryOp::Or,
        }
    }

    pub fn from_binary_op(op: BinaryOp) -> Option<ReduceKind> {
        ReduceKind::ALL
            .iter()
            .copied()
            .find(|k| k.binary_op() == op)
    }
}

/// How a constant is spelled: `stablehlo.constant`, or `sdy.constant`,
/// which Shardy's import writes for every constant so that nothing folds
/// or deduplicates it while shardings propagate. Both run the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ConstantDialect {
    #[default]
    Stablehlo,
    Sdy,
}

/// Declares [`OpKind`] from the ops defined once in this module (one line
/// each: the variant and its definition) and the element-wise tables
/// ([`UnaryOp`], [`BinaryOp`]: one row per op), and derives the registry
/// that maps a name to a defined op's decoder.
macro_rules! op_kinds {
    (
        defined { $($(#[$dm:meta])* $dvar:ident($dty:ty)),* $(,)? }
        elementwise { $($(#[$em:meta])* $evar:ident($ety:ty)),* $(,)? }
    ) => {
        /// What an op computes, with its attributes.
        #[derive(Debug, Clone, PartialEq)]
        pub enum OpKind {
            $($(#[$dm])* $dvar($dty),)*
            $($(#[$em])* $evar($ety),)*
        }

        impl OpKind {
            /// The op's definition, for the kinds defined in `crate::ir::ops`.
            pub fn def(&self) -> Option<&dyn OpDef> {
                match self {
                    $(OpKind::$dvar(d) => Some(d),)*
                    _ => None,
                }
            }

            /// The op's definition, mutably.
            pub fn def_mut(&mut self) -> Option<&mut dyn OpDef> {
                match self {
                    $(OpKind::$dvar(d) => Some(d),)*
                    _ => None,
                }
            }
        }

        /// A defined op kind, found by name.
        pub struct DefinedOp {
            /// The spelling the name belongs to.
            pub spec: &'static OpSpec,
            /// How many structural regions it has.
            pub regions: Arity,
            pub decode: fn(&mut Decoder) -> Result<OpKind, DecodeError>,
        }

        /// The defined op called `name` (its printed name or an alias).
        pub fn defined_op(name: &str) -> Option<DefinedOp> {
            $(
                let spellings = std::iter::once(&<$dty as DecodeOp>::SPEC)
                    .chain(<$dty as DecodeOp>::SPELLINGS);
                for spec in spellings {
                    if spec.is_named(name) {
                        return Some(DefinedOp {
                            spec,
                            regions: <$dty as DecodeOp>::REGIONS,
                            decode: |d| <$dty as DecodeOp>::decode(d).map(OpKind::$dvar),
                        });
                    }
                }
            )*
            None
        }
    };
}

op_kinds! {
    defined {
        AfterAll(token::AfterAll),
        AllGather(collectives::AllGather),
        AllReduce(collectives::AllReduce),
        AllToAll(collectives::AllToAll),
        BitcastConvert(bitcast_convert::BitcastConvert),
        CreateToken(token::CreateToken),
        CustomCall(custom_call::CustomCall),
        Call(call::Call),
        OptimizationBarrier(optimization_barrier::OptimizationBarrier),
        PropagationBarrier(propagation_barrier::PropagationBarrier),
        SdyAllReduce(sdy_all_reduce::SdyAllReduce),
        ShardingConstraint(sharding_constraint::ShardingConstraint),
        Reshard(reshard::Reshard),
        ShardingGroup(sharding_group::ShardingGroup),
        Case(case::Case),
        CollectivePermute(collectives::CollectivePermute),
        Convolution(convolution::Convolution),
        DynamicSlice(dynamic_slice::DynamicSlice),
        DynamicUpdateSlice(dynamic_update_slice::DynamicUpdateSlice),
        Gather(gather::Gather),
        ManualComputation(manual_computation::ManualComputation),
        PartitionId(collectives::PartitionId),
        ReduceScatter(collectives::ReduceScatter),
        ReduceWindow(reduce_window::ReduceWindow),
        NamedComputation(named_computation::NamedComputation),
        RngBitGenerator(rng_bit_generator::RngBitGenerator),
        Scatter(scatter::Scatter),
        SelectAndScatter(select_and_scatter::SelectAndScatter),
        Send(send_recv::Send),
        Recv(send_recv::Recv),
        Reduce(reduce::Reduce),
        RaggedDot(ragged_dot::RaggedDot),
        ReducePrecision(reduce_precision::ReducePrecision),
        Select(select::Select),
        Clamp(clamp::Clamp),
        Compare(compare::Compare),
        Constant(constant::Constant),
        Reverse(reverse::Reverse),
        Slice(slice::Slice),
        Convert(convert::Convert),
        Reshape(reshape::Reshape),
        BroadcastInDim(broadcast_in_dim::BroadcastInDim),
        Iota(iota::Iota),
        Transpose(transpose::Transpose),
        Concatenate(concatenate::Concatenate),
        DotGeneral(dot_general::DotGeneral),
        Pad(pad::Pad),
        Sort(sort::Sort),
        TopK(top_k::TopK),
        While(while_loop::While),
    }
    elementwise {
        /// An element-wise op of one operand: a row of [`UnaryOp`].
        Unary(UnaryOp),
        /// An element-wise op of two operands: a row of [`BinaryOp`].
        Binary(BinaryOp),
    }
}

impl OpKind {
    /// The full MLIR op name, e.g. `stablehlo.dot_general`.
    pub fn name(&self) -> String {
        match self {
            OpKind::Unary(u) => u.full_name(),
            OpKind::Binary(b) => b.full_name(),
            other => other.static_name().into(),
        }
    }

    fn static_name(&self) -> &'static str {
        match self {
            OpKind::Unary(_) | OpKind::Binary(_) => "stablehlo.elementwise",
            defined => defined.def().map_or("unknown", |d| d.printed_name()),
        }
    }

    /// The function the op calls, if it is a call ([`OpDef::callee`]).
    pub fn callee(&self) -> Option<&str> {
        self.def().and_then(|d| d.callee())
    }

    /// The called function's name, mutably (passes that rename functions).
    pub fn callee_mut(&mut self) -> Option<&mut String> {
        self.def_mut().and_then(|d| d.callee_mut())
    }

    /// Whether the op maps operands whose padding is zero to results whose
    /// padding is zero, with no new padding (the partitioner then skips
    /// masking it).
    pub fn preserves_zero_padding(&self) -> bool {
        match self {
            OpKind::Unary(u) => u.maps_zero_to_zero(),
            OpKind::Binary(b) => b.maps_zero_to_zero(),
            other => other.def().is_some_and(|d| d.preserves_zero_padding()),
        }
    }

    /// True for ops whose every operand and result has the same shape and
    /// whose result element `i` depends only on operand elements `i`.
    pub fn is_elementwise(&self) -> bool {
        if let Some(d) = self.def() {
            return d.spec().elementwise;
        }
        matches!(self, OpKind::Unary(_) | OpKind::Binary(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_wise_rows_give_dialect_and_element_class() {
        assert_eq!(UnaryOp::Erf.full_name(), "chlo.erf");
        assert_eq!(UnaryOp::Exp.full_name(), "stablehlo.exponential");
        assert_eq!(BinaryOp::Zeta.full_name(), "chlo.zeta");
        assert_eq!(
            BinaryOp::from_full_name("stablehlo.remainder"),
            Some(BinaryOp::Remainder)
        );
        assert_eq!(BinaryOp::from_full_name("chlo.remainder"), None);
        assert_eq!(UnaryOp::ALL.iter().filter(|u| u.is_chlo()).count(), 15);
        assert_eq!(BinaryOp::Remainder.class(), ElemClass::IntOrFloat);
        assert_eq!(BinaryOp::ShiftLeft.class(), ElemClass::Int);
        assert_eq!(UnaryOp::Not.class(), ElemClass::BoolOrInt);
        assert!(!BinaryOp::Subtract.class().allows(crate::ir::ElemType::I1));
    }
}
