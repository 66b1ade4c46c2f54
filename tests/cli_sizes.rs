//! Absurd sizes through every command: meshes of 10^12 devices, tensors
//! of petabytes, made by arguments, `iota`, `broadcast_in_dim` and splat
//! constants. Each command either works (when it never needs to allocate
//! the size: `parse`, `propagate`, `show`, and `partition`/`cost` where
//! the partitioner's tables stay small) or fails with one line
//! `error: FILE:LINE:COL: ...` naming the size and what the partitioner,
//! the backend or this machine can hold — never an abort.
//!
//! Tensors are sized in petabytes so that no machine running these tests
//! has that much memory.

use std::path::PathBuf;

use assert_cmd::Command;

/// `commands` of the CLI, each with its extra arguments.
const PARSE: &[&str] = &["parse"];
const PROPAGATE: &[&str] = &["propagate"];
const PARTITION: &[&str] = &["partition", "--json"];
const RUN: &[&str] = &["run", "--random-inputs", "1"];
const RUN_CHECK: &[&str] = &["run", "--random-inputs", "1", "--check"];
const COST: &[&str] = &["cost"];
const SHOW: &[&str] = &["show"];

struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    path: PathBuf,
    _dir: tempfile::TempDir,
}

fn meshrun(text: &str, command: &[&str]) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("prog.mlir");
    std::fs::write(&path, text).unwrap();
    let out = Command::cargo_bin("meshrun")
        .unwrap()
        .args(command)
        .arg(&path)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    Outcome {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        path,
        _dir: dir,
    }
}

/// `command` on `text` succeeds.
fn works(text: &str, command: &[&str]) -> String {
    let o = meshrun(text, command);
    assert_eq!(o.code, Some(0), "{command:?}: {}", o.stderr);
    o.stdout
}

/// `command` on `text` fails with one line `error: FILE:LINE:` holding
/// every needle.
fn fails(text: &str, command: &[&str], line: u32, needles: &[&str]) {
    let o = meshrun(text, command);
    assert_eq!(o.code, Some(1), "{command:?}: {}", o.stderr);
    assert_eq!(o.stderr.lines().count(), 1, "{command:?}: {}", o.stderr);
    let prefix = format!("error: {}:{line}:", o.path.display());
    assert!(
        o.stderr.starts_with(&prefix),
        "{command:?}: expected `{prefix}...`, got {}",
        o.stderr
    );
    for n in needles {
        assert!(o.stderr.contains(n), "{command:?}: `{n}` in {}", o.stderr);
    }
}

/// One `tanh` on `mesh_axes` with the argument's dim 0 sharded along `x`.
fn tanh_program(mesh_axes: &str, ty: &str) -> String {
    format!(
        r#"module @m {{
  sdy.mesh @mesh = <[{mesh_axes}]>
  func.func public @main(%arg0: {ty} {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}]>}}) -> {ty} {{
    %0 = stablehlo.tanh %arg0 : {ty}
    return %0 : {ty}
  }}
}}
"#
    )
}

/// A function returning `ty`, made by `op` (written with its type) on
/// line 4.
fn made_by(op: &str, ty: &str) -> String {
    format!(
        r#"module @m {{
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main(%arg0: tensor<4xf32>) -> {ty} {{
    %0 = {op}
    return %0 : {ty}
  }}
}}
"#
    )
}

#[test]
fn a_mesh_of_a_trillion_devices_is_refused_by_what_allocates_per_device() {
    let text = tanh_program(r#""x"=999999999998"#, "tensor<8x16xf32>");
    works(&text, PARSE);
    works(&text, PROPAGATE);
    let shown = works(&text, SHOW);
    assert!(
        shown.contains("no picture: the mesh has 999999999998 devices"),
        "{shown}"
    );
    let partitioner = [
        "mesh @mesh has 999999999998 devices",
        "the partitioner handles at most 65536",
    ];
    fails(&text, PARTITION, 2, &partitioner);
    // `cost` checks the topology first: no machine of its has them.
    let o = meshrun(&text, COST);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert_eq!(o.stderr.lines().count(), 1, "{}", o.stderr);
    assert!(
        o.stderr.starts_with(&format!(
            "error: {}: topology 'h100-nvlink-8' has 8 devices but the program uses device 8",
            o.path.display()
        )),
        "{}",
        o.stderr
    );
    let backend = [
        "mesh @mesh has 999999999998 devices",
        "the cpu backend runs at most 1024",
    ];
    fails(&text, RUN, 2, &backend);
    fails(&text, RUN_CHECK, 2, &backend);
}

#[test]
fn a_mesh_the_partitioner_takes_but_the_cpu_backend_does_not() {
    let text = tanh_program(r#""x"=16384"#, "tensor<16384x16xf32>");
    let json = works(&text, PARTITION);
    assert!(json.contains("\"num_devices\": 16384"), "{json}");
    fails(
        &text,
        RUN,
        2,
        &["mesh @mesh has 16384 devices; the cpu backend runs at most 1024"],
    );
}

#[test]
fn a_tensor_whose_byte_size_overflows_64_bits_is_a_parse_error_everywhere() {
    let text = tanh_program(r#""x"=2"#, "tensor<99999999999x99999999999xf32>");
    for command in [PARSE, PROPAGATE, PARTITION, RUN, COST, SHOW] {
        fails(
            &text,
            command,
            3,
            &[
                "tensor<99999999999x99999999999xf32> is too large",
                "64 bits",
            ],
        );
    }
}

#[test]
fn a_petabyte_argument_compiles_but_does_not_run() {
    let text = tanh_program(r#""x"=2"#, "tensor<999999999999999x1xf32>");
    works(&text, PARSE);
    works(&text, PROPAGATE);
    works(&text, PARTITION);
    works(&text, COST);
    works(&text, SHOW);
    for command in [RUN, RUN_CHECK] {
        fails(
            &text,
            command,
            3,
            &[
                "the inputs of @main (tensor<999999999999999x1xf32>)",
                "3.6 PiB of host memory, more than this machine has",
            ],
        );
    }
}

#[test]
fn petabyte_results_of_iota_broadcast_and_splat_constants_do_not_run() {
    let ty = "tensor<999999999999999x4xf32>";
    for op in [
        format!("stablehlo.iota dim = 0 : {ty}"),
        format!("stablehlo.constant dense<1.0> : {ty}"),
        format!("stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<4xf32>) -> {ty}"),
    ] {
        let text = made_by(&op, ty);
        works(&text, PARSE);
        works(&text, PROPAGATE);
        works(&text, PARTITION);
        works(&text, COST);
        works(&text, SHOW);
        fails(
            &text,
            RUN,
            3,
            &[
                &format!("the outputs of @main ({ty})"),
                "14.2 PiB of host memory",
            ],
        );
    }
}

#[test]
fn a_petabyte_intermediate_is_refused_at_its_op() {
    let text = r#"module @m {
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main() -> tensor<f32> {
    %0 = stablehlo.iota dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : tensor<999999999999999xf32>
    %1 = stablehlo.constant dense<0.0> : tensor<f32>
    %2 = stablehlo.reduce(%0 init: %1) applies stablehlo.add across dimensions = [0] : (tensor<999999999999999xf32>, tensor<f32>) -> tensor<f32>
    return %2 : tensor<f32>
  }
}
"#;
    works(text, PARTITION);
    works(text, COST);
    // Sharded: each device's half is too large for a device.
    fails(
        text,
        RUN,
        4,
        &["%0 needs a local block tensor<500000000000000xf32> of 1.8 PiB on each device; a cpu device has"],
    );
    // The unsharded reference holds it whole.
    fails(
        text,
        RUN_CHECK,
        4,
        &["the unsharded reference run of @main (tensor<999999999999999xf32>): 3.6 PiB"],
    );
}

#[test]
fn a_halo_exchange_too_large_for_the_partitioners_tables_is_an_error_at_the_slice() {
    let text = r#"module @m {
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main(%arg0: tensor<999999999999999xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<999999999999998xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
    %0 = stablehlo.slice %arg0 [1:999999999999999] : (tensor<999999999999999xf32>) -> tensor<999999999999998xf32>
    return %0 : tensor<999999999999998xf32>
  }
}
"#;
    let needles = [
        "stablehlo.slice",
        "a remap of dimension 0 on 2 devices needs a table larger than the partitioner handles",
    ];
    fails(text, PARTITION, 4, &needles);
    fails(text, COST, 4, &needles);
}

#[test]
fn a_reshard_too_large_to_remap_falls_back_to_collectives() {
    // 8 elements on 16384 devices: remapping them would need a range per
    // device and block shift (16384 x 16384), so an all-gather it is.
    let text = tanh_program(r#""x"=16384"#, "tensor<8x16xf32>").replace(
        ") -> tensor<8x16xf32> {",
        ") -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {",
    );
    let json = works(&text, PARTITION);
    assert!(json.contains("all-gather"), "{json}");
}
