//! Ops defined in `compiler/src/ir/ops/`: each in JAX's printed form and the
//! generic form (same op), round trip (print → parse is the same module,
//! printing is a fixed point), verifier errors naming the op and position,
//! and the sharding rule in Shardy notation.
//!
//! To test a new op, add its snippets here with the helpers below.

use meshrun_compiler::ir::op_rules::rule_for_op;
use meshrun_compiler::ir::{verify_module, OpKind};
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
        e.contains("stablehlo.sort")
            && e.contains("the comparator takes (tensor<f32>, tensor<f32>, tensor<f32>)")
            && e.contains("must take (tensor<f32>, tensor<f32>)"),
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

/// `func.func @f(ARGS) -> RESULT` around one gather.
fn gather_module(operand: &str, indices: &str, dims: &str, sizes: &str, result: &str) -> String {
    module(
        &format!("%x: {operand}, %i: {indices}"),
        &format!(
            "  %r = \"stablehlo.gather\"(%x, %i) <{{dimension_numbers = #stablehlo.gather<{dims}>, indices_are_sorted = false, slice_sizes = array<i64: {sizes}>}}> : ({operand}, {indices}) -> {result}"
        ),
        result,
    )
}

#[test]
fn gather_as_jax_prints_it_round_trips() {
    // `jnp.take(table, ids, axis=0)` as JAX 0.10.2 lowers it.
    let src = gather_module(
        "tensor<16x8xf32>",
        "tensor<5x1xi32>",
        "offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1",
        "1, 8",
        "tensor<5x8xf32>",
    );
    let m = roundtrip(&src);
    let printed = print_module(&m);
    assert!(
        printed.contains("\"stablehlo.gather\"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 8>}> : (tensor<16x8xf32>, tensor<5x1xi32>) -> tensor<5x8xf32>"),
        "{printed}"
    );
    // The collapsed (vocabulary) dim is a reduction factor: a table
    // sharded on it gathers zeros for other rows, summed afterwards.
    assert_eq!(
        last_rule(&m),
        "#sdy.op_sharding_rule<([k, j], [i, l])->([i, j]) {i=5, j=8, k=16, l=1} reduction={k} need_replication={l}>"
    );
    // Shardy's own `{...}` attribute spelling and a default
    // index_vector_dim parse to the same op.
    let shardy = module(
        "%x: tensor<16x8xf32>, %i: tensor<5xi32>",
        "  %r = \"stablehlo.gather\"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 8>} : (tensor<16x8xf32>, tensor<5xi32>) -> tensor<5x8xf32>",
        "tensor<5x8xf32>",
    );
    roundtrip(&shardy);
}

#[test]
fn gather_rules_match_shardy() {
    // The cases of Shardy's op_sharding_rule_registry.mlir.
    let cases = [
        (
            "tensor<3x4x2x5xf32>",
            "tensor<2x3x3xi64>",
            "offset_dims = [2, 3, 4], collapsed_slice_dims = [0], start_index_map = [1, 0, 3], index_vector_dim = 2",
            "1, 2, 2, 1",
            "tensor<2x3x2x2x1xf32>",
            "#sdy.op_sharding_rule<([o, k, l, m], [i, j, p])->([i, j, k, l, n]) {i=2, j=3, k=4, l=2, m=5, n=1, o=3, p=3} reduction={m, o} need_replication={k, n, p} blocked_propagation={k}>",
        ),
        (
            "tensor<3x1x2xf32>",
            "tensor<2x3x2xi64>",
            "offset_dims = [3], collapsed_slice_dims = [0, 1], start_index_map = [1], index_vector_dim = 3",
            "1, 1, 2",
            "tensor<2x3x2x2xf32>",
            "#sdy.op_sharding_rule<([m, n, l], [i, j, k])->([i, j, k, l]) {i=2, j=3, k=2, l=2, m=3, n=1} reduction={m} need_replication={n}>",
        ),
        (
            "tensor<5x3x7x4xf32>",
            "tensor<7x5x3x2xi64>",
            "offset_dims = [3], collapsed_slice_dims = [1], operand_batching_dims = [0, 2], start_indices_batching_dims = [1, 0], start_index_map = [1, 3], index_vector_dim = 3",
            "1, 1, 1, 2",
            "tensor<7x5x3x2xf32>",
            "#sdy.op_sharding_rule<([j, m, i, l], [i, j, k, n])->([i, j, k, l]) {i=7, j=5, k=3, l=4, m=3, n=2} reduction={m} need_replication={l, n} blocked_propagation={l}>",
        ),
        (
            "tensor<5x3x7x4xf32>",
            "tensor<7x2x5x3xi64>",
            "offset_dims = [3], collapsed_slice_dims = [1], operand_batching_dims = [0, 2], start_indices_batching_dims = [2, 0], start_index_map = [1, 3], index_vector_dim = 1",
            "1, 1, 1, 2",
            "tensor<7x5x3x2xf32>",
            "#sdy.op_sharding_rule<([j, m, i, l], [i, n, j, k])->([i, j, k, l]) {i=7, j=5, k=3, l=4, m=3, n=2} reduction={m} need_replication={l, n} blocked_propagation={l}>",
        ),
    ];
    for (operand, indices, dims, sizes, result, rule) in cases {
        let m = roundtrip(&gather_module(operand, indices, dims, sizes, result));
        assert_eq!(last_rule(&m), rule, "{dims}");
    }
}

#[test]
fn gather_errors_name_op_and_position() {
    let cases = [
        // The result shape disagrees with the dims.
        (
            "offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1",
            "1, 8",
            "tensor<5x4xf32>",
            "result has type tensor<5x4xf32> but the operands and attributes give tensor<5x8xf32>",
        ),
        // Offset + collapsed dims do not cover the operand.
        (
            "offset_dims = [1], start_index_map = [0], index_vector_dim = 1",
            "1, 8",
            "tensor<5x8xf32>",
            "must be the operand rank 2",
        ),
        (
            "offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0, 1], index_vector_dim = 1",
            "1, 8",
            "tensor<5x8xf32>",
            "start_index_map has 2 dimension(s) but the index vector has 1",
        ),
        (
            "offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1",
            "2, 8",
            "tensor<5x8xf32>",
            "slice size is 2, not at most 1",
        ),
        (
            "offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1",
            "1, 9",
            "tensor<5x9xf32>",
            "slice size 9 of dimension 1 is outside [0, 8]",
        ),
        (
            "offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [3], index_vector_dim = 1",
            "1, 8",
            "tensor<5x8xf32>",
            "start_index_map has 3, outside [0, 2)",
        ),
    ];
    for (dims, sizes, result, want) in cases {
        let src = gather_module("tensor<16x8xf32>", "tensor<5x1xi32>", dims, sizes, result);
        let e = error(&src);
        assert!(
            e.starts_with("2:8:") && e.contains("stablehlo.gather") && e.contains(want),
            "{dims}: {e}"
        );
    }
    let unknown = gather_module(
        "tensor<16x8xf32>",
        "tensor<5x1xi32>",
        "offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1, bogus = [1]",
        "1, 8",
        "tensor<5x8xf32>",
    );
    assert!(error(&unknown).contains("unknown parameter 'bogus'"));
    let float_indices = gather_module(
        "tensor<16x8xf32>",
        "tensor<5x1xf32>",
        "offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1",
        "1, 8",
        "tensor<5x8xf32>",
    );
    assert!(error(&float_indices).contains("start_indices must be integers"));
}

/// One scatter with the given region body lines over `(%a, %b)`.
fn scatter_module(dims: &str, body: &str, elem: &str) -> String {
    module(
        &format!("%x: tensor<16x8x{elem}>, %i: tensor<5x1xi32>, %u: tensor<5x8x{elem}>"),
        &format!(
            "  %r = \"stablehlo.scatter\"(%x, %i, %u) <{{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<{dims}>, unique_indices = false}}> ({{\n  ^bb0(%a: tensor<{elem}>, %b: tensor<{elem}>):\n{body}\n  }}) : (tensor<16x8x{elem}>, tensor<5x1xi32>, tensor<5x8x{elem}>) -> tensor<16x8x{elem}>"
        ),
        &format!("tensor<16x8x{elem}>"),
    )
}

const EMBED_GRAD: &str = "update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1";

#[test]
fn scatter_update_regions_are_recognized() {
    use meshrun_compiler::ir::ops::scatter::ScatterUpdate;
    use meshrun_compiler::ir::ReduceKind;
    let kind_of = |body: &str, elem: &str| match last_kind(&roundtrip(&scatter_module(
        EMBED_GRAD, body, elem,
    ))) {
        OpKind::Scatter(s) => s.update_kind().unwrap(),
        other => panic!("{other:?}"),
    };
    let binary = |op: &str, x: &str, y: &str, elem: &str| {
        format!("    %s = stablehlo.{op} {x}, {y} : tensor<{elem}>\n    stablehlo.return %s : tensor<{elem}>")
    };
    assert_eq!(
        kind_of(&binary("add", "%a", "%b", "f32"), "f32"),
        ScatterUpdate::Combine(ReduceKind::Add)
    );
    // Either operand order.
    assert_eq!(
        kind_of(&binary("multiply", "%b", "%a", "f32"), "f32"),
        ScatterUpdate::Combine(ReduceKind::Multiply)
    );
    assert_eq!(
        kind_of(&binary("maximum", "%a", "%b", "f32"), "f32"),
        ScatterUpdate::Combine(ReduceKind::Maximum)
    );
    assert_eq!(
        kind_of(&binary("minimum", "%a", "%b", "i32"), "i32"),
        ScatterUpdate::Combine(ReduceKind::Minimum)
    );
    assert_eq!(
        kind_of("    stablehlo.return %b : tensor<f32>", "f32"),
        ScatterUpdate::Replace
    );
    assert_eq!(
        kind_of(&binary("or", "%a", "%b", "i1"), "i1"),
        ScatterUpdate::Combine(ReduceKind::Or)
    );
}

#[test]
fn scatter_rules_match_shardy() {
    let add = "    %s = stablehlo.add %a, %b : tensor<f32>\n    stablehlo.return %s : tensor<f32>";
    // The embedding gradient: the table's rows are pass-through (each
    // device applies the updates for its rows), the ids a reduction.
    let m = roundtrip(&scatter_module(EMBED_GRAD, add, "f32"));
    assert_eq!(
        last_rule(&m),
        "#sdy.op_sharding_rule<([k, j], [i, l], [i, j])->([k, j]) {i=5, j=8, k=16, l=1} reduction={i} need_replication={l}>"
    );
    // `.at[].set`: no common reduction, so the ids need replication.
    let m = roundtrip(&scatter_module(
        EMBED_GRAD,
        "    stablehlo.return %b : tensor<f32>",
        "f32",
    ));
    assert_eq!(
        last_rule(&m),
        "#sdy.op_sharding_rule<([k, j], [i, l], [i, j])->([k, j]) {i=5, j=8, k=16, l=1} need_replication={i, l}>"
    );
    // Shardy's registry cases.
    let shardy = |operand: &str, indices: &str, updates: &str, dims: &str| {
        module(
            &format!("%x: {operand}, %i: {indices}, %u: {updates}"),
            &format!(
                "  %r = \"stablehlo.scatter\"(%x, %i, %u) ({{\n  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n    %s = stablehlo.add %a, %b : tensor<f32>\n    stablehlo.return %s : tensor<f32>\n  }}) {{scatter_dimension_numbers = #stablehlo.scatter<{dims}>, indices_are_sorted = false, unique_indices = false}} : ({operand}, {indices}, {updates}) -> {operand}"
            ),
            operand,
        )
    };
    let cases = [
        (
            shardy("tensor<3x4x2xf32>", "tensor<2x3x2xi64>", "tensor<2x3x2x2xf32>", "update_window_dims = [2, 3], inserted_window_dims = [0], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 2"),
            "#sdy.op_sharding_rule<([n, k, m], [i, j, o], [i, j, l, m])->([n, k, m]) {i=2, j=3, k=4, l=2, m=2, n=3, o=2} reduction={i, j} need_replication={k, l, o}>",
        ),
        (
            shardy("tensor<3x4x2xf32>", "tensor<2x3xi64>", "tensor<2x3x2x2xf32>", "update_window_dims = [2, 3], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2"),
            "#sdy.op_sharding_rule<([n, k, m], [i, j], [i, j, l, m])->([n, k, m]) {i=2, j=3, k=4, l=2, m=2, n=3} reduction={i, j} need_replication={k, l}>",
        ),
        (
            shardy("tensor<4x2x3xf32>", "tensor<2x3x2xi64>", "tensor<2x3x2x2xf32>", "update_window_dims = [2, 3], inserted_window_dims = [2], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 2"),
            "#sdy.op_sharding_rule<([k, m, n], [i, j, o], [i, j, l, m])->([k, m, n]) {i=2, j=3, k=4, l=2, m=2, n=3, o=2} reduction={i, j} need_replication={k, l, o}>",
        ),
        (
            shardy("tensor<5x3x7x4xf32>", "tensor<7x5x3x2xi64>", "tensor<7x5x3x2xf32>", "update_window_dims = [3], inserted_window_dims = [1], input_batching_dims = [0, 2], scatter_indices_batching_dims = [1, 0], scatter_dims_to_operand_dims = [1, 3], index_vector_dim = 3"),
            "#sdy.op_sharding_rule<([j, n, i, l], [i, j, k, o], [i, j, k, m])->([j, n, i, l]) {i=7, j=5, k=3, l=4, m=2, n=3, o=2} reduction={k} need_replication={l, m, o}>",
        ),
    ];
    for (src, rule) in cases {
        assert_eq!(last_rule(&roundtrip(&src)), rule);
    }
}

#[test]
fn scatter_errors_name_op_and_position() {
    // A region that is not one of the supported updates.
    let sub =
        "    %s = stablehlo.subtract %a, %b : tensor<f32>\n    stablehlo.return %s : tensor<f32>";
    let e = error(&scatter_module(EMBED_GRAD, sub, "f32"));
    assert!(
        e.starts_with("2:8:")
            && e.contains("stablehlo.scatter")
            && e.contains("must return the update"),
        "{e}"
    );
    let twice =
        "    %s = stablehlo.add %a, %a : tensor<f32>\n    stablehlo.return %s : tensor<f32>";
    assert!(error(&scatter_module(EMBED_GRAD, twice, "f32")).contains("must return the update"));
    let and_float =
        "    %s = stablehlo.and %a, %b : tensor<i32>\n    stablehlo.return %s : tensor<i32>";
    assert!(error(&scatter_module(EMBED_GRAD, and_float, "i32")).contains("only supported on i1"));
    let add = "    %s = stablehlo.add %a, %b : tensor<f32>\n    stablehlo.return %s : tensor<f32>";
    let bad_dims = EMBED_GRAD.replace(
        "scatter_dims_to_operand_dims = [0]",
        "scatter_dims_to_operand_dims = [2]",
    );
    let e = error(&scatter_module(&bad_dims, add, "f32"));
    assert!(
        e.contains("stablehlo.scatter")
            && e.contains("scatter_dims_to_operand_dims has 2, outside [0, 2)"),
        "{e}"
    );
    // Updates wider than the input's window dimension.
    let wide = module(
        "%x: tensor<16x8xf32>, %i: tensor<5x1xi32>, %u: tensor<5x9xf32>",
        &format!("  %r = \"stablehlo.scatter\"(%x, %i, %u) <{{scatter_dimension_numbers = #stablehlo.scatter<{EMBED_GRAD}>}}> ({{\n  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n{add}\n  }}) : (tensor<16x8xf32>, tensor<5x1xi32>, tensor<5x9xf32>) -> tensor<16x8xf32>"),
        "tensor<16x8xf32>",
    );
    assert!(error(&wide).contains("larger than input dimension 1 (8)"));
}

const DUS_ARGS: &str =
    "%x: tensor<16x8xf32>, %u: tensor<2x8xf32>, %i: tensor<i32>, %j: tensor<i32>";

#[test]
fn dynamic_update_slice_pretty_and_generic_forms_are_one_op() {
    let pretty = module(
        DUS_ARGS,
        "  %r = stablehlo.dynamic_update_slice %x, %u, %i, %j : (tensor<16x8xf32>, tensor<2x8xf32>, tensor<i32>, tensor<i32>) -> tensor<16x8xf32>",
        "tensor<16x8xf32>",
    );
    let generic = module(
        DUS_ARGS,
        "  %r = \"stablehlo.dynamic_update_slice\"(%x, %u, %i, %j) : (tensor<16x8xf32>, tensor<2x8xf32>, tensor<i32>, tensor<i32>) -> tensor<16x8xf32>",
        "tensor<16x8xf32>",
    );
    let (a, b) = (roundtrip(&pretty), roundtrip(&generic));
    assert_eq!(last_kind(&a), last_kind(&b));
    assert!(print_module(&b).contains("%0 = stablehlo.dynamic_update_slice %arg0, %arg1, %arg2, %arg3 : (tensor<16x8xf32>, tensor<2x8xf32>, tensor<i32>, tensor<i32>) -> tensor<16x8xf32>"));
    assert_eq!(
        last_rule(&a),
        "#sdy.op_sharding_rule<([i, k], [j, k], [], [])->([i, k]) {i=16, j=2, k=8} need_replication={j}>"
    );
    // Constant start indices: the update's factor is pass-through (Shardy).
    let constant = module(
        "%x: tensor<16x8xf32>, %u: tensor<2x8xf32>",
        "  %c = stablehlo.constant dense<0> : tensor<i32>\n  %r = stablehlo.dynamic_update_slice %x, %u, %c, %c : (tensor<16x8xf32>, tensor<2x8xf32>, tensor<i32>, tensor<i32>) -> tensor<16x8xf32>",
        "tensor<16x8xf32>",
    );
    assert_eq!(
        last_rule(&roundtrip(&constant)),
        "#sdy.op_sharding_rule<([i, k], [j, k], [], [])->([i, k]) {i=16, j=2, k=8}>"
    );
}

#[test]
fn dynamic_update_slice_errors_name_op_and_position() {
    let big = module(
        "%x: tensor<16x8xf32>, %u: tensor<2x9xf32>, %i: tensor<i32>, %j: tensor<i32>",
        "  %r = stablehlo.dynamic_update_slice %x, %u, %i, %j : (tensor<16x8xf32>, tensor<2x9xf32>, tensor<i32>, tensor<i32>) -> tensor<16x8xf32>",
        "tensor<16x8xf32>",
    );
    let e = error(&big);
    assert!(
        e.starts_with("2:8:")
            && e.contains("stablehlo.dynamic_update_slice")
            && e.contains("larger than the operand's 8"),
        "{e}"
    );
    let few = module(
        "%x: tensor<16x8xf32>, %u: tensor<2x8xf32>, %i: tensor<i32>",
        "  %r = stablehlo.dynamic_update_slice %x, %u, %i : (tensor<16x8xf32>, tensor<2x8xf32>, tensor<i32>) -> tensor<16x8xf32>",
        "tensor<16x8xf32>",
    );
    assert!(error(&few).contains("has 1 start indices for an operand of rank 2"));
}

/// JAX 0.10.2's lowering of `lax.cond` and `lax.fori_loop`
/// (compiler/tests/data/jax_cond_fori.mlir, from `jax.jit(f).lower(...)`):
/// a `case` whose branches use the function's arguments, `while` loops in
/// the pretty form with calls in their bodies.
#[test]
fn jax_control_flow_round_trips() {
    let src = include_str!("data/jax_cond_fori.mlir");
    let m = roundtrip(src);
    let f = m.func("main").expect("@main");
    let kinds: Vec<String> = f.ops_in_order().map(|(_, op)| op.kind.name()).collect();
    assert_eq!(kinds.iter().filter(|k| *k == "stablehlo.while").count(), 1);
    assert_eq!(kinds.iter().filter(|k| *k == "stablehlo.case").count(), 1);
    let (_, case) = f
        .ops_in_order()
        .find(|(_, op)| matches!(op.kind, OpKind::Case(_)))
        .expect("case");
    assert_eq!(case.regions.len(), 2);
    // The branches use %arg1/%arg2 of @main directly.
    let uses_arg = case.regions[0]
        .body
        .iter()
        .any(|&id| f.op(id).operands.contains(&f.args[1]));
    assert!(uses_arg);
    let printed = print_module(&m);
    assert!(
        printed.contains("stablehlo.while(%iterArg = %arg2, %iterArg_0 = %5, "),
        "{printed}"
    );
    assert!(printed.contains("\n    cond {\n"), "{printed}");
    assert!(printed.contains("    } do {\n"), "{printed}");
    assert!(
        printed.contains("%3 = \"stablehlo.case\"(%2) ({\n      %9 = "),
        "{printed}"
    );
}

const WHILE: &str = r#"func.func @f(%x: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%a = %x, %i = %c) : tensor<4xf32>, tensor<i32>
  cond {
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    %b = stablehlo.tanh %a : tensor<4xf32>
    stablehlo.return %b, %j : tensor<4xf32>, tensor<i32>
  }
  return %r#0 : tensor<4xf32>
}
"#;

#[test]
fn while_pretty_and_generic_forms_are_one_program() {
    let m = roundtrip(WHILE);
    let generic = r#"func.func @f(%x: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = "stablehlo.while"(%x, %c) ({
  ^bb0(%a: tensor<4xf32>, %i: tensor<i32>):
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }, {
  ^bb0(%a: tensor<4xf32>, %i: tensor<i32>):
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    %b = stablehlo.tanh %a : tensor<4xf32>
    stablehlo.return %b, %j : tensor<4xf32>, tensor<i32>
  }) : (tensor<4xf32>, tensor<i32>) -> (tensor<4xf32>, tensor<i32>)
  return %r#0 : tensor<4xf32>
}
"#;
    let g = roundtrip(generic);
    assert_eq!(print_module(&m), print_module(&g));
    let f = m.func("f").expect("@f");
    assert_eq!(
        f.all_ops().len(),
        6,
        "a constant, the while, 1 cond op, 3 body ops"
    );
}

#[test]
fn region_errors_name_op_and_position() {
    // The body returns the wrong types.
    let bad_body = WHILE.replace(
        "stablehlo.return %b, %j : tensor<4xf32>, tensor<i32>",
        "stablehlo.return %j, %j : tensor<i32>, tensor<i32>",
    );
    let e = error(&bad_body);
    assert!(
        e.starts_with("3:10:")
            && e.contains("stablehlo.while")
            && e.contains("body region returns"),
        "{e}"
    );
    // A value defined in a region is not visible after it.
    let escaped = WHILE.replace("return %r#0 : tensor<4xf32>", "return %b : tensor<4xf32>");
    assert!(
        error(&escaped).contains("undefined value '%b'"),
        "{}",
        error(&escaped)
    );
    // Sibling regions do not see each other's values.
    let sibling = WHILE.replace("%j = stablehlo.add %i, %one", "%j = stablehlo.add %i, %p");
    assert!(
        error(&sibling).contains("undefined value '%p'"),
        "{}",
        error(&sibling)
    );
    // A case branch that returns the wrong type.
    let case = r#"func.func @f(%i: tensor<i32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %r = "stablehlo.case"(%i) ({
    stablehlo.return %x : tensor<4xf32>
  }, {
    %c = stablehlo.constant dense<0> : tensor<i32>
    stablehlo.return %c : tensor<i32>
  }) : (tensor<i32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"#;
    let e = error(case);
    assert!(
        e.starts_with("2:8:") && e.contains("branch 1 returns (tensor<i32>)"),
        "{e}"
    );
    let no_branch = case.replace(
        "({\n    stablehlo.return %x : tensor<4xf32>\n  }, {\n    %c = stablehlo.constant dense<0> : tensor<i32>\n    stablehlo.return %c : tensor<i32>\n  })",
        "",
    );
    assert!(
        error(&no_branch).contains("at least 1 region"),
        "{}",
        error(&no_branch)
    );
}

/// Calls inside regions are inlined like calls in the body (the while's
/// body calls `@closed_call`); the inlined module still verifies.
#[test]
fn calls_in_regions_are_inlined() {
    let mut m = roundtrip(include_str!("data/jax_cond_fori.mlir"));
    meshrun_compiler::ir::inline::inline_calls(&mut m).expect("inline");
    verify_module(&m).expect("verify after inlining");
    assert_eq!(m.funcs.len(), 1, "the private callee is dropped");
    let f = &m.funcs[0];
    let calls = f
        .all_ops()
        .into_iter()
        .filter(|&id| matches!(f.op(id).kind, OpKind::Call(_)))
        .count();
    assert_eq!(calls, 0);
    let printed = print_module(&m);
    assert!(printed.contains("stablehlo.tanh"), "{printed}");
    roundtrip(&printed);
}

/// `jnp.cumsum(x, axis=1)` as JAX prints it.
const CUMSUM: &str = r#"func.func @f(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %r = "stablehlo.reduce_window"(%x, %cst) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [3, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 4>, window_strides = array<i64: 1, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}
"#;

/// Max and sum over the same 2x2 windows (stride 1): two inputs, one body.
const TWO_INPUT_WINDOW: &str = r#"func.func @f(%x: tensor<2x4x4x3xf32>) -> tensor<2x3x3x3xf32> {
  %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %z = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %r:2 = "stablehlo.reduce_window"(%x, %x, %c, %z) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 1, 1, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c2: tensor<f32>, %d: tensor<f32>):
    %m = stablehlo.maximum %a, %c2 : tensor<f32>
    %s = stablehlo.add %b, %d : tensor<f32>
    stablehlo.return %m, %s : tensor<f32>, tensor<f32>
  }) : (tensor<2x4x4x3xf32>, tensor<2x4x4x3xf32>, tensor<f32>, tensor<f32>) -> (tensor<2x3x3x3xf32>, tensor<2x3x3x3xf32>)
  return %r#1 : tensor<2x3x3x3xf32>
}
"#;

/// The gradient of 2x2 max pooling as JAX prints it.
const MAX_POOL_GRAD: &str = r#"func.func @f(%x: tensor<8x8x6x4xf32>, %s: tensor<8x4x3x4xf32>) -> tensor<8x8x6x4xf32> {
  %z = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %r = "stablehlo.select_and_scatter"(%x, %s, %z) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %p = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %q = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %q : tensor<f32>
  }) : (tensor<8x8x6x4xf32>, tensor<8x4x3x4xf32>, tensor<f32>) -> tensor<8x8x6x4xf32>
  return %r : tensor<8x8x6x4xf32>
}
"#;

#[test]
fn reduce_window_as_jax_prints_it_round_trips() {
    let m = roundtrip(CUMSUM);
    let OpKind::ReduceWindow(rw) = last_kind(&m) else {
        panic!("not a reduce_window");
    };
    let w = rw.window(2).unwrap();
    assert_eq!(w.dims, [1, 4]);
    assert_eq!(w.padding, [(0, 0), (3, 0)]);
    assert_eq!(
        last_rule(&m),
        "#sdy.op_sharding_rule<([i, j], [])->([i, j]) {i=2, j=4} permutation={j}>"
    );
    let m = roundtrip(TWO_INPUT_WINDOW);
    assert_eq!(
        last_rule(&m),
        "#sdy.op_sharding_rule<([i, j, k, l], [i, j, k, l], [], [])->([i, j, k, l], [i, j, k, l]) \
         {i=2, j=3, k=3, l=3} permutation={j, k}>"
    );
    // Only window_dimensions is required; absent lists stay absent.
    let bare = CUMSUM.replace(
        "<{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [3, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 4>, window_strides = array<i64: 1, 1>}>",
        "<{window_dimensions = array<i64: 1, 2>}>",
    ).replace(") -> tensor<2x4xf32>\n  return", ") -> tensor<2x3xf32>\n  return")
    .replace("-> tensor<2x4xf32> {", "-> tensor<2x3xf32> {")
    .replace("return %r : tensor<2x4xf32>", "return %r : tensor<2x3xf32>");
    let m = roundtrip(&bare);
    assert!(
        !print_module(&m).contains("padding"),
        "{}",
        print_module(&m)
    );
}

#[test]
fn reduce_window_result_shape_follows_dilations_and_padding() {
    // The spec's example: 3x2 input, window [2, 1], strides [4, 1], base
    // dilations [2, 1], window dilations [3, 1], padding [[2, 1], [0, 0]].
    let src = r#"func.func @f(%x: tensor<3x2xi64>, %c: tensor<i64>) -> tensor<2x2xi64> {
  %r = "stablehlo.reduce_window"(%x, %c) <{base_dilations = array<i64: 2, 1>, padding = dense<[[2, 1], [0, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 3, 1>, window_dimensions = array<i64: 2, 1>, window_strides = array<i64: 4, 1>}> ({
  ^bb0(%a: tensor<i64>, %b: tensor<i64>):
    %s = stablehlo.add %a, %b : tensor<i64>
    stablehlo.return %s : tensor<i64>
  }) : (tensor<3x2xi64>, tensor<i64>) -> tensor<2x2xi64>
  return %r : tensor<2x2xi64>
}
"#;
    roundtrip(src);
    let wrong = src
        .replace("-> tensor<2x2xi64>", "-> tensor<3x2xi64>")
        .replace("return %r : tensor<2x2xi64>", "return %r : tensor<3x2xi64>");
    let e = error(&wrong);
    assert!(
        e.contains("stablehlo.reduce_window") && e.contains("tensor<2x2xi64>"),
        "{e}"
    );
}

#[test]
fn reduce_window_errors_name_op_and_position() {
    let short = CUMSUM.replace(
        "window_dimensions = array<i64: 1, 4>",
        "window_dimensions = array<i64: 4>",
    );
    let e = error(&short);
    assert!(
        e.starts_with("3:")
            && e.contains("stablehlo.reduce_window")
            && e.contains("window_dimensions has 1 entries but the input has rank 2"),
        "{e}"
    );
    let zero = CUMSUM.replace(
        "window_strides = array<i64: 1, 1>",
        "window_strides = array<i64: 1, 0>",
    );
    assert!(error(&zero).contains("window_strides must be positive, got 0"));
    let pad = CUMSUM.replace(
        "[[0, 0], [3, 0]]> : tensor<2x2xi64>",
        "[0, 3]> : tensor<2xi64>",
    );
    assert!(error(&pad).contains("padding"), "{}", error(&pad));
    let bad_body = CUMSUM.replace(
        "%s = stablehlo.add %a, %b : tensor<f32>",
        "%s = stablehlo.add %a, %a : tensor<f32>\n    %t = stablehlo.reshape %s : (tensor<f32>) -> tensor<1xf32>",
    );
    assert!(
        error(&bad_body).contains("stablehlo.reduce_window"),
        "{}",
        error(&bad_body)
    );
    let wrong_init = CUMSUM
        .replace(
            "%cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
            "%cst = stablehlo.constant dense<0.000000e+00> : tensor<1xf32>",
        )
        .replace(
            "(tensor<2x4xf32>, tensor<f32>)",
            "(tensor<2x4xf32>, tensor<1xf32>)",
        );
    let e = error(&wrong_init);
    assert!(e.contains("init value 0 must be a scalar"), "{e}");
    let odd = TWO_INPUT_WINDOW.replace("(%x, %x, %c, %z)", "(%x, %x, %c)");
    assert!(
        error(&odd).contains("stablehlo.reduce_window"),
        "{}",
        error(&odd)
    );
}

#[test]
fn select_and_scatter_as_jax_prints_it_round_trips() {
    let m = roundtrip(MAX_POOL_GRAD);
    let OpKind::SelectAndScatter(ss) = last_kind(&m) else {
        panic!("not a select_and_scatter");
    };
    assert_eq!(ss.window(4).unwrap().strides, [1, 2, 2, 1]);
    // As XLA's propagated dump of the max_pool_grad fixture prints it.
    assert_eq!(
        last_rule(&m),
        "#sdy.op_sharding_rule<([i, k, m, n], [i, j, l, n], [])->([i, k, m, n]) \
         {i=8, j=4, k=8, l=3, m=6, n=4} need_replication={j, l} permutation={k, m}>"
    );
}

#[test]
fn select_and_scatter_errors_name_op_and_position() {
    let e = error(&MAX_POOL_GRAD.replace("8x4x3x4xf32", "8x4x2x4xf32"));
    assert!(
        e.starts_with("3:")
            && e.contains("stablehlo.select_and_scatter")
            && e.contains(
                "source has shape tensor<8x4x2x4xf32> but the operand has [8, 4, 3, 4] windows"
            ),
        "{e}"
    );
    let select_f32 = MAX_POOL_GRAD.replace(
        "%p = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n    stablehlo.return %p : tensor<i1>",
        "%p = stablehlo.maximum %a, %b : tensor<f32>\n    stablehlo.return %p : tensor<f32>",
    );
    let e = error(&select_f32);
    assert!(e.contains("the select body returns"), "{e}");
    let one_region = MAX_POOL_GRAD.replace(
        "  }, {\n  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n    %q = stablehlo.add %a, %b : tensor<f32>\n    stablehlo.return %q : tensor<f32>\n",
        "",
    );
    assert!(
        error(&one_region).contains("region"),
        "{}",
        error(&one_region)
    );
}

#[test]
fn bitcast_convert_forms_rules_and_errors() {
    let pretty = module(
        "%x: tensor<8x16xui32>",
        "  %r = stablehlo.bitcast_convert %x : (tensor<8x16xui32>) -> tensor<8x16xf32>",
        "tensor<8x16xf32>",
    );
    let generic = module(
        "%x: tensor<8x16xui32>",
        "  %r = \"stablehlo.bitcast_convert\"(%x) : (tensor<8x16xui32>) -> tensor<8x16xf32>",
        "tensor<8x16xf32>",
    );
    let (a, b) = (roundtrip(&pretty), roundtrip(&generic));
    assert_eq!(last_kind(&a), last_kind(&b));
    assert!(print_module(&b).contains("stablehlo.bitcast_convert %arg0 : (tensor<8x16xui32>)"));
    assert_eq!(
        last_rule(&a),
        "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>"
    );
    // To a narrower type: a new minor dimension that needs replication.
    let split = roundtrip(&module(
        "%x: tensor<8xui32>",
        "  %r = stablehlo.bitcast_convert %x : (tensor<8xui32>) -> tensor<8x4xi8>",
        "tensor<8x4xi8>",
    ));
    assert_eq!(
        last_rule(&split),
        "#sdy.op_sharding_rule<([i])->([i, j]) {i=8, j=4} need_replication={j}>"
    );
    let e = error(&module(
        "%x: tensor<8xui32>",
        "  %r = stablehlo.bitcast_convert %x : (tensor<8xui32>) -> tensor<8x2xi8>",
        "tensor<8x2xi8>",
    ));
    assert!(
        e.starts_with("2:8:")
            && e.contains("stablehlo.bitcast_convert")
            && e.contains("tensor<8x4xi8>"),
        "{e}"
    );
    let e = error(&module(
        "%x: tensor<8xi1>",
        "  %r = stablehlo.bitcast_convert %x : (tensor<8xi1>) -> tensor<8xui8>",
        "tensor<8xui8>",
    ));
    assert!(e.contains("i1"), "{e}");
}

#[test]
fn optimization_barrier_as_jax_prints_it() {
    let src = "func.func @f(%a: tensor<16x8xf32>, %b: tensor<f32>) -> tensor<16x8xf32> {\n  %r:2 = stablehlo.optimization_barrier %a, %b : tensor<16x8xf32>, tensor<f32>\n  return %r#0 : tensor<16x8xf32>\n}\n";
    let m = roundtrip(src);
    assert!(print_module(&m)
        .contains("stablehlo.optimization_barrier %arg0, %arg1 : tensor<16x8xf32>, tensor<f32>"));
    // Each result follows its own operand, nothing else.
    assert_eq!(
        last_rule(&m),
        "#sdy.op_sharding_rule<([i, j], [])->([i, j], []) {i=16, j=8}>"
    );
    let generic = "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %r = \"stablehlo.optimization_barrier\"(%a) : (tensor<4xf32>) -> tensor<4xf32>\n  return %r : tensor<4xf32>\n}\n";
    roundtrip(generic);
    let bad = "func.func @f(%a: tensor<4xf32>) -> tensor<4xf16> {\n  %r = \"stablehlo.optimization_barrier\"(%a) : (tensor<4xf32>) -> tensor<4xf16>\n  return %r : tensor<4xf16>\n}\n";
    let e = error(bad);
    assert!(
        e.starts_with("2:8:") && e.contains("optimization_barrier"),
        "{e}"
    );
}

#[test]
fn propagation_barrier_as_shardy_prints_it() {
    let pretty = module(
        "%x: tensor<8x4xf32>",
        "  %r = sdy.propagation_barrier %x allowed_direction=BACKWARD : tensor<8x4xf32>",
        "tensor<8x4xf32>",
    );
    let generic = module(
        "%x: tensor<8x4xf32>",
        "  %r = \"sdy.propagation_barrier\"(%x) <{allowed_direction = #sdy<propagation_direction BACKWARD>}> : (tensor<8x4xf32>) -> tensor<8x4xf32>",
        "tensor<8x4xf32>",
    );
    let (a, b) = (roundtrip(&pretty), roundtrip(&generic));
    assert_eq!(last_kind(&a), last_kind(&b));
    let printed = print_module(&b);
    assert!(
        printed
            .contains("sdy.propagation_barrier %arg0 allowed_direction=BACKWARD : tensor<8x4xf32>"),
        "{printed}"
    );
    // The identity rule: one factor per dimension.
    assert_eq!(
        last_rule(&a),
        "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=4}>"
    );
    for (dir, want) in [
        ("BOTH", "cannot specify `BOTH`"),
        ("SIDEWAYS", "unknown propagation_direction 'SIDEWAYS'"),
    ] {
        let bad = module(
            "%x: tensor<8x4xf32>",
            &format!("  %r = sdy.propagation_barrier %x allowed_direction={dir} : tensor<8x4xf32>"),
            "tensor<8x4xf32>",
        );
        let e = error(&bad);
        assert!(e.starts_with("2:") && e.contains(want), "{e}");
    }
}

#[test]
fn custom_call_runs_sharding_and_carries_other_targets() {
    let pretty = module(
        "%x: tensor<8x4xf32>",
        "  %r = stablehlo.custom_call @Sharding(%x) {mhlo.sharding = \"{replicated}\"} : (tensor<8x4xf32>) -> tensor<8x4xf32>",
        "tensor<8x4xf32>",
    );
    let generic = module(
        "%x: tensor<8x4xf32>",
        "  %r = \"stablehlo.custom_call\"(%x) <{call_target_name = \"Sharding\"}> {mhlo.sharding = \"{replicated}\"} : (tensor<8x4xf32>) -> tensor<8x4xf32>",
        "tensor<8x4xf32>",
    );
    let (a, b) = (roundtrip(&pretty), roundtrip(&generic));
    assert_eq!(last_kind(&a), last_kind(&b));
    let printed = print_module(&b);
    assert!(
        printed
            .contains("stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = \"{replicated}\"}"),
        "{printed}"
    );
    assert_eq!(
        last_rule(&a),
        "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=4}>"
    );
    // Any other target is carried: its result types are the program's, it
    // has no rule unless the program writes one, and only `run` refuses it.
    for target in [
        "SPMDFullToShardShape",
        "xla.sdy.GlobalToLocalShape",
        "my_kernel",
        "xla_python_cpu_callback",
    ] {
        for body in [
            format!(
                "  %r = stablehlo.custom_call @{target}(%x) {{has_side_effect = true}} : (tensor<8x4xf32>) -> tensor<2xi32>"
            ),
            format!(
                "  %r = \"stablehlo.custom_call\"(%x) <{{call_target_name = \"{target}\", has_side_effect = true}}> : (tensor<8x4xf32>) -> tensor<2xi32>"
            ),
        ] {
            let m = roundtrip(&module("%x: tensor<8x4xf32>", &body, "tensor<2xi32>"));
            assert_eq!(last_rule(&m), "none", "{body}");
            let OpKind::CustomCall(c) = last_kind(&m) else {
                panic!("{body}")
            };
            let e = c.run_error().expect("an opaque target cannot run");
            assert!(
                e.contains(&format!("'@{target}' cannot run")) && !e.contains('\n'),
                "{e}"
            );
        }
    }
    // The identities still check their one operand and type.
    let e = error(&module(
        "%x: tensor<8x4xf32>",
        "  %r = stablehlo.custom_call @Sharding(%x) : (tensor<8x4xf32>) -> tensor<4x8xf32>",
        "tensor<4x8xf32>",
    ));
    assert!(e.starts_with("2:8:") && e.contains("identity"), "{e}");
}

/// The host-memory placements are identities that say where their value
/// goes: `@annotate_device_placement` by its `_xla_buffer_placement`
/// (kept whole, with its other entries, and printed back), `@MoveToHost`
/// and `@MoveToDevice` by name.
#[test]
fn placement_calls_say_where_their_value_goes() {
    use meshrun_compiler::ir::ops::custom_call::Placement;
    let cases = [
        ("annotate_device_placement", "{has_side_effect = true, mhlo.frontend_attributes = {_xla_buffer_placement = \"pinned_host\", other = \"x\"}}", Some(Placement::Host)),
        ("annotate_device_placement", "{mhlo.frontend_attributes = {_xla_buffer_placement = \"device\"}}", Some(Placement::Device)),
        ("annotate_device_placement", "{has_side_effect = true}", None),
        ("MoveToHost", "", Some(Placement::Host)),
        ("MoveToDevice", "", Some(Placement::Device)),
        ("Sharding", "{mhlo.sharding = \"{replicated}\"}", None),
    ];
    for (target, attrs, want) in cases {
        let body = format!(
            "  %r = stablehlo.custom_call @{target}(%x) {attrs} : (tensor<8x4xf32>) -> tensor<8x4xf32>"
        );
        let m = roundtrip(&module("%x: tensor<8x4xf32>", &body, "tensor<8x4xf32>"));
        let OpKind::CustomCall(c) = last_kind(&m) else {
            panic!("{body}")
        };
        assert_eq!(c.placement(), want, "{body}");
        assert_eq!(c.run_error(), None, "{body}");
        if attrs.contains("frontend") {
            let printed = print_module(&m);
            assert!(printed.contains("_xla_buffer_placement = "), "{printed}");
        }
    }
    let e = error(&module(
        "%x: tensor<8x4xf32>",
        "  %r = stablehlo.custom_call @annotate_device_placement(%x) {mhlo.frontend_attributes = \"host\"} : (tensor<8x4xf32>) -> tensor<8x4xf32>",
        "tensor<8x4xf32>",
    ));
    assert!(
        e.starts_with("2:") && e.contains("mhlo.frontend_attributes"),
        "{e}"
    );
}

/// A rule the program attaches to an opaque custom call
/// (`sdy.sharding_rule`, as Shardy's `custom_call_custom_rule`) is its
/// rule; one that does not fit the call's shapes is a one-line error.
#[test]
fn opaque_custom_call_takes_the_rule_the_program_writes() {
    let with_rule = |rule: &str| {
        module(
            "%x: tensor<8x4xf32>",
            &format!(
                "  %r = stablehlo.custom_call @foo(%x) {{sdy.sharding_rule = {rule}}} : (tensor<8x4xf32>) -> tensor<8x4xf32>"
            ),
            "tensor<8x4xf32>",
        )
    };
    let rule = "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=4} need_replication={j} blocked_propagation={i}, custom>";
    let m = roundtrip(&with_rule(rule));
    assert_eq!(last_rule(&m), rule);
    for (bad, why) in [
        (
            "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=2}, custom>",
            "dimension 1 has size 4 but its factors make 2",
        ),
        (
            "#sdy.op_sharding_rule<([i])->([i]) {i=8}, custom>",
            "has rank 1, the op's 2",
        ),
        (
            "#sdy.op_sharding_rule<([i, j])->([i, q]) {i=8, j=4}, custom>",
            "sdy.sharding_rule",
        ),
    ] {
        let m = parse_module(&with_rule(bad)).expect("the attribute is kept verbatim");
        let f = m.func("f").expect("@f");
        let (id, _) = f.ops_in_order().last().expect("an op");
        let e = rule_for_op(f, id).expect_err(bad).to_string();
        assert!(e.contains(why) && !e.contains('\n'), "{bad}: {e}");
    }
}

/// `!stablehlo.token`: token arguments and results, `after_all` and
/// `create_token` in both forms, tokens carried by a while loop; no
/// arithmetic op takes a token.
#[test]
fn tokens_round_trip_and_take_no_arithmetic() {
    let src = "func.func @f(%t: !stablehlo.token, %x: tensor<4xf32>) -> (!stablehlo.token, tensor<4xf32>) {
  %0 = stablehlo.create_token : !stablehlo.token
  %1 = stablehlo.after_all %t, %0 : !stablehlo.token
  %2 = \"stablehlo.after_all\"(%1) : (!stablehlo.token) -> !stablehlo.token
  %3:2 = stablehlo.while(%iterArg = %2, %iterArg_0 = %x) : !stablehlo.token, tensor<4xf32>
    cond {
    %c = stablehlo.constant dense<false> : tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %a = stablehlo.after_all %iterArg : !stablehlo.token
    stablehlo.return %a, %iterArg_0 : !stablehlo.token, tensor<4xf32>
  }
  return %3#0, %3#1 : !stablehlo.token, tensor<4xf32>
}
";
    let m = roundtrip(src);
    let printed = print_module(&m);
    assert!(
        printed.contains("stablehlo.after_all %arg0, %0 : !stablehlo.token")
            && printed.contains("stablehlo.create_token : !stablehlo.token")
            && printed.contains("-> (!stablehlo.token, tensor<4xf32>)"),
        "{printed}"
    );
    let f = m.func("f").expect("@f");
    for (id, op) in f.ops_in_order() {
        if matches!(op.kind, OpKind::AfterAll(_) | OpKind::CreateToken(_)) {
            assert_eq!(
                rule_for_op(f, id).unwrap().map(|r| r.num_factors()),
                Some(0)
            );
        }
    }
    // Host transfers ordered by tokens: no rule (propagation stops there).
    let m = roundtrip("func.func @f(%x: tensor<8x8xf32>) -> tensor<2x2xi32> {
  %0 = stablehlo.after_all : !stablehlo.token
  %1 = \"stablehlo.send\"(%x, %0) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 2>, is_host_transfer = true} : (tensor<8x8xf32>, !stablehlo.token) -> !stablehlo.token
  %2:2 = \"stablehlo.recv\"(%1) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 3>, is_host_transfer = true} : (!stablehlo.token) -> (tensor<2x2xi32>, !stablehlo.token)
  return %2#0 : tensor<2x2xi32>
}
");
    assert_eq!(last_rule(&m), "none");
    let e = error("func.func @f(%t: !stablehlo.token) -> tensor<2xf32> {\n  %r:2 = \"stablehlo.recv\"(%t) : (!stablehlo.token) -> (!stablehlo.token, tensor<2xf32>)\n  return %r#1 : tensor<2xf32>\n}\n");
    assert!(
        e.starts_with("2:") && e.contains("values received, then a token"),
        "{e}"
    );
    let e = error("func.func @f(%t: !stablehlo.token) -> !stablehlo.token {\n  %r = stablehlo.add %t, %t : !stablehlo.token\n  return %r : !stablehlo.token\n}\n");
    assert!(e.starts_with("2:") && e.contains("!stablehlo.token"), "{e}");
    let e = error("func.func @f(%x: tensor<4xf32>) -> !stablehlo.token {\n  %r = stablehlo.after_all %x : (tensor<4xf32>) -> !stablehlo.token\n  return %r : !stablehlo.token\n}\n");
    assert!(e.contains("operand 0 must be a !stablehlo.token"), "{e}");
}

#[test]
fn integer_and_chlo_elementwise_ops_round_trip() {
    let body = "  %s = stablehlo.shift_left %a, %b : tensor<4xui32>
  %t = stablehlo.shift_right_logical %s, %b : tensor<4xui32>
  %u = stablehlo.shift_right_arithmetic %t, %b : tensor<4xui32>
  %p = stablehlo.popcnt %u : tensor<4xui32>
  %c = stablehlo.count_leading_zeros %p : tensor<4xui32>
  %n = stablehlo.not %c : tensor<4xui32>
  %m = stablehlo.remainder %n, %a : tensor<4xui32>
  %r = \"stablehlo.xor\"(%m, %a) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>";
    let m = roundtrip(&module(
        "%a: tensor<4xui32>, %b: tensor<4xui32>",
        body,
        "tensor<4xui32>",
    ));
    assert_eq!(
        last_rule(&m),
        "#sdy.op_sharding_rule<([i], [i])->([i]) {i=4}>"
    );
    let chlo = "  %e = chlo.erf %x : tensor<4xf32> -> tensor<4xf32>
  %i = chlo.erf_inv %e : tensor<4xf32> -> tensor<4xf32>
  %r = chlo.next_after %i, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>";
    let m = roundtrip(&module("%x: tensor<4xf32>", chlo, "tensor<4xf32>"));
    let printed = print_module(&m);
    assert!(
        printed.contains("chlo.next_after %1, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>")
            || printed.contains("chlo.next_after"),
        "{printed}"
    );
    let e = error(&module(
        "%x: tensor<4xf32>",
        "  %r = stablehlo.shift_left %x, %x : tensor<4xf32>",
        "tensor<4xf32>",
    ));
    assert!(e.starts_with("2:8:") && e.contains("integer"), "{e}");
    let e = error(&module(
        "%x: tensor<4xi32>",
        "  %r = chlo.erf %x : tensor<4xi32> -> tensor<4xi32>",
        "tensor<4xi32>",
    ));
    assert!(e.starts_with("2:8:") && e.contains("floating"), "{e}");
}

#[test]
fn rng_bit_generator_forms_rules_and_errors() {
    let two = "(tensor<2xui64>, tensor<8x6xui32>)";
    let src = |line: &str, state: &str| {
        format!("func.func @f(%s: {state}) -> tensor<8x6xui32> {{\n  %st, %r = {line}\n  return %r : tensor<8x6xui32>\n}}\n")
    };
    let pretty = roundtrip(&src(
        &format!("stablehlo.rng_bit_generator %s, algorithm = DEFAULT : (tensor<2xui64>) -> {two}"),
        "tensor<2xui64>",
    ));
    let generic = roundtrip(&src(
        &format!("\"stablehlo.rng_bit_generator\"(%s) <{{rng_algorithm = #stablehlo<rng_algorithm DEFAULT>}}> : (tensor<2xui64>) -> {two}"),
        "tensor<2xui64>",
    ));
    assert_eq!(last_kind(&pretty), last_kind(&generic));
    assert!(print_module(&generic)
        .contains("stablehlo.rng_bit_generator %arg0, algorithm = DEFAULT : (tensor<2xui64>)"));
    // Shardy's (as XLA's propagated dumps print it).
    assert_eq!(
        last_rule(&pretty),
        "#sdy.op_sharding_rule<([i])->([i], [j, k]) {i=2, j=8, k=6} need_replication={i} blocked_propagation={i}>"
    );
    let philox3 = roundtrip(&src(
        "stablehlo.rng_bit_generator %s, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<8x6xui32>)",
        "tensor<3xui64>",
    ));
    assert_ne!(last_kind(&philox3), last_kind(&pretty));
    let e = error(&src(
        "stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<3xui64>) -> (tensor<3xui64>, tensor<8x6xui32>)",
        "tensor<3xui64>",
    ));
    assert!(
        e.starts_with("2:13:") && e.contains("rng_bit_generator") && e.contains("THREE_FRY"),
        "{e}"
    );
    let e = error(&src(
        "stablehlo.rng_bit_generator %s, algorithm = DEFAULT : (tensor<4xui32>) -> (tensor<4xui32>, tensor<8x6xui32>)",
        "tensor<4xui32>",
    ));
    assert!(e.contains("ui64"), "{e}");
    let e = error(&src(
        "stablehlo.rng_bit_generator %s, algorithm = FAST : (tensor<2xui64>) -> (tensor<2xui64>, tensor<8x6xui32>)",
        "tensor<2xui64>",
    ));
    assert!(e.contains("FAST") && e.contains("PHILOX"), "{e}");
}

/// A convolution `%r` of `%x: LHS` and `%w: RHS` as JAX prints it.
fn conv_module(
    lhs: &str,
    rhs: &str,
    dims: &str,
    window: &str,
    groups: (i64, i64),
    result: &str,
) -> String {
    module(
        &format!("%x: {lhs}, %w: {rhs}"),
        &format!(
            "  %r = stablehlo.convolution(%x, %w) dim_numbers = {dims}, window = {{{window}}} {{batch_group_count = {} : i64, feature_group_count = {} : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}} : ({lhs}, {rhs}) -> {result}",
            groups.1, groups.0
        ),
        result,
    )
}

const CONV_NHWC: &str = "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]";
const CONV_SAME: &str = "stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]";

#[test]
fn convolution_as_jax_prints_it_round_trips() {
    let src = conv_module(
        "tensor<8x16x16x3xf32>",
        "tensor<3x3x3x8xf32>",
        CONV_NHWC,
        CONV_SAME,
        (1, 1),
        "tensor<8x16x16x8xf32>",
    );
    let m = roundtrip(&src);
    let printed = print_module(&m);
    assert!(
        printed.contains("%0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<8x16x16x3xf32>, tensor<3x3x3x8xf32>) -> tensor<8x16x16x8xf32>"),
        "{printed}"
    );
    // The generic form with the same attributes is the same op.
    let generic = module(
        "%x: tensor<8x16x16x3xf32>, %w: tensor<3x3x3x8xf32>",
        "  %r = \"stablehlo.convolution\"(%x, %w) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<1> : tensor<2x2xi64>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>], rhs_dilation = array<i64: 1, 1>, window_reversal = array<i1: false, false>, window_strides = array<i64: 1, 1>}> : (tensor<8x16x16x3xf32>, tensor<3x3x3x8xf32>) -> tensor<8x16x16x8xf32>",
        "tensor<8x16x16x8xf32>",
    );
    assert_eq!(last_kind(&roundtrip(&generic)), last_kind(&m));
    // The raw spelling of the dimension numbers, a partial window and a
    // sharding in the dictionary.
    let raw = module(
        "%x: tensor<2x3x10xf32>, %w: tensor<4x3x3xf32>",
        "  %r = \"stablehlo.convolution\"(%x, %w) {dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 1, input_spatial_dimensions = [2], kernel_input_feature_dimension = 1, kernel_output_feature_dimension = 0, kernel_spatial_dimensions = [2], output_batch_dimension = 0, output_feature_dimension = 1, output_spatial_dimensions = [2]>, window_strides = array<i64: 2>, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"x\"}, {}, {}]>]>} : (tensor<2x3x10xf32>, tensor<4x3x3xf32>) -> tensor<2x4x4xf32>",
        "tensor<2x4x4xf32>",
    );
    let raw = format!("sdy.mesh @mesh = <[\"x\"=2]>\n{raw}");
    let printed = print_module(&roundtrip(&raw));
    assert!(
        printed.contains("stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {stride = [2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"x\"}, {}, {}]>]>} :"),
        "{printed}"
    );
}

#[test]
fn convolution_result_shape_follows_window_and_groups() {
    // JAX's depthwise conv with strides, uneven padding and both dilations.
    let m = roundtrip(&conv_module(
        "tensor<8x16x16x3xf32>",
        "tensor<3x3x1x6xf32>",
        CONV_NHWC,
        "stride = [2, 2], pad = [[1, 0], [0, 2]], lhs_dilate = [1, 2], rhs_dilate = [2, 1], reverse = [false, false]",
        (3, 1),
        "tensor<8x7x16x6xf32>",
    ));
    assert!(matches!(last_kind(&m), OpKind::Convolution(c) if c.feature_group_count == 3));
    // A weight gradient: batch groups, the output feature from the kernel.
    roundtrip(&conv_module(
        "tensor<3x16x16x6xf32>",
        "tensor<3x16x16x12xf32>",
        "[f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f]",
        "stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [true, false]",
        (1, 3),
        "tensor<3x3x2x12xf32>",
    ));
    // Negative padding removes input elements.
    roundtrip(&conv_module(
        "tensor<1x10x10x1xf32>",
        "tensor<2x2x1x1xf32>",
        CONV_NHWC,
        "pad = [[-2, 0], [0, -3]]",
        (1, 1),
        "tensor<1x7x6x1xf32>",
    ));
}

#[test]
fn convolution_rules_match_shardy() {
    // The cases of Shardy's op_sharding_rule_registry.mlir (conv_*).
    let window = "stride = [2, 2], pad = [[0, 1], [0, 1]]";
    let cases = [
        ("tensor<2x224x224x192xf32>", "tensor<3x3x192x64xf32>", (1, 1), "tensor<2x112x112x64xf32>",
         "#sdy.op_sharding_rule<([i, jk, lm, n], [k, m, n, o])->([i, j, l, o]) {i=2, j=112, k=2, l=112, m=2, n=192, o=64} reduction={k, m, n} permutation={j, l}>"),
        ("tensor<2x224x224x192xf32>", "tensor<112x112x192x64xf32>", (1, 1), "tensor<2x57x57x64xf32>",
         "#sdy.op_sharding_rule<([i, jk, lm, n], [j, l, n, o])->([i, k, m, o]) {i=2, j=112, k=2, l=112, m=2, n=192, o=64} reduction={j, l, n} permutation={k, m}>"),
        ("tensor<8x224x224x192xf32>", "tensor<3x3x192x256xf32>", (1, 4), "tensor<2x112x112x256xf32>",
         "#sdy.op_sharding_rule<([ij, kl, mn, o], [l, n, o, ip])->([j, k, m, ip]) {i=4, j=2, k=112, l=2, m=112, n=2, o=192, p=64} reduction={l, n, o} permutation={k, m}>"),
        ("tensor<4x224x224x192xf32>", "tensor<3x3x192x256xf32>", (1, 4), "tensor<1x112x112x256xf32>",
         "#sdy.op_sharding_rule<([i, kl, mn, o], [l, n, o, ip])->([j, k, m, ip]) {i=4, j=1, k=112, l=2, m=112, n=2, o=192, p=64} reduction={l, n, o} permutation={k, m}>"),
        ("tensor<8x224x224x192xf32>", "tensor<3x3x12x256xf32>", (16, 1), "tensor<8x112x112x256xf32>",
         "#sdy.op_sharding_rule<([i, jk, lm, no], [k, m, o, np])->([i, j, l, np]) {i=8, j=112, k=2, l=112, m=2, n=16, o=12, p=16} reduction={k, m, o} permutation={j, l}>"),
        ("tensor<8x224x224x16xf32>", "tensor<3x3x1x256xf32>", (16, 1), "tensor<8x112x112x256xf32>",
         "#sdy.op_sharding_rule<([i, jk, lm, n], [k, m, o, np])->([i, j, l, np]) {i=8, j=112, k=2, l=112, m=2, n=16, o=1, p=16} reduction={k, m, o} permutation={j, l}>"),
        ("tensor<8x224x224x192xf32>", "tensor<3x3x12x16xf32>", (16, 1), "tensor<8x112x112x16xf32>",
         "#sdy.op_sharding_rule<([i, jk, lm, no], [k, m, o, n])->([i, j, l, n]) {i=8, j=112, k=2, l=112, m=2, n=16, o=12} reduction={k, m, o} permutation={j, l}>"),
    ];
    for (lhs, rhs, groups, result, rule) in cases {
        let m = roundtrip(&conv_module(lhs, rhs, CONV_NHWC, window, groups, result));
        assert_eq!(last_rule(&m), rule, "{lhs} {rhs} {groups:?}");
    }
}

#[test]
fn convolution_errors_name_op_and_position() {
    let bad = |lhs: &str, rhs: &str, dims: &str, window: &str, groups, result: &str| {
        error(&conv_module(lhs, rhs, dims, window, groups, result))
    };
    let e = bad(
        "tensor<8x16x16x3xf32>",
        "tensor<3x3x4x8xf32>",
        CONV_NHWC,
        CONV_SAME,
        (1, 1),
        "tensor<8x16x16x8xf32>",
    );
    assert!(
        e.starts_with("2:8:")
            && e.contains("stablehlo.convolution")
            && e.contains("kernel input feature size 4"),
        "{e}"
    );
    let e = bad(
        "tensor<8x16x16x4xf32>",
        "tensor<3x3x2x6xf32>",
        CONV_NHWC,
        CONV_SAME,
        (2, 2),
        "tensor<4x16x16x6xf32>",
    );
    assert!(e.contains("cannot both be above 1"), "{e}");
    let e = bad(
        "tensor<8x16x16x3xf32>",
        "tensor<3x3x1x8xf32>",
        CONV_NHWC,
        CONV_SAME,
        (3, 1),
        "tensor<8x16x16x8xf32>",
    );
    assert!(e.contains("not a multiple of feature_group_count 3"), "{e}");
    let e = bad(
        "tensor<8x16x16x3xf32>",
        "tensor<3x3x3x8xf32>",
        "[b, 0, 0, f]x[0, 1, i, o]->[b, 0, 1, f]",
        CONV_SAME,
        (1, 1),
        "tensor<8x16x16x8xf32>",
    );
    assert!(
        e.starts_with("2:") && e.contains("dimension_numbers") && e.contains("twice"),
        "{e}"
    );
    let e = bad(
        "tensor<8x16x16x3xf32>",
        "tensor<3x3x3x8xf32>",
        "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, f]",
        CONV_SAME,
        (1, 1),
        "tensor<8x16x16x8xf32>",
    );
    assert!(e.contains("one rank"), "{e}");
    let e = bad(
        "tensor<8x16x16x3xf32>",
        "tensor<3x3x3x8xf32>",
        CONV_NHWC,
        "stride = [1], pad = [[1, 1], [1, 1]]",
        (1, 1),
        "tensor<8x16x16x8xf32>",
    );
    assert!(e.contains("window_strides has 1 entries"), "{e}");
    let e = bad(
        "tensor<8x16x16x3xf32>",
        "tensor<3x3x3x8xf32>",
        CONV_NHWC,
        "stride = [0, 1]",
        (1, 1),
        "tensor<8x16x16x8xf32>",
    );
    assert!(e.contains("window_strides must be positive"), "{e}");
    let e = bad(
        "tensor<8x16x16x3xf32>",
        "tensor<3x3x3x8xf32>",
        CONV_NHWC,
        "stride = [1, 1], spin = [1]",
        (1, 1),
        "tensor<8x16x16x8xf32>",
    );
    assert!(
        e.starts_with("2:") && e.contains("one of stride, pad"),
        "{e}"
    );
    let e = bad(
        "tensor<8x16x16x3xf32>",
        "tensor<3x3x3x8xf32>",
        CONV_NHWC,
        CONV_SAME,
        (1, 1),
        "tensor<8x14x14x8xf32>",
    );
    assert!(
        e.contains("the operands and attributes give tensor<8x16x16x8xf32>"),
        "{e}"
    );
}

/// `jnp.argmax(x, axis=1)` as JAX 0.10.2 prints it (its `reducer` form).
const ARGMAX: &str = r#"func.func @f(%arg0: tensor<8x16xf32>) -> tensor<8xi32> {
    %0 = stablehlo.iota dim = 1 : tensor<8x16xi32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1:2 = stablehlo.reduce(%arg0 init: %cst), (%0 init: %c) across dimensions = [1] : (tensor<8x16xf32>, tensor<8x16xi32>, tensor<f32>, tensor<i32>) -> (tensor<8xf32>, tensor<8xi32>)
     reducer(%arg1: tensor<f32>, %arg3: tensor<f32>) (%arg2: tensor<i32>, %arg4: tensor<i32>)  {
      %2 = stablehlo.compare GT, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %4 = stablehlo.or %2, %3 : tensor<i1>
      %5 = stablehlo.compare EQ, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = stablehlo.compare LT, %arg2, %arg4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %7 = stablehlo.and %5, %6 : tensor<i1>
      %8 = stablehlo.or %4, %7 : tensor<i1>
      %9 = stablehlo.select %4, %arg1, %arg3 : tensor<i1>, tensor<f32>
      %10 = stablehlo.select %8, %arg2, %arg4 : tensor<i1>, tensor<i32>
      stablehlo.return %9, %10 : tensor<f32>, tensor<i32>
    }
    %r = stablehlo.add %1#1, %1#1 : tensor<8xi32>
    return %r : tensor<8xi32>
}
"#;

/// The reduce of a module (the first one).
fn first_reduce(m: &Module) -> (meshrun_compiler::ir::ops::reduce::Reduce, String) {
    let f = m.func("f").expect("@f");
    let (id, op) = f
        .ops_in_order()
        .find(|(_, op)| matches!(op.kind, OpKind::Reduce(_)))
        .expect("a reduce");
    let OpKind::Reduce(r) = &op.kind else {
        unreachable!()
    };
    let rule = rule_for_op(f, id).expect("rule").expect("a rule");
    (r.clone(), rule.to_string())
}

#[test]
fn argmax_reduce_in_jax_form_round_trips_with_its_body() {
    let m = roundtrip(ARGMAX);
    let (r, rule) = first_reduce(&m);
    assert_eq!(r.dims(), [1]);
    assert_eq!(r.kinds(), None, "a comparator is no all-reduce op");
    assert_eq!(r.body.func().args.len(), 4);
    assert_eq!(r.body.func().body.len(), 9);
    let printed = print_module(&m);
    // JAX's layout: one argument pair per input, (a_k, b_k) = (arg k, arg N+k).
    assert!(
        printed.contains(
            "%3:2 = stablehlo.reduce(%arg0 init: %1), (%0 init: %2) across dimensions = [1] : \
             (tensor<8x16xf32>, tensor<8x16xi32>, tensor<f32>, tensor<i32>) -> (tensor<8xf32>, tensor<8xi32>)\n     \
             reducer(%arg1: tensor<f32>, %arg3: tensor<f32>) (%arg2: tensor<i32>, %arg4: tensor<i32>)  {\n      \
             %5 = stablehlo.compare  GT, %arg1, %arg3"
                .replace("compare  GT", "compare GT")
                .as_str()
        ),
        "{printed}"
    );
    // Region values are numbered after the enclosing block's (MLIR).
    assert!(printed.contains("      stablehlo.return %12, %13 : tensor<f32>, tensor<i32>\n    }\n    %4 = stablehlo.add %3#1, %3#1"), "{printed}");
    assert_eq!(
        rule,
        "#sdy.op_sharding_rule<([i, j], [i, j], [], [])->([i], [i]) {i=8, j=16} reduction={j}>"
    );
    // The generic form with the body as a region is the same op.
    let generic = ARGMAX
        .replace(
            "stablehlo.reduce(%arg0 init: %cst), (%0 init: %c) across dimensions = [1] :",
            "\"stablehlo.reduce\"(%arg0, %0, %cst, %c) <{dimensions = array<i64: 1>}> ({\n^bb0(%arg1: tensor<f32>, %arg2: tensor<i32>, %arg3: tensor<f32>, %arg4: tensor<i32>):",
        )
        .replace(
            "     reducer(%arg1: tensor<f32>, %arg3: tensor<f32>) (%arg2: tensor<i32>, %arg4: tensor<i32>)  {\n",
            "",
        )
        .replace(
            "stablehlo.return %9, %10 : tensor<f32>, tensor<i32>\n    }",
            "stablehlo.return %9, %10 : tensor<f32>, tensor<i32>\n    }) :",
        );
    // Move the signature after the region.
    let sig = " (tensor<8x16xf32>, tensor<8x16xi32>, tensor<f32>, tensor<i32>) -> (tensor<8xf32>, tensor<8xi32>)";
    let generic = generic
        .replacen(&format!("{sig}\n"), "\n", 1)
        .replace("}) :", &format!("}}) :{sig}"));
    let g = roundtrip(&generic);
    assert_eq!(first_reduce(&g).0, r);
}

#[test]
fn reduce_applies_form_is_the_single_op_body() {
    let src = module(
        "%x: tensor<4x8xf32>, %s: tensor<f32>",
        "  %r = stablehlo.reduce(%x init: %s) applies stablehlo.maximum across dimensions = [0, 1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<f32>",
        "tensor<f32>",
    );
    let m = roundtrip(&src);
    let (r, rule) = first_reduce(&m);
    assert_eq!(r.kind(), Some(meshrun_compiler::ir::ReduceKind::Maximum));
    assert_eq!(
        rule,
        "#sdy.op_sharding_rule<([i, j], [])->([]) {i=4, j=8} reduction={i, j}>"
    );
    assert!(print_module(&m).contains("applies stablehlo.maximum across dimensions = [0, 1]"));
    // The same body written out with its operands swapped is the same
    // reduction (the fast path) but prints in the `reducer` form.
    let swapped = module(
        "%x: tensor<4x8xf32>, %s: tensor<f32>",
        "  %r = stablehlo.reduce(%x init: %s) across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>\n   reducer(%a: tensor<f32>, %b: tensor<f32>)  {\n     %m = stablehlo.maximum %b, %a : tensor<f32>\n     stablehlo.return %m : tensor<f32>\n   }",
        "tensor<4xf32>",
    );
    let m = roundtrip(&swapped);
    assert_eq!(
        first_reduce(&m).0.kind(),
        Some(meshrun_compiler::ir::ReduceKind::Maximum)
    );
    assert!(print_module(&m).contains("reducer(%arg2: tensor<f32>, %arg3: tensor<f32>)"));
}

#[test]
fn reduce_body_errors_name_op_and_position() {
    let body = |ops: &str| {
        module(
            "%x: tensor<4x8xf32>, %s: tensor<f32>",
            &format!("  %r = stablehlo.reduce(%x init: %s) across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>\n   reducer(%a: tensor<f32>, %b: tensor<f32>)  {{\n{ops}\n   }}"),
            "tensor<4xf32>",
        )
    };
    // A body op that is not element-wise.
    let e = error(&body(
        "     %m = stablehlo.dot_general %a, %b, contracting_dims = [] x [] : (tensor<f32>, tensor<f32>) -> tensor<f32>\n     stablehlo.return %m : tensor<f32>",
    ));
    assert!(
        e.starts_with("2:8:")
            && e.contains("stablehlo.reduce")
            && e.contains("'stablehlo.dot_general', which is not an element-wise op"),
        "{e}"
    );
    // A body that returns the wrong type.
    let e = error(&body(
        "     %m = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>\n     stablehlo.return %m : tensor<i1>",
    ));
    assert!(
        e.starts_with("2:8:")
            && e.contains("the body returns (tensor<i1>) but must return (tensor<f32>)"),
        "{e}"
    );
    // An ill-typed op inside the body: its own position is named.
    let e = error(&body(
        "     %m = stablehlo.and %a, %b : tensor<f32>\n     stablehlo.return %m : tensor<f32>",
    ));
    assert!(
        e.starts_with("2:8:") && e.contains("in its body at 4:11: stablehlo.and"),
        "{e}"
    );
}

const TOP_K: &str = r#"func.func @f(%arg0: tensor<16x32xf32>) -> (tensor<16x4xf32>, tensor<16x4xi32>) {
    %values, %indices = chlo.top_k(%arg0, k = 4) : tensor<16x32xf32> -> (tensor<16x4xf32>, tensor<16x4xi32>)
    return %values, %indices : tensor<16x4xf32>, tensor<16x4xi32>
}
"#;

#[test]
fn top_k_as_jax_prints_it_round_trips() {
    let m = roundtrip(TOP_K);
    let OpKind::TopK(t) = last_kind(&m) else {
        panic!("not a top_k");
    };
    assert_eq!(t.k, 4);
    let printed = print_module(&m);
    assert!(
        printed.contains(
            "= chlo.top_k(%arg0, k = 4) : tensor<16x32xf32> -> (tensor<16x4xf32>, tensor<16x4xi32>)"
        ),
        "{printed}"
    );
    // The generic form and XLA's name for it are the same op.
    let generic = TOP_K.replace(
        "chlo.top_k(%arg0, k = 4) : tensor<16x32xf32> -> (tensor<16x4xf32>, tensor<16x4xi32>)",
        "\"chlo.top_k\"(%arg0) <{k = 4 : i64}> : (tensor<16x32xf32>) -> (tensor<16x4xf32>, tensor<16x4xi32>)",
    );
    assert!(roundtrip(&generic) == m);
    let mhlo = TOP_K.replace("chlo.top_k", "mhlo.topk");
    assert!(roundtrip(&mhlo) == m);
    // Shardy's rule for mhlo.topk: the last dim needs replication and is
    // blocked (k < 32); with k equal to its size it passes through.
    assert_eq!(
        last_rule(&m),
        "#sdy.op_sharding_rule<([i, j])->([i, j], [i, j]) {i=16, j=32} need_replication={j} blocked_propagation={j}>"
    );
    let all = TOP_K.replace("k = 4", "k = 32").replace("16x4x", "16x32x");
    assert_eq!(
        last_rule(&roundtrip(&all)),
        "#sdy.op_sharding_rule<([i, j])->([i, j], [i, j]) {i=16, j=32}>"
    );
}

#[test]
fn top_k_errors_name_op_and_position() {
    let e = error(&TOP_K.replace("k = 4", "k = 33").replace("16x4x", "16x33x"));
    assert!(
        e.starts_with("2:25:")
            && e.contains("chlo.top_k")
            && e.contains("k = 33 is outside [0, 32]"),
        "{e}"
    );
    let e = error(&TOP_K.replace("16x4xi32", "16x4xi64"));
    assert!(
        e.contains("chlo.top_k") && e.contains("tensor<16x4xi32>"),
        "{e}"
    );
    let scalar = "func.func @f(%x: tensor<f32>) -> tensor<0xf32> {\n  %v, %i = chlo.top_k(%x, k = 0) : tensor<f32> -> (tensor<0xf32>, tensor<0xi32>)\n  return %v : tensor<0xf32>\n}\n";
    assert!(
        error(scalar).contains("rank at least 1"),
        "{}",
        error(scalar)
    );
    let e = error(&TOP_K.replace("(%arg0, k = 4)", "(%arg0)"));
    assert!(e.starts_with("2:"), "{e}");
}

#[test]
fn reverse_pretty_and_generic_forms_are_one_op() {
    let src = module(
        "%x: tensor<16x12xf32>",
        "  %r = stablehlo.reverse %x, dims = [1, 0] : tensor<16x12xf32>",
        "tensor<16x12xf32>",
    );
    let m = roundtrip(&src);
    let OpKind::Reverse(r) = last_kind(&m) else {
        panic!("not a reverse");
    };
    assert_eq!(r.dimensions, vec![1, 0]);
    assert!(print_module(&m).contains("stablehlo.reverse %arg0, dims = [1, 0] : tensor<16x12xf32>"));
    let generic = module(
        "%x: tensor<16x12xf32>",
        "  %r = \"stablehlo.reverse\"(%x) <{dimensions = array<i64: 1, 0>}> : (tensor<16x12xf32>) -> tensor<16x12xf32>",
        "tensor<16x12xf32>",
    );
    assert!(roundtrip(&generic) == m);
    assert_eq!(
        last_rule(&m),
        "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=16, j=12} permutation={i, j}>"
    );
}

#[test]
fn reverse_errors_name_op_and_position() {
    let bad = |dims: &str| {
        error(&module(
            "%x: tensor<16x12xf32>",
            &format!("  %r = stablehlo.reverse %x, dims = {dims} : tensor<16x12xf32>"),
            "tensor<16x12xf32>",
        ))
    };
    let e = bad("[2]");
    assert!(
        e.starts_with("2:8:")
            && e.contains("stablehlo.reverse")
            && e.contains("dimension 2 is out of range"),
        "{e}"
    );
    assert!(bad("[1, 1]").contains("dimension 1 is repeated"));
    assert!(bad("[-1]").contains("out of range"));
    let e = error(&module(
        "%x: tensor<16x12xf32>",
        "  %r = stablehlo.reverse %x, dims = [0] : (tensor<16x12xf32>) -> tensor<12x16xf32>",
        "tensor<12x16xf32>",
    ));
    assert!(e.contains("stablehlo.reverse"), "{e}");
}

#[test]
fn reduce_precision_pretty_and_generic_forms_are_one_op() {
    let pretty = module(
        "%x: tensor<16x8xf32>",
        "  %r = stablehlo.reduce_precision %x, format = e5m2 : tensor<16x8xf32>",
        "tensor<16x8xf32>",
    );
    let generic = module(
        "%x: tensor<16x8xf32>",
        "  %r = \"stablehlo.reduce_precision\"(%x) <{exponent_bits = 5 : i32, mantissa_bits = 2 : i32}> : (tensor<16x8xf32>) -> tensor<16x8xf32>",
        "tensor<16x8xf32>",
    );
    let (a, b) = (roundtrip(&pretty), roundtrip(&generic));
    assert_eq!(last_kind(&a), last_kind(&b));
    let OpKind::ReducePrecision(r) = last_kind(&a) else {
        panic!("not reduce_precision");
    };
    assert_eq!((r.exponent_bits, r.mantissa_bits), (5, 2));
    assert!(last_kind(&a).is_elementwise());
    let printed = print_module(&b);
    assert!(
        printed.contains("%0 = stablehlo.reduce_precision %arg0, format = e5m2 : tensor<16x8xf32>"),
        "{printed}"
    );
    assert_eq!(
        last_rule(&a),
        "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=16, j=8}>"
    );
    // Other attributes and a sharding stay in the dictionary after the format.
    let sharded = module(
        "%x: tensor<4xbf16>",
        "  %r = stablehlo.reduce_precision %x, format = e8m7 {mhlo.frontend_attributes = {a = \"b\"}} : tensor<4xbf16>",
        "tensor<4xbf16>",
    );
    let printed = print_module(&roundtrip(&sharded));
    assert!(
        printed.contains("format = e8m7 {mhlo.frontend_attributes = {a = \"b\"}} : tensor<4xbf16>"),
        "{printed}"
    );
}

#[test]
fn reduce_precision_errors_name_op_and_position() {
    let op = |args: &str, text: &str, result: &str| error(&module(args, text, result));
    let f32x4 = "%x: tensor<4xf32>";
    let e = op(
        f32x4,
        "  %r = stablehlo.reduce_precision %x, format = e0m3 : tensor<4xf32>",
        "tensor<4xf32>",
    );
    assert!(
        e.contains("2:8") && e.contains("exponent_bits must be at least 1, not 0"),
        "{e}"
    );
    let e = op(
        f32x4,
        "  %r = \"stablehlo.reduce_precision\"(%x) <{exponent_bits = 4 : i32, mantissa_bits = -1 : i32}> : (tensor<4xf32>) -> tensor<4xf32>",
        "tensor<4xf32>",
    );
    assert!(
        e.contains("mantissa_bits must be at least 0, not -1"),
        "{e}"
    );
    let e = op(
        "%x: tensor<4xi32>",
        "  %r = stablehlo.reduce_precision %x, format = e4m3 : tensor<4xi32>",
        "tensor<4xi32>",
    );
    assert!(e.contains("operand must be a float tensor"), "{e}");
    let e = op(
        f32x4,
        "  %r = stablehlo.reduce_precision %x, format = e4 : tensor<4xf32>",
        "tensor<4xf32>",
    );
    assert!(e.contains("expected a format eXmY (e8m7)"), "{e}");
    let e = op(
        f32x4,
        "  %r = \"stablehlo.reduce_precision\"(%x) <{exponent_bits = 4294967296 : i32, mantissa_bits = 1 : i32}> : (tensor<4xf32>) -> tensor<4xf32>",
        "tensor<4xf32>",
    );
    assert!(e.contains("does not fit in i32"), "{e}");
    let e = op(
        f32x4,
        "  %r = \"stablehlo.reduce_precision\"(%x) <{exponent_bits = 4 : i32}> : (tensor<4xf32>) -> tensor<4xf32>",
        "tensor<4xf32>",
    );
    assert!(e.contains("needs attribute 'mantissa_bits'"), "{e}");
    let e = op(
        f32x4,
        "  %r = \"stablehlo.reduce_precision\"(%x) <{exponent_bits = 4 : i32, mantissa_bits = 3 : i32}> : (tensor<4xf32>) -> tensor<4xf16>",
        "tensor<4xf16>",
    );
    assert!(
        e.contains(
            "result has type tensor<4xf16> but the operands and attributes give tensor<4xf32>"
        ),
        "{e}"
    );
    assert!(!e.contains('\n'), "one line: {e}");
}

#[test]
fn sdy_all_reduce_as_shardy_prints_it() {
    let mesh = "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2, \"c\"=2]>\n";
    let pretty = format!(
        "{mesh}{}",
        module(
            "%x: tensor<8x16xf32>",
            "  %r = sdy.all_reduce {\"b\", \"c\":(1)2} %x out_sharding=<@mesh, [{\"a\"}, {}], unreduced={\"c\":(2)1}> : tensor<8x16xf32>",
            "tensor<8x16xf32>",
        )
    );
    let generic = format!(
        "{mesh}{}",
        module(
            "%x: tensor<8x16xf32>",
            "  %r = \"sdy.all_reduce\"(%x) <{out_sharding = #sdy.sharding<@mesh, [{\"a\"}, {}], unreduced={\"c\":(2)1}>, reduction_axes = #sdy<axis_ref_list{\"b\", \"c\":(1)2}>}> : (tensor<8x16xf32>) -> tensor<8x16xf32>",
            "tensor<8x16xf32>",
        )
    );
    let (a, b) = (roundtrip(&pretty), roundtrip(&generic));
    assert_eq!(last_kind(&a), last_kind(&b));
    let printed = print_module(&b);
    assert!(
        printed.contains("sdy.all_reduce {\"b\", \"c\":(1)2} %arg0 out_sharding=<@mesh, [{\"a\"}, {}], unreduced={\"c\":(2)1}> : tensor<8x16xf32>"),
        "{printed}"
    );
    for (op, want) in [
        (
            "sdy.all_reduce {\"b\"} %x out_sharding=<@mesh, [{\"a\"}, {}], unreduced={\"b\"}>",
            "which out_sharding still has unreduced",
        ),
        (
            "sdy.all_reduce {} %x out_sharding=<@mesh, [{\"a\"}, {}]>",
            "reduces along no axes",
        ),
        (
            "sdy.all_reduce {\"b\"} %x out_sharding=<@mesh, [{\"a\"}]>",
            "out_sharding has 1 dimensions but the operand has rank 2",
        ),
    ] {
        let bad = format!(
            "{mesh}{}",
            module(
                "%x: tensor<8x16xf32>",
                &format!("  %r = {op} : tensor<8x16xf32>"),
                "tensor<8x16xf32>"
            )
        );
        let e = error(&bad);
        assert!(e.contains(want), "{e}");
    }
}
