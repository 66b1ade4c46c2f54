//! Shardy's lit tests, run from their own `.mlir` files with their own
//! CHECK lines.
//!
//! The files are vendored in `fixtures/shardy_lit/` (see its README.md and
//! REVISION). Each file's RUN line names a Shardy pass; it maps to a
//! meshrun command (`pass_mode`), or to "n/a" with the reason where meshrun
//! has no such pass. A file run with `-split-input-file` is cut at
//! `// -----` into cases; meshrun runs on each case, and its output is
//! checked with the case's CHECK lines by a FileCheck (`shardy_lit/
//! filecheck.rs`). Outcomes are per function: the CHECK lines from one
//! `CHECK-LABEL` to the next, as FileCheck checks them.
//!
//! Outcomes: `match`, `mismatch L<n>` (the first CHECK line, by its line in
//! the file, that failed), `error` (meshrun rejected the input), `n/a` (no
//! meshrun equivalent, or nothing checked), `explained (...)` (a mismatch
//! or error listed with its reason in `fixtures/shardy_lit/explained.txt`).
//!
//! The test asserts that the outcomes equal `fixtures/shardy_lit/
//! expected.txt` exactly: a function that starts matching and one that
//! stops both show as a diff.
//!
//! * `MESHRUN_BLESS=1 cargo test --release --test shardy_lit` rewrites
//!   expected.txt.
//! * `MESHRUN_SHARDY_REPO=/path/to/shardy` reads the lit files from a
//!   Shardy checkout or bare git mirror (its `HEAD`) instead of the vendored
//!   copies, and prints the summary and the differences from expected.txt
//!   without asserting.
//!
//! Every function's outcome with its detail (the failing CHECK line and
//! what meshrun printed near it, meshrun's error) is written to
//! `$CARGO_TARGET_TMPDIR/shardy_lit_report.txt`.

mod shardy_lit {
    pub mod filecheck;
    pub mod regex;
}

use shardy_lit::filecheck::{self, Directive, Kind, Options};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PROPAGATION_DIR: &str = "shardy/dialect/sdy/transforms/propagation/test/";
const RESHARD_FILE: &str = "shardy/dialect/sdy/transforms/export/test/reshard_to_collectives.mlir";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/shardy_lit")
}

// ------------------------------------------------------------------ files

/// (file name, text) of every lit file, from the vendored copies or a
/// Shardy repository.
fn lit_files(repo: Option<&Path>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    match repo {
        None => {
            for sub in ["propagation", "export"] {
                let dir = fixtures().join(sub);
                let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
                    .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                    .map(|e| e.unwrap().path())
                    .filter(|p| p.extension().is_some_and(|e| e == "mlir"))
                    .collect();
                names.sort();
                for p in names {
                    let name = p.file_name().unwrap().to_string_lossy().into_owned();
                    out.push((name, std::fs::read_to_string(&p).unwrap()));
                }
            }
        }
        Some(repo) if repo.join(PROPAGATION_DIR).is_dir() => {
            let mut paths: Vec<PathBuf> = std::fs::read_dir(repo.join(PROPAGATION_DIR))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "mlir"))
                .collect();
            paths.sort();
            paths.push(repo.join(RESHARD_FILE));
            for p in paths {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                let text =
                    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                out.push((name, text));
            }
        }
        Some(repo) => {
            // A bare mirror: its HEAD.
            let git = |args: &[&str]| {
                let o = Command::new("git")
                    .arg("-C")
                    .arg(repo)
                    .args(args)
                    .output()
                    .expect("git runs");
                assert!(
                    o.status.success(),
                    "git {args:?}: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
                String::from_utf8(o.stdout).unwrap()
            };
            let list = git(&["ls-tree", "-r", "--name-only", "HEAD", PROPAGATION_DIR]);
            let mut paths: Vec<&str> = list
                .lines()
                .filter(|p| p.ends_with(".mlir") && !p[PROPAGATION_DIR.len()..].contains('/'))
                .collect();
            paths.sort();
            paths.push(RESHARD_FILE);
            for p in paths {
                let name = p.rsplit('/').next().unwrap().to_string();
                out.push((name, git(&["show", &format!("HEAD:{p}")])));
            }
        }
    }
    out
}

// ------------------------------------------------------------------ RUN lines

/// What a RUN line's pass is in meshrun.
#[derive(Clone, Debug)]
enum Mode {
    /// `meshrun propagate` with these options.
    Propagate(Vec<&'static str>),
    /// `meshrun partition --no-propagate`, per function, its lowered
    /// reshards (`sdy-reshard-to-collectives`).
    Reshard,
    NotApplicable(String),
}

/// (pass flag as in the RUN line, meshrun mode): the first that the RUN
/// line holds wins.
fn pass_mode(sdy_opt: &str) -> Mode {
    let table: &[(&str, Option<&[&'static str]>, &str)] = &[
        (
            "-sdy-populate-op-sharding-rules",
            None,
            "checks the #sdy.op_sharding_rule attached to each op (Shardy-internal pass); \
             meshrun prints no rules, they are tested in compiler/tests/rules_*.rs",
        ),
        (
            "dedup-functions-fully=true",
            None,
            "option dedup-functions-fully of the pipeline: meshrun has no function \
             deduplication option",
        ),
        (
            "-sdy-propagation-pipeline",
            Some(&["--strategy", "full"]),
            "",
        ),
        (
            "-sdy-aggressive-propagate",
            Some(&["--strategy", "aggressive", "--keep-open"]),
            "",
        ),
        (
            "-sdy-op-priority-propagate",
            Some(&["--strategy", "op-priority", "--keep-open"]),
            "",
        ),
        (
            "-sdy-user-priority-propagate",
            Some(&["--strategy", "user-priority", "--keep-open"]),
            "",
        ),
        (
            "-sdy-basic-propagate",
            Some(&["--strategy", "basic", "--keep-open"]),
            "",
        ),
    ];
    for (flag, opts, reason) in table {
        if sdy_opt.contains(flag) {
            return match opts {
                None => Mode::NotApplicable(reason.to_string()),
                Some(o) => {
                    let mut o = o.to_vec();
                    if sdy_opt.contains("conservative-propagation=true") {
                        o.push("--conservative");
                    }
                    Mode::Propagate(o)
                }
            };
        }
    }
    if sdy_opt.contains("-sdy-reshard-to-collectives") {
        return Mode::Reshard;
    }
    Mode::NotApplicable(format!(
        "no meshrun equivalent for the RUN line `{}`",
        sdy_opt.trim()
    ))
}

/// One RUN line: the pass, split or not, FileCheck's options.
#[derive(Clone, Debug)]
struct Run {
    mode: Mode,
    split: bool,
    verify_diagnostics: bool,
    check: Options,
}

fn run_lines(text: &str) -> Vec<Run> {
    // `RUN:` lines; a trailing `\` continues onto the next one.
    let mut commands = Vec::new();
    let mut cur = String::new();
    for line in text.lines() {
        let Some((_, rest)) = line.split_once("RUN:") else {
            continue;
        };
        let rest = rest.trim();
        match rest.strip_suffix('\\') {
            Some(r) => cur.push_str(r),
            None => {
                cur.push_str(rest);
                commands.push(std::mem::take(&mut cur));
            }
        }
    }
    commands
        .into_iter()
        .map(|cmd| {
            let (sdy_opt, filecheck) = cmd.split_once('|').unwrap_or((&cmd, ""));
            let mut check = Options::default();
            let mut unsupported = Vec::new();
            let words: Vec<&str> = filecheck.split_whitespace().collect();
            let mut prefixes = Vec::new();
            let mut k = 0;
            while k < words.len() {
                let w = words[k].trim_start_matches('-');
                if let Some(v) = w
                    .strip_prefix("check-prefix=")
                    .or(w.strip_prefix("check-prefixes="))
                {
                    prefixes.extend(v.split(',').map(str::to_string));
                } else if w == "check-prefix" || w == "check-prefixes" {
                    k += 1;
                    prefixes.extend(words.get(k).unwrap_or(&"").split(',').map(str::to_string));
                } else if w == "strict-whitespace" {
                    check.strict_whitespace = true;
                } else if words[k].starts_with('-') {
                    unsupported.push(words[k]);
                }
                k += 1;
            }
            if !prefixes.is_empty() {
                check.prefixes = prefixes;
            }
            let mode = if !unsupported.is_empty() {
                Mode::NotApplicable(format!("FileCheck options not supported: {unsupported:?}"))
            } else {
                pass_mode(sdy_opt)
            };
            Run {
                mode,
                split: sdy_opt.contains("-split-input-file"),
                verify_diagnostics: sdy_opt.contains("-verify-diagnostics"),
                check,
            }
        })
        .collect()
}

// ------------------------------------------------------------------ cases

/// A piece of a file: its text and the file line its first line is.
struct Case {
    text: String,
    first_line: usize,
}

fn split_cases(text: &str, split: bool) -> Vec<Case> {
    if !split {
        return vec![Case {
            text: text.to_string(),
            first_line: 1,
        }];
    }
    let mut cases = Vec::new();
    let mut cur = String::new();
    let mut first = 1;
    for (n, line) in text.lines().enumerate() {
        if line.starts_with("// -----") {
            cases.push(Case {
                text: std::mem::take(&mut cur),
                first_line: first,
            });
            first = n + 2;
        } else {
            cur.push_str(line);
            cur.push('\n');
        }
    }
    cases.push(Case {
        text: cur,
        first_line: first,
    });
    cases
}

/// The code of a line: before any `//` comment.
fn code(line: &str) -> &str {
    line.split_once("//").map_or(line, |(c, _)| c)
}

/// Names of the functions the case defines.
fn func_names(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let c = code(l);
            let at = c.find("func.func")?;
            let rest = &c[at..];
            let name = rest[rest.find('@')? + 1..]
                .split(|ch: char| !(ch.is_alphanumeric() || "_.$-".contains(ch)))
                .next()?;
            Some(name.to_string())
        })
        .collect()
}

/// The function a label names: its first `@name`, else the label's text.
fn label_name(d: &Directive) -> String {
    match d.pattern.find('@') {
        Some(at) => d.pattern[at + 1..]
            .split(|ch: char| !(ch.is_alphanumeric() || "_.$-".contains(ch)))
            .next()
            .unwrap_or("")
            .to_string(),
        None => d.pattern.clone(),
    }
}

/// Ops that only Shardy's add-data-flow-edges pass makes.
fn internal_op(text: &str) -> Option<&'static str> {
    for line in text.lines() {
        let c = code(line);
        for op in ["sdy.func_data_flow_edge", "sdy.data_flow_edge"] {
            if c.contains(op) {
                return Some(op);
            }
        }
    }
    None
}

// ------------------------------------------------------------------ meshrun

/// Run meshrun on `input` (written to `dir/name`); Ok(stdout) or Err(its
/// message, the file's path as `CASE`).
fn meshrun(args: &[&str], input: &str, dir: &Path, name: &str) -> Result<String, String> {
    let path = dir.join(name);
    std::fs::write(&path, input).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_meshrun"))
        .args(args)
        .arg(&path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("meshrun starts");
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(30) {
            child.kill().ok();
            child.wait().ok();
            return Err("timeout after 30 s".to_string());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let out = child.wait_with_output().unwrap();
    let path_text = path.to_string_lossy().into_owned();
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        let msg = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("(no message)");
        Err(msg.replace(&path_text, "CASE"))
    }
}

/// Top-level pieces of a module: the lines outside functions (meshes),
/// and each `func.func` with its CHECK lines before it.
fn split_module_functions(text: &str) -> (String, Vec<(String, String)>) {
    let mut preamble = String::new();
    let mut funcs: Vec<(String, String)> = Vec::new();
    let mut cur: Option<(String, String)> = None;
    let mut depth: i64 = 0;
    let mut opened = false;
    for line in text.lines() {
        let c = code(line);
        if cur.is_none() && c.trim_start().starts_with("func.func") {
            let name = func_names(line).pop().unwrap_or_default();
            cur = Some((name, String::new()));
            depth = 0;
            opened = false;
        }
        match cur.as_mut() {
            Some((_, body)) => {
                body.push_str(line);
                body.push('\n');
                // The body's `{` is the last of a line that leaves the
                // depth above zero (attribute braces close on their line).
                depth += c.matches('{').count() as i64 - c.matches('}').count() as i64;
                opened |= depth > 0;
                if opened && depth <= 0 {
                    funcs.push(cur.take().unwrap());
                }
            }
            None => {
                if !c.trim().is_empty() {
                    // Meshes and other top-level code (not comments).
                    preamble.push_str(line);
                    preamble.push('\n');
                }
            }
        }
    }
    (preamble, funcs)
}

/// Whether `text` names `@name` (not a longer name).
fn names_symbol(text: &str, name: &str) -> bool {
    let at = format!("@{name}");
    text.match_indices(&at).any(|(i, _)| {
        !text[i + at.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || "_.$-".contains(c))
    })
}

/// `meshrun partition --no-propagate` on each function alone, with the
/// meshes it names (meshrun partitions one entry function, over one device
/// set): per function, the text after its `// reshards lowered to
/// collectives` line, with meshrun's end-of-line `// why` comments cut, or
/// meshrun's error.
fn reshard_outputs(text: &str, dir: &Path, tag: &str) -> Vec<(String, Result<String, String>)> {
    let (preamble, funcs) = split_module_functions(text);
    let mut out = Vec::new();
    for (k, (name, body)) in funcs.iter().enumerate() {
        let meshes: String = preamble
            .lines()
            .filter(|l| {
                let mesh = l
                    .trim_start()
                    .strip_prefix("sdy.mesh @")
                    .and_then(|r| r.split([' ', '=']).next());
                mesh.is_none_or(|m| names_symbol(body, m))
            })
            .map(|l| format!("{l}\n"))
            .collect();
        let input = format!("{meshes}\n{body}");
        let result = meshrun(
            &["partition", "--no-propagate"],
            &input,
            dir,
            &format!("{tag}_{k}.mlir"),
        )
        .and_then(|o| {
            let at = o
                .find("// reshards lowered to collectives")
                .ok_or("no lowered section in meshrun's output")?;
            let mut section = String::new();
            for line in o[at..].lines().skip(1) {
                let line = line.find("    // ").map_or(line, |p| &line[..p]);
                section.push_str(line);
                section.push('\n');
            }
            Ok(section)
        });
        out.push((name.clone(), result));
    }
    out
}

/// The directives cut at each label: (the label's function, directives).
fn label_blocks(directives: &[Directive]) -> Vec<(String, Vec<Directive>)> {
    let mut blocks: Vec<(String, Vec<Directive>)> = Vec::new();
    for d in directives {
        if d.kind == Kind::Label || blocks.is_empty() {
            let name = if d.kind == Kind::Label {
                label_name(d)
            } else {
                "(preamble)".to_string()
            };
            blocks.push((name, Vec::new()));
        }
        blocks.last_mut().unwrap().1.push(d.clone());
    }
    blocks
}

// ------------------------------------------------------------------ outcomes

#[derive(Clone, Debug)]
struct Outcome {
    /// `file.mlir:case @func`.
    key: String,
    file: String,
    func: String,
    /// match, mismatch L<n>, error, n/a, explained (...).
    status: String,
    detail: String,
}

fn kind_of(status: &str) -> &'static str {
    if status.starts_with("explained") {
        "explained"
    } else if status.starts_with("mismatch") {
        "mismatch"
    } else if status == "match" {
        "match"
    } else if status == "error" {
        "error"
    } else {
        "n/a"
    }
}

struct Job {
    file: String,
    index: usize,
    run: Run,
    case: Case,
}

fn run_job(job: &Job, dir: &Path) -> Vec<(String, String, String)> {
    let (file, case) = (&job.file, &job.case);
    let directives = filecheck::parse_checks(&case.text, &job.run.check, case.first_line);
    let labels: Vec<String> = directives
        .iter()
        .filter(|d| d.kind == Kind::Label)
        .map(label_name)
        .collect();
    // The functions to report when the case's outcome is one for all.
    let names = if labels.is_empty() {
        let f = func_names(&case.text);
        if f.is_empty() {
            vec!["(no function)".to_string()]
        } else {
            f
        }
    } else {
        let mut n = labels.clone();
        if directives.first().is_some_and(|d| d.kind != Kind::Label) {
            n.insert(0, "(preamble)".to_string());
        }
        n
    };
    let all = |status: &str, detail: &str| -> Vec<(String, String, String)> {
        names
            .iter()
            .map(|n| (n.clone(), status.to_string(), detail.to_string()))
            .collect()
    };
    let opts = match &job.run.mode {
        Mode::NotApplicable(reason) => return all("n/a", reason),
        Mode::Propagate(o) => Some(o),
        Mode::Reshard => None,
    };
    if let Some(op) = internal_op(&case.text) {
        return all(
            "n/a",
            &format!(
                "the input holds {op}, an op Shardy's add-data-flow-edges pass makes; meshrun \
                 keeps data-flow edges internal (the pipeline files run the same programs)"
            ),
        );
    }
    let tag = format!("{}_{}", file.trim_end_matches(".mlir"), job.index);
    let wants_error =
        job.run.verify_diagnostics && case.text.lines().any(|l| l.contains("expected-error"));
    let output = match opts {
        Some(o) => match meshrun(
            &[&["propagate"][..], &o[..]].concat(),
            &case.text,
            dir,
            &format!("{tag}.mlir"),
        ) {
            Ok(_) if wants_error => {
                return all(
                    "mismatch",
                    "Shardy rejects it (expected-error), meshrun accepts it",
                )
            }
            Ok(out) => out,
            Err(_) if wants_error => return all("match", "both reject it (expected-error)"),
            Err(e) => return all("error", &e),
        },
        None => {
            // Each function checked against its own output.
            if directives.is_empty() {
                return all("n/a", "no CHECK lines");
            }
            let outputs = reshard_outputs(&case.text, dir, &tag);
            return label_blocks(&directives)
                .into_iter()
                .map(
                    |(name, ds)| match outputs.iter().find(|(n, _)| *n == name) {
                        Some((_, Err(e))) => (name, "error".to_string(), e.clone()),
                        found => {
                            let text = found.and_then(|(_, o)| o.as_ref().ok());
                            let block = filecheck::check(
                                text.map_or("", String::as_str),
                                &ds,
                                &job.run.check,
                            );
                            block_outcome(name, &block[0])
                        }
                    },
                )
                .collect();
        }
    };
    if directives.is_empty() {
        return all("n/a", "no CHECK lines");
    }
    filecheck::check(&output, &directives, &job.run.check)
        .iter()
        .map(|b| {
            let name = b
                .label
                .as_ref()
                .map_or("(preamble)".to_string(), label_name);
            block_outcome(name, b)
        })
        .collect()
}

fn block_outcome(name: String, b: &filecheck::BlockResult) -> (String, String, String) {
    match &b.failure {
        None => (
            name,
            "match".to_string(),
            format!("{} CHECK lines", b.directives.len()),
        ),
        Some(f) => (
            name,
            format!("mismatch L{}", f.directive.line),
            f.to_string(),
        ),
    }
}

/// One line of explained.txt: `file.mlir[:case] @func [Lnnn]: reason`.
struct Explanation {
    file: String,
    case: Option<usize>,
    func: String,
    /// The first failing CHECK line it explains (none: any, or an error).
    line: Option<usize>,
    reason: String,
}

impl Explanation {
    fn applies(&self, file: &str, case: usize, func: &str, status: &str) -> bool {
        self.file == file
            && self.case.is_none_or(|c| c == case)
            && self.func == func
            && match status.strip_prefix("mismatch L") {
                Some(l) => self.line.is_none_or(|n| l.parse() == Ok(n)),
                None => status == "error" && self.line.is_none(),
            }
    }

    fn head(&self) -> String {
        format!(
            "{}{} @{}{}",
            self.file,
            self.case.map(|c| format!(":{c}")).unwrap_or_default(),
            self.func,
            self.line.map(|l| format!(" L{l}")).unwrap_or_default()
        )
    }
}

fn explanations() -> Vec<Explanation> {
    let text = std::fs::read_to_string(fixtures().join("explained.txt")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (head, reason) = l
                .split_once(": ")
                .unwrap_or_else(|| panic!("explained.txt: `{l}`"));
            let words: Vec<&str> = head.split_whitespace().collect();
            if words.len() < 2 || words.len() > 3 || !words[1].starts_with('@') {
                panic!("explained.txt: `{l}`");
            }
            let (file, case) = match words[0].split_once(':') {
                Some((f, c)) => (f, Some(c.parse().expect("case number"))),
                None => (words[0], None),
            };
            let line = words.get(2).map(|w| {
                w.strip_prefix('L')
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| panic!("explained.txt: `{l}`"))
            });
            Explanation {
                file: file.to_string(),
                case,
                func: words[1][1..].to_string(),
                line,
                reason: reason.to_string(),
            }
        })
        .collect()
}

fn run_all(repo: Option<&Path>) -> Vec<Outcome> {
    let mut jobs = Vec::new();
    for (file, text) in lit_files(repo) {
        let runs = run_lines(&text);
        assert!(!runs.is_empty(), "{file}: no RUN line");
        for (r, run) in runs.iter().enumerate() {
            // A second RUN line of a file: `file.mlir#2`.
            let file = if r == 0 {
                file.clone()
            } else {
                format!("{file}#{}", r + 1)
            };
            for (index, case) in split_cases(&text, run.split).into_iter().enumerate() {
                let has_code = case.text.lines().any(|l| !code(l).trim().is_empty());
                if !has_code {
                    continue;
                }
                jobs.push(Job {
                    file: file.clone(),
                    index,
                    run: run.clone(),
                    case,
                });
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(8);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<Vec<(String, String, String)>> = {
        let slots: Vec<std::sync::Mutex<Vec<(String, String, String)>>> =
            jobs.iter().map(|_| Default::default()).collect();
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if k >= jobs.len() {
                        break;
                    }
                    *slots[k].lock().unwrap() = run_job(&jobs[k], dir.path());
                });
            }
        });
        slots.into_iter().map(|m| m.into_inner().unwrap()).collect()
    };
    let explained = explanations();
    let mut out = Vec::new();
    for (job, rows) in jobs.iter().zip(results) {
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (func, status, detail) in rows {
            let n = seen.entry(func.clone()).or_default();
            *n += 1;
            let shown = if *n > 1 {
                format!("{func}#{n}")
            } else {
                func.clone()
            };
            let mut o = Outcome {
                key: format!("{}:{} @{}", job.file, job.index, shown),
                file: job.file.clone(),
                func: func.clone(),
                status,
                detail,
            };
            let why = explained
                .iter()
                .find(|e| e.applies(&job.file, job.index, &func, &o.status));
            if let Some(e) = why {
                o.detail = format!("{}\n  {}", e.reason, o.detail);
                o.status = format!("explained ({})", o.status);
            }
            out.push(o);
        }
    }
    out
}

fn summary(outcomes: &[Outcome]) -> String {
    let cols = ["match", "mismatch", "error", "n/a", "explained"];
    let mut per_file: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    for o in outcomes {
        if !per_file.contains_key(o.file.as_str()) {
            order.push(&o.file);
        }
        let f = per_file.entry(&o.file).or_default();
        *f.entry("functions").or_default() += 1;
        *f.entry(kind_of(&o.status)).or_default() += 1;
    }
    let mut s = format!(
        "{:<54}{:>9}{:>7}{:>9}{:>7}{:>6}{:>10}\n",
        "file", "functions", "match", "mismatch", "error", "n/a", "explained"
    );
    let mut total: BTreeMap<&str, usize> = BTreeMap::new();
    let row = |name: &str, f: &BTreeMap<&str, usize>| {
        let g = |k: &str| f.get(k).copied().unwrap_or(0);
        format!(
            "{:<54}{:>9}{:>7}{:>9}{:>7}{:>6}{:>10}\n",
            name,
            g("functions"),
            g(cols[0]),
            g(cols[1]),
            g(cols[2]),
            g(cols[3]),
            g(cols[4])
        )
    };
    for name in order {
        let f = &per_file[name];
        s.push_str(&row(name, f));
        for (k, v) in f {
            *total.entry(k).or_default() += v;
        }
    }
    s.push_str(&row("total", &total));
    s
}

#[test]
fn shardy_lit_outcomes_are_the_expected_ones() {
    let started = Instant::now();
    let repo = std::env::var_os("MESHRUN_SHARDY_REPO").map(PathBuf::from);
    let outcomes = run_all(repo.as_deref());
    let listed: String = outcomes
        .iter()
        .map(|o| format!("{} {}\n", o.key, o.status))
        .collect();

    let report_path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("shardy_lit_report.txt");
    let mut report = std::fs::File::create(&report_path).unwrap();
    for o in &outcomes {
        writeln!(
            report,
            "{} {}\n  {}",
            o.key,
            o.status,
            o.detail.replace('\n', "\n  ")
        )
        .unwrap();
    }
    writeln!(report, "\n{}", summary(&outcomes)).unwrap();

    for o in outcomes
        .iter()
        .filter(|o| matches!(kind_of(&o.status), "mismatch" | "error"))
    {
        eprintln!(
            "{} {}\n  {}",
            o.key,
            o.status,
            o.detail.replace('\n', "\n  ")
        );
    }
    eprintln!("\n{}", summary(&outcomes));
    eprintln!(
        "every function's outcome and detail: {} ({:.1} s)",
        report_path.display(),
        started.elapsed().as_secs_f64()
    );

    // Explanations that no longer explain anything.
    let stale: Vec<String> = explanations()
        .iter()
        .filter(|e| {
            !outcomes.iter().any(|o| {
                o.file == e.file
                    && o.func == e.func
                    && e.case
                        .is_none_or(|c| o.key.starts_with(&format!("{}:{c} ", e.file)))
                    && o.status.starts_with("explained")
            })
        })
        .map(|e| format!("{}: {}", e.head(), e.reason))
        .collect();
    for s in &stale {
        eprintln!("stale explanation (the function matches, fails elsewhere, or is gone): {s}");
    }

    let expected_path = fixtures().join("expected.txt");
    if std::env::var_os("MESHRUN_BLESS").is_some() && repo.is_none() {
        std::fs::write(&expected_path, &listed).unwrap();
        eprintln!("wrote {}", expected_path.display());
        return;
    }
    let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
    let diff = diff_lines(&expected, &listed);
    if !diff.is_empty() {
        eprintln!(
            "differences from {} (- expected, + now):\n{diff}",
            expected_path.display()
        );
    }
    if repo.is_some() {
        return;
    }
    assert!(
        diff.is_empty() && stale.is_empty(),
        "Shardy lit outcomes differ from fixtures/shardy_lit/expected.txt (see above); \
         after checking them, `MESHRUN_BLESS=1 cargo test --release --test shardy_lit` \
         rewrites the list"
    );
}

/// The lines only in `a` (`-`) or only in `b` (`+`), keyed by everything
/// before the outcome (`file:case @func`).
fn diff_lines(a: &str, b: &str) -> String {
    let key = |l: &str| -> String {
        let mut it = l.splitn(3, ' ');
        format!("{} {}", it.next().unwrap_or(""), it.next().unwrap_or(""))
    };
    let am: BTreeMap<String, &str> = a.lines().map(|l| (key(l), l)).collect();
    let bm: BTreeMap<String, &str> = b.lines().map(|l| (key(l), l)).collect();
    let mut out = String::new();
    for (k, l) in &am {
        if bm.get(k) != Some(l) {
            out.push_str(&format!("- {l}\n"));
        }
        if let Some(n) = bm.get(k).filter(|n| *n != l) {
            out.push_str(&format!("+ {n}\n"));
        }
    }
    for (k, l) in &bm {
        if !am.contains_key(k) {
            out.push_str(&format!("+ {l}\n"));
        }
    }
    out
}

#[test]
fn run_lines_map_to_meshrun() {
    let runs = run_lines("// RUN: sdy_opt %s -split-input-file -sdy-basic-propagate=\"conservative-propagation=true\" 2>&1 | FileCheck %s --check-prefixes=A,B\n");
    assert_eq!(runs.len(), 1);
    assert!(runs[0].split);
    assert!(
        matches!(&runs[0].mode, Mode::Propagate(o) if o == &["--strategy", "basic", "--keep-open", "--conservative"])
    );
    assert_eq!(runs[0].check.prefixes, vec!["A", "B"]);
    let runs = run_lines("// RUN: sdy_opt %s -sdy-populate-op-sharding-rules | FileCheck %s\n");
    assert!(matches!(&runs[0].mode, Mode::NotApplicable(r) if r.contains("op_sharding_rule")));
    let runs = run_lines(
        "// RUN: sdy_opt %s -sdy-reshard-to-collectives | FileCheck %s --dump-input=always\n",
    );
    assert!(matches!(&runs[0].mode, Mode::NotApplicable(r) if r.contains("dump-input")));
    let runs =
        run_lines("// RUN: sdy_opt %s \\\n// RUN:   -sdy-propagation-pipeline | FileCheck %s\n");
    assert!(matches!(&runs[0].mode, Mode::Propagate(o) if o == &["--strategy", "full"]));
}

#[test]
fn cases_split_at_dashes_with_their_line_numbers() {
    let cases = split_cases("a\n// -----\nb\nc\n// -----\nd\n", true);
    let got: Vec<(&str, usize)> = cases
        .iter()
        .map(|c| (c.text.as_str(), c.first_line))
        .collect();
    assert_eq!(got, vec![("a\n", 1), ("b\nc\n", 3), ("d\n", 6)]);
}

#[test]
fn module_functions_are_split_out() {
    let (pre, funcs) = split_module_functions(
        "sdy.mesh @m = <[\"x\"=2]>\n// CHECK-LABEL: func @f\nfunc.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\nfunc.func @g() {\n  return\n}\n",
    );
    assert_eq!(pre, "sdy.mesh @m = <[\"x\"=2]>\n");
    assert!(names_symbol("<@mesh, [{}]>", "mesh"));
    assert!(!names_symbol("<@mesh2d, [{}]>", "mesh"));
    let names: Vec<&str> = funcs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, vec!["f", "g"]);
}
