//! From attribute values to typed op fields and back.
//!
//! [`AttrCodec`] says how one field type is written as an attribute value
//! (`Vec<i64>` as `array<i64: ...>`, `bool` as `true`, an enum as
//! `#stablehlo<keyword VALUE>`, ...); [`define_attrs!`] declares an op's
//! attribute struct and derives its whole decoding and encoding from the
//! field list. Decoding accepts the spellings the generic form and the
//! pretty form use for the same value (`array<i64: 1, 2>` and `[1, 2]`,
//! `#stablehlo<rng_algorithm DEFAULT>` and `DEFAULT`).

use crate::ir::attr::Attr;
use crate::ir::literal::DenseLiteral;
use crate::ir::types::TensorType;
use crate::ir::Computation;
use crate::sharding::TensorSharding;

/// Why an op could not be built from its text: `attr` names the attribute
/// at fault (so the parser can point at it), `None` for the op as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    pub attr: Option<String>,
    pub message: String,
    /// Whether the value does not fit the op's types (a type error, not
    /// a syntax one: a constant's literal of another type than its result).
    pub type_mismatch: bool,
}

impl DecodeError {
    pub fn op(message: impl Into<String>) -> DecodeError {
        DecodeError {
            attr: None,
            message: message.into(),
            type_mismatch: false,
        }
    }

    pub fn attr(name: &str, message: impl Into<String>) -> DecodeError {
        DecodeError {
            attr: Some(name.to_string()),
            message: message.into(),
            type_mismatch: false,
        }
    }

    /// The attribute `name`'s value does not fit the op's types.
    pub fn attr_type(name: &str, message: impl Into<String>) -> DecodeError {
        DecodeError {
            type_mismatch: true,
            ..DecodeError::attr(name, message)
        }
    }
}

/// Everything the text said about one op, for its definition's `decode`.
pub struct Decoder {
    /// The op's name as the text wrote it (its printed name or an alias).
    pub name: String,
    /// Attributes not yet taken: name and value.
    attrs: Vec<(String, Attr)>,
    pub operand_types: Vec<TensorType>,
    pub result_types: Vec<TensorType>,
    computations: std::vec::IntoIter<Computation>,
    /// The name of the spelling the text used (the op's printed name
    /// unless it has several: [`crate::ir::ops::DecodeOp::SPELLINGS`]).
    pub spelling: &'static str,
}

impl Decoder {
    pub fn new(
        name: &str,
        spelling: &'static str,
        attrs: Vec<(String, Attr)>,
        operand_types: Vec<TensorType>,
        result_types: Vec<TensorType>,
        computations: Vec<Computation>,
    ) -> Decoder {
        Decoder {
            name: name.to_string(),
            attrs,
            operand_types,
            result_types,
            computations: computations.into_iter(),
            spelling,
        }
    }

    /// Remove and return the attribute `name`, if present.
    pub fn take(&mut self, name: &str) -> Option<Attr> {
        let i = self.attrs.iter().position(|(n, _)| n == name)?;
        Some(self.attrs.remove(i).1)
    }

    /// A required attribute.
    pub fn required<T: AttrCodec>(&mut self, name: &str) -> Result<T, DecodeError> {
        match self.take(name) {
            Some(a) => T::decode(&a).map_err(|m| DecodeError::attr(name, m)),
            None => T::absent().ok_or_else(|| DecodeError::op(format!("needs attribute '{name}'"))),
        }
    }

    /// An attribute with a default value when absent.
    pub fn or<T: AttrCodec>(&mut self, name: &str, default: T) -> Result<T, DecodeError> {
        match self.take(name) {
            Some(a) => T::decode(&a).map_err(|m| DecodeError::attr(name, m)),
            None => Ok(default),
        }
    }

    /// The next scalar body.
    pub fn computation(&mut self) -> Result<Computation, DecodeError> {
        self.computations
            .next()
            .ok_or_else(|| DecodeError::op("is missing a region"))
    }

    /// The names of the attributes nobody took (kept verbatim).
    pub fn remaining(&self) -> impl Iterator<Item = &str> {
        self.attrs.iter().map(|(n, _)| n.as_str())
    }
}

/// How a field type is written as an attribute value.
pub trait AttrCodec: Sized {
    fn decode(a: &Attr) -> Result<Self, String>;

    /// The attribute value, or `None` to leave the attribute out.
    fn encode(&self) -> Option<Attr>;

    /// The value when the attribute is absent (`None`: it is required).
    fn absent() -> Option<Self> {
        None
    }
}

fn expected(what: &str, a: &Attr) -> String {
    format!("expected {what}, found {}", a.kind_name())
}

/// `name<key = [..], ...>` (StableHLO's and CHLO's dimension numbers): a
/// dialect attribute whose parameters are the integer lists `keys`, each
/// optional (absent ones are empty).
pub fn decode_int_list_params<const N: usize>(
    a: &Attr,
    name: &str,
    keys: &[&str; N],
) -> Result<[Vec<i64>; N], String> {
    let Attr::Params { name: got, params } = a else {
        return Err(format!("expected {name}<...>, found {}", a.kind_name()));
    };
    if got != name {
        return Err(format!("expected {name}<...>, found {got}<...>"));
    }
    let mut out: [Vec<i64>; N] = std::array::from_fn(|_| Vec::new());
    for (key, value) in params {
        let i = keys
            .iter()
            .position(|k| k == key)
            .ok_or_else(|| format!("unknown field '{key}' in {name}<...>"))?;
        out[i] = Vec::<i64>::decode(value)?;
    }
    Ok(out)
}

/// The attribute [`decode_int_list_params`] reads, empty lists left out.
pub fn encode_int_list_params(name: &str, keys: &[&str], fields: &[&Vec<i64>]) -> Attr {
    let params = keys
        .iter()
        .zip(fields)
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| (k.to_string(), Attr::int_list(v)))
        .collect();
    Attr::Params {
        name: name.into(),
        params,
    }
}

impl AttrCodec for i64 {
    fn decode(a: &Attr) -> Result<Self, String> {
        match a {
            Attr::Int { value, .. } => Ok(*value),
            _ => Err(expected("an integer", a)),
        }
    }

    fn encode(&self) -> Option<Attr> {
        Some(Attr::i64(*self))
    }
}

/// `8 : i32`: StableHLO's 32-bit integer attributes (reduce_precision's
/// bit counts); a value outside i32 is refused.
impl AttrCodec for i32 {
    fn decode(a: &Attr) -> Result<Self, String> {
        match a {
            Attr::Int { value, .. } => {
                i32::try_from(*value).map_err(|_| format!("{value} does not fit in i32"))
            }
            _ => Err(expected("an integer", a)),
        }
    }

    fn encode(&self) -> Option<Attr> {
        Some(Attr::Int {
            value: i64::from(*self),
            ty: Some("i32".into()),
        })
    }
}

impl AttrCodec for bool {
    fn decode(a: &Attr) -> Result<Self, String> {
        match a {
            Attr::Bool(b) => Ok(*b),
            Attr::Unit => Ok(true),
            _ => Err(expected("true or false", a)),
        }
    }

    fn encode(&self) -> Option<Attr> {
        Some(Attr::Bool(*self))
    }

    fn absent() -> Option<Self> {
        Some(false)
    }
}

impl AttrCodec for String {
    fn decode(a: &Attr) -> Result<Self, String> {
        match a {
            Attr::Str(s) => Ok(s.clone()),
            _ => Err(expected("a string", a)),
        }
    }

    fn encode(&self) -> Option<Attr> {
        Some(Attr::Str(self.clone()))
    }
}

/// Integer lists: `array<i64: 1, 2>` (how StableHLO's properties write
/// them), `[1, 2]` (pretty forms, dialect attributes) or a rank-1
/// `dense<...>`.
impl AttrCodec for Vec<i64> {
    fn decode(a: &Attr) -> Result<Self, String> {
        match a {
            Attr::DenseArray { values, .. } => Ok(values.clone()),
            Attr::List(items) => items.iter().map(i64::decode).collect(),
            Attr::Dense { literal, ty } if ty.rank() == 1 => dense_ints(literal, ty),
            _ => Err(expected("an integer array", a)),
        }
    }

    fn encode(&self) -> Option<Attr> {
        Some(Attr::dense_i64(self))
    }
}

/// Boolean lists: `array<i1: true, false>`.
impl AttrCodec for Vec<bool> {
    fn decode(a: &Attr) -> Result<Self, String> {
        match a {
            Attr::DenseArray { values, .. } => Ok(values.iter().map(|v| *v != 0).collect()),
            Attr::List(items) => items.iter().map(bool::decode).collect(),
            _ => Err(expected("a boolean array", a)),
        }
    }

    fn encode(&self) -> Option<Attr> {
        Some(Attr::DenseArray {
            elem: "i1".into(),
            values: self.iter().map(|b| *b as i64).collect(),
        })
    }
}

/// An optional attribute: left out when `None`.
impl<T: AttrCodec> AttrCodec for Option<T> {
    fn decode(a: &Attr) -> Result<Self, String> {
        T::decode(a).map(Some)
    }

    fn encode(&self) -> Option<Attr> {
        self.as_ref().and_then(T::encode)
    }

    fn absent() -> Option<Self> {
        Some(None)
    }
}

/// One sharding: `#sdy.sharding<@mesh, [...]>` (a pretty form writes it
/// bare, `<@mesh, [...]>`; the parser reads both into the same value).
impl AttrCodec for TensorSharding {
    fn decode(a: &Attr) -> Result<Self, String> {
        match a {
            Attr::Sharding(s) => Ok(s.clone()),
            _ => Err(expected("#sdy.sharding<...>", a)),
        }
    }

    fn encode(&self) -> Option<Attr> {
        Some(Attr::Sharding(self.clone()))
    }
}

/// Rows of a rank-2 integer `dense<[[..], ..]> : tensor<RxCxi64>` (padding
/// pairs, replica groups, source-target pairs).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct I64Rows {
    pub rows: Vec<Vec<i64>>,
    /// Row length (kept for an empty matrix, e.g. `tensor<0x2xi64>`).
    pub width: usize,
}

impl AttrCodec for I64Rows {
    fn decode(a: &Attr) -> Result<Self, String> {
        match a {
            Attr::Dense { literal, ty } if ty.rank() == 2 => {
                let flat = dense_ints(literal, ty)?;
                let width = usize::try_from(ty.shape[1]).map_err(|_| "bad shape".to_string())?;
                let rows = if width == 0 {
                    vec![Vec::new(); usize::try_from(ty.shape[0]).unwrap_or(0).min(1 << 20)]
                } else {
                    flat.chunks(width).map(|c| c.to_vec()).collect()
                };
                Ok(I64Rows { rows, width })
            }
            Attr::List(rows) => {
                let rows: Vec<Vec<i64>> = rows
                    .iter()
                    .map(Vec::<i64>::decode)
                    .collect::<Result<_, _>>()?;
                let width = rows.first().map_or(0, |r| r.len());
                if rows.iter().any(|r| r.len() != width) {
                    return Err("rows of different lengths".into());
                }
                Ok(I64Rows { rows, width })
            }
            _ => Err(expected("a rank-2 integer dense<...> attribute", a)),
        }
    }

    fn encode(&self) -> Option<Attr> {
        let shape = vec![self.rows.len() as i64, self.width as i64];
        let values = self
            .rows
            .iter()
            .flatten()
            .map(|&v| crate::ir::literal::Scalar::Int(v))
            .collect();
        Some(Attr::Dense {
            literal: DenseLiteral::Elements(values),
            ty: TensorType::new(shape, crate::ir::types::ElemType::I64),
        })
    }
}

/// The integers of a dense literal of `ty` (a bounded size: attributes are
/// small; a huge splat is rejected rather than expanded).
fn dense_ints(literal: &DenseLiteral, ty: &TensorType) -> Result<Vec<i64>, String> {
    if !ty.elem.is_integer() {
        return Err(format!("expected integers, found {ty}"));
    }
    let n = ty
        .shape
        .iter()
        .try_fold(1i64, |acc, &d| acc.checked_mul(d))
        .filter(|n| (0..=1 << 20).contains(n))
        .ok_or_else(|| format!("{ty} is too large for an attribute"))?;
    match literal {
        DenseLiteral::Elements(v) if v.len() as i64 == n => {
            Ok(v.iter().map(|s| s.as_i64()).collect())
        }
        DenseLiteral::Elements(v) => Err(format!("{} values for {ty}", v.len())),
        DenseLiteral::Splat(s) => Ok(vec![s.as_i64(); n as usize]),
    }
}

/// Declares an enum written `#<dialect><keyword VALUE>` in the generic form
/// and `VALUE` in pretty forms, with its [`AttrCodec`].
#[macro_export]
macro_rules! attr_enum {
    ($(#[$m:meta])* $vis:vis enum $ty:ident = $dialect:literal $keyword:literal {
        $($var:ident => $name:literal),* $(,)?
    }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $ty { $($var),* }

        impl $ty {
            pub const ALL: &'static [$ty] = &[$($ty::$var),*];

            pub fn name(self) -> &'static str {
                match self { $($ty::$var => $name),* }
            }

            pub fn from_name(s: &str) -> Option<$ty> {
                match s { $($name => Some($ty::$var),)* _ => None }
            }
        }

        impl $crate::ir::ops::AttrCodec for $ty {
            fn decode(a: &$crate::ir::attr::Attr) -> Result<Self, String> {
                let v = match a {
                    $crate::ir::attr::Attr::Enum { value, .. } => value.as_str(),
                    $crate::ir::attr::Attr::Ident(v) => v.as_str(),
                    other => return Err(format!(
                        "expected {}<{} ...>, found {}", $dialect, $keyword, other.kind_name()
                    )),
                };
                $ty::from_name(v).ok_or_else(|| {
                    let all: Vec<&str> = $ty::ALL.iter().map(|x| x.name()).collect();
                    format!("unknown {} '{v}' (expected one of {})", $keyword, all.join(", "))
                })
            }

            fn encode(&self) -> Option<$crate::ir::attr::Attr> {
                Some($crate::ir::attr::Attr::Enum {
                    dialect: $dialect.into(),
                    keyword: $keyword.into(),
                    value: self.name().into(),
                })
            }
        }
    };
}

/// Declares an op's attribute struct and derives, from its field list,
/// `decode_attrs` (every field from the attribute of the given name, with
/// [`AttrCodec`]; `= default` makes it optional) and `encode_attrs` (the
/// attributes back, in field order).
///
/// ```ignore
/// define_attrs! {
///     /// `stablehlo.sort`
///     pub struct SortAttrs {
///         dimension: i64 = "dimension",
///         is_stable: bool = "is_stable",
///     }
/// }
/// ```
#[macro_export]
macro_rules! define_attrs {
    ($(#[$m:meta])* pub struct $name:ident {
        $($(#[$fm:meta])* $field:ident : $ty:ty = $key:literal $(default $def:expr)?),* $(,)?
    }) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name { $($(#[$fm])* pub $field: $ty),* }

        impl $name {
            /// The attribute names, in printing order.
            pub const ATTR_NAMES: &'static [&'static str] = &[$($key),*];

            /// Every field from its attribute.
            pub fn decode_attrs(
                d: &mut $crate::ir::ops::Decoder,
            ) -> Result<Self, $crate::ir::ops::DecodeError> {
                Ok($name {
                    $($field: $crate::define_attrs!(@field d, $key, $ty $(, $def)?),)*
                })
            }

            /// The attributes of every field, in declaration order.
            pub fn encode_attrs(&self) -> Vec<(&'static str, $crate::ir::attr::Attr)> {
                let mut out = Vec::new();
                $(
                    if let Some(a) = $crate::ir::ops::AttrCodec::encode(&self.$field) {
                        out.push(($key, a));
                    }
                )*
                out
            }
        }
    };
    (@field $d:ident, $key:literal, $ty:ty) => { $d.required::<$ty>($key)? };
    (@field $d:ident, $key:literal, $ty:ty, $def:expr) => { $d.or::<$ty>($key, $def)? };
}
