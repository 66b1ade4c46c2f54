//! `meshrun propagate` and `meshrun show --propagated` on the command
//! line: output, `-o`, strategies, `--explain`, and errors as one line
//! `error: FILE:LINE:COL: ...` with exit code 1.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use meshrun::compiler::text::parse_module;

fn mlp_seed() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("compiler/tests/data/mlp_seed.input.mlir")
}

fn meshrun(args: &[&str], file: &Path) -> std::process::Output {
    Command::cargo_bin("meshrun")
        .unwrap()
        .args(args)
        .arg(file)
        .output()
        .unwrap()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn propagate_prints_a_fully_sharded_module() {
    let out = meshrun(&["propagate"], &mlp_seed());
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let m = parse_module(&text).expect("the output parses");
    let f = m.entry().unwrap();
    assert!(
        f.ops_in_order().all(|(_, op)| op.shardings.is_some()),
        "{text}"
    );
    assert!(f.arg_attrs.iter().all(|a| a.sharding.is_some()));
    assert!(f.result_attrs.iter().all(|a| a.sharding.is_some()));
    // w2 was left to propagation: it is sharded like w1's columns.
    assert!(
        text.contains(
            r#"%arg2: tensor<256x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}"#
        ),
        "{text}"
    );
}

#[test]
fn propagate_writes_to_a_file_with_o() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("out.mlir");
    let out = Command::cargo_bin("meshrun")
        .unwrap()
        .args(["propagate", "-o"])
        .arg(&out_path)
        .arg(mlp_seed())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let written = std::fs::read_to_string(&out_path).unwrap();
    assert!(written.contains("sdy.sharding_per_value"));
}

#[test]
fn every_strategy_runs() {
    for s in [
        "basic",
        "aggressive",
        "op-priority",
        "user-priority",
        "full",
    ] {
        let out = meshrun(&["propagate", "--strategy", s], &mlp_seed());
        assert!(out.status.success(), "{s}: {}", stderr(&out));
        assert!(stdout(&out).contains(r#"[{"data"}, {"model"}]"#), "{s}");
    }
    let out = meshrun(&["propagate", "--strategy", "greedy"], &mlp_seed());
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("unknown strategy 'greedy'"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn explain_prints_where_each_axis_came_from() {
    let out = meshrun(&["propagate", "--explain", "%1"], &mlp_seed());
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with(r#"%1 : tensor<16x256xf32> sharded <@mesh, [{"data"}, {"model"}]>"#),
        "{text}"
    );
    assert!(text.contains("along factor j, from %arg1"), "{text}");

    let out = meshrun(&["propagate", "--explain", "%99"], &mlp_seed());
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!("error: {}: ", mlp_seed().display())),
        "{err}"
    );
    assert!(err.contains("no value %99"), "{err}");
}

/// A program whose calls propagation keeps: the callee's values are named
/// `@callee:%N`, and their axes come from the caller through the call.
#[test]
fn explain_names_values_of_kept_callees() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("compiler/tests/propagation_data/jax_extra/call_in_scan.before.mlir");
    let out = meshrun(&["propagate", "--explain", "@compute_on.2:%1"], &path);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with(r#"%1 : tensor<16x32xf32> sharded <@mesh, [{"data"}, {"model"}]>"#),
        "{text}"
    );
    assert!(text.contains(r#"dim 0 "data""#), "{text}");

    let out = meshrun(&["propagate", "--explain", "@nowhere:%1"], &path);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no such function"),
        "{}",
        stderr(&out)
    );
}

/// Write `text` to a file, run `meshrun propagate` on it, and check the one
/// error line: `error: FILE:LINE:COL: ...` containing every needle.
fn assert_error(text: &str, line: u32, needles: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("prog.mlir");
    std::fs::write(&path, text).unwrap();
    let out = meshrun(&["propagate"], &path);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    let first = err.lines().next().unwrap_or_default();
    let prefix = format!("error: {}:{line}:", path.display());
    assert!(
        first.starts_with(&prefix),
        "expected `{prefix}...`, got: {err}"
    );
    for n in needles {
        assert!(first.contains(n), "`{n}` not in: {first}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

fn module(body: &str) -> String {
    format!(
        r#"module @m {{
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x16xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}]>}}, %arg1: tensor<8x16xf32>) -> tensor<8x16xf32> {{
{body}
  }}
}}
"#
    )
}

#[test]
fn bad_constraints_and_groups_are_errors() {
    assert_error(
        &module(
            r#"    %0 = stablehlo.tanh %arg1 : tensor<8x16xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"q"}, {}]> : tensor<8x16xf32>
    return %1 : tensor<8x16xf32>"#,
        ),
        5,
        &["\"q\""],
    );
    assert_error(
        &module(
            r#"    %0 = sdy.sharding_constraint %arg1 <@mesh, [{"y"}, {"y"}]> : tensor<8x16xf32>
    return %0 : tensor<8x16xf32>"#,
        ),
        4,
        &["\"y\""],
    );
    assert_error(
        &module(
            r#"    %0 = stablehlo.reshape %arg1 : (tensor<8x16xf32>) -> tensor<16x8xf32>
    sdy.sharding_group %arg0 group_id=1 : tensor<8x16xf32>
    sdy.sharding_group %0 group_id=1 : tensor<16x8xf32>
    return %arg0 : tensor<8x16xf32>"#,
        ),
        6,
        &["same shape", "%arg0"],
    );
}

#[test]
fn groups_whose_members_disagree_get_constraints() {
    // %arg0 is on "x", the constraint puts %0 on "y": as in Shardy, each
    // member gets an open constraint and propagation picks one sharding
    // for the group (no error). The constraint on %arg0, which nothing
    // reads, is dropped at export.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("prog.mlir");
    std::fs::write(
        &path,
        module(
            r#"    %0 = sdy.sharding_constraint %arg1 <@mesh, [{"y"}, {}]> : tensor<8x16xf32>
    sdy.sharding_group %arg0 group_id=1 : tensor<8x16xf32>
    sdy.sharding_group %0 group_id=1 : tensor<8x16xf32>
    return %0 : tensor<8x16xf32>"#,
        ),
    )
    .unwrap();
    let out = meshrun(&["propagate"], &path);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.matches("sdy.reshard").count(), 2, "{text}");
}

#[test]
fn show_propagated_draws_the_inferred_shardings() {
    let out = meshrun(&["show", "--propagated"], &mlp_seed());
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(r#"%arg2: tensor<256x128xf32>  <@mesh, [{"model"}, {}]>"#),
        "{text}"
    );
    let plain = stdout(&meshrun(&["show"], &mlp_seed()));
    assert!(
        plain.contains("%arg2: tensor<256x128xf32>  (no sharding"),
        "{plain}"
    );
}

#[test]
fn conservative_keeps_shardings_out_of_split_dimensions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reshape.mlir");
    std::fs::write(
        &path,
        r#"module @m {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<2x8xf32> {
    %0 = stablehlo.reshape %arg0 : (tensor<16xf32>) -> tensor<2x8xf32>
    return %0 : tensor<2x8xf32>
  }
}
"#,
    )
    .unwrap();
    let split = r#"[{"x":(1)2}, {"x":(2)2}]"#;
    let out = meshrun(&["propagate"], &path);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains(split), "{}", stdout(&out));
    let out = meshrun(&["propagate", "--conservative"], &path);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains(split), "{text}");
    // Replicated, printed as Shardy prints it: without a sharding.
    assert!(
        text.contains("stablehlo.reshape %arg0 : (tensor<16xf32>)"),
        "{text}"
    );
    // partition and run take the same flag: the reshape's result is then
    // replicated, so the input is gathered first.
    let out = meshrun(&["partition", "--conservative"], &path);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("all_gather"), "{}", stdout(&out));
    let out = meshrun(
        &["run", "--conservative", "--random-inputs", "1", "--check"],
        &path,
    );
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn keep_open_prints_single_strategies_as_shardy_passes_do() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("add.mlir");
    std::fs::write(
        &path,
        r#"module @m {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}, %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}
"#,
    )
    .unwrap();
    let open = r#"<@mesh, [{"x", ?}, {?}]>"#;
    let out = meshrun(&["propagate", "--strategy", "basic", "--keep-open"], &path);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    // %arg0's open sharding, and the same on %arg1, the add and the result,
    // as Shardy's basic pass prints them.
    assert_eq!(text.matches(open).count(), 4, "{text}");
    // Without the flag (and with `full` always) every sharding is closed.
    for args in [
        &["propagate", "--strategy", "basic"][..],
        &["propagate", "--strategy", "full", "--keep-open"][..],
    ] {
        let out = meshrun(args, &path);
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        assert!(!text.contains('?'), "{args:?}: {text}");
        assert!(text.contains(r#"<@mesh, [{"x"}, {}]>"#), "{args:?}: {text}");
    }
}
