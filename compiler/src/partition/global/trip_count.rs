//! The trip count of a counted `stablehlo.while`: the loop `fori_loop` and
//! `scan` lower to, an integer counter starting at a constant, stepped by
//! a constant, compared with a constant bound:
//!
//! ```text
//! %r:2 = stablehlo.while(%i = %c0, %x = ...) cond {
//!   %p = stablehlo.compare LT, %i, %c8     // or GT %c8, %i; LE; GE
//!   stablehlo.return %p
//! } do {
//!   %i1 = stablehlo.add %i, %c1            // or add %c1, %i
//!   stablehlo.return %i1, ...
//! }
//! ```
//!
//! Anything else (a bound computed from data, a counter changed some other
//! way) has no known trip count; the cost model then counts one iteration
//! and says so.

use crate::ir::ops::compare::Compare;
use crate::ir::ops::constant::Constant;
use crate::ir::{
    BinaryOp, CompareDirection, DenseLiteral, Function, OpData, OpKind, Scalar, Value, ValueDef,
};

/// The number of times the body of `op` (a `stablehlo.while`) runs, when
/// its bounds are constants.
pub fn counted_trips(f: &Function, op: &OpData) -> Option<i64> {
    let [cond, body] = &op.regions[..] else {
        return None;
    };
    let &[pred] = &cond.returns[..] else {
        return None;
    };
    let cmp = defining_op(f, pred)?;
    let OpKind::Compare(Compare { direction, .. }) = &cmp.kind else {
        return None;
    };
    let &[a, b] = &cmp.operands[..] else {
        return None;
    };
    let arg = |v: Value| cond.args.iter().position(|&x| x == v);
    // Normalise to `counter <dir> bound`.
    let (k, bound, dir) = match (arg(a), arg(b)) {
        (Some(k), None) => (k, constant_int(f, b)?, *direction),
        (None, Some(k)) => (k, constant_int(f, a)?, flip(*direction)?),
        _ => return None,
    };
    let start = constant_int(f, *op.operands.get(k)?)?;
    let step = counter_step(f, body.args.get(k).copied()?, *body.returns.get(k)?)?;
    let trips = match (dir, step > 0) {
        (CompareDirection::Lt, true) => div_ceil(bound - start, step),
        (CompareDirection::Le, true) => div_ceil(bound - start + 1, step),
        (CompareDirection::Gt, false) => div_ceil(start - bound, -step),
        (CompareDirection::Ge, false) => div_ceil(start - bound + 1, -step),
        _ => return None,
    };
    Some(trips.max(0))
}

fn flip(d: CompareDirection) -> Option<CompareDirection> {
    Some(match d {
        CompareDirection::Lt => CompareDirection::Gt,
        CompareDirection::Le => CompareDirection::Ge,
        CompareDirection::Gt => CompareDirection::Lt,
        CompareDirection::Ge => CompareDirection::Le,
        _ => return None,
    })
}

fn div_ceil(a: i64, b: i64) -> i64 {
    if a <= 0 {
        0
    } else {
        (a + b - 1) / b
    }
}

fn defining_op(f: &Function, v: Value) -> Option<&OpData> {
    match f.value(v).def {
        ValueDef::Result { op, .. } => f.ops.get(op.index()),
        _ => None,
    }
}

/// The value of an integer scalar constant.
fn constant_int(f: &Function, v: Value) -> Option<i64> {
    let op = defining_op(f, v)?;
    let OpKind::Constant(Constant { value: lit, .. }) = &op.kind else {
        return None;
    };
    if f.ty(v).num_elements() != 1 {
        return None;
    }
    let value = match lit {
        DenseLiteral::Splat(s) => *s,
        DenseLiteral::Elements(e) => *e.first()?,
    };
    match value {
        Scalar::Int(i) => Some(i),
        _ => None,
    }
}

/// The constant `s` of `next = counter + s` (nonzero).
fn counter_step(f: &Function, counter: Value, next: Value) -> Option<i64> {
    let op = defining_op(f, next)?;
    let OpKind::Binary(BinaryOp::Add) = op.kind else {
        return None;
    };
    let &[a, b] = &op.operands[..] else {
        return None;
    };
    let step = if a == counter {
        constant_int(f, b)?
    } else if b == counter {
        constant_int(f, a)?
    } else {
        return None;
    };
    (step != 0).then_some(step)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parse_module;

    fn trips(cond: &str, init: i64, step: &str) -> Option<i64> {
        let text = format!(
            r#"func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {{
  %c = stablehlo.constant dense<{init}> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c, %y = %x) : tensor<i32>, tensor<4xf32>
  cond {{
    %n = stablehlo.constant dense<8> : tensor<i32>
    %p = {cond} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }} do {{
    %s = stablehlo.constant dense<{step}> : tensor<i32>
    %i1 = stablehlo.add %i, %s : tensor<i32>
    stablehlo.return %i1, %y : tensor<i32>, tensor<4xf32>
  }}
  return %r#1 : tensor<4xf32>
}}"#
        );
        let m = parse_module(&text).unwrap();
        let f = &m.funcs[0];
        let (_, op) = f
            .ops_in_order()
            .find(|(_, o)| matches!(o.kind, OpKind::While(_)))
            .unwrap();
        counted_trips(f, op)
    }

    #[test]
    fn fori_loop_bounds() {
        assert_eq!(
            trips("stablehlo.compare LT, %i, %n, SIGNED", 0, "1"),
            Some(8)
        );
        assert_eq!(
            trips("stablehlo.compare LT, %i, %n, SIGNED", 3, "2"),
            Some(3)
        );
        assert_eq!(
            trips("stablehlo.compare LE, %i, %n, SIGNED", 0, "1"),
            Some(9)
        );
        assert_eq!(
            trips("stablehlo.compare GT, %n, %i, SIGNED", 0, "1"),
            Some(8)
        );
        assert_eq!(
            trips("stablehlo.compare LT, %i, %n, SIGNED", 9, "1"),
            Some(0)
        );
        assert_eq!(
            trips("stablehlo.compare GT, %i, %n, SIGNED", 12, "-1"),
            Some(4)
        );
        // Counting the wrong way never ends: not a counted loop.
        assert_eq!(trips("stablehlo.compare LT, %i, %n, SIGNED", 0, "-1"), None);
        assert_eq!(trips("stablehlo.compare NE, %i, %n, SIGNED", 0, "1"), None);
    }
}
