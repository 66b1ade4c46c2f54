//! The always-on part of the fuzzer (`meshrun::fuzz`; campaigns of a
//! million cases run with `examples/fuzz.rs`): a few thousand mutations of
//! the fixtures through every stage (load, propagate, partition, cost, run)
//! with no panic, no error of several lines and no sharded run that
//! differs from the unsharded one; and every input a campaign found,
//! kept in `tests/fuzz_found/` with the stage and message it must now get
//! (`FILE: Stage: message`), or `FILE: Accepted: Run` for a program that
//! ran wrong and must now run sharded as it runs unsharded.

use std::path::Path;

use meshrun::fuzz::{case_text, run_case, seed_files, silence_panics, Outcome, Stage};

#[test]
fn mutated_fixtures_never_panic_or_mismatch() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let seeds: Vec<String> = seed_files(&root)
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(seeds.len() > 50, "only {} seed programs", seeds.len());
    silence_panics();
    let cases: u64 = std::env::var("MESHRUN_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    let mut bugs = Vec::new();
    let mut ran = 0;
    // MESHRUN_FUZZ_TRACE=1 names each case before it runs (a case that
    // hangs or exhausts memory names itself).
    let trace = std::env::var_os("MESHRUN_FUZZ_TRACE").is_some();
    for seed in 1..=cases {
        if trace {
            eprintln!("case {seed}");
        }
        let outcome = run_case(&case_text(&seeds, seed));
        if outcome == Outcome::Accepted(Stage::Run) {
            ran += 1;
        }
        if let Outcome::Bug { stage, message } = outcome {
            bugs.push(format!("seed {seed} ({stage:?}): {message}"));
        }
    }
    assert!(bugs.is_empty(), "{} bugs:\n{}", bugs.len(), bugs.join("\n"));
    // The mutations must reach the run, not only the parser.
    assert!(ran * 50 > cases, "only {ran} of {cases} cases ran");
}

#[test]
fn inputs_found_by_fuzzing_get_their_errors_or_run_right() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_found");
    let index = std::fs::read_to_string(dir.join("expected.txt")).unwrap();
    let mut checked = 0;
    for line in index.lines().filter(|l| !l.trim().is_empty()) {
        let (file, expected) = line.split_once(": ").unwrap();
        let (stage, needle) = expected.split_once(": ").unwrap();
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        // `Accepted: Run`: a program that once ran wrong must now run
        // sharded equal to the unsharded run.
        if stage == "Accepted" {
            let outcome = run_case(&text);
            assert_eq!(
                format!("{outcome:?}"),
                format!("Accepted({needle})"),
                "{file}"
            );
            checked += 1;
            continue;
        }
        match run_case(&text) {
            Outcome::Rejected {
                stage: got,
                message,
            } => {
                assert_eq!(format!("{got:?}"), stage, "{file}: {message}");
                assert!(message.contains(needle), "{file}: {message}");
                assert!(!message.contains('\n'), "{file}: {message:?}");
            }
            other => panic!("{file}: expected a rejection by {stage}, got {other:?}"),
        }
        checked += 1;
    }
    assert!(checked >= 15, "only {checked} found inputs");
}

/// Writes case `SEED` to `OUT` (default `case.mlir`), to look at a case
/// the test above names: `SEED=2500 cargo test --release --test
/// fuzz_mutations write_case -- --ignored`.
#[test]
#[ignore]
fn write_case() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let seeds: Vec<String> = seed_files(&root)
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let seed: u64 = std::env::var("SEED")
        .expect("SEED=N")
        .parse()
        .expect("SEED is a number");
    let out = std::env::var("OUT").unwrap_or_else(|_| "case.mlir".into());
    std::fs::write(&out, case_text(&seeds, seed)).expect("writes the case");
}
