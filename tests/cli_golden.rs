//! The CLI's output on every fixture, byte for byte: a refactoring that
//! changes what any command prints for any committed program fails here.
//!
//! For each `fixtures/**/input.mlir` and each command below, the test runs
//! the `meshrun` binary and hashes its exit status, stdout and stderr
//! (FNV-1a, 64 bits). `tests/golden/cli_outputs.txt` holds one line per
//! run: hash, stdout line count, file, command. A change that is meant
//! (new output, a better plan) is recorded with
//! `MESHRUN_BLESS=1 cargo test --release --test cli_golden`, and the
//! diff of that file shows which runs it touched.

use std::path::{Path, PathBuf};
use std::process::Command;

const COMMANDS: &[&[&str]] = &[
    &["parse"],
    &["propagate"],
    &["partition"],
    &["partition", "--device", "0"],
    &["partition", "--json"],
    &["cost"],
    &["show", "--all", "--propagated"],
];

const GOLDEN: &str = "tests/golden/cli_outputs.txt";

fn fnv1a(bytes: &[u8], mut h: u64) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn inputs(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            inputs(&p, out);
        } else if p.file_name().is_some_and(|n| n == "input.mlir") {
            out.push(p);
        }
    }
}

/// One line per (fixture, command): hash, stdout lines, file, command.
fn outputs(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    inputs(&root.join("fixtures"), &mut files);
    assert!(
        files.len() > 100,
        "expected the committed fixtures, found {}",
        files.len()
    );
    let mut lines = Vec::new();
    for file in &files {
        let rel = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        for cmd in COMMANDS {
            let out = Command::new(env!("CARGO_BIN_EXE_meshrun"))
                .current_dir(root)
                .args(*cmd)
                .arg(&rel)
                .output()
                .unwrap();
            let status = out
                .status
                .code()
                .map_or("signal".to_string(), |c| c.to_string());
            let mut h = fnv1a(status.as_bytes(), 0xcbf2_9ce4_8422_2325);
            h = fnv1a(&out.stdout, h);
            h = fnv1a(b"\0stderr\0", h);
            h = fnv1a(&out.stderr, h);
            let stdout_lines = out.stdout.iter().filter(|&&b| b == b'\n').count();
            lines.push(format!("{h:016x} {stdout_lines:6} {rel} {}", cmd.join(" ")));
        }
    }
    lines
}

#[test]
fn cli_output_on_every_fixture_is_unchanged() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let now = outputs(root);
    if std::env::var_os("MESHRUN_BLESS").is_some() {
        std::fs::create_dir_all(root.join("tests/golden")).unwrap();
        std::fs::write(root.join(GOLDEN), now.join("\n") + "\n").unwrap();
        return;
    }
    let golden = std::fs::read_to_string(root.join(GOLDEN)).unwrap();
    let golden: Vec<&str> = golden.lines().collect();
    let key = |l: &str| l.split_whitespace().skip(2).collect::<Vec<_>>().join(" ");
    let mut changed = Vec::new();
    for line in &now {
        match golden.iter().find(|g| key(g) == key(line)) {
            Some(g) if *g == line => {}
            Some(g) => changed.push(format!("changed: {g}\n      -> {line}")),
            None => changed.push(format!("new:     {line}")),
        }
    }
    for g in &golden {
        if !now.iter().any(|l| key(l) == key(g)) {
            changed.push(format!("gone:    {g}"));
        }
    }
    assert!(
        changed.is_empty(),
        "{} of {} CLI runs print something else than {GOLDEN} records \
         (MESHRUN_BLESS=1 records it if that is meant):\n{}",
        changed.len(),
        now.len(),
        changed.join("\n")
    );
}
