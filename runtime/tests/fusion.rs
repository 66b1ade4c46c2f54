//! Fusion of element-wise chains (`meshrun_runtime::fusion`): which
//! instructions a plan groups, and that fused runs give bitwise the results
//! of unfused ones (the JAX MLP fixture and random differential programs),
//! chains run on a dot's tiles included.

use std::path::PathBuf;

use meshrun_compiler::ir::{OpKind, UnaryOp};
use meshrun_compiler::partition::Instr;
use meshrun_compiler::text::parse_module;
use meshrun_kernels::{HostTensor, Parallelism};
use meshrun_runtime::fusion::{plan, Group, Unit};
use meshrun_runtime::npy::read_npy;
use meshrun_runtime::pipeline::compile;
use meshrun_runtime::random_inputs::random_inputs;
use meshrun_runtime::testgen::program;
use meshrun_runtime::{CpuBackend, CpuExecutor, ExecOptions, Executor};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/jax")
        .join(name)
}

fn bits(ts: &[HostTensor]) -> Vec<Vec<u64>> {
    ts.iter()
        .map(|t| t.to_f64_vec().iter().map(|v| v.to_bits()).collect())
        .collect()
}

/// The outputs of `text` on `inputs`, fused or not (replicas checked).
fn run(text: &str, inputs: Option<Vec<HostTensor>>, fuse: bool) -> Vec<HostTensor> {
    let module = parse_module(text).expect("parses");
    let inputs = inputs.unwrap_or_else(|| {
        let f = module.func("main").expect("@main");
        let types: Vec<_> = f.args.iter().map(|&a| f.ty(a).clone()).collect();
        random_inputs(&types, 5).expect("inputs")
    });
    let program = compile(&module).expect("compiles");
    let exec = Executor::with_fusion(&program.device, fuse).expect("executor");
    // A thread per device: the lockstep executor sums a fused weight
    // gradient as one product over the stacked batch (another order of
    // additions; `lockstep_vs_threads.rs`), so fused and unfused runs
    // are bitwise the same on this executor only.
    let backend = CpuBackend::new().with_executor(CpuExecutor::Threads);
    let placed = exec.place(&backend, &inputs).expect("placed");
    let outs = exec
        .run(&backend, &placed, &ExecOptions::default())
        .expect("runs");
    exec.gather(&backend, outs, true).expect("gathered")
}

/// The fused groups among `units`.
fn groups(units: &[Unit]) -> Vec<&Group> {
    units
        .iter()
        .filter_map(|u| match u {
            Unit::Group(g) => Some(g),
            Unit::DotChain(c) => Some(&c.group),
            Unit::Instr(_) | Unit::TransposedDot(_) => None,
        })
        .collect()
}

#[test]
fn the_mlp_fuses_bias_and_tanh_and_gives_the_same_bits() {
    let dir = fixture("mlp_forward");
    let text = std::fs::read_to_string(dir.join("input.mlir")).unwrap();
    let inputs: Vec<HostTensor> = (0..7)
        .map(|k| read_npy(&dir.join(format!("in_{k}.npy"))).unwrap())
        .collect();
    let module = parse_module(&text).unwrap();
    let program = compile(&module).unwrap();
    let units = plan(&program.device);
    let groups = groups(&units);
    // tanh(x @ w1 + b1), tanh(h @ w3 + b3): broadcast, add and tanh; the
    // plain tanh(h @ w2) is one op, left alone.
    let tanh_groups = groups
        .iter()
        .filter(|g| {
            g.members.iter().any(|&m| {
                matches!(
                    &program.device.instrs[m],
                    Instr::Op {
                        kind: OpKind::Unary(UnaryOp::Tanh),
                        ..
                    }
                )
            })
        })
        .count();
    assert!(tanh_groups >= 2, "{groups:#?}");
    // JAX broadcasts each bias twice (64 -> 1x64 -> 16x64): the group
    // repeats the 1x64 value; no broadcast to 16x64 runs on its own.
    let full_broadcasts = units
        .iter()
        .filter(|u| match u {
            Unit::Instr(i) => matches!(
                &program.device.instrs[*i],
                Instr::Op { kind: OpKind::BroadcastInDim(_), results, .. }
                    if program.device.values[results[0]].ty.rank() == 2
                        && program.device.values[results[0]].ty.shape[0] > 1
            ),
            _ => false,
        })
        .count();
    assert_eq!(full_broadcasts, 0, "{units:#?}");
    for g in &groups {
        assert!(g.members.contains(&g.root) && g.members.len() >= 2);
        // Intermediate values of a group are read by nothing else.
        for &m in &g.members {
            let v = program.device.instrs[m].results()[0];
            if m != g.root {
                assert!(!g.operands.contains(&v));
                let readers = program
                    .device
                    .instrs
                    .iter()
                    .filter(|i| i.operands().contains(&v))
                    .count();
                assert_eq!(readers, 1, "value #{v}");
            }
        }
    }
    let fused = run(&text, Some(inputs.clone()), true);
    let unfused = run(&text, Some(inputs), false);
    assert_eq!(bits(&fused), bits(&unfused));
}

#[test]
fn random_programs_give_the_same_bits_fused_and_unfused() {
    let mut fused_some = 0;
    for seed in 1..=150 {
        let text = program(seed, true);
        let module = parse_module(&text).unwrap();
        let Ok(prog) = compile(&module) else {
            continue;
        };
        if plan(&prog.device)
            .iter()
            .any(|u| matches!(u, Unit::Group(_)))
        {
            fused_some += 1;
        }
        let (a, b) = (run(&text, None, true), run(&text, None, false));
        assert_eq!(bits(&a), bits(&b), "seed {seed}:\n{text}");
    }
    assert!(
        fused_some > 10,
        "only {fused_some} programs had a fused group"
    );
}

#[test]
fn outputs_are_not_absorbed_and_a_value_read_twice_by_one_op_is_computed_once() {
    // %1 is an output: it may not vanish into a group. %0 is read twice,
    // by %1 alone: %1's group computes it once and reads the step twice.
    let text = r#"
func.func public @main(%a: tensor<8x16xf32>, %b: tensor<16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = stablehlo.exponential %a : tensor<8x16xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<8x16xf32>
  %2 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<16xf32>) -> tensor<8x16xf32>
  %3 = stablehlo.add %1, %2 : tensor<8x16xf32>
  %4 = stablehlo.tanh %3 : tensor<8x16xf32>
  return %4, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}
"#;
    let module = parse_module(text).unwrap();
    let program = compile(&module).unwrap();
    let units = plan(&program.device);
    let groups = groups(&units);
    assert_eq!(groups.len(), 2, "{units:#?}");
    // exp and multiply; broadcast, add, tanh reading %1 made.
    assert_eq!(groups[0].members.len(), 2, "{:#?}", groups[0]);
    assert_eq!(groups[0].chain.steps.len(), 2, "{:#?}", groups[0]);
    assert_eq!(groups[1].members.len(), 3, "{:#?}", groups[1]);
    assert_eq!(groups[1].operands.len(), 2, "{:#?}", groups[1]);
    assert_eq!(units.len(), 2);
    assert_eq!(bits(&run(text, None, true)), bits(&run(text, None, false)));
}

/// The units that are transposed dots.
fn transposed_dots(units: &[Unit]) -> usize {
    units
        .iter()
        .filter(|u| matches!(u, Unit::TransposedDot(_)))
        .count()
}

#[test]
fn a_dot_read_only_by_its_transpose_runs_swapped() {
    // A weight gradient as JAX writes it: dot over the batch, then a
    // transpose of the result. %2's transpose also swaps the free
    // dimensions, but %1 is read twice, so it stays. (%1 names its
    // precision so that it is no repeat of %0 that CSE would merge.)
    let text = r#"
func.func public @main(%x: tensor<6x5xf32>, %dy: tensor<6x3xf32>) -> (tensor<3x5xf32>, tensor<5x3xf32>, tensor<3x5xf32>) {
  %0 = stablehlo.dot_general %x, %dy, contracting_dims = [0] x [0] : (tensor<6x5xf32>, tensor<6x3xf32>) -> tensor<5x3xf32>
  %t = stablehlo.transpose %0, dims = [1, 0] : (tensor<5x3xf32>) -> tensor<3x5xf32>
  %1 = stablehlo.dot_general %x, %dy, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<6x5xf32>, tensor<6x3xf32>) -> tensor<5x3xf32>
  %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<5x3xf32>) -> tensor<3x5xf32>
  return %t, %1, %2 : tensor<3x5xf32>, tensor<5x3xf32>, tensor<3x5xf32>
}
"#;
    let module = parse_module(text).unwrap();
    let program = compile(&module).unwrap();
    let units = plan(&program.device);
    assert_eq!(transposed_dots(&units), 1, "{units:#?}");
    assert_eq!(units.len(), 3, "{units:#?}");
    let fused = run(text, None, true);
    assert_eq!(bits(&fused), bits(&run(text, None, false)));
    // Against the transpose of the dot read twice (computed unswapped).
    let [t, d, t2] = &fused[..] else {
        panic!("three outputs")
    };
    let (t, d, t2) = (t.to_f64_vec(), d.to_f64_vec(), t2.to_f64_vec());
    for i in 0..3 {
        for j in 0..5 {
            let want = d[j * 3 + i];
            assert!((t[i * 5 + j] - want).abs() < 1e-5, "({i}, {j})");
            assert_eq!(t2[i * 5 + j], want);
        }
    }
}

#[test]
fn a_summed_weight_gradient_runs_swapped_and_sums_the_swapped_product() {
    // A data-parallel weight gradient as the partitioner leaves it: the
    // dot's partial products over `data` summed by an all-reduce, then
    // JAX's transpose. `%s` is the swapped dot written out, whose sum is
    // what the transposed dot's all-reduce must give bit for bit (an
    // all-reduce adds element by element, whatever the layout); `x`'s
    // columns on `model` make the all-reduce's blocks 4x6 -> 6x4.
    let text = r#"module @grad {
  sdy.mesh @mesh = <["data"=4, "model"=2]>
  func.func public @main(%x: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}, %dy: tensor<16x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> (tensor<6x8xf32>, tensor<6x8xf32>) {
    %0 = stablehlo.dot_general %x, %dy, contracting_dims = [0] x [0] : (tensor<16x8xf32>, tensor<16x6xf32>) -> tensor<8x6xf32>
    %t = stablehlo.transpose %0, dims = [1, 0] : (tensor<8x6xf32>) -> tensor<6x8xf32>
    %s = stablehlo.dot_general %dy, %x, contracting_dims = [0] x [0] : (tensor<16x6xf32>, tensor<16x8xf32>) -> tensor<6x8xf32>
    return %t, %s : tensor<6x8xf32>, tensor<6x8xf32>
  }
}"#;
    let module = parse_module(text).unwrap();
    let program = compile(&module).unwrap();
    let units = plan(&program.device);
    let reduced: Vec<_> = units
        .iter()
        .filter_map(|u| match u {
            Unit::TransposedDot(t) => t.reduce.as_ref(),
            _ => None,
        })
        .collect();
    assert_eq!(reduced.len(), 1, "{units:#?}");
    assert_eq!(reduced[0].collective.in_local_shape, vec![6, 4]);
    // The dot, its all-reduce and the transpose are one unit; `%s` and
    // its all-reduce run on their own.
    let collectives = |us: &[Unit]| {
        us.iter()
            .filter(|u| matches!(u, Unit::Instr(i) if matches!(program.device.instrs[*i], Instr::Collective { .. })))
            .count()
    };
    assert_eq!(collectives(&units), 1, "{units:#?}");
    for fuse in [true, false] {
        let outs = run(text, None, fuse);
        assert_eq!(bits(&outs[..1]), bits(&outs[1..]), "fused: {fuse}");
    }
}

#[test]
fn a_broadcast_shared_by_chains_is_taken_in_by_each() {
    // One scalar broadcast read by two updates (JAX shares the learning
    // rate): both groups repeat it, nothing makes it. Read also by a
    // reduce, it is made for the reduce as well.
    let shared = r#"
func.func public @main(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>, %lr: tensor<f32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %s = stablehlo.broadcast_in_dim %lr, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
  %0 = stablehlo.multiply %s, %a : tensor<8x16xf32>
  %1 = stablehlo.subtract %b, %0 : tensor<8x16xf32>
  %2 = stablehlo.multiply %s, %b : tensor<8x16xf32>
  %3 = stablehlo.subtract %a, %2 : tensor<8x16xf32>
  return %1, %3 : tensor<8x16xf32>, tensor<8x16xf32>
}
"#;
    let module = parse_module(shared).unwrap();
    let program = compile(&module).unwrap();
    let units = plan(&program.device);
    assert_eq!(groups(&units).len(), 2, "{units:#?}");
    assert_eq!(units.len(), 2, "the broadcast runs on its own: {units:#?}");
    assert_eq!(
        bits(&run(shared, None, true)),
        bits(&run(shared, None, false))
    );

    let also_reduced = shared
        .replace(
            "-> (tensor<8x16xf32>, tensor<8x16xf32>) {",
            "-> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<16xf32>) {",
        )
        .replace(
            "  return %1, %3 : tensor<8x16xf32>, tensor<8x16xf32>",
            "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n  \
             %r = stablehlo.reduce(%s init: %z) applies stablehlo.add across dimensions = [0] : (tensor<8x16xf32>, tensor<f32>) -> tensor<16xf32>\n  \
             return %1, %3, %r : tensor<8x16xf32>, tensor<8x16xf32>, tensor<16xf32>",
        );
    let module = parse_module(&also_reduced).unwrap();
    let program = compile(&module).unwrap();
    let units = plan(&program.device);
    assert_eq!(groups(&units).len(), 2, "{units:#?}");
    let alone = units
        .iter()
        .filter(|u| {
            matches!(u, Unit::Instr(i) if matches!(
                &program.device.instrs[*i],
                Instr::Op { kind: OpKind::BroadcastInDim(_), .. }
            ))
        })
        .count();
    assert_eq!(alone, 1, "{units:#?}");
    assert_eq!(
        bits(&run(&also_reduced, None, true)),
        bits(&run(&also_reduced, None, false))
    );
}

#[test]
fn reduce_precision_fuses_into_a_chain_with_the_same_bits() {
    // bf16 emulated in f32 around an update, as lax.reduce_precision
    // writes it: q(q(w) - q(lr * g)); the whole tree is one group.
    let text = r#"
func.func public @main(%w: tensor<8x300xf32>, %g: tensor<8x300xf32>, %lr: tensor<f32>) -> tensor<8x300xf32> {
  %0 = stablehlo.reduce_precision %w, format = e8m7 : tensor<8x300xf32>
  %1 = stablehlo.broadcast_in_dim %lr, dims = [] : (tensor<f32>) -> tensor<8x300xf32>
  %2 = stablehlo.multiply %1, %g : tensor<8x300xf32>
  %3 = stablehlo.reduce_precision %2, format = e5m2 : tensor<8x300xf32>
  %4 = stablehlo.subtract %0, %3 : tensor<8x300xf32>
  %5 = stablehlo.reduce_precision %4, format = e8m7 : tensor<8x300xf32>
  return %5 : tensor<8x300xf32>
}
"#;
    let module = parse_module(text).unwrap();
    let program = compile(&module).unwrap();
    let units = plan(&program.device);
    let groups = groups(&units);
    assert_eq!(groups.len(), 1, "{units:#?}");
    assert_eq!(groups[0].members.len(), 6, "{:#?}", groups[0]);
    let fused = run(text, None, true);
    assert_eq!(bits(&fused), bits(&run(text, None, false)));
    // The result lies on the bf16 grid: its low 16 bits are zero.
    let HostTensor::F32(a) = &fused[0] else {
        panic!("f32 result")
    };
    assert!(a.iter().all(|v| v.to_bits() & 0xffff == 0));
    assert!(a.iter().any(|&v| v != 0.0));
}

#[test]
fn a_log_softmax_recomputes_the_shifted_logits_with_the_same_bits() {
    // jax.nn.log_softmax over the last dimension: `s = x - max` is read by
    // exp (summed) and by `s - log(sum)`; both groups compute it, it is
    // never made. Also its gradient-like `exp(s) * g - s`, where `s` has
    // three readers.
    let text = r#"
func.func public @main(%x: tensor<4x6x40xf32>, %g: tensor<4x6x40xf32>) -> (tensor<4x6x40xf32>, tensor<4x6x40xf32>) {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [2] : (tensor<4x6x40xf32>, tensor<f32>) -> tensor<4x6xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1] : (tensor<4x6xf32>) -> tensor<4x6x40xf32>
  %s = stablehlo.subtract %x, %mb : tensor<4x6x40xf32>
  %e = stablehlo.exponential %s : tensor<4x6x40xf32>
  %r = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [2] : (tensor<4x6x40xf32>, tensor<f32>) -> tensor<4x6xf32>
  %l = stablehlo.log %r : tensor<4x6xf32>
  %lb = stablehlo.broadcast_in_dim %l, dims = [0, 1] : (tensor<4x6xf32>) -> tensor<4x6x40xf32>
  %o = stablehlo.subtract %s, %lb : tensor<4x6x40xf32>
  %e2 = stablehlo.exponential %s : tensor<4x6x40xf32>
  %p = stablehlo.multiply %e2, %g : tensor<4x6x40xf32>
  %d = stablehlo.subtract %p, %o : tensor<4x6x40xf32>
  return %o, %d : tensor<4x6x40xf32>, tensor<4x6x40xf32>
}
"#;
    let module = parse_module(text).unwrap();
    let program = compile(&module).unwrap();
    let units = plan(&program.device);
    let subtracts: Vec<usize> = (0..program.device.instrs.len())
        .filter(|&i| {
            matches!(
                &program.device.instrs[i],
                Instr::Op { kind, .. } if kind.name() == "stablehlo.subtract"
            )
        })
        .collect();
    let s = subtracts[0];
    assert!(
        !units.iter().any(|u| matches!(u, Unit::Instr(i) if *i == s)),
        "{units:#?}"
    );
    let with_s = groups(&units)
        .iter()
        .filter(|g| g.members.contains(&s))
        .count();
    assert!(with_s >= 2, "{units:#?}");
    assert_eq!(bits(&run(text, None, true)), bits(&run(text, None, false)));
}

#[test]
fn softmax_and_layernorm_stretch_their_row_statistics_with_the_same_bits() {
    // jax.nn.softmax and a layernorm over the last dimension: the row
    // max, sum, mean and variance are broadcast along trailing dims
    // (dims = [0, 1], and [0, 1, 2] from a 4x6x1), each taken in as a
    // stretched operand rather than made.
    let text = r#"
func.func public @main(%x: tensor<4x6x40xf32>, %w: tensor<40xf32>) -> (tensor<4x6x40xf32>, tensor<4x6x40xf32>) {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [2] : (tensor<4x6x40xf32>, tensor<f32>) -> tensor<4x6xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1] : (tensor<4x6xf32>) -> tensor<4x6x40xf32>
  %s = stablehlo.subtract %x, %mb : tensor<4x6x40xf32>
  %e = stablehlo.exponential %s : tensor<4x6x40xf32>
  %r = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [2] : (tensor<4x6x40xf32>, tensor<f32>) -> tensor<4x6xf32>
  %r1 = stablehlo.reshape %r : (tensor<4x6xf32>) -> tensor<4x6x1xf32>
  %rb = stablehlo.broadcast_in_dim %r1, dims = [0, 1, 2] : (tensor<4x6x1xf32>) -> tensor<4x6x40xf32>
  %sm = stablehlo.divide %e, %rb : tensor<4x6x40xf32>
  %n = stablehlo.constant dense<40.0> : tensor<4x6xf32>
  %sx = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [2] : (tensor<4x6x40xf32>, tensor<f32>) -> tensor<4x6xf32>
  %mean = stablehlo.divide %sx, %n : tensor<4x6xf32>
  %meanb = stablehlo.broadcast_in_dim %mean, dims = [0, 1] : (tensor<4x6xf32>) -> tensor<4x6x40xf32>
  %c = stablehlo.subtract %x, %meanb : tensor<4x6x40xf32>
  %c2 = stablehlo.multiply %c, %c : tensor<4x6x40xf32>
  %sv = stablehlo.reduce(%c2 init: %z) applies stablehlo.add across dimensions = [2] : (tensor<4x6x40xf32>, tensor<f32>) -> tensor<4x6xf32>
  %var = stablehlo.divide %sv, %n : tensor<4x6xf32>
  %eps = stablehlo.constant dense<1.0e-5> : tensor<4x6xf32>
  %ve = stablehlo.add %var, %eps : tensor<4x6xf32>
  %rs = stablehlo.rsqrt %ve : tensor<4x6xf32>
  %rsb = stablehlo.broadcast_in_dim %rs, dims = [0, 1] : (tensor<4x6xf32>) -> tensor<4x6x40xf32>
  %wb = stablehlo.broadcast_in_dim %w, dims = [2] : (tensor<40xf32>) -> tensor<4x6x40xf32>
  %y0 = stablehlo.multiply %c, %rsb : tensor<4x6x40xf32>
  %y = stablehlo.multiply %y0, %wb : tensor<4x6x40xf32>
  return %sm, %y : tensor<4x6x40xf32>, tensor<4x6x40xf32>
}
"#;
    let module = parse_module(text).unwrap();
    let program = compile(&module).unwrap();
    let p = &program.device;
    let units = plan(p);
    let broadcasts: Vec<usize> = (0..p.instrs.len())
        .filter(|&i| {
            matches!(
                &p.instrs[i],
                Instr::Op {
                    kind: OpKind::BroadcastInDim(_),
                    ..
                }
            )
        })
        .collect();
    assert!(broadcasts.len() >= 5, "{broadcasts:?}");
    // No broadcast runs on its own: each is a member of a group.
    for &b in &broadcasts {
        assert!(
            !units.iter().any(|u| matches!(u, Unit::Instr(i) if *i == b)),
            "broadcast {b} made: {units:#?}"
        );
    }
    let stretched = groups(&units)
        .iter()
        .flat_map(|g| g.chain.steps.iter().flat_map(|s| s.args.iter()))
        .filter(|a| matches!(a, meshrun_kernels::cpu::fusion::Arg::Stretched(_)))
        .count();
    assert!(stretched >= 4, "{units:#?}");
    assert_eq!(bits(&run(text, None, true)), bits(&run(text, None, false)));
}

/// One SGD step of a 2-layer tanh MLP as JAX writes it (unsharded): each
/// layer's `tanh(x·W + b)`, the backward `dy·Wᵀ` times `1 - t²`, and each
/// weight update `W - 0.01·(xᵀ·dy)` (a dot read only by its transpose).
const TRAIN_STEP: &str = r#"
func.func public @main(%x: tensor<96x40xf32>, %w1: tensor<40x600xf32>, %b1: tensor<600xf32>, %w2: tensor<600x300xf32>, %y: tensor<96x300xf32>) -> (tensor<40x600xf32>, tensor<600x300xf32>) {
  %0 = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<96x40xf32>, tensor<40x600xf32>) -> tensor<96x600xf32>
  %1 = stablehlo.broadcast_in_dim %b1, dims = [1] : (tensor<600xf32>) -> tensor<96x600xf32>
  %2 = stablehlo.add %0, %1 : tensor<96x600xf32>
  %h = stablehlo.tanh %2 : tensor<96x600xf32>
  %3 = stablehlo.dot_general %h, %w2, contracting_dims = [1] x [0] : (tensor<96x600xf32>, tensor<600x300xf32>) -> tensor<96x300xf32>
  %dy = stablehlo.subtract %3, %y : tensor<96x300xf32>
  %4 = stablehlo.dot_general %dy, %h, contracting_dims = [0] x [0] : (tensor<96x300xf32>, tensor<96x600xf32>) -> tensor<300x600xf32>
  %g2 = stablehlo.transpose %4, dims = [1, 0] : (tensor<300x600xf32>) -> tensor<600x300xf32>
  %5 = stablehlo.dot_general %dy, %w2, contracting_dims = [1] x [1] : (tensor<96x300xf32>, tensor<600x300xf32>) -> tensor<96x600xf32>
  %6 = stablehlo.multiply %h, %h : tensor<96x600xf32>
  %one = stablehlo.constant dense<1.0> : tensor<96x600xf32>
  %7 = stablehlo.subtract %one, %6 : tensor<96x600xf32>
  %dh = stablehlo.multiply %5, %7 : tensor<96x600xf32>
  %8 = stablehlo.dot_general %dh, %x, contracting_dims = [0] x [0] : (tensor<96x600xf32>, tensor<96x40xf32>) -> tensor<600x40xf32>
  %g1 = stablehlo.transpose %8, dims = [1, 0] : (tensor<600x40xf32>) -> tensor<40x600xf32>
  %lr = stablehlo.constant dense<0.01> : tensor<f32>
  %lr1 = stablehlo.broadcast_in_dim %lr, dims = [] : (tensor<f32>) -> tensor<40x600xf32>
  %9 = stablehlo.multiply %lr1, %g1 : tensor<40x600xf32>
  %nw1 = stablehlo.subtract %w1, %9 : tensor<40x600xf32>
  %lr2 = stablehlo.broadcast_in_dim %lr, dims = [] : (tensor<f32>) -> tensor<600x300xf32>
  %10 = stablehlo.multiply %lr2, %g2 : tensor<600x300xf32>
  %nw2 = stablehlo.subtract %w2, %10 : tensor<600x300xf32>
  return %nw1, %nw2 : tensor<40x600xf32>, tensor<600x300xf32>
}
"#;

/// The outputs of `text` on `inputs` on one device whose kernels use
/// `par`, fused with or without chains on dots' tiles, or unfused.
fn run_one_device(
    text: &str,
    inputs: &[HostTensor],
    par: Parallelism,
    fuse: bool,
    dot_epilogues: bool,
) -> Vec<HostTensor> {
    let module = parse_module(text).expect("parses");
    let program = compile(&module).expect("compiles");
    let exec = Executor::with_fusion(&program.device, fuse).expect("executor");
    let backend = CpuBackend::new()
        .with_kernel_parallelism(par)
        .with_dot_epilogues(dot_epilogues);
    let placed = exec.place(&backend, inputs).expect("placed");
    let outs = exec
        .run(&backend, &placed, &ExecOptions::default())
        .expect("runs");
    exec.gather(&backend, outs, true).expect("gathered")
}

#[test]
fn chains_reading_a_dot_run_on_its_tiles_with_the_same_bits() {
    let module = parse_module(TRAIN_STEP).unwrap();
    let program = compile(&module).unwrap();
    let units = plan(&program.device);
    let chains: Vec<_> = units
        .iter()
        .filter_map(|u| match u {
            Unit::DotChain(c) => Some(c),
            _ => None,
        })
        .collect();
    // tanh(x·W1 + b1), (dy·W2ᵀ)·(1 - h²), and both weight updates (on the
    // transposed dots); `x·W1`'s result is read by the chain only, as an
    // element-wise operand, not broadcast.
    assert_eq!(chains.len(), 4, "{units:#?}");
    assert_eq!(chains.iter().filter(|c| c.dot_instrs.len() == 2).count(), 2);
    for c in &chains {
        assert_eq!(c.group.operands[c.slot], c.dot_result);
        assert!(!units
            .iter()
            .any(|u| matches!(u, Unit::Instr(i) if c.dot_instrs.contains(i))));
    }
    // h·W2 is read by a subtract that is no group of its own (one op), so
    // it stays a plain dot.
    let f = module.func("main").unwrap();
    let types: Vec<_> = f.args.iter().map(|&a| f.ty(a).clone()).collect();
    let inputs = random_inputs(&types, 11).unwrap();
    // Tall products (600 rows) are cut by rows, short ones by columns on
    // several threads; one thread computes each whole.
    for par in [
        Parallelism::None,
        Parallelism::Rayon(2),
        Parallelism::Rayon(3),
    ] {
        let on_tiles = run_one_device(TRAIN_STEP, &inputs, par, true, true);
        let after = run_one_device(TRAIN_STEP, &inputs, par, true, false);
        let unfused = run_one_device(TRAIN_STEP, &inputs, par, false, true);
        assert_eq!(bits(&on_tiles), bits(&after), "{par:?}");
        assert_eq!(bits(&on_tiles), bits(&unfused), "{par:?}");
    }
}

#[test]
fn a_dot_read_by_a_value_recomputed_in_two_groups_is_made_once() {
    // `%a` reads the dot alone, but it is recomputed in the groups of both
    // of its readers, so both read the dot's result: it must be made.
    let text = r#"
func.func public @main(%x: tensor<8x32xf32>, %w: tensor<32x16xf32>, %b: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %a = stablehlo.add %d, %b : tensor<8x16xf32>
  %e = stablehlo.exponential %a : tensor<8x16xf32>
  %t = stablehlo.tanh %a : tensor<8x16xf32>
  return %e, %t : tensor<8x16xf32>, tensor<8x16xf32>
}
"#;
    let module = parse_module(text).unwrap();
    let program = compile(&module).unwrap();
    let units = plan(&program.device);
    assert_eq!(groups(&units).len(), 2, "{units:#?}");
    assert!(
        !units.iter().any(|u| matches!(u, Unit::DotChain(_))),
        "{units:#?}"
    );
    assert_eq!(bits(&run(text, None, true)), bits(&run(text, None, false)));
}
