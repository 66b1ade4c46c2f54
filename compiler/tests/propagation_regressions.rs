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
use meshrun_compiler::sharding::validate::validate_sharding;
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
        let mesh = m.resolve_mesh(&s.mesh).expect("known mesh");
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

/// A constraint in a nested loop's body on the enclosing loop's carried
/// value (the random test's loops found it): the constraint reads a
/// data-flow edge's value, so it moves to where that value is defined (the
/// outer body) and every use there reads it; left in the inner body, the
/// outer body's uses read it before it was defined.
const CONSTRAINT_ON_AN_OUTER_LOOP_VALUE: &str = r#"
module @nested_loops {
  sdy.mesh @mesh = <["a"=2]>
  func.func public @main(%arg0: tensor<8xf32>) -> (tensor<8xf32>) {
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %0:2 = stablehlo.while(%i = %c0, %h = %arg0) : tensor<i32>, tensor<8xf32>
     cond {
      %c3 = stablehlo.constant dense<3> : tensor<i32>
      %p = stablehlo.compare LT, %i, %c3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %c00 = stablehlo.constant dense<0> : tensor<i32>
      %1:2 = stablehlo.while(%j = %c00, %g = %h) : tensor<i32>, tensor<8xf32>
       cond {
        %c1 = stablehlo.constant dense<1> : tensor<i32>
        %q = stablehlo.compare LT, %j, %c1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %q : tensor<i1>
      } do {
        %2 = sdy.sharding_constraint %h <@mesh, [{"a"}]> : tensor<8xf32>
        %3 = stablehlo.tanh %2 : tensor<8xf32>
        %c11 = stablehlo.constant dense<1> : tensor<i32>
        %4 = stablehlo.add %j, %c11 : tensor<i32>
        stablehlo.return %4, %3 : tensor<i32>, tensor<8xf32>
      }
      %c12 = stablehlo.constant dense<1> : tensor<i32>
      %5 = stablehlo.add %i, %c12 : tensor<i32>
      stablehlo.return %5, %1#1 : tensor<i32>, tensor<8xf32>
    }
    return %0#1 : tensor<8xf32>
  }
}"#;

#[test]
fn a_constraint_on_an_enclosing_loops_value_moves_to_where_it_is_defined() {
    let m = run_ok(CONSTRAINT_ON_AN_OUTER_LOOP_VALUE, Strategy::Full);
    meshrun_compiler::ir::verify::verify_module(&m).expect("the propagated module verifies");
    expect(&m, &[("result0", r#"<@mesh, [{"a"}]>"#)]);
}

/// A chain of constraints whose tail sits in a loop body, on the loop's
/// own operand (the random test's loops found it: "uses value #N before it
/// is defined"). As in Shardy, the chain takes over only the uses after
/// its tail in the tail's block (the body's `add`); the `while` and the
/// `negate` around it keep reading `%arg0`. Taking over the `while`'s
/// operand made the loop read a value defined in its own body. The
/// expected shardings are what Shardy printed for this module (JAX 0.10.2's
/// XLA, `02.after_propagation.mlir`).
const CHAIN_INTO_A_LOOP_BODY: &str = include_str!("data/chain_into_loop_body.mlir");

/// The same with the tail in a `case` branch: the branch's `multiply`
/// and its terminator read the tail (so the case's second result is
/// sharded like it, on "b"), the `negate` after the case still reads
/// `%arg0` (it read a value of the branch before).
const CHAIN_INTO_A_BRANCH: &str = include_str!("data/chain_into_branch.mlir");

/// A module, the shardings it must get (by name) and lines its printed
/// propagated form must hold.
type Case = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static [&'static str],
);

#[test]
fn a_constraint_chain_ending_in_a_region_takes_over_uses_there_only() {
    const A: &str = r#"<@mesh, [{"a"}]>"#;
    let cases: [Case; 2] = [
        (
            CHAIN_INTO_A_LOOP_BODY,
            // Shardy leaves the loop's result without a sharding (the
            // body's "b" and the operand's "a" conflict): replicated.
            &[("%arg0", A), ("result0", "<@mesh, [{}]>"), ("result1", A)],
            &[
                // The body's add reads the tail; the while and the negate
                // read the argument.
                "%6 = stablehlo.add %5, %4 ",
                "stablehlo.while(%iterArg = %1, %iterArg_0 = %arg0)",
                "stablehlo.negate %arg0 ",
            ],
        ),
        (
            CHAIN_INTO_A_BRANCH,
            &[
                ("%arg0", A),
                ("result0", A),
                ("result1", r#"<@mesh, [{"b"}]>"#),
                ("result2", A),
            ],
            &[
                "%3 = sdy.reshard %0 <@mesh, [{\"b\"}]>",
                "%4 = stablehlo.multiply %3, %3 ",
                "stablehlo.return %4, %3 ",
                "%2 = stablehlo.negate %arg0 ",
            ],
        ),
    ];
    for (src, shardings, lines) in cases {
        let m = run_ok(src, Strategy::Full);
        meshrun_compiler::ir::verify::verify_module(&m)
            .unwrap_or_else(|e| panic!("the propagated module does not verify: {e}\n{src}"));
        expect(&m, shardings);
        let text = meshrun_compiler::text::print_module(&m);
        for line in lines {
            assert!(text.contains(line), "no `{line}` in\n{text}");
        }
    }
}
