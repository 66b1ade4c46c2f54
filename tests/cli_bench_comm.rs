//! `meshrun bench-comm` on the CPU backend: the table, the JSON rows (and
//! that `meshrun cost --calibrate` reads them), the SVG plot, and one-line
//! errors for bad options. Sizes stay small: CI has two cores.

use std::path::Path;

use serde_json::Value;

use meshrun::compiler::partition::CollectiveKind;
use meshrun::cost::model::{bus_factor, latency_steps};

mod common;
use common::{run, run_ok};

const OPS: [&str; 5] = [
    "all-gather",
    "all-reduce",
    "reduce-scatter",
    "all-to-all",
    "collective-permute",
];

/// A small sweep: 4 devices, 1K to 4K, few runs.
fn small(extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "bench-comm",
        "--devices",
        "4",
        "--min-bytes",
        "1K",
        "--max-bytes",
        "4K",
        "--iters",
        "3",
        "--warmup",
        "1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn the_table_has_a_line_per_op_and_size() {
    let out = run_ok(&strs(&small(&[])));
    for op in OPS {
        for size in ["1024", "2048", "4096"] {
            let line = out
                .lines()
                .find(|l| {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    f.first() == Some(&op) && f.get(1) == Some(&size)
                })
                .unwrap_or_else(|| panic!("no line for {op} at {size}:\n{out}"));
            let f: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(f[3], "f32", "{line}");
            assert_eq!(
                f[2].parse::<u64>().unwrap() * 4,
                size.parse::<u64>().unwrap()
            );
            assert!(f[4].parse::<f64>().unwrap() > 0.0, "{line}");
            assert_eq!(f[7], "ok", "{line}");
        }
    }
    assert!(!out.contains("WRONG"), "{out}");
    assert!(out.contains("Avg bus bandwidth"), "{out}");
}

#[test]
fn json_rows_have_the_fields_and_calibrate_reads_them() {
    let out = run_ok(&strs(&small(&["--json", "--dtype", "bf16"])));
    let rows: Vec<Value> = serde_json::from_str(&out).expect("JSON list");
    assert_eq!(rows.len(), OPS.len() * 3);
    for r in &rows {
        let op = r["op"].as_str().unwrap();
        assert!(OPS.contains(&op), "{r}");
        assert_eq!(r["ok"], true, "{r}");
        assert_eq!(r["ranks"], 4, "{r}");
        assert_eq!(r["dtype"], "bf16", "{r}");
        let bytes = r["bytes"].as_u64().unwrap();
        let t = r["time_us"].as_f64().unwrap();
        let alg = r["algbw_gbps"].as_f64().unwrap();
        let bus = r["busbw_gbps"].as_f64().unwrap();
        assert!(t > 0.0, "{r}");
        // nccl-tests' definitions: algbw = S / t, busbw = algbw × factor.
        let want_alg = bytes as f64 / (t * 1e-6) / 1e9;
        assert!((alg - want_alg).abs() <= 1e-9 * want_alg.max(1.0), "{r}");
        let factor = match op {
            "all-reduce" => 2.0 * 3.0 / 4.0,
            "collective-permute" => 1.0,
            _ => 3.0 / 4.0,
        };
        assert!((bus - alg * factor).abs() <= 1e-9 * bus.max(1.0), "{r}");
    }
    // The rows are what `cost --calibrate` fits. Their measured times at
    // 1-4 KiB are noise on a busy 2-core machine (a fit of them may find no
    // positive bandwidth), so the times are replaced by a known α-β line:
    // calibrate must read every printed row and recover that line.
    let (alpha_us, gbytes_per_s) = (5.0, 2.0);
    let mut rows = rows;
    for r in &mut rows {
        let kind = match r["op"].as_str().unwrap() {
            "all-gather" => CollectiveKind::AllGather,
            "all-reduce" => CollectiveKind::AllReduce,
            "reduce-scatter" => CollectiveKind::ReduceScatter,
            "all-to-all" => CollectiveKind::AllToAll,
            _ => CollectiveKind::CollectivePermute,
        };
        let bytes = r["bytes"].as_f64().unwrap();
        let t_us =
            bus_factor(kind, 4) * bytes / (gbytes_per_s * 1e3) + alpha_us * latency_steps(kind, 4);
        r["time_us"] = t_us.into();
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bench.json");
    std::fs::write(&file, serde_json::to_string(&rows).unwrap()).unwrap();
    let topo = run_ok(&["cost", "--calibrate", file.to_str().unwrap()]);
    let t: Value = serde_json::from_str(&topo).expect("topology JSON");
    assert!(t["name"].as_str().unwrap().ends_with("-calibrated"), "{t}");
    let link = &t["intra_node"];
    let bw = link["bandwidth_gbytes_per_s"].as_f64().unwrap();
    let lat = link["latency_us"].as_f64().unwrap();
    assert!((bw - gbytes_per_s).abs() < 1e-6 * gbytes_per_s, "{t}");
    assert!((lat - alpha_us).abs() < 1e-6 * alpha_us, "{t}");
}

#[test]
fn the_plot_has_a_bandwidth_and_a_time_line_per_op() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("busbw.svg");
    let ops = "all-gather,all-reduce,all-to-all";
    run_ok(&strs(&small(&[
        "--ops",
        ops,
        "--plot",
        svg.to_str().unwrap(),
    ])));
    let text = std::fs::read_to_string(&svg).expect("plot written");
    assert!(text.trim_start().starts_with("<svg"), "{}", &text[..80]);
    assert!(text.trim_end().ends_with("</svg>"));
    // Series are the 2-pixel polylines (axes and ticks are 1 pixel): per
    // op one in the bandwidth panel and one in the time panel, each op in
    // its own colour in both, through one point per size.
    let series: Vec<&str> = text
        .split("<polyline")
        .skip(1)
        .filter(|p| p.contains("stroke-width=\"2\""))
        .collect();
    assert_eq!(series.len(), 6, "two lines per op");
    let colours: std::collections::BTreeSet<&str> = series
        .iter()
        .map(|p| {
            p.split("stroke=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
        })
        .collect();
    assert_eq!(colours.len(), 3, "{colours:?}");
    for p in &series {
        let points = p
            .split("points=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        assert_eq!(
            points.split_whitespace().count(),
            3,
            "three sizes: {points}"
        );
    }
    for op in ops.split(',') {
        assert!(text.contains(op), "legend names {op}");
    }
    assert!(!text.contains("reduce-scatter"));
}

#[test]
fn a_zero_copy_permute_is_left_out_of_the_bandwidth_panel_and_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("p.svg");
    run_ok(&strs(&small(&[
        "--ops",
        "all-gather,collective-permute",
        "--plot",
        svg.to_str().unwrap(),
    ])));
    let text = std::fs::read_to_string(&svg).expect("plot written");
    let series = text
        .split("<polyline")
        .skip(1)
        .filter(|p| p.contains("stroke-width=\"2\""))
        .count();
    assert_eq!(
        series, 3,
        "all-gather twice, the permute in the time panel only"
    );
    assert!(
        text.contains("collective-permute left out"),
        "the bandwidth panel says what it leaves out"
    );
}

fn fails_with(args: &[&str], needle: &str) {
    let (code, out, err) = run(args);
    assert_eq!(code, Some(1), "meshrun {args:?}: {out} {err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains(needle), "meshrun {args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
}

#[test]
fn bad_options_are_one_line_errors() {
    fails_with(&["bench-comm", "--min-bytes", "1X"], "'1X'");
    fails_with(&["bench-comm", "--max-bytes", "lots"], "--max-bytes");
    fails_with(
        &["bench-comm", "--min-bytes", "8K", "--max-bytes", "4K"],
        "larger",
    );
    fails_with(
        &["bench-comm", "--ops", "all-gather,broadcast"],
        "broadcast",
    );
    fails_with(&["bench-comm", "--dtype", "i1"], "unsupported dtype 'i1'");
    fails_with(&["bench-comm", "--devices", "0"], "--devices");
    fails_with(&["bench-comm", "--iters", "0"], "--iters");
    fails_with(&["bench-comm", "--backend", "tpu"], "unknown backend 'tpu'");
    if !cfg!(feature = "mpi") {
        fails_with(&["bench-comm", "--backend", "mpi"], "--features mpi");
    }
    let dir = Path::new("/nonexistent-dir-for-meshrun");
    let plot = dir.join("p.svg");
    fails_with(
        &strs(&small(&[
            "--ops",
            "all-gather",
            "--plot",
            plot.to_str().unwrap(),
        ])),
        "--plot",
    );
}
