//! A chain of element-wise f32 ops computed in one pass: block by block
//! ([`BLOCK`] elements), every step of the chain runs on the block while
//! it is in L1, so only the chain's operands are read from memory and only
//! its result is written (unfused, every op reads and writes a whole
//! tensor).
//!
//! Which ops form a chain is the runtime's decision (`runtime::fusion`);
//! this module only says which ops it can compute ([`Chain::fusible_unary`],
//! [`Chain::fusible_binary`]) and computes them with the same element
//! functions as `elementwise` (the vectorized [`vmath`] functions, plain
//! IEEE arithmetic, `max_nan`/`min_nan`, reduce_precision's bit rounding), so a fused chain gives bitwise
//! the results of its ops run one by one (a test checks every op).

use std::borrow::Cow;

use gemm::Parallelism;
use meshrun_compiler::ir::{BinaryOp, UnaryOp};

use crate::cpu::pieces;
use crate::cpu::reduce_precision::{f32_elem, Format};
use crate::cpu::vmath::{self, BinaryArith, Func, Side, UnaryArith};
use crate::error::{KernelError, Result};
use crate::tensor::HostTensor;

/// Elements per block: a few steps' buffers stay in L1.
pub const BLOCK: usize = 1024;

const OP: &str = "fused element-wise chain";

/// Where a step reads an argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// Operand `k`, which has the chain's shape.
    Operand(usize),
    /// Operand `k` repeated along the chain's leading dimensions (a
    /// `broadcast_in_dim` whose operand's shape, without its leading
    /// size-1 dimensions, is a suffix of the chain's, or a scalar).
    Repeated(usize),
    /// Operand `k` with each element repeated along the chain's trailing
    /// dimensions (a `broadcast_in_dim` of a row max, sum or mean in a
    /// softmax or layernorm). The operand's shape, without its trailing
    /// size-1 dimensions, is a prefix of the chain's: `chain.shape[..d]`
    /// for some `d` (a scalar has `d = 0`). Its `m` elements (`m > 0` on a
    /// non-empty chain) are then those of `chain.shape[..d]` in row-major
    /// order, and chain element `p` (flat, row-major) reads operand
    /// element `p / inner`, `inner = n / m` = the product of
    /// `chain.shape[d..]`. Only this form: a broadcast of a middle block
    /// (repeated both ways) is not one.
    Stretched(usize),
    /// The result of an earlier step.
    Step(usize),
}

/// What a step computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepOp {
    Unary(UnaryOp),
    Binary(BinaryOp),
    /// `stablehlo.reduce_precision` to this format (one argument).
    ReducePrecision(Format),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub op: StepOp,
    /// One argument for a unary op (and reduce_precision), two for a
    /// binary one.
    pub args: Vec<Arg>,
}

/// The steps of a chain in order; its result is the last step's, of
/// `shape`, f32.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    pub steps: Vec<Step>,
    pub shape: Vec<usize>,
}

impl Chain {
    /// Unary ops a chain computes (on f32).
    pub fn fusible_unary(op: UnaryOp) -> bool {
        Func::of_unary(op).is_some()
            || matches!(op, UnaryOp::Negate | UnaryOp::Abs | UnaryOp::Square)
    }

    /// Binary ops a chain computes (on f32).
    pub fn fusible_binary(op: BinaryOp) -> bool {
        use BinaryOp as B;
        matches!(
            op,
            B::Add | B::Subtract | B::Multiply | B::Divide | B::Maximum | B::Minimum | B::Power
        )
    }
}

/// `out[i] = f(x[i])`, monomorphized per op so that the loop vectorizes
/// (through a `fn` pointer it would make a call per element).
#[inline(always)]
fn map1(x: &[f32], out: &mut [f32], f: impl Fn(f32) -> f32) {
    for (o, &v) in out.iter_mut().zip(x) {
        *o = f(v);
    }
}

fn unary_block(op: UnaryOp, x: &[f32], out: &mut [f32]) -> Result<()> {
    if let Some(func) = Func::of_unary(op) {
        vmath::apply(func, x, out);
        return Ok(());
    }
    match UnaryArith::of_unary(op) {
        Some(arith) => vmath::unary_arith(arith, x, out),
        None => {
            return Err(KernelError::invalid(
                OP,
                format!("cannot fuse stablehlo.{}", op.name()),
            ))
        }
    }
    Ok(())
}

/// The binary ops that are not [`BinaryArith`] ones.
fn binary_block(op: BinaryOp, x: &[f32], y: &[f32], out: &mut [f32]) -> Result<()> {
    match op {
        BinaryOp::Power => vmath::pow(x, y, out),
        _ => {
            return Err(KernelError::invalid(
                OP,
                format!("cannot fuse stablehlo.{}", op.name()),
            ))
        }
    }
    Ok(())
}

/// One step on one block: `args` as long as `dst`. `arith` is the step's
/// op when it is a [`BinaryArith`] one: only those take a [`Side::Scalar`]
/// (`eval_piece` makes none for the others).
fn run_step(
    op: StepOp,
    arith: Option<BinaryArith>,
    args: [Side<'_>; 2],
    dst: &mut [f32],
) -> Result<()> {
    if let Some(arith) = arith {
        vmath::binary_arith(arith, args[0], args[1], dst);
        return Ok(());
    }
    let [Side::Slice(x), Side::Slice(y)] = args else {
        return Err(KernelError::invalid(
            OP,
            "a scalar argument to a non-arithmetic step",
        ));
    };
    match op {
        StepOp::Binary(b) => binary_block(b, x, y, dst),
        StepOp::Unary(u) => unary_block(u, x, dst),
        StepOp::ReducePrecision(f) => {
            map1(x, dst, |v| f32_elem(v, f));
            Ok(())
        }
    }
}

/// `data` (of `len` elements, `len` > 0) repeated from flat position
/// `start` into `buf`.
fn repeat_into(data: &[f32], start: usize, buf: &mut [f32]) {
    let len = data.len();
    if let [x] = data {
        // A broadcast scalar (`0.01 * grad`): one fill, not a copy per element.
        buf.fill(*x);
        return;
    }
    let mut pos = start % len;
    let mut filled = 0;
    while filled < buf.len() {
        let take = (len - pos).min(buf.len() - filled);
        buf[filled..filled + take].copy_from_slice(&data[pos..pos + take]);
        filled += take;
        pos = 0;
    }
}

/// `data[i]` repeated `inner` (> 0) times each, from flat position
/// `start` (of the stretched whole, `data.len() * inner` elements) into
/// `buf`.
fn stretch_into(data: &[f32], inner: usize, start: usize, buf: &mut [f32]) {
    if inner == 1 {
        buf.copy_from_slice(&data[start..start + buf.len()]);
        return;
    }
    let (mut i, mut off) = (start / inner, start % inner);
    let mut filled = 0;
    while filled < buf.len() {
        let take = (inner - off).min(buf.len() - filled);
        buf[filled..filled + take].fill(data[i]);
        filled += take;
        i += 1;
        off = 0;
    }
}

/// Whether an operand of shape `s` stretches into `chain` (see
/// [`Arg::Stretched`]): without its trailing 1s, a prefix of `chain`.
fn stretches(s: &[usize], chain: &[usize]) -> bool {
    let d = s.iter().rposition(|&x| x != 1).map_or(0, |p| p + 1);
    d <= chain.len() && s[..d] == chain[..d]
}

/// Check the chain against its operands; each operand's elements in
/// row-major order. A `None` operand is computed elsewhere and handed to
/// [`eval_piece`] piece by piece as its [`Window`] (a dot's result, see
/// `dot_chain`): it has the chain's shape, and only `Arg::Operand` may
/// read it; its data here is empty.
pub(crate) fn operand_data<'a>(
    chain: &Chain,
    operands: &[Option<&'a HostTensor>],
) -> Result<Vec<Cow<'a, [f32]>>> {
    let n: usize = chain.shape.iter().product();
    let mut data = Vec::with_capacity(operands.len());
    for (k, t) in operands.iter().enumerate() {
        let Some(t) = t else {
            data.push(Cow::Borrowed(&[][..]));
            continue;
        };
        let HostTensor::F32(a) = t else {
            return Err(KernelError::invalid(
                OP,
                format!("operand {k} is {}, not f32", t.elem_type()),
            ));
        };
        data.push(match a.as_slice() {
            Some(s) => Cow::Borrowed(s),
            None => Cow::Owned(a.iter().copied().collect()),
        });
    }
    for (i, step) in chain.steps.iter().enumerate() {
        let arity = match step.op {
            StepOp::Unary(_) | StepOp::ReducePrecision(_) => 1,
            StepOp::Binary(_) => 2,
        };
        if step.args.len() != arity {
            return Err(KernelError::invalid(
                OP,
                format!("step {i} has {} arguments", step.args.len()),
            ));
        }
        for &arg in &step.args {
            match arg {
                Arg::Step(j) if j >= i => {
                    return Err(KernelError::invalid(OP, format!("step {i} reads step {j}")));
                }
                Arg::Operand(k) | Arg::Repeated(k) | Arg::Stretched(k) if k >= operands.len() => {
                    return Err(KernelError::invalid(
                        OP,
                        format!("step {i} reads operand {k} of {}", operands.len()),
                    ));
                }
                Arg::Operand(k)
                    if operands[k].is_some_and(|t| t.shape() != chain.shape.as_slice()) =>
                {
                    return Err(KernelError::invalid(
                        OP,
                        format!(
                            "operand {k} has shape {:?}, the chain {:?}",
                            operands[k].map(|t| t.shape()),
                            chain.shape
                        ),
                    ));
                }
                Arg::Repeated(k) | Arg::Stretched(k) if operands[k].is_none() => {
                    return Err(KernelError::invalid(
                        OP,
                        format!("operand {k} is computed piece by piece: it cannot be broadcast"),
                    ));
                }
                Arg::Repeated(k) => {
                    let s = operands[k].map_or(&[][..], |t| t.shape());
                    let s = &s[s.iter().take_while(|&&d| d == 1).count()..];
                    if s.len() > chain.shape.len()
                        || s != &chain.shape[chain.shape.len() - s.len()..]
                        || (data[k].is_empty() && n > 0)
                    {
                        return Err(KernelError::invalid(
                            OP,
                            format!(
                                "operand {k} of shape {s:?} does not repeat into {:?}",
                                chain.shape
                            ),
                        ));
                    }
                }
                Arg::Stretched(k) => {
                    let s = operands[k].map_or(&[][..], |t| t.shape());
                    if !stretches(s, &chain.shape) || (data[k].is_empty() && n > 0) {
                        return Err(KernelError::invalid(
                            OP,
                            format!(
                                "operand {k} of shape {s:?} does not stretch into {:?}",
                                chain.shape
                            ),
                        ));
                    }
                }
                _ => {}
            }
        }
    }
    if chain.steps.is_empty() {
        return Err(KernelError::invalid(OP, "a chain without steps"));
    }
    Ok(data)
}

/// Compute `chain` on `operands` (f32) in one pass, with `par`'s threads
/// on big results (each takes whole blocks, so the blocks and the bits are
/// those of one thread: see `pieces`).
pub fn eval(chain: &Chain, operands: &[&HostTensor], par: Parallelism) -> Result<HostTensor> {
    let some: Vec<Option<&HostTensor>> = operands.iter().map(|&t| Some(t)).collect();
    let data = operand_data(chain, &some)?;
    let mut out = crate::cpu::alloc::array::<f32>(&chain.shape);
    let out_slice = out
        .as_slice_mut()
        .ok_or_else(|| KernelError::invalid(OP, "a pooled block that is not row-major"))?;
    let failed = std::sync::Mutex::new(None);
    pieces::with_parallelism(par, || {
        pieces::fill_pieces(out_slice, BLOCK, |start, piece| {
            let mut ws = Workspace::new(chain);
            if let Err(e) = eval_piece(chain, &data, None, start, piece, &mut ws) {
                *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
            }
        })
    });
    match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(HostTensor::F32(out)),
    }
}

/// Buffers [`eval_piece`] computes a block's steps in: one per step but
/// the last (which writes into the output), and one per argument slot for
/// repeated and stretched operands. Made once per piece, reused for every
/// call on it.
pub(crate) struct Workspace {
    steps: Vec<Vec<f32>>,
    repeated: Vec<f32>,
}

impl Workspace {
    pub(crate) fn new(chain: &Chain) -> Workspace {
        Workspace {
            steps: vec![vec![0.0f32; BLOCK]; chain.steps.len().saturating_sub(1)],
            repeated: vec![0.0f32; 2 * BLOCK],
        }
    }
}

/// Operand `slot`'s elements `base..base + data.len()` (of the chain's
/// flat positions): the part of an operand computed piece by piece that
/// the piece being evaluated reads.
#[derive(Clone, Copy)]
pub(crate) struct Window<'a> {
    pub slot: usize,
    pub base: usize,
    pub data: &'a [f32],
}

/// The chain's elements `start..start + out.len()` into `out`, block by
/// block. An operand with a `window` is read from it (the window must
/// cover the piece).
pub(crate) fn eval_piece(
    chain: &Chain,
    data: &[Cow<'_, [f32]>],
    window: Option<Window<'_>>,
    first: usize,
    out: &mut [f32],
    ws: &mut Workspace,
) -> Result<()> {
    let steps = chain.steps.len();
    let n: usize = chain.shape.iter().product();
    if ws.steps.len() + 1 < steps {
        return Err(KernelError::invalid(OP, "a workspace for a shorter chain"));
    }
    if let Some(w) = window {
        if first < w.base || first + out.len() > w.base + w.data.len() {
            return Err(KernelError::invalid(
                OP,
                format!("operand {} is not there for this piece", w.slot),
            ));
        }
    }
    let mut done_len = 0;
    while done_len < out.len() {
        let len = BLOCK.min(out.len() - done_len);
        let start = first + done_len;
        for (i, step) in chain.steps.iter().enumerate() {
            let (done, rest) = ws.steps.split_at_mut(i.min(steps - 1));
            let dst: &mut [f32] = if i + 1 == steps {
                &mut out[done_len..done_len + len]
            } else {
                &mut rest[0][..len]
            };
            let (r0, r1) = ws.repeated.split_at_mut(BLOCK);
            let mut slots = [r0, r1].into_iter();
            let arith = match step.op {
                StepOp::Binary(b) => BinaryArith::of_binary(b),
                _ => None,
            };
            let mut args: [Side<'_>; 2] = [Side::Slice(&[]), Side::Slice(&[])];
            if step.args.len() > 2 {
                return Err(KernelError::invalid(OP, "more than two arguments"));
            }
            for (a, &arg) in args.iter_mut().zip(&step.args) {
                let slot = slots
                    .next()
                    .ok_or_else(|| KernelError::invalid(OP, "more than two arguments"))?;
                *a = match arg {
                    Arg::Operand(k) => Side::Slice(match window {
                        Some(w) if w.slot == k => &w.data[start - w.base..start - w.base + len],
                        _ => data[k].get(start..start + len).ok_or_else(|| {
                            KernelError::invalid(OP, format!("operand {k} is not there"))
                        })?,
                    }),
                    Arg::Step(j) => Side::Slice(&done[j][..len]),
                    // A broadcast scalar (`0.01 * grad`) into an arithmetic
                    // op: read as one value, not copied into a block.
                    Arg::Repeated(k) if data[k].len() == 1 && arith.is_some() => {
                        Side::Scalar(data[k][0])
                    }
                    Arg::Repeated(k) => {
                        let buf = &mut slot[..len];
                        repeat_into(&data[k], start, buf);
                        Side::Slice(&*buf)
                    }
                    Arg::Stretched(k) => {
                        let buf = &mut slot[..len];
                        stretch_into(&data[k], n / data[k].len(), start, buf);
                        Side::Slice(&*buf)
                    }
                };
            }
            run_step(step.op, arith, args, dst)?;
        }
        done_len += len;
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::cpu::elementwise::{binary, unary};
    use ndarray::IxDyn;

    /// Pseudo-random f32s in [-3, 3) of `shape` (also `dot_chain`'s tests).
    pub(crate) fn f32s(shape: &[usize], seed: u32) -> HostTensor {
        let n: usize = shape.iter().product();
        let mut s = seed.wrapping_mul(2_654_435_761) | 1;
        let v: Vec<f32> = (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                (s >> 8) as f32 / (1u32 << 24) as f32 * 6.0 - 3.0
            })
            .collect();
        HostTensor::from_vec(shape, v).unwrap()
    }

    pub(crate) fn bits(t: &HostTensor) -> Vec<u64> {
        t.to_f64_vec().iter().map(|v| v.to_bits()).collect()
    }

    #[test]
    fn every_fusible_op_gives_the_bits_of_the_unfused_op() {
        let shape = [3, 1000];
        let (x, y) = (f32s(&shape, 1), f32s(&shape, 2));
        let unaries = [
            UnaryOp::Exp,
            UnaryOp::Log,
            UnaryOp::Tanh,
            UnaryOp::Logistic,
            UnaryOp::Sine,
            UnaryOp::Cosine,
            UnaryOp::Sqrt,
            UnaryOp::Rsqrt,
            UnaryOp::Negate,
            UnaryOp::Abs,
            UnaryOp::Square,
        ];
        for op in unaries {
            assert!(Chain::fusible_unary(op));
            let chain = Chain {
                steps: vec![Step {
                    op: StepOp::Unary(op),
                    args: vec![Arg::Operand(0)],
                }],
                shape: shape.to_vec(),
            };
            let got = eval(&chain, &[&x], Parallelism::None).unwrap();
            assert_eq!(bits(&got), bits(&unary(op, &x).unwrap()), "{op:?}");
        }
        use BinaryOp as B;
        for op in [
            B::Add,
            B::Subtract,
            B::Multiply,
            B::Divide,
            B::Maximum,
            B::Minimum,
            B::Power,
        ] {
            assert!(Chain::fusible_binary(op));
            let chain = Chain {
                steps: vec![Step {
                    op: StepOp::Binary(op),
                    args: vec![Arg::Operand(0), Arg::Operand(1)],
                }],
                shape: shape.to_vec(),
            };
            let got = eval(&chain, &[&x, &y], Parallelism::None).unwrap();
            assert_eq!(bits(&got), bits(&binary(op, &x, &y).unwrap()), "{op:?}");
        }
        let e4m3 = Format::new(4, 3).unwrap();
        let chain = Chain {
            steps: vec![Step {
                op: StepOp::ReducePrecision(e4m3),
                args: vec![Arg::Operand(0)],
            }],
            shape: shape.to_vec(),
        };
        let got = eval(&chain, &[&x], Parallelism::None).unwrap();
        let want = crate::cpu::reduce_precision::reduce_precision(&x, e4m3).unwrap();
        assert_eq!(bits(&got), bits(&want), "reduce_precision");
        assert!(!Chain::fusible_unary(UnaryOp::Floor));
        assert!(!Chain::fusible_binary(B::Atan2));
    }

    #[test]
    fn a_chain_cut_over_threads_gives_the_bits_of_one_thread() {
        // Big enough for several pieces, with a partial last block and a
        // repeated operand that does not divide a piece.
        let shape = [301, 700];
        let d = f32s(&shape, 5);
        let b = f32s(&[700], 6);
        let chain = Chain {
            steps: vec![
                Step {
                    op: StepOp::Binary(BinaryOp::Add),
                    args: vec![Arg::Operand(0), Arg::Repeated(1)],
                },
                Step {
                    op: StepOp::Unary(UnaryOp::Tanh),
                    args: vec![Arg::Step(0)],
                },
                Step {
                    op: StepOp::Binary(BinaryOp::Multiply),
                    args: vec![Arg::Step(1), Arg::Operand(0)],
                },
            ],
            shape: shape.to_vec(),
        };
        let one = eval(&chain, &[&d, &b], Parallelism::None).unwrap();
        for threads in [2, 3, 8] {
            let many = eval(&chain, &[&d, &b], Parallelism::Rayon(threads)).unwrap();
            assert_eq!(bits(&many), bits(&one), "{threads} threads");
        }
        // A failing step fails the whole chain, whichever piece sees it.
        let mut bad = chain.clone();
        bad.steps[1].op = StepOp::Unary(UnaryOp::Floor);
        assert!(!Chain::fusible_unary(UnaryOp::Floor));
        assert!(eval(&bad, &[&d, &b], Parallelism::Rayon(3)).is_err());
    }

    #[test]
    fn a_bias_tanh_chain_matches_its_ops_one_by_one() {
        // tanh(d + broadcast(b)) * 2 - d, over several blocks and a partial one.
        let shape = [5, 700];
        let d = f32s(&shape, 3);
        let b = f32s(&[700], 4);
        let two = HostTensor::from_vec(&[], vec![2.0f32]).unwrap();
        let chain = Chain {
            steps: vec![
                Step {
                    op: StepOp::Binary(BinaryOp::Add),
                    args: vec![Arg::Operand(0), Arg::Repeated(1)],
                },
                Step {
                    op: StepOp::Unary(UnaryOp::Tanh),
                    args: vec![Arg::Step(0)],
                },
                Step {
                    op: StepOp::Binary(BinaryOp::Multiply),
                    args: vec![Arg::Step(1), Arg::Repeated(2)],
                },
                Step {
                    op: StepOp::Binary(BinaryOp::Subtract),
                    args: vec![Arg::Step(2), Arg::Operand(0)],
                },
            ],
            shape: shape.to_vec(),
        };
        let got = eval(&chain, &[&d, &b, &two], Parallelism::None).unwrap();
        let bb = HostTensor::F32(
            b.array::<f32>()
                .unwrap()
                .broadcast(IxDyn(&shape))
                .unwrap()
                .to_owned(),
        );
        let tt = HostTensor::F32(
            two.array::<f32>()
                .unwrap()
                .broadcast(IxDyn(&shape))
                .unwrap()
                .to_owned(),
        );
        let a = binary(BinaryOp::Add, &d, &bb).unwrap();
        let t = unary(UnaryOp::Tanh, &a).unwrap();
        let m = binary(BinaryOp::Multiply, &t, &tt).unwrap();
        let want = binary(BinaryOp::Subtract, &m, &d).unwrap();
        assert_eq!(bits(&got), bits(&want));
        // The bias as JAX broadcasts it, 1x700 (leading 1s repeat alike),
        // and a 2x700 operand, which does not repeat into 5x700.
        let b1 = HostTensor::from_vec(
            &[1, 1, 700],
            b.to_f64_vec().iter().map(|&v| v as f32).collect(),
        )
        .unwrap();
        let got1 = eval(&chain, &[&d, &b1, &two], Parallelism::None).unwrap();
        assert_eq!(bits(&got1), bits(&want));
        let b2 = f32s(&[2, 700], 5);
        assert!(eval(&chain, &[&d, &b2, &two], Parallelism::None).is_err());
    }

    /// `(x - s(m)) exp / s(v)` times `s(m) + s(v)`, `s` stretching
    /// operands 1 and 2 (of shape `small`) into `shape`.
    fn stretched_chain(shape: &[usize]) -> Chain {
        let b = |op, args| Step {
            op: StepOp::Binary(op),
            args,
        };
        Chain {
            steps: vec![
                b(BinaryOp::Subtract, vec![Arg::Operand(0), Arg::Stretched(1)]),
                Step {
                    op: StepOp::Unary(UnaryOp::Exp),
                    args: vec![Arg::Step(0)],
                },
                b(BinaryOp::Divide, vec![Arg::Step(1), Arg::Stretched(2)]),
                b(BinaryOp::Add, vec![Arg::Stretched(1), Arg::Stretched(2)]),
                b(BinaryOp::Multiply, vec![Arg::Step(2), Arg::Step(3)]),
            ],
            shape: shape.to_vec(),
        }
    }

    #[test]
    fn stretched_operands_give_the_bits_of_broadcast_then_op() {
        use crate::cpu::shape_ops::broadcast_in_dim;
        use meshrun_compiler::ir::{ElemType, TensorType};
        // (operand, chain): inner sizes above and below BLOCK and not
        // dividing it, trailing size-1 operand dims, partial blocks, inner
        // 1 (the whole shape), a scalar, and two big enough to be cut into
        // pieces over threads.
        let cases: [(&[usize], &[usize]); 9] = [
            (&[3, 5], &[3, 5, 2048]),
            (&[3, 5], &[3, 5, 1500]),
            (&[7, 1], &[7, 300]),
            (&[13], &[13, 17, 11]),
            (&[2, 1, 1], &[2, 3, 1]),
            (&[40, 50], &[40, 50]),
            (&[], &[3, 700]),
            (&[16, 64, 1], &[16, 64, 77]),
            (&[9], &[9, 9001]),
        ];
        for (seed, (small, shape)) in cases.into_iter().enumerate() {
            let seed = seed as u32 * 3;
            let x = f32s(shape, seed + 1);
            let m = f32s(small, seed + 2);
            let v = f32s(small, seed + 3);
            let ty = TensorType::new(
                shape.iter().map(|&d| d as i64).collect::<Vec<_>>(),
                ElemType::F32,
            );
            let dims: Vec<i64> = (0..small.len() as i64).collect();
            let mb = broadcast_in_dim(&m, &dims, &ty).unwrap();
            let vb = broadcast_in_dim(&v, &dims, &ty).unwrap();
            let s = binary(BinaryOp::Subtract, &x, &mb).unwrap();
            let e = unary(UnaryOp::Exp, &s).unwrap();
            let q = binary(BinaryOp::Divide, &e, &vb).unwrap();
            let a = binary(BinaryOp::Add, &mb, &vb).unwrap();
            let want = bits(&binary(BinaryOp::Multiply, &q, &a).unwrap());
            let chain = stretched_chain(shape);
            for par in [Parallelism::None, Parallelism::Rayon(3)] {
                let got = eval(&chain, &[&x, &m, &v], par).unwrap();
                assert_eq!(got.shape(), shape);
                assert_eq!(bits(&got), want, "{small:?} into {shape:?}, {par:?}");
            }
        }
    }

    #[test]
    fn stretched_operands_that_are_no_prefix_are_errors() {
        let shape = [4, 6, 5];
        let chain = stretched_chain(&shape);
        let x = f32s(&shape, 1);
        // A suffix, a middle block, a transpose, one too many elements, a
        // size-1 dim before a repeated one, an operand past the end.
        for small in [
            &[6, 5][..],
            &[1, 6, 1],
            &[6, 4],
            &[5],
            &[4, 1, 5],
            &[4, 6, 5, 2],
        ] {
            let m = f32s(small, 2);
            assert!(
                eval(&chain, &[&x, &m, &m], Parallelism::None).is_err(),
                "{small:?}"
            );
        }
        let m = f32s(&[4, 6], 2);
        assert!(eval(&chain, &[&x, &m, &m], Parallelism::None).is_ok());
        assert!(eval(&chain, &[&x, &m], Parallelism::None).is_err());
        let i = HostTensor::from_vec(&[4, 6], vec![1i32; 24]).unwrap();
        assert!(eval(&chain, &[&x, &i, &m], Parallelism::None).is_err());
    }

    #[test]
    fn malformed_chains_are_errors() {
        let x = f32s(&[4], 1);
        let bad_step = Chain {
            steps: vec![Step {
                op: StepOp::Unary(UnaryOp::Tanh),
                args: vec![Arg::Step(0)],
            }],
            shape: vec![4],
        };
        assert!(eval(&bad_step, &[&x], Parallelism::None).is_err());
        let bad_shape = Chain {
            steps: vec![Step {
                op: StepOp::Unary(UnaryOp::Tanh),
                args: vec![Arg::Operand(0)],
            }],
            shape: vec![5],
        };
        assert!(eval(&bad_shape, &[&x], Parallelism::None).is_err());
        let bad_repeat = Chain {
            steps: vec![Step {
                op: StepOp::Binary(BinaryOp::Add),
                args: vec![Arg::Operand(0), Arg::Repeated(1)],
            }],
            shape: vec![4],
        };
        assert!(eval(&bad_repeat, &[&x, &f32s(&[3], 2)], Parallelism::None).is_err());
        let i = HostTensor::from_vec(&[4], vec![1i32; 4]).unwrap();
        assert!(eval(&bad_shape, &[&i], Parallelism::None).is_err());
        let unfusible = Chain {
            steps: vec![Step {
                op: StepOp::Unary(UnaryOp::Floor),
                args: vec![Arg::Operand(0)],
            }],
            shape: vec![4],
        };
        assert!(eval(&unfusible, &[&x], Parallelism::None).is_err());
    }
}
