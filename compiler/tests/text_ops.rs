//! Each op form, in its pretty syntax (as JAX prints it) and in MLIR's
//! generic syntax: both must parse to the same `OpKind`, operands, result
//! types, shardings and attributes, and the module must round-trip.

use meshrun_compiler::ir::ops::call::Call;
use meshrun_compiler::ir::ops::constant::Constant;
use meshrun_compiler::ir::ops::{clamp::Clamp, compare::Compare, select::Select};
use std::path::PathBuf;

use meshrun_compiler::ir::ops::dot_general::DotGeneral;
use meshrun_compiler::ir::ops::reduce::Reduce;
use meshrun_compiler::ir::ops::reshard::Reshard;
use meshrun_compiler::ir::ops::sharding_constraint::ShardingConstraint;
use meshrun_compiler::ir::ops::sharding_group::ShardingGroup;
use meshrun_compiler::ir::{
    BinaryOp, CompareDirection, CompareType, ConstantDialect, DenseLiteral, DotDims, ElemType,
    Function, ReduceKind, Scalar, TensorType, UnaryOp,
};
use meshrun_compiler::sharding::{AxisRef, DimSharding, MeshRef, TensorSharding};
use meshrun_compiler::text::{parse_module, print_module};
use meshrun_compiler::{DiagKind, Module, OpKind};

/// Arguments every snippet may use.
const ARGS: &str =
    "%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %p: tensor<4x8xi1>, %s: tensor<f32>, \
                    %i: tensor<8xi32>, %m: tensor<8x4xf32>, %t: tensor<2x4x8xf32>";

/// A module whose `@f` has the snippet as its body (plus a callee `@g`).
fn module_with(body: &str) -> String {
    format!(
        "sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n\
         func.func @f({ARGS}) {{\n{body}\n  return\n}}\n\
         func.func private @g(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {{\n  return %x : tensor<4x8xf32>\n}}\n"
    )
}

fn parse_body(body: &str) -> Module {
    let src = module_with(body);
    let m = parse_module(&src).unwrap_or_else(|e| panic!("{e}\n--- in ---\n{src}"));
    let printed = print_module(&m);
    let again = parse_module(&printed).unwrap_or_else(|e| panic!("reparse: {e}\n{printed}"));
    assert!(m == again, "round trip changed the module:\n{printed}");
    m
}

fn f32s(shape: &[i64]) -> TensorType {
    TensorType::new(shape.to_vec(), ElemType::F32)
}

/// Parse the pretty and the generic snippet; both must yield one op (the
/// last one of the body) with the same kind, operand count and results.
fn check(pretty: &str, generic: &str, kind: OpKind, n_operands: usize, results: &[TensorType]) {
    for body in [pretty, generic] {
        let m = parse_body(body);
        let f = m.func("f").expect("@f");
        let (_, op) = f.ops_in_order().last().expect("an op");
        assert_eq!(op.kind, kind, "kind of `{body}`");
        assert_eq!(op.operands.len(), n_operands, "operands of `{body}`");
        let tys: Vec<TensorType> = op.results.iter().map(|r| f.ty(*r).clone()).collect();
        assert_eq!(tys, results, "result types of `{body}`");
    }
}

#[test]
fn every_unary_op_in_both_forms() {
    for &u in UnaryOp::ALL {
        let name = u.full_name();
        // CHLO's pretty form writes its signature as `t -> t`.
        let sig = if u.is_chlo() {
            "tensor<4x8xf32> -> tensor<4x8xf32>"
        } else {
            "tensor<4x8xf32>"
        };
        check(
            &format!("  %0 = {name} %a : {sig}"),
            &format!("  %0 = \"{name}\"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>"),
            OpKind::Unary(u),
            1,
            &[f32s(&[4, 8])],
        );
    }
}

#[test]
fn every_binary_op_in_both_forms() {
    for &bin in BinaryOp::ALL {
        let name = bin.full_name();
        let sig = if bin.is_chlo() {
            "tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>"
        } else {
            "tensor<4x8xf32>"
        };
        check(
            &format!("  %0 = {name} %a, %b : {sig}"),
            &format!(
                "  %0 = \"{name}\"(%a, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>"
            ),
            OpKind::Binary(bin),
            2,
            &[f32s(&[4, 8])],
        );
    }
}

#[test]
fn compare_select_clamp() {
    let i1 = TensorType::new(vec![4, 8], ElemType::I1);
    check(
        "  %0 = stablehlo.compare  GT, %a, %b,  FLOAT : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>",
        "  %0 = \"stablehlo.compare\"(%a, %b) <{compare_type = #stablehlo<comparison_type FLOAT>, \
         comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>",
        OpKind::Compare(Compare {
            direction: CompareDirection::Gt,
            compare_type: Some(CompareType::Float),
        }),
        2,
        &[i1],
    );
    check(
        "  %0 = stablehlo.compare LE, %i, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>",
        "  %0 = \"stablehlo.compare\"(%i, %i) {comparison_direction = #stablehlo<comparison_direction LE>} \
         : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>",
        OpKind::Compare(Compare {
            direction: CompareDirection::Le,
            compare_type: None,
        }),
        2,
        &[TensorType::new(vec![8], ElemType::I1)],
    );
    check(
        "  %0 = stablehlo.select %p, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>",
        "  %0 = \"stablehlo.select\"(%p, %a, %b) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>",
        OpKind::Select(Select),
        3,
        &[f32s(&[4, 8])],
    );
    check(
        "  %0 = stablehlo.clamp %s, %a, %s : (tensor<f32>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>",
        "  %0 = \"stablehlo.clamp\"(%s, %a, %s) : (tensor<f32>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>",
        OpKind::Clamp(Clamp),
        3,
        &[f32s(&[4, 8])],
    );
}

#[test]
fn constants_iota_convert() {
    let lit = DenseLiteral::Elements(vec![Scalar::Float(1.0), Scalar::Float(-2.5)]);
    check(
        "  %cst = stablehlo.constant dense<[1.000000e+00, -2.500000e+00]> : tensor<2xf32>",
        "  %0 = \"stablehlo.constant\"() <{value = dense<[1.0, -2.5]> : tensor<2xf32>}> : () -> tensor<2xf32>",
        OpKind::Constant(Constant::new(lit.clone())),
        0,
        &[f32s(&[2])],
    );
    check(
        "  %0 = sdy.constant dense<[1.0, -2.5]> : tensor<2xf32>",
        "  %0 = \"sdy.constant\"() <{value = dense<\"0x0000803F000020C0\"> : tensor<2xf32>}> : () -> tensor<2xf32>",
        OpKind::Constant(Constant {
            value: lit,
            dialect: ConstantDialect::Sdy,
        }),
        0,
        &[f32s(&[2])],
    );
    check(
        "  %c = stablehlo.constant dense<0xFF800000> : tensor<f32>",
        "  %c = \"stablehlo.constant\"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>",
        OpKind::Constant(Constant::new(DenseLiteral::Splat(Scalar::Float(f64::NEG_INFINITY)))),
        0,
        &[f32s(&[])],
    );
    check(
        "  %0 = stablehlo.iota dim = 1 : tensor<4x8xi32>",
        "  %0 = \"stablehlo.iota\"() <{iota_dimension = 1 : i64}> : () -> tensor<4x8xi32>",
        OpKind::Iota(meshrun_compiler::ir::ops::iota::Iota { dim: 1 }),
        0,
        &[TensorType::new(vec![4, 8], ElemType::I32)],
    );
    check(
        "  %0 = stablehlo.convert %a : (tensor<4x8xf32>) -> tensor<4x8xbf16>",
        "  %0 = \"stablehlo.convert\"(%a) : (tensor<4x8xf32>) -> tensor<4x8xbf16>",
        OpKind::Convert(meshrun_compiler::ir::ops::convert::Convert),
        1,
        &[TensorType::new(vec![4, 8], ElemType::BF16)],
    );
    check(
        "  %0 = stablehlo.convert %s : tensor<f32>",
        "  %0 = \"stablehlo.convert\"(%s) : (tensor<f32>) -> tensor<f32>",
        OpKind::Convert(meshrun_compiler::ir::ops::convert::Convert),
        1,
        &[f32s(&[])],
    );
}

#[test]
fn shape_ops() {
    check(
        "  %0 = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<4x8xf32>",
        "  %0 = \"stablehlo.broadcast_in_dim\"(%s) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>",
        OpKind::BroadcastInDim(meshrun_compiler::ir::ops::broadcast_in_dim::BroadcastInDim { dims: vec![] }),
        1,
        &[f32s(&[4, 8])],
    );
    check(
        "  %0 = stablehlo.broadcast_in_dim %a, dims = [1, 2] : (tensor<4x8xf32>) -> tensor<2x4x8xf32>",
        "  %0 = \"stablehlo.broadcast_in_dim\"(%a) {broadcast_dimensions = dense<[1, 2]> : tensor<2xi64>} \
         : (tensor<4x8xf32>) -> tensor<2x4x8xf32>",
        OpKind::BroadcastInDim(meshrun_compiler::ir::ops::broadcast_in_dim::BroadcastInDim { dims: vec![1, 2] }),
        1,
        &[f32s(&[2, 4, 8])],
    );
    check(
        "  %0 = stablehlo.reshape %a : (tensor<4x8xf32>) -> tensor<32xf32>",
        "  %0 = \"stablehlo.reshape\"(%a) : (tensor<4x8xf32>) -> tensor<32xf32>",
        OpKind::Reshape(meshrun_compiler::ir::ops::reshape::Reshape),
        1,
        &[f32s(&[32])],
    );
    check(
        "  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32>",
        "  %0 = \"stablehlo.transpose\"(%a) <{permutation = array<i64: 1, 0>}> : (tensor<4x8xf32>) -> tensor<8x4xf32>",
        OpKind::Transpose(meshrun_compiler::ir::ops::transpose::Transpose { perm: vec![1, 0] }),
        1,
        &[f32s(&[8, 4])],
    );
    check(
        "  %0 = stablehlo.concatenate %a, %b, %a, dim = 0 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<12x8xf32>",
        "  %0 = \"stablehlo.concatenate\"(%a, %b, %a) <{dimension = 0 : i64}> \
         : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<12x8xf32>",
        OpKind::Concatenate(meshrun_compiler::ir::ops::concatenate::Concatenate { dim: 0 }),
        3,
        &[f32s(&[12, 8])],
    );
    let slice = OpKind::Slice(meshrun_compiler::ir::ops::slice::Slice {
        start: vec![0, 2],
        limit: vec![4, 8],
        strides: vec![1, 2],
    });
    check(
        "  %0 = stablehlo.slice %a [0:4, 2:8:2] : (tensor<4x8xf32>) -> tensor<4x3xf32>",
        "  %0 = \"stablehlo.slice\"(%a) <{limit_indices = array<i64: 4, 8>, start_indices = array<i64: 0, 2>, \
         strides = array<i64: 1, 2>}> : (tensor<4x8xf32>) -> tensor<4x3xf32>",
        slice.clone(),
        1,
        &[f32s(&[4, 3])],
    );
    // The older pretty form kept the indices in the attribute dictionary.
    check(
        "  %0 = stablehlo.slice %a {start_indices = array<i64: 0, 2>, limit_indices = array<i64: 4, 8>, \
         strides = array<i64: 1, 2>} : (tensor<4x8xf32>) -> tensor<4x3xf32>",
        "  %0 = \"stablehlo.slice\"(%a) {limit_indices = dense<[4, 8]> : tensor<2xi64>, start_indices = \
         dense<[0, 2]> : tensor<2xi64>, strides = dense<[1, 2]> : tensor<2xi64>} : (tensor<4x8xf32>) -> tensor<4x3xf32>",
        slice,
        1,
        &[f32s(&[4, 3])],
    );
    check(
        "  %0 = stablehlo.pad %a, %s, low = [0, 1], high = [2, 3], interior = [0, 1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<6x19xf32>",
        "  %0 = \"stablehlo.pad\"(%a, %s) <{edge_padding_high = array<i64: 2, 3>, edge_padding_low = array<i64: 0, 1>, \
         interior_padding = array<i64: 0, 1>}> : (tensor<4x8xf32>, tensor<f32>) -> tensor<6x19xf32>",
        OpKind::Pad(meshrun_compiler::ir::ops::pad::Pad {
            low: vec![0, 1],
            high: vec![2, 3],
            interior: vec![0, 1],
        }),
        2,
        &[f32s(&[6, 19])],
    );
}

#[test]
fn dots() {
    check(
        "  %0 = stablehlo.dot_general %t, %t, batching_dims = [0] x [0], contracting_dims = [2] x [2], \
         precision = [DEFAULT, HIGHEST] : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>",
        "  %0 = \"stablehlo.dot_general\"(%t, %t) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], \
         rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2]>, \
         precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]}> \
         : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>",
        OpKind::DotGeneral(DotGeneral {
            dims: DotDims {
                lhs_batch: vec![0],
                rhs_batch: vec![0],
                lhs_contract: vec![2],
                rhs_contract: vec![2],
            },
            precision: Some(vec!["DEFAULT".into(), "HIGHEST".into()]),
            is_dot: false,
        }),
        2,
        &[f32s(&[2, 4, 4])],
    );
    check(
        "  %0 = stablehlo.dot_general %a, %m, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>",
        "  %0 = \"stablehlo.dot_general\"(%a, %m) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], \
         rhs_contracting_dimensions = [0]>}> : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>",
        OpKind::DotGeneral(DotGeneral {
            dims: DotDims {
                lhs_contract: vec![1],
                rhs_contract: vec![0],
                ..DotDims::default()
            },
            precision: None,
            is_dot: false,
        }),
        2,
        &[f32s(&[4, 4])],
    );
    check(
        "  %0 = stablehlo.dot %a, %m, precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>",
        "  %0 = \"stablehlo.dot\"(%a, %m) <{precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> \
         : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>",
        OpKind::DotGeneral(DotGeneral {
            dims: DotDims::for_dot(2),
            precision: Some(vec!["DEFAULT".into(), "DEFAULT".into()]),
            is_dot: true,
        }),
        2,
        &[f32s(&[4, 4])],
    );
}

#[test]
fn reduces_in_all_three_forms() {
    let kind = |kind| OpKind::Reduce(Reduce::with_kind(vec![1], kind, &[ElemType::F32]));
    check(
        "  %0 = stablehlo.reduce(%a init: %s) applies stablehlo.maximum across dimensions = [1] \
         : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>",
        "  %0 = \"stablehlo.reduce\"(%a, %s) <{dimensions = array<i64: 1>}> ({\n  \
         ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n    \
         %r = \"stablehlo.maximum\"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n    \
         \"stablehlo.return\"(%r) : (tensor<f32>) -> ()\n  }) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>",
        kind(ReduceKind::Maximum),
        2,
        &[f32s(&[4])],
    );
    check(
        "  %0 = stablehlo.reduce(%a init: %s) across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>\n   \
         reducer(%x: tensor<f32>, %y: tensor<f32>)  {\n    \
         %r = stablehlo.add %x, %y : tensor<f32>\n    \
         stablehlo.return %r : tensor<f32>\n  }",
        "  %0 = \"stablehlo.reduce\"(%a, %s) ({\n  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n    \
         %r = stablehlo.add %x, %y : tensor<f32>\n    stablehlo.return %r : tensor<f32>\n  }) \
         {dimensions = array<i64: 1>} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>",
        kind(ReduceKind::Add),
        2,
        &[f32s(&[4])],
    );
}

#[test]
fn calls() {
    check(
        "  %0 = call @g(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>",
        "  %0 = \"func.call\"(%a) <{callee = @g}> : (tensor<4x8xf32>) -> tensor<4x8xf32>",
        OpKind::Call(Call::new("g")),
        1,
        &[f32s(&[4, 8])],
    );
    check(
        "  %0 = func.call @g(%b) : (tensor<4x8xf32>) -> tensor<4x8xf32>",
        "  %0 = \"func.call\"(%b) {callee = @g} : (tensor<4x8xf32>) -> tensor<4x8xf32>",
        OpKind::Call(Call::new("g")),
        1,
        &[f32s(&[4, 8])],
    );
}

#[test]
fn sdy_ops() {
    let x_open = TensorSharding::new(
        "mesh",
        vec![
            DimSharding::open(vec![AxisRef::full("x")]),
            DimSharding::open(vec![]),
        ],
    );
    check(
        "  %0 = sdy.sharding_constraint %a <@mesh, [{\"x\", ?}, {?}]> : tensor<4x8xf32>",
        "  %0 = \"sdy.sharding_constraint\"(%a) <{sharding = #sdy.sharding<@mesh, [{\"x\", ?}, {?}]>}> \
         : (tensor<4x8xf32>) -> tensor<4x8xf32>",
        OpKind::ShardingConstraint(ShardingConstraint {
            sharding: x_open.clone(),
        }),
        1,
        &[f32s(&[4, 8])],
    );
    let sub = TensorSharding {
        mesh: MeshRef::Symbol("mesh".into()),
        dims: vec![
            DimSharding::closed(vec![AxisRef::sub("y", 1, 2)]),
            DimSharding {
                axes: vec![AxisRef::full("x")],
                is_closed: true,
                priority: Some(2),
            },
        ],
        replicated: vec![AxisRef::sub("y", 2, 2)],
        unreduced: vec![],
        unreduced_op: Default::default(),
    };
    check(
        "  %0 = sdy.reshard %a <@mesh, [{\"y\":(1)2}, {\"x\"}p2], replicated={\"y\":(2)2}> : tensor<4x8xf32>",
        "  %0 = \"sdy.reshard\"(%a) <{sharding = #sdy.sharding<@mesh, [{\"y\":(1)2}, {\"x\"}p2], replicated={\"y\":(2)2}>}> \
         : (tensor<4x8xf32>) -> tensor<4x8xf32>",
        OpKind::Reshard(Reshard { sharding: sub }),
        1,
        &[f32s(&[4, 8])],
    );
    check(
        "  sdy.sharding_group %a group_id=7 : tensor<4x8xf32>",
        "  \"sdy.sharding_group\"(%a) <{group_id = 7 : i64}> : (tensor<4x8xf32>) -> ()",
        OpKind::ShardingGroup(ShardingGroup { group_id: 7 }),
        1,
        &[],
    );
}

#[test]
fn chlo_square_is_the_square_op_and_prints_in_chlo_syntax() {
    check(
        "  %0 = chlo.square %a : tensor<4x8xf32> -> tensor<4x8xf32>",
        "  %0 = \"chlo.square\"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>",
        OpKind::Unary(UnaryOp::Square),
        1,
        &[f32s(&[4, 8])],
    );
    let m = parse_body("  %0 = chlo.square %a : tensor<4x8xf32> -> tensor<4x8xf32>");
    assert!(
        print_module(&m).contains("%0 = chlo.square %arg0 : tensor<4x8xf32> -> tensor<4x8xf32>\n")
    );
    // `square` is not a StableHLO op.
    let e = parse_module(&module_with("  %0 = stablehlo.square %a : tensor<4x8xf32>"))
        .expect_err("unknown");
    assert_eq!(e.kind, DiagKind::UnknownOp);
}

fn only_op_of(m: &Module) -> (&Function, &meshrun_compiler::ir::OpData) {
    let f = m.func("f").expect("@f");
    let (_, op) = f.ops_in_order().last().expect("an op");
    (f, op)
}

#[test]
fn op_attributes_split_into_shardings_and_verbatim_attrs() {
    let pretty = "  %0 = stablehlo.transpose %a, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, \
                  sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"x\"}, {}]>]>, \
                  sdy.sharding_rule = #sdy.op_sharding_rule<([j, i])->([i, j]) {i=8, j=4}>, xla_shape = \"f32[8,4]{0,1}\", unit_attr} \
                  : (tensor<4x8xf32>) -> tensor<8x4xf32>";
    let generic = "  %0 = \"stablehlo.transpose\"(%a) <{permutation = array<i64: 1, 0>}> {result_layout = dense<[0, 1]> : tensor<2xindex>, \
                   sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"x\"}, {}]>]>, \
                   sdy.sharding_rule = #sdy.op_sharding_rule<([j, i])->([i, j]) {i=8, j=4}>, xla_shape = \"f32[8,4]{0,1}\", unit_attr} \
                   : (tensor<4x8xf32>) -> tensor<8x4xf32>";
    for body in [pretty, generic] {
        let m = parse_body(body);
        let (_, op) = only_op_of(&m);
        let sh = op.shardings.as_ref().expect("shardings");
        assert_eq!(sh.len(), 1);
        assert_eq!(sh[0].to_string(), r#"<@mesh, [{"x"}, {}]>"#);
        let attrs: Vec<(&str, Option<&str>)> = op
            .attrs
            .iter()
            .map(|a| (a.name.as_str(), a.value.as_deref()))
            .collect();
        assert_eq!(
            attrs,
            vec![
                ("result_layout", Some("dense<[0, 1]> : tensor<2xindex>")),
                (
                    "sdy.sharding_rule",
                    Some("#sdy.op_sharding_rule<([j, i])->([i, j]) {i=8, j=4}>")
                ),
                ("xla_shape", Some("\"f32[8,4]{0,1}\"")),
                ("unit_attr", None),
            ]
        );
        // Printed back with sdy.sharding in MLIR's sorted position.
        let printed = print_module(&m);
        assert!(
            printed.contains("{result_layout = dense<[0, 1]> : tensor<2xindex>, sdy.sharding = #sdy.sharding_per_value"),
            "{printed}"
        );
    }
}

#[test]
fn constant_with_attributes_before_the_value() {
    let m = parse_body(
        "  %0 = sdy.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"y\"}]>]>} dense<[true, false, true, true]> : tensor<4xi1>",
    );
    let (_, op) = only_op_of(&m);
    assert!(op.shardings.is_some());
    assert_eq!(
        op.kind,
        OpKind::Constant(Constant {
            value: DenseLiteral::Elements(vec![
                Scalar::Bool(true),
                Scalar::Bool(false),
                Scalar::Bool(true),
                Scalar::Bool(true)
            ]),
            dialect: ConstantDialect::Sdy,
        })
    );
    assert!(print_module(&m).contains(
        "sdy.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"y\"}]>]>} dense<[true, false, true, true]> : tensor<4xi1>"
    ));
}

#[test]
fn multi_result_values_and_uses() {
    let src = "func.func @two(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {\n  return %x, %x : tensor<4xf32>, tensor<4xf32>\n}\n\
               func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %p:2 = call @two(%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)\n  \
               %q, %r = call @two(%p#1) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)\n  \
               %s = stablehlo.add %p#0, %r : tensor<4xf32>\n  return %s : tensor<4xf32>\n}";
    let m = parse_module(src).expect("parses");
    let main = m.func("main").expect("main");
    let ops: Vec<_> = main.ops_in_order().map(|(_, op)| op.clone()).collect();
    assert_eq!(ops[0].results.len(), 2);
    assert_eq!(ops[1].operands, vec![ops[0].results[1]]);
    assert_eq!(ops[2].operands, vec![ops[0].results[0], ops[1].results[1]]);
    let printed = print_module(&m);
    assert!(printed.contains("%0:2 = call @two(%arg0)"), "{printed}");
    assert!(printed.contains("%1:2 = call @two(%0#1)"), "{printed}");
    assert!(
        printed.contains("%2 = stablehlo.add %0#0, %1#1 : tensor<4xf32>"),
        "{printed}"
    );
    assert!(parse_module(&printed).expect("reparses") == m);
}

#[test]
fn structure_variants() {
    // Bare top level (Shardy tests), comments, locations and alias definitions.
    let src = "#loc = loc(unknown)\n// a comment\n#loc1 = loc(\"x.py\":3:4)\n\
               sdy.mesh @m = <[\"a\"=2]> loc(#loc)\n\
               func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\"}]>} loc(\"a\"), %arg1: tensor<8xf32> loc(#loc1)) -> tensor<8xf32> attributes {some.flag} {\n\
               %0 = stablehlo.add %arg0, %arg1 : tensor<8xf32> loc(fused[\"a\", \"b\"](#loc1))\n\
               return %0 : tensor<8xf32> loc(#loc)\n} loc(#loc)\n#loc2 = loc(\"y\")\n";
    let m = parse_module(src).expect("parses");
    assert_eq!(m.name, None);
    assert_eq!(m.funcs[0].attrs[0].name, "some.flag");
    assert_eq!(m.funcs[0].attrs[0].value, None);
    let printed = print_module(&m);
    assert!(printed.starts_with("module {\n"), "{printed}");
    assert!(parse_module(&printed).expect("reparses") == m);

    let m = parse_module("module attributes {a.b = 1 : i64} {\n}").expect("parses");
    assert_eq!(m.attrs[0].value.as_deref(), Some("1 : i64"));
    let m = parse_module("module @named {\n  sdy.mesh @e = <[]>\n}").expect("parses");
    assert_eq!(m.name.as_deref(), Some("named"));
    assert!(m.meshes[0].mesh.axes.is_empty());
    let m = parse_module("").expect("empty input is an empty module");
    assert!(m.funcs.is_empty());
}

#[test]
fn generic_all_ops_file_equals_pretty_one() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let pretty = std::fs::read_to_string(dir.join("all_ops.mlir")).expect("all_ops.mlir");
    let generic =
        std::fs::read_to_string(dir.join("all_ops.generic.mlir")).expect("all_ops.generic.mlir");
    let a = parse_module(&pretty).unwrap_or_else(|e| panic!("all_ops.mlir: {e}"));
    let b = parse_module(&generic).unwrap_or_else(|e| panic!("all_ops.generic.mlir: {e}"));
    assert!(a == b, "generic and pretty forms parse differently");
    let printed = print_module(&a);
    assert!(parse_module(&printed).expect("reparses") == a);
    assert_eq!(print_module(&b), printed);
    // Spot checks: meshes with device ids, constant bits, the reducer form.
    assert_eq!(
        a.mesh("ordered").and_then(|m| m.mesh.device_ids.clone()),
        Some(vec![7, 6, 5, 4, 3, 2, 1, 0])
    );
    let main = a.func("main").expect("main");
    let kinds: Vec<String> = main.ops_in_order().map(|(_, op)| op.kind.name()).collect();
    assert!(kinds.iter().any(|k| k == "sdy.sharding_group"));
    assert_eq!(
        main.ops_in_order()
            .filter(|(_, op)| matches!(op.kind, OpKind::Reduce(_)))
            .count(),
        2
    );
}

#[test]
fn dot_algorithm_is_kept_and_printed_in_the_pretty_syntax() {
    const ALG: &str = "<lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, \
                       lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 3, \
                       allow_imprecise_accumulation = false>";
    let pretty = format!(
        "  %0 = stablehlo.dot_general %a, %m, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT], \
         algorithm = {ALG} {{mhlo.frontend_attributes = {{a = \"b\"}}}} : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>"
    );
    let generic = format!(
        "  %0 = \"stablehlo.dot_general\"(%a, %m) <{{algorithm = #stablehlo.dot_algorithm{ALG}, \
         dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, \
         precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}}> \
         {{mhlo.frontend_attributes = {{a = \"b\"}}}} : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>"
    );
    let a = parse_body(&pretty);
    let b = parse_body(&generic);
    assert!(a == b, "pretty and generic dot with algorithm differ");
    let (_, op) = only_op_of(&a);
    assert_eq!(op.attrs[0].name, "algorithm");
    assert_eq!(
        op.attrs[0].value.as_deref(),
        Some(format!("#stablehlo.dot_algorithm{ALG}").as_str())
    );
    let printed = print_module(&a);
    assert!(
        printed.contains(&format!(
            "precision = [DEFAULT, DEFAULT], algorithm = {ALG} {{mhlo.frontend_attributes"
        )),
        "{printed}"
    );
}

/// A pretty dot's `, key = value` entries may come in any order (printed
/// in MLIR's), an empty pair of contracting dimensions is still printed,
/// and an unknown key is refused with the keys the spelling takes.
#[test]
fn dot_entries_in_any_order_and_their_keys() {
    let m = parse_body(
        "  %0 = stablehlo.dot_general %a, %m, precision = [DEFAULT, HIGH], contracting_dims = [1] x [0] \
         : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>\n\
         %1 = stablehlo.dot_general %i, %i, contracting_dims = [] x [] : (tensor<8xi32>, tensor<8xi32>) -> tensor<8x8xi32>",
    );
    let printed = print_module(&m);
    for line in [
        "stablehlo.dot_general %arg0, %arg5, contracting_dims = [1] x [0], precision = [DEFAULT, HIGH] :",
        "stablehlo.dot_general %arg4, %arg4, contracting_dims = [] x [] :",
    ] {
        assert!(printed.contains(line), "{line}\n{printed}");
    }
    for (body, keys) in [
        (
            "  %0 = stablehlo.dot_general %a, %m, foo = 1 : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>",
            "'batching_dims', 'contracting_dims', 'precision' or 'algorithm' in stablehlo.dot_general",
        ),
        (
            "  %0 = stablehlo.dot %a, %m, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>",
            "'precision' or 'algorithm' in stablehlo.dot,",
        ),
    ] {
        let e = parse_module(&module_with(body)).expect_err("an unknown key");
        assert!(e.to_string().contains(keys), "{e}");
    }
}

/// Loop arguments are printed with MLIR's names: `%iterArg`, made unique
/// with `_K` from one counter per function; a loop nested in a loop body
/// sees the outer names (and continues the counter), a later loop in the
/// function body does not (and restarts it).
#[test]
fn while_arguments_are_named_as_mlir_names_them() {
    let src = r#"func.func @main(%arg0: tensor<i32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0:2 = stablehlo.while(%a = %arg0, %b = %arg1) : tensor<i32>, tensor<4xf32>
  cond {
    %1 = stablehlo.compare LT, %a, %a : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %1 = stablehlo.while(%c = %b) : tensor<4xf32>
    cond {
      %2 = stablehlo.compare LT, %a, %a : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %2 : tensor<i1>
    } do {
      stablehlo.return %c : tensor<4xf32>
    }
    stablehlo.return %a, %1 : tensor<i32>, tensor<4xf32>
  }
  %1 = stablehlo.while(%d = %0#1) : tensor<4xf32>
  cond {
    %2 = stablehlo.compare LT, %arg0, %arg0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  } do {
    stablehlo.return %d : tensor<4xf32>
  }
  return %1 : tensor<4xf32>
}
"#;
    let m = parse_module(src).unwrap_or_else(|e| panic!("{e}"));
    let printed = print_module(&m);
    for line in [
        "stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1)",
        "stablehlo.while(%iterArg_1 = %iterArg_0)",
        "stablehlo.compare LT, %iterArg, %iterArg",
        "stablehlo.return %iterArg_1 : tensor<4xf32>",
        "stablehlo.while(%iterArg = %0#1)",
        "stablehlo.return %iterArg : tensor<4xf32>",
    ] {
        assert!(printed.contains(line), "no `{line}` in\n{printed}");
    }
    let again = parse_module(&printed).unwrap_or_else(|e| panic!("reparse: {e}\n{printed}"));
    assert_eq!(print_module(&again), printed);
}
