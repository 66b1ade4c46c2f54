//! Vectorized f32 math: `exp`, `log`, `tanh`, `logistic`, `erf`, `sin`,
//! `cos`, `sqrt`, `rsqrt` and `pow` over slices, with AVX-512 or AVX2
//! chosen at run time (see [`dispatch`]), accurate to ≤ 2 ulp against f64
//! over the whole f32 domain (the property test in `accuracy`).
//!
//! No crate fit: `sleef` needs nightly's portable SIMD, `wide` picks its
//! instruction set at compile time, and `simdeez`' f32 transcendentals
//! promise 35 ulp. So the element functions ([`scalar`]) are written here
//! and `std`'s `#[target_feature]` does the dispatch.
//!
//! f16 and bf16 use these through f32 (`elementwise::via_f32`); f64 keeps
//! `std`'s functions.

#[cfg(test)]
mod accuracy;
mod arith;
mod dispatch;
mod scalar;

use meshrun_compiler::ir::{BinaryOp, UnaryOp};
use ndarray::ArrayD;

use crate::cpu::map::filled;

pub use arith::{BinaryArith, Side, UnaryArith};
pub use dispatch::{one, Isa};

/// A vectorized unary function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Func {
    Exp,
    Log,
    Tanh,
    Logistic,
    Erf,
    Sin,
    Cos,
    Sqrt,
    Rsqrt,
}

impl Func {
    pub const ALL: [Func; 9] = [
        Func::Exp,
        Func::Log,
        Func::Tanh,
        Func::Logistic,
        Func::Erf,
        Func::Sin,
        Func::Cos,
        Func::Sqrt,
        Func::Rsqrt,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Func::Exp => "exp",
            Func::Log => "log",
            Func::Tanh => "tanh",
            Func::Logistic => "logistic",
            Func::Erf => "erf",
            Func::Sin => "sin",
            Func::Cos => "cos",
            Func::Sqrt => "sqrt",
            Func::Rsqrt => "rsqrt",
        }
    }

    /// The function that computes `op` on f32, if there is one.
    pub fn of_unary(op: UnaryOp) -> Option<Func> {
        Some(match op {
            UnaryOp::Exp => Func::Exp,
            UnaryOp::Log => Func::Log,
            UnaryOp::Tanh => Func::Tanh,
            UnaryOp::Logistic => Func::Logistic,
            UnaryOp::Sine => Func::Sin,
            UnaryOp::Cosine => Func::Cos,
            UnaryOp::Sqrt => Func::Sqrt,
            UnaryOp::Rsqrt => Func::Rsqrt,
            _ => return None,
        })
    }
}

/// `dst[i] = func(src[i])` on this CPU's widest instruction set; the
/// slices must have one length (else only the common prefix is written).
pub fn apply(func: Func, src: &[f32], dst: &mut [f32]) {
    dispatch::unary(detected(), func, src, dst);
}

/// [`apply`] with a given instruction set (tests and benchmarks compare
/// them).
pub fn apply_on(isa: Isa, func: Func, src: &[f32], dst: &mut [f32]) {
    dispatch::unary(isa, func, src, dst);
}

/// `dst[i] = a[i]^b[i]` (StableHLO `power` on f32).
pub fn pow(a: &[f32], b: &[f32], dst: &mut [f32]) {
    dispatch::pow(detected(), a, b, dst);
}

/// [`pow`] with a given instruction set.
pub fn pow_on(isa: Isa, a: &[f32], b: &[f32], dst: &mut [f32]) {
    dispatch::pow(isa, a, b, dst);
}

/// `dst[i] = a[i] op b[i]` (IEEE, `max_nan`/`min_nan`) on this CPU's
/// widest instruction set; a [`Side::Scalar`] stands for every element.
pub fn binary_arith(op: BinaryArith, a: Side<'_>, b: Side<'_>, dst: &mut [f32]) {
    arith::binary(detected(), op, a, b, dst);
}

/// [`binary_arith`] with a given instruction set.
pub fn binary_arith_on(isa: Isa, op: BinaryArith, a: Side<'_>, b: Side<'_>, dst: &mut [f32]) {
    arith::binary(isa, op, a, b, dst);
}

/// `dst[i] = op(src[i])` (negate, abs, square) on this CPU's widest
/// instruction set.
pub fn unary_arith(op: UnaryArith, src: &[f32], dst: &mut [f32]) {
    arith::unary(detected(), op, src, dst);
}

/// The detected instruction set, looked up once.
fn detected() -> Isa {
    static ISA: std::sync::OnceLock<Isa> = std::sync::OnceLock::new();
    *ISA.get_or_init(Isa::detected)
}

/// A row-major copy of `a`'s elements, borrowed when it is one already.
fn row_major(a: &ArrayD<f32>) -> std::borrow::Cow<'_, [f32]> {
    match a.as_slice() {
        Some(s) => std::borrow::Cow::Borrowed(s),
        None => std::borrow::Cow::Owned(a.iter().copied().collect()),
    }
}

/// `op` on every element of `a` through [`apply`], or `None` when `op`
/// has no vectorized function.
///
/// Every element's result depends on that element alone (the module doc),
/// so the output may be cut into pieces anywhere (`pieces`).
pub fn unary_array(op: UnaryOp, a: &ArrayD<f32>) -> Option<ArrayD<f32>> {
    let func = Func::of_unary(op)?;
    let src = row_major(a);
    Some(filled(a.shape(), BLOCK_ALIGN, |start, piece| {
        apply(func, &src[start..start + piece.len()], piece)
    }))
}

/// `op` on every element of `a` through [`unary_arith`], or `None` when
/// it is not one of those ops.
pub fn unary_arith_array(op: UnaryOp, a: &ArrayD<f32>) -> Option<ArrayD<f32>> {
    let op = UnaryArith::of_unary(op)?;
    let src = row_major(a);
    Some(filled(a.shape(), BLOCK_ALIGN, |start, piece| {
        unary_arith(op, &src[start..start + piece.len()], piece)
    }))
}

/// `a op b` element by element through [`binary_arith`] (one shape; the
/// caller checks it), or `None` when `op` is not one of those ops.
pub fn binary_arith_array(op: BinaryOp, a: &ArrayD<f32>, b: &ArrayD<f32>) -> Option<ArrayD<f32>> {
    let op = BinaryArith::of_binary(op)?;
    let (x, y) = (row_major(a), row_major(b));
    Some(filled(a.shape(), BLOCK_ALIGN, |start, piece| {
        let end = start + piece.len();
        binary_arith(
            op,
            Side::Slice(&x[start..end]),
            Side::Slice(&y[start..end]),
            piece,
        )
    }))
}

/// `a^b` element by element (one shape; the caller checks it).
pub fn pow_array(a: &ArrayD<f32>, b: &ArrayD<f32>) -> ArrayD<f32> {
    let (x, y) = (row_major(a), row_major(b));
    filled(a.shape(), BLOCK_ALIGN, |start, piece| {
        let end = start + piece.len();
        pow(&x[start..end], &y[start..end], piece)
    })
}

/// Pieces start on whole blocks of the loops (not needed for the bits,
/// which depend on each element alone, but it keeps the blocks aligned).
const BLOCK_ALIGN: usize = 1024;
