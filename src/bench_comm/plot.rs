//! `bench-comm --plot FILE.svg`: bus bandwidth against size, one line per
//! op, size on a log₂ axis (nccl-tests' sizes double).

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

/// The ops of `rows` in first-seen order, each with its (log₂ size, busbw)
/// points.
pub fn series(rows: &[Row]) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut out: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for r in rows.iter().filter(|r| r.bytes > 0) {
        let point = ((r.bytes as f64).log2(), r.busbw_gbps);
        match out.iter_mut().find(|(op, _)| *op == r.op) {
            Some((_, pts)) => pts.push(point),
            None => out.push((r.op.clone(), vec![point])),
        }
    }
    out
}

/// Write the SVG plot of `rows` to `path`; `title` heads it.
pub fn write_plot(rows: &[Row], path: &Path, title: &str) -> anyhow::Result<()> {
    let lines = series(rows);
    if lines.is_empty() {
        anyhow::bail!("--plot: no rows to plot");
    }
    let xs = lines.iter().flat_map(|(_, p)| p.iter().map(|q| q.0));
    let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    let (lo, hi) = (lo.floor(), hi.ceil().max(lo.floor() + 1.0));
    let top = lines
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.1))
        .fold(0.0f64, f64::max);
    let top = if top > 0.0 { top * 1.1 } else { 1.0 };
    let fail = |e: String| anyhow::anyhow!("--plot {}: {e}", path.display());
    let root = SVGBackend::new(path, (960, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d(lo..hi, 0.0..top)
        .map_err(|e| fail(e.to_string()))?;
    chart
        .configure_mesh()
        .x_desc("size (bytes, log2)")
        .y_desc("bus bandwidth (GB/s)")
        .x_labels((hi - lo) as usize + 1)
        .x_label_formatter(&|x| format_bytes(2f64.powf(x.round()) as u64))
        .draw()
        .map_err(|e| fail(e.to_string()))?;
    for (i, (op, pts)) in lines.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
            .map_err(|e| fail(e.to_string()))?
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
        .map_err(|e| fail(e.to_string()))?;
    root.present().map_err(|e| fail(e.to_string()))?;
    Ok(())
}
