//! Ops defined in `compiler/src/ops/`: each in JAX's printed form and the
//! generic form (same op), round trip (print → parse is the same module,
//! printing is a fixed point), verifier errors naming the op and position,
//! and the sharding rule in Shardy notation.
//!
//! To test a new op, add its snippets here with the helpers below.

use meshrun_compiler::ir::{verify_module, OpKind};
use meshrun_compiler::rules::rule_for_op;
use meshrun_compiler::text::{parse_module, print_module};
use meshrun_compiler::Module;

/// `func.func @f(ARGS) -> (RESULTS) { BODY }`, where the body's last op
/// defines `%r` (returned).
fn module(args: &str, body: &str, result: &str) -> String {
    format!("func.func @f({args}) -> {result} {{\n{body}\n  return %r : {result}\n}}\n")
}

/// Parse, verify, and check the round trip; returns the module.
fn roundtrip(src: &str) -> Module {
    let m = parse_module(src).unwrap_or_else(|e| panic!("{e}\n--- in ---\n{src}"));
    verify_module(&m).unwrap_or_else(|e| panic!("verify: {e}\n--- in ---\n{src}"));
    let printed = print_module(&m);
    let again = parse_module(&printed).unwrap_or_else(|e| panic!("reparse: {e}\n{printed}"));
    assert!(m == again, "round trip changed the module:\n{printed}");
    assert_eq!(
        print_module(&again),
        printed,
        "printing is not a fixed point"
    );
    m
}

/// The kind of the last op of `@f`.
fn last_kind(m: &Module) -> OpKind {
    let f = m.func("f").expect("@f");
    f.ops_in_order().last().expect("an op").1.kind.clone()
}

/// The Shardy notation of the last op's rule.
fn last_rule(m: &Module) -> String {
    let f = m.func("f").expect("@f");
    let (id, _) = f.ops_in_order().last().expect("an op");
    match rule_for_op(f, id) {
        Ok(Some(r)) => r.to_string(),
        Ok(None) => "none".into(),
        Err(e) => panic!("rule: {e}"),
    }
}

/// The error of parsing and verifying `src`, as `LINE:COL: message`.
fn error(src: &str) -> String {
    let e = match parse_module(src) {
        Err(e) => e,
        Ok(m) => match verify_module(&m) {
            Err(e) => e,
            Ok(()) => panic!("no error for\n{src}"),
        },
    };
    e.to_string()
}

const DS_ARGS: &str = "%x: tensor<8x4xf32>, %i: tensor<i32>, %j: tensor<i32>";

#[test]
fn dynamic_slice_pretty_and_generic_forms_are_one_op() {
    let pretty = module(
        DS_ARGS,
        "  %r = stablehlo.dynamic_slice %x, %i, %j, sizes = [2, 4] : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x4xf32>",
        "tensor<2x4xf32>",
    );
    let generic = module(
        DS_ARGS,
        "  %r = \"stablehlo.dynamic_slice\"(%x, %i, %j) <{slice_sizes = array<i64: 2, 4>}> : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x4xf32>",
        "tensor<2x4xf32>",
    );
    let (a, b) = (roundtrip(&pretty), roundtrip(&generic));
    assert_eq!(last_kind(&a), last_kind(&b));
    let printed = print_module(&b);
    assert!(
        printed.contains("%0 = stablehlo.dynamic_slice %arg0, %arg1, %arg2, sizes = [2, 4] : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x4xf32>"),
        "{printed}"
    );
    // Dimension 0 is sliced: need_replication and blocked (Shardy).
    assert_eq!(
        last_rule(&a),
        "#sdy.op_sharding_rule<([i, j], [], [])->([i, j]) {i=8, j=4} need_replication={i} blocked_propagation={i}>"
    );
}

#[test]
fn dynamic_slice_keeps_other_attributes_and_shardings() {
    let src = module(
        DS_ARGS,
        "  %r = stablehlo.dynamic_slice %x, %i, %j, sizes = [2, 4] {mhlo.frontend_attributes = {a = \"b\"}} : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x4xf32>",
        "tensor<2x4xf32>",
    );
    let printed = print_module(&roundtrip(&src));
    assert!(
        printed.contains("sizes = [2, 4] {mhlo.frontend_attributes = {a = \"b\"}} :"),
        "{printed}"
    );
}

#[test]
fn dynamic_slice_errors_name_op_and_position() {
    let too_big = module(
        DS_ARGS,
        "  %r = stablehlo.dynamic_slice %x, %i, %j, sizes = [9, 4] : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<9x4xf32>",
        "tensor<9x4xf32>",
    );
    let e = error(&too_big);
    assert!(
        e.starts_with("2:8:")
            && e.contains("stablehlo.dynamic_slice")
            && e.contains("slice size 9"),
        "{e}"
    );
    let missing = module(
        DS_ARGS,
        "  %r = \"stablehlo.dynamic_slice\"(%x, %i, %j) : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x4xf32>",
        "tensor<2x4xf32>",
    );
    let e = error(&missing);
    assert!(e.contains("needs attribute 'slice_sizes'"), "{e}");
    let bad_value = module(
        DS_ARGS,
        "  %r = \"stablehlo.dynamic_slice\"(%x, %i, %j) <{slice_sizes = \"no\"}> : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x4xf32>",
        "tensor<2x4xf32>",
    );
    let e = error(&bad_value);
    assert!(
        e.starts_with("2:48:") && e.contains("expected an integer array"),
        "{e}"
    );
    let float_index = module(
        "%x: tensor<8x4xf32>, %i: tensor<f32>, %j: tensor<i32>",
        "  %r = stablehlo.dynamic_slice %x, %i, %j, sizes = [2, 4] : (tensor<8x4xf32>, tensor<f32>, tensor<i32>) -> tensor<2x4xf32>",
        "tensor<2x4xf32>",
    );
    assert!(error(&float_index).contains("start index 0 must be an integer scalar"));
}

const SORT: &str = r#"func.func @f(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %r = "stablehlo.sort"(%arg0) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %1 = stablehlo.compare EQ, %arg1, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %2 = stablehlo.select %1, %cst, %arg1 : tensor<i1>, tensor<f32>
      %3 = stablehlo.compare LT, %2, %arg2, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %3 : tensor<i1>
    }) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    return %r : tensor<8x16xf32>
}
"#;

#[test]
fn sort_with_its_comparator_round_trips() {
    let m = roundtrip(SORT);
    let OpKind::Sort(sort) = last_kind(&m) else {
        panic!("not a sort");
    };
    assert_eq!(sort.attrs.dimension, 1);
    assert!(sort.attrs.is_stable);
    assert_eq!(sort.comparator.func().body.len(), 4);
    let printed = print_module(&m);
    // Region values continue the enclosing numbering, as MLIR prints them.
    assert!(
        printed.contains("^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):"),
        "{printed}"
    );
    assert!(
        printed.contains("      stablehlo.return %4 : tensor<i1>\n    })"),
        "{printed}"
    );
    assert_eq!(
        last_rule(&m),
        "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16} need_replication={j}>"
    );
}

#[test]
fn sort_errors() {
    let pretty = SORT.replace("\"stablehlo.sort\"(%arg0)", "stablehlo.sort %arg0");
    assert!(
        error(&pretty).contains("has no pretty form"),
        "{}",
        error(&pretty)
    );
    let wrong_args = SORT.replace(
        "^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):",
        "^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>, %arg3: tensor<f32>):",
    );
    let e = error(&wrong_args);
    assert!(
        e.contains("stablehlo.sort") && e.contains("two rank-0 tensors per input"),
        "{e}"
    );
    let outer_value = SORT.replace(
        "%2 = stablehlo.select %1, %cst, %arg1",
        "%2 = stablehlo.select %1, %cst, %arg0",
    );
    assert!(
        error(&outer_value).contains("undefined value '%arg0'"),
        "{}",
        error(&outer_value)
    );
    let no_region = SORT.replace(
        "<{dimension = 1 : i64, is_stable = true}> ({",
        "<{dimension = 1 : i64}> {x = 1} ({",
    );
    assert!(
        error(&no_region).contains("needs 1 region"),
        "{}",
        error(&no_region)
    );
}
