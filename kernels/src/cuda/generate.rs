//! The `extern "C"` entry points of each kernel module, generated from the
//! same tables the runtime names kernels by ([`super::names`]): one line
//! per (operation, element type) that instantiates a template of
//! `templates.cuh`.

use meshrun_compiler::ir::{BinaryOp, CompareDirection, ElemType, ReduceKind, UnaryOp};

use super::names::{self, cuda_type, width_type, DTYPES, WIDTHS};

/// Generated entry points: the source lines and the function names.
#[derive(Default)]
pub(crate) struct Entries {
    pub source: String,
    pub functions: Vec<String>,
}

impl Entries {
    pub(crate) fn push(&mut self, name: String, params: &str, body: &str) {
        self.source.push_str(&format!(
            "extern \"C\" __global__ void {name}({params}) {{ {body} }}\n"
        ));
        self.functions.push(name);
    }
}

/// The functor of a unary op for a category of element type.
pub(crate) fn unary_functor(op: UnaryOp, e: ElemType) -> String {
    if e.is_float() {
        format!("F_{}", op.name())
    } else if e == ElemType::I1 {
        "P_not".into()
    } else {
        format!("I_{}", op.name())
    }
}

pub(crate) fn binary_functor(op: BinaryOp, e: ElemType) -> String {
    if e.is_float() {
        format!("F_{}", op.name())
    } else if e == ElemType::I1 {
        match op {
            BinaryOp::Or | BinaryOp::Maximum | BinaryOp::Add => "P_or".into(),
            BinaryOp::Xor => "P_xor".into(),
            _ => "P_and".into(),
        }
    } else {
        format!("I_{}", op.name())
    }
}

pub(crate) fn reducer(kind: ReduceKind, e: ElemType) -> String {
    if e.is_float() {
        format!("FR_{}", kind.name())
    } else if e == ElemType::I1 {
        match kind {
            ReduceKind::Add | ReduceKind::Or | ReduceKind::Maximum => "PR_or".into(),
            _ => "PR_and".into(),
        }
    } else {
        format!("IR_{}", kind.name())
    }
}

/// Unary, `is_finite`, `reduce_precision` and binary ops.
pub(crate) fn elementwise() -> Entries {
    let mut out = Entries::default();
    for e in DTYPES {
        let Some(t) = cuda_type(e) else { continue };
        for &op in UnaryOp::ALL {
            if let Some(name) = names::unary(op, e) {
                let f = unary_functor(op, e);
                out.push(
                    name,
                    &format!("const {t}* x, {t}* y, long long n"),
                    &format!("unary_impl<{t}, {f}>(x, y, n);"),
                );
            }
        }
        if let Some(name) = names::is_finite(e) {
            out.push(
                name,
                &format!("const {t}* x, pred_t* y, long long n"),
                &format!("is_finite_impl<{t}>(x, y, n);"),
            );
        }
        if let Some(name) = names::reduce_precision(e) {
            out.push(
                name,
                &format!("const {t}* x, {t}* y, long long n, int exponent_bits, int mantissa_bits"),
                &format!("reduce_precision_impl<{t}>(x, y, n, exponent_bits, mantissa_bits);"),
            );
        }
        for &op in BinaryOp::ALL {
            if let Some(name) = names::binary(op, e) {
                let f = binary_functor(op, e);
                out.push(
                    name,
                    &format!("const {t}* a, const {t}* b, {t}* y, long long n"),
                    &format!("binary_impl<{t}, {f}>(a, b, y, n);"),
                );
            }
        }
    }
    out
}

/// Comparisons, selects and clamps.
pub(crate) fn compare_select() -> Entries {
    let mut out = Entries::default();
    for e in DTYPES {
        let Some(t) = cuda_type(e) else { continue };
        for &dir in CompareDirection::ALL {
            let cmp = format!("Cmp_{}", dir.name().to_ascii_lowercase());
            for total in [false, true] {
                if total && !e.is_float() {
                    continue;
                }
                let Some(name) = names::compare(dir, total, e) else {
                    continue;
                };
                let functor = if total {
                    format!("Total<{cmp}>")
                } else {
                    cmp.clone()
                };
                out.push(
                    name,
                    &format!("const {t}* a, const {t}* b, pred_t* y, long long n"),
                    &format!("compare_impl<{t}, {functor} >(a, b, y, n);"),
                );
            }
        }
        if let Some(name) = names::clamp(e) {
            out.push(
                name,
                &format!(
                    "const {t}* lo, long long lo_all, const {t}* x, const {t}* hi, long long hi_all, {t}* y, long long n"
                ),
                &format!("clamp_impl<{t}>(lo, lo_all, x, hi, hi_all, y, n);"),
            );
        }
    }
    for w in WIDTHS {
        let (Some(t), Some(name)) = (width_type(w), names::select(w)) else {
            continue;
        };
        out.push(
            name,
            &format!(
                "const pred_t* p, long long p_all, const {t}* a, const {t}* b, {t}* y, long long n"
            ),
            &format!("select_impl<{t}>(p, p_all, a, b, y, n);"),
        );
    }
    out
}

/// Conversions between every pair of element types, and iotas.
pub(crate) fn convert() -> Entries {
    let mut out = Entries::default();
    for from in DTYPES {
        for to in DTYPES {
            let (Some(s), Some(d), Some(name)) =
                (cuda_type(from), cuda_type(to), names::convert(from, to))
            else {
                continue;
            };
            out.push(
                name,
                &format!("const {s}* x, {d}* y, long long n"),
                &format!("convert_impl<{s}, {d}>(x, y, n);"),
            );
        }
        if let (Some(t), Some(name)) = (cuda_type(from), names::iota(from)) {
            out.push(
                name,
                &format!(
                    "{t}* y, long long n, long long dim_size, long long inner, long long offset"
                ),
                &format!("iota_impl<{t}>(y, n, dim_size, inner, offset);"),
            );
        }
    }
    out
}

/// Width-generic data movement: fills, masks, strided copies.
pub(crate) fn movement() -> Entries {
    let mut out = Entries::default();
    for w in WIDTHS {
        let Some(t) = width_type(w) else { continue };
        if let Some(name) = names::fill(w) {
            out.push(
                name,
                &format!("{t}* y, long long n, unsigned long long bits"),
                &format!("fill_impl<{t}>(y, n, bits);"),
            );
        }
        if let Some(name) = names::mask(w) {
            out.push(
                name,
                &format!(
                    "const {t}* x, {t}* y, long long n, long long dim_size, long long inner, long long valid, unsigned long long bits"
                ),
                &format!("mask_impl<{t}>(x, y, n, dim_size, inner, valid, bits);"),
            );
        }
        if let Some(name) = names::strided_copy(w) {
            out.push(
                name,
                &format!("const {t}* src, {t}* dst, const long long* meta"),
                &format!("strided_copy_impl<{t}>(src, dst, meta);"),
            );
        }
    }
    out
}

/// Row reductions and the collectives' many-block reductions.
pub(crate) fn reduce() -> Entries {
    let mut out = Entries::default();
    for e in DTYPES {
        let Some(t) = cuda_type(e) else { continue };
        for &kind in ReduceKind::ALL {
            let r = reducer(kind, e);
            if let Some(name) = names::reduce(kind, e) {
                out.push(
                    name,
                    &format!(
                        "const {t}* x, const {t}* init, {t}* y, long long outer, long long red"
                    ),
                    &format!("reduce_impl<{t}, {r}>(x, init, y, outer, red);"),
                );
            }
            if let Some(name) = names::reduce_many(kind, e) {
                out.push(
                    name,
                    &format!(
                        "const unsigned long long* ptrs, long long count, {t}* y, long long n"
                    ),
                    &format!("reduce_many_impl<{t}, {r}>(ptrs, count, y, n);"),
                );
            }
        }
    }
    out
}
