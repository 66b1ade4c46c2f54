//! Explicit reshards (SPEC §6): which operand or result gets resharded,
//! which partial results get all-reduced, and how that is lowered.

use meshrun_compiler::ir::{ElemType, Module, OpKind, ReduceKind, TensorType};
use meshrun_compiler::partition::global::explicit_reshards::insert_explicit_reshards;
use meshrun_compiler::partition::global::{GStepKind, GlobalProgram};
use meshrun_compiler::partition::partition;
use meshrun_compiler::partition::CollectiveKind;
use meshrun_compiler::sharding::{AxisRef, DimSharding, TensorSharding};
use meshrun_compiler::text::parse_module;
use meshrun_compiler::SrcPos;

fn module(text: &str) -> Module {
    parse_module(text).expect("test module parses")
}

fn sharding(dims: &[&[&str]]) -> TensorSharding {
    TensorSharding::new(
        "mesh",
        dims.iter()
            .map(|d| DimSharding::closed(d.iter().map(|a| AxisRef::full(*a)).collect()))
            .collect(),
    )
}

fn reshards(p: &GlobalProgram) -> Vec<(usize, TensorSharding)> {
    p.steps
        .iter()
        .filter(|s| matches!(s.kind, GStepKind::Reshard))
        .map(|s| (s.operands[0], p.value(s.results[0]).sharding.clone()))
        .collect()
}

fn all_reduces(p: &GlobalProgram) -> Vec<(Vec<AxisRef>, ReduceKind)> {
    p.steps
        .iter()
        .filter_map(|s| match &s.kind {
            GStepKind::AllReduce { axes, reduction } => Some((axes.clone(), *reduction)),
            _ => None,
        })
        .collect()
}

/// Seed 003: mesh x=4, y=2; lhs 8x32 on [{x},{y}], rhs 32x16 on [{y},{x}],
/// dot result [{x},{}]. "x" shards the lhs's i and the rhs's j.
const SEED_003: &str = r#"module @seed003 {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func @main(%arg0: tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %0 = stablehlo.dot %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
    return %0 : tensor<8x16xf32>
  }
}
"#;

#[test]
fn seed_003_reshards_the_rhs_and_all_reduces_over_y() {
    let p = insert_explicit_reshards(&module(SEED_003)).expect("partitions");
    let rhs = p.args[1];
    assert_eq!(reshards(&p), vec![(rhs, sharding(&[&["y"], &[]]))]);
    assert_eq!(
        all_reduces(&p),
        vec![(vec![AxisRef::full("y")], ReduceKind::Add)]
    );
    // The dot computes partial sums over "y" in [{"x"}, {}].
    let dot = p
        .steps
        .iter()
        .find(|s| matches!(s.kind, GStepKind::Compute(OpKind::DotGeneral(_))))
        .expect("the dot");
    let out = &p.value(dot.results[0]).sharding;
    assert_eq!(out.dims, sharding(&[&["x"], &[]]).dims);
    assert_eq!(out.unreduced, vec![AxisRef::full("y")]);
    // The reshard is an all-gather of "x" (the rhs's 16x4 block -> 16x16).
    let pp = partition(&module(SEED_003)).expect("partitions");
    let kinds: Vec<CollectiveKind> = pp.device.collectives().map(|(c, _)| c.kind).collect();
    assert_eq!(
        kinds,
        vec![CollectiveKind::AllGather, CollectiveKind::AllReduce]
    );
    assert_eq!(pp.total_bytes_per_device(), 768.0 + 128.0);
    // The reason names the operand, the factor and the conflicting axis.
    let why = &p
        .steps
        .iter()
        .find(|s| matches!(s.kind, GStepKind::Reshard))
        .unwrap()
        .cause;
    assert!(why.op.starts_with("stablehlo.dot at 4:"), "{}", why.op);
    assert!(why.reason.contains("operand 1"), "{}", why.reason);
    assert!(
        why.reason.contains(r#"axis "x" shards factor i"#),
        "{}",
        why.reason
    );
}

#[test]
fn compatible_ops_need_no_reshards() {
    let text = r#"module @m {
  sdy.mesh @mesh = <["data"=4, "model"=2]>
  func.func @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<32x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {"model"}]>]>} : (tensor<16x32xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
    %1 = stablehlo.tanh %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {"model"}]>]>} : tensor<16x8xf32>
    return %1 : tensor<16x8xf32>
  }
}
"#;
    let p = insert_explicit_reshards(&module(text)).expect("partitions");
    assert!(reshards(&p).is_empty());
    assert!(all_reduces(&p).is_empty());
    assert_eq!(
        partition(&module(text)).unwrap().total_bytes_per_device(),
        0.0
    );
}

#[test]
fn sharded_reduce_dim_gives_an_all_reduce_with_the_reduce_kind() {
    let text = r#"module @m {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8xf32> {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>]>} : (tensor<16x8xf32>, tensor<f32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
"#;
    let p = insert_explicit_reshards(&module(text)).expect("partitions");
    assert_eq!(
        all_reduces(&p),
        vec![(vec![AxisRef::full("x")], ReduceKind::Maximum)]
    );
    let pp = partition(&module(text)).unwrap();
    let c: Vec<_> = pp.device.collectives().collect();
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].0.reduction, Some(ReduceKind::Maximum));
    assert!(
        c[0].1.reason.contains("partial maxima"),
        "{}",
        c[0].1.reason
    );
}

#[test]
fn all_reduce_then_slice_becomes_a_reduce_scatter() {
    // Contracting dim on x, result annotated [x, -]: reduce then keep a
    // quarter of the rows = reduce-scatter.
    let text = r#"module @m {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %arg1: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %0 = stablehlo.dot %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<16x32xf32>, tensor<32x16xf32>) -> tensor<16x16xf32>
    return %0 : tensor<16x16xf32>
  }
}
"#;
    let pp = partition(&module(text)).expect("partitions");
    let kinds: Vec<CollectiveKind> = pp.device.collectives().map(|(c, _)| c.kind).collect();
    assert_eq!(kinds, vec![CollectiveKind::ReduceScatter]);
    // (G-1) * out = 3 * 4x16 floats.
    assert_eq!(pp.total_bytes_per_device(), 3.0 * 4.0 * 16.0 * 4.0);
}

#[test]
fn unreduced_results_are_reduced_at_the_first_use_that_needs_them() {
    let text = r#"module @m {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %0 = stablehlo.dot %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}], unreduced={"x"}>]>} : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
    %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}], unreduced={"x"}>]>} : tensor<16x16xf32>
    %2 = stablehlo.sine %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : tensor<16x16xf32>
    return %2 : tensor<16x16xf32>
  }
}
"#;
    let p = insert_explicit_reshards(&module(text)).expect("partitions");
    // The negate stays partial; the sine needs the full value.
    let order: Vec<String> = p
        .steps
        .iter()
        .map(|s| match &s.kind {
            GStepKind::Compute(k) => k.name(),
            GStepKind::Reshard => "reshard".into(),
            GStepKind::AllReduce { .. } => "all_reduce".into(),
            GStepKind::Relabel => "relabel".into(),
            GStepKind::Loop { .. } => "loop".into(),
            GStepKind::Branch { .. } => "branch".into(),
            GStepKind::StackPartials { .. } => "stack_partials".into(),
            GStepKind::ToUnreduced { .. } => "to_unreduced".into(),
        })
        .collect();
    assert_eq!(
        order,
        vec![
            "stablehlo.dot",
            "stablehlo.negate",
            "all_reduce",
            "stablehlo.sine"
        ]
    );
    let ar = p
        .steps
        .iter()
        .find(|s| matches!(s.kind, GStepKind::AllReduce { .. }))
        .unwrap();
    assert!(ar.cause.op.starts_with("stablehlo.sine"), "{}", ar.cause.op);
}

#[test]
fn reshards_of_one_value_to_one_sharding_are_shared() {
    let text = r#"module @m {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
    %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : tensor<8x8xf32>
    %1 = stablehlo.sine %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : tensor<8x8xf32>
    return %0, %1 : tensor<8x8xf32>, tensor<8x8xf32>
  }
}
"#;
    let p = insert_explicit_reshards(&module(text)).expect("partitions");
    // Unary ops keep their larger/more sharded side: the operand. Results
    // are then resharded; none of the two reshards of %arg0 is repeated.
    let r = reshards(&p);
    let mut keys: Vec<_> = r.iter().map(|(v, s)| (*v, s.to_string())).collect();
    keys.dedup();
    assert_eq!(keys.len(), r.len());
}

#[test]
fn rust_built_program_partitions() {
    use meshrun_compiler::ir::Function;
    use meshrun_compiler::sharding::{Mesh, MeshDef};
    let mut f = Function::new("main", vec![TensorType::new(vec![8, 4], ElemType::F32)]);
    f.arg_attrs[0].sharding = Some(sharding(&[&["x"], &[]]));
    let x = f.args[0];
    let op = f.push_op(
        OpKind::Unary(meshrun_compiler::ir::UnaryOp::Exp),
        vec![x],
        vec![TensorType::new(vec![8, 4], ElemType::F32)],
    );
    f.op_mut(op).shardings = Some(vec![sharding(&[&[], &["x"]])]);
    let r = f.result(op);
    f.set_returns(vec![r]);
    let m = Module {
        name: None,
        attrs: vec![],
        meshes: vec![MeshDef {
            name: "mesh".into(),
            mesh: Mesh::new(&[("x", 4)]),
            attrs: None,
            pos: SrcPos::UNKNOWN,
        }],
        funcs: vec![f],
    };
    let pp = partition(&m).expect("partitions");
    // The exp keeps the operand's sharding; its result is moved to
    // [{}, {"x"}] by one all-to-all.
    let kinds: Vec<CollectiveKind> = pp.device.collectives().map(|(c, _)| c.kind).collect();
    assert_eq!(kinds, vec![CollectiveKind::AllToAll]);
    assert_eq!(
        pp.device.outputs[0].sharding.to_string(),
        r#"<@mesh, [{}, {"x"}]>"#
    );
}
