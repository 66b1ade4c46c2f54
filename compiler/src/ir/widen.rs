//! The same program computed in f64: every f32/f16/bf16 tensor of a module
//! (arguments, results, every value, the scalar bodies of reductions and
//! sorts) becomes f64. `run --check` and the differential test run this
//! copy as the accurate reference against which both the unsharded and the
//! sharded f32 runs are measured: on an ill-conditioned program the order
//! of summation alone moves the f32 result, and only a reference more
//! precise than both tells rounding from a bug.
//!
//! Constants need no change: literals hold each element's exact value
//! (see `literal.rs`). Ops whose meaning depends on the width of a float
//! (`bitcast_convert` to or from a float, `chlo.next_after`) cannot be
//! widened; the module is then refused with the op's name and position.

use crate::diag::SrcPos;
use crate::ir::{BinaryOp, ElemType, Function, Module, OpKind, TensorType};

/// Why a module cannot be computed in f64.
#[derive(Debug, Clone, PartialEq)]
pub struct NotWidenable {
    pub pos: SrcPos,
    pub message: String,
}

/// `module` with every float tensor in f64.
pub fn widen_floats(module: &Module) -> Result<Module, NotWidenable> {
    let mut wide = module.clone();
    for f in &mut wide.funcs {
        widen_function(f)?;
    }
    Ok(wide)
}

fn widen_type(t: &mut TensorType) {
    if t.elem.is_float() {
        t.elem = ElemType::F64;
    }
}

fn widen_function(f: &mut Function) -> Result<(), NotWidenable> {
    for op in &f.ops {
        let refuse = |what: &str| NotWidenable {
            pos: op.pos,
            message: format!("{} {what} cannot be computed in f64", op.kind.name()),
        };
        match &op.kind {
            OpKind::BitcastConvert(_) => {
                let float = op
                    .operands
                    .iter()
                    .chain(&op.results)
                    .any(|&v| f.ty(v).elem.is_float());
                if float {
                    return Err(refuse("reinterprets float bits: it"));
                }
            }
            OpKind::Binary(BinaryOp::NextAfter) => {
                return Err(refuse("steps by one ulp of its type: it"));
            }
            _ => {}
        }
    }
    for v in &mut f.values {
        widen_type(&mut v.ty);
    }
    for t in &mut f.result_types {
        widen_type(t);
    }
    for op in &mut f.ops {
        let pos = op.pos;
        let name = op.kind.name();
        let Some(def) = op.kind.def_mut() else {
            continue;
        };
        let expected = def.computations().len();
        let bodies = def.computations_mut();
        if bodies.len() != expected {
            // A definition that forgot `computations_mut`: refusing is
            // better than a reference whose bodies stay f32.
            return Err(NotWidenable {
                pos,
                message: format!("{name}'s bodies are not reachable for widening"),
            });
        }
        for body in bodies {
            widen_function(&mut body.0)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parse_module;

    #[test]
    fn every_float_value_and_body_becomes_f64() {
        let text = r#"
func.func @main(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<f32>, tensor<4xi32>) {
  %c = stablehlo.constant dense<0.1> : tensor<f32>
  %r = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  return %r, %i : tensor<f32>, tensor<4xi32>
}
"#;
        let m = parse_module(text).unwrap();
        let w = widen_floats(&m).unwrap();
        let f = &w.funcs[0];
        assert!(f.values.iter().all(|v| v.ty.elem != ElemType::F32));
        assert_eq!(f.result_types[0].elem, ElemType::F64);
        assert_eq!(f.result_types[1].elem, ElemType::I32);
        assert!(crate::ir::verify_module(&w).is_ok());
    }

    #[test]
    fn the_bodies_of_defined_ops_become_f64() {
        let text = r#"
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r = "stablehlo.sort"(%x) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) : (tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}
"#;
        let w = widen_floats(&parse_module(text).unwrap()).unwrap();
        let op = &w.funcs[0].ops[0];
        let body = op.kind.def().unwrap().computations()[0];
        assert!(body.arg_types().iter().all(|t| t.elem == ElemType::F64));
        assert!(crate::ir::verify_module(&w).is_ok());
    }

    #[test]
    fn float_bit_casts_are_refused_with_their_position() {
        let text = r#"
func.func @main(%x: tensor<4xui32>) -> tensor<4xf32> {
  %r = stablehlo.bitcast_convert %x : (tensor<4xui32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"#;
        let m = parse_module(text).unwrap();
        let e = widen_floats(&m).unwrap_err();
        assert_eq!(e.pos.line, 3, "{e:?}");
        assert!(e.message.contains("bitcast_convert"), "{e:?}");
    }
}
