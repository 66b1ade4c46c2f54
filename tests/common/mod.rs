//! Running the `meshrun` binary from the CLI tests. Each test crate uses a
//! part of this, hence `dead_code` is allowed.
#![allow(dead_code)]

use std::path::Path;

use assert_cmd::Command;

/// Run meshrun; (exit code, stdout, stderr).
pub fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::cargo_bin("meshrun")
        .expect("binary")
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Run meshrun, require exit 0; its stdout.
pub fn run_ok(args: &[&str]) -> String {
    let (code, stdout, stderr) = run(args);
    assert_eq!(code, Some(0), "meshrun {args:?}: {stderr}");
    stdout
}

/// Exit 1 and exactly one line `error: ...` containing every needle.
pub fn assert_error(args: &[&str], needles: &[&str]) {
    let (code, stdout, stderr) = run(args);
    assert_eq!(code, Some(1), "meshrun {args:?}: {stderr}");
    assert!(stdout.is_empty(), "nothing on stdout: {stdout}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    for n in needles {
        assert!(stderr.contains(n), "expected `{n}` in: {stderr}");
    }
}

/// A path as a command-line argument.
pub fn arg(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}
