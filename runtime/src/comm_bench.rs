//! Timing and checking one collective on any backend, the way nccl-tests
//! does (`meshrun bench-comm`, the `collectives` bench, calibration).
//!
//! [`bench_collective`] builds a [`Collective`] of one [`BenchOp`] over one
//! group of devices whose nccl-tests size `S` (see `meshrun::cost::model`)
//! is the requested byte count rounded to a multiple of
//! `devices × element size`:
//!
//! | op                 | input block   | output block  | `S`           |
//! |--------------------|---------------|---------------|---------------|
//! | all-gather         | `[m]`         | `[G·m]`       | output        |
//! | all-reduce (sum)   | `[G·m]`       | `[G·m]`       | input         |
//! | reduce-scatter     | `[G·m]`       | `[m]`         | input         |
//! | all-to-all         | `[G, m]`      | `[1, G·m]`    | input         |
//! | collective-permute | `[G·m]`       | `[G·m]`       | input         |
//!
//! The permute is a ring shift by one (device `p` sends to `p+1`).
//!
//! [`time_collective`] places one input block per device, filled with a
//! deterministic pattern of small integers (so sums are exact in every
//! element type, and every device's block differs), then runs `warmup`
//! untimed and `iters` timed collectives in one `run_spmd`: the collective
//! itself synchronizes the devices, each device times each of its runs, and
//! an iteration's time is the slowest device's. Each result is released
//! before the next run (nccl-tests reuses one output buffer). The last
//! result of every device is checked against an expectation computed
//! directly from the pattern, not through any collective code.

use std::fmt;
use std::str::FromStr;
use std::time::Instant;

use half::{bf16, f16};
use meshrun_compiler::ir::{ElemType, ReduceKind, Scalar, TensorType};
use meshrun_compiler::partition::reshard::collective::{AllToAllDims, Collective, CollectiveKind};
use meshrun_compiler::sharding::TensorSharding;
use meshrun_kernels::{with_array, HostElem, HostTensor};

use crate::backend::{Backend, Device, Participation};
use crate::error::RuntimeError;

/// The collectives `bench-comm` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BenchOp {
    AllGather,
    AllReduce,
    ReduceScatter,
    AllToAll,
    CollectivePermute,
}

impl BenchOp {
    /// Every op, in `bench-comm`'s default order.
    pub const ALL: [BenchOp; 5] = [
        BenchOp::AllGather,
        BenchOp::AllReduce,
        BenchOp::ReduceScatter,
        BenchOp::AllToAll,
        BenchOp::CollectivePermute,
    ];

    /// `all-gather`, ... (what `bench-comm --ops` and its JSON rows say).
    pub fn name(self) -> &'static str {
        crate::collective_kinds::def(self.kind()).name
    }

    pub fn kind(self) -> CollectiveKind {
        match self {
            BenchOp::AllGather => CollectiveKind::AllGather,
            BenchOp::AllReduce => CollectiveKind::AllReduce,
            BenchOp::ReduceScatter => CollectiveKind::ReduceScatter,
            BenchOp::AllToAll => CollectiveKind::AllToAll,
            BenchOp::CollectivePermute => CollectiveKind::CollectivePermute,
        }
    }
}

impl fmt::Display for BenchOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BenchOp {
    type Err = String;

    fn from_str(s: &str) -> Result<BenchOp, String> {
        let t = s.trim();
        BenchOp::ALL
            .into_iter()
            .find(|op| op.name() == t || op.name().replace('-', "_") == t)
            .ok_or_else(|| {
                let names: Vec<&str> = BenchOp::ALL.iter().map(|o| o.name()).collect();
                format!("unknown op '{s}' (known: {})", names.join(", "))
            })
    }
}

/// The element types a benchmark can use.
pub const BENCH_ELEMS: [ElemType; 6] = [
    ElemType::F32,
    ElemType::F16,
    ElemType::BF16,
    ElemType::F64,
    ElemType::I32,
    ElemType::I64,
];

/// Parse an element type name (`f32`, `bf16`, ...) that a benchmark can use.
pub fn parse_elem(s: &str) -> Result<ElemType, String> {
    ElemType::from_name(s.trim())
        .filter(|e| BENCH_ELEMS.contains(e))
        .ok_or_else(|| {
            let names: Vec<&str> = BENCH_ELEMS.iter().map(|e| e.name()).collect();
            format!("unsupported dtype '{s}' (supported: {})", names.join(", "))
        })
}

/// The devices a collective runs on: every id its groups name, sorted.
pub fn devices_of(c: &Collective) -> Vec<i64> {
    let mut ids: Vec<i64> = c.groups.iter().flatten().copied().collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// Where `device` stands in `c` (what the executor would compute).
pub fn participation(c: &Collective, device: i64) -> Result<Participation<'_>, String> {
    if c.kind == CollectiveKind::CollectivePermute {
        let partner = |side: usize, other: usize| {
            c.groups
                .iter()
                .find(|p| p.get(side) == Some(&device))
                .and_then(|p| p.get(other).copied())
        };
        return Ok(Participation::Permute {
            send_to: partner(0, 1),
            recv_from: partner(1, 0),
        });
    }
    c.groups
        .iter()
        .enumerate()
        .find_map(|(group, members)| {
            let rank = members.iter().position(|&d| d == device)?;
            Some(Participation::Group {
                group,
                rank,
                members,
            })
        })
        .ok_or_else(|| format!("device {device} is in no group of the {}", c.kind))
}

/// The devices of a collective built by [`bench_collective`] in rank
/// order: the (first) group, or the ring of a permute (pair `p` is
/// `[ring[p], ring[p+1]]`).
pub fn ring_of(c: &Collective) -> Vec<i64> {
    match c.kind {
        CollectiveKind::CollectivePermute => {
            c.groups.iter().filter_map(|p| p.first().copied()).collect()
        }
        _ => c.groups.first().cloned().unwrap_or_default(),
    }
}

/// Where `device` stands in a collective built by [`bench_collective_in`]:
/// its rank in its group, or its index in the ring of a permute. Pattern
/// positions are these.
pub fn position_of(c: &Collective, device: i64) -> Option<usize> {
    match c.kind {
        CollectiveKind::CollectivePermute => ring_of(c).iter().position(|&d| d == device),
        _ => c
            .groups
            .iter()
            .find_map(|g| g.iter().position(|&d| d == device)),
    }
}

/// The number of devices whose blocks meet in one result: the group size,
/// or the ring's length for a permute.
fn pattern_width(c: &Collective) -> usize {
    match c.kind {
        CollectiveKind::CollectivePermute => ring_of(c).len(),
        _ => c.group_size(),
    }
}

/// Elements per device-chunk `m` for a requested size: `bytes` rounded to
/// the nearest multiple of `g × elem` (at least one).
fn chunk_elems(bytes: u64, g: usize, elem: ElemType) -> u64 {
    let unit = (g * elem.byte_size()) as u64;
    ((bytes + unit / 2) / unit).max(1)
}

/// The collective `op` over one group of `devices` (in rank order) whose
/// nccl-tests size is `bytes` rounded to a multiple of `devices.len() ×
/// elem` (see the module table). Errors on no devices, repeated devices, or
/// a size that does not fit in memory indices.
pub fn bench_collective(
    op: BenchOp,
    devices: &[i64],
    bytes: u64,
    elem: ElemType,
) -> Result<Collective, String> {
    bench_collective_in(op, &[devices.to_vec()], bytes, elem)
}

/// [`bench_collective`] over several groups of the same size at once (as
/// a program's collective runs on every group of its mesh axes): each
/// group does the op on its own, all at the same time. A permute's ring
/// runs through all groups' devices, group after group.
pub fn bench_collective_in(
    op: BenchOp,
    groups: &[Vec<i64>],
    bytes: u64,
    elem: ElemType,
) -> Result<Collective, String> {
    let first = groups.first().cloned().unwrap_or_default();
    let g = first.len();
    if g == 0 {
        return Err("a collective needs at least one device".into());
    }
    if let Some(other) = groups.iter().find(|grp| grp.len() != g) {
        return Err(format!(
            "groups {first:?} and {other:?} differ in size (all groups of a collective have the same size)"
        ));
    }
    let all: Vec<i64> = groups.iter().flatten().copied().collect();
    let mut sorted = all.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() != all.len() {
        return Err(format!("devices {all:?} repeat an id"));
    }
    let devices: &[i64] = match op {
        BenchOp::CollectivePermute => &all,
        _ => &first,
    };
    let g = devices.len();
    let m = i64::try_from(chunk_elems(bytes, g, elem))
        .map_err(|_| format!("{bytes} bytes is too large"))?;
    let gi = g as i64;
    let gm = m
        .checked_mul(gi)
        .ok_or_else(|| format!("{bytes} bytes is too large"))?;
    let (inp, out): (Vec<i64>, Vec<i64>) = match op {
        BenchOp::AllGather => (vec![m], vec![gm]),
        BenchOp::ReduceScatter => (vec![gm], vec![m]),
        BenchOp::AllToAll => (vec![gi, m], vec![1, gm]),
        BenchOp::AllReduce | BenchOp::CollectivePermute => (vec![gm], vec![gm]),
    };
    let rank = inp.len();
    let groups = match op {
        BenchOp::CollectivePermute => (0..g)
            .map(|p| vec![devices[p], devices[(p + 1) % g]])
            .collect(),
        _ => groups.to_vec(),
    };
    let dim_factors = match op {
        BenchOp::AllGather | BenchOp::ReduceScatter => vec![gi],
        _ => vec![1; rank],
    };
    Ok(Collective {
        kind: op.kind(),
        axes: Vec::new(),
        dim_axes: vec![Vec::new(); rank],
        dim_factors,
        all_to_all: (op == BenchOp::AllToAll).then_some(AllToAllDims {
            src_dim: 1,
            tgt_dim: 0,
        }),
        reduction: matches!(op, BenchOp::AllReduce | BenchOp::ReduceScatter)
            .then_some(ReduceKind::Add),
        groups,
        in_sharding: TensorSharding::replicated("bench", rank),
        out_sharding: TensorSharding::replicated("bench", rank),
        global_shape: if op == BenchOp::AllGather {
            out.clone()
        } else {
            inp.clone()
        },
        in_local_shape: inp,
        out_local_shape: out,
        elem,
    })
}

/// The largest integer `v` such that every integer in `[-v, v]` (and every
/// sum of `g` of them) is exact in `elem`.
fn exact_limit(elem: ElemType) -> u64 {
    match elem {
        ElemType::BF16 => 1 << 8,
        ElemType::F16 => 1 << 11,
        ElemType::F32 => 1 << 24,
        _ => 1 << 31,
    }
}

/// The input pattern of a group of `g`: value `((k + 31·p) mod M) − h` at
/// flat index `k` of the block of the device at position `p`, with
/// `M = 2h + 1` and `g·h` within the exact integers of the type, so every
/// partial sum of the group is exact. `h` is at most 125 (small values keep
/// the expectation tables small).
#[derive(Debug, Clone, Copy)]
struct Pattern {
    g: usize,
    h: i64,
    modulus: i64,
}

impl Pattern {
    fn new(g: usize, elem: ElemType) -> Pattern {
        let h = (exact_limit(elem) / g.max(1) as u64).min(125) as i64;
        Pattern {
            g,
            h,
            modulus: 2 * h + 1,
        }
    }

    fn value(&self, p: usize, k: u64) -> i64 {
        let r = (k % self.modulus as u64 + 31 * p as u64) % self.modulus as u64;
        r as i64 - self.h
    }

    /// `Σ_p value(p, k)` for every residue `k mod M`.
    fn sums(&self) -> Vec<i64> {
        (0..self.modulus as u64)
            .map(|k| (0..self.g).map(|p| self.value(p, k)).sum())
            .collect()
    }
}

fn tensor_of<T: HostElem>(shape: &[usize], n: usize, f: impl Fn(u64) -> i64) -> HostTensor {
    let data: Vec<T> = (0..n as u64)
        .map(|k| T::from_scalar(Scalar::Int(f(k))))
        .collect();
    // `n` is the product of `shape`, so the data fills it.
    HostTensor::from_vec(shape, data).unwrap_or_else(|e| unreachable!("{e}"))
}

/// The input block of the device at rank `position` of `c` (an index into
/// [`ring_of`]): the pattern described in [`Pattern`].
pub fn pattern_input(c: &Collective, position: usize) -> Result<HostTensor, String> {
    let g = pattern_width(c);
    let pat = Pattern::new(g, c.elem);
    let shape: Vec<usize> = c
        .in_local_shape
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| format!("negative dimension {d}")))
        .collect::<Result<_, _>>()?;
    let n = shape.iter().product::<usize>();
    let f = |k| pat.value(position, k);
    Ok(match c.elem {
        ElemType::F64 => tensor_of::<f64>(&shape, n, f),
        ElemType::F32 => tensor_of::<f32>(&shape, n, f),
        ElemType::F16 => tensor_of::<f16>(&shape, n, f),
        ElemType::BF16 => tensor_of::<bf16>(&shape, n, f),
        ElemType::I32 => tensor_of::<i32>(&shape, n, f),
        ElemType::I64 => tensor_of::<i64>(&shape, n, f),
        other => return Err(format!("unsupported dtype {}", other.name())),
    })
}

/// Check the result of `device` in a collective built by
/// [`bench_collective_in`] for `op`: `Err` names the device and the first
/// wrong element.
pub fn check_result(
    op: BenchOp,
    c: &Collective,
    device: i64,
    got: &HostTensor,
) -> Result<(), String> {
    let position =
        position_of(c, device).ok_or_else(|| format!("device {device} is not in the benchmark"))?;
    let g = pattern_width(c);
    let want_shape: Vec<usize> = c.out_local_shape.iter().map(|&d| d as usize).collect();
    if got.shape() != want_shape.as_slice() || got.elem_type() != c.elem {
        return Err(format!(
            "device {device}: the {op} gave {} but {} was expected",
            got.tensor_type(),
            TensorType::new(c.out_local_shape.clone(), c.elem)
        ));
    }
    let pat = Pattern::new(g, c.elem);
    let sums = pat.sums();
    let modulus = pat.modulus as u64;
    let m = c.in_local_shape.last().copied().unwrap_or(1).max(0) as u64;
    let m = if op == BenchOp::AllGather {
        m
    } else {
        // Every other op's input holds `g` chunks of `m`.
        c.in_local_shape.iter().product::<i64>().max(0) as u64 / g as u64
    };
    let p = position as u64;
    let expected = |k: u64| -> i64 {
        match op {
            // Chunk j of the result is device j's block.
            BenchOp::AllGather => pat.value((k / m) as usize, k % m),
            BenchOp::AllReduce => sums[(k % modulus) as usize],
            BenchOp::ReduceScatter => sums[((p * m + k) % modulus) as usize],
            // Chunk j of the result is chunk `p` of device j's block.
            BenchOp::AllToAll => pat.value((k / m) as usize, p * m + k % m),
            BenchOp::CollectivePermute => pat.value((position + g - 1) % g, k),
        }
    };
    let wrong = with_array!(got, a: T => a
    .iter()
    .enumerate()
    .find_map(|(k, x)| {
        let want = expected(k as u64) as f64;
        let have = x.to_f64();
        (have != want).then_some((k, have, want))
    }));
    match wrong {
        None => Ok(()),
        Some((k, have, want)) => Err(format!(
            "device {device}: the {op} result is wrong at element {k}: {have} instead of {want}"
        )),
    }
}

/// One measurement: an op, its size, the devices, and the iterations.
#[derive(Debug, Clone, PartialEq)]
pub struct CommBench {
    pub op: BenchOp,
    /// The group, in rank order (device ids of the backend).
    pub devices: Vec<i64>,
    /// More groups of the same size doing the same op at the same time,
    /// each in rank order (a program's collective runs on every group of
    /// its mesh axes at once, and on simulated devices they share the
    /// cores). Empty for nccl-tests' one group.
    pub concurrent: Vec<Vec<i64>>,
    /// Requested nccl-tests size `S` in bytes (rounded, see
    /// [`bench_collective`]).
    pub bytes: u64,
    pub elem: ElemType,
    /// Untimed runs first.
    pub warmup: usize,
    /// Timed runs (at least 1).
    pub iters: usize,
}

/// What one [`CommBench`] measured.
#[derive(Debug, Clone, PartialEq)]
pub struct CommBenchResult {
    pub op: BenchOp,
    /// Devices in the group.
    pub ranks: usize,
    pub elem: ElemType,
    /// nccl-tests' size `S` actually used, bytes.
    pub bytes: u64,
    /// Elements in `S` (nccl-tests' `count`).
    pub count: u64,
    /// Seconds of every timed run: the slowest device's.
    pub times_s: Vec<f64>,
    /// `None` when every device's last result was right; else what was
    /// wrong (naming the device and element).
    pub error: Option<String>,
}

impl CommBenchResult {
    /// True when every device's last result was right.
    pub fn ok(&self) -> bool {
        self.error.is_none()
    }

    /// The median of the timed runs, seconds (robust to the odd slow run
    /// on a shared machine).
    pub fn median_s(&self) -> f64 {
        let mut t = self.times_s.clone();
        t.sort_by(f64::total_cmp);
        match t.len() {
            0 => 0.0,
            n if n % 2 == 1 => t[n / 2],
            n => 0.5 * (t[n / 2 - 1] + t[n / 2]),
        }
    }

    /// The fastest timed run, seconds.
    pub fn min_s(&self) -> f64 {
        self.times_s.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// nccl-tests' algorithm bandwidth `S / t`, GB/s (10⁹ bytes), at the
    /// median time.
    pub fn algbw_gbps(&self) -> f64 {
        let t = self.median_s();
        if t > 0.0 {
            self.bytes as f64 / t / 1e9
        } else {
            0.0
        }
    }
}

/// The checked pieces of a [`CommBench`]: its collective and sizes.
pub fn prepare(bench: &CommBench) -> Result<Collective, RuntimeError> {
    if bench.iters == 0 {
        return Err(RuntimeError::Program("iters must be at least 1".into()));
    }
    parse_elem(bench.elem.name()).map_err(RuntimeError::Program)?;
    let mut groups = vec![bench.devices.clone()];
    groups.extend(bench.concurrent.iter().cloned());
    bench_collective_in(bench.op, &groups, bench.bytes, bench.elem).map_err(RuntimeError::Program)
}

/// The result of `c` for `bench`, from each timed run's times and the
/// devices' check outcomes.
pub fn result_of(
    bench: &CommBench,
    c: &Collective,
    times_s: Vec<f64>,
    error: Option<String>,
) -> CommBenchResult {
    let s = nccl_bytes(bench.op, c);
    CommBenchResult {
        op: bench.op,
        ranks: bench.devices.len(),
        elem: bench.elem,
        bytes: s,
        count: s / c.elem.byte_size() as u64,
        times_s,
        error,
    }
}

/// nccl-tests' `S` of a collective built by [`bench_collective`].
fn nccl_bytes(op: BenchOp, c: &Collective) -> u64 {
    let shape = match op {
        BenchOp::AllGather => &c.out_local_shape,
        _ => &c.in_local_shape,
    };
    shape.iter().product::<i64>().max(0) as u64 * c.elem.byte_size() as u64
}

/// Time `bench` on `backend` (see the module doc). A run failure is an
/// `Err`; a wrong result is `Ok` with [`CommBenchResult::error`] set.
///
/// For a backend whose `run_spmd` runs one device per process (MPI) use
/// `mpi::bench::time_comm_bench`, which also takes the slowest rank.
pub fn time_collective<B: Backend>(
    backend: &B,
    bench: &CommBench,
) -> Result<CommBenchResult, RuntimeError> {
    let c = prepare(bench)?;
    let devices = devices_of(&c);
    let out = TensorType::new(c.out_local_shape.clone(), c.elem);
    backend.prepare(&devices)?;
    // A one-element all-gather over every device after the timed runs: no
    // device starts its check (CPU work) while another still times (a
    // permute, or one group of several, does not synchronize them all).
    let fence = bench_collective(BenchOp::AllGather, &devices, 0, ElemType::I32)
        .map_err(RuntimeError::Program)?;
    let fence_out = TensorType::new(fence.out_local_shape.clone(), fence.elem);
    // Inputs are made here, not on the device threads: nothing inside the
    // per-device closure may call into rayon. Both in `devices` order.
    let place = |c: &Collective| {
        devices
            .iter()
            .map(|&d| {
                let p = position_of(c, d).ok_or_else(|| {
                    RuntimeError::Program(format!("device {d} is not in the benchmark"))
                })?;
                let t = pattern_input(c, p).map_err(RuntimeError::Program)?;
                backend.upload(d, t)
            })
            .collect::<Result<Vec<_>, RuntimeError>>()
    };
    let inputs = place(&c)?;
    let fence_in = place(&fence)?;
    let total = bench.warmup + bench.iters;
    let body = |dev: &mut B::Device| -> Result<(Vec<f64>, Option<String>), RuntimeError> {
        let id = dev.id();
        let position = devices
            .iter()
            .position(|&d| d == id)
            .ok_or_else(|| RuntimeError::Program(format!("device {id} is not in the benchmark")))?;
        let part = participation(&c, id).map_err(RuntimeError::Program)?;
        let x = &inputs[position];
        let mut times = Vec::with_capacity(bench.iters);
        let mut last = None;
        for i in 0..total {
            let start = Instant::now();
            let r = dev
                .collective(i as u64, &c, part, x, &out)
                .and_then(|r| dev.sync().map(|()| r))
                .map_err(|e| RuntimeError::Program(format!("device {id}: {}: {e}", c.kind)))?;
            let secs = start.elapsed().as_secs_f64();
            if i >= bench.warmup {
                times.push(secs);
            }
            if i + 1 == total {
                last = Some(r);
            } else {
                dev.release(r);
            }
        }
        let fence_part = participation(&fence, id).map_err(RuntimeError::Program)?;
        let f = dev
            .collective(
                total as u64,
                &fence,
                fence_part,
                &fence_in[position],
                &fence_out,
            )
            .map_err(|e| RuntimeError::Program(format!("device {id}: fence: {e}")))?;
        dev.release(f);
        let error = match last {
            Some(r) => {
                let host = backend.download(id, r)?;
                check_result(bench.op, &c, id, &host).err()
            }
            None => Some(format!("device {id}: no run")),
        };
        Ok((times, error))
    };
    let per_device = backend.run_spmd(&devices, &body)?;
    let mut times = vec![0.0f64; bench.iters];
    let mut error = None;
    for (dev_times, dev_error) in per_device {
        for (t, d) in times.iter_mut().zip(dev_times) {
            *t = t.max(d);
        }
        if error.is_none() {
            error = dev_error;
        }
    }
    Ok(result_of(bench, &c, times, error))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_parse_by_name() {
        for op in BenchOp::ALL {
            assert_eq!(op.name().parse::<BenchOp>(), Ok(op));
        }
        assert_eq!("all_reduce".parse::<BenchOp>(), Ok(BenchOp::AllReduce));
        let e = "broadcast".parse::<BenchOp>().unwrap_err();
        assert!(e.contains("broadcast") && e.contains("all-gather"), "{e}");
        assert!(parse_elem("i1").is_err());
        assert_eq!(parse_elem("bf16"), Ok(ElemType::BF16));
    }

    #[test]
    fn sizes_round_to_whole_chunks() {
        let devices: Vec<i64> = (0..8).collect();
        for op in BenchOp::ALL {
            let c = bench_collective(op, &devices, 1000, ElemType::F32).unwrap();
            // 1000 bytes / (8 × 4) = 31.25 → 31 elements per chunk.
            assert_eq!(nccl_bytes(op, &c), 31 * 8 * 4, "{op}");
            let c = bench_collective(op, &devices, 1, ElemType::F32).unwrap();
            assert_eq!(nccl_bytes(op, &c), 8 * 4, "{op}: at least one element");
        }
        assert!(bench_collective(BenchOp::AllGather, &[], 64, ElemType::F32).is_err());
        assert!(bench_collective(BenchOp::AllGather, &[1, 1], 64, ElemType::F32).is_err());
    }

    #[test]
    fn pattern_sums_stay_exact_and_blocks_differ() {
        for (elem, g) in [
            (ElemType::BF16, 8),
            (ElemType::F16, 3),
            (ElemType::BF16, 200),
        ] {
            let pat = Pattern::new(g, elem);
            let bound = pat.sums().iter().map(|s| s.unsigned_abs()).max().unwrap();
            assert!(bound <= exact_limit(elem), "{elem:?} on {g}: {bound}");
        }
        let pat = Pattern::new(8, ElemType::F32);
        let blocks: Vec<Vec<i64>> = (0..8)
            .map(|p| (0..16).map(|k| pat.value(p, k)).collect())
            .collect();
        for p in 1..8 {
            assert_ne!(blocks[p], blocks[0]);
        }
    }

    #[test]
    fn permute_partners_come_from_the_pairs() {
        let c =
            bench_collective(BenchOp::CollectivePermute, &[4, 7, 9], 12, ElemType::F32).unwrap();
        assert_eq!(devices_of(&c), vec![4, 7, 9]);
        assert_eq!(
            participation(&c, 7).unwrap(),
            Participation::Permute {
                send_to: Some(9),
                recv_from: Some(4)
            }
        );
        let g = bench_collective(BenchOp::AllGather, &[4, 7, 9], 12, ElemType::F32).unwrap();
        assert_eq!(
            participation(&g, 9).unwrap(),
            Participation::Group {
                group: 0,
                rank: 2,
                members: &[4, 7, 9]
            }
        );
        assert!(participation(&g, 5).is_err());
    }
}
