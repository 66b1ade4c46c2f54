//! Kernel names: one CUDA function per (operation, element type), named
//! the same way by the source generator ([`super::modules`]) and by the
//! runtime that launches them, so the two cannot drift apart.
//!
//! Every function here returns `None` for a combination the CUDA kernels do
//! not implement (the CPU kernels reject the same combinations, or the
//! runtime computes the op on the host instead).

use meshrun_compiler::ir::{BinaryOp, CompareDirection, ElemType, ReduceKind, UnaryOp};

/// The element types the CUDA kernels handle: exactly those of
/// `HostTensor`. `i1` is stored as one byte (0 or 1).
pub const DTYPES: [ElemType; 7] = [
    ElemType::F64,
    ElemType::F32,
    ElemType::F16,
    ElemType::BF16,
    ElemType::I1,
    ElemType::I32,
    ElemType::I64,
];

/// Byte widths of the width-generic kernels (copies, fills, masks,
/// selects), which move bits without looking at them.
pub const WIDTHS: [usize; 4] = [1, 2, 4, 8];

/// The suffix of `e` in kernel names (`f32`, `bf16`, `pred`, ...).
pub fn suffix(e: ElemType) -> Option<&'static str> {
    Some(match e {
        ElemType::F64 => "f64",
        ElemType::F32 => "f32",
        ElemType::F16 => "f16",
        ElemType::BF16 => "bf16",
        ElemType::I1 => "pred",
        ElemType::I32 => "i32",
        ElemType::I64 => "i64",
        _ => return None,
    })
}

/// The CUDA C++ storage type of `e`.
pub fn cuda_type(e: ElemType) -> Option<&'static str> {
    Some(match e {
        ElemType::F64 => "double",
        ElemType::F32 => "float",
        ElemType::F16 => "__half",
        ElemType::BF16 => "__nv_bfloat16",
        ElemType::I1 => "pred_t",
        ElemType::I32 => "int",
        ElemType::I64 => "long long",
        _ => return None,
    })
}

/// The unsigned CUDA type of a byte width (1, 2, 4 or 8).
pub fn width_type(bytes: usize) -> Option<&'static str> {
    Some(match bytes {
        1 => "unsigned char",
        2 => "unsigned short",
        4 => "unsigned int",
        8 => "unsigned long long",
        _ => return None,
    })
}

fn is_int(e: ElemType) -> bool {
    matches!(e, ElemType::I32 | ElemType::I64)
}

/// Whether the element-wise `op` has a kernel for `e` (`is_finite`, whose
/// result is `i1`, is [`is_finite`]).
pub fn unary_supported(op: UnaryOp, e: ElemType) -> bool {
    use UnaryOp as U;
    if suffix(e).is_none() || op == U::IsFinite {
        return false;
    }
    if e.is_float() {
        !matches!(
            op,
            // Integer-only ops, and CHLO functions CUDA's math library
            // lacks (the CPU computes them; a GPU run reports the op).
            U::Not | U::Popcnt | U::CountLeadingZeros | U::Digamma | U::BesselI1e
        )
    } else if is_int(e) {
        matches!(
            op,
            U::Negate | U::Abs | U::Sign | U::Square | U::Not | U::Popcnt | U::CountLeadingZeros
        )
    } else {
        op == U::Not
    }
}

/// `unary_<op>_<type>(const T* x, T* y, long long n)`.
pub fn unary(op: UnaryOp, e: ElemType) -> Option<String> {
    unary_supported(op, e).then(|| format!("unary_{}_{}", op.name(), suffix(e).unwrap_or("")))
}

/// `is_finite_<type>(const T* x, pred_t* y, long long n)`; floats only.
pub fn is_finite(e: ElemType) -> Option<String> {
    if e.is_float() {
        suffix(e).map(|s| format!("is_finite_{s}"))
    } else {
        None
    }
}

/// `reduce_precision_<type>(const T* x, T* y, long long n, int
/// exponent_bits, int mantissa_bits)`; floats only.
pub fn reduce_precision(e: ElemType) -> Option<String> {
    if e.is_float() {
        suffix(e).map(|s| format!("reduce_precision_{s}"))
    } else {
        None
    }
}

/// Whether the element-wise `op` has a kernel for `e`.
pub fn binary_supported(op: BinaryOp, e: ElemType) -> bool {
    use BinaryOp as B;
    if suffix(e).is_none() {
        return false;
    }
    let shift = matches!(
        op,
        B::ShiftLeft | B::ShiftRightLogical | B::ShiftRightArithmetic
    );
    if e.is_float() {
        match op {
            B::And | B::Or | B::Xor | B::Polygamma | B::Zeta => false,
            // Steps through the storage type's bits: f32 and f64 only.
            B::NextAfter => matches!(e, ElemType::F32 | ElemType::F64),
            _ => !shift,
        }
    } else if is_int(e) {
        !matches!(op, B::Atan2 | B::NextAfter | B::Polygamma | B::Zeta)
    } else {
        matches!(
            op,
            B::And | B::Or | B::Xor | B::Minimum | B::Maximum | B::Multiply | B::Add
        )
    }
}

/// `binary_<op>_<type>(const T* a, const T* b, T* y, long long n)`.
pub fn binary(op: BinaryOp, e: ElemType) -> Option<String> {
    binary_supported(op, e).then(|| format!("binary_{}_{}", op.name(), suffix(e).unwrap_or("")))
}

/// `compare_[total_]<dir>_<type>(const T* a, const T* b, pred_t* y, long
/// long n)`. `total` (StableHLO's `TOTALORDER`) only changes floats.
pub fn compare(dir: CompareDirection, total: bool, e: ElemType) -> Option<String> {
    let s = suffix(e)?;
    let dir = dir.name().to_ascii_lowercase();
    Some(if total && e.is_float() {
        format!("compare_total_{dir}_{s}")
    } else {
        format!("compare_{dir}_{s}")
    })
}

/// `convert_<from>_to_<to>(const S* x, D* y, long long n)`, with the rules
/// of `HostElem::from_scalar`; `None` for the same type (a copy).
pub fn convert(from: ElemType, to: ElemType) -> Option<String> {
    if from == to {
        return None;
    }
    Some(format!("convert_{}_to_{}", suffix(from)?, suffix(to)?))
}

/// `clamp_<type>(const T* lo, long long lo_all, const T* x, const T* hi,
/// long long hi_all, T* y, long long n)`: a bound whose `_all` is 0 is a
/// scalar.
pub fn clamp(e: ElemType) -> Option<String> {
    suffix(e).map(|s| format!("clamp_{s}"))
}

/// `iota_<type>(T* y, long long n, long long dim_size, long long inner,
/// long long offset)`: element `i` is `offset + (i / inner) % dim_size`.
pub fn iota(e: ElemType) -> Option<String> {
    suffix(e).map(|s| format!("iota_{s}"))
}

/// `select_b<w>(const pred_t* p, long long p_all, const W* a, const W* b,
/// W* y, long long n)`.
pub fn select(width: usize) -> Option<String> {
    width_type(width).map(|_| format!("select_b{width}"))
}

/// `fill_b<w>(W* y, long long n, unsigned long long bits)`.
pub fn fill(width: usize) -> Option<String> {
    width_type(width).map(|_| format!("fill_b{width}"))
}

/// `mask_b<w>(const W* x, W* y, long long n, long long dim_size, long long
/// inner, long long valid, unsigned long long bits)`: elements whose index
/// along the dimension is `>= valid` become `bits`.
pub fn mask(width: usize) -> Option<String> {
    width_type(width).map(|_| format!("mask_b{width}"))
}

/// `strided_copy_b<w>(const W* src, W* dst, const long long* meta)`; the
/// layout of `meta` is the runtime's `StridedCopy::encode`.
pub fn strided_copy(width: usize) -> Option<String> {
    width_type(width).map(|_| format!("strided_copy_b{width}"))
}

/// Whether `reduce` / `reduce_many` exist for `kind` on `e` (the CPU
/// kernels' rule: `and` / `or` only on integers and `i1`).
pub fn reduce_supported(kind: ReduceKind, e: ElemType) -> bool {
    suffix(e).is_some() && (!e.is_float() || !matches!(kind, ReduceKind::And | ReduceKind::Or))
}

/// `reduce_<kind>_<type>(const T* x, const T* init, T* y, long long outer,
/// long long red)`: row `o` of the `outer x red` matrix `x` folded into
/// `y[o]`, starting from `*init`.
pub fn reduce(kind: ReduceKind, e: ElemType) -> Option<String> {
    reduce_supported(kind, e).then(|| format!("reduce_{}_{}", kind.name(), suffix(e).unwrap_or("")))
}

/// `reduce_many_<kind>_<type>(const unsigned long long* ptrs, long long
/// count, T* y, long long n)`: `y[i]` is the fold of `ptrs[r][i]` over `r`
/// in order, in the compute type, rounded once (the collectives' rule).
pub fn reduce_many(kind: ReduceKind, e: ElemType) -> Option<String> {
    reduce_supported(kind, e)
        .then(|| format!("reduce_many_{}_{}", kind.name(), suffix(e).unwrap_or("")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_cpu_kernels_support() {
        assert_eq!(
            unary(UnaryOp::Exp, ElemType::BF16).as_deref(),
            Some("unary_exponential_bf16")
        );
        assert_eq!(unary(UnaryOp::Exp, ElemType::I32), None);
        assert_eq!(
            unary(UnaryOp::Not, ElemType::I1).as_deref(),
            Some("unary_not_pred")
        );
        assert_eq!(unary(UnaryOp::Negate, ElemType::U8), None);
        assert_eq!(
            unary(UnaryOp::Popcnt, ElemType::I64).as_deref(),
            Some("unary_popcnt_i64")
        );
        assert_eq!(unary(UnaryOp::Popcnt, ElemType::F32), None);
        assert_eq!(
            unary(UnaryOp::ErfInv, ElemType::BF16).as_deref(),
            Some("unary_erf_inv_bf16")
        );
        assert_eq!(unary(UnaryOp::Digamma, ElemType::F32), None);
        assert_eq!(
            binary(BinaryOp::ShiftRightArithmetic, ElemType::I32).as_deref(),
            Some("binary_shift_right_arithmetic_i32")
        );
        assert_eq!(binary(BinaryOp::ShiftLeft, ElemType::F32), None);
        assert_eq!(binary(BinaryOp::NextAfter, ElemType::F16), None);
        assert_eq!(binary(BinaryOp::Zeta, ElemType::F64), None);
        assert_eq!(binary(BinaryOp::Atan2, ElemType::I64), None);
        assert_eq!(binary(BinaryOp::Xor, ElemType::F32), None);
        assert_eq!(
            compare(CompareDirection::Lt, true, ElemType::F16).as_deref(),
            Some("compare_total_lt_f16")
        );
        assert_eq!(
            compare(CompareDirection::Lt, true, ElemType::I32).as_deref(),
            Some("compare_lt_i32")
        );
        assert_eq!(convert(ElemType::F32, ElemType::F32), None);
        assert_eq!(
            convert(ElemType::I1, ElemType::BF16).as_deref(),
            Some("convert_pred_to_bf16")
        );
        assert_eq!(reduce(ReduceKind::And, ElemType::F32), None);
        assert_eq!(
            reduce_many(ReduceKind::Or, ElemType::I1).as_deref(),
            Some("reduce_many_or_pred")
        );
        assert_eq!(
            reduce_precision(ElemType::BF16).as_deref(),
            Some("reduce_precision_bf16")
        );
        assert_eq!(reduce_precision(ElemType::I32), None);
        assert_eq!(strided_copy(3), None);
        assert_eq!(fill(8).as_deref(), Some("fill_b8"));
    }
}
