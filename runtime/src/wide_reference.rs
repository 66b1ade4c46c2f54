//! The reference in f64: the program with every float tensor widened to
//! f64 (`meshrun_compiler::ir::widen`), run by the reference interpreter
//! on the inputs converted exactly to f64. `run --check` and the
//! differential test consult it when a sharded float output differs from
//! the unsharded f32 one by more than the plain tolerance: it tells
//! rounding (both f32 runs equally far from it) from a bug (see
//! `compare::judge_against_f64`).

use meshrun_compiler::ir::widen::widen_floats;
use meshrun_compiler::ir::{ElemType, Module};
use meshrun_kernels::{HostTensor, Parallelism};

use crate::reference::run_function_limited;

/// `func` of `module` computed in f64 on `inputs` (float inputs widened
/// exactly); an error saying why when the program cannot be widened (it
/// reinterprets float bits) or does not run (a `while` loop stops after
/// `max_loop_iterations`, when given: f64 rounding may change a
/// data-dependent trip count).
pub fn run_in_f64(
    module: &Module,
    func: &str,
    inputs: &[HostTensor],
    par: Parallelism,
    max_loop_iterations: Option<u64>,
) -> Result<Vec<HostTensor>, String> {
    let wide = widen_floats(module).map_err(|e| format!("{}: {}", e.pos, e.message))?;
    // Exact: every f32/f16/bf16 value is an f64.
    let inputs = inputs
        .iter()
        .map(|t| {
            if t.elem_type().is_float() {
                t.convert(ElemType::F64).map_err(|e| e.to_string())
            } else {
                Ok(t.clone())
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    run_function_limited(&wide, func, &inputs, par, max_loop_iterations)
        .map_err(|e| format!("the f64 run failed: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::run_function;
    use meshrun_compiler::text::parse_module;

    /// 1e8 + 1 - 1e8 is 0 in f32 and 1 in f64.
    #[test]
    fn the_f64_run_keeps_what_f32_rounds_away() {
        let text = r#"
func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [0] : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}
"#;
        let m = parse_module(text).unwrap();
        let x = HostTensor::from_vec(&[3], vec![1e8f32, 1.0, -1e8]).unwrap();
        let narrow = run_function(&m, "main", std::slice::from_ref(&x), Parallelism::None).unwrap();
        assert_eq!(narrow[0].to_f64_vec(), vec![0.0]);
        let wide = run_in_f64(&m, "main", &[x], Parallelism::None, None).unwrap();
        assert_eq!(wide[0].elem_type(), ElemType::F64);
        assert_eq!(wide[0].to_f64_vec(), vec![1.0]);
    }
}
