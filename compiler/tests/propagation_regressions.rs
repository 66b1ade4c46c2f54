//! Regressions the runtime's differential test found in propagation
//! (`runtime/tests/executor_known_bugs.rs` has them end to end).
//!
//! Mesh axes of size 1: Shardy's import pipeline removes them from every
//! sharding before propagating (`sdy-remove-size-one-axes`; JAX 0.10.2 +
//! XLA were run on these very modules and the expected shardings below are
//! what Shardy printed), and its overlap test treats two references to one
//! full axis as overlapping whatever its size, so that the single
//! strategies, which keep such axes, never use one twice either.

mod propagation_support;

use meshrun_compiler::ir::Module;
use meshrun_compiler::propagation::values::sharding_of;
use meshrun_compiler::propagation::Strategy;
use meshrun_compiler::sharding::validate::{resolve_mesh, validate_sharding};
use propagation_support::{expect, run, run_ok};

/// `tanh` then a dot whose contracting dimension is sharded by the size-1
/// axis "a" that the `tanh` operand's size-1 dimension already names.
const SIZE_ONE_TWICE: &str = r#"
module @size_one_axis {
  sdy.mesh @mesh = <["a"=1]>
  func.func public @main(%arg0: tensor<3x1x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"a", ?}, {}]>}, %arg1: tensor<6x1xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> (tensor<3x1x1xf32>) {
    %0 = stablehlo.tanh %arg0 : tensor<3x1x6xf32>
    %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<3x1x6xf32>, tensor<6x1xf32>) -> tensor<3x1x1xf32>
    return %1 : tensor<3x1x1xf32>
  }
}"#;

/// A reshape and a dot on a mesh with two axes of size 1 around "b"=3.
const SIZE_ONE_FIXED_POINT: &str = r#"
module @fixed_point {
  sdy.mesh @mesh = <["a"=1, "b"=3, "c"=1]>
  func.func public @main(%arg0: tensor<7x3x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"b"}, {"a"}]>}, %arg1: tensor<18x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b", ?}, {"a"}]>}) -> (tensor<7x16xf32>) {
    %0 = stablehlo.reshape %arg0 : (tensor<7x3x6xf32>) -> tensor<7x18xf32>
    %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<7x18xf32>, tensor<18x16xf32>) -> tensor<7x16xf32>
    return %1 : tensor<7x16xf32>
  }
}"#;

/// Every sharding of the entry function is valid on its mesh (an axis used
/// at most once, ...).
fn assert_all_valid(m: &Module) {
    let f = m.entry().expect("entry function");
    let mut checked = 0;
    for (i, v) in f.values.iter().enumerate() {
        let value = meshrun_compiler::ir::Value(i as u32);
        let Some(s) = sharding_of(f, value) else {
            continue;
        };
        let mesh = resolve_mesh(m, &s.mesh).expect("known mesh");
        if let Err(e) = validate_sharding(s, mesh, v.ty.rank()) {
            panic!("value {i} has the invalid sharding {s}: {e}");
        }
        checked += 1;
    }
    assert!(checked > 0, "no sharding checked");
}

#[test]
fn full_pipeline_drops_size_one_axes_like_shardy() {
    let m = run_ok(SIZE_ONE_TWICE, Strategy::Full);
    assert_all_valid(&m);
    expect(
        &m,
        &[
            ("%arg0", r#"<@mesh, [{}, {}, {}]>"#),
            ("%arg1", r#"<@mesh, [{}, {}]>"#),
            ("%0", r#"<@mesh, [{}, {}, {}]>"#),
            ("%1", r#"<@mesh, [{}, {}, {}]>"#),
            ("result0", r#"<@mesh, [{}, {}, {}]>"#),
        ],
    );
}

#[test]
fn single_strategies_never_use_a_size_one_axis_twice() {
    // Without the import passes the axis stays; the dot must not hand it
    // to the contracting dimension of `%0`, whose size-1 dimension has it.
    for strategy in [
        Strategy::Basic,
        Strategy::Aggressive,
        Strategy::OpPriority,
        Strategy::UserPriority,
    ] {
        let m = run_ok(SIZE_ONE_TWICE, strategy);
        assert_all_valid(&m);
        expect(&m, &[("%0", r#"<@mesh, [{?}, {"a", ?}, {?}]>"#)]);
    }
}

#[test]
fn full_pipeline_reaches_shardys_fixed_point_with_size_one_axes() {
    let m = run_ok(SIZE_ONE_FIXED_POINT, Strategy::Full);
    assert_all_valid(&m);
    expect(
        &m,
        &[
            ("%arg0", r#"<@mesh, [{}, {"b"}, {}]>"#),
            ("%arg1", r#"<@mesh, [{"b"}, {}]>"#),
            ("%0", r#"<@mesh, [{}, {"b"}]>"#),
            ("%1", r#"<@mesh, [{}, {}]>"#),
            ("result0", r#"<@mesh, [{}, {}]>"#),
        ],
    );
}

#[test]
fn single_strategies_reach_a_fixed_point_with_size_one_axes() {
    for strategy in [
        Strategy::Basic,
        Strategy::Aggressive,
        Strategy::OpPriority,
        Strategy::UserPriority,
    ] {
        let m = run(SIZE_ONE_FIXED_POINT, strategy).unwrap_or_else(|e| panic!("{strategy}: {e}"));
        assert_all_valid(&m);
    }
}
