//! `meshrun run`: the good path (inputs from `.npy` files, outputs written,
//! `--check --json`, `--repeat`), random inputs, and every kind of bad
//! input, each of which must be one line on stderr, exit code 1, and no
//! file written.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use meshrun::runtime::compare::mismatch;
use meshrun::runtime::npy::{read_npy, write_npy};
use meshrun_kernels::HostTensor;
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/jax")
        .join(name)
}

fn mlp_inputs() -> Vec<PathBuf> {
    (0..7)
        .map(|i| fixture("mlp_forward").join(format!("in_{i}.npy")))
        .collect()
}

fn meshrun() -> Command {
    Command::cargo_bin("meshrun").expect("the meshrun binary")
}

/// Runs `meshrun run FILE args...`; (exit code, stdout, stderr).
fn run(file: &Path, args: &[&str], inputs: &[PathBuf]) -> (i32, String, String) {
    let mut cmd = meshrun();
    cmd.arg("run").arg(file).args(args);
    if !inputs.is_empty() {
        cmd.arg("--inputs").args(inputs);
    }
    let out = cmd.output().expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn files_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn good_path_with_check_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let file = fixture("mlp_forward").join("input.mlir");
    let (code, stdout, stderr) = run(
        &file,
        &[
            "--check",
            "--json",
            "--repeat",
            "3",
            "--output-dir",
            out_dir.to_str().unwrap(),
        ],
        &mlp_inputs(),
    );
    assert_eq!(code, 0, "{stderr}");
    let report: Value = serde_json::from_str(&stdout).expect("JSON on stdout");
    assert_eq!(report["devices"], 8);
    assert_eq!(report["backend"], "cpu");
    assert_eq!(report["runs"], 3);
    let (median, min) = (
        report["median_ms"].as_f64().unwrap(),
        report["min_ms"].as_f64().unwrap(),
    );
    assert!(min > 0.0 && min <= median, "{report}");
    let max_abs = report["max_abs_diff"]
        .as_f64()
        .expect("a number with --check");
    assert!(max_abs < 1e-4, "{report}");
    assert_eq!(report["check"]["passed"], true);
    let outputs = report["outputs"].as_array().unwrap();
    assert_eq!(outputs.len(), 1);
    assert_eq!(outputs[0]["shape"], serde_json::json!([16, 16]));
    assert_eq!(outputs[0]["dtype"], "f32");
    let path = PathBuf::from(outputs[0]["path"].as_str().unwrap());
    assert_eq!(path, out_dir.join("output_0.npy"));
    // The written output is JAX's result.
    let got = read_npy(&path).unwrap();
    let want = read_npy(&fixture("mlp_forward").join("out_0.npy")).unwrap();
    assert_eq!(mismatch(&got, &want, 1e-5), None);
}

#[test]
fn random_inputs_are_deterministic_and_text_output_is_readable() {
    let dir = tempfile::tempdir().unwrap();
    let file = fixture("mlp_train_step").join("input.mlir");
    let mut written = Vec::new();
    for k in 0..2 {
        let out_dir = dir.path().join(format!("run{k}"));
        let (code, stdout, stderr) = run(
            &file,
            &[
                "--random-inputs",
                "5",
                "--check",
                "--output-dir",
                out_dir.to_str().unwrap(),
            ],
            &[],
        );
        assert_eq!(code, 0, "{stderr}");
        assert!(stdout.starts_with("ran @main on 8 cpu devices"), "{stdout}");
        assert!(stdout.contains("output 4: tensor<8xf32>"), "{stdout}");
        assert!(stdout.contains("(ok)"), "{stdout}");
        let outs: Vec<HostTensor> = (0..5)
            .map(|i| read_npy(&out_dir.join(format!("output_{i}.npy"))).unwrap())
            .collect();
        written.push(outs);
    }
    assert_eq!(written[0], written[1], "same seed, same outputs, bitwise");
}

/// Bad input: exit 1, one line on stderr containing `needle`, and nothing
/// in the output directory.
fn assert_bad(file: &Path, args: &[&str], inputs: &[PathBuf], needle: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--output-dir", out_dir.to_str().unwrap()]);
    let (code, stdout, stderr) = run(file, &all, inputs);
    assert_eq!(code, 1, "stdout: {stdout}\nstderr: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(stderr.contains(needle), "expected {needle:?} in {stderr}");
    assert!(
        files_in(&out_dir).is_empty(),
        "nothing may be written: {:?}",
        files_in(&out_dir)
    );
}

#[test]
fn wrong_number_of_inputs() {
    let file = fixture("mlp_forward").join("input.mlir");
    assert_bad(
        &file,
        &[],
        &mlp_inputs()[..3],
        "@main takes 7 inputs, got 3 .npy files",
    );
    assert_bad(
        &file,
        &[],
        &[],
        "@main takes 7 inputs: give --inputs A.npy ... or --random-inputs SEED",
    );
}

#[test]
fn wrong_shape_or_dtype_in_a_npy() {
    let file = fixture("mlp_forward").join("input.mlir");
    let mut swapped = mlp_inputs();
    swapped.swap(1, 3);
    assert_bad(&file, &[], &swapped, "input 1: ");
    assert_bad(
        &file,
        &[],
        &swapped,
        "expected tensor<32x64xf32>, file holds shape [64, 32] f32",
    );
    let dir = tempfile::tempdir().unwrap();
    let ints = dir.path().join("ints.npy");
    write_npy(&ints, &HostTensor::from_vec(&[64], vec![1i32; 64]).unwrap()).unwrap();
    let mut wrong_type = mlp_inputs();
    wrong_type[2] = ints;
    assert_bad(
        &file,
        &[],
        &wrong_type,
        "expected tensor<64xf32>, file holds shape [64] i32",
    );
}

#[test]
fn unreadable_files() {
    let file = fixture("mlp_forward").join("input.mlir");
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.npy");
    let mut inputs = mlp_inputs();
    inputs[6] = missing;
    assert_bad(&file, &[], &inputs, "missing.npy: cannot read");
    let garbage = dir.path().join("garbage.npy");
    std::fs::write(&garbage, b"not a numpy file").unwrap();
    let mut inputs = mlp_inputs();
    inputs[0] = garbage;
    assert_bad(&file, &[], &inputs, "garbage.npy");
    assert_bad(
        &dir.path().join("nope.mlir"),
        &["--random-inputs", "1"],
        &[],
        "nope.mlir: cannot read",
    );
    let bad_program = dir.path().join("bad.mlir");
    std::fs::write(&bad_program, "module {\n  func.func @main( {\n}\n").unwrap();
    assert_bad(&bad_program, &["--random-inputs", "1"], &[], "bad.mlir:2:");
}

#[test]
fn unknown_backend_and_bad_repeat() {
    let file = fixture("mlp_forward").join("input.mlir");
    assert_bad(
        &file,
        &["--random-inputs", "1", "--backend", "tpu"],
        &[],
        "unknown backend 'tpu' (available: cpu",
    );
    assert_bad(
        &file,
        &["--random-inputs", "1", "--repeat", "0"],
        &[],
        "--repeat must be at least 1",
    );
}

/// `run --check` on every `jax.shard_map` program (`fixtures/jax_shard_map`
/// and the shard_map models): the reference runs each manual
/// computation's body once per device with its collectives, and the
/// sharded run must agree with it.
#[test]
fn check_passes_on_every_shard_map_program() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut files: Vec<PathBuf> = ["jax_shard_map", "jax_models"]
        .iter()
        .flat_map(|folder| std::fs::read_dir(root.join(folder)).expect("fixtures"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("shard_map_"))
        })
        .map(|p| p.join("input.mlir"))
        .filter(|p| p.exists())
        .collect();
    files.sort();
    assert!(files.len() >= 8, "only {} shard_map programs", files.len());
    for file in &files {
        let (code, stdout, stderr) = run(file, &["--random-inputs", "1", "--check"], &[]);
        assert_eq!(code, 0, "{}: {stderr}", file.display());
        assert!(stdout.contains("(ok)"), "{}: {stdout}", file.display());
        assert!(
            !stdout.contains("OVER TOLERANCE"),
            "{}: {stdout}",
            file.display()
        );
    }
}

/// `sdy.propagation_barrier` runs as the identity: where a `NONE` barrier
/// keeps a value's sharding from reaching its operand, the partitioner
/// reshards across it, and the sharded run equals the unsharded one.
#[test]
fn propagation_barriers_run_as_the_identity() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("barrier.mlir");
    std::fs::write(
        &file,
        r#"sdy.mesh @mesh = <["a"=2, "b"=4]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, %arg1: tensor<16x8xf32>) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>}) {
  %0 = stablehlo.sine %arg0 : tensor<8x16xf32>
  %1 = sdy.propagation_barrier %0 allowed_direction=NONE : tensor<8x16xf32>
  %2 = stablehlo.dot_general %1, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %3 = sdy.propagation_barrier %2 allowed_direction=FORWARD : tensor<8x8xf32>
  return %3 : tensor<8x8xf32>
}
"#,
    )
    .unwrap();
    let (code, stdout, stderr) = run(&file, &["--random-inputs", "3", "--check"], &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("(ok)"), "{stdout}");
    let out = meshrun().arg("partition").arg(&file).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // The operand keeps "a"; the barrier's result is replicated (its use
    // wants it whole), so the value is gathered after the barrier.
    assert!(text.contains(r#"sdy.all_gather [{"a"}, {}]"#), "{text}");
}

/// Unreduced values reduced explicitly: propagation writes the
/// `sdy.all_reduce`s Shardy's pipeline writes (one before each reshard
/// that drops unreduced axes), the partitioner lowers them to the
/// all-reduces it would write anyway, and the run equals the unsharded
/// one. The same program partitioned from text with an explicit
/// `sdy.all_reduce` moves the same bytes.
#[test]
fn explicit_all_reduces_run_as_the_reductions_they_write() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("delayed.mlir");
    std::fs::write(
        &file,
        r#"sdy.mesh @mesh = <["a"=2, "b"=2, "c"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b", "c"}]>}, %arg1: tensor<8x16xf32>) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"b", "c"}]>}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {?}], unreduced={"b", "c"}>]>} : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = sdy.reshard %0 <@mesh, [{"a"}, {}], unreduced={"c"}> : tensor<8x16xf32>
  %2 = stablehlo.add %1, %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {?}], unreduced={"c"}>]>} : tensor<8x16xf32>
  %3 = sdy.reshard %2 <@mesh, [{"a"}, {}]> : tensor<8x16xf32>
  return %3 : tensor<8x16xf32>
}
"#,
    )
    .unwrap();
    let out = meshrun().arg("propagate").arg(&file).output().unwrap();
    let propagated = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{propagated}");
    for line in [
        r#"sdy.all_reduce {"b"} %0 out_sharding=<@mesh, [{"a"}, {}], unreduced={"c"}>"#,
        r#"sdy.all_reduce {"c"} %3 out_sharding=<@mesh, [{"a"}, {}]>"#,
    ] {
        assert!(propagated.contains(line), "no `{line}` in\n{propagated}");
    }
    let (code, stdout, stderr) = run(&file, &["--random-inputs", "3", "--check"], &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("(ok)"), "{stdout}");
    // The propagated text, partitioned as written, moves what the
    // pipeline does.
    let written = dir.path().join("propagated.mlir");
    std::fs::write(&written, &propagated).unwrap();
    let bytes = |args: &[&str], f: &Path| {
        let out = meshrun()
            .arg("partition")
            .args(args)
            .arg(f)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let total = text
            .lines()
            .find_map(|l| l.split("(total ").nth(1))
            .unwrap_or_else(|| panic!("no total in\n{text}"))
            .to_string();
        (total, text)
    };
    let (piped, _) = bytes(&[], &file);
    let (as_written, text) = bytes(&["--no-propagate"], &written);
    assert_eq!(piped, as_written);
    assert!(text.contains("all_reduce"), "{text}");
    // Along an axis the value is whole, the reduction has nothing to
    // combine: the run still equals the unsharded one (no sum of copies).
    let whole = dir.path().join("whole.mlir");
    std::fs::write(
        &whole,
        r#"sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> tensor<8x16xf32> {
  %0 = sdy.all_reduce {"b"} %arg0 out_sharding=<@mesh, [{"a"}, {}]> : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
"#,
    )
    .unwrap();
    let (code, stdout, stderr) = run(&whole, &["--random-inputs", "3", "--check"], &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("(ok)"), "{stdout}");
}
