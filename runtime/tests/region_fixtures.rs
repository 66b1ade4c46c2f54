//! JAX fixtures with loops and conditionals (`fixtures/jax_regions/`, made
//! by `tools/jax_export_regions.py`): Shardy's propagation of each
//! (`propagated.mlir`, every op inside the regions annotated) and
//! meshrun's own (`input.mlir` through `compile`) are partitioned and run
//! on 8 simulated CPU devices; the outputs must equal
//! JAX's (`out_*.npy`) and the unsharded reference interpreter's on
//! `input.mlir`, and the bytes each device receives (loops counted per
//! iteration) must not exceed XLA's (`xla_collectives.json`, whose
//! collectives in while bodies count once per known trip).

use meshrun_compiler::partition::{partition, walk_instrs, DeviceProgram, Instr, Repeats};
use meshrun_compiler::text::parse_module;
use meshrun_kernels::{HostTensor, Parallelism};
use meshrun_runtime::compare::{mismatch, rtol_for};
use meshrun_runtime::pipeline::compile;
use meshrun_runtime::reference::run_function;

#[path = "common/fixture_files.rs"]
mod fixture_files;
#[path = "common/fixture_run.rs"]
mod fixture_run;
use fixture_files::{numbered, xla_bytes};

/// Run `program` on the fixture's inputs; its outputs.
fn execute(name: &str, program: &DeviceProgram, inputs: &[HostTensor]) -> Vec<HostTensor> {
    fixture_run::execute(program, inputs).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Run fixture `name` from Shardy's propagation and from meshrun's, check
/// the outputs and that neither moves more bytes per device than XLA; the
/// device program of the first.
fn run(name: &str) -> DeviceProgram {
    let dir = fixture_run::fixture("jax_regions", name);
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).expect(f);
    let propagated = parse_module(&read("propagated.mlir"))
        .unwrap_or_else(|d| panic!("{name}: propagated.mlir:{d}"));
    let input =
        parse_module(&read("input.mlir")).unwrap_or_else(|d| panic!("{name}: input.mlir:{d}"));
    let program =
        partition(&propagated).unwrap_or_else(|d| panic!("{name}: {}: {}", d.pos, d.message));
    assert_eq!(program.device.num_devices(), 8, "{name}");
    let ours = compile(&input).unwrap_or_else(|d| panic!("{name}: {}: {}", d.pos, d.message));
    let inputs = numbered(&dir, "in");
    let got = execute(name, &program.device, &inputs);
    let got_ours = execute(name, &ours.device, &inputs);
    let jax = numbered(&dir, "out");
    let main = input.entry().expect("an entry function").name.clone();
    let reference = run_function(&input, &main, &inputs, Parallelism::None)
        .unwrap_or_else(|e| panic!("{name}: reference: {e}"));
    assert_eq!(got.len(), jax.len(), "{name}: output count");
    let rtol = rtol_for(&input);
    for (i, ((g, j), r)) in got.iter().zip(&jax).zip(&reference).enumerate() {
        if let Some(m) = mismatch(g, j, rtol) {
            panic!("{name}: output {i} vs JAX: {m}");
        }
        if let Some(m) = mismatch(g, r, rtol) {
            panic!("{name}: output {i} vs the reference: {m}");
        }
        if let Some(m) = mismatch(&got_ours[i], j, rtol) {
            panic!("{name}: output {i} (meshrun's propagation) vs JAX: {m}");
        }
    }
    let (shardy, own, xla) = (
        program.total_bytes_per_device(),
        ours.total_bytes_per_device(),
        xla_bytes(&dir),
    );
    assert!(shardy <= xla, "{name}: {shardy} bytes/device > XLA's {xla}");
    assert!(
        own <= xla,
        "{name}: {own} bytes/device > XLA's {xla} (meshrun's propagation)"
    );
    program.device
}

fn has(p: &DeviceProgram, f: impl Fn(&Instr) -> bool) -> bool {
    p.instrs.iter().any(f)
}

/// The loop body calls a private function (`closed_call`): meshrun's
/// propagation keeps it as a named computation tied to the loop (as
/// Shardy does), so the `tanh` in it stays on `data` and each iteration
/// moves what XLA's does.
#[test]
fn fori_loop_with_a_matmul_body() {
    let p = run("fori_matmul");
    assert!(has(
        &p,
        |i| matches!(i, Instr::Loop(l) if l.trip_count == Some(3))
    ));
}

#[test]
fn while_with_a_data_dependent_trip_count() {
    let p = run("while_data_dependent");
    assert!(has(
        &p,
        |i| matches!(i, Instr::Loop(l) if l.trip_count.is_none())
    ));
}

#[test]
fn cond_with_sharded_operands() {
    let p = run("cond_sharded");
    assert!(has(&p, |i| matches!(i, Instr::Branch(_))));
}

#[test]
fn scan_mlp_over_stacked_weights_sharded_on_model() {
    let p = run("scan_mlp");
    assert!(has(
        &p,
        |i| matches!(i, Instr::Loop(l) if l.trip_count == Some(4))
    ));
}

#[test]
fn scan_over_a_stack_sharded_along_the_stack() {
    let p = run("scan_stack_sharded");
    assert!(has(
        &p,
        |i| matches!(i, Instr::Loop(l) if l.trip_count == Some(4))
    ));
}

/// The trip count of every loop, nested ones included, in program order.
fn loops(p: &DeviceProgram) -> Vec<Option<i64>> {
    let mut trips = Vec::new();
    walk_instrs(&p.instrs, Repeats::ONCE, &mut |i, _| {
        if let Instr::Loop(l) = i {
            trips.push(l.trip_count);
        }
    });
    trips
}

/// GPT-2 whose two layers are one `lax.scan` over stacked weights
/// (Megatron on `model`, batch on `data`): the layer loop runs twice with
/// the per-layer collectives inside it, and moves no more than XLA.
#[test]
fn gpt2_forward_with_its_layers_in_a_scan() {
    let p = run("gpt2_scan_forward");
    assert_eq!(loops(&p), vec![Some(2)]);
}

/// Its training step: the backward pass is a second scan over the layers
/// (in reverse, stacking the weight gradients), then SGD on the stacks.
#[test]
fn gpt2_training_step_with_its_layers_in_a_scan() {
    let p = run("gpt2_scan_train_step");
    assert_eq!(loops(&p), vec![Some(2), Some(2)]);
}

/// `jax.checkpoint`: the backward pass reads the recomputed layers through
/// `stablehlo.optimization_barrier`, whose operands keep their own
/// shardings (Shardy's data-flow edges), so it moves nothing itself.
#[test]
fn checkpointed_layers_through_optimization_barriers() {
    let p = run("remat_mlp_grad");
    assert!(loops(&p).is_empty());
}
