//! A fuzz campaign over the whole pipeline (see `meshrun::fuzz`):
//!
//! ```text
//! cargo run --release --example fuzz -- [--cases N] [--first-seed S] [--jobs J]
//!     [--timeout-s T] [--out DIR] [--verbose] [--print-case]
//! ```
//!
//! `--print-case` prints the mutated program of `--first-seed` and exits
//! (to keep a finding as a test input: the seeds move whenever a fixture
//! is added).
//!
//! Case `s` mutates one fixture (both chosen by `s`), so any case is
//! reproduced by its seed. Every bug (a panic, an error of several lines, a
//! sharded run that differs from the unsharded one, a propagated module
//! that does not load again) is written to `DIR/bug-<seed>.mlir` with its
//! message in `DIR/bug-<seed>.txt`; a case running longer than T seconds
//! (default 10) is a hang: it is written as `DIR/hang-<seed>.mlir` and the
//! campaign stops with exit code 2. At the end: cases per stage reached,
//! bugs, and cases per second.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use meshrun::fuzz::{case_text, run_case, seed_files, silence_panics, Outcome, Stage};

struct Args {
    cases: u64,
    first_seed: u64,
    jobs: u64,
    timeout: Duration,
    out: PathBuf,
    /// Print every rejection after `load` (what the deeper stages refuse).
    verbose: bool,
    /// Print the program of the first seed instead of running anything.
    print_case: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        cases: 10_000,
        first_seed: 1,
        jobs: 2,
        timeout: Duration::from_secs(10),
        out: PathBuf::from("fuzz-out"),
        verbose: false,
        print_case: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        let num = |v: String| v.parse::<u64>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--cases" => a.cases = num(value()?)?,
            "--first-seed" => a.first_seed = num(value()?)?,
            "--jobs" => a.jobs = num(value()?)?.max(1),
            "--timeout-s" => a.timeout = Duration::from_secs(num(value()?)?),
            "--out" => a.out = PathBuf::from(value()?),
            "--verbose" => a.verbose = true,
            "--print-case" => a.print_case = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(a)
}

/// What a worker is doing: the seed of its case (0 = idle) and when it
/// started, in ms since the campaign began.
struct Slot {
    seed: AtomicU64,
    since_ms: AtomicU64,
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let seeds: Vec<String> = seed_files(&root)
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect();
    if args.print_case {
        print!("{}", case_text(&seeds, args.first_seed));
        return;
    }
    std::fs::create_dir_all(&args.out).expect("the output directory");
    silence_panics();

    let seeds = Arc::new(seeds);
    let next = Arc::new(AtomicU64::new(args.first_seed));
    let end = args.first_seed + args.cases;
    let start = Instant::now();
    let stats: Arc<Mutex<BTreeMap<String, u64>>> = Arc::default();
    let slots: Arc<Vec<Slot>> = Arc::new(
        (0..args.jobs)
            .map(|_| Slot {
                seed: AtomicU64::new(0),
                since_ms: AtomicU64::new(0),
            })
            .collect(),
    );
    let workers: Vec<_> = (0..args.jobs as usize)
        .map(|w| {
            let verbose = args.verbose;
            let (seeds, next, stats, slots, out) = (
                seeds.clone(),
                next.clone(),
                stats.clone(),
                slots.clone(),
                args.out.clone(),
            );
            std::thread::spawn(move || loop {
                let seed = next.fetch_add(1, Ordering::SeqCst);
                if seed >= end {
                    slots[w].seed.store(0, Ordering::SeqCst);
                    return;
                }
                let text = case_text(&seeds, seed);
                slots[w]
                    .since_ms
                    .store(start.elapsed().as_millis() as u64, Ordering::SeqCst);
                slots[w].seed.store(seed, Ordering::SeqCst);
                let outcome = run_case(&text);
                slots[w].seed.store(0, Ordering::SeqCst);
                let key = match &outcome {
                    Outcome::Accepted(s) => format!("accepted through {s:?}"),
                    Outcome::Rejected { stage, message } => {
                        if verbose && *stage != Stage::Load {
                            eprintln!("rejected (seed {seed}, {stage:?}): {message}");
                        }
                        format!("rejected by {stage:?}")
                    }
                    Outcome::Bug { stage, message } => {
                        eprintln!("bug (seed {seed}, {stage:?}): {message}");
                        let _ = std::fs::write(out.join(format!("bug-{seed}.mlir")), &text);
                        let _ = std::fs::write(
                            out.join(format!("bug-{seed}.txt")),
                            format!("{stage:?}: {message}\n"),
                        );
                        format!("BUG in {stage:?}")
                    }
                };
                *stats.lock().unwrap().entry(key).or_default() += 1;
            })
        })
        .collect();

    // The watchdog: a case over the time limit is a hang.
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let now = start.elapsed().as_millis() as u64;
        for slot in slots.iter() {
            let seed = slot.seed.load(Ordering::SeqCst);
            let since = slot.since_ms.load(Ordering::SeqCst);
            if seed != 0 && now.saturating_sub(since) > args.timeout.as_millis() as u64 {
                let text = case_text(&seeds, seed);
                let _ = std::fs::write(args.out.join(format!("hang-{seed}.mlir")), text);
                eprintln!(
                    "hang: case {seed} ran over {} s (written to {})",
                    args.timeout.as_secs(),
                    args.out.display()
                );
                report(&stats.lock().unwrap(), start.elapsed());
                std::process::exit(2);
            }
        }
        if workers.iter().all(|w| w.is_finished()) {
            break;
        }
    }
    for w in workers {
        w.join().expect("a worker thread");
    }
    let stats = stats.lock().unwrap();
    report(&stats, start.elapsed());
    if stats.keys().any(|k| k.starts_with("BUG")) {
        std::process::exit(1);
    }
}

fn report(stats: &BTreeMap<String, u64>, took: Duration) {
    let total: u64 = stats.values().sum();
    println!(
        "{total} cases in {:.1} s ({:.0} cases/s)",
        took.as_secs_f64(),
        total as f64 / took.as_secs_f64().max(1e-9)
    );
    for (k, n) in stats {
        println!("  {k}: {n}");
    }
}
