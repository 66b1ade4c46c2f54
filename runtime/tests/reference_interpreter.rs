//! The reference interpreter on programs built in Rust: a small MLP, calls,
//! sharding ops as identity, and the errors for bad inputs and programs.

use meshrun_compiler::ir::ops::call::Call;
use meshrun_compiler::ir::ops::constant::Constant;
use meshrun_compiler::ir::ops::dot_general::DotGeneral;
use meshrun_compiler::ir::ops::reduce::Reduce;
use meshrun_compiler::ir::ops::reshard::Reshard;
use meshrun_compiler::ir::ops::sharding_constraint::ShardingConstraint;
use meshrun_compiler::ir::{
    BinaryOp, DenseLiteral, DotDims, ElemType, Function, Module, OpKind, ReduceKind, Scalar,
    TensorType, UnaryOp, Visibility,
};
use meshrun_compiler::sharding::TensorSharding;
use meshrun_compiler::SrcPos;
use meshrun_kernels::{HostTensor, Parallelism};
use meshrun_runtime::reference::run_function;
use meshrun_runtime::RuntimeError;

fn f32_ty(shape: &[i64]) -> TensorType {
    TensorType::new(shape.to_vec(), ElemType::F32)
}

fn tensor(shape: &[usize], v: Vec<f32>) -> HostTensor {
    HostTensor::from_vec(shape, v).unwrap()
}

/// `tanh(x · w + b)` then a row sum, with a sharding constraint in between.
fn mlp_module() -> Module {
    let mut f = Function::new("main", vec![f32_ty(&[2, 3]), f32_ty(&[3, 2]), f32_ty(&[2])]);
    let (x, w, b) = (f.args[0], f.args[1], f.args[2]);
    let dot = f.push_op(
        OpKind::DotGeneral(DotGeneral {
            dims: DotDims::for_dot(2),
            precision: None,
            is_dot: false,
        }),
        vec![x, w],
        vec![f32_ty(&[2, 2])],
    );
    let dot = f.result(dot);
    let bb = f.push_op(
        OpKind::BroadcastInDim(
            meshrun_compiler::ir::ops::broadcast_in_dim::BroadcastInDim { dims: vec![1] },
        ),
        vec![b],
        vec![f32_ty(&[2, 2])],
    );
    let bb = f.result(bb);
    let add = f.push_op(
        OpKind::Binary(BinaryOp::Add),
        vec![dot, bb],
        vec![f32_ty(&[2, 2])],
    );
    let add = f.result(add);
    let sc = f.push_op(
        OpKind::ShardingConstraint(ShardingConstraint {
            sharding: TensorSharding::replicated("mesh", 2),
        }),
        vec![add],
        vec![f32_ty(&[2, 2])],
    );
    let sc = f.result(sc);
    let t = f.push_op(
        OpKind::Unary(UnaryOp::Tanh),
        vec![sc],
        vec![f32_ty(&[2, 2])],
    );
    let t = f.result(t);
    let zero = f.push_op(
        OpKind::Constant(Constant::new(DenseLiteral::Splat(Scalar::Float(0.0)))),
        vec![],
        vec![f32_ty(&[])],
    );
    let zero = f.result(zero);
    let sum = f.push_op(
        OpKind::Reduce(Reduce::with_kind(
            vec![1],
            ReduceKind::Add,
            &[ElemType::F32],
        )),
        vec![t, zero],
        vec![f32_ty(&[2])],
    );
    let sum = f.result(sum);
    f.set_returns(vec![t, sum]);
    Module {
        funcs: vec![f],
        ..Module::default()
    }
}

#[test]
fn runs_a_small_mlp() {
    let m = mlp_module();
    let x = tensor(&[2, 3], vec![1.0, 0.0, -1.0, 0.5, 0.5, 0.5]);
    let w = tensor(&[3, 2], vec![0.1, 0.2, 0.3, 0.4, 0.5, 0.6]);
    let b = tensor(&[2], vec![0.0, 1.0]);
    let out = run_function(&m, "main", &[x, w, b], Parallelism::None).unwrap();
    // x·w = [[-0.4, -0.4], [0.45, 0.6]]; + b = [[-0.4, 0.6], [0.45, 1.6]].
    let pre = [-0.4f64, 0.6, 0.45, 1.6];
    let want: Vec<f64> = pre.iter().map(|v| v.tanh()).collect();
    let got = out[0].to_f64_vec();
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() < 1e-6, "{g} vs {w}");
    }
    let sums = out[1].to_f64_vec();
    assert!((sums[0] - (want[0] + want[1])).abs() < 1e-6);
    assert!((sums[1] - (want[2] + want[3])).abs() < 1e-6);
    // Same answer with a threaded dot.
    let x = tensor(&[2, 3], vec![1.0, 0.0, -1.0, 0.5, 0.5, 0.5]);
    let w = tensor(&[3, 2], vec![0.1, 0.2, 0.3, 0.4, 0.5, 0.6]);
    let b = tensor(&[2], vec![0.0, 1.0]);
    let again = run_function(&m, "main", &[x, w, b], Parallelism::Rayon(2)).unwrap();
    assert_eq!(again, out);
}

#[test]
fn input_errors_say_which_input_and_what() {
    let m = mlp_module();
    let x = tensor(&[2, 3], vec![0.0; 6]);
    let w = tensor(&[3, 2], vec![0.0; 6]);
    let err = run_function(&m, "main", &[x.clone(), w.clone()], Parallelism::None).unwrap_err();
    assert_eq!(err.to_string(), "@main takes 3 inputs, got 2");
    let bad_w = tensor(&[3, 1], vec![0.0; 3]);
    let b = tensor(&[2], vec![0.0; 2]);
    let err = run_function(
        &m,
        "main",
        &[x.clone(), bad_w, b.clone()],
        Parallelism::None,
    );
    assert_eq!(
        err.unwrap_err().to_string(),
        "input 1: expected tensor<3x2xf32>, got shape [3, 1] f32"
    );
    let int_b = HostTensor::from_vec(&[2], vec![0i32, 0]).unwrap();
    let err = run_function(
        &m,
        "main",
        &[x.clone(), w.clone(), int_b],
        Parallelism::None,
    );
    assert!(matches!(
        err,
        Err(RuntimeError::InputMismatch { index: 2, .. })
    ));
    let err = run_function(&m, "nope", &[x, w, b], Parallelism::None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "function @nope is not defined in the module"
    );
}

/// `main(x) = double(double(x))` with `double(y) = y + y` (private).
fn call_module() -> Module {
    let mut double = Function::new("double", vec![f32_ty(&[2])]);
    double.visibility = Visibility::Private;
    let y = double.args[0];
    let s = double.push_op(
        OpKind::Binary(BinaryOp::Add),
        vec![y, y],
        vec![f32_ty(&[2])],
    );
    let s = double.result(s);
    double.set_returns(vec![s]);

    let mut main = Function::new("main", vec![f32_ty(&[2])]);
    let x = main.args[0];
    let call = |callee: &str| OpKind::Call(Call::new(callee));
    let c1 = main.push_op(call("double"), vec![x], vec![f32_ty(&[2])]);
    let c1 = main.result(c1);
    let c2 = main.push_op(call("double"), vec![c1], vec![f32_ty(&[2])]);
    let c2 = main.result(c2);
    let rs = main.push_op(
        OpKind::Reshard(Reshard {
            sharding: TensorSharding::replicated("mesh", 1),
        }),
        vec![c2],
        vec![f32_ty(&[2])],
    );
    let rs = main.result(rs);
    main.set_returns(vec![rs, x]);
    Module {
        funcs: vec![main, double],
        ..Module::default()
    }
}

#[test]
fn calls_recurse_into_callees_and_reshard_is_identity() {
    let m = call_module();
    let out = run_function(
        &m,
        "main",
        &[tensor(&[2], vec![1.0, -2.5])],
        Parallelism::None,
    );
    let out = out.unwrap();
    assert_eq!(out[0], tensor(&[2], vec![4.0, -10.0]));
    assert_eq!(
        out[1],
        tensor(&[2], vec![1.0, -2.5]),
        "an input returned as is"
    );
    let direct = run_function(
        &m,
        "double",
        &[tensor(&[2], vec![3.0, 0.0])],
        Parallelism::None,
    );
    assert_eq!(direct.unwrap()[0], tensor(&[2], vec![6.0, 0.0]));
}

#[test]
fn kernel_errors_name_the_op_and_position() {
    let mut f = Function::new("main", vec![f32_ty(&[2]), f32_ty(&[3])]);
    let (a, b) = (f.args[0], f.args[1]);
    // An ill-typed add (the verifier would reject it; the interpreter must
    // not panic either).
    let add = f.push_op(
        OpKind::Binary(BinaryOp::Add),
        vec![a, b],
        vec![f32_ty(&[2])],
    );
    f.op_mut(add).pos = SrcPos::new(7, 5);
    let r = f.result(add);
    f.set_returns(vec![r]);
    let m = Module {
        funcs: vec![f],
        ..Module::default()
    };
    let inputs = [tensor(&[2], vec![0.0; 2]), tensor(&[3], vec![0.0; 3])];
    let err = run_function(&m, "main", &inputs, Parallelism::None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "7:5: @main: stablehlo.add: lhs has shape [2] but rhs has shape [3]"
    );
}

#[test]
fn recursion_is_reported_not_overflowed() {
    let mut f = Function::new("loop", vec![f32_ty(&[1])]);
    let x = f.args[0];
    let c = f.push_op(OpKind::Call(Call::new("loop")), vec![x], vec![f32_ty(&[1])]);
    let c = f.result(c);
    f.set_returns(vec![c]);
    let m = Module {
        funcs: vec![f],
        ..Module::default()
    };
    let err = run_function(&m, "loop", &[tensor(&[1], vec![0.0])], Parallelism::None);
    assert!(
        matches!(err, Err(RuntimeError::CallDepth { .. })),
        "{err:?}"
    );
}

#[test]
fn undefined_values_are_malformed_programs() {
    let mut f = Function::new("main", vec![f32_ty(&[1])]);
    let x = f.args[0];
    // Create the op outside the body, then use its result.
    let hidden = f.create_op(OpKind::Unary(UnaryOp::Negate), vec![x], vec![f32_ty(&[1])]);
    let h = f.result(hidden);
    let neg = f.push_op(OpKind::Unary(UnaryOp::Negate), vec![h], vec![f32_ty(&[1])]);
    let n = f.result(neg);
    f.set_returns(vec![n]);
    let m = Module {
        funcs: vec![f],
        ..Module::default()
    };
    let err = run_function(&m, "main", &[tensor(&[1], vec![1.0])], Parallelism::None).unwrap_err();
    assert!(matches!(err, RuntimeError::Malformed { .. }), "{err}");
    assert!(err.to_string().contains("before it is defined"), "{err}");
}

fn parse(src: &str) -> Module {
    let m = meshrun_compiler::text::parse_module(src).unwrap_or_else(|e| panic!("{e}"));
    meshrun_compiler::ir::verify_module(&m).unwrap_or_else(|e| panic!("{e}"));
    m
}

/// `while i < n: a = a * 2; i += 1` runs `n` times; the body reads `%n`
/// from outside the loop through the cond region.
#[test]
fn while_runs_its_body_until_cond_is_false() {
    let m = parse(
        r#"func.func @main(%x: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%a = %x, %i = %c) : tensor<4xf32>, tensor<i32>
  cond {
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    %b = stablehlo.add %a, %a : tensor<4xf32>
    stablehlo.return %b, %j : tensor<4xf32>, tensor<i32>
  }
  return %r#0 : tensor<4xf32>
}"#,
    );
    let x = tensor(&[4], vec![1.0, 2.0, 3.0, -0.5]);
    for n in [0i32, 1, 5] {
        let count = HostTensor::from_vec(&[], vec![n]).unwrap();
        let out = run_function(&m, "main", &[x.clone(), count], Parallelism::None).unwrap();
        let scale = 2f64.powi(n);
        let want: Vec<f64> = [1.0, 2.0, 3.0, -0.5].iter().map(|v| v * scale).collect();
        assert_eq!(out[0].to_f64_vec(), want, "n = {n}");
    }
}

/// `case` runs the selected branch; an index out of range runs the last.
#[test]
fn case_runs_the_selected_branch() {
    let m = parse(
        r#"func.func @main(%k: tensor<i32>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %r = "stablehlo.case"(%k) ({
    %a = stablehlo.negate %x : tensor<2xf32>
    stablehlo.return %a : tensor<2xf32>
  }, {
    %b = stablehlo.add %x, %x : tensor<2xf32>
    stablehlo.return %b : tensor<2xf32>
  }, {
    stablehlo.return %x : tensor<2xf32>
  }) : (tensor<i32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}"#,
    );
    let x = tensor(&[2], vec![1.5, -2.0]);
    for (k, want) in [
        (0i32, [-1.5, 2.0]),
        (1, [3.0, -4.0]),
        (2, [1.5, -2.0]),
        (9, [1.5, -2.0]),
        (-1, [1.5, -2.0]),
    ] {
        let index = HostTensor::from_vec(&[], vec![k]).unwrap();
        let out = run_function(&m, "main", &[index, x.clone()], Parallelism::None).unwrap();
        assert_eq!(out[0].to_f64_vec(), want.to_vec(), "index {k}");
    }
}
