//! Differential test: random programs run sharded on random meshes must
//! give what the unsharded reference gives.
//!
//! Each case is a random program written as the MLIR text JAX prints
//! (so the parser is exercised too): chains of element-wise ops,
//! `dot_general` (with batching and contracting dims), `reshape`,
//! `transpose`, `broadcast_in_dim`, `reduce` (add, max, min; two inputs:
//! argmax/argmin, sum and max), `sort`, argsort, `chlo.top_k` and
//! `reverse`, on random
//! shapes that include non-divisible sizes (7, 13, 1), with random
//! shardings (some open, some by constraints) on a random mesh of 1-3 axes
//! of sizes 1-4, sometimes with a custom `device_ids` order and a second
//! mesh over the same devices in another order; some chains sit in the
//! body of a counted `while` (`fori_loop`) or in the branches of a two-way
//! `case` on a predicate from sharded data (`lax.cond`), nested up to two
//! deep. The program is propagated,
//! partitioned and run on the CPU backend (replicas must agree bitwise),
//! then compared with the reference under the rule of
//! `meshrun_runtime::compare` (rtol 1e-5), or within 1e-5 of the
//! generator's bound on the terms summed into the output (a sum of mixed
//! signs that cancels is reassociated by sharding; its rounding scales
//! with its terms, not with the result); a float output over both is
//! judged again against the program computed in f64, as `run --check`
//! does.
//!
//! The generator keeps values in ranges where f32 rounding cannot be
//! amplified past the tolerance (`exp` only on small values, `sin`/`tanh`
//! only on moderate ones), so a mismatch means a real bug. The bugs it
//! found in propagation and partitioning (axes of size 1, reshapes of
//! padded blocks) have regression tests in `executor_known_bugs.rs`.
//!
//! Separate tests run the integer programs (`bits_program`), programs
//! around one convolution (`conv_program`) and around gathers, scatters
//! and dynamic slices (`index_program`), shard_maps with mesh-axes
//! groups and unreduced values (`manual_program`), each with its own
//! case count.
//!
//! `MESHRUN_DIFF_CASES` (default 1000; about 1 s in release) sets the
//! number of cases, `MESHRUN_DIFF_SEED` the first seed; failures print
//! their seeds (the first `MESHRUN_DIFF_SHOW`, default 20) and the first
//! one's program; `MESHRUN_DIFF_DUMP=DIR` writes every failing program to
//! `DIR`.

use meshrun_compiler::text::parse_module;
use meshrun_kernels::{HostTensor, Parallelism};
use meshrun_runtime::compare::{compare, compare_outputs, describe, mismatch, Diff};
use meshrun_runtime::pipeline::compile;
use meshrun_runtime::random_inputs::random_inputs;
use meshrun_runtime::reference::run_function;
use meshrun_runtime::testgen::{
    bits_program, conv_program, index_program, manual_program, program, program_and_bounds,
};
use meshrun_runtime::wide_reference::run_in_f64;
use meshrun_runtime::{CpuBackend, ExecOptions, Executor};

/// The relative tolerance of every float comparison here.
const RTOL: f64 = 1e-5;

/// Run one case: the program `text` with inputs drawn from `seed`;
/// `Err(why)` on any difference or failure.
fn run_program(text: &str, seed: u64) -> Result<(), String> {
    run_program_with_sums(text, seed, &[])
}

/// [`run_program`], where output `k` may also differ by up to
/// `RTOL * sums[k]`: `sums[k]` bounds the sum of the absolute values of the
/// terms summed into it, and a sum of terms of mixed sign reassociated by
/// the partitioning (partial sums per device, then an all-reduce) changes
/// by rounding relative to that, not to the (possibly cancelled) result.
/// A real bug (a missing partial sum, a wrong block) moves an output by
/// about its terms' magnitude, far past this.
fn run_program_with_sums(text: &str, seed: u64, sums: &[f64]) -> Result<(), String> {
    let module = parse_module(text).map_err(|d| format!("parse: {}: {}", d.pos, d.message))?;
    let f = module.func("main").ok_or("no @main")?;
    let types: Vec<_> = f.args.iter().map(|&a| f.ty(a).clone()).collect();
    let inputs = random_inputs(&types, seed)?;
    let want = run_function(&module, "main", &inputs, Parallelism::None)
        .map_err(|e| format!("reference: {e}"))?;
    let program = compile(&module).map_err(|d| format!("compile: {}: {}", d.pos, d.message))?;
    let exec = Executor::new(&program.device).map_err(|e| e.to_string())?;
    let backend = CpuBackend::new();
    let placed = exec.place(&backend, &inputs).map_err(|e| e.to_string())?;
    let outs = exec
        .run(&backend, &placed, &ExecOptions::default())
        .map_err(|e| e.to_string())?;
    let got: Vec<HostTensor> = exec
        .gather(&backend, outs, true)
        .map_err(|e| e.to_string())?;
    // The rule of `run --check` (the program in f64 computed only when a
    // float output is over the plain tolerance), and the summed-magnitude
    // bound on top.
    let judged = compare_outputs(&got, &want, RTOL, || {
        run_in_f64(&module, "main", &inputs, Parallelism::None, None)
    })?;
    for (k, d) in judged.diffs.iter().enumerate() {
        let sum = sums.get(k).copied().unwrap_or(0.0);
        if d.within() || within_sum(d, sum) {
            continue;
        }
        let m = describe(d, &got[k], &want[k], RTOL).unwrap_or_default();
        let why = judged
            .f64_unavailable
            .as_ref()
            .map(|w| format!("; no f64 reference: {w}"))
            .unwrap_or_default();
        return Err(format!(
            "output {k}: {m}{why} (summed magnitude bound {sum:e})"
        ));
    }
    Ok(())
}

/// Whether `d`'s largest difference is within `RTOL * sum` (see
/// [`run_program_with_sums`]).
fn within_sum(d: &Diff, sum: f64) -> bool {
    d.max_abs.is_finite() && d.max_abs <= RTOL * sum
}

/// How `got` differs from `want` beyond `RTOL` of their magnitude and
/// beyond `RTOL * sum` (see [`run_program_with_sums`]).
fn output_mismatch(got: &HostTensor, want: &HostTensor, sum: f64) -> Option<String> {
    let m = mismatch(got, want, RTOL)?;
    let within = compare(got, want, RTOL).is_ok_and(|d| within_sum(&d, sum));
    (!within).then(|| format!("{m} (summed magnitude bound {sum:e})"))
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn random_programs_match_the_reference() {
    let cases = env_u64("MESHRUN_DIFF_CASES", 1000);
    let first = env_u64("MESHRUN_DIFF_SEED", 1);
    let dump = std::env::var("MESHRUN_DIFF_DUMP").ok();
    let mut failures = Vec::new();
    for seed in first..first + cases {
        let (text, sums) = program_and_bounds(seed, true);
        if let Err(why) = run_program_with_sums(&text, seed, &sums) {
            if let Some(dir) = &dump {
                let path = std::path::Path::new(dir).join(format!("seed{seed}.mlir"));
                let _ = std::fs::write(path, format!("// {why}\n{text}"));
            }
            failures.push((seed, why, text));
        }
    }
    let shown = env_u64("MESHRUN_DIFF_SHOW", 20) as usize;
    for (seed, why, _) in failures.iter().take(shown) {
        eprintln!("seed {seed}: {why}");
    }
    if let Some((seed, _, text)) = failures.first() {
        eprintln!("program of seed {seed}:\n{text}");
    }
    eprintln!(
        "differential: {} of {cases} cases passed",
        cases as usize - failures.len()
    );
    assert!(failures.is_empty(), "{} cases failed", failures.len());
}

/// A program the generator once drew (seed 19157): 16 values of mixed
/// sign summed to -0.0093 (inputs from seed 19157). Sharded on 2 devices
/// the two partial sums round differently (2.4e-7, 1.3e-5 of the result),
/// within f32 rounding of the terms' magnitude (at most 16: the bound the
/// generator gives); an error of a thousandth (far below one term) still
/// fails. The plain rule alone rejects it (last assertion).
const CANCELLED_SUM: &str = r#"module @jit_random {
  sdy.mesh @mesh = <["a"=1, "b"=2], device_ids=[1, 0]>
  func.func public @main(%arg0: tensor<12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b", "a"}]>}, %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}]>}) -> (tensor<f32>, tensor<12xf32>) {
    %v2 = stablehlo.broadcast_in_dim %arg1, dims = [0] : (tensor<8xf32>) -> tensor<8x2xf32>
    %v4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %v5 = stablehlo.reduce(%v2 init: %v4) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x2xf32>, tensor<f32>) -> tensor<f32>
    return %v5, %arg0 : tensor<f32>, tensor<12xf32>
  }
}"#;

#[test]
fn cancelled_sums_compare_by_their_terms_magnitude() {
    let sums = [16.0, 1.0];
    // Over the plain rule, the f64 reference also tells this rounding from
    // a bug (the sharded sum is as far from it as the unsharded one).
    run_program(CANCELLED_SUM, 19157).unwrap();
    run_program_with_sums(CANCELLED_SUM, 19157, &sums).unwrap();
    let want = HostTensor::from_vec(&[], vec![-0.009275436f32]).unwrap();
    let near = HostTensor::from_vec(&[], vec![-0.009275198f32]).unwrap();
    let wrong = HostTensor::from_vec(&[], vec![-0.010275436f32]).unwrap();
    assert!(output_mismatch(&near, &want, sums[0]).is_none());
    assert!(output_mismatch(&wrong, &want, sums[0]).is_some());
    assert!(output_mismatch(&near, &want, 0.0).is_some());
}

/// Print the program of `MESHRUN_DIFF_SEED` and run it.
#[test]
#[ignore]
fn print_case() {
    let seed = env_u64("MESHRUN_DIFF_SEED", 1);
    let (text, sums) = program_and_bounds(seed, true);
    println!("{text}");
    match run_program_with_sums(&text, seed, &sums) {
        Ok(()) => println!("pass"),
        Err(why) => println!("FAIL: {why}"),
    }
}

#[test]
fn the_generator_makes_what_it_promises() {
    // Over many programs: every op kind, non-divisible sizes, several
    // meshes with custom device orders, and all parse.
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..400 {
        let text = program(seed, true);
        parse_module(&text).unwrap_or_else(|d| panic!("seed {seed}: {d:?}\n{text}"));
        for key in [
            "dot_general",
            "batching_dims",
            "reshape",
            "transpose",
            "broadcast_in_dim",
            "stablehlo.reduce",
            "stablehlo.reduce_window",
            "base_dilations = array<i64: 2",
            "stablehlo.select_and_scatter",
            "reducer(",
            "compare LT, %b, %d",
            "\"stablehlo.sort\"",
            "chlo.top_k",
            "stablehlo.reverse",
            "format = e4m3",
            "sharding_constraint",
            "device_ids",
            "@mesh2",
            "x7x",
            "13",
            "tanh",
            "exponential",
            "stablehlo.while",
            "\"stablehlo.case\"",
        ] {
            if text.contains(key) {
                seen.insert(key);
            }
        }
    }
    assert_eq!(seen.len(), 24, "{seen:?}");
    let halos = (0..400)
        .filter(|&seed| has_halo(&program(seed, true), "stablehlo.reduce_window"))
        .count();
    eprintln!("{halos} of 400 programs exchange a reduce_window's halo");
    assert!(
        halos >= 5,
        "only {halos} of 400 programs exchange a reduce_window's halo"
    );
}

/// The integer programs of `testgen::bits_program` (shifts, bit ops,
/// popcnt, clz, remainder, converts and bitcasts on every integer type):
/// sharded runs must equal the reference exactly.
#[test]
fn random_integer_programs_match_the_reference_exactly() {
    let cases = env_u64("MESHRUN_DIFF_BITS_CASES", 1000);
    let first = env_u64("MESHRUN_DIFF_SEED", 1);
    let mut failures = Vec::new();
    for seed in first..first + cases {
        let text = bits_program(seed);
        if let Err(why) = run_program(&text, seed) {
            failures.push((seed, why, text));
        }
    }
    for (seed, why, _) in failures.iter().take(20) {
        eprintln!("bits seed {seed}: {why}");
    }
    if let Some((seed, _, text)) = failures.first() {
        eprintln!("program of bits seed {seed}:\n{text}");
    }
    eprintln!(
        "differential (integers): {} of {cases} cases passed",
        cases as usize - failures.len()
    );
    assert!(failures.is_empty(), "{} cases failed", failures.len());
}

#[test]
fn the_integer_generator_makes_what_it_promises() {
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..300 {
        let text = bits_program(seed);
        parse_module(&text).unwrap_or_else(|d| panic!("seed {seed}: {d:?}\n{text}"));
        for key in [
            "shift_left",
            "shift_right_logical",
            "shift_right_arithmetic",
            "stablehlo.and",
            "stablehlo.or",
            "stablehlo.xor",
            "stablehlo.not",
            "popcnt",
            "count_leading_zeros",
            "remainder",
            "bitcast_convert",
            "stablehlo.convert",
            "stablehlo.reduce",
            "sharding_constraint",
            "xui8>",
            "xi8>",
            "xui16>",
            "xi16>",
            "xui64>",
            "xi64>",
        ] {
            if text.contains(key) {
                seen.insert(key);
            }
        }
    }
    assert_eq!(seen.len(), 20, "{seen:?}");
}

/// Programs around one random convolution (`testgen::conv_program`: every
/// attribute, feature and batch groups, random shardings of both operands
/// and the result): sharded runs must equal the reference.
/// `MESHRUN_DIFF_CONV_CASES` (default 1000) sets the number of cases.
#[test]
fn random_convolutions_match_the_reference() {
    let cases = env_u64("MESHRUN_DIFF_CONV_CASES", 1000);
    let first = env_u64("MESHRUN_DIFF_SEED", 1);
    let mut failures = Vec::new();
    for seed in first..first + cases {
        let text = conv_program(seed);
        if let Err(why) = run_program(&text, seed) {
            failures.push((seed, why, text));
        }
    }
    for (seed, why, _) in failures.iter().take(20) {
        eprintln!("conv seed {seed}: {why}");
    }
    if let Some((seed, _, text)) = failures.first() {
        eprintln!("program of conv seed {seed}:\n{text}");
    }
    eprintln!(
        "differential (convolutions): {} of {cases} cases passed",
        cases as usize - failures.len()
    );
    assert!(failures.is_empty(), "{} cases failed", failures.len());
}

#[test]
fn the_conv_generator_makes_what_it_promises() {
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..300 {
        let text = conv_program(seed);
        parse_module(&text).unwrap_or_else(|d| panic!("seed {seed}: {d:?}\n{text}"));
        for key in [
            "[b, 0, 1, f]x[0, 1, i, o]",
            "[b, f, 0, 1]x[o, i, 0, 1]",
            "[f, 0, 1, b]x[i, 0, 1, o]",
            "[b, f]x[i, o]",
            "feature_group_count = 3",
            "batch_group_count = 2",
            "lhs_dilate = [2",
            "rhs_dilate = [2",
            "[-1, ",
            "reverse = [true",
            "sharding_constraint",
            "{\"a\"",
        ] {
            if text.contains(key) {
                seen.insert(key);
            }
        }
    }
    assert_eq!(seen.len(), 12, "{seen:?}");
    let halos = (0..300)
        .filter(|&seed| has_halo(&conv_program(seed), "stablehlo.convolution"))
        .count();
    eprintln!("{halos} of 300 programs exchange a convolution's halo");
    assert!(
        halos >= 30,
        "only {halos} of 300 programs exchange a convolution's halo"
    );
}

/// Whether `text` partitions into a program with a halo exchange of `op`.
fn has_halo(text: &str, op: &str) -> bool {
    let Ok(module) = parse_module(text) else {
        return false;
    };
    let Ok(p) = compile(&module) else {
        return false;
    };
    let want = format!("halo of {op}");
    let found = p
        .device
        .collectives()
        .any(|(_, cause)| cause.reason.contains(&want));
    found
}

/// Programs around gathers, scatters and dynamic slices
/// (`testgen::index_program`: `take` on any axis, `take_along_axis`,
/// `x[i, j]`, scatters with every region, batching dims, dynamic
/// slices and updates; ids out of range both ways and repeated) on random
/// shardings: sharded runs must equal the reference.
/// `MESHRUN_DIFF_INDEX_CASES` (default 1000) sets the number of cases,
/// `MESHRUN_DIFF_DUMP=DIR` writes every failing program to `DIR`.
#[test]
fn random_index_ops_match_the_reference() {
    let cases = env_u64("MESHRUN_DIFF_INDEX_CASES", 1000);
    let first = env_u64("MESHRUN_DIFF_SEED", 1);
    let dump = std::env::var("MESHRUN_DIFF_DUMP").ok();
    let mut failures = Vec::new();
    for seed in first..first + cases {
        let (text, sums) = index_program(seed);
        if let Err(why) = run_program_with_sums(&text, seed, &sums) {
            if let Some(dir) = &dump {
                let path = std::path::Path::new(dir).join(format!("index{seed}.mlir"));
                let _ = std::fs::write(path, format!("// {why}\n{text}"));
            }
            failures.push((seed, why, text));
        }
    }
    for (seed, why, _) in failures.iter().take(20) {
        eprintln!("index seed {seed}: {why}");
    }
    if let Some((seed, _, text)) = failures.first() {
        eprintln!("program of index seed {seed}:\n{text}");
    }
    eprintln!(
        "differential (indexing ops): {} of {cases} cases passed",
        cases as usize - failures.len()
    );
    assert!(failures.is_empty(), "{} cases failed", failures.len());
}

/// Programs around shard_maps and unreduced values
/// (`testgen::manual_program`: full and partial-manual
/// `sdy.manual_computation`s on meshes with custom device orders, their
/// psum, all_gather, psum_scatter and all_to_all written with mesh-axes
/// replica groups as JAX >= 0.11 prints them; constraints that make
/// values unreduced by sum or max, linear ops on them, reductions):
/// sharded runs must equal the reference. `MESHRUN_DIFF_MANUAL_CASES`
/// (default 600) sets the number of cases, `MESHRUN_DIFF_DUMP=DIR` writes
/// every failing program to `DIR`.
#[test]
fn random_shard_maps_and_unreduced_values_match_the_reference() {
    let cases = env_u64("MESHRUN_DIFF_MANUAL_CASES", 600);
    let first = env_u64("MESHRUN_DIFF_SEED", 1);
    let dump = std::env::var("MESHRUN_DIFF_DUMP").ok();
    let mut failures = Vec::new();
    for seed in first..first + cases {
        let (text, sums) = manual_program(seed);
        if let Err(why) = run_program_with_sums(&text, seed, &sums) {
            if let Some(dir) = &dump {
                let path = std::path::Path::new(dir).join(format!("manual{seed}.mlir"));
                let _ = std::fs::write(path, format!("// {why}\n{text}"));
            }
            failures.push((seed, why, text));
        }
    }
    for (seed, why, _) in failures.iter().take(20) {
        eprintln!("manual seed {seed}: {why}");
    }
    if let Some((seed, _, text)) = failures.first() {
        eprintln!("program of manual seed {seed}:\n{text}");
    }
    eprintln!(
        "differential (shard_map, unreduced): {} of {cases} cases passed",
        cases as usize - failures.len()
    );
    assert!(failures.is_empty(), "{} cases failed", failures.len());
}

#[test]
fn the_manual_generator_makes_what_it_promises() {
    let mut seen = std::collections::BTreeSet::new();
    let mut partial_manual = 0;
    for seed in 0..400 {
        let (text, _) = manual_program(seed);
        parse_module(&text).unwrap_or_else(|d| panic!("seed {seed}: {d:?}\n{text}"));
        for key in [
            "sdy.manual_computation",
            "replica_group_mesh_axes",
            "\"stablehlo.all_reduce\"",
            "\"stablehlo.all_gather\"",
            "\"stablehlo.reduce_scatter\"",
            "\"stablehlo.all_to_all\"",
            "axis_ref<name = \"a\">, #stablehlo.axis_ref",
            "unreduced={",
            "unreduced=max{",
            "device_ids=",
        ] {
            if text.contains(key) {
                seen.insert(key);
            }
        }
        // Partial-manual: fewer manual axes than the mesh has.
        let mesh_axes = text.split("sdy.mesh @mesh = <[").nth(1).map_or(0, |r| {
            r.split(']').next().unwrap_or("").matches('=').count()
        });
        for l in text.lines().filter(|l| l.contains("manual_axes={")) {
            let m = l.split("manual_axes={").nth(1).unwrap_or("");
            let n = m.split('}').next().unwrap_or("").matches('"').count() / 2;
            if n < mesh_axes {
                partial_manual += 1;
            }
        }
    }
    assert_eq!(seen.len(), 10, "{seen:?}");
    assert!(
        partial_manual >= 20,
        "only {partial_manual} partial-manual computations"
    );
}

/// Print the shard_map program of `MESHRUN_DIFF_SEED` and run it.
#[test]
#[ignore]
fn print_manual_case() {
    let seed = env_u64("MESHRUN_DIFF_SEED", 1);
    let (text, sums) = manual_program(seed);
    println!("{text}");
    match run_program_with_sums(&text, seed, &sums) {
        Ok(()) => println!("pass"),
        Err(why) => println!("FAIL: {why}"),
    }
}

/// Run the program in the file `MESHRUN_DIFF_FILE` (a dumped case, cut
/// down by hand) on inputs of `MESHRUN_DIFF_SEED`.
#[test]
#[ignore]
fn run_file() {
    let path = std::env::var("MESHRUN_DIFF_FILE").expect("MESHRUN_DIFF_FILE");
    let text = std::fs::read_to_string(&path).expect("readable file");
    match run_program(&text, env_u64("MESHRUN_DIFF_SEED", 1)) {
        Ok(()) => println!("pass"),
        Err(why) => println!("FAIL: {why}"),
    }
}

/// Print the indexing program of `MESHRUN_DIFF_SEED` and run it.
#[test]
#[ignore]
fn print_index_case() {
    let seed = env_u64("MESHRUN_DIFF_SEED", 1);
    let (text, sums) = index_program(seed);
    println!("{text}");
    match run_program_with_sums(&text, seed, &sums) {
        Ok(()) => println!("pass"),
        Err(why) => println!("FAIL: {why}"),
    }
}

#[test]
fn the_index_generator_makes_what_it_promises() {
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..400 {
        let (text, _) = index_program(seed);
        parse_module(&text).unwrap_or_else(|d| panic!("seed {seed}: {d:?}\n{text}"));
        for key in [
            "\"stablehlo.gather\"",
            "operand_batching_dims",
            "start_index_map = [1, 0]",
            "\"stablehlo.scatter\"",
            "input_batching_dims",
            "stablehlo.add %a, %b",
            "stablehlo.maximum %a, %b",
            "stablehlo.minimum %a, %b",
            "stablehlo.multiply %a, %b",
            "stablehlo.return %b",
            "unique_indices = true",
            "stablehlo.dynamic_slice",
            "stablehlo.dynamic_update_slice",
            "dense<-1>",
            "sharding_constraint",
            "{\"a\"",
        ] {
            if text.contains(key) {
                seen.insert(key);
            }
        }
    }
    assert_eq!(seen.len(), 16, "{seen:?}");
}
