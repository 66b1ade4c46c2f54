//! Whether a reduction body is commutative and associative on sample
//! values: the order a sharded reduce combines its elements in (local
//! partial results first, then across devices) is not the unsharded one,
//! and StableHLO leaves a reduce's result implementation-defined when its
//! body is neither (the spec only fixes the tree's leaves, not its shape).
//! A `--check` failure on such a program is a property of the program,
//! not a partitioning bug, and is named as such.
//!
//! The test is empirical: every pair and triple of a few sample tuples,
//! evaluated over whole tensors at once ([`eval_computation`]). The samples
//! are small integers (exact in every element type, so float addition and
//! multiplication are exactly associative on them) with ties in the first
//! input and distinct values in the others, which is what argmax-style
//! comparators (value, index) need to show a swapped select. A body that
//! passes may still be order-dependent on other values (float rounding,
//! which `--check` judges against f64 instead); one that fails is surely so.
//!
//! NaN is a second, separate question: JAX's argmax comparator keeps
//! whichever of two NaNs is on its left, so it is order-dependent exactly
//! when its input holds several NaNs. [`order_independent`] with `nan`
//! adds NaN to the first input's samples; callers ask it only when the
//! program can hold NaN, so that every argmax is not suspected on data
//! without any.

use meshrun_compiler::diag::SrcPos;
use meshrun_compiler::ir::ops::constant::Constant;
use meshrun_compiler::ir::{Computation, ElemType, Function, OpKind, Scalar, TensorType};

use crate::cpu::computation::eval_computation;
use crate::error::Result;
use crate::tensor::HostTensor;

/// The first input's values (ties included); the others count up.
const FIRST_INPUT: [f64; 6] = [2.0, -1.0, 2.0, 0.0, 3.0, 1.0];

/// Sample tuple `t`'s value of input `k` of type `elem`, out of `n`
/// tuples (with `nan`, the first input's last two are NaN).
fn sample(t: usize, k: usize, elem: ElemType, n: usize, nan: bool) -> f64 {
    let v = if k == 0 && nan && elem.is_float() && t + 2 >= n {
        f64::NAN
    } else if k == 0 {
        FIRST_INPUT[t % FIRST_INPUT.len()]
    } else {
        (t + k) as f64
    };
    match elem {
        ElemType::I1 => (v as i64 % 2 != 0) as i64 as f64,
        e if e.is_unsigned() => v.abs(),
        _ => v,
    }
}

/// How the sample tuples are drawn: how many, and whether with NaN.
#[derive(Clone, Copy)]
struct Samples {
    n: usize,
    nan: bool,
}

/// The tensors of inputs `0..elems.len()` over tuples `index(j)` for
/// `j < count`.
fn tuples(
    elems: &[ElemType],
    s: Samples,
    count: usize,
    index: impl Fn(usize) -> usize,
) -> Result<Vec<HostTensor>> {
    elems
        .iter()
        .enumerate()
        .map(|(k, &e)| {
            let data: Vec<f64> = (0..count)
                .map(|j| sample(index(j), k, e, s.n, s.nan))
                .collect();
            HostTensor::from_vec(&[count], data)?.convert(e)
        })
        .collect()
}

/// `body(a, b)` for tuples `a` and `b` (each one tensor per input).
fn apply(body: &Computation, a: &[HostTensor], b: &[HostTensor]) -> Result<Vec<HostTensor>> {
    let args: Vec<&HostTensor> = a.iter().chain(b).collect();
    eval_computation(body, &args)
}

fn same(x: &[HostTensor], y: &[HostTensor]) -> bool {
    let eq = |p: f64, q: f64| p == q || (p.is_nan() && q.is_nan());
    x.len() == y.len()
        && x.iter().zip(y).all(|(s, t)| {
            let (s, t) = (s.to_f64_vec(), t.to_f64_vec());
            s.len() == t.len() && s.iter().zip(&t).all(|(&p, &q)| eq(p, q))
        })
}

/// Whether `body`, a reduction body over inputs of element types `elems`
/// (arguments: the accumulators, then the new elements), is commutative
/// and associative on the sample tuples (with `nan`, NaN among the first
/// input's). `None` when the body cannot be evaluated on them (its
/// argument types are not `elems` twice).
pub fn order_independent(body: &Computation, elems: &[ElemType], nan: bool) -> Option<bool> {
    let f = body.func();
    let wanted: Vec<TensorType> = elems
        .iter()
        .chain(elems)
        .map(|&e| TensorType::new(vec![], e))
        .collect();
    let args: Vec<TensorType> = f.args.iter().map(|&v| f.ty(v).clone()).collect();
    if elems.is_empty() || args != wanted {
        return None;
    }
    let n = FIRST_INPUT.len() + if nan { 2 } else { 0 };
    let s = Samples { n, nan };
    let check = || -> Result<bool> {
        // Pairs (i, j) and triples (i, j, l) as flat indices.
        let (pairs, triples) = (n * n, n * n * n);
        let a2 = tuples(elems, s, pairs, |p| p / n)?;
        let b2 = tuples(elems, s, pairs, |p| p % n)?;
        if !same(&apply(body, &a2, &b2)?, &apply(body, &b2, &a2)?) {
            return Ok(false);
        }
        let a3 = tuples(elems, s, triples, |p| p / (n * n))?;
        let b3 = tuples(elems, s, triples, |p| p / n % n)?;
        let c3 = tuples(elems, s, triples, |p| p % n)?;
        let left = apply(body, &apply(body, &a3, &b3)?, &c3)?;
        let right = apply(body, &a3, &apply(body, &b3, &c3)?)?;
        Ok(same(&left, &right))
    };
    check().ok()
}

/// The first `reduce` or `reduce_window` of `f` (regions included) whose
/// body fails [`order_independent`] (with `nan`, on samples holding NaN):
/// where a sharded run may rightly differ from the unsharded one.
pub fn order_dependent_reduce(f: &Function, nan: bool) -> Option<SrcPos> {
    f.ops.iter().find_map(|op| {
        let body = match &op.kind {
            OpKind::Reduce(r) => &r.body,
            OpKind::ReduceWindow(r) => &r.body,
            _ => return None,
        };
        let inputs = op.operands.get(..op.operands.len() / 2)?;
        let elems: Vec<ElemType> = inputs.iter().map(|&v| f.ty(v).elem).collect();
        (order_independent(body, &elems, nan) == Some(false)).then_some(op.pos)
    })
}

/// Whether `f` writes a NaN constant (regions included): then its reduces
/// may see NaN whatever its inputs.
pub fn has_nan_constant(f: &Function) -> bool {
    f.ops.iter().any(|op| match &op.kind {
        OpKind::Constant(Constant { value: lit, .. }) => {
            (0..lit.stored_len()).any(|i| matches!(lit.get(i), Scalar::Float(x) if x.is_nan()))
        }
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use meshrun_compiler::text::parse_module;
    use meshrun_compiler::OpKind as K;

    /// The body of the first reduce in `src` and its inputs' types.
    fn body_of(src: &str) -> (Computation, Vec<ElemType>) {
        let m = parse_module(src).unwrap();
        let f = m.func("f").unwrap();
        let (_, op) = f
            .ops_in_order()
            .find(|(_, op)| matches!(op.kind, K::Reduce(_)))
            .unwrap();
        let K::Reduce(r) = &op.kind else {
            unreachable!()
        };
        let n = op.operands.len() / 2;
        let elems = op.operands[..n].iter().map(|&v| f.ty(v).elem).collect();
        (r.body.clone(), elems)
    }

    fn one_input(op: &str, elem: &str) -> String {
        format!(
            "func.func @f(%x: tensor<8x{elem}>, %i: tensor<{elem}>) -> tensor<{elem}> {{
  %r = stablehlo.reduce(%x init: %i) across dimensions = [0] : (tensor<8x{elem}>, tensor<{elem}>) -> tensor<{elem}>
   reducer(%a: tensor<{elem}>, %b: tensor<{elem}>)  {{
    %s = stablehlo.{op} %a, %b : tensor<{elem}>
    stablehlo.return %s : tensor<{elem}>
  }}
  return %r : tensor<{elem}>
}}"
        )
    }

    /// JAX's argmax reducer; `swapped` exchanges the select's arms of the
    /// index (the fuzzer's mutation: keeps the other side's index).
    fn argmax(swapped: bool) -> String {
        let (x, y) = if swapped {
            ("%c", "%a1")
        } else {
            ("%a1", "%c")
        };
        format!(
            "func.func @f(%v: tensor<8xf32>, %i: tensor<8xi32>, %v0: tensor<f32>, %i0: tensor<i32>) -> (tensor<f32>, tensor<i32>) {{
  %r:2 = stablehlo.reduce(%v init: %v0), (%i init: %i0) across dimensions = [0] : (tensor<8xf32>, tensor<8xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
   reducer(%a0: tensor<f32>, %b0: tensor<f32>) (%a1: tensor<i32>, %c: tensor<i32>)  {{
    %gt = stablehlo.compare  GT, %a0, %b0,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %ne = stablehlo.compare  NE, %a0, %a0,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %or = stablehlo.or %gt, %ne : tensor<i1>
    %eq = stablehlo.compare  EQ, %a0, %b0,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %lt = stablehlo.compare  LT, %a1, %c,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %and = stablehlo.and %eq, %lt : tensor<i1>
    %pick = stablehlo.or %or, %and : tensor<i1>
    %v1 = stablehlo.select %or, %a0, %b0 : tensor<i1>, tensor<f32>
    %i1 = stablehlo.select %pick, {x}, {y} : tensor<i1>, tensor<i32>
    stablehlo.return %v1, %i1 : tensor<f32>, tensor<i32>
  }}
  return %r#0, %r#1 : tensor<f32>, tensor<i32>
}}"
        )
    }

    #[test]
    fn the_walker_names_the_order_dependent_reduce() {
        let find = |src: &str| {
            let m = parse_module(src).unwrap();
            order_dependent_reduce(m.func("f").unwrap(), false).map(|p| p.line)
        };
        assert_eq!(find(&argmax(false)), None);
        assert_eq!(find(&argmax(true)), Some(2));
        assert_eq!(find(&one_input("add", "f32")), None);
        assert_eq!(find(&one_input("subtract", "f32")), Some(2));
    }

    fn laws(src: &str) -> Option<bool> {
        let (body, elems) = body_of(src);
        order_independent(&body, &elems, false)
    }

    #[test]
    fn sums_products_and_extrema_are_order_independent() {
        for op in ["add", "multiply", "maximum", "minimum"] {
            for elem in ["f32", "bf16", "i32", "ui8"] {
                assert_eq!(laws(&one_input(op, elem)), Some(true), "{op} on {elem}");
            }
        }
        for op in ["and", "or", "xor"] {
            assert_eq!(laws(&one_input(op, "i1")), Some(true), "{op}");
        }
    }

    #[test]
    fn subtraction_division_and_power_are_not() {
        for op in ["subtract", "divide", "power"] {
            assert_eq!(laws(&one_input(op, "f32")), Some(false), "{op}");
        }
    }

    /// JAX's argmax keeps the left of two NaNs: order-dependent on data
    /// with several NaNs (fuzz seed 126678: masked logits set to NaN, not
    /// -inf), and only there; sums and maxima stay independent.
    #[test]
    fn argmax_depends_on_order_only_with_nans() {
        let (body, elems) = body_of(&argmax(false));
        assert_eq!(order_independent(&body, &elems, true), Some(false));
        assert_eq!(order_independent(&body, &elems, false), Some(true));
        for op in ["add", "maximum", "minimum"] {
            let (body, elems) = body_of(&one_input(op, "f32"));
            assert_eq!(order_independent(&body, &elems, true), Some(true), "{op}");
        }
        let (body, elems) = body_of(&one_input("add", "i32"));
        assert_eq!(order_independent(&body, &elems, true), Some(true));
    }

    #[test]
    fn nan_constants_are_found() {
        let m = parse_module(&one_input("add", "f32")).unwrap();
        assert!(!has_nan_constant(m.func("f").unwrap()));
        let src = one_input("add", "f32").replace(
            "  %r = ",
            "  %n = stablehlo.constant dense<0x7FC00000> : tensor<f32>\n  %r = ",
        );
        let m = parse_module(&src).unwrap();
        assert!(has_nan_constant(m.func("f").unwrap()));
    }

    #[test]
    fn argmax_reducer_passes_and_its_swapped_select_fails() {
        assert_eq!(laws(&argmax(false)), Some(true));
        assert_eq!(laws(&argmax(true)), Some(false));
    }
}
