//! `HostTensor`: a dense tensor in host memory, one `ndarray` array per
//! supported element type.
//!
//! Kernels are written once, generically over [`HostElem`], and reached from
//! a `HostTensor` through [`with_array!`](crate::with_array), which matches
//! the variant and names its element type. Arrays may have any layout
//! (kernels handle strides); kernels return standard (row-major) layout.

use half::{bf16, f16};
use meshrun_compiler::ir::{DenseLiteral, ElemType, Scalar, TensorType};
use ndarray::{ArrayD, IxDyn};

use crate::error::{KernelError, Result};

/// A host tensor. `Pred` holds `i1` (booleans); `U8`..`U64` hold
/// StableHLO's `ui8`..`ui64`.
#[derive(Debug, Clone, PartialEq)]
pub enum HostTensor {
    F64(ArrayD<f64>),
    F32(ArrayD<f32>),
    F16(ArrayD<f16>),
    BF16(ArrayD<bf16>),
    Pred(ArrayD<bool>),
    I8(ArrayD<i8>),
    I16(ArrayD<i16>),
    I32(ArrayD<i32>),
    I64(ArrayD<i64>),
    U8(ArrayD<u8>),
    U16(ArrayD<u16>),
    U32(ArrayD<u32>),
    U64(ArrayD<u64>),
}

/// Match a `HostTensor` (or a reference to one), binding its array to `$a`
/// and its element type to the type alias `$T` in `$body`.
///
/// ```
/// use meshrun_kernels::{with_array, HostElem, HostTensor};
/// let t = HostTensor::from_vec(&[2], vec![1.0f32, 2.0]).unwrap();
/// let n = with_array!(&t, a: T => a.iter().filter(|x| x.to_f64() > 1.5).count());
/// assert_eq!(n, 1);
/// ```
#[macro_export]
macro_rules! with_array {
    ($tensor:expr, $a:ident : $T:ident => $body:expr) => {
        match $tensor {
            $crate::HostTensor::F64($a) => {
                #[allow(dead_code)]
                type $T = f64;
                $body
            }
            $crate::HostTensor::F32($a) => {
                #[allow(dead_code)]
                type $T = f32;
                $body
            }
            $crate::HostTensor::F16($a) => {
                #[allow(dead_code)]
                type $T = $crate::half::f16;
                $body
            }
            $crate::HostTensor::BF16($a) => {
                #[allow(dead_code)]
                type $T = $crate::half::bf16;
                $body
            }
            $crate::HostTensor::Pred($a) => {
                #[allow(dead_code)]
                type $T = bool;
                $body
            }
            $crate::HostTensor::I8($a) => {
                #[allow(dead_code)]
                type $T = i8;
                $body
            }
            $crate::HostTensor::I16($a) => {
                #[allow(dead_code)]
                type $T = i16;
                $body
            }
            $crate::HostTensor::I32($a) => {
                #[allow(dead_code)]
                type $T = i32;
                $body
            }
            $crate::HostTensor::I64($a) => {
                #[allow(dead_code)]
                type $T = i64;
                $body
            }
            $crate::HostTensor::U8($a) => {
                #[allow(dead_code)]
                type $T = u8;
                $body
            }
            $crate::HostTensor::U16($a) => {
                #[allow(dead_code)]
                type $T = u16;
                $body
            }
            $crate::HostTensor::U32($a) => {
                #[allow(dead_code)]
                type $T = u32;
                $body
            }
            $crate::HostTensor::U64($a) => {
                #[allow(dead_code)]
                type $T = u64;
                $body
            }
        }
    };
}

/// An element type a `HostTensor` can hold. Conversions go through the
/// compiler's `Scalar` (f64 / i64 / bool), which is exact for every type
/// here except i64 → float, where it rounds as a direct conversion would.
pub trait HostElem: Copy + Send + Sync + PartialOrd + std::fmt::Debug + 'static {
    const ELEM: ElemType;
    /// The array of `t` if `t` holds this element type.
    fn array(t: &HostTensor) -> Option<&ArrayD<Self>>;
    fn wrap(a: ArrayD<Self>) -> HostTensor;
    /// StableHLO `convert` semantics: floats round to nearest even, float →
    /// int truncates toward zero and saturates (NaN → 0), int → narrower int
    /// wraps, anything → bool is `!= 0`, bool → number is 0 or 1.
    fn from_scalar(s: Scalar) -> Self;
    fn to_scalar(self) -> Scalar;
    fn to_f64(self) -> f64 {
        self.to_scalar().as_f64()
    }
    /// Zero (false for bool).
    fn zero_value() -> Self {
        Self::from_scalar(Scalar::Int(0))
    }
    /// The exact value, for `stablehlo.convert` between any two types.
    fn to_wide(self) -> Wide;
    /// `convert` from an exact value: the rules of [`HostElem::from_scalar`],
    /// with every integer (ui64 included) converted by its true value and
    /// rounded once.
    fn from_wide(w: Wide) -> Self;
}

/// A value on its way between element types, held exactly: floats as f64,
/// every integer (i64 and ui64 alike) as i128, i1 as bool.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Wide {
    Float(f64),
    Int(i128),
    Bool(bool),
}

macro_rules! float_elem {
    ($t:ty, $variant:ident, $elem:ident, |$x:ident| $from_f64:expr, |$y:ident| $to_f64:expr,
     |$i:ident| $from_int:expr) => {
        impl HostElem for $t {
            const ELEM: ElemType = ElemType::$elem;
            fn array(t: &HostTensor) -> Option<&ArrayD<Self>> {
                match t {
                    HostTensor::$variant(a) => Some(a),
                    _ => None,
                }
            }
            fn wrap(a: ArrayD<Self>) -> HostTensor {
                HostTensor::$variant(a)
            }
            fn from_scalar(s: Scalar) -> Self {
                let $x = s.as_f64();
                $from_f64
            }
            fn to_scalar(self) -> Scalar {
                let $y = self;
                Scalar::Float($to_f64)
            }
            fn to_wide(self) -> Wide {
                let $y = self;
                Wide::Float($to_f64)
            }
            fn from_wide(w: Wide) -> Self {
                match w {
                    Wide::Float($x) => $from_f64,
                    Wide::Int($i) => $from_int,
                    Wide::Bool(b) => {
                        let $x = b as u8 as f64;
                        $from_f64
                    }
                }
            }
        }
    };
}

// Integers convert to f32/f64 rounded once (`as` from i128 is correctly
// rounded); to f16/bf16 through f32, as XLA's CPU backend converts them.
float_elem!(f64, F64, F64, |x| x, |y| y, |i| i as f64);
float_elem!(f32, F32, F32, |x| x as f32, |y| y as f64, |i| i as f32);
float_elem!(f16, F16, F16, |x| f16::from_f64(x), |y| y.to_f64(), |i| {
    f16::from_f32(i as f32)
});
float_elem!(
    bf16,
    BF16,
    BF16,
    |x| bf16::from_f64(x),
    |y| y.to_f64(),
    |i| bf16::from_f32(i as f32)
);

macro_rules! int_elem {
    ($t:ty, $variant:ident, $elem:ident) => {
        impl HostElem for $t {
            const ELEM: ElemType = ElemType::$elem;
            fn array(t: &HostTensor) -> Option<&ArrayD<Self>> {
                match t {
                    HostTensor::$variant(a) => Some(a),
                    _ => None,
                }
            }
            fn wrap(a: ArrayD<Self>) -> HostTensor {
                HostTensor::$variant(a)
            }
            fn from_scalar(s: Scalar) -> Self {
                match s {
                    // `as` from a float saturates and maps NaN to 0.
                    Scalar::Float(x) => x as $t,
                    // Wraps: a ui64 literal above i64::MAX is held as the
                    // i64 of the same bits, and comes back unchanged.
                    Scalar::Int(i) => i as $t,
                    Scalar::Bool(b) => b as $t,
                }
            }
            /// ui64 values above i64::MAX become the i64 of the same bits
            /// (how literals hold them); use [`HostElem::to_f64`] or
            /// [`HostElem::to_wide`] for their numeric value.
            fn to_scalar(self) -> Scalar {
                Scalar::Int(self as i64)
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn to_wide(self) -> Wide {
                Wide::Int(self as i128)
            }
            fn from_wide(w: Wide) -> Self {
                match w {
                    Wide::Float(x) => x as $t,
                    Wide::Int(i) => i as $t,
                    Wide::Bool(b) => b as $t,
                }
            }
        }
    };
}

int_elem!(i8, I8, I8);
int_elem!(i16, I16, I16);
int_elem!(i32, I32, I32);
int_elem!(i64, I64, I64);
int_elem!(u8, U8, U8);
int_elem!(u16, U16, U16);
int_elem!(u32, U32, U32);
int_elem!(u64, U64, U64);

impl HostElem for bool {
    const ELEM: ElemType = ElemType::I1;
    fn array(t: &HostTensor) -> Option<&ArrayD<Self>> {
        match t {
            HostTensor::Pred(a) => Some(a),
            _ => None,
        }
    }
    fn wrap(a: ArrayD<Self>) -> HostTensor {
        HostTensor::Pred(a)
    }
    fn from_scalar(s: Scalar) -> Self {
        match s {
            Scalar::Float(x) => x != 0.0,
            Scalar::Int(i) => i != 0,
            Scalar::Bool(b) => b,
        }
    }
    fn to_scalar(self) -> Scalar {
        Scalar::Bool(self)
    }
    fn to_wide(self) -> Wide {
        Wide::Bool(self)
    }
    fn from_wide(w: Wide) -> Self {
        match w {
            Wide::Float(x) => x != 0.0,
            Wide::Int(i) => i != 0,
            Wide::Bool(b) => b,
        }
    }
}

impl<T: HostElem> From<ArrayD<T>> for HostTensor {
    fn from(a: ArrayD<T>) -> HostTensor {
        T::wrap(a)
    }
}

/// The dims of `ty` as `usize`; a negative (dynamic) dim, or a shape too
/// large to allocate, is an error.
pub fn dims_of(ty: &TensorType) -> Result<Vec<usize>> {
    let bad = |why: &str| KernelError::invalid("host tensor", format!("{ty} {why}"));
    let dims = ty
        .shape
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| bad("has a negative dimension")))
        .collect::<Result<Vec<usize>>>()?;
    let bytes = dims
        .iter()
        .try_fold(ty.elem.byte_size(), |acc, &d| acc.checked_mul(d));
    match bytes {
        Some(b) if b <= isize::MAX as usize => Ok(dims),
        _ => Err(bad("is too large to hold in memory")),
    }
}

/// Match an `ElemType`, naming the matching host element type `$T` in
/// `$body` (giving `Ok($body)`). Every element type but the token has a
/// host type; `$op` names the op in errors.
macro_rules! with_elem_type {
    ($elem:expr, $op:expr, $T:ident => $body:expr) => {
        match $elem {
            meshrun_compiler::ir::ElemType::F64 => {
                type $T = f64;
                Ok::<_, $crate::error::KernelError>($body)
            }
            meshrun_compiler::ir::ElemType::F32 => {
                type $T = f32;
                Ok::<_, $crate::error::KernelError>($body)
            }
            meshrun_compiler::ir::ElemType::F16 => {
                type $T = half::f16;
                Ok::<_, $crate::error::KernelError>($body)
            }
            meshrun_compiler::ir::ElemType::BF16 => {
                type $T = half::bf16;
                Ok::<_, $crate::error::KernelError>($body)
            }
            meshrun_compiler::ir::ElemType::I1 => {
                type $T = bool;
                Ok::<_, $crate::error::KernelError>($body)
            }
            meshrun_compiler::ir::ElemType::I8 => {
                type $T = i8;
                Ok::<_, $crate::error::KernelError>($body)
            }
            meshrun_compiler::ir::ElemType::I16 => {
                type $T = i16;
                Ok::<_, $crate::error::KernelError>($body)
            }
            meshrun_compiler::ir::ElemType::I32 => {
                type $T = i32;
                Ok::<_, $crate::error::KernelError>($body)
            }
            meshrun_compiler::ir::ElemType::I64 => {
                type $T = i64;
                Ok::<_, $crate::error::KernelError>($body)
            }
            meshrun_compiler::ir::ElemType::U8 => {
                type $T = u8;
                Ok::<_, $crate::error::KernelError>($body)
            }
            meshrun_compiler::ir::ElemType::U16 => {
                type $T = u16;
                Ok::<_, $crate::error::KernelError>($body)
            }
            meshrun_compiler::ir::ElemType::U32 => {
                type $T = u32;
                Ok::<_, $crate::error::KernelError>($body)
            }
            meshrun_compiler::ir::ElemType::U64 => {
                type $T = u64;
                Ok::<_, $crate::error::KernelError>($body)
            }
            // `run` refuses tokens before any kernel sees one.
            meshrun_compiler::ir::ElemType::Token => Err($crate::error::KernelError::invalid(
                &$op.to_string(),
                "a !stablehlo.token holds no data",
            )),
        }
    };
}
pub(crate) use with_elem_type;

impl HostTensor {
    pub fn elem_type(&self) -> ElemType {
        with_array!(self, _a: T => T::ELEM)
    }

    pub fn shape(&self) -> &[usize] {
        with_array!(self, a: T => a.shape())
    }

    pub fn len(&self) -> usize {
        with_array!(self, a: T => a.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `TensorType` this tensor has (`tensor<2x3xf32>`).
    pub fn tensor_type(&self) -> TensorType {
        TensorType::new(
            self.shape().iter().map(|&d| d as i64).collect::<Vec<_>>(),
            self.elem_type(),
        )
    }

    /// A tensor of `ty` with every element `value` (converted to the type).
    pub fn full(ty: &TensorType, value: Scalar) -> Result<HostTensor> {
        let dims = dims_of(ty)?;
        with_elem_type!(ty.elem, "host tensor", T => {
            T::wrap(ArrayD::from_elem(IxDyn(&dims), T::from_scalar(value)))
        })
    }

    pub fn zeros(ty: &TensorType) -> Result<HostTensor> {
        HostTensor::full(ty, Scalar::Int(0))
    }

    /// The value of `stablehlo.constant dense<...> : ty`. The literal must
    /// be a splat or hold exactly one value per element.
    pub fn from_literal(lit: &DenseLiteral, ty: &TensorType) -> Result<HostTensor> {
        let n = ty.num_elements().max(0) as usize;
        match lit {
            DenseLiteral::Splat(s) => HostTensor::full(ty, *s),
            DenseLiteral::Elements(v) if v.len() != n => Err(KernelError::invalid(
                "stablehlo.constant",
                format!("literal has {} values but {ty} has {n} elements", v.len()),
            )),
            DenseLiteral::Elements(v) => {
                let dims = dims_of(ty)?;
                with_elem_type!(ty.elem, "stablehlo.constant", T => {
                    let data: Vec<T> = v.iter().map(|s| T::from_scalar(*s)).collect();
                    HostTensor::from_vec(&dims, data)
                })?
            }
        }
    }

    /// A row-major tensor of `shape` holding `data`.
    pub fn from_vec<T: HostElem>(shape: &[usize], data: Vec<T>) -> Result<HostTensor> {
        let len = data.len();
        ArrayD::from_shape_vec(IxDyn(shape), data)
            .map(T::wrap)
            .map_err(|_| {
                KernelError::invalid(
                    "host tensor",
                    format!("{len} values do not fill shape {shape:?}"),
                )
            })
    }

    /// The array if this tensor holds `T`.
    pub fn array<T: HostElem>(&self) -> Option<&ArrayD<T>> {
        T::array(self)
    }

    /// The value of a rank-0 `i1` tensor (a loop condition).
    pub fn scalar_bool(&self) -> Option<bool> {
        let a = self.array::<bool>()?;
        (a.ndim() == 0).then(|| a.iter().next().copied()).flatten()
    }

    /// The value of a rank-0 integer tensor (a branch index), as i64.
    pub fn scalar_i64(&self) -> Option<i64> {
        if !self.elem_type().is_integer() || !self.shape().is_empty() {
            return None;
        }
        self.to_f64_vec().first().map(|&x| x as i64)
    }

    /// Every element as f64, in row-major order (for comparisons and tests).
    pub fn to_f64_vec(&self) -> Vec<f64> {
        with_array!(self, a: T => a.iter().map(|x| x.to_f64()).collect())
    }

    /// The largest `|self - other|` over all elements, or `None` when the
    /// two differ in element type or shape. Two NaNs count as equal; a NaN
    /// against a number counts as infinitely far.
    pub fn max_abs_diff(&self, other: &HostTensor) -> Option<f64> {
        if self.elem_type() != other.elem_type() || self.shape() != other.shape() {
            return None;
        }
        let (a, b) = (self.to_f64_vec(), other.to_f64_vec());
        Some(
            a.iter()
                .zip(&b)
                .fold(0.0, |m, (&x, &y)| m.max(elem_diff(x, y))),
        )
    }

    /// True when element type and shape agree and every element satisfies
    /// `|self - expected| <= atol + rtol * |expected|` (NaN matches NaN,
    /// infinities must match exactly).
    pub fn allclose(&self, expected: &HostTensor, rtol: f64, atol: f64) -> bool {
        if self.elem_type() != expected.elem_type() || self.shape() != expected.shape() {
            return false;
        }
        let (a, b) = (self.to_f64_vec(), expected.to_f64_vec());
        a.iter().zip(&b).all(|(&x, &y)| {
            let d = elem_diff(x, y);
            d == 0.0 || d <= atol + rtol * y.abs()
        })
    }
}

fn elem_diff(x: f64, y: f64) -> f64 {
    if x.is_nan() && y.is_nan() || x == y {
        0.0
    } else if x.is_nan() || y.is_nan() {
        f64::INFINITY
    } else {
        (x - y).abs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_zeros_and_types() {
        let t = HostTensor::full(
            &TensorType::new(vec![2, 3], ElemType::BF16),
            Scalar::Float(1.5),
        )
        .unwrap();
        assert_eq!(t.shape(), &[2, 3]);
        assert_eq!(t.elem_type(), ElemType::BF16);
        assert_eq!(t.to_f64_vec(), vec![1.5; 6]);
        assert_eq!(t.tensor_type().to_string(), "tensor<2x3xbf16>");
        let z = HostTensor::zeros(&TensorType::scalar(ElemType::I1)).unwrap();
        assert_eq!(z, HostTensor::Pred(ArrayD::from_elem(IxDyn(&[]), false)));
        let u = HostTensor::zeros(&TensorType::new(vec![2], ElemType::U16)).unwrap();
        assert_eq!(u, HostTensor::U16(ArrayD::from_elem(IxDyn(&[2]), 0)));
        let huge = TensorType::new(vec![1 << 40, 1 << 40], ElemType::F32);
        let err = HostTensor::zeros(&huge).unwrap_err();
        assert!(err.to_string().contains("too large"), "{err}");
        let neg = TensorType::new(vec![-1], ElemType::F32);
        assert!(HostTensor::zeros(&neg).is_err());
    }

    #[test]
    fn literal_elements_and_count_check() {
        let ty = TensorType::new(vec![3], ElemType::I32);
        let lit = DenseLiteral::Elements(vec![Scalar::Int(1), Scalar::Int(-2), Scalar::Int(3)]);
        let t = HostTensor::from_literal(&lit, &ty).unwrap();
        assert_eq!(t.to_f64_vec(), vec![1.0, -2.0, 3.0]);
        let short = DenseLiteral::Elements(vec![Scalar::Int(1)]);
        let err = HostTensor::from_literal(&short, &ty).unwrap_err();
        assert!(err.to_string().contains("1 values"), "{err}");
    }

    #[test]
    fn scalar_conversions_follow_convert_semantics() {
        assert_eq!(i32::from_scalar(Scalar::Float(-2.7)), -2);
        assert_eq!(i32::from_scalar(Scalar::Float(f64::NAN)), 0);
        assert_eq!(i32::from_scalar(Scalar::Float(1e20)), i32::MAX);
        assert_eq!(i32::from_scalar(Scalar::Int(1 << 32 | 5)), 5);
        assert!(bool::from_scalar(Scalar::Float(0.5)));
        assert_eq!(
            f16::from_scalar(Scalar::Float(1.0 / 3.0)),
            f16::from_f64(1.0 / 3.0)
        );
        assert_eq!(f32::from_scalar(Scalar::Bool(true)), 1.0);
    }

    #[test]
    fn allclose_and_diff() {
        let a = HostTensor::from_vec(&[3], vec![1.0f32, f32::NAN, 100.0]).unwrap();
        let b = HostTensor::from_vec(&[3], vec![1.0f32 + 1e-6, f32::NAN, 100.001]).unwrap();
        assert!(a.allclose(&b, 1e-5, 1e-5));
        assert!(!a.allclose(&b, 1e-9, 1e-9));
        let d = a.max_abs_diff(&b).unwrap();
        assert!((d - 0.001).abs() < 1e-5, "{d}");
        let c = HostTensor::from_vec(&[3], vec![1i32, 2, 3]).unwrap();
        assert_eq!(a.max_abs_diff(&c), None);
        assert!(!a.allclose(&c, 1.0, 1.0));
    }
}
