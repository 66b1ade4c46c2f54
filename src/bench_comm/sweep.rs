//! Every op at every size of the ladder, one [`CommBench`] each.

use meshrun_compiler::ir::ElemType;
use meshrun_runtime::comm_bench::{time_collective, BenchOp, CommBench, CommBenchResult};
use meshrun_runtime::{Backend, RuntimeError};

use super::row::Row;
use super::size::ladder;

/// What to sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepConfig {
    /// The group (device ids, rank order).
    pub devices: Vec<i64>,
    pub ops: Vec<BenchOp>,
    /// Requested sizes double from `min_bytes` up to `max_bytes`.
    pub min_bytes: u64,
    pub max_bytes: u64,
    pub elem: ElemType,
    pub warmup: usize,
    pub iters: usize,
}

impl SweepConfig {
    /// Every measurement of the sweep, op by op, sizes ascending.
    pub fn benches(&self) -> Result<Vec<CommBench>, String> {
        if self.ops.is_empty() {
            return Err("no ops to measure".into());
        }
        if self.iters == 0 {
            return Err("--iters must be at least 1".into());
        }
        let sizes = ladder(self.min_bytes, self.max_bytes)?;
        Ok(self
            .ops
            .iter()
            .flat_map(|&op| {
                sizes.iter().map(move |&bytes| CommBench {
                    op,
                    devices: self.devices.clone(),
                    concurrent: Vec::new(),
                    bytes,
                    elem: self.elem,
                    warmup: self.warmup,
                    iters: self.iters,
                })
            })
            .collect())
    }
}

/// Run the sweep with `measure` (any backend's timing function), calling
/// `on_row` after each measurement (a progress bar). Rows whose check
/// failed are returned like the others (`ok: false`).
pub fn sweep_with(
    cfg: &SweepConfig,
    mut measure: impl FnMut(&CommBench) -> Result<CommBenchResult, RuntimeError>,
    mut on_row: impl FnMut(&Row),
) -> anyhow::Result<Vec<Row>> {
    let benches = cfg.benches().map_err(anyhow::Error::msg)?;
    let mut rows = Vec::with_capacity(benches.len());
    for b in &benches {
        let r = measure(b).map_err(|e| anyhow::anyhow!("{} at {} bytes: {e}", b.op, b.bytes))?;
        let row = Row::from_result(&r);
        on_row(&row);
        rows.push(row);
    }
    Ok(rows)
}

/// Run the sweep on `backend` (all devices in this process).
pub fn sweep<B: Backend>(
    backend: &B,
    cfg: &SweepConfig,
    on_row: impl FnMut(&Row),
) -> anyhow::Result<Vec<Row>> {
    sweep_with(cfg, |b| time_collective(backend, b), on_row)
}

/// Rows whose check failed, as one error naming each op, size and device.
pub fn check_rows(rows: &[Row]) -> anyhow::Result<()> {
    let wrong: Vec<String> = rows
        .iter()
        .filter(|r| !r.ok)
        .map(|r| {
            format!(
                "{} at {} bytes: {}",
                r.op,
                r.bytes,
                r.error.as_deref().unwrap_or("wrong result")
            )
        })
        .collect();
    if wrong.is_empty() {
        Ok(())
    } else {
        anyhow::bail!(
            "{} of {} measurements gave WRONG results: {}",
            wrong.len(),
            rows.len(),
            wrong.join("; ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use meshrun_runtime::CpuBackend;

    fn config(ops: Vec<BenchOp>) -> SweepConfig {
        SweepConfig {
            devices: vec![0, 1, 2],
            ops,
            min_bytes: 64,
            max_bytes: 256,
            elem: ElemType::F16,
            warmup: 0,
            iters: 1,
        }
    }

    #[test]
    fn a_sweep_measures_every_op_at_every_size() {
        let cfg = config(vec![BenchOp::AllReduce, BenchOp::AllToAll]);
        let mut seen = 0;
        let rows = sweep(&CpuBackend::new(), &cfg, |_| seen += 1).unwrap();
        assert_eq!(seen, 6);
        let got: Vec<(&str, u64)> = rows.iter().map(|r| (r.op.as_str(), r.bytes)).collect();
        // Sizes round to multiples of 3 devices × 2 bytes.
        assert_eq!(
            got,
            [
                ("all-reduce", 66),
                ("all-reduce", 126),
                ("all-reduce", 258),
                ("all-to-all", 66),
                ("all-to-all", 126),
                ("all-to-all", 258)
            ]
        );
        assert!(rows
            .iter()
            .all(|r| r.ok && r.ranks == 3 && r.dtype == "f16"));
        check_rows(&rows).unwrap();
    }

    #[test]
    fn wrong_rows_fail_naming_op_size_and_device() {
        let cfg = config(vec![BenchOp::AllGather]);
        let mut rows = sweep(&CpuBackend::new(), &cfg, |_| {}).unwrap();
        rows[1].ok = false;
        rows[1].error = Some("device 2: the all-gather result is wrong at element 5".into());
        let e = check_rows(&rows).unwrap_err().to_string();
        assert!(e.contains("1 of 3"), "{e}");
        assert!(e.contains("all-gather at 126 bytes: device 2"), "{e}");
        assert!(config(vec![]).benches().is_err());
    }
}
