//! Topologies as data: the built-ins, user files, and what a bad file says.

use std::path::Path;

use meshrun::compiler::ir::ElemType;
use meshrun::cost::{CostError, Topology, DEFAULT_TOPOLOGY};

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write");
    path
}

#[test]
fn every_builtin_loads_and_the_files_in_topologies_are_the_builtins() {
    let names = Topology::builtin_names();
    assert_eq!(
        names,
        [
            "h100-nvlink-8",
            "a100-nvlink-8",
            "pcie4-8",
            "2x8-h100-ib400",
            "8x8-h100-ib400",
            "32x8-h100-ib400",
            "32x8-a100-ib200"
        ]
    );
    assert!(names.contains(&DEFAULT_TOPOLOGY));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("topologies");
    for name in names {
        let t = Topology::builtin(name).expect("built-in loads");
        assert_eq!(t.name, name);
        let from_file = Topology::from_file(&dir.join(format!("{name}.json"))).expect("file");
        assert_eq!(t, from_file, "{name}");
        assert!(
            !t.notes.is_empty(),
            "{name} says where its numbers come from"
        );
    }
}

#[test]
fn builtin_numbers_are_the_documented_ones() {
    let h100 = Topology::builtin("h100-nvlink-8").expect("h100");
    assert_eq!(h100.num_devices(), 8);
    assert_eq!(h100.intra_node.bandwidth_gbytes_per_s, 360.0);
    assert_eq!(h100.intra_node.peak_gbytes_per_s, Some(450.0));
    assert_eq!(h100.peak_tflops_for(ElemType::BF16), 989.4);
    assert_eq!(h100.peak_tflops_for(ElemType::F32), 494.7);
    // No entry for i32: f32's peak.
    assert_eq!(h100.peak_tflops_for(ElemType::I32), 494.7);

    let two = Topology::builtin("2x8-h100-ib400").expect("2x8");
    assert_eq!(two.num_devices(), 16);
    let ib = two.inter_node.as_ref().expect("network link");
    assert_eq!(ib.peak_gbytes_per_s, Some(50.0)); // 400 Gb/s
    assert!(ib.bandwidth_gbytes_per_s < two.intra_node.bandwidth_gbytes_per_s);
}

#[test]
fn devices_sit_on_node_d_div_8_and_crossing_groups_take_the_network() {
    let t = Topology::builtin("2x8-h100-ib400").expect("2x8");
    assert_eq!(t.node_of(0).expect("0"), 0);
    assert_eq!(t.node_of(7).expect("7"), 0);
    assert_eq!(t.node_of(8).expect("8"), 1);
    assert_eq!(t.node_of(15).expect("15"), 1);
    assert!(matches!(
        t.node_of(16),
        Err(CostError::DeviceOutsideTopology { device: 16, .. })
    ));
    assert!(t.node_of(-1).is_err());

    let inside = t.link_for(&[8, 9, 10, 15]).expect("link");
    assert!(!inside.crosses_nodes);
    assert_eq!(inside.link, t.intra_node);
    let across = t.link_for(&[6, 7, 8, 9]).expect("link");
    assert!(across.crosses_nodes);
    assert_eq!(Some(&across.link), t.inter_node.as_ref());
}

#[test]
fn resolve_takes_a_builtin_name_or_a_file() {
    assert_eq!(Topology::resolve("pcie4-8").expect("name").name, "pcie4-8");
    let dir = tempfile::tempdir().expect("tmp");
    let mut mine = Topology::builtin("a100-nvlink-8").expect("a100");
    mine.name = "my-cluster".into();
    mine.intra_node.latency_us = 0.5;
    let path = write(&dir, "mine.json", &mine.to_json());
    let back = Topology::resolve(path.to_str().expect("utf-8")).expect("file");
    assert_eq!(back, mine);
}

#[test]
fn an_unknown_name_lists_the_builtins() {
    let err = Topology::resolve("h200-nvlink-8").expect_err("unknown");
    assert!(matches!(err, CostError::UnknownTopology { .. }));
    let msg = err.to_string();
    assert!(msg.contains("'h200-nvlink-8'"), "{msg}");
    for name in Topology::builtin_names() {
        assert!(msg.contains(name), "{msg}");
    }
    assert_eq!(msg.lines().count(), 1);
}

#[test]
fn a_missing_file_says_it_cannot_be_read() {
    let err = Topology::resolve("no/such/topology.json").expect_err("missing");
    assert!(matches!(err, CostError::Io { .. }), "{err:?}");
    assert!(err
        .to_string()
        .contains("no/such/topology.json: cannot read"));
}

#[test]
fn malformed_files_name_the_file_and_the_place() {
    let dir = tempfile::tempdir().expect("tmp");
    let cases = [
        ("syntax.json", "{\"name\": \"x\",\n \"nodes\": }", "line 2"),
        (
            "missing.json",
            r#"{"name": "x", "nodes": 1, "devices_per_node": 8,
                "intra_node": {"name": "l", "bandwidth_gbytes_per_s": 10},
                "peak_tflops": {"f32": 1}}"#,
            "missing field `latency_us`",
        ),
        (
            "typo.json",
            r#"{"name": "x", "nodes": 1, "devices_per_node": 8, "bandwith": 3,
                "intra_node": {"name": "l", "bandwidth_gbytes_per_s": 10, "latency_us": 1},
                "peak_tflops": {"f32": 1}}"#,
            "unknown field `bandwith`",
        ),
    ];
    for (file, text, needle) in cases {
        let path = write(&dir, file, text);
        let err = Topology::from_file(&path).expect_err(file);
        assert!(
            matches!(err, CostError::MalformedTopology { .. }),
            "{err:?}"
        );
        let msg = err.to_string();
        assert!(msg.starts_with(&path.display().to_string()), "{msg}");
        assert!(msg.contains(needle), "{file}: {msg}");
        assert_eq!(msg.lines().count(), 1, "{msg}");
    }
}

/// Makes a good topology bad.
type Spoil = fn(&mut Topology);

#[test]
fn impossible_values_are_rejected() {
    let base = Topology::builtin("2x8-h100-ib400").expect("2x8");
    let cases: Vec<(Spoil, &str)> = vec![
        (
            (|t| t.intra_node.bandwidth_gbytes_per_s = 0.0),
            "intra_node.bandwidth_gbytes_per_s",
        ),
        (
            (|t| t.intra_node.latency_us = -1.0),
            "intra_node.latency_us",
        ),
        ((|t| t.inter_node = None), "no `inter_node`"),
        ((|t| t.devices_per_node = 0), "devices_per_node"),
        ((|t| t.nodes = 0), "nodes"),
        (
            (|t| {
                t.peak_tflops.remove("f32");
            }),
            "no `f32` entry",
        ),
        (
            (|t| {
                t.peak_tflops.insert("fp8".into(), 1.0);
            }),
            "unknown element type 'fp8'",
        ),
        (
            (|t| {
                t.peak_tflops.insert("bf16".into(), -3.0);
            }),
            "peak_tflops.bf16",
        ),
    ];
    for (spoil, needle) in cases {
        let mut t = base.clone();
        spoil(&mut t);
        let err = Topology::from_json(&t.to_json(), "t.json").expect_err(needle);
        assert!(matches!(err, CostError::InvalidTopology { .. }), "{err:?}");
        let msg = err.to_string();
        assert!(msg.starts_with("t.json: invalid topology: "), "{msg}");
        assert!(msg.contains(needle), "{needle}: {msg}");
    }
}
