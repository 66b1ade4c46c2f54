//! Fitting α and β from bench-comm rows: synthetic timings made from known
//! α and β with ±5% noise must give them back within 10%.

use std::path::Path;

use serde_json::{json, Value};

use meshrun::compiler::partition::CollectiveKind;
use meshrun::cost::calibrate::{calibrate, calibrated_topology, fit, parse_bench, BenchData};
use meshrun::cost::{CostError, Topology};

/// A small deterministic generator (no dependency): uniform in [0, 1).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// nccl-tests' busbw/algbw and the α steps, written out again here (not
/// taken from the model) so the test checks the fit, not itself.
fn factor_and_steps(op: &str, g: f64) -> (f64, f64) {
    match op {
        "all-reduce" => (2.0 * (g - 1.0) / g, 2.0 * (g - 1.0)),
        "collective-permute" => (1.0, 1.0),
        _ => ((g - 1.0) / g, g - 1.0),
    }
}

const OPS: [&str; 5] = [
    "all-gather",
    "reduce-scatter",
    "all-reduce",
    "all-to-all",
    "collective-permute",
];

/// bench-comm rows for `ranks` devices, sizes 1 KiB .. 1 GiB, times from
/// α (µs) and bandwidth (GB/s) times a uniform ±5% noise.
fn synthetic_rows(
    alpha_us: f64,
    gbytes_per_s: f64,
    ranks: u64,
    seed: u64,
    with_ranks: bool,
) -> Vec<Value> {
    let mut rng = Lcg(seed);
    let mut rows = Vec::new();
    for op in OPS {
        let mut bytes = 1024.0_f64;
        while bytes <= 1024.0 * 1024.0 * 1024.0 {
            let (f, k) = factor_and_steps(op, ranks as f64);
            let exact_us = f * bytes / (gbytes_per_s * 1e3) + k * alpha_us;
            let t_us = exact_us * (1.0 + 0.1 * (rng.next() - 0.5));
            let algbw = bytes / (t_us * 1e3);
            let mut row = json!({
                "op": op,
                "bytes": bytes,
                "time_us": t_us,
                "algbw_gbps": algbw,
                "busbw_gbps": algbw * f,
                "ok": true,
            });
            if with_ranks {
                row["ranks"] = json!(ranks);
            }
            rows.push(row);
            bytes *= 4.0;
        }
    }
    rows
}

fn within(got: f64, want: f64, tol: f64) -> bool {
    (got - want).abs() <= tol * want
}

#[test]
fn fitting_noisy_synthetic_timings_recovers_alpha_and_beta_within_10_percent() {
    for (seed, alpha_us, gbps, ranks) in [
        (1, 4.0, 25.0, 8),
        (2, 1.0, 360.0, 8),
        (3, 20.0, 2.5, 4),
        (4, 0.3, 45.0, 2),
        (5, 8.0, 10.0, 16),
    ] {
        let text = Value::Array(synthetic_rows(alpha_us, gbps, ranks, seed, true)).to_string();
        let data = parse_bench(&text).expect("parses");
        assert_eq!(data.rows.len(), 5 * 11);
        let cal = calibrate(&data, Path::new("bench.json")).expect("fits");
        let f = cal.overall;
        assert!(
            within(f.latency_us(), alpha_us, 0.10),
            "seed {seed}: α {} µs, want {alpha_us}",
            f.latency_us()
        );
        assert!(
            within(f.bandwidth_gbytes_per_s(), gbps, 0.10),
            "seed {seed}: B {} GB/s, want {gbps}",
            f.bandwidth_gbytes_per_s()
        );
        assert!(f.rms_rel_error < 0.05, "rms {}", f.rms_rel_error);
        // Each op alone fits too.
        assert_eq!(cal.per_op.len(), 5);
        for (kind, f) in &cal.per_op {
            assert!(
                within(f.latency_us(), alpha_us, 0.10),
                "{kind}: α {}",
                f.latency_us()
            );
            assert!(
                within(f.bandwidth_gbytes_per_s(), gbps, 0.10),
                "{kind}: B {}",
                f.bandwidth_gbytes_per_s()
            );
        }
    }
}

#[test]
fn without_ranks_the_group_size_comes_from_busbw_over_algbw() {
    let rows = synthetic_rows(3.0, 50.0, 8, 7, false);
    let data = parse_bench(&Value::Array(rows).to_string()).expect("parses");
    for r in &data.rows {
        let want = if r.kind == CollectiveKind::CollectivePermute {
            2
        } else {
            8
        };
        assert_eq!(r.ranks, want, "{:?}", r.kind);
    }
    let f = fit(&data.rows).expect("fits");
    assert!(within(f.latency_us(), 3.0, 0.10), "{}", f.latency_us());
    assert!(within(f.bandwidth_gbytes_per_s(), 50.0, 0.10));

    // A file-level `ranks` in an object with `rows` serves every row.
    let doc = json!({"ranks": 4, "rows": [
        {"op": "all_gather", "bytes": 1000, "time_us": 10.0},
        {"op": "AllReduce", "bytes": 1e6, "time_us": 100.0},
    ]});
    let data = parse_bench(&doc.to_string()).expect("parses");
    assert_eq!(data.rows.len(), 2);
    assert!(data.rows.iter().all(|r| r.ranks == 4));
    assert_eq!(data.rows[0].kind, CollectiveKind::AllGather);
    assert_eq!(data.rows[1].kind, CollectiveKind::AllReduce);
    assert!((data.rows[1].seconds - 1e-4).abs() < 1e-15);
}

#[test]
fn failed_and_unknown_rows_are_skipped_and_said_so() {
    let doc = json!([
        {"op": "all-gather", "bytes": 1024, "time_us": 5.0, "ranks": 8, "ok": false},
        {"op": "broadcast", "bytes": 1024, "time_us": 5.0, "ranks": 8},
        {"op": "all-gather", "bytes": 1024, "time_us": 5.0, "ranks": 8},
    ]);
    let data = parse_bench(&doc.to_string()).expect("parses");
    assert_eq!(data.rows.len(), 1);
    assert_eq!(data.skipped.len(), 2);
    assert!(data.skipped[0].starts_with("row 0"));
    assert!(data.skipped[1].contains("broadcast"));
}

#[test]
fn malformed_rows_are_errors_that_name_the_row() {
    let cases = [
        ("not json", "expected"),
        ("{\"x\": 1}", "`rows` array"),
        (
            "[{\"bytes\": 1, \"time_us\": 1, \"ranks\": 2}]",
            "row 0: no `op`",
        ),
        (
            "[{\"op\": \"all-gather\", \"time_us\": 1, \"ranks\": 2}]",
            "row 0: no numeric `bytes`",
        ),
        (
            "[{\"op\": \"all-gather\", \"bytes\": 1, \"time_us\": 0, \"ranks\": 2}]",
            "must be positive",
        ),
        (
            "[{\"op\": \"all-gather\", \"bytes\": 1, \"time_us\": 1}]",
            "no `ranks`",
        ),
        (
            "[{\"op\": \"all-gather\", \"bytes\": 1, \"time_us\": 1, \"ranks\": 1}]",
            "at least 2",
        ),
    ];
    for (text, needle) in cases {
        let err = parse_bench(text).expect_err(text);
        assert!(err.contains(needle), "{text}: {err}");
    }
}

#[test]
fn too_few_or_flat_rows_cannot_be_fitted() {
    let one = BenchData {
        rows: parse_bench(r#"[{"op": "all-gather", "bytes": 1024, "time_us": 5, "ranks": 8}]"#)
            .expect("parses")
            .rows,
        skipped: Vec::new(),
    };
    let err = calibrate(&one, Path::new("b.json")).expect_err("one row");
    assert!(matches!(err, CostError::Fit { .. }));
    assert!(err.to_string().starts_with("b.json: cannot fit"), "{err}");

    // Time that shrinks with size gives no positive bandwidth.
    let flat = parse_bench(
        r#"[{"op": "all-gather", "bytes": 1e3, "time_us": 50, "ranks": 8},
            {"op": "all-gather", "bytes": 1e9, "time_us": 5, "ranks": 8}]"#,
    )
    .expect("parses");
    assert!(calibrate(&flat, Path::new("b.json")).is_err());
}

#[test]
fn the_calibrated_topology_carries_the_fit_and_reads_back() {
    let rows = synthetic_rows(6.0, 12.0, 8, 11, true);
    let data = parse_bench(&Value::Array(rows).to_string()).expect("parses");
    let cal = calibrate(&data, Path::new("bench.json")).expect("fits");
    let base = Topology::builtin("pcie4-8").expect("built-in");
    let t = calibrated_topology(&base, &cal, "bench.json");
    assert_eq!(t.name, "pcie4-8-calibrated");
    assert!(within(t.intra_node.latency_us, 6.0, 0.10));
    assert!(within(t.intra_node.bandwidth_gbytes_per_s, 12.0, 0.10));
    assert_eq!(t.peak_tflops, base.peak_tflops);
    assert!(t.notes.last().is_some_and(|n| n.contains("bench.json")));
    let back = Topology::from_json(&t.to_json(), "calibrated").expect("valid topology");
    assert_eq!(back, t);
}
