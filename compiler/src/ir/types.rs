//! Element and tensor types (`tensor<16x128xf32>`), static shapes only.

use std::fmt;

/// Element types meshrun understands. The names are MLIR's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElemType {
    F64,
    F32,
    F16,
    BF16,
    I1,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    /// `!stablehlo.token`: orders side effects and holds no data. A token
    /// is a rank-0 value of this element type; it is in no element class,
    /// so no arithmetic op takes it, and it is not in [`ElemType::ALL`].
    Token,
}

impl ElemType {
    pub const ALL: [ElemType; 13] = [
        ElemType::F64,
        ElemType::F32,
        ElemType::F16,
        ElemType::BF16,
        ElemType::I1,
        ElemType::I8,
        ElemType::I16,
        ElemType::I32,
        ElemType::I64,
        ElemType::U8,
        ElemType::U16,
        ElemType::U32,
        ElemType::U64,
    ];

    /// The MLIR spelling: `f32`, `bf16`, `i1`, `ui32`, ...
    pub fn name(self) -> &'static str {
        match self {
            ElemType::F64 => "f64",
            ElemType::F32 => "f32",
            ElemType::F16 => "f16",
            ElemType::BF16 => "bf16",
            ElemType::I1 => "i1",
            ElemType::I8 => "i8",
            ElemType::I16 => "i16",
            ElemType::I32 => "i32",
            ElemType::I64 => "i64",
            ElemType::U8 => "ui8",
            ElemType::U16 => "ui16",
            ElemType::U32 => "ui32",
            ElemType::U64 => "ui64",
            ElemType::Token => "token",
        }
    }

    pub fn from_name(s: &str) -> Option<ElemType> {
        ElemType::ALL.iter().copied().find(|t| t.name() == s)
    }

    /// Storage size of one element in bytes (i1 is stored as one byte).
    pub fn byte_size(self) -> usize {
        match self {
            ElemType::F64 | ElemType::I64 | ElemType::U64 => 8,
            ElemType::F32 | ElemType::I32 | ElemType::U32 => 4,
            ElemType::F16 | ElemType::BF16 | ElemType::I16 | ElemType::U16 => 2,
            ElemType::I1 | ElemType::I8 | ElemType::U8 => 1,
            ElemType::Token => 0,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(
            self,
            ElemType::F64 | ElemType::F32 | ElemType::F16 | ElemType::BF16
        )
    }

    pub fn is_bool(self) -> bool {
        self == ElemType::I1
    }

    pub fn is_integer(self) -> bool {
        !self.is_float() && !self.is_bool() && !self.is_token()
    }

    pub fn is_token(self) -> bool {
        self == ElemType::Token
    }

    pub fn is_unsigned(self) -> bool {
        matches!(
            self,
            ElemType::U8 | ElemType::U16 | ElemType::U32 | ElemType::U64
        )
    }

    /// Width of one element in bits (1 for i1).
    pub fn bit_width(self) -> u32 {
        if self.is_bool() {
            1
        } else {
            self.byte_size() as u32 * 8
        }
    }
}

impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A ranked tensor type with a static shape: `tensor<4x8xf32>`, `tensor<f32>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TensorType {
    pub shape: Vec<i64>,
    pub elem: ElemType,
}

impl TensorType {
    pub fn new(shape: impl Into<Vec<i64>>, elem: ElemType) -> Self {
        TensorType {
            shape: shape.into(),
            elem,
        }
    }

    pub fn scalar(elem: ElemType) -> Self {
        TensorType {
            shape: Vec::new(),
            elem,
        }
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    pub fn num_elements(&self) -> i64 {
        self.shape.iter().product()
    }

    pub fn byte_size(&self) -> i64 {
        self.num_elements() * self.elem.byte_size() as i64
    }

    /// The number of elements, `None` when it overflows `i64`.
    pub fn checked_num_elements(&self) -> Option<i64> {
        self.shape.iter().try_fold(1i64, |n, &d| n.checked_mul(d))
    }

    /// The size in bytes, `None` when it overflows `i64` (no allocation
    /// could hold such a tensor; the parser rejects its type).
    pub fn checked_byte_size(&self) -> Option<i64> {
        self.checked_num_elements()?
            .checked_mul(self.elem.byte_size() as i64)
    }

    pub fn with_shape(&self, shape: impl Into<Vec<i64>>) -> TensorType {
        TensorType::new(shape, self.elem)
    }

    pub fn with_elem(&self, elem: ElemType) -> TensorType {
        TensorType::new(self.shape.clone(), elem)
    }
}

impl TensorType {
    /// `!stablehlo.token`.
    pub fn token() -> TensorType {
        TensorType::scalar(ElemType::Token)
    }

    pub fn is_token(&self) -> bool {
        self.elem.is_token()
    }
}

impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_token() {
            return f.write_str("!stablehlo.token");
        }
        f.write_str("tensor<")?;
        for d in &self.shape {
            write!(f, "{d}x")?;
        }
        write!(f, "{}>", self.elem)
    }
}

/// Which element types an op accepts (StableHLO's operand constraints;
/// meshrun has no complex or quantized types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElemClass {
    /// f16, bf16, f32, f64.
    Float,
    /// Signed integers and floats (`abs`, `sign`).
    SignedOrFloat,
    /// Any integer and floats, but not i1 (`subtract`, `negate`, ...).
    IntOrFloat,
    /// i1 and integers (`and`, `or`, `xor`, `not`).
    BoolOrInt,
    /// Integers, not i1 (shifts, `popcnt`, `count_leading_zeros`).
    Int,
    /// Every element type (`add` on i1 is a logical or).
    Any,
}

impl ElemClass {
    pub fn allows(self, e: ElemType) -> bool {
        match self {
            ElemClass::Float => e.is_float(),
            ElemClass::SignedOrFloat => e.is_float() || (e.is_integer() && !e.is_unsigned()),
            ElemClass::IntOrFloat => e.is_float() || e.is_integer(),
            ElemClass::BoolOrInt => e.is_bool() || e.is_integer(),
            ElemClass::Int => e.is_integer(),
            ElemClass::Any => !e.is_token(),
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            ElemClass::Float => "floating-point",
            ElemClass::SignedOrFloat => "signed integer or floating-point",
            ElemClass::IntOrFloat => "integer or floating-point",
            ElemClass::BoolOrInt => "boolean (i1) or integer",
            ElemClass::Int => "integer",
            ElemClass::Any => "any",
        }
    }

    /// `Err` naming `what` (e.g. "operand") unless `ty`'s element type is
    /// in this class.
    pub fn check(self, ty: &TensorType, what: &str) -> Result<(), String> {
        if self.allows(ty.elem) {
            Ok(())
        } else {
            Err(format!(
                "{what} must have {} elements, got {ty}",
                self.describe()
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_and_names() {
        assert_eq!(
            TensorType::new(vec![16, 128], ElemType::F32).to_string(),
            "tensor<16x128xf32>"
        );
        assert_eq!(
            TensorType::scalar(ElemType::BF16).to_string(),
            "tensor<bf16>"
        );
        for t in ElemType::ALL {
            assert_eq!(ElemType::from_name(t.name()), Some(t));
        }
        assert_eq!(ElemType::from_name("f8"), None);
    }
}
