//! Loops and branches, partitioned and run on 8 simulated CPU devices:
//! hand-written fully sharded modules (every op annotated, as propagation
//! leaves them) and the replicated JAX `cond`/`fori_loop` test program.
//! Each sharded run must match the unsharded reference interpreter, and
//! its device program must have the structure the module asks for
//! (collectives inside the loop body, a whole predicate, a trip count).

use meshrun_compiler::partition::{partition, walk_instrs, DeviceProgram, Instr, Repeats};
use meshrun_compiler::text::parse_module;
use meshrun_compiler::Module;
use meshrun_kernels::{HostTensor, Parallelism};
use meshrun_runtime::compare::mismatch;
use meshrun_runtime::random_inputs::random_inputs;
use meshrun_runtime::reference::run_function;
use meshrun_runtime::{CpuBackend, ExecOptions, Executor};

/// `fori_loop(0, 3)` of `x = tanh(x @ w)`: `x` sharded on rows, `w` on
/// columns, so each iteration's product is sharded on both and must be
/// gathered back to the loop's sharding inside the body.
const FORI_MATMUL: &str = r#"
module @fori_matmul {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> tensor<8x16xf32> {
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %r:3 = stablehlo.while(%i = %c0, %x = %arg0, %w = %arg1) : tensor<i32>, tensor<8x16xf32>, tensor<16x16xf32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>, <@mesh, [{"x"}, {}]>, <@mesh, [{}, {"y"}]>]>}
    cond {
      %n = stablehlo.constant dense<3> : tensor<i32>
      %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
      %t = stablehlo.tanh %d {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : tensor<8x16xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %i1, %t, %w : tensor<i32>, tensor<8x16xf32>, tensor<16x16xf32>
    }
    return %r#1 : tensor<8x16xf32>
  }
}
"#;

/// A while whose trip count depends on the data: grow `x` until its sum
/// (over a sharded tensor: a partial sum on each device) passes a bound.
const DATA_WHILE: &str = r#"
module @data_while {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func public @main(%arg0: tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x6xf32>, tensor<i32>) {
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %r:2 = stablehlo.while(%x = %arg0, %k = %c0) : tensor<8x6xf32>, tensor<i32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>, <@mesh, []>]>}
    cond {
      %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x6xf32>, tensor<f32>) -> tensor<f32>
      %lim = stablehlo.constant dense<5.000000e+02> : tensor<f32>
      %p = stablehlo.compare LT, %s, %lim, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %a = stablehlo.abs %x {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : tensor<8x6xf32>
      %c = stablehlo.constant dense<1.500000e+00> : tensor<8x6xf32>
      %m = stablehlo.multiply %a, %c {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : tensor<8x6xf32>
      %h = stablehlo.constant dense<5.000000e-01> : tensor<8x6xf32>
      %x1 = stablehlo.add %m, %h {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : tensor<8x6xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %k1 = stablehlo.add %k, %one : tensor<i32>
      stablehlo.return %x1, %k1 : tensor<8x6xf32>, tensor<i32>
    }
    return %r#0, %r#1 : tensor<8x6xf32>, tensor<i32>
  }
}
"#;

/// `lax.cond(sum(x) > 0, ...)` on sharded operands: the predicate comes
/// from a sharded reduction, the branches compute on sharded values from
/// around the case.
const SHARDED_COND: &str = r#"
module @sharded_cond {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> tensor<8x8xf32> {
    %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %s = stablehlo.reduce(%arg0 init: %zero) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16xf32>, tensor<f32>) -> tensor<f32>
    %p = stablehlo.compare GT, %s, %zero, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %i = stablehlo.convert %p : (tensor<i1>) -> tensor<i32>
    %r = "stablehlo.case"(%i) ({
      %d = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
      stablehlo.return %d : tensor<8x8xf32>
    }, {
      %e = stablehlo.sine %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x16xf32>
      %d = stablehlo.dot_general %e, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
      %n = stablehlo.negate %d {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x8xf32>
      stablehlo.return %n : tensor<8x8xf32>
    }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<i32>) -> tensor<8x8xf32>
    return %r : tensor<8x8xf32>
  }
}
"#;

/// A counted loop inside a branch inside a counted loop.
const NESTED: &str = r#"
module @nested {
  sdy.mesh @mesh = <["x"=8]>
  func.func public @main(%arg0: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<16x4xf32> {
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %r:2 = stablehlo.while(%i = %c0, %x = %arg0) : tensor<i32>, tensor<16x4xf32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>, <@mesh, [{"x"}, {}]>]>}
    cond {
      %n = stablehlo.constant dense<4> : tensor<i32>
      %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %two = stablehlo.constant dense<2> : tensor<i32>
      %b = stablehlo.remainder %i, %two : tensor<i32>
      %y = "stablehlo.case"(%b) ({
        %t = stablehlo.transpose %x, dims = [0, 1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : (tensor<16x4xf32>) -> tensor<16x4xf32>
        %z = stablehlo.cosine %t {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : tensor<16x4xf32>
        stablehlo.return %z : tensor<16x4xf32>
      }, {
        %j0 = stablehlo.constant dense<0> : tensor<i32>
        %q:2 = stablehlo.while(%j = %j0, %u = %x) : tensor<i32>, tensor<16x4xf32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>, <@mesh, [{"x"}, {}]>]>}
        cond {
          %m = stablehlo.constant dense<2> : tensor<i32>
          %p2 = stablehlo.compare LT, %j, %m, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %p2 : tensor<i1>
        } do {
          %u1 = stablehlo.sine %u {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<16x4xf32>
          %one = stablehlo.constant dense<1> : tensor<i32>
          %j1 = stablehlo.add %j, %one : tensor<i32>
          stablehlo.return %j1, %u1 : tensor<i32>, tensor<16x4xf32>
        }
        stablehlo.return %q#1 : tensor<16x4xf32>
      }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<i32>) -> tensor<16x4xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %i1, %y : tensor<i32>, tensor<16x4xf32>
    }
    return %r#1 : tensor<16x4xf32>
  }
}
"#;

/// A loop body that needs a weight from around the loop whole (a reshard
/// to replicated, as Shardy writes before a `dynamic_slice` of a stack
/// sharded along the stack) while the weight is sharded: the
/// gather depends on nothing the loop changes, so it runs once, before the
/// loop. (The same happens to `scan`'s stacked weights sharded along the
/// stack, which `dynamic_slice` needs whole.)
const INVARIANT_GATHER: &str = r#"
module @invariant_gather {
  sdy.mesh @mesh = <["data"=4, "model"=2]>
  func.func public @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}) -> tensor<16x32xf32> {
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %r:2 = stablehlo.while(%i = %c0, %h = %arg0) : tensor<i32>, tensor<16x32xf32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>, <@mesh, [{"data"}, {}]>]>}
    cond {
      %n = stablehlo.constant dense<4> : tensor<i32>
      %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %whole = sdy.reshard %arg1 <@mesh, [{}, {}]> : tensor<32x32xf32>
      %w = stablehlo.transpose %whole, dims = [1, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : (tensor<32x32xf32>) -> tensor<32x32xf32>
      %d = stablehlo.dot_general %h, %w, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
      %t = stablehlo.tanh %d {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x32xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %i1, %t : tensor<i32>, tensor<16x32xf32>
    }
    return %r#1 : tensor<16x32xf32>
  }
}
"#;

fn inputs_for(module: &Module, seed: u64) -> Vec<HostTensor> {
    let f = module.func("main").unwrap();
    let types: Vec<_> = f.args.iter().map(|&a| f.ty(a).clone()).collect();
    random_inputs(&types, seed).unwrap()
}

/// Partition `text` as is, run it on the CPU backend and compare with the
/// reference; the device program.
fn check(text: &str, seed: u64) -> DeviceProgram {
    let module = parse_module(text).unwrap();
    let program = partition(&module).unwrap_or_else(|d| panic!("{}: {}", d.pos, d.message));
    let inputs = inputs_for(&module, seed);
    let exec = Executor::new(&program.device).unwrap();
    let backend = CpuBackend::new();
    let placed = exec.place(&backend, &inputs).unwrap();
    let outs = exec
        .run(&backend, &placed, &ExecOptions::default())
        .unwrap();
    let got = exec.gather(&backend, outs, true).unwrap();
    let want = run_function(&module, "main", &inputs, Parallelism::None).unwrap();
    assert_eq!(got.len(), want.len());
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        if let Some(m) = mismatch(g, w, 1e-5) {
            panic!("output {k}: {m}");
        }
    }
    program.device
}

/// Every collective's kind with how often it runs.
fn collectives(p: &DeviceProgram) -> Vec<(String, Repeats)> {
    let mut out = Vec::new();
    walk_instrs(&p.instrs, Repeats::ONCE, &mut |i, at| {
        if let Instr::Collective { collective, .. } = i {
            out.push((collective.kind.to_string(), at));
        }
    });
    out
}

#[test]
fn fori_loop_with_a_sharded_matmul_body() {
    let p = check(FORI_MATMUL, 1);
    let Some(Instr::Loop(l)) = p.instrs.iter().find(|i| matches!(i, Instr::Loop(_))) else {
        panic!("no loop instruction");
    };
    assert_eq!(l.trip_count, Some(3));
    // The product sharded on both axes is gathered back along "y" inside
    // the body, once per iteration.
    let cs = collectives(&p);
    assert!(
        cs.iter()
            .any(|(k, at)| k == "all-gather" && at.times == 3.0 && !at.unknown_trips),
        "{cs:?}"
    );
    // The loop's carried values keep their local shapes.
    assert_eq!(p.values[l.body.args[1]].ty.shape, vec![4, 16]);
    assert_eq!(p.values[l.body.args[2]].ty.shape, vec![16, 4]);
}

#[test]
fn while_with_a_data_dependent_trip_count() {
    for seed in 0..4 {
        let p = check(DATA_WHILE, seed);
        let Some(Instr::Loop(l)) = p.instrs.iter().find(|i| matches!(i, Instr::Loop(_))) else {
            panic!("no loop instruction");
        };
        assert_eq!(l.trip_count, None);
        // The condition's partial sums are reduced in the cond block, and
        // the listing says why.
        let reduce = l.cond.instrs.iter().find_map(|i| match i {
            Instr::Collective {
                collective, cause, ..
            } if collective.kind.to_string() == "all-reduce" => Some(cause.reason.clone()),
            _ => None,
        });
        let reason = reduce.expect("no all-reduce in the loop condition");
        assert!(
            reason.contains("loop condition decides the trip count"),
            "{reason}"
        );
    }
}

#[test]
fn cond_with_sharded_operands() {
    for seed in [3, 4, 5, 6] {
        let p = check(SHARDED_COND, seed);
        let Some(Instr::Branch(b)) = p.instrs.iter().find(|i| matches!(i, Instr::Branch(_))) else {
            panic!("no branch instruction");
        };
        assert_eq!(b.branches.len(), 2);
        assert_eq!(p.values[b.results[0]].ty.shape, vec![4, 2]);
    }
}

#[test]
fn loops_and_branches_nest() {
    let p = check(NESTED, 7);
    let cs = collectives(&p);
    // Branch 0 gathers `x` (it asks for a replicated transpose) and slices
    // the result back: inside the branch inside the 4-trip loop.
    assert!(
        cs.iter()
            .any(|(k, at)| k == "all-gather" && at.in_branch && at.times == 4.0),
        "{cs:?}"
    );
}

#[test]
fn replicated_jax_cond_and_fori_loop() {
    let text = include_str!("../../compiler/tests/data/jax_cond_fori.mlir");
    let p = check(text, 11);
    assert!(p.instrs.iter().any(|i| matches!(i, Instr::Branch(_))));
    assert!(p
        .instrs
        .iter()
        .any(|i| matches!(i, Instr::Loop(l) if l.trip_count == Some(3))));
}

#[test]
fn loop_invariant_reshards_run_before_the_loop() {
    let p = check(INVARIANT_GATHER, 2);
    let cs = collectives(&p);
    assert_eq!(cs.len(), 1, "{cs:?}");
    assert_eq!(cs[0].0, "all-gather");
    assert_eq!(
        cs[0].1,
        Repeats::ONCE,
        "the gather runs once, not per layer"
    );
    assert!(matches!(p.instrs.last(), Some(Instr::Loop(_))));
}
