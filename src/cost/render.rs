//! Printing a [`CostReport`]: an aligned table with units for people, and
//! the cost fields added to the partitioner's JSON report for tools.

use serde_json::{json, Map, Value};

use crate::cost::memory::{MemoryEstimate, PeakDetail};
use crate::cost::report::CostReport;
use crate::cost::topology::Link;

/// `x` with three significant digits (`512`, `4.20`, `0.000265`): a
/// measurement-like number whose precision the reader can see.
pub fn three_digits(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let magnitude = x.abs().log10().floor() as i64;
    let decimals = (2 - magnitude).clamp(0, 15) as usize;
    format!("{x:.decimals$}")
}

/// [`three_digits`] without the trailing zeros (`4.2`, `2`): for numbers
/// that are given rather than estimated, and for fitted values.
pub fn significant(x: f64) -> String {
    let s = three_digits(x);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Bytes in B, KiB, MiB or GiB (whole bytes as integers).
pub fn human_bytes(bytes: f64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes;
    let mut u = 0;
    while v.abs() >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 && v.fract() == 0.0 {
        return format!("{v} B");
    }
    format!("{} {}", three_digits(v), units[u])
}

/// Seconds in ns, µs, ms or s.
pub fn human_time(seconds: f64) -> String {
    let us = seconds * 1e6;
    if us == 0.0 {
        "0 µs".to_string()
    } else if us.abs() < 1.0 {
        format!("{} ns", three_digits(us * 1e3))
    } else if us.abs() < 1000.0 {
        format!("{} µs", three_digits(us))
    } else if us.abs() < 1e6 {
        format!("{} ms", three_digits(us / 1e3))
    } else {
        format!("{} s", three_digits(seconds))
    }
}

/// FLOPs with an SI prefix (`131 kFLOP`, `2.10 GFLOP`).
pub fn human_flops(flops: f64) -> String {
    let units = ["FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP"];
    // `+ 0.0` turns -0 (the sum of no f64s) into 0.
    let mut v = flops + 0.0;
    let mut u = 0;
    while v.abs() >= 1000.0 && u + 1 < units.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 && v.fract() == 0.0 {
        return format!("{v} FLOP");
    }
    format!("{} {}", three_digits(v), units[u])
}

fn describe_link(l: &Link) -> String {
    let peak = l
        .peak_gbytes_per_s
        .map(|p| format!(" (line rate {p} GB/s)"))
        .unwrap_or_default();
    format!(
        "{}: {} GB/s bus bandwidth{peak}, α {} µs per step",
        l.name,
        significant(l.bandwidth_gbytes_per_s),
        significant(l.latency_us)
    )
}

/// `what` with how often it runs in a step: `all-reduce ×8` in a counted
/// loop, `all-reduce ×?` in a loop whose trip count depends on data (one
/// iteration counted), bare when it runs once.
pub fn with_runs(what: &str, runs: f64, trip_count_unknown: bool) -> String {
    if trip_count_unknown {
        format!("{what} ×?")
    } else if runs != 1.0 {
        format!("{what} ×{runs}")
    } else {
        what.to_string()
    }
}

/// Columns padded to their widest cell; `right[i]` right-aligns column i.
pub fn table(header: &[&str], rows: &[Vec<String>], right: &[bool]) -> String {
    let width = |i: usize| {
        rows.iter()
            .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
            .chain(std::iter::once(header[i].chars().count()))
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..header.len()).map(width).collect();
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let pad = widths[i].saturating_sub(cell.chars().count());
            if i > 0 {
                s.push_str("  ");
            }
            if right.get(i).copied().unwrap_or(false) {
                s.push_str(&" ".repeat(pad));
                s.push_str(cell);
            } else {
                s.push_str(cell);
                s.push_str(&" ".repeat(pad));
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(header.to_vec());
    for r in rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    out
}

/// One row per communicating collective: kind, the op that needs it,
/// axes, group size, bytes per device, link and time.
pub fn collectives_table(r: &CostReport) -> String {
    if r.collectives.is_empty() {
        return "no communicating collectives\n".to_string();
    }
    let rows: Vec<Vec<String>> = r
        .collectives
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let e = &c.entry;
            let est = &c.estimate;
            let axes = if e.axes.is_empty() {
                "-".to_string()
            } else {
                e.axes.join(",")
            };
            let group = if e.kind == "collective-permute" {
                "pairs".to_string()
            } else {
                est.group_size.to_string()
            };
            let link = if est.seconds == 0.0 {
                "-".to_string()
            } else if est.crosses_nodes {
                format!("{} (across nodes)", est.link.name)
            } else {
                est.link.name.clone()
            };
            let kind = with_runs(&e.kind, e.runs, e.trip_count_unknown);
            vec![
                (i + 1).to_string(),
                kind,
                e.op.clone(),
                axes,
                group,
                human_bytes(e.bytes_per_device),
                link,
                human_time(est.seconds),
            ]
        })
        .collect();
    table(
        &[
            "#",
            "kind",
            "op",
            "axes",
            "group",
            "bytes/device",
            "link",
            "time",
        ],
        &rows,
        &[true, false, false, false, true, true, false, true],
    )
}

/// One row per host↔device copy: direction, what needs it, bytes per
/// device and time on the host link.
pub fn host_copies_table(r: &CostReport) -> String {
    let rows: Vec<Vec<String>> = r
        .host_copies
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let t = &c.transfer;
            let dir = with_runs(t.direction.name(), t.runs, t.trip_count_unknown);
            vec![
                (i + 1).to_string(),
                dir,
                t.what.clone(),
                human_bytes(t.bytes()),
                human_time(c.seconds),
            ]
        })
        .collect();
    table(
        &["#", "copy", "for", "bytes/device", "time"],
        &rows,
        &[true, false, false, true, true],
    )
}

/// The memory of one device for people: the total, arguments and peak of
/// live values (results and aliasing within it), where the peak is and
/// its largest values, and host memory apart.
pub fn memory_lines(m: &MemoryEstimate, peak: Option<&PeakDetail>) -> String {
    let mut out = format!(
        "memory         {} per device = arguments {} + peak of live values {}\n",
        human_bytes(m.total_bytes()),
        human_bytes(m.arguments_bytes),
        human_bytes(m.peak_live_bytes)
    );
    if m.outputs_bytes > 0.0 || m.aliased_bytes > 0.0 {
        let aliased = if m.aliased_bytes > 0.0 {
            format!(
                " ({} more written into donated arguments)",
                human_bytes(m.aliased_bytes)
            )
        } else {
            String::new()
        };
        out.push_str(&format!(
            "  results      {} of the peak{aliased}\n",
            human_bytes(m.outputs_bytes)
        ));
    }
    if let Some(p) = peak {
        let values: Vec<String> = p
            .values
            .iter()
            .map(|(name, ty, bytes)| format!("{name} {ty} {}", human_bytes(*bytes)))
            .collect();
        out.push_str(&format!("  peak at      {}: {}\n", p.op, values.join(", ")));
    }
    if m.host_bytes > 0.0 {
        out.push_str(&format!(
            "host memory    {} per device (pinned_host values, not in device memory)\n",
            human_bytes(m.host_bytes)
        ));
    }
    out
}

/// The report for people; `what` names the program (its file).
pub fn render_table(r: &CostReport, what: &str) -> String {
    let t = &r.topology;
    let mut out = format!("cost of {what} on {}", t.name);
    if !t.description.is_empty() {
        out.push_str(&format!(": {}", t.description));
    }
    out.push('\n');
    out.push_str(&format!(
        "model: α-β per collective (nccl-tests bus bandwidth), {} devices\n",
        r.num_devices
    ));
    out.push_str(&format!(
        "  within a node:  {}\n",
        describe_link(&t.intra_node)
    ));
    if let Some(inter) = &t.inter_node {
        out.push_str(&format!(
            "  between nodes:  {} (device d on node d / {})\n",
            describe_link(inter),
            t.devices_per_node
        ));
    }
    if let (Some(host), false) = (&t.host_link, r.host_copies.is_empty()) {
        out.push_str(&format!("  to host memory: {}\n", describe_link(host)));
    }
    out.push('\n');
    out.push_str(&collectives_table(r));
    if !r.host_copies.is_empty() {
        out.push('\n');
        out.push_str(&host_copies_table(r));
    }
    out.push('\n');
    out.push_str(&format!(
        "communication  {} per device in {} collective(s): {}\n",
        human_bytes(r.total_bytes_per_device),
        r.collectives.len(),
        human_time(r.communication_seconds)
    ));
    let c = &r.compute;
    let parts: Vec<String> = c
        .by_dtype
        .iter()
        .map(|d| {
            format!(
                "{} {} at {} TFLOP/s{}",
                d.elem,
                human_flops(d.flops),
                d.peak_tflops,
                if c.peak_overridden {
                    " (--peak-tflops)"
                } else {
                    ""
                }
            )
        })
        .collect();
    let detail = if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    };
    out.push_str(&format!(
        "compute        {} per device{detail}: {}\n",
        human_flops(c.flops),
        human_time(c.seconds)
    ));
    if !r.host_copies.is_empty() {
        out.push_str(&format!(
            "host copies    {} host→device + {} device→host per device in {} copies: {}\n",
            human_bytes(r.host_to_device_bytes),
            human_bytes(r.device_to_host_bytes),
            r.host_copies.len(),
            human_time(r.host_copy_seconds)
        ));
        out.push_str(&format!(
            "step estimate  {} = compute + communication + host copies (no overlap assumed)\n",
            human_time(r.step_seconds)
        ));
    } else {
        out.push_str(&format!(
            "step estimate  {} = compute + communication (no overlap assumed)\n",
            human_time(r.step_seconds)
        ));
    }
    out.push_str(&format!(
        "with overlap   {} = {} of communication hidden behind compute that does not depend on it\n",
        human_time(r.overlapped_step_seconds),
        human_time(r.hidden_seconds)
    ));
    out.push_str(&memory_lines(&r.memory, r.peak.as_ref()));
    if let Some(cap) = r.memory_cap {
        let total = r.memory.total_bytes();
        if total <= cap {
            out.push_str(&format!(
                "fits           in {} per device, {} to spare ({:.0}% used)\n",
                human_bytes(cap),
                human_bytes(cap - total),
                100.0 * total / cap
            ));
        } else {
            out.push_str(&format!(
                "DOES NOT FIT   in {} per device: {} over ({:.0}% of it)\n",
                human_bytes(cap),
                human_bytes(total - cap),
                100.0 * total / cap
            ));
        }
    }
    if r.trip_count_unknown {
        out.push_str(
            "loops          per iteration, trip count unknown: a loop's trip count depends on data; \
             its body is counted once\n",
        );
    }
    out
}

/// Add the cost fields to `doc`, the partitioner's JSON report of the same
/// program (`meshrun partition --json`): per collective (in the same
/// order) and at the top level. Times are in µs.
pub fn annotate_json(doc: &mut Value, r: &CostReport) {
    if let Some(Value::Array(items)) = doc.get_mut("collectives") {
        for (item, c) in items.iter_mut().zip(&r.collectives) {
            if let Value::Object(obj) = item {
                let e = &c.estimate;
                obj.insert("group_size".into(), json!(e.group_size));
                obj.insert("nccl_bytes".into(), json!(e.nccl_bytes));
                obj.insert("bus_bytes".into(), json!(e.bus_bytes));
                obj.insert("link".into(), json!(e.link.name));
                obj.insert("crosses_nodes".into(), json!(e.crosses_nodes));
                obj.insert(
                    "bandwidth_gbytes_per_s".into(),
                    json!(e.link.bandwidth_gbytes_per_s),
                );
                obj.insert("latency_us".into(), json!(e.link.latency_us));
                obj.insert("latency_steps".into(), json!(e.latency_steps));
                obj.insert("time_us".into(), json!(e.seconds * 1e6));
            }
        }
    }
    let Value::Object(top) = doc else {
        return;
    };
    let compute = &r.compute;
    let by_dtype: Vec<Value> = compute
        .by_dtype
        .iter()
        .map(|d| {
            json!({
                "dtype": d.elem.name(),
                "flops": d.flops,
                "peak_tflops": d.peak_tflops,
                "time_us": d.seconds * 1e6,
            })
        })
        .collect();
    let mut extra = Map::new();
    extra.insert("topology".into(), json!(r.topology.name));
    extra.insert(
        "communication_us".into(),
        json!(r.communication_seconds * 1e6),
    );
    extra.insert(
        "compute".into(),
        json!({
            "flops_per_device": compute.flops,
            "time_us": compute.seconds * 1e6,
            "peak_overridden": compute.peak_overridden,
            "by_dtype": by_dtype,
        }),
    );
    let copies: Vec<Value> = r
        .host_copies
        .iter()
        .map(|c| {
            let t = &c.transfer;
            json!({
                "direction": match t.direction {
                    crate::cost::host::Direction::ToDevice => "host_to_device",
                    crate::cost::host::Direction::ToHost => "device_to_host",
                },
                "for": t.what,
                "bytes_per_run": t.bytes_per_run,
                "runs": t.runs,
                "trip_count_unknown": t.trip_count_unknown,
                "bytes_per_device": t.bytes(),
                "time_us": c.seconds * 1e6,
            })
        })
        .collect();
    extra.insert(
        "host_copies".into(),
        json!({
            "link": r.topology.host_link.as_ref().map(|l| l.name.clone()),
            "host_to_device_bytes_per_device": r.host_to_device_bytes,
            "device_to_host_bytes_per_device": r.device_to_host_bytes,
            "time_us": r.host_copy_seconds * 1e6,
            "copies": copies,
        }),
    );
    if let Some(cap) = r.memory_cap {
        let m = &r.memory;
        extra.insert(
            "memory_cap".into(),
            json!({
                "bytes": cap,
                "fits": m.total_bytes() <= cap,
                "headroom_bytes": cap - m.total_bytes(),
            }),
        );
    }
    extra.insert("step_us".into(), json!(r.step_seconds * 1e6));
    if r.trip_count_unknown {
        extra.insert("loops".into(), json!("per iteration, trip count unknown"));
    }
    extra.insert(
        "overlap".into(),
        json!({
            "step_us": r.overlapped_step_seconds * 1e6,
            "hidden_us": r.hidden_seconds * 1e6,
        }),
    );
    top.extend(extra);
}
