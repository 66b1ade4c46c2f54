//! Verifier tests on modules built in Rust: a well-formed program passes,
//! and each kind of malformed program gives a diagnostic at the right place
//! whose message starts with the op name.

use meshrun_compiler::ir::ops::call::Call;
use meshrun_compiler::ir::ops::constant::Constant;
use meshrun_compiler::ir::ops::dot_general::DotGeneral;
use meshrun_compiler::ir::{
    function_errors, module_errors, verify_function, verify_module, BinaryOp, DenseLiteral,
    DotDims, ElemType, Function, Module, OpKind, ParamAttrs, Scalar, TensorType, UnaryOp, Value,
    Visibility,
};
use meshrun_compiler::{DiagKind, Diagnostic, DimSharding, SrcPos, TensorSharding};

use meshrun_compiler::ir::ops::sharding_constraint::ShardingConstraint;
use meshrun_compiler::ir::ops::sharding_group::ShardingGroup;
use ElemType::{F16, F32};

fn t(shape: &[i64]) -> TensorType {
    TensorType::new(shape.to_vec(), F32)
}

fn matmul() -> OpKind {
    OpKind::DotGeneral(DotGeneral {
        dims: DotDims {
            lhs_contract: vec![1],
            rhs_contract: vec![0],
            ..Default::default()
        },
        precision: None,
        is_dot: false,
    })
}

fn module(funcs: Vec<Function>) -> Module {
    Module {
        funcs,
        ..Default::default()
    }
}

/// The error `verify_module` reports, which must exist.
fn the_error(m: &Module) -> Diagnostic {
    match verify_module(m) {
        Err(e) => e,
        Ok(()) => panic!("module verified but should not have"),
    }
}

fn assert_msg(e: &Diagnostic, kind: DiagKind, prefix: &str, contains: &str) {
    assert_eq!(e.kind, kind, "{e}");
    assert!(e.message.starts_with(prefix), "{e}");
    assert!(e.message.contains(contains), "{e}");
}

/// The seed MLP (`tanh`, two matmuls, `sine`) with a replicated-sharding
/// annotation, calling a private helper for the last step.
fn mlp() -> Module {
    let mut f = Function::new("main", vec![t(&[16, 128]), t(&[128, 256]), t(&[256, 128])]);
    f.visibility = Visibility::Public;
    f.arg_attrs[0].sharding = Some(TensorSharding::new(
        "mesh",
        vec![DimSharding::closed(vec![]), DimSharding::replicated()],
    ));
    let (x, w1, w2) = (f.args[0], f.args[1], f.args[2]);
    let h = f.push_op(OpKind::Unary(UnaryOp::Tanh), vec![x], vec![t(&[16, 128])]);
    let h = f.result(h);
    let y = f.push_op(matmul(), vec![h, w1], vec![t(&[16, 256])]);
    f.op_mut(y).shardings = Some(vec![TensorSharding::open("mesh", 2)]);
    let y = f.result(y);
    let z = f.push_op(matmul(), vec![y, w2], vec![t(&[16, 128])]);
    let z = f.result(z);
    let out = f.push_op(
        OpKind::Call(Call::new("finish")),
        vec![z],
        vec![t(&[16, 128])],
    );
    let out = f.result(out);
    f.set_returns(vec![out]);

    let mut g = Function::new("finish", vec![t(&[16, 128])]);
    g.visibility = Visibility::Private;
    let c = g.push_op(
        OpKind::Constant(Constant::new(DenseLiteral::Splat(Scalar::Float(0.5)))),
        vec![],
        vec![TensorType::scalar(F32)],
    );
    let c = g.result(c);
    let cb = g.push_op(
        OpKind::BroadcastInDim(
            meshrun_compiler::ir::ops::broadcast_in_dim::BroadcastInDim { dims: vec![] },
        ),
        vec![c],
        vec![t(&[16, 128])],
    );
    let cb = g.result(cb);
    let s = g.push_op(
        OpKind::Unary(UnaryOp::Sine),
        vec![g.args[0]],
        vec![t(&[16, 128])],
    );
    let s = g.result(s);
    let r = g.push_op(
        OpKind::Binary(BinaryOp::Multiply),
        vec![s, cb],
        vec![t(&[16, 128])],
    );
    let r = g.result(r);
    g.set_returns(vec![r]);
    module(vec![f, g])
}

#[test]
fn well_formed_module_verifies() {
    let m = mlp();
    verify_module(&m).unwrap();
    for f in &m.funcs {
        verify_function(&m, f).unwrap();
    }
    assert!(module_errors(&m).is_empty());
}

#[test]
fn use_before_def() {
    let mut f = Function::new("main", vec![t(&[4])]);
    let x = f.args[0];
    // `later` is created first but placed in the body after its user.
    let later = f.create_op(OpKind::Unary(UnaryOp::Sine), vec![x], vec![t(&[4])]);
    f.op_mut(later).pos = SrcPos::new(3, 5);
    let later_v = f.result(later);
    let user = f.push_op(OpKind::Unary(UnaryOp::Negate), vec![later_v], vec![t(&[4])]);
    f.op_mut(user).pos = SrcPos::new(2, 5);
    f.body.push(later);
    let u = f.result(user);
    f.set_returns(vec![u]);
    let e = the_error(&module(vec![f]));
    assert_msg(
        &e,
        DiagKind::UndefinedName,
        "stablehlo.negate: operand 0 is used before it is defined",
        "it comes from the stablehlo.sine at 3:5, later in the body",
    );
    assert_eq!((e.pos.line, e.pos.col), (2, 5));
}

#[test]
fn use_of_op_outside_body_and_self_use() {
    let mut f = Function::new("main", vec![t(&[4])]);
    let orphan = f.create_op(OpKind::Unary(UnaryOp::Sine), vec![f.args[0]], vec![t(&[4])]);
    let orphan_v = f.result(orphan);
    let user = f.push_op(
        OpKind::Unary(UnaryOp::Negate),
        vec![orphan_v],
        vec![t(&[4])],
    );
    let u = f.result(user);
    f.set_returns(vec![u]);
    let e = the_error(&module(vec![f]));
    assert_msg(
        &e,
        DiagKind::UndefinedName,
        "stablehlo.negate: operand 0",
        "its defining stablehlo.sine is not in the function body",
    );

    // An op using its own result.
    let mut f = Function::new("main", vec![t(&[4])]);
    let op = f.push_op(OpKind::Binary(BinaryOp::Add), vec![], vec![t(&[4])]);
    let v = f.result(op);
    f.op_mut(op).operands = vec![v, f.args[0]];
    f.set_returns(vec![v]);
    let e = the_error(&module(vec![f]));
    assert_eq!(
        e.message,
        "stablehlo.add: operand 0 is used before it is defined: it is a result of this op"
    );
}

#[test]
fn return_of_undefined_value() {
    let mut f = Function::new("main", vec![t(&[4])]);
    let orphan = f.create_op(OpKind::Unary(UnaryOp::Sine), vec![f.args[0]], vec![t(&[4])]);
    let v = f.result(orphan);
    f.set_returns(vec![v]);
    f.return_pos = SrcPos::new(9, 3);
    let e = the_error(&module(vec![f]));
    assert_msg(
        &e,
        DiagKind::UndefinedName,
        "func.return: value 0",
        "not defined before the return: its defining stablehlo.sine",
    );
    assert_eq!(e.pos.line, 9);
}

#[test]
fn wrong_result_type() {
    let mut m = mlp();
    let f = &mut m.funcs[0];
    let dot = f.body[1];
    let r = f.op(dot).results[0];
    f.values[r.index()].ty = t(&[16, 128]);
    f.op_mut(dot).pos = SrcPos::new(5, 10);
    let e = the_error(&m);
    assert_msg(
        &e,
        DiagKind::Type,
        "stablehlo.dot_general: result has type tensor<16x128xf32>",
        "give tensor<16x256xf32>",
    );
    assert_eq!((e.pos.line, e.pos.col), (5, 10));
}

#[test]
fn shape_rule_violation_names_op() {
    let mut f = Function::new("main", vec![t(&[16, 128]), t(&[256, 128])]);
    let d = f.push_op(matmul(), vec![f.args[0], f.args[1]], vec![t(&[16, 128])]);
    let d = f.result(d);
    f.set_returns(vec![d]);
    let e = the_error(&module(vec![f]));
    assert_eq!(
        e.message,
        "stablehlo.dot_general: contracting dimension sizes differ: \
         lhs dim 1 has size 128, rhs dim 0 has size 256"
    );
    assert_eq!(e.kind, DiagKind::Type);
}

#[test]
fn wrong_operand_count() {
    let mut f = Function::new("main", vec![t(&[4])]);
    let op = f.push_op(
        OpKind::Binary(BinaryOp::Add),
        vec![f.args[0]],
        vec![t(&[4])],
    );
    let v = f.result(op);
    f.set_returns(vec![v]);
    let e = the_error(&module(vec![f]));
    assert_eq!(e.message, "stablehlo.add: expects 2 operands, got 1");
}

#[test]
fn wrong_callee_signature() {
    let mut m = mlp();
    // `finish` now takes f16.
    let g = &mut m.funcs[1];
    let a = g.args[0];
    g.values[a.index()].ty = TensorType::new(vec![16, 128], F16);
    let errors = module_errors(&m);
    let call_err = errors
        .iter()
        .find(|e| e.message.starts_with("func.call"))
        .expect("a call error");
    assert_msg(
        call_err,
        DiagKind::Type,
        "func.call: ",
        "argument 0 of @finish has type tensor<16x128xf16> but the call passes tensor<16x128xf32>",
    );

    let mut m = mlp();
    m.funcs[1].result_types[0] = t(&[16, 1]);
    let errors = module_errors(&m);
    assert!(
        errors.iter().any(|e| e.message
            == "func.call: result 0 of @finish has type tensor<16x1xf32> \
                but the call expects tensor<16x128xf32>"),
        "{errors:?}"
    );
    // The callee's own return no longer matches its declaration either.
    assert!(errors.iter().any(|e| e.message.starts_with("func.return:")));
}

#[test]
fn missing_callee() {
    let mut m = mlp();
    m.funcs[1].name = "finish2".into();
    let e = the_error(&m);
    assert_msg(
        &e,
        DiagKind::UndefinedName,
        "func.call: ",
        "no function named @finish in the module",
    );
}

fn caller(name: &str, callee: &str, pos: SrcPos) -> Function {
    let mut f = Function::new(name, vec![t(&[4])]);
    let c = f.push_op(
        OpKind::Call(Call::new(callee)),
        vec![f.args[0]],
        vec![t(&[4])],
    );
    f.op_mut(c).pos = pos;
    let v = f.result(c);
    f.set_returns(vec![v]);
    f
}

#[test]
fn call_cycle() {
    let leaf = {
        let mut f = Function::new("leaf", vec![t(&[4])]);
        let a = f.args[0];
        f.set_returns(vec![a]);
        f
    };
    let m = module(vec![
        caller("main", "a", SrcPos::new(1, 1)),
        caller("a", "b", SrcPos::new(2, 1)),
        caller("b", "a", SrcPos::new(3, 1)),
        leaf.clone(),
    ]);
    let e = the_error(&m);
    assert_msg(
        &e,
        DiagKind::Type,
        "func.call: call cycle @a -> @b -> @a",
        "recursive",
    );
    assert_eq!(e.pos.line, 3);
    assert_eq!(module_errors(&m).len(), 1);
    // Each function on its own is fine: cycles are a module property.
    for f in &m.funcs {
        verify_function(&m, f).unwrap();
    }

    let m = module(vec![caller("main", "main", SrcPos::new(4, 2))]);
    let e = the_error(&m);
    assert_eq!(
        e.message,
        "func.call: call cycle @main -> @main; recursive calls are not supported"
    );

    // A diamond (two paths to one callee) is not a cycle.
    let mut top = Function::new("top", vec![t(&[4])]);
    let c1 = top.push_op(
        OpKind::Call(Call::new("mid")),
        vec![top.args[0]],
        vec![t(&[4])],
    );
    let v1 = top.result(c1);
    let c2 = top.push_op(OpKind::Call(Call::new("leaf")), vec![v1], vec![t(&[4])]);
    let v2 = top.result(c2);
    top.set_returns(vec![v2]);
    let m = module(vec![top, caller("mid", "leaf", SrcPos::UNKNOWN), leaf]);
    verify_module(&m).unwrap();
}

#[test]
fn wrong_number_of_shardings() {
    let mut m = mlp();
    let f = &mut m.funcs[0];
    let dot = f.body[1];
    f.op_mut(dot).shardings = Some(vec![
        TensorSharding::open("mesh", 2),
        TensorSharding::open("mesh", 2),
    ]);
    let e = the_error(&m);
    assert_eq!(e.kind, DiagKind::Sharding);
    assert_eq!(
        e.message,
        "stablehlo.dot_general: has 1 result but 2 shardings in sdy.sharding"
    );

    let mut m = mlp();
    let dot = m.funcs[0].body[1];
    m.funcs[0].op_mut(dot).shardings = Some(vec![TensorSharding::open("mesh", 3)]);
    let e = the_error(&m);
    assert_msg(
        &e,
        DiagKind::Sharding,
        "stablehlo.dot_general: result 0: sharding <@mesh, [{?}, {?}, {?}]>",
        "has 3 dimension shardings but tensor<16x256xf32> has rank 2",
    );

    let mut m = mlp();
    m.funcs[0].arg_attrs[1].sharding = Some(TensorSharding::open("mesh", 1));
    let e = the_error(&m);
    assert_msg(
        &e,
        DiagKind::Sharding,
        "func.func @main: argument 1: sharding",
        "rank 2",
    );
}

#[test]
fn returns_must_match_signature() {
    let mut m = mlp();
    m.funcs[0].result_types[0] = t(&[16, 256]);
    m.funcs[0].return_pos = SrcPos::new(8, 5);
    let e = the_error(&m);
    assert_eq!(
        e.message,
        "func.return: value 0 has type tensor<16x128xf32> but @main declares result 0 as \
         tensor<16x256xf32>"
    );
    assert_eq!(e.pos.line, 8);

    let mut m = mlp();
    let f = &mut m.funcs[0];
    let extra = f.args[0];
    f.returns.push(extra);
    let e = the_error(&m);
    assert_eq!(
        e.message,
        "func.return: returns 2 values but @main declares 1 result"
    );
}

#[test]
fn attribute_lists_must_match() {
    let mut m = mlp();
    m.funcs[0].arg_attrs.pop();
    m.funcs[0].pos = SrcPos::new(3, 3);
    let e = the_error(&m);
    assert_eq!(
        e.message,
        "func.func @main: has 3 arguments but 2 argument attribute entries"
    );
    assert_eq!(e.pos.line, 3);

    let mut m = mlp();
    m.funcs[1].result_attrs.push(ParamAttrs::default());
    let e = the_error(&m);
    assert_eq!(
        e.message,
        "func.func @finish: has 1 result but 2 result attribute entries"
    );
}

#[test]
fn duplicate_function_names() {
    let mut m = mlp();
    let dup = m.funcs[1].clone();
    m.funcs.push(dup);
    let e = the_error(&m);
    assert_eq!(
        e.message,
        "func.func: function @finish is defined more than once"
    );
}

#[test]
fn malformed_arenas_do_not_panic() {
    // Operand and return values that do not exist, a body entry for a
    // missing op, an op listed twice.
    let mut f = Function::new("main", vec![t(&[4])]);
    let op = f.push_op(OpKind::Unary(UnaryOp::Sine), vec![Value(99)], vec![t(&[4])]);
    f.body.push(op);
    f.body.push(meshrun_compiler::OpId(42));
    f.returns = vec![Value(77)];
    f.result_types = vec![t(&[4])];
    f.result_attrs = vec![ParamAttrs::default()];
    let m = module(vec![f]);
    let errors = function_errors(&m, &m.funcs[0]);
    let msgs: Vec<&str> = errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(
        msgs,
        [
            "stablehlo.sine: operand 0 does not exist",
            "stablehlo.sine: op appears twice in the body",
            "func.func @main: the body lists op #42, which does not exist",
            "func.return: value 0 does not exist",
        ]
    );
}

#[test]
fn collects_all_errors_in_order() {
    let mut f = Function::new("main", vec![t(&[4]), t(&[5])]);
    let (a, b) = (f.args[0], f.args[1]);
    let bad1 = f.push_op(OpKind::Binary(BinaryOp::Add), vec![a, b], vec![t(&[4])]);
    let ok = f.push_op(OpKind::Unary(UnaryOp::Exp), vec![a], vec![t(&[4])]);
    let okv = f.result(ok);
    let _bad2 = f.push_op(OpKind::Unary(UnaryOp::Exp), vec![okv], vec![t(&[5])]);
    let v = f.result(bad1);
    f.set_returns(vec![v]);
    let m = module(vec![f]);
    let errors = module_errors(&m);
    let msgs: Vec<&str> = errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(
        msgs,
        [
            "stablehlo.add: rhs has type tensor<5xf32> but lhs has type tensor<4xf32>; \
             they must be equal",
            "stablehlo.exponential: result has type tensor<5xf32> but the operands and \
             attributes give tensor<4xf32>",
        ]
    );
    assert_eq!(verify_module(&m).unwrap_err().message, msgs[0]);
}

#[test]
fn sharding_group_has_no_results() {
    let mut f = Function::new("main", vec![t(&[8, 16])]);
    let x = f.args[0];
    f.push_op(
        OpKind::ShardingGroup(ShardingGroup { group_id: 0 }),
        vec![x],
        vec![],
    );
    let c = f.push_op(
        OpKind::ShardingConstraint(ShardingConstraint {
            sharding: TensorSharding::open("mesh", 2),
        }),
        vec![x],
        vec![t(&[8, 16])],
    );
    let v = f.result(c);
    f.set_returns(vec![v]);
    verify_module(&module(vec![f.clone()])).unwrap();

    f.push_op(
        OpKind::ShardingGroup(ShardingGroup { group_id: 1 }),
        vec![x],
        vec![t(&[8, 16])],
    );
    let e = the_error(&module(vec![f]));
    assert_eq!(e.message, "sdy.sharding_group: expects 0 results, got 1");
}
