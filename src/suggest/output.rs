//! What `meshrun suggest` prints: the chosen sharding of every argument
//! (Shardy syntax and as a JAX `PartitionSpec`), why, the predicted time
//! and memory next to the current shardings', the collectives, and the
//! alternatives; or the same as JSON.

use serde_json::{json, Value};

use meshrun_compiler::sharding::{DimSharding, TensorSharding};

use crate::cost::render::{collectives_table, human_bytes, human_flops, human_time, table};
use crate::suggest::scoring::{Assignment, Evaluation, Score};
use crate::suggest::Suggestion;

/// The sharding as a JAX `PartitionSpec`: `P("data", None)`,
/// `P(("data", "model"), None)`, `P()` for a scalar. A sub-axis, which a
/// `PartitionSpec` cannot name, is written in Shardy's notation.
pub fn partition_spec(s: &TensorSharding) -> String {
    let dim = |d: &DimSharding| match d.axes.as_slice() {
        [] => "None".to_string(),
        [a] if a.sub.is_none() => format!("\"{}\"", a.name),
        axes => {
            let names: Vec<String> = axes
                .iter()
                .map(|a| match a.sub {
                    None => format!("\"{}\"", a.name),
                    Some(_) => a.to_string(),
                })
                .collect();
            if names.len() == 1 {
                names[0].clone()
            } else {
                format!("({})", names.join(", "))
            }
        }
    };
    let dims: Vec<String> = s.dims.iter().map(dim).collect();
    format!("P({})", dims.join(", "))
}

fn shape_text(shape: &[i64]) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    dims.join("x")
}

/// "step 68.2 µs, 12.0 MiB/device"
fn score_text(s: &Score) -> String {
    format!(
        "{}, {}/device",
        human_time(s.step_s),
        human_bytes(s.memory_bytes)
    )
}

/// The arguments of `a` that differ from `chosen`, as `name P(...)`.
fn differences(sugg: &Suggestion, a: &Assignment) -> String {
    let diffs: Vec<String> = a
        .iter()
        .zip(&sugg.chosen.assignment)
        .enumerate()
        .filter(|(_, (x, y))| x != y)
        .map(|(i, (x, _))| format!("{} {}", sugg.args[i].name, partition_spec(x)))
        .collect();
    if diffs.is_empty() {
        "same shardings".into()
    } else {
        diffs.join(", ")
    }
}

/// The report for people; `what` names the program (its file).
pub fn render_text(s: &Suggestion, what: &str) -> String {
    let mut out = format!(
        "suggested sharding of {what} on {} ({} devices), mesh @{} = {}\n",
        s.chosen.cost.topology.name, s.chosen.cost.num_devices, s.mesh.name, s.mesh.mesh
    );
    out.push_str(&format!(
        "searched {} assignments from {} annotation sets completed by propagation ({} rounds of decisions, {} of single moves{}) in {}\n\n",
        s.evaluated,
        s.completed,
        s.rounds,
        s.polish_rounds,
        if s.failed > 0 { format!(", {} did not compile", s.failed) } else { String::new() },
        human_time(s.seconds)
    ));

    let rows: Vec<Vec<String>> = s
        .args
        .iter()
        .map(|a| {
            let sh = &s.chosen.assignment[a.index];
            vec![
                a.name.clone(),
                shape_text(&a.shape),
                sh.to_string(),
                partition_spec(sh),
            ]
        })
        .collect();
    out.push_str(&table(
        &["argument", "shape", "sharding", "PartitionSpec"],
        &rows,
        &[false, false, false, false],
    ));
    out.push_str("\nwhy\n");
    for r in &s.reasons {
        out.push_str(&format!("  {}: {}\n", s.args[r.index].name, r.text));
    }

    let base_label = if s.baseline_replicated {
        "replicated (no shardings given)"
    } else {
        "current shardings"
    };
    out.push('\n');
    out.push_str(&side_by_side(
        &s.chosen,
        &s.baseline,
        base_label,
        s.memory_cap,
    ));

    out.push_str("\ncollectives of the suggestion\n");
    out.push_str(&collectives_table(&s.chosen.cost));

    if !s.alternatives.is_empty() {
        out.push_str("\nalternatives (what differs from the suggestion)\n");
        for (k, alt) in s.alternatives.iter().enumerate() {
            out.push_str(&format!(
                "  {}. {}{}: {}\n",
                k + 1,
                score_text(&alt.score),
                if alt.score.fits {
                    ""
                } else {
                    " (over the cap)"
                },
                differences(s, &alt.assignment)
            ));
        }
    }
    out
}

/// The suggestion's numbers next to the baseline's.
fn side_by_side(
    chosen: &Evaluation,
    base: &Evaluation,
    base_label: &str,
    cap: Option<f64>,
) -> String {
    let col = |e: &Evaluation| {
        vec![
            human_time(e.cost.step_seconds),
            human_time(e.cost.compute.seconds),
            human_flops(e.cost.compute.flops),
            format!(
                "{} in {}",
                human_time(e.cost.communication_seconds),
                e.cost.collectives.len()
            ),
            human_bytes(e.cost.total_bytes_per_device),
            human_bytes(e.memory.total_bytes()),
            human_bytes(e.memory.arguments_bytes),
            human_bytes(e.memory.peak_live_bytes),
        ]
    };
    let labels = [
        "predicted step time",
        "  compute",
        "  FLOPs per device",
        "  communication",
        "  bytes received per device",
        "memory per device",
        "  arguments",
        "  peak of live values",
    ];
    let (a, b) = (col(chosen), col(base));
    let mut rows: Vec<Vec<String>> = labels
        .iter()
        .zip(a.into_iter().zip(b))
        .map(|(l, (x, y))| vec![l.to_string(), x, y])
        .collect();
    if let Some(cap) = cap {
        rows.push(vec![
            "memory cap".into(),
            human_bytes(cap),
            if base.memory.total_bytes() > cap {
                "exceeded".into()
            } else {
                "fits".into()
            },
        ]);
    }
    table(&["", "suggested", base_label], &rows, &[false, true, true])
}

fn collectives_json(e: &Evaluation) -> Value {
    Value::Array(
        e.cost
            .collectives
            .iter()
            .map(|c| {
                json!({
                    "kind": c.entry.kind,
                    "op": c.entry.op,
                    "reason": c.entry.reason,
                    "axes": c.entry.axes,
                    "group_size": c.estimate.group_size,
                    "bytes_per_device": c.entry.bytes_per_device,
                    "time_us": c.estimate.seconds * 1e6,
                })
            })
            .collect(),
    )
}

fn totals_json(e: &Evaluation) -> Value {
    json!({
        "predicted_step_us": e.cost.step_seconds * 1e6,
        "compute_us": e.cost.compute.seconds * 1e6,
        "communication_us": e.cost.communication_seconds * 1e6,
        "flops_per_device": e.cost.compute.flops,
        "bytes_received_per_device": e.cost.total_bytes_per_device,
        "memory_per_device_bytes": e.memory.total_bytes(),
        "argument_bytes_per_device": e.memory.arguments_bytes,
        "peak_live_bytes_per_device": e.memory.peak_live_bytes,
    })
}

fn arguments_json(s: &Suggestion, a: &Assignment) -> Value {
    Value::Array(
        s.args
            .iter()
            .map(|arg| {
                let sh = &a[arg.index];
                json!({
                    "index": arg.index,
                    "name": arg.name,
                    "shape": arg.shape,
                    "sharding": sh.to_string(),
                    "partition_spec": partition_spec(sh),
                    "spec": crate::plan::sharding_json(sh)["spec"],
                })
            })
            .collect(),
    )
}

/// The JSON document (see the README).
pub fn render_json(s: &Suggestion) -> Value {
    let mut args = arguments_json(s, &s.chosen.assignment);
    if let Value::Array(items) = &mut args {
        for (item, r) in items.iter_mut().zip(&s.reasons) {
            if let Value::Object(o) = item {
                o.insert("why".into(), json!(r.text));
                o.insert("fixed".into(), json!(s.args[r.index].fixed));
            }
        }
    }
    let mut doc = totals_json(&s.chosen);
    let mut baseline = totals_json(&s.baseline);
    if let Value::Object(b) = &mut baseline {
        b.insert(
            "kind".into(),
            json!(if s.baseline_replicated {
                "replicated"
            } else {
                "given"
            }),
        );
        b.insert(
            "arguments".into(),
            arguments_json(s, &s.baseline.assignment),
        );
        b.insert("collectives".into(), collectives_json(&s.baseline));
    }
    let alternatives: Vec<Value> = s
        .alternatives
        .iter()
        .map(|a| {
            json!({
                "predicted_step_us": a.score.step_s * 1e6,
                "memory_per_device_bytes": a.score.memory_bytes,
                "fits": a.score.fits,
                "arguments": arguments_json(s, &a.assignment),
            })
        })
        .collect();
    if let Value::Object(o) = &mut doc {
        o.insert(
            "mesh".into(),
            crate::plan::mesh_json(&s.mesh.name, &s.mesh.mesh),
        );
        o.insert("topology".into(), json!(s.chosen.cost.topology.name));
        o.insert("memory_cap_bytes".into(), json!(s.memory_cap));
        o.insert("arguments".into(), args);
        o.insert("collectives".into(), collectives_json(&s.chosen));
        o.insert("baseline".into(), baseline);
        o.insert("alternatives".into(), Value::Array(alternatives));
        o.insert(
            "search".into(),
            json!({
                "evaluated": s.evaluated,
                "failed": s.failed,
                "partial_assignments_completed": s.completed,
                "group_rounds": s.rounds,
                "single_rounds": s.polish_rounds,
                "seconds": s.seconds,
            }),
        );
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::*;
    use meshrun_compiler::sharding::AxisRef;

    #[test]
    fn partition_specs() {
        let d =
            |axes: &[&str]| DimSharding::closed(axes.iter().map(|a| AxisRef::full(*a)).collect());
        let s = TensorSharding::new("mesh", vec![d(&["data"]), d(&[])]);
        assert_eq!(partition_spec(&s), r#"P("data", None)"#);
        let s = TensorSharding::new("mesh", vec![d(&[]), d(&["data", "model"])]);
        assert_eq!(partition_spec(&s), r#"P(None, ("data", "model"))"#);
        assert_eq!(partition_spec(&TensorSharding::new("mesh", vec![])), "P()");
    }
}
