//! `meshrun suggest` on training steps exported from JAX without shardings
//! (`fixtures/jax_suggest/`, made by `tools/jax_export_suggest.py`): it
//! recovers the textbook sharding where the cost model says it is best,
//! is never predicted slower than the hand-written sharding JAX lowered
//! (`hand.mlir`, Megatron + data parallelism), respects a memory cap by
//! sharding weights, and explains each choice. Each suggestion also runs:
//! its shardings, put on the same program exported at a small size, match
//! the unsharded run (the full-size round trip through `suggest -o` and
//! `run --check` is in `tests/cli_suggest.rs`).

use std::path::{Path, PathBuf};

use meshrun::compiler::sharding::Mesh;
use meshrun::compiler::Module;
use meshrun::cost::{cost_report, Topology};
use meshrun::load::load_file;
use meshrun::runtime::compare::compare;
use meshrun::runtime::pipeline::{compile, run_reference, run_sharded};
use meshrun::runtime::random_inputs::random_inputs;
use meshrun::runtime::CpuBackend;
use meshrun::suggest::output::partition_spec;
use meshrun::suggest::search::SearchOptions;
use meshrun::suggest::{suggest, SuggestOptions, Suggestion};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/jax_suggest")
        .join(name)
}

fn load(name: &str, file: &str) -> Module {
    load_file(&fixture(name).join(file)).expect("loads")
}

fn options(memory: Option<f64>) -> SuggestOptions {
    SuggestOptions {
        mesh: Some(Mesh::new(&[("data", 4), ("model", 2)])),
        topology: Topology::resolve("h100-nvlink-8").expect("built in"),
        memory_per_device: memory,
        keep_given: false,
        top: 3,
        search: SearchOptions::default(),
    }
}

fn run(name: &str, memory: Option<f64>) -> Suggestion {
    suggest(&load(name, "input.mlir"), &options(memory)).expect("a suggestion")
}

/// The suggested `PartitionSpec` of every argument.
fn specs(s: &Suggestion) -> Vec<String> {
    s.chosen.assignment.iter().map(partition_spec).collect()
}

/// Predicted step time of the hand-written sharding JAX lowered.
fn hand_step_s(name: &str) -> f64 {
    let module = load(name, "hand.mlir");
    let propagated = meshrun::compiler::propagation::propagate(
        &module,
        &meshrun::compiler::propagation::PropagationOptions::default(),
    )
    .expect("propagates");
    let program = meshrun::compiler::partition::partition(&propagated).expect("partitions");
    let topo = Topology::resolve("h100-nvlink-8").expect("built in");
    cost_report(&program, &topo, None)
        .expect("costs")
        .step_seconds
}

/// The suggested shardings on `small.mlir` (the same function exported at
/// a small size: the same ops in the same order, checked when exported),
/// run on 8 simulated CPU devices: every output matches the unsharded run.
/// Running the full-size programs takes tens of CPU seconds each; the
/// shardings and the ops they meet are the same here.
fn check_runs_at_small_size(name: &str, s: &Suggestion) {
    let mut small = load(name, "small.mlir");
    let big = load(name, "input.mlir");
    let kinds = |m: &Module| -> Vec<String> {
        m.funcs
            .iter()
            .flat_map(|f| f.all_ops().into_iter().map(|id| f.op(id).kind.name()))
            .collect()
    };
    assert_eq!(
        kinds(&small),
        kinds(&big),
        "{name}: small.mlir is another program"
    );
    small.meshes.push(s.mesh.clone());
    let f = small
        .funcs
        .iter_mut()
        .find(|f| f.name == "main")
        .expect("main");
    for (attr, sharding) in f.arg_attrs.iter_mut().zip(&s.chosen.assignment) {
        attr.sharding = Some(sharding.clone());
    }
    let program = compile(&small).unwrap_or_else(|d| panic!("{name}: {d}"));
    let f = small.entry().expect("main");
    let types: Vec<_> = f.args.iter().map(|&a| f.ty(a).clone()).collect();
    let inputs = random_inputs(&types, 1).expect("inputs");
    let got = run_sharded(&CpuBackend::new(), &program, &inputs).expect("runs sharded");
    let want = run_reference(&small, &inputs).expect("runs unsharded");
    assert_eq!(got.len(), want.len());
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        let d = compare(g, w, 1e-4).expect("same types");
        assert!(d.within(), "{name}: output {k} off by {}", d.max_rel);
    }
}

/// The suggestion beats replicated, is no slower than the hand sharding,
/// runs, and every argument has a reason.
fn check_common(name: &str, s: &Suggestion) {
    check_runs_at_small_size(name, s);
    let hand = hand_step_s(name);
    assert!(
        s.baseline_replicated,
        "{name}: the fixture has no shardings"
    );
    assert!(
        s.chosen.score.step_s < s.baseline.score.step_s,
        "{name}: {} s, replicated {} s",
        s.chosen.score.step_s,
        s.baseline.score.step_s
    );
    assert!(
        s.chosen.score.step_s <= hand * (1.0 + 1e-9),
        "{name}: suggested {} s, hand-written {hand} s",
        s.chosen.score.step_s
    );
    assert_eq!(s.reasons.len(), s.args.len());
    for r in &s.reasons {
        assert!(
            !r.text.is_empty(),
            "{name}: argument {} has no reason",
            r.index
        );
    }
}

#[test]
fn hidden_large_relative_to_batch_gives_megatron_plus_data_parallel() {
    let name = "mlp4_train_b4096_h2048";
    let s = run(name, None);
    let p = specs(&s);
    // x, y: batch on data; w1, w3 by columns and w2, w4 by rows on model.
    let want = [
        (0, r#"P("data", None)"#),
        (1, r#"P("data", None)"#),
        (2, r#"P(None, "model")"#),
        (4, r#"P("model", None)"#),
        (6, r#"P(None, "model")"#),
        (8, r#"P("model", None)"#),
    ];
    for (i, spec) in want {
        assert_eq!(p[i], spec, "{name} argument {i}: got {p:?}");
    }
    check_common(name, &s);
    // It is the hand sharding's time: Megatron + DP is the best it knows.
    let hand = hand_step_s(name);
    assert!((s.chosen.score.step_s - hand).abs() <= 1e-3 * hand);
}

#[test]
fn batch_large_relative_to_hidden_gives_data_parallel() {
    let name = "mlp4_train_b16384_h512";
    let s = run(name, None);
    let p = specs(&s);
    assert_eq!(p[0], r#"P("data", None)"#, "{p:?}");
    assert_eq!(p[1], r#"P("data", None)"#, "{p:?}");
    // No tensor parallelism: every weight and bias whole on each device.
    for (i, spec) in p.iter().enumerate().skip(2) {
        assert!(!spec.contains("model"), "argument {i} is {spec}: {p:?}");
    }
    check_common(name, &s);
    // Strictly better than Megatron + DP here.
    assert!(s.chosen.score.step_s < 0.95 * hand_step_s(name));
}

#[test]
fn attention_block_shards_heads() {
    let name = "attention_train_b8_s512_e1024";
    let s = run(name, None);
    let a = &s.chosen.assignment;
    // wq, wk, wv: the output columns (heads × head dim, heads major) split;
    // wo: the input rows split by the same axes. 8 heads split at most 8
    // ways: every split of the columns splits the heads.
    let cols = &a[2].dims[1].axes;
    assert!(
        !cols.is_empty(),
        "wq's heads are not sharded: {:?}",
        specs(&s)
    );
    for i in [3, 4] {
        assert_eq!(&a[i].dims[1].axes, cols, "{:?}", specs(&s));
    }
    assert_eq!(&a[5].dims[0].axes, cols, "wo: {:?}", specs(&s));
    for w in &a[2..5] {
        assert!(w.dims[0].axes.is_empty(), "{:?}", specs(&s));
    }
    check_common(name, &s);
}

#[test]
fn memory_cap_below_megatron_shards_weights_over_data() {
    let name = "mlp4_train_b4096_h2048";
    let free = run(name, None);
    let cap = 80.0 * 1024.0 * 1024.0;
    assert!(
        free.chosen.score.memory_bytes > cap,
        "the cap must bind: {} bytes without it",
        free.chosen.score.memory_bytes
    );
    let s = run(name, Some(cap));
    assert!(s.chosen.score.fits);
    check_runs_at_small_size(name, &s);
    assert!(
        s.chosen.memory.total_bytes() <= cap,
        "{} bytes",
        s.chosen.memory.total_bytes()
    );
    // ZeRO/FSDP style: some weight split over the data-parallel axis too.
    let weights = [2, 4, 6, 8];
    assert!(
        weights
            .iter()
            .any(|&i| s.chosen.assignment[i].dim_axes().any(|a| a.name == "data")),
        "{:?}",
        specs(&s)
    );
    assert!(s.chosen.score.step_s >= free.chosen.score.step_s);
    assert!(s.chosen.score.step_s < s.baseline.score.step_s);
}

#[test]
fn a_cap_nothing_fits_is_an_error_naming_the_smallest() {
    let err = suggest(
        &load("mlp4_train_b16384_h512", "input.mlir"),
        &options(Some(1024.0 * 1024.0)),
    )
    .expect_err("1 MiB is too small");
    let msg = err.to_string();
    assert!(msg.contains("no assignment fits 1.00 MiB"), "{msg}");
}

#[test]
fn keep_given_keeps_the_hand_shardings() {
    let name = "attention_train_b8_s512_e1024";
    let hand = load(name, "hand.mlir");
    let mut opts = options(None);
    opts.mesh = None;
    opts.keep_given = true;
    let s = suggest(&hand, &opts).expect("a suggestion");
    assert!(!s.baseline_replicated);
    let f = hand.entry().expect("main");
    for (i, attr) in f.arg_attrs.iter().enumerate() {
        let given = attr.sharding.as_ref().expect("every argument annotated");
        assert_eq!(
            partition_spec(&s.chosen.assignment[i]),
            partition_spec(given),
            "argument {i}"
        );
        assert!(s.args[i].fixed);
    }
}

#[test]
fn a_deep_program_is_searched_by_groups_and_gets_megatron_in_every_layer() {
    let name = "mlp16_train_b4096_h2048";
    let s = run(name, None);
    assert!(s.args.len() > meshrun::suggest::search::LARGE);
    let p = specs(&s);
    assert_eq!(p[0], r#"P("data", None)"#, "{p:?}");
    assert_eq!(p[1], r#"P("data", None)"#, "{p:?}");
    for layer in 0..16 {
        let want = if layer % 2 == 0 {
            r#"P(None, "model")"#
        } else {
            r#"P("model", None)"#
        };
        assert_eq!(p[2 + 2 * layer], want, "layer {layer}: {p:?}");
    }
    check_common(name, &s);
    // Moving the weights in groups keeps the search small.
    assert!(s.evaluated < 400, "{} assignments", s.evaluated);
}

/// GPT-2's training step as JAX users write it (2 layers of width 768,
/// vocabulary 8192): tokens embedded by a gather, targets picked by
/// `take_along_axis`, the embedding's gradient a scatter-add. No slower
/// than Megatron + DP written by hand (vocabulary-parallel embedding).
#[test]
fn a_gpt2_training_step_is_no_slower_than_hand_megatron() {
    let name = "gpt2_train_l2_e768";
    let s = run(name, None);
    check_common(name, &s);
    // Each annotation set is one propagation and each assignment one
    // partition of a 996-line program: the search must stay small.
    assert!(s.evaluated < 200, "{} assignments", s.evaluated);
}

/// With GPT-2's batch given on `data` (`--keep-given` with the tokens and
/// targets annotated), the search fills in the rest as Megatron-LM does,
/// argument for argument the hand sharding: the embedding by vocabulary
/// rows, qkv and MLP-in by columns, attention-out and MLP-out by rows,
/// their biases split with them, layernorms replicated.
#[test]
fn gpt2_with_its_batch_on_data_gets_megatron_on_model() {
    let name = "gpt2_train_l2_e768";
    let hand = load(name, "hand.mlir");
    let hand_args = &hand.entry().expect("main").arg_attrs;
    let mut module = load(name, "input.mlir");
    module.meshes = hand.meshes.clone();
    let f = module
        .funcs
        .iter_mut()
        .find(|f| f.name == "main")
        .expect("main");
    for i in [0, 1] {
        f.arg_attrs[i].sharding = hand_args[i].sharding.clone();
    }
    let mut opts = options(None);
    opts.mesh = None;
    opts.keep_given = true;
    let s = suggest(&module, &opts).expect("a suggestion");
    for (i, attr) in hand_args.iter().enumerate() {
        let want = attr.sharding.as_ref().expect("every argument annotated");
        assert_eq!(
            partition_spec(&s.chosen.assignment[i]),
            partition_spec(want),
            "argument {i}: {:?}",
            specs(&s)
        );
    }
}
