//! Attribute values as the generic op form writes them, as a tree.
//!
//! The text parser reads an op's inherent attributes (`slice_sizes =
//! array<i64: 1, 64>`, `dimension_numbers = #stablehlo.gather<...>`,
//! `dimension = 1 : i64`, ...) into [`Attr`]s without knowing the op; the
//! op's definition (`crate::ir::ops`) then decodes them into typed fields, and
//! encodes its fields back into [`Attr`]s for the printer (`text::print_attr`).
//! So the syntax of attribute values lives in `text`, their meaning in `ops`.

use crate::ir::literal::DenseLiteral;
use crate::ir::types::TensorType;
use crate::sharding::TensorSharding;

/// One attribute value.
#[derive(Debug, Clone, PartialEq)]
pub enum Attr {
    /// `3`, `-1 : i64`, `2 : i32` (the type suffix, if any, is kept).
    Int { value: i64, ty: Option<String> },
    /// `true` / `false`.
    Bool(bool),
    /// `"text"` (unescaped).
    Str(String),
    /// `@name`.
    Symbol(String),
    /// `[a, b, ...]`.
    List(Vec<Attr>),
    /// `array<i64: 1, 2>`, `array<i1: true, false>` (booleans as 0/1).
    DenseArray { elem: String, values: Vec<i64> },
    /// `dense<...> : tensor<...>`.
    Dense {
        literal: DenseLiteral,
        ty: TensorType,
    },
    /// `{a = v, b}` (a unit entry has value `Attr::Unit`).
    Dict(Vec<(String, Attr)>),
    /// `#dialect.name<key = value, ...>`, e.g. `#stablehlo.gather<...>`.
    Params {
        name: String,
        params: Vec<(String, Attr)>,
    },
    /// `#dialect<keyword VALUE>`, e.g. `#stablehlo<comparison_direction GT>`.
    Enum {
        dialect: String,
        keyword: String,
        value: String,
    },
    /// `#sdy.sharding_per_value<[<@mesh, [...]>, ...]>` (pretty forms write
    /// the bare list `[<@mesh, [...]>, ...]`).
    Shardings(Vec<TensorSharding>),
    /// `#sdy<manual_axes{"x", "y"}>` (pretty forms write `{"x", "y"}`).
    ManualAxes(Vec<String>),
    /// `#sdy.sharding<@mesh, [...]>` (pretty forms write `<@mesh, [...]>`).
    Sharding(TensorSharding),
    /// `#sdy<axis_ref_list{"x", "y":(1)2}>`: mesh axes and sub-axes
    /// (pretty forms write `{"x", "y":(1)2}`).
    AxisRefs(Vec<crate::sharding::AxisRef>),
    /// A bare identifier (`DEFAULT`, as pretty forms write enum values).
    Ident(String),
    /// A unit attribute (a dictionary entry without `= value`).
    Unit,
    /// Anything else, as written.
    Opaque(String),
}

impl Attr {
    /// An integer with MLIR's usual `: i64` suffix.
    pub fn i64(value: i64) -> Attr {
        Attr::Int {
            value,
            ty: Some("i64".into()),
        }
    }

    /// `array<i64: ...>`.
    pub fn dense_i64(values: &[i64]) -> Attr {
        Attr::DenseArray {
            elem: "i64".into(),
            values: values.to_vec(),
        }
    }

    /// `[1, 2]` (plain integers, as inside `#stablehlo.gather<...>`).
    pub fn int_list(values: &[i64]) -> Attr {
        Attr::List(
            values
                .iter()
                .map(|&value| Attr::Int { value, ty: None })
                .collect(),
        )
    }

    /// A short description of the kind of value, for error messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Attr::Int { .. } => "an integer",
            Attr::Bool(_) => "a boolean",
            Attr::Str(_) => "a string",
            Attr::Symbol(_) => "a symbol",
            Attr::List(_) => "a list",
            Attr::DenseArray { .. } => "an array<...>",
            Attr::Dense { .. } => "a dense<...> literal",
            Attr::Dict(_) => "a dictionary",
            Attr::Params { .. } => "a #dialect.attr<...>",
            Attr::Enum { .. } => "a #dialect<enum>",
            Attr::Shardings(_) => "a #sdy.sharding_per_value<...>",
            Attr::ManualAxes(_) => "a #sdy<manual_axes{...}>",
            Attr::Sharding(_) => "a #sdy.sharding<...>",
            Attr::AxisRefs(_) => "a #sdy<axis_ref_list{...}>",
            Attr::Ident(_) => "a keyword",
            Attr::Unit => "a unit attribute",
            Attr::Opaque(_) => "an unrecognized attribute",
        }
    }
}
