//! Golden tests against JAX 0.10.2 + Shardy (see `fixtures/jax/README.md`).
//!
//! Comparisons of every function argument, result and op result
//! sharding, after normalizing notation only (a value Shardy left without
//! `sdy.sharding` is fully replicated; meshes compare by definition):
//!
//! 1. `shardy_input_gives_shardy_output`: the module exactly as Shardy
//!    received it inside XLA (`01.before_propagation.mlir` of XLA's dump,
//!    stored in `tests/propagation_data/jax_before/`) propagated with the
//!    full pipeline gives `propagated.mlir` op for op. This checks the
//!    algorithm itself, conflicts and visiting order included.
//! 2. `jax_input_gives_shardy_output`: the module JAX printed
//!    (`input.mlir`) propagated with the full pipeline. XLA rewrites the
//!    program before Shardy sees it (inlining, CSE, constant folding,
//!    `broadcast_in_dim` into `reshape`, ...), so ops are matched by
//!    structure: two values match when they come from the same op kind with
//!    the same attributes and type applied to matching operands (arguments
//!    match by position, constants by value). Values XLA rewrote have no
//!    partner and are not compared; all arguments and results are.
//! 3. `jax_region_fixtures_give_shardy_output`: the same for
//!    `fixtures/jax_regions/` (loops and conditionals whose bodies call
//!    private functions), ops paired by kind, ops inside regions included.
//! 4. `kept_calls_print_as_shardy_prints_them`: for the programs whose
//!    calls XLA keeps (`jax_extra/call_programs.py`), the printed function
//!    signatures and calls equal Shardy's text.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use meshrun_compiler::ir::ops::dot_general::DotGeneral;
use meshrun_compiler::ir::{Function, Module, OpKind, Value, ValueDef};
use meshrun_compiler::propagation::values::sharding_of;
use meshrun_compiler::propagation::{propagate, PropagationOptions};
use meshrun_compiler::sharding::{DimSharding, TensorSharding};
use meshrun_compiler::text::parse_module;

fn manifest(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn read_module(path: &Path) -> Module {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parse_module(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A sharding in a form where only meaning counts: the mesh resolved,
/// closed dimensions, no explicitly replicated axes (Shardy drops them at
/// export), a missing sharding as fully replicated.
#[derive(Debug, Clone, PartialEq)]
struct Norm {
    mesh: Option<meshrun_compiler::sharding::Mesh>,
    dims: Vec<Vec<String>>,
    unreduced: Vec<String>,
}

fn norm(module: &Module, rank: usize, s: Option<&TensorSharding>) -> Norm {
    match s {
        None => Norm {
            mesh: None,
            dims: vec![Vec::new(); rank],
            unreduced: Vec::new(),
        },
        Some(s) => Norm {
            mesh: module.resolve_mesh(&s.mesh).cloned(),
            dims: s
                .dims
                .iter()
                .map(|d: &DimSharding| d.axes.iter().map(|a| a.to_string()).collect())
                .collect(),
            unreduced: s.unreduced.iter().map(|a| a.to_string()).collect(),
        },
    }
}

fn same(a: &Norm, b: &Norm) -> bool {
    let replicated = |n: &Norm| n.dims.iter().all(Vec::is_empty) && n.unreduced.is_empty();
    if replicated(a) && replicated(b) {
        return true;
    }
    a.dims == b.dims && a.unreduced == b.unreduced && (a.mesh == b.mesh)
}

fn show(n: &Norm) -> String {
    let dims: Vec<String> = n
        .dims
        .iter()
        .map(|d| format!("{{{}}}", d.join(", ")))
        .collect();
    let mut s = format!("[{}]", dims.join(", "));
    if !n.unreduced.is_empty() {
        s.push_str(&format!(" unreduced={{{}}}", n.unreduced.join(", ")));
    }
    s
}

struct Tally {
    compared: usize,
    mismatches: Vec<String>,
}

impl Tally {
    fn check(&mut self, what: &str, ours: Norm, theirs: Norm) {
        self.compared += 1;
        if !same(&ours, &theirs) {
            self.mismatches.push(format!(
                "{what}: ours {}, Shardy's {}",
                show(&ours),
                show(&theirs)
            ));
        }
    }
}

fn main_of(m: &Module) -> &Function {
    m.entry().expect("module has an entry function")
}

fn compare_boundary(t: &mut Tally, om: &Module, gm: &Module) {
    compare_signature(t, om, gm, main_of(om), main_of(gm), "");
}

/// The argument and result shardings of `o` (in `om`) and `g` (in `gm`);
/// `prefix` names the function in messages.
fn compare_signature(
    t: &mut Tally,
    om: &Module,
    gm: &Module,
    o: &Function,
    g: &Function,
    prefix: &str,
) {
    assert_eq!(o.args.len(), g.args.len(), "{prefix}argument count");
    for (i, (&a, &b)) in o.args.iter().zip(&g.args).enumerate() {
        let rank = o.ty(a).rank();
        t.check(
            &format!("{prefix}%arg{i}"),
            norm(om, rank, o.arg_attrs[i].sharding.as_ref()),
            norm(gm, g.ty(b).rank(), g.arg_attrs[i].sharding.as_ref()),
        );
    }
    for i in 0..o.returns.len().min(g.returns.len()) {
        let rank = o.result_types[i].rank();
        t.check(
            &format!("{prefix}result {i}"),
            norm(om, rank, o.result_attrs[i].sharding.as_ref()),
            norm(gm, rank, g.result_attrs[i].sharding.as_ref()),
        );
    }
}

fn fixture_names() -> Vec<String> {
    fixture_dirs("../fixtures/jax")
}

/// The fixtures (directories with a `propagated.mlir`) under `rel`.
fn fixture_dirs(rel: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(manifest(rel)) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("propagated.mlir").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A JAX fixture's `input.mlir` through meshrun's propagation (calls
/// inlined), its `propagated.mlir` (Shardy's), and their arguments and
/// results compared.
fn fixture_propagated(dir: &Path) -> Result<(Module, Module, Tally), String> {
    let input = read_module(&dir.join("input.mlir"));
    let golden = read_module(&dir.join("propagated.mlir"));
    let ours = propagated_inlined(&input)?;
    let mut t = Tally {
        compared: 0,
        mismatches: Vec::new(),
    };
    compare_boundary(&mut t, &ours, &golden);
    Ok((ours, golden, t))
}

/// JAX's `input` through meshrun's propagation, calls inlined: propagation
/// keeps calls (as Shardy's own pipeline does) but XLA inlined them before
/// Shardy ran. Inlined, every op keeps the sharding propagation gave it,
/// so the two compare op by op.
fn propagated_inlined(input: &Module) -> Result<Module, String> {
    let mut ours = propagate(input, &PropagationOptions::default()).map_err(|e| format!("{e}"))?;
    meshrun_compiler::ir::inline::inline_calls(&mut ours).map_err(|e| format!("{e}"))?;
    Ok(ours)
}

// ---------------------------------------------------------------------------
// 1. Shardy's own input, op for op.
// ---------------------------------------------------------------------------

/// Every function of the modules, in module order (Shardy keeps calls
/// whose callee XLA did not inline: the functions, their signature
/// shardings and the ops in them all count).
fn compare_op_for_op(input: &Path, golden: &Path) -> Result<Tally, String> {
    let input = read_module(input);
    let golden = read_module(golden);
    let ours = propagate(&input, &PropagationOptions::default()).map_err(|e| format!("{e}"))?;
    let mut t = Tally {
        compared: 0,
        mismatches: Vec::new(),
    };
    let names = |m: &Module| m.funcs.iter().map(|f| f.name.clone()).collect::<Vec<_>>();
    if names(&ours) != names(&golden) {
        return Err(format!(
            "functions {:?}, Shardy has {:?}",
            names(&ours),
            names(&golden)
        ));
    }
    for (o, g) in ours.funcs.iter().zip(&golden.funcs) {
        let prefix = if ours.funcs.len() == 1 {
            String::new()
        } else {
            format!("@{}: ", o.name)
        };
        compare_signature(&mut t, &ours, &golden, o, g, &prefix);
        compare_ops(&mut t, &ours, &golden, o, g, &prefix)?;
    }
    Ok(t)
}

/// The result shardings of every op of `o` and `g`, ops inside regions
/// (loop bodies, branches) too.
fn compare_ops(
    t: &mut Tally,
    ours: &Module,
    golden: &Module,
    o: &Function,
    g: &Function,
    prefix: &str,
) -> Result<(), String> {
    // XLA dumps Shardy's module after propagation, before the partitioner
    // step that writes the explicit all-reduces of unreduced values (our
    // `export::insert_all_reduces`): those are not compared.
    let oo: Vec<_> = o
        .all_ops()
        .into_iter()
        .filter(|&id| !matches!(o.op(id).kind, OpKind::SdyAllReduce(_)))
        .collect();
    let go = g.all_ops();
    if oo.len() != go.len() {
        return Err(format!("{prefix}{} ops, Shardy has {}", oo.len(), go.len()));
    }
    for (k, (&a, &b)) in oo.iter().zip(&go).enumerate() {
        let (x, y) = (o.op(a), g.op(b));
        let callee = |k: &OpKind| k.callee().map(str::to_string);
        if x.kind.name() != y.kind.name()
            || x.results.len() != y.results.len()
            || callee(&x.kind) != callee(&y.kind)
        {
            return Err(format!(
                "{prefix}op {k}: ours {} {:?}, Shardy's {} {:?}",
                x.kind.name(),
                callee(&x.kind),
                y.kind.name(),
                callee(&y.kind)
            ));
        }
        for (r, (&va, &vb)) in x.results.iter().zip(&y.results).enumerate() {
            let rank = o.ty(va).rank();
            t.check(
                &format!("{prefix}op {k} ({}) result {r}", x.kind.name()),
                norm(ours, rank, sharding_of(o, va)),
                norm(golden, rank, sharding_of(g, vb)),
            );
        }
    }
    Ok(())
}

/// Fixtures whose propagation cannot match Shardy's, and why. Keep short.
const OP_FOR_OP_ALLOWED: &[(&str, &str)] = &[];

/// Every (Shardy input, Shardy output) pair: the fixtures' (input from
/// `tests/propagation_data/jax_before/`, output `propagated.mlir`), and the
/// extra programs of `tests/propagation_data/jax_extra/` (made by
/// `extra_programs.py` there), which stress conflicts and visiting order.
fn op_for_op_pairs() -> Vec<(String, PathBuf, PathBuf)> {
    let mut pairs = Vec::new();
    for name in fixture_names() {
        let before = manifest(&format!("tests/propagation_data/jax_before/{name}.mlir"));
        if before.is_file() {
            let after = manifest(&format!("../fixtures/jax/{name}/propagated.mlir"));
            pairs.push((name, before, after));
        }
    }
    let extra = manifest("tests/propagation_data/jax_extra");
    let mut names: Vec<String> = std::fs::read_dir(&extra)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    n.strip_suffix(".before.mlir").map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    for name in names {
        let before = extra.join(format!("{name}.before.mlir"));
        let after = extra.join(format!("{name}.after.mlir"));
        pairs.push((format!("extra/{name}"), before, after));
    }
    pairs
}

#[test]
fn shardy_input_gives_shardy_output() {
    let pairs = op_for_op_pairs();
    let mut passed = 0;
    let mut failures = Vec::new();
    let mut compared = 0;
    for (name, before, after) in &pairs {
        match compare_op_for_op(before, after) {
            Ok(t) if t.mismatches.is_empty() => {
                passed += 1;
                compared += t.compared;
            }
            Ok(t) => failures.push(format!("{name}:\n    {}", t.mismatches.join("\n    "))),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    eprintln!(
        "op for op: {passed}/{} programs match Shardy ({compared} shardings compared)",
        pairs.len()
    );
    let unexpected: Vec<&String> = failures
        .iter()
        .filter(|f| {
            !OP_FOR_OP_ALLOWED
                .iter()
                .any(|(n, _)| f.starts_with(&format!("{n}:")))
        })
        .collect();
    assert!(
        unexpected.is_empty(),
        "mismatches:\n{}",
        unexpected
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

// ---------------------------------------------------------------------------
// 2. JAX's input, matched by structure.
// ---------------------------------------------------------------------------

/// Structural identity of values, shared by both modules.
#[derive(Default)]
struct Interner {
    ids: HashMap<String, usize>,
}

impl Interner {
    fn id(&mut self, key: String) -> usize {
        let n = self.ids.len();
        *self.ids.entry(key).or_insert(n)
    }

    /// The structural id of every value of `f`.
    fn value_ids(&mut self, f: &Function) -> Vec<Option<usize>> {
        let mut ids = vec![None; f.values.len()];
        for (i, &a) in f.args.iter().enumerate() {
            ids[a.index()] = Some(self.id(format!("arg{i}")));
        }
        for (_, op) in f.ops_in_order() {
            let operands: Option<Vec<usize>> = op.operands.iter().map(|v| ids[v.index()]).collect();
            let Some(operands) = operands else {
                continue;
            };
            let kind = match &op.kind {
                OpKind::DotGeneral(DotGeneral { dims, .. }) => format!("dot{dims:?}"),
                k => format!("{k:?}"),
            };
            for (k, &r) in op.results.iter().enumerate() {
                let key = format!("{kind}{operands:?}#{k}:{}", f.ty(r));
                ids[r.index()] = Some(self.id(key));
            }
        }
        ids
    }
}

fn compare_structurally(name: &str) -> Result<Tally, String> {
    let (ours, golden, mut t) = fixture_propagated(&manifest(&format!("../fixtures/jax/{name}")))?;
    let (o, g) = (main_of(&ours), main_of(&golden));
    let mut interner = Interner::default();
    let (oi, gi) = (interner.value_ids(o), interner.value_ids(g));
    // Values of each structure, in program order, paired up in order.
    let mut by_id: HashMap<usize, (Vec<Value>, Vec<Value>)> = HashMap::new();
    for (v, id) in oi.iter().enumerate() {
        if let (Some(id), ValueDef::Result { .. }) = (id, o.values[v].def) {
            by_id.entry(*id).or_default().0.push(Value(v as u32));
        }
    }
    for (v, id) in gi.iter().enumerate() {
        if let (Some(id), ValueDef::Result { .. }) = (id, g.values[v].def) {
            by_id.entry(*id).or_default().1.push(Value(v as u32));
        }
    }
    let mut pairs: Vec<(Value, Value)> = by_id
        .values()
        .flat_map(|(a, b)| a.iter().copied().zip(b.iter().copied()))
        .collect();
    pairs.sort();
    for (a, b) in pairs {
        let rank = o.ty(a).rank();
        let ValueDef::Result { op, .. } = o.values[a.index()].def else {
            continue;
        };
        t.check(
            &format!("{} (our value #{})", o.op(op).kind.name(), a.0),
            norm(&ours, rank, sharding_of(o, a)),
            norm(&golden, rank, sharding_of(g, b)),
        );
    }
    Ok(t)
}

/// Fixtures whose JAX input cannot match, and why. Keep short.
const STRUCTURAL_ALLOWED: &[(&str, &str)] = &[(
    "two_meshes",
    // XLA, not Shardy: converting the module to HLO shardings and back
    // rewrites every sharding on the second mesh (@mesh_0, a=2 b=4) into
    // sub-axes of the first over the same devices ("a" -> "data":(1)2,
    // "b" -> "data":(2)2, "model") before Shardy runs. meshrun keeps both
    // meshes (SPEC §1: a value used across meshes is resharded). The
    // op-for-op test, which starts from XLA's rewritten module, matches.
    "XLA rewrites the second mesh into sub-axes of the first",
)];

#[test]
fn jax_input_gives_shardy_output() {
    let names = fixture_names();
    let mut passed = 0;
    let mut compared = 0;
    let mut failures = Vec::new();
    for name in &names {
        match compare_structurally(name) {
            Ok(t) if t.mismatches.is_empty() => {
                passed += 1;
                compared += t.compared;
            }
            Ok(t) => failures.push(format!("{name}:\n    {}", t.mismatches.join("\n    "))),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    eprintln!(
        "structural: {passed}/{} fixtures match Shardy ({compared} shardings compared)",
        names.len()
    );
    let unexpected: Vec<&String> = failures
        .iter()
        .filter(|f| {
            !STRUCTURAL_ALLOWED
                .iter()
                .any(|(n, _)| f.starts_with(&format!("{n}:")))
        })
        .collect();
    assert!(
        unexpected.is_empty(),
        "mismatches:\n{}",
        unexpected
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

// ---------------------------------------------------------------------------
// 3. JAX's loops and conditionals (`fixtures/jax_regions/`), by kind.
// ---------------------------------------------------------------------------

/// Ops that XLA adds, removes or rewrites around Shardy (constants split
/// and merged, loop-invariant operands hoisted out of loops, open
/// constraints turned into reshards): not paired.
fn rewritten_by_xla(name: &str) -> bool {
    matches!(
        name,
        "stablehlo.constant"
            | "sdy.constant"
            | "stablehlo.while"
            | "stablehlo.case"
            | "func.call"
            | "sdy.reshard"
            | "sdy.sharding_constraint"
            | "stablehlo.optimization_barrier"
    )
}

/// The ops of `f` (regions too) that XLA leaves alone, by kind and result
/// types, in program order.
fn ops_by_kind(f: &Function) -> HashMap<String, Vec<meshrun_compiler::ir::OpId>> {
    let mut out: HashMap<String, Vec<_>> = HashMap::new();
    for id in f.all_ops() {
        let op = f.op(id);
        // XLA prints a plain matmul as `stablehlo.dot`.
        let mut name = op.kind.name();
        if name == "stablehlo.dot" {
            name = "stablehlo.dot_general".to_string();
        }
        // Scalars cannot be sharded, and XLA folds many of them.
        if rewritten_by_xla(&name) || op.results.iter().all(|&r| f.ty(r).rank() == 0) {
            continue;
        }
        let types: Vec<String> = op.results.iter().map(|&r| f.ty(r).to_string()).collect();
        out.entry(format!("{name} {types:?}")).or_default().push(id);
    }
    out
}

/// A region fixture's JAX input (its loop bodies call private functions)
/// through meshrun's propagation, calls inlined, against Shardy's
/// propagation of XLA's rewrite of it (calls inlined, a loop-invariant
/// operand hoisted out of the loop, so the loops' operands differ): ops
/// are paired by kind and result types in program order. A kind only one
/// side has is XLA's folding (a scalar broadcast folded into a constant);
/// a kind both have must occur as often in both.
fn compare_region_fixture(name: &str) -> Result<Tally, String> {
    let (ours, golden, mut t) =
        fixture_propagated(&manifest(&format!("../fixtures/jax_regions/{name}")))?;
    if BOUNDARY_ONLY.contains(&name) {
        return Ok(t);
    }
    let (o, g) = (main_of(&ours), main_of(&golden));
    let (ok, gk) = (ops_by_kind(o), ops_by_kind(g));
    let mut kinds: Vec<&String> = ok.keys().chain(gk.keys()).collect();
    kinds.sort();
    kinds.dedup();
    for kind in kinds {
        let (a, b) = (
            ok.get(kind).map_or(&[][..], Vec::as_slice),
            gk.get(kind).map_or(&[][..], Vec::as_slice),
        );
        if a.is_empty() || b.is_empty() {
            continue;
        }
        if a.len() != b.len() {
            return Err(format!("{kind}: {} ops, Shardy has {}", a.len(), b.len()));
        }
        for (k, (&x, &y)) in a.iter().zip(b).enumerate() {
            for (r, (&va, &vb)) in o.op(x).results.iter().zip(&g.op(y).results).enumerate() {
                let rank = o.ty(va).rank();
                t.check(
                    &format!("{kind} #{k} result {r}"),
                    norm(&ours, rank, sharding_of(o, va)),
                    norm(&golden, rank, sharding_of(g, vb)),
                );
            }
        }
    }
    Ok(t)
}

/// Region fixtures compared at the function boundary only: in the GPT-2
/// scans XLA folds the causal mask (iota arithmetic) into a constant and
/// splits and hoists the loop's scalar broadcasts, so ops of one kind no
/// longer pair up in order. Their shardings inside are checked end to end
/// (`runtime/tests/region_fixtures.rs`: JAX's outputs, XLA's bytes).
const BOUNDARY_ONLY: &[&str] = &["gpt2_scan_forward", "gpt2_scan_train_step"];

#[test]
fn jax_region_fixtures_give_shardy_output() {
    let names = fixture_dirs("../fixtures/jax_regions");
    assert!(!names.is_empty(), "fixtures/jax_regions is missing");
    let mut failures = Vec::new();
    let mut compared = 0;
    for name in &names {
        match compare_region_fixture(name) {
            Ok(t) if t.mismatches.is_empty() => compared += t.compared,
            Ok(t) => failures.push(format!("{name}:\n    {}", t.mismatches.join("\n    "))),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    eprintln!(
        "regions: {}/{} fixtures match Shardy ({compared} shardings compared)",
        names.len() - failures.len(),
        names.len()
    );
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------
// 4. Kept calls printed as Shardy prints them.
// ---------------------------------------------------------------------------

/// `line` with every SSA value name replaced by `%_` (MLIR names a
/// `stablehlo.while`'s block arguments `%iterArg`, meshrun `%argN`).
fn without_value_names(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '%' {
            out.push('_');
            while chars
                .peek()
                .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '#' | '.'))
            {
                chars.next();
            }
        }
    }
    out
}

/// The function signatures and calls of a printed module, in order.
fn signatures_and_calls(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| l.starts_with("func.func") || l.contains("call @"))
        .map(without_value_names)
        .map(|l| without_explicit_replication(&l))
        .collect()
}

/// `line` without the fully replicated shardings that
/// meshrun's export makes explicit (`export::make_explicit`, so that the
/// partitioner never guesses) where Shardy leaves a value without one.
fn without_explicit_replication(line: &str) -> String {
    let mut out = line.to_string();
    for rank in 0..=4 {
        let rep = format!("<@mesh, [{}]>", vec!["{}"; rank].join(", "));
        for cut in [
            format!(" {{sdy.sharding = #sdy.sharding{rep}}}"),
            format!(" {{sdy.sharding = #sdy.sharding_per_value<[{rep}]>}}"),
            format!(", sdy.sharding = #sdy.sharding_per_value<[{rep}]>"),
        ] {
            out = out.replace(&cut, "");
        }
    }
    // MLIR prints one result without attributes without parentheses.
    if let Some(at) = out.find("-> (") {
        let rest = &out[at + 4..];
        if let Some(end) = rest.find(") {") {
            let inner = &rest[..end];
            if !inner.contains(',') && !inner.contains('{') {
                out = format!("{}-> {inner}{}", &out[..at], &rest[end + 1..]);
            }
        }
    }
    out
}

/// `meshrun propagate`'s text for the programs with kept calls: every
/// function's signature (argument and result shardings) and every call
/// (its callee and result shardings) printed exactly as Shardy prints
/// them (`func.call` inside regions, `call` at a function's top level),
/// fully replicated shardings dropped on both sides (meshrun spells out
/// every one; Shardy only those it was given).
#[test]
fn kept_calls_print_as_shardy_prints_them() {
    let dir = manifest("tests/propagation_data/jax_extra");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("jax_extra")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.strip_prefix("call_")
                .and_then(|n| n.strip_suffix(".before.mlir"))
                .map(|n| format!("call_{n}"))
        })
        .collect();
    names.sort();
    assert!(names.len() >= 7, "the call programs: {names:?}");
    for name in names {
        let input = read_module(&dir.join(format!("{name}.before.mlir")));
        let ours = propagate(&input, &PropagationOptions::default()).expect("propagates");
        let theirs =
            std::fs::read_to_string(dir.join(format!("{name}.after.mlir"))).expect("after");
        let (o, t) = (
            signatures_and_calls(&meshrun_compiler::text::print_module(&ours)),
            signatures_and_calls(&theirs),
        );
        assert!(t.iter().any(|l| l.contains("call @")), "{name}: no calls");
        assert_eq!(o, t, "{name}");
    }
}
