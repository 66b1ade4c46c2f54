//! Padding must never change a result (SPEC §6). Two programs that are
//! wrong unless the padding of non-divisible dimensions is masked before a
//! reduction: `exp` then `sum` (exp turns the zero padding into ones) and
//! `max` over negative values (zero padding would win). Each runs sharded
//! and must match the unsharded reference; then the same device program
//! with its masks disabled must NOT match, which shows the test really
//! depends on the masks.

use meshrun_compiler::partition::{DeviceProgram, Instr, PerDevice};
use meshrun_compiler::text::parse_module;
use meshrun_compiler::Module;
use meshrun_kernels::{HostTensor, Parallelism};
use meshrun_runtime::compare::mismatch;
use meshrun_runtime::pipeline::compile;
use meshrun_runtime::random_inputs::random_inputs;
use meshrun_runtime::reference::run_function;
use meshrun_runtime::{CpuBackend, ExecOptions, Executor};

/// 7 rows on 4 shards (blocks of 2, one padded row), 5 columns on 2 (blocks
/// of 3, one padded column).
const EXP_SUM: &str = r#"
module @exp_sum {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func public @main(%arg0: tensor<7x5xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<f32>, tensor<5xf32>, tensor<7xf32>) {
    %0 = stablehlo.exponential %arg0 : tensor<7x5xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<7x5xf32>, tensor<f32>) -> tensor<f32>
    %2 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<7x5xf32>, tensor<f32>) -> tensor<5xf32>
    %3 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<7x5xf32>, tensor<f32>) -> tensor<7xf32>
    return %1, %2, %3 : tensor<f32>, tensor<5xf32>, tensor<7xf32>
  }
}
"#;

/// Every value is below -1, so a zero in the padding would be the max.
const MAX_NEGATIVE: &str = r#"
module @max_negative {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func public @main(%arg0: tensor<13x7xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<f32>, tensor<7xf32>) {
    %0 = stablehlo.abs %arg0 : tensor<13x7xf32>
    %one = stablehlo.constant dense<1.000000e+00> : tensor<13x7xf32>
    %1 = stablehlo.add %0, %one : tensor<13x7xf32>
    %2 = stablehlo.negate %1 : tensor<13x7xf32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %3 = stablehlo.reduce(%2 init: %cst) applies stablehlo.maximum across dimensions = [0, 1] : (tensor<13x7xf32>, tensor<f32>) -> tensor<f32>
    %4 = stablehlo.reduce(%2 init: %cst) applies stablehlo.maximum across dimensions = [0] : (tensor<13x7xf32>, tensor<f32>) -> tensor<7xf32>
    return %3, %4 : tensor<f32>, tensor<7xf32>
  }
}
"#;

fn inputs_for(module: &Module) -> Vec<HostTensor> {
    let f = module.func("main").unwrap();
    let types: Vec<_> = f.args.iter().map(|&a| f.ty(a).clone()).collect();
    random_inputs(&types, 42).unwrap()
}

fn run(program: &DeviceProgram, inputs: &[HostTensor]) -> Vec<HostTensor> {
    Executor::new(program)
        .unwrap()
        .run_global(&CpuBackend::new(), inputs, &ExecOptions::default())
        .unwrap()
}

/// The same program with every mask made a copy (nothing is past `valid`).
fn without_masks(program: &DeviceProgram) -> (DeviceProgram, usize) {
    let mut p = program.clone();
    let mut n = 0;
    for instr in &mut p.instrs {
        if let Instr::Mask { valid, .. } = instr {
            *valid = PerDevice(vec![i64::MAX; valid.0.len()]);
            n += 1;
        }
    }
    (p, n)
}

fn check(text: &str) {
    let module = parse_module(text).unwrap();
    let inputs = inputs_for(&module);
    let want = run_function(&module, "main", &inputs, Parallelism::None).unwrap();
    let program = compile(&module).unwrap();
    let got = run(&program.device, &inputs);
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(mismatch(g, w, 1e-5), None, "output {k}");
    }
    let (unmasked, masks) = without_masks(&program.device);
    assert!(masks > 0, "the program masks its padding");
    let wrong = run(&unmasked, &inputs);
    let differs = wrong
        .iter()
        .zip(&want)
        .filter(|(g, w)| mismatch(g, w, 1e-5).is_some())
        .count();
    assert_eq!(
        differs,
        want.len(),
        "without masks every output must be wrong (padding leaks into each)"
    );
}

#[test]
fn exp_then_sum_over_non_divisible_dims() {
    check(EXP_SUM);
}

#[test]
fn max_of_negative_values_over_non_divisible_dims() {
    check(MAX_NEGATIVE);
}
