//! `validate_module_shardings`: every mesh and every sharding of a module built in
//! memory is checked, and the diagnostic names the tensor, the axis and the
//! position of the op or function that carries it.

use meshrun_compiler::ir::ops::dot_general::DotGeneral;
use meshrun_compiler::ir::ops::reshard::Reshard;
use meshrun_compiler::ir::ops::sharding_constraint::ShardingConstraint;
use meshrun_compiler::ir::validate_module_shardings;
use meshrun_compiler::ir::{BinaryOp, DotDims, ElemType, Function, Module, OpKind, TensorType};
use meshrun_compiler::sharding::{AxisRef, DimSharding, Mesh, MeshDef, MeshRef, TensorSharding};
use meshrun_compiler::{DiagKind, SrcPos};

fn f32s(shape: &[i64]) -> TensorType {
    TensorType::new(shape.to_vec(), ElemType::F32)
}

fn dims(axes: &[&[&str]]) -> Vec<DimSharding> {
    axes.iter()
        .map(|d| DimSharding::closed(d.iter().map(|a| AxisRef::full(*a)).collect()))
        .collect()
}

fn on_mesh(axes: &[&[&str]]) -> TensorSharding {
    TensorSharding::new("mesh", dims(axes))
}

fn mesh_def(name: &str, mesh: Mesh) -> MeshDef {
    MeshDef {
        name: name.into(),
        mesh,
        attrs: None,
        pos: SrcPos::UNKNOWN,
    }
}

/// `@main(%arg0: 8x16, %arg1: 16x4) -> dot(%arg0, %arg1)` on mesh
/// `["data"=4, "model"=2]`, everything validly sharded.
fn matmul_module() -> Module {
    let mut f = Function::new("main", vec![f32s(&[8, 16]), f32s(&[16, 4])]);
    f.pos = SrcPos::new(2, 3);
    f.arg_attrs[0].sharding = Some(on_mesh(&[&["data"], &[]]));
    f.arg_attrs[1].sharding = Some(on_mesh(&[&[], &["model"]]));
    let (a, b) = (f.args[0], f.args[1]);
    let dot = f.push_op(
        OpKind::DotGeneral(DotGeneral {
            dims: DotDims::for_dot(2),
            precision: None,
            is_dot: false,
        }),
        vec![a, b],
        vec![f32s(&[8, 4])],
    );
    f.op_mut(dot).pos = SrcPos::new(4, 10);
    f.op_mut(dot).shardings = Some(vec![on_mesh(&[&["data"], &["model"]])]);
    let d = f.result(dot);
    let c = f.push_op(
        OpKind::ShardingConstraint(ShardingConstraint {
            sharding: on_mesh(&[&["data"], &[]]),
        }),
        vec![d],
        vec![f32s(&[8, 4])],
    );
    f.op_mut(c).pos = SrcPos::new(5, 10);
    let r = f.result(c);
    f.set_returns(vec![r]);
    f.result_attrs[0].sharding = Some(on_mesh(&[&["data"], &[]]));
    Module {
        meshes: vec![mesh_def("mesh", Mesh::new(&[("data", 4), ("model", 2)]))],
        funcs: vec![f],
        ..Module::default()
    }
}

fn main_mut(m: &mut Module) -> &mut Function {
    m.func_mut("main").expect("module has @main")
}

#[test]
fn valid_module_passes() {
    assert_eq!(validate_module_shardings(&matmul_module()), Ok(()));
}

#[test]
fn unknown_axis_on_argument_names_argument_mesh_and_axes() {
    let mut m = matmul_module();
    main_mut(&mut m).arg_attrs[0].sharding = Some(on_mesh(&[&["q"], &[]]));
    let d = validate_module_shardings(&m).unwrap_err();
    assert_eq!(d.kind, DiagKind::Sharding);
    assert_eq!((d.pos.line, d.pos.col), (2, 3));
    assert_eq!(
        d.message,
        r#"invalid sharding on argument 0 (%arg0) of @main: axis "q" is not in mesh @mesh (axes: "data", "model")"#
    );
}

#[test]
fn axis_used_twice_on_op_result_points_at_the_op() {
    let mut m = matmul_module();
    let f = main_mut(&mut m);
    let dot = f.body[0];
    f.op_mut(dot).shardings = Some(vec![on_mesh(&[&["data"], &["data"]])]);
    let d = validate_module_shardings(&m).unwrap_err();
    assert_eq!((d.pos.line, d.pos.col), (4, 10));
    assert_eq!(
        d.message,
        r#"invalid sharding on result 0 of stablehlo.dot_general: axis "data" is used twice (dims 0 and 1)"#
    );
}

#[test]
fn function_result_sharding_is_checked() {
    let mut m = matmul_module();
    main_mut(&mut m).result_attrs[0].sharding = Some(on_mesh(&[&["data"]]));
    let d = validate_module_shardings(&m).unwrap_err();
    assert_eq!(
        d.message,
        "invalid sharding on result 0 of @main: sharding has 1 dimension shardings but the tensor has rank 2"
    );
}

#[test]
fn sharding_count_must_match_results() {
    let mut m = matmul_module();
    let f = main_mut(&mut m);
    let dot = f.body[0];
    let s = on_mesh(&[&["data"], &[]]);
    f.op_mut(dot).shardings = Some(vec![s.clone(), s]);
    let d = validate_module_shardings(&m).unwrap_err();
    assert_eq!(d.kind, DiagKind::Sharding);
    assert_eq!((d.pos.line, d.pos.col), (4, 10));
    assert_eq!(
        d.message,
        "stablehlo.dot_general has 2 shardings in sdy.sharding but 1 result"
    );
}

#[test]
fn constraint_and_reshard_shardings_are_checked() {
    let mut m = matmul_module();
    let f = main_mut(&mut m);
    let c = f.body[1];
    let mut bad = on_mesh(&[&[], &[]]);
    bad.replicated = vec![AxisRef::full("model"), AxisRef::full("data")];
    f.op_mut(c).kind = OpKind::ShardingConstraint(ShardingConstraint {
        sharding: bad.clone(),
    });
    let d = validate_module_shardings(&m).unwrap_err();
    assert_eq!((d.pos.line, d.pos.col), (5, 10));
    assert_eq!(
        d.message,
        r#"invalid sharding on sdy.sharding_constraint: replicated axes {"model", "data"} are not in mesh order: write {"data", "model"}"#
    );
    main_mut(&mut m).op_mut(c).kind = OpKind::Reshard(Reshard { sharding: bad });
    let d = validate_module_shardings(&m).unwrap_err();
    assert!(
        d.message.starts_with("invalid sharding on sdy.reshard: "),
        "{}",
        d.message
    );
}

#[test]
fn unknown_mesh_lists_the_defined_ones() {
    let mut m = matmul_module();
    main_mut(&mut m).arg_attrs[1].sharding = Some(TensorSharding::new("other", dims(&[&[], &[]])));
    let d = validate_module_shardings(&m).unwrap_err();
    assert_eq!(
        d.message,
        "invalid sharding on argument 1 (%arg1) of @main: mesh @other is not defined (meshes: @mesh)"
    );
}

#[test]
fn inline_meshes_resolve_and_are_checked() {
    let mut m = matmul_module();
    let inline = Mesh::new(&[("a", 2), ("a", 2)]);
    let s = TensorSharding {
        mesh: MeshRef::Inline(inline.clone()),
        ..on_mesh(&[&[], &[]])
    };
    assert_eq!(m.resolve_mesh(&s.mesh), Some(&inline));
    main_mut(&mut m).arg_attrs[0].sharding = Some(s);
    let d = validate_module_shardings(&m).unwrap_err();
    assert_eq!(
        d.message,
        r#"invalid sharding on argument 0 (%arg0) of @main: axis "a" appears twice in the mesh"#
    );
    let good = TensorSharding {
        mesh: MeshRef::Inline(Mesh::new(&[("a", 2)])),
        ..TensorSharding::new("unused", dims(&[&["a"], &[]]))
    };
    main_mut(&mut m).arg_attrs[0].sharding = Some(good);
    assert_eq!(validate_module_shardings(&m), Ok(()));
}

#[test]
fn module_meshes_are_checked() {
    let mut m = matmul_module();
    m.meshes.push(mesh_def(
        "bad",
        Mesh::new(&[("x", 2)]).with_device_ids(vec![1, 2]),
    ));
    let d = validate_module_shardings(&m).unwrap_err();
    assert_eq!(
        d.message,
        "invalid mesh @bad: device_ids must be a permutation of 0..2; sorted they are [1, 2]"
    );
    m.meshes.pop();
    m.meshes.push(mesh_def("mesh", Mesh::new(&[("x", 2)])));
    assert_eq!(
        validate_module_shardings(&m).unwrap_err().message,
        "mesh @mesh is defined twice"
    );
}

#[test]
fn every_function_is_checked() {
    let mut m = matmul_module();
    let mut helper = Function::new("helper", vec![f32s(&[4])]);
    helper.pos = SrcPos::new(9, 1);
    let x = helper.args[0];
    let sum = helper.push_op(OpKind::Binary(BinaryOp::Add), vec![x, x], vec![f32s(&[4])]);
    helper.op_mut(sum).pos = SrcPos::new(10, 8);
    helper.op_mut(sum).shardings = Some(vec![TensorSharding::new(
        "mesh",
        vec![DimSharding::closed(vec![AxisRef::sub("data", 1, 3)])],
    )]);
    let r = helper.result(sum);
    helper.set_returns(vec![r]);
    m.funcs.push(helper);
    let d = validate_module_shardings(&m).unwrap_err();
    assert_eq!((d.pos.line, d.pos.col), (10, 8));
    assert_eq!(
        d.message,
        r#"invalid sharding on result 0 of stablehlo.add: sub-axis "data":(1)3 does not fit axis "data" of size 4: pre-size * size = 3 must divide 4"#
    );
}
