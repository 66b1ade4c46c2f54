//! Every class of bad input gives exit code 1 and one line
//! `error: FILE:LINE:COL: what is wrong` — never a panic.

use std::path::PathBuf;

use assert_cmd::Command;

/// A module whose `main` has one argument of `arg_type` annotated with
/// `sharding` (inserted verbatim) and `body` as its ops.
fn module(sharding: &str, body: &str) -> String {
    format!(
        r#"module @m {{
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func public @main(%arg0: tensor<8x16xf32> {{sdy.sharding = #sdy.sharding<@mesh, {sharding}>}}) -> tensor<8x16xf32> {{
{body}
    return %0 : tensor<8x16xf32>
  }}
}}
"#
    )
}

const GOOD_BODY: &str = "    %0 = stablehlo.tanh %arg0 : tensor<8x16xf32>";

fn write(dir: &tempfile::TempDir, text: &str) -> PathBuf {
    let path = dir.path().join("prog.mlir");
    std::fs::write(&path, text).unwrap();
    path
}

/// Run `meshrun parse` on `text`; assert failure with one `error:` line
/// naming the file, the given line, and containing every `needles` string.
fn assert_error(text: &str, line: u32, needles: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, text);
    let out = Command::cargo_bin("meshrun")
        .unwrap()
        .arg("parse")
        .arg(&path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert!(out.stdout.is_empty(), "nothing printed on stdout on error");
    let first = stderr.lines().next().unwrap_or_default();
    let prefix = format!("error: {}:{line}:", path.display());
    assert!(
        first.starts_with(&prefix),
        "expected `{prefix}...`, got: {stderr}"
    );
    for n in needles {
        assert!(first.contains(n), "expected `{n}` in: {first}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn good_module_parses_and_prints() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, &module(r#"[{"x"}, {"y"}]"#, GOOD_BODY));
    let out = Command::cargo_bin("meshrun")
        .unwrap()
        .arg("parse")
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("stablehlo.tanh"), "{text}");
    assert!(
        text.contains(r#"#sdy.sharding<@mesh, [{"x"}, {"y"}]>"#),
        "{text}"
    );
}

#[test]
fn missing_file() {
    let out = Command::cargo_bin("meshrun")
        .unwrap()
        .args(["parse", "/nonexistent/prog.mlir"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: /nonexistent/prog.mlir: cannot read"),
        "{stderr}"
    );
}

#[test]
fn unknown_op() {
    let body = "    %0 = stablehlo.frobnicate %arg0 : tensor<8x16xf32>";
    assert_error(
        &module(r#"[{"x"}, {}]"#, body),
        4,
        &["stablehlo.frobnicate"],
    );
}

#[test]
fn malformed_attribute() {
    assert_error(&module(r#"[{"x", {}]"#, GOOD_BODY), 3, &[]);
}

#[test]
fn type_mismatch() {
    let body = "    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<8x16xf32>) -> tensor<8x16xf32>";
    assert_error(&module(r#"[{"x"}, {}]"#, body), 4, &["stablehlo.transpose"]);
}

#[test]
fn unknown_axis() {
    assert_error(&module(r#"[{"q"}, {}]"#, GOOD_BODY), 3, &["\"q\""]);
}

#[test]
fn axis_used_twice() {
    assert_error(&module(r#"[{"x"}, {"x"}]"#, GOOD_BODY), 3, &["\"x\""]);
}

#[test]
fn overlapping_sub_axes() {
    assert_error(
        &module(r#"[{"y":(1)2}, {"y":(1)4}]"#, GOOD_BODY),
        3,
        &["\"y\""],
    );
}

#[test]
fn non_maximal_sub_axes() {
    assert_error(
        &module(r#"[{"y":(1)2, "y":(2)2}, {}]"#, GOOD_BODY),
        3,
        &["\"y\""],
    );
}

#[test]
fn wrong_rank() {
    assert_error(&module(r#"[{"x"}]"#, GOOD_BODY), 3, &["rank"]);
}

#[test]
fn sub_axis_size_not_dividing() {
    assert_error(&module(r#"[{"y":(1)3}, {}]"#, GOOD_BODY), 3, &["\"y\""]);
}
