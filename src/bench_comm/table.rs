//! The table for people, laid out like nccl-tests' output: one line per op
//! and size, wrong results marked `WRONG`, and the average bus bandwidth.

use std::fmt::Write;

use super::row::Row;

/// The rows as a table (a `#` header, one line per row, a `#` footer).
pub fn render_table(rows: &[Row]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "#{:>19} {:>12} {:>11} {:>5} {:>11} {:>11} {:>11} {:>6}",
        "op", "size(B)", "count", "type", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "check"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{:>20} {:>12} {:>11} {:>5} {:>11.2} {:>11.3} {:>11.3} {:>6}",
            r.op,
            r.bytes,
            r.count,
            r.dtype,
            r.time_us,
            r.algbw_gbps,
            r.busbw_gbps,
            if r.ok { "ok" } else { "WRONG" }
        );
    }
    for r in rows.iter().filter(|r| !r.ok) {
        let _ = writeln!(
            s,
            "# WRONG: {} at {} bytes: {}",
            r.op,
            r.bytes,
            r.error.as_deref().unwrap_or("wrong result")
        );
    }
    if !rows.is_empty() {
        let avg = rows.iter().map(|r| r.busbw_gbps).sum::<f64>() / rows.len() as f64;
        let _ = writeln!(s, "# Avg bus bandwidth    : {avg:.3} GB/s");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(op: &str, ok: bool) -> Row {
        Row {
            op: op.into(),
            bytes: 4096,
            count: 1024,
            dtype: "f32".into(),
            time_us: 10.0,
            algbw_gbps: 0.4096,
            busbw_gbps: 0.3584,
            ok,
            ranks: 8,
            error: (!ok).then(|| "device 3: wrong at element 7".into()),
        }
    }

    #[test]
    fn wrong_rows_are_marked_and_explained() {
        let t = render_table(&[row("all-gather", true), row("all-reduce", false)]);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[1].contains("all-gather") && lines[1].trim_end().ends_with("ok"));
        assert!(lines[2].contains("all-reduce") && lines[2].trim_end().ends_with("WRONG"));
        assert!(
            t.contains("# WRONG: all-reduce at 4096 bytes: device 3"),
            "{t}"
        );
        assert!(t.contains("0.358"), "{t}");
    }
}
