//! `meshrun cost`: the same collectives and bytes as `meshrun partition
//! --json` on every fixture, times from the topology, calibration end to
//! end, and one-line errors for bad input.

use std::path::PathBuf;

use meshrun::cost::render::human_bytes;
use serde_json::{json, Value};

mod common;
use common::{arg as s, assert_error, run_ok};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every fixture directory with an `input.mlir`.
fn fixtures() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("fixtures/jax"))
        .expect("fixtures/jax")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.join("input.mlir").is_file())
        .collect();
    v.sort();
    v
}

fn run_json(args: &[&str]) -> Value {
    serde_json::from_str(&run_ok(args)).expect("JSON")
}

#[test]
fn cost_reports_the_partitioners_collectives_and_bytes_on_every_fixture() {
    let all = fixtures();
    assert!(all.len() >= 40, "fixtures present: {}", all.len());
    let mut with_collectives = 0;
    for dir in &all {
        let file = dir.join("input.mlir");
        let part = run_json(&["partition", s(&file), "--json"]);
        let cost = run_json(&["cost", s(&file), "--json"]);
        let (pc, cc) = (&part["collectives"], &cost["collectives"]);
        let (pc, cc) = (pc.as_array().expect("array"), cc.as_array().expect("array"));
        assert_eq!(pc.len(), cc.len(), "{}", dir.display());
        for (p, c) in pc.iter().zip(cc) {
            for field in [
                "kind",
                "op",
                "reason",
                "axes",
                "groups",
                "dtype",
                "in_shape",
                "out_shape",
                "bytes_per_device",
            ] {
                assert_eq!(p[field], c[field], "{}: {field}", dir.display());
            }
            let t = c["time_us"].as_f64().expect("time_us");
            assert!(t.is_finite() && t >= 0.0, "{}: {t}", dir.display());
        }
        assert_eq!(
            part["total_bytes_per_device"],
            cost["total_bytes_per_device"],
            "{}",
            dir.display()
        );
        assert_eq!(part["num_devices"], cost["num_devices"]);
        // The totals add up.
        let sum: f64 = cc
            .iter()
            .map(|c| c["time_us"].as_f64().unwrap_or(f64::NAN))
            .sum();
        let comm = cost["communication_us"].as_f64().expect("communication_us");
        assert!(
            (sum - comm).abs() <= 1e-9 * comm.max(1.0),
            "{}",
            dir.display()
        );
        let step = cost["step_us"].as_f64().expect("step_us");
        let compute = cost["compute"]["time_us"].as_f64().expect("compute");
        assert!((step - (comm + compute)).abs() <= 1e-9 * step.max(1.0));
        // Overlap hides at most the communication and at most the compute.
        let hidden = cost["overlap"]["hidden_us"].as_f64().expect("hidden_us");
        let overlapped = cost["overlap"]["step_us"].as_f64().expect("step_us");
        assert!(hidden >= 0.0 && hidden <= comm.min(compute) * (1.0 + 1e-9) + 1e-12);
        assert!((overlapped - (step - hidden)).abs() <= 1e-9 * step.max(1.0));
        with_collectives += usize::from(!cc.is_empty());

        // The table prints the same total.
        let table = run_ok(&["cost", s(&file)]);
        let total = cost["total_bytes_per_device"].as_f64().expect("total");
        let line = format!("communication  {} per device", human_bytes(total));
        assert!(table.contains(&line), "{line}: {table}");
        assert!(table.contains("step estimate"), "{table}");
    }
    assert!(
        with_collectives >= 10,
        "{with_collectives} fixtures communicate"
    );
}

#[test]
fn mlp_forward_on_h100_costs_the_hand_computed_time() {
    let file = root().join("fixtures/jax/mlp_forward/input.mlir");
    let cost = run_json(&["cost", s(&file), "--json"]);
    assert_eq!(cost["topology"], "h100-nvlink-8");
    // Two all-reduces over "model" (groups of 2) of 4x32 and 4x16 f32:
    // bytes 2·(1/2)·512 = 512 and 256; time = bytes / 360 GB/s + 2·1 µs.
    let c = cost["collectives"].as_array().expect("array");
    let want = [512.0 / 360e3 + 2.0, 256.0 / 360e3 + 2.0];
    for (c, want) in c.iter().zip(want) {
        assert_eq!(c["kind"], "all-reduce");
        assert_eq!(c["group_size"], 2);
        assert_eq!(c["link"], "NVLink 4");
        let got = c["time_us"].as_f64().expect("time");
        assert!((got - want).abs() < 1e-9, "{got} vs {want}");
    }
    assert_eq!(cost["compute"]["flops_per_device"], 29312.0);
    assert_eq!(cost["compute"]["by_dtype"][0]["peak_tflops"], 494.7);
    // Each all-reduce feeds the next layer: nothing can hide it.
    assert_eq!(cost["overlap"]["hidden_us"], 0.0);

    // --peak-tflops charges every type at the given peak.
    let cost = run_json(&["cost", s(&file), "--json", "--peak-tflops", "2"]);
    let t = cost["compute"]["time_us"].as_f64().expect("time");
    assert!((t - 29312.0 / 2e6).abs() < 1e-12, "{t}");
}

#[test]
fn the_table_has_aligned_columns_and_units() {
    let file = root().join("fixtures/jax/mlp_train_step/input.mlir");
    let table = run_ok(&["cost", s(&file), "--topology", "a100-nvlink-8"]);
    assert!(table.contains("on a100-nvlink-8"), "{table}");
    let lines: Vec<&str> = table.lines().collect();
    let header = lines
        .iter()
        .position(|l| l.starts_with('#') && l.contains("bytes/device"))
        .expect("header");
    let rows: Vec<&str> = lines[header + 1..]
        .iter()
        .copied()
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(rows.len() >= 2, "{table}");
    // Right-aligned last column: every row ends where the header ends.
    let width = lines[header].chars().count();
    for r in &rows {
        assert_eq!(r.chars().count(), width, "{table}");
        assert!(r.ends_with(" µs"), "{r}");
        assert!(r.contains(" B ") || r.contains(" KiB "), "{r}");
    }
    for needle in ["communication", "compute", "TFLOP/s", "no overlap"] {
        assert!(table.contains(needle), "{needle}: {table}");
    }
}

#[test]
fn on_two_nodes_the_data_parallel_all_reduce_crosses_infiniband() {
    let file = root().join("tests/cost_data/mlp_2x8.mlir");
    let cost = run_json(&["cost", s(&file), "--json", "--topology", "2x8-h100-ib400"]);
    let c = cost["collectives"].as_array().expect("array");
    assert_eq!(c.len(), 2, "{cost}");
    // Over "model" (8 devices of one node), 512x1024/2 bf16 rows = 512 KiB:
    // 2·(7/8)·512 KiB / 360 GB/s + 14·1 µs.
    assert_eq!(c[0]["axes"], json!(["\"model\""]));
    assert_eq!(c[0]["crosses_nodes"], false);
    let want0 = 1.75 * 524288.0 / 360e3 + 14.0;
    assert!((c[0]["time_us"].as_f64().expect("t") - want0).abs() < 1e-9);
    // Over "data" (d and d+8: two nodes), 4096/8 x 1024 bf16 = 1 MiB:
    // 2·(1/2)·1 MiB / 45 GB/s + 2·5 µs.
    assert_eq!(c[1]["axes"], json!(["\"data\""]));
    assert_eq!(c[1]["crosses_nodes"], true);
    assert_eq!(c[1]["link"], "InfiniBand NDR 400 Gb/s");
    let want1 = 1048576.0 / 45e3 + 10.0;
    assert!((c[1]["time_us"].as_f64().expect("t") - want1).abs() < 1e-9);
    let table = run_ok(&["cost", s(&file), "--topology", "2x8-h100-ib400"]);
    assert!(table.contains("(across nodes)"), "{table}");

    // 16 devices do not fit one 8-GPU node.
    assert_error(
        &["cost", s(&file)],
        &["topology 'h100-nvlink-8' has 8 devices", "device 8"],
    );
}

/// bench-comm rows for 8 devices from α = 2 µs and 40 GB/s (exact).
fn bench_rows() -> Value {
    let mut rows = Vec::new();
    for (op, f, k) in [
        ("all-gather", 7.0 / 8.0, 7.0),
        ("all-reduce", 14.0 / 8.0, 14.0),
    ] {
        for e in 10..=30 {
            let bytes = f64::from(1u32 << e);
            let t = f * bytes / 40e3 + k * 2.0;
            rows.push(json!({"op": op, "bytes": bytes, "time_us": t,
                             "algbw_gbps": bytes / t / 1e3,
                             "busbw_gbps": f * bytes / t / 1e3, "ok": true}));
        }
    }
    Value::Array(rows)
}

#[test]
fn calibration_fits_the_bench_file_and_writes_a_topology_that_cost_uses() {
    let dir = tempfile::tempdir().expect("tmp");
    let bench = dir.path().join("bench.json");
    std::fs::write(&bench, bench_rows().to_string()).expect("write");
    let topo = dir.path().join("fitted.json");

    // Without FILE: the calibrated topology on stdout (or in a file).
    let printed = run_ok(&["cost", "--calibrate", s(&bench), "--topology", "pcie4-8"]);
    let t: Value = serde_json::from_str(&printed).expect("topology JSON");
    assert_eq!(t["name"], "pcie4-8-calibrated");
    let lat = t["intra_node"]["latency_us"].as_f64().expect("latency");
    let bw = t["intra_node"]["bandwidth_gbytes_per_s"]
        .as_f64()
        .expect("bw");
    assert!((lat - 2.0).abs() < 1e-6 && (bw - 40.0).abs() < 1e-6, "{t}");
    run_ok(&[
        "cost",
        "--calibrate",
        s(&bench),
        "--write-topology",
        s(&topo),
    ]);

    // The written file is a topology `cost` takes.
    let file = root().join("fixtures/jax/mlp_forward/input.mlir");
    let cost = run_json(&["cost", s(&file), "--json", "--topology", s(&topo)]);
    assert_eq!(cost["topology"], "h100-nvlink-8-calibrated");
    assert!(
        cost.get("calibration").is_none(),
        "a file is not a calibration"
    );
    let with_fit = run_json(&["cost", s(&file), "--json", "--calibrate", s(&bench)]);
    let fitted = with_fit["calibration"]["latency_us"].as_f64().expect("fit");
    assert!((fitted - 2.0).abs() < 1e-6, "{with_fit}");
    let c0 = &cost["collectives"][0];
    let want = 512.0 / 40e3 + 2.0 * 2.0;
    assert!(
        (c0["time_us"].as_f64().expect("t") - want).abs() < 1e-6,
        "{c0}"
    );

    // --calibrate with FILE: the fit is stated above the table.
    let table = run_ok(&["cost", s(&file), "--calibrate", s(&bench)]);
    assert!(table.starts_with("calibrated from"), "{table}");
    assert!(
        table.contains("α 2 µs per step, bandwidth 40 GB/s"),
        "{table}"
    );
}

#[test]
fn bad_input_is_one_line_and_exit_1() {
    let file = root().join("fixtures/jax/mlp_forward/input.mlir");
    let f = s(&file);
    assert_error(
        &["cost", f, "--topology", "tpu-v5"],
        &[
            "unknown topology 'tpu-v5'",
            "h100-nvlink-8",
            "2x8-h100-ib400",
        ],
    );

    let dir = tempfile::tempdir().expect("tmp");
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        "{\"name\": \"x\", \"nodes\": 1,\n \"devices_per_node\": }",
    )
    .expect("write");
    assert_error(
        &["cost", f, "--topology", s(&bad)],
        &[s(&bad), "malformed topology file", "line 2"],
    );
    let neg = dir.path().join("neg.json");
    let h100 = std::fs::read_to_string(root().join("topologies/h100-nvlink-8.json")).expect("read");
    let mut t: Value = serde_json::from_str(&h100).expect("json");
    t["intra_node"]["bandwidth_gbytes_per_s"] = json!(-1.0);
    std::fs::write(&neg, t.to_string()).expect("write");
    assert_error(
        &["cost", f, "--topology", s(&neg)],
        &["invalid topology", "bandwidth_gbytes_per_s"],
    );

    let missing = dir.path().join("missing-bench.json");
    assert_error(
        &["cost", f, "--calibrate", s(&missing)],
        &[s(&missing), "cannot read"],
    );
    let garbage = dir.path().join("garbage.json");
    std::fs::write(&garbage, "[{\"op\": \"all-gather\"}]").expect("write");
    assert_error(
        &["cost", f, "--calibrate", s(&garbage)],
        &["malformed benchmark file", "row 0"],
    );
    assert_error(
        &["cost", f, "--peak-tflops", "-3"],
        &["--peak-tflops", "'-3'"],
    );
    assert_error(&["cost"], &["give a FILE"]);
    assert_error(
        &["cost", "no/such/program.mlir"],
        &["no/such/program.mlir", "cannot read"],
    );
}

/// The collectives a shard_map body writes are counted by `partition
/// --json` and `cost --json` with the reason "written in shard_map", one
/// for one with XLA's (kind, device groups, bytes per device, in program
/// order), nested shard_maps included.
#[test]
fn shard_map_collectives_are_counted_as_written_in_shard_map() {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("fixtures/jax_shard_map"))
        .expect("fixtures/jax_shard_map")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.join("input.mlir").is_file())
        .collect();
    dirs.sort();
    assert!(
        dirs.len() >= 5,
        "shard_map fixtures present: {}",
        dirs.len()
    );
    for dir in &dirs {
        let file = dir.join("input.mlir");
        let xla: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("xla_collectives.json")).expect("XLA's collectives"),
        )
        .expect("JSON");
        let xla = xla["collectives"].as_array().expect("array");
        for cmd in ["partition", "cost"] {
            let report = run_json(&[cmd, s(&file), "--json"]);
            let ours = report["collectives"].as_array().expect("array");
            let what = format!("{} ({cmd})", dir.display());
            assert_eq!(ours.len(), xla.len(), "{what}: {ours:?}");
            for (o, x) in ours.iter().zip(xla) {
                assert_eq!(o["reason"], json!("written in shard_map"), "{what}");
                assert_eq!(o["kind"], x["kind"], "{what}");
                assert_eq!(o["bytes_per_device"], x["bytes_per_device"], "{what}");
                if x["groups"].as_array().is_some_and(|g| !g.is_empty()) {
                    assert_eq!(o["groups"], x["groups"], "{what}");
                }
            }
        }
    }
}

/// f32 FLOPs per device of `cost --json`.
fn f32_flops(report: &Value) -> f64 {
    report["compute"]["by_dtype"]
        .as_array()
        .expect("by_dtype")
        .iter()
        .find(|d| d["dtype"] == json!("f32"))
        .and_then(|d| d["flops"].as_f64())
        .expect("f32 FLOPs")
}

/// Counted loops (`lax.scan`, `fori_loop`: constant bounds) count their
/// body's collectives and FLOPs once per trip; a loop whose trip count
/// depends on data counts one iteration and says so.
#[test]
fn cost_multiplies_counted_loops_by_their_trips_and_flags_the_others() {
    let regions = root().join("fixtures/jax_regions");
    // Every collective runs as often as XLA's does (the scan's weights
    // gathered once before the loop, per-layer sums once per trip).
    for name in ["scan_mlp", "scan_stack_sharded", "fori_matmul"] {
        let dir = regions.join(name);
        let xla: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("xla_collectives.json")).expect("XLA's"),
        )
        .expect("JSON");
        let key = |c: &Value| {
            format!(
                "{} x{} {} B",
                c["kind"].as_str().unwrap_or("?"),
                c["runs"].as_f64().unwrap_or(f64::NAN),
                c["bytes_per_run"].as_f64().unwrap_or(f64::NAN)
            )
        };
        let mut want: Vec<String> = xla["collectives"]
            .as_array()
            .expect("array")
            .iter()
            .map(key)
            .collect();
        let cost = run_json(&["cost", s(&dir.join("input.mlir")), "--json"]);
        let mut got: Vec<String> = cost["collectives"]
            .as_array()
            .expect("array")
            .iter()
            .map(key)
            .collect();
        want.sort();
        got.sort();
        assert_eq!(got, want, "{name}");
        assert_eq!(cost["trip_count_unknown"], json!(false), "{name}");
        assert!(cost.get("loops").is_none(), "{name}");
    }

    // scan_mlp with its trip count changed: one trip of the body is
    // x[4,32]@w1[32,32] + relu[4,32] + [4,32]@w2[32,32] + add[4,32] per
    // device (the weights' 64 columns/rows are split over model=2).
    let text = std::fs::read_to_string(regions.join("scan_mlp/input.mlir")).expect("input");
    let limit = "%c_3 = stablehlo.constant dense<4> : tensor<i32>";
    assert_eq!(text.matches(limit).count(), 1, "the scan's trip limit");
    let tmp = tempfile::tempdir().expect("tempdir");
    let per_trip = 2.0 * 4.0 * 32.0 * 32.0 * 2.0 + 2.0 * 4.0 * 32.0;
    for trips in [1, 2, 4] {
        let file = tmp.path().join(format!("scan_{trips}.mlir"));
        let body = text.replace(
            limit,
            &format!("%c_3 = stablehlo.constant dense<{trips}> : tensor<i32>"),
        );
        std::fs::write(&file, body).expect("write");
        let cost = run_json(&["cost", s(&file), "--json"]);
        assert_eq!(f32_flops(&cost), trips as f64 * per_trip, "{trips} trips");
        let c = &cost["collectives"][0];
        assert_eq!(c["runs"], json!(trips as f64), "{trips} trips");
        assert_eq!(
            c["bytes_per_device"].as_f64(),
            Some(trips as f64 * 512.0),
            "{trips} trips"
        );
    }

    // A while whose trip count depends on data: one iteration, flagged.
    let file = regions.join("while_data_dependent/input.mlir");
    let cost = run_json(&["cost", s(&file), "--json"]);
    assert_eq!(cost["trip_count_unknown"], json!(true));
    assert_eq!(cost["loops"], json!("per iteration, trip count unknown"));
    let c = &cost["collectives"][0];
    assert_eq!(c["trip_count_unknown"], json!(true));
    assert_eq!(c["runs"], json!(1.0));
    let table = run_ok(&["cost", s(&file)]);
    assert!(
        table.contains("per iteration, trip count unknown"),
        "{table}"
    );
    assert!(table.contains("×?"), "{table}");
}

/// Values in host memory (JAX 0.12's `pinned_host` arguments and results,
/// `jax.device_put(..., memory_kind=...)` inside jit): `cost` charges
/// their copies on the topology's host link, per device's block, and
/// keeps host bytes out of device memory. The fixture's `w1` (16x32 f32,
/// columns over "model"=2: 1 KiB per device) is in pinned_host and read
/// by a dot; its first result (32x8 f32, rows over "data"=4: 256 B) is
/// placed on the host by `@annotate_device_placement`.
#[test]
fn host_memory_values_are_copied_over_the_host_link_and_kept_out_of_device_memory() {
    let file = root().join("fixtures/jax_0_12/host_offload/input.mlir");
    let f = s(&file);
    let c = run_json(&["cost", f, "--json"]);
    let h = &c["host_copies"];
    assert_eq!(h["host_to_device_bytes_per_device"], json!(1024.0), "{h}");
    assert_eq!(h["device_to_host_bytes_per_device"], json!(256.0), "{h}");
    let copies = h["copies"].as_array().expect("copies");
    assert_eq!(copies.len(), 2, "{h}");
    assert_eq!(copies[0]["direction"], json!("host_to_device"));
    assert!(
        copies[0]["for"].as_str().unwrap().contains("dot_general"),
        "{h}"
    );
    assert_eq!(copies[1]["direction"], json!("device_to_host"));
    assert!(
        copies[1]["for"].as_str().unwrap().contains("custom_call"),
        "{h}"
    );
    // 53 GB/s and 5 µs per copy on h100-nvlink-8's PCIe 5.0 link.
    let want_us = (1024.0 / 53e9 + 5e-6 + 256.0 / 53e9 + 5e-6) * 1e6;
    let got_us = h["time_us"].as_f64().unwrap();
    assert!((got_us - want_us).abs() < 1e-9, "{got_us} vs {want_us}");
    let step = c["step_us"].as_f64().unwrap();
    let parts = c["compute"]["time_us"].as_f64().unwrap()
        + c["communication_us"].as_f64().unwrap()
        + got_us;
    assert!((step - parts).abs() < 1e-9, "{step} vs {parts}");
    // Device arguments: w2 32x8 replicated (1 KiB) + x 32x16 over "data"
    // (512 B); host: w1's 1 KiB block + the 256 B result block.
    let m = &c["memory"];
    assert_eq!(m["arguments_bytes"], json!(1536.0), "{m}");
    assert_eq!(m["host_bytes"], json!(1280.0), "{m}");

    let text = run_ok(&["cost", f]);
    for want in [
        "to host memory: PCIe 5.0 x16",
        "host→device",
        "device→host",
        "host copies    1.00 KiB host→device + 256 B device→host per device in 2 copies",
        "= compute + communication + host copies",
        "host memory    1.25 KiB per device",
    ] {
        assert!(text.contains(want), "{want}\n{text}");
    }

    // A topology that does not say how fast the host is reached.
    let dir = tempfile::tempdir().expect("tmp");
    let no_host = dir.path().join("no-host.json");
    let h100 = std::fs::read_to_string(root().join("topologies/h100-nvlink-8.json")).expect("read");
    let mut t: Value = serde_json::from_str(&h100).expect("json");
    t.as_object_mut().unwrap().remove("host_link");
    std::fs::write(&no_host, t.to_string()).expect("write");
    assert_error(
        &["cost", f, "--topology", s(&no_host)],
        &["has no `host_link`", "1280 bytes per device"],
    );
    // ... which programs without host values do not need.
    let mlp = root().join("fixtures/jax/mlp_forward/input.mlir");
    let plain = run_json(&["cost", s(&mlp), "--json", "--topology", s(&no_host)]);
    assert_eq!(plain["host_copies"]["copies"], json!([]));
    assert_eq!(plain["memory"]["host_bytes"], json!(0.0));
}

/// `--memory-per-device` says whether the step fits and by how much; a
/// result written into a donated argument (`donate_argnums`, printed
/// `jax.buffer_donor = true`) takes no memory of its own; the peak names
/// its op and largest values. `tests/cost_data/donated_step.mlir`
/// (JAX 0.10.2: `w - 0.1 * x.T @ tanh(x @ w)` with `w` donated) — XLA's
/// `memory_analysis()` of it on 8 CPU devices: arguments 10240 B, outputs
/// 8212 B, aliased 8192 B, temporaries 16384 B (26644 B in all); meshrun
/// counts 26624 B: the same arguments, the same 16 KiB of temporaries (the
/// element-wise chain fused as XLA fuses it) and a 4 B result where XLA
/// keeps a 20 B tuple.
#[test]
fn memory_per_device_says_whether_it_fits_with_donated_buffers() {
    let file = root().join("tests/cost_data/donated_step.mlir");
    let f = s(&file);
    let c = run_json(&["cost", f, "--json", "--memory-per-device", "32K"]);
    let m = &c["memory"];
    assert_eq!(m["arguments_bytes"], json!(10240.0), "{m}");
    assert_eq!(m["aliased_bytes"], json!(8192.0), "{m}");
    assert_eq!(m["outputs_bytes"], json!(4.0), "{m}");
    assert_eq!(m["total_bytes"], json!(26624.0), "{m}");
    assert!(
        m["peak_at"].as_str().unwrap().starts_with("stablehlo."),
        "{m}"
    );
    assert!(!m["peak_values"].as_array().unwrap().is_empty(), "{m}");
    let cap = &c["memory_cap"];
    assert_eq!(cap["fits"], json!(true), "{cap}");
    assert_eq!(cap["headroom_bytes"], json!(32768.0 - 26624.0), "{cap}");
    let text = run_ok(&["cost", f, "--memory-per-device", "24K"]);
    assert!(
        text.contains("DOES NOT FIT   in 24.0 KiB per device: 2.00 KiB over"),
        "{text}"
    );
    assert!(
        text.contains("8.00 KiB more written into donated arguments"),
        "{text}"
    );
    assert!(text.contains("  peak at      stablehlo."), "{text}");
    // Without donation the result needs its own 8 KiB: at the peak (the
    // products), only its 4 B loss is live beside them.
    let plain = std::fs::read_to_string(&file)
        .unwrap()
        .replace("jax.buffer_donor = true, ", "");
    let dir = tempfile::tempdir().expect("tmp");
    let undonated = dir.path().join("undonated.mlir");
    std::fs::write(&undonated, plain).expect("write");
    let u = run_json(&["cost", s(&undonated), "--json"]);
    assert_eq!(u["memory"]["aliased_bytes"], json!(0.0));
    assert_eq!(u["memory"]["outputs_bytes"], json!(8192.0 + 4.0));
    assert_eq!(u["memory"]["total_bytes"], json!(26628.0));
    assert_error(
        &["cost", f, "--memory-per-device", "lots"],
        &["--memory-per-device"],
    );
}

/// A program with more devices than the topology is refused before it is
/// partitioned; the multi-node built-ins take it.
#[test]
fn a_program_bigger_than_the_topology_is_refused_first() {
    let file = root().join("tests/cost_data/mlp_2x8.mlir");
    let f = s(&file);
    assert_error(
        &["cost", f, "--topology", "h100-nvlink-8"],
        &["has 8 devices but the program uses device 8"],
    );
    for topo in [
        "2x8-h100-ib400",
        "8x8-h100-ib400",
        "32x8-h100-ib400",
        "32x8-a100-ib200",
    ] {
        let c = run_json(&["cost", f, "--json", "--topology", topo]);
        assert_eq!(c["topology"], json!(topo));
    }
}

/// Overlap: an async reduce-scatter (`psum_scatter_start(...).done()`)
/// hides behind the compute written between start and done; the
/// Megatron forward's all-reduces, each feeding the next layer, hide
/// behind nothing. Compute made slow (`--peak-tflops 0.0001`) so that it
/// can cover the collectives.
#[test]
fn overlap_hides_collectives_behind_independent_compute_only() {
    let slow = ["--json", "--peak-tflops", "0.0001"];
    let file = root().join("fixtures/jax_0_12/async_psum_scatter/input.mlir");
    let mut args = vec!["cost", s(&file)];
    args.extend(slow);
    let c = run_json(&args);
    let comm = c["communication_us"].as_f64().unwrap();
    let compute = c["compute"]["time_us"].as_f64().unwrap();
    assert!(comm > 0.0 && compute > comm, "{c}");
    assert!((c["overlap"]["hidden_us"].as_f64().unwrap() - comm).abs() < 1e-9);
    assert!((c["overlap"]["step_us"].as_f64().unwrap() - compute).abs() < 1e-9);
    let text = run_ok(&["cost", s(&file), "--peak-tflops", "0.0001"]);
    assert!(
        text.contains("with overlap   5.76 µs = 3.00 µs of communication hidden"),
        "{text}"
    );

    let file = root().join("fixtures/jax/mlp_forward/input.mlir");
    let mut args = vec!["cost", s(&file)];
    args.extend(slow);
    let c = run_json(&args);
    assert_eq!(c["overlap"]["hidden_us"], 0.0, "{c}");
    // A training step's gradient all-reduces hide behind the backward
    // compute they do not feed.
    let file = root().join("fixtures/jax/mlp_train_step/input.mlir");
    let mut args = vec!["cost", s(&file)];
    args.extend(slow);
    let c = run_json(&args);
    let hidden = c["overlap"]["hidden_us"].as_f64().unwrap();
    assert!(hidden > 0.0, "{c}");
}
