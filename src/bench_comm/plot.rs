//! `bench-comm --plot FILE.svg`: bus bandwidth and time against size, one
//! line per op, size on a log₂ axis (nccl-tests' sizes double), values on
//! log₁₀ axes (a zero-copy op's "bandwidth" would otherwise flatten every
//! other line).

use std::path::Path;

use plotters::prelude::*;

use super::row::Row;
use super::size::format_bytes;

/// Line colours, one per op (cycled).
const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// The ops of `rows` in first-seen order, each with its (log₂ size,
/// `value(row)`) points.
pub fn series_of(rows: &[Row], value: impl Fn(&Row) -> f64) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut out: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for r in rows.iter().filter(|r| r.bytes > 0) {
        let point = ((r.bytes as f64).log2(), value(r));
        match out.iter_mut().find(|(op, _)| *op == r.op) {
            Some((_, pts)) => pts.push(point),
            None => out.push((r.op.clone(), vec![point])),
        }
    }
    out
}

/// Bus bandwidth per op (see [`series_of`]).
pub fn series(rows: &[Row]) -> Vec<(String, Vec<(f64, f64)>)> {
    series_of(rows, |r| r.busbw_gbps)
}

/// The decades `[10^a, 10^b]` around the positive values of `lines`.
fn decades(lines: &[(String, Vec<(f64, f64)>)]) -> (f64, f64) {
    let ys = lines
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.1))
        .filter(|y| *y > 0.0 && y.is_finite());
    let (lo, hi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| {
        (a.min(y), b.max(y))
    });
    if lo > hi {
        return (0.1, 1.0);
    }
    let (a, b) = (lo.log10().floor(), hi.log10().ceil());
    (10f64.powf(a), 10f64.powf(b.max(a + 1.0)))
}

/// One panel: `lines` against size (log₂) with a log₁₀ y axis.
fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    caption: &str,
    y_desc: &str,
    lines: &[(String, Vec<(f64, f64)>)],
    colour_of: &dyn Fn(&str) -> RGBColor,
    (lo, hi): (f64, f64),
) -> Result<(), String> {
    let (bottom, top) = decades(lines);
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 18))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(lo..hi, (bottom..top).log_scale())
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc("size (bytes, log2)")
        .y_desc(y_desc)
        .x_labels((hi - lo) as usize + 1)
        .x_label_formatter(&|x| format_bytes(2f64.powf(x.round()) as u64))
        .y_label_formatter(&|y| format!("{y}"))
        .draw()
        .map_err(|e| e.to_string())?;
    for (op, pts) in lines {
        let color = colour_of(op);
        // A log axis has no zero: sizes where the value is 0 are left out.
        let pts: Vec<(f64, f64)> = pts.iter().copied().filter(|p| p.1 > 0.0).collect();
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))
            .map_err(|e| e.to_string())?
            .label(op.as_str())
            // A box, not a line, in the legend: the plot's only polylines
            // are the series.
            .legend(move |(x, y)| Rectangle::new([(x, y - 4), (x + 16, y + 4)], color.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// Write the SVG plot of `rows` to `path`; `title` heads it. Two panels,
/// as nccl-tests readers expect: bus bandwidth against size (log-log), and
/// time against size (log-log). Ops in `zero_copy` (a collective-permute
/// on the CPU backend hands its block over without copying, so its
/// "bandwidth" is only 1/latency) are left out of the bandwidth panel, and
/// its caption says so; the time panel has every op.
pub fn write_plot(
    rows: &[Row],
    path: &Path,
    title: &str,
    zero_copy: &[&str],
) -> anyhow::Result<()> {
    let times = series_of(rows, |r| r.time_us);
    if times.is_empty() {
        anyhow::bail!("--plot: no rows to plot");
    }
    let bandwidth: Vec<_> = series(rows)
        .into_iter()
        .filter(|(op, _)| !zero_copy.contains(&op.as_str()))
        .collect();
    let left_out: Vec<&str> = times
        .iter()
        .map(|(op, _)| op.as_str())
        .filter(|op| zero_copy.contains(op))
        .collect();
    let xs = times.iter().flat_map(|(_, p)| p.iter().map(|q| q.0));
    let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    let (lo, hi) = (lo.floor(), hi.ceil().max(lo.floor() + 1.0));
    // One colour per op in both panels.
    let ops: Vec<String> = times.iter().map(|(op, _)| op.clone()).collect();
    let colour_of = |op: &str| {
        let i = ops.iter().position(|o| o == op).unwrap_or(0);
        COLORS[i % COLORS.len()]
    };
    let fail = |e: String| anyhow::anyhow!("--plot {}: {e}", path.display());
    let root = SVGBackend::new(path, (1440, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
    let root = root
        .titled(title, ("sans-serif", 22))
        .map_err(|e| fail(e.to_string()))?;
    let (left, right) = root.split_horizontally(720);
    let bw_caption = if left_out.is_empty() {
        "bus bandwidth".to_string()
    } else {
        format!(
            "bus bandwidth ({} left out: a block handed over without a copy)",
            left_out.join(", ")
        )
    };
    if bandwidth.is_empty() {
        left.titled(&bw_caption, ("sans-serif", 18))
            .map_err(|e| fail(e.to_string()))?;
    } else {
        panel(
            &left,
            &bw_caption,
            "bus bandwidth (GB/s, log)",
            &bandwidth,
            &colour_of,
            (lo, hi),
        )
        .map_err(fail)?;
    }
    panel(
        &right,
        "time per collective",
        "time (µs, log)",
        &times,
        &colour_of,
        (lo, hi),
    )
    .map_err(fail)?;
    root.present().map_err(|e| fail(e.to_string()))?;
    Ok(())
}
