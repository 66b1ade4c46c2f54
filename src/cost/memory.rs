//! Memory one device needs for a step: its blocks of the arguments, held
//! for the whole step (the caller owns them), plus the peak of the values
//! the device program creates, counted from the program's liveness.
//!
//! A value lives from the instruction that defines it to the last
//! instruction that reads it, and a program output lives to the end.
//! While an instruction runs, its operands and its results are all live
//! (no instruction works in place). Values XLA's fusion never writes to
//! memory take none: made by an element-wise op, a broadcast, a reshape,
//! a constant, an iota or a padding mask, read only by such ops or as a
//! reduction's input, by one instruction or, when cheap to compute again
//! (no transcendental, no division), by several, and neither a program
//! output nor what a loop or branch yields. Sizes
//! are local (padded) blocks; every device runs the same program on
//! blocks of the same shapes, so the count holds for each one. Buffers a
//! backend keeps for reuse, scratch space inside kernels and collectives,
//! and the program text are not counted.
//!
//! Values in host memory (`crate::cost::host`: `pinned_host` arguments,
//! values placed on the host) are counted apart, in `host_bytes`: they
//! take no device memory. A host value an op reads is copied to the
//! device for it; that copy is not counted.
//!
//! A result written into a donated argument's buffer (`donate_argnums`:
//! `tf.aliasing_output = K` names the result, `jax.buffer_donor` lets any
//! result of the argument's block type take it) needs no memory of its
//! own, as XLA's `argument + output - alias + temp` counts it.

use meshrun_compiler::ir::{BinaryOp, OpKind, TensorType, UnaryOp};
use meshrun_compiler::partition::global::Donation;
use meshrun_compiler::partition::{Block, DeviceProgram, Instr, PartitionedProgram};

use crate::cost::host::host_values;

/// Bytes of one device, by kind.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MemoryEstimate {
    /// The device's blocks of the program's inputs in device memory.
    pub arguments_bytes: f64,
    /// The most bytes of created values live at once.
    pub peak_live_bytes: f64,
    /// The instruction at which that peak is reached (`None` for a program
    /// without instructions).
    pub peak_at: Option<usize>,
    /// Host memory of one device: its blocks of host arguments plus the
    /// peak of the host values the program creates.
    pub host_bytes: f64,
    /// The device's blocks of the program's results in device memory
    /// (part of the peak: they live to the end), less `aliased_bytes`.
    pub outputs_bytes: f64,
    /// Results written into donated arguments' buffers.
    pub aliased_bytes: f64,
    /// The values live at the peak (top-level values; a loop or branch
    /// running there adds its own peak), largest first, at most
    /// [`PEAK_VALUES`]: local value id and bytes.
    pub peak_values: Vec<(usize, f64)>,
}

/// How many of the values live at the peak are listed.
pub const PEAK_VALUES: usize = 5;

impl MemoryEstimate {
    /// Device memory: arguments plus the peak of live values.
    pub fn total_bytes(&self) -> f64 {
        self.arguments_bytes + self.peak_live_bytes
    }
}

/// Where the peak is, for people: the op of the instruction and the
/// largest values live there (name, local type, bytes).
#[derive(Debug, Clone, PartialEq)]
pub struct PeakDetail {
    pub op: String,
    pub values: Vec<(String, String, f64)>,
}

/// The peak of `m` (an estimate of `program.device`) described with the
/// source ops of `program`.
pub fn peak_detail(program: &PartitionedProgram, m: &MemoryEstimate) -> Option<PeakDetail> {
    let at = m.peak_at?;
    let step = program.device.instrs.get(at)?.step();
    let op = program
        .global
        .steps
        .get(step)
        .map_or_else(|| format!("instruction {at}"), |s| s.cause.op.clone());
    let values = m
        .peak_values
        .iter()
        .filter_map(|&(v, bytes)| {
            let lv = program.device.values.get(v)?;
            Some((lv.name.clone(), lv.ty.to_string(), bytes))
        })
        .collect();
    Some(PeakDetail { op, values })
}

/// The memory fields of the JSON documents (`partition --json`, `cost
/// --json`, the Python package).
pub fn memory_json(program: &PartitionedProgram, m: &MemoryEstimate) -> serde_json::Value {
    let peak = peak_detail(program, m);
    serde_json::json!({
        "arguments_bytes": m.arguments_bytes,
        "outputs_bytes": m.outputs_bytes,
        "aliased_bytes": m.aliased_bytes,
        "peak_live_bytes": m.peak_live_bytes,
        "total_bytes": m.total_bytes(),
        "host_bytes": m.host_bytes,
        "peak_at": peak.as_ref().map(|p| p.op.clone()),
        "peak_values": peak.map(|p| p.values.iter().map(|(name, ty, bytes)| serde_json::json!({
            "value": name, "type": ty, "bytes": bytes,
        })).collect::<Vec<_>>()).unwrap_or_default(),
    })
}

/// Bytes of one block of type `ty`.
pub fn block_bytes(ty: &TensorType) -> f64 {
    ty.shape.iter().product::<i64>() as f64 * ty.elem.byte_size() as f64
}

/// The memory one device of `program` needs (see the module doc).
pub fn memory_per_device(program: &DeviceProgram) -> MemoryEstimate {
    let n = program.values.len();
    let size = |v: usize| program.values.get(v).map_or(0.0, |lv| block_bytes(&lv.ty));
    let on_host = host_values(program);
    let host = |v: usize| on_host.get(v).copied().unwrap_or(false);
    let mut is_input = vec![false; n];
    let mut arguments_bytes = 0.0;
    let mut host_arguments = 0.0;
    for io in &program.inputs {
        if let Some(flag) = is_input.get_mut(io.value) {
            if !*flag {
                *flag = true;
                if host(io.value) {
                    host_arguments += size(io.value);
                } else {
                    arguments_bytes += size(io.value);
                }
            }
        }
    }
    let aliased = aliased_outputs(program, &is_input);
    let outputs: Vec<usize> = program.outputs.iter().map(|io| io.value).collect();
    // Device values: neither inputs, nor on the host, nor written into a
    // donated argument; host values apart.
    let fused = fused_values(program, &outputs);
    let skip_device: Vec<bool> = (0..n)
        .map(|v| is_input[v] || host(v) || aliased.contains(&v) || fused[v])
        .collect();
    let skip_host: Vec<bool> = (0..n).map(|v| is_input[v] || !host(v)).collect();
    let (peak, peak_at) = sweep(program, &program.instrs, &outputs, &skip_device, &fused);
    let (host_peak, _) = sweep(program, &program.instrs, &outputs, &skip_host, &fused);
    let mut seen = vec![false; n];
    let mut outputs_bytes = 0.0;
    for &v in &outputs {
        if v < n && !seen[v] && !skip_device[v] {
            seen[v] = true;
            outputs_bytes += size(v);
        }
    }
    let aliased_bytes = aliased.iter().map(|&v| size(v)).sum::<f64>() + 0.0;
    let peak_values = peak_at
        .map(|i| live_at(program, &outputs, &skip_device, &fused, i))
        .unwrap_or_default();
    MemoryEstimate {
        arguments_bytes,
        peak_live_bytes: peak,
        peak_at,
        host_bytes: host_arguments + host_peak,
        outputs_bytes,
        aliased_bytes,
        peak_values,
    }
}

/// The results written into donated inputs' buffers: the one an input
/// names (`tf.aliasing_output`), then for each `jax.buffer_donor` input
/// the first result left with its block type. A result that is itself an
/// input, or whose block differs in type from the input's, takes none.
fn aliased_outputs(program: &DeviceProgram, is_input: &[bool]) -> Vec<usize> {
    let ty = |v: usize| program.values.get(v).map(|lv| &lv.ty);
    let mut taken: Vec<usize> = Vec::new();
    let fits = |out: usize, inp: usize, taken: &[usize]| {
        !is_input.get(out).copied().unwrap_or(true)
            && !taken.contains(&out)
            && ty(out).is_some()
            && ty(out) == ty(inp)
    };
    for io in &program.inputs {
        if let Donation::Output(k) = io.donation {
            if let Some(out) = program.outputs.get(k) {
                if fits(out.value, io.value, &taken) {
                    taken.push(out.value);
                }
            }
        }
    }
    for io in &program.inputs {
        if io.donation == Donation::Any {
            if let Some(out) = program
                .outputs
                .iter()
                .find(|o| fits(o.value, io.value, &taken))
            {
                taken.push(out.value);
            }
        }
    }
    taken
}

/// The counted values live while top-level instruction `at` runs,
/// largest first (at most [`PEAK_VALUES`]).
fn live_at(
    program: &DeviceProgram,
    kept: &[usize],
    skip: &[bool],
    fused: &[bool],
    at: usize,
) -> Vec<(usize, f64)> {
    let n = program.values.len();
    let size = |v: usize| program.values.get(v).map_or(0.0, |lv| block_bytes(&lv.ty));
    let mut first = vec![None::<usize>; n];
    for (i, instr) in program.instrs.iter().enumerate() {
        for v in instr.results() {
            if v < n && first[v].is_none() {
                first[v] = Some(i);
            }
        }
    }
    let last = last_uses(&program.instrs, kept, fused, n);
    let mut live: Vec<(usize, f64)> = (0..n)
        .filter(|&v| !skip[v])
        .filter(|&v| matches!((first[v], last[v]), (Some(f), Some(l)) if f <= at && at <= l))
        .map(|v| (v, size(v)))
        .collect();
    live.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    live.truncate(PEAK_VALUES);
    live
}

/// The last instruction of `instrs` that needs each value alive (`kept`
/// values: past the end). A fused value is computed where its readers
/// run, so what it reads lives until its own last reader.
fn last_uses(instrs: &[Instr], kept: &[usize], fused: &[bool], n: usize) -> Vec<Option<usize>> {
    let mut last = vec![None::<usize>; n];
    for (i, instr) in instrs.iter().enumerate() {
        for v in instr.results().into_iter().chain(instr.operands()) {
            if let Some(slot) = last.get_mut(v) {
                *slot = Some(i);
            }
        }
    }
    for &v in kept {
        if let Some(slot) = last.get_mut(v) {
            *slot = Some(instrs.len());
        }
    }
    for instr in instrs.iter().rev() {
        let results = instr.results();
        if results.is_empty()
            || !results
                .iter()
                .all(|&r| fused.get(r).copied().unwrap_or(false))
        {
            continue;
        }
        let Some(until) = results
            .iter()
            .filter_map(|&r| last.get(r).copied().flatten())
            .max()
        else {
            continue;
        };
        for o in instr.operands() {
            if let Some(slot) = last.get_mut(o) {
                *slot = (*slot).max(Some(until));
            }
        }
    }
    last
}

/// The peak bytes of the values `instrs` create, and where it is reached;
/// `kept` live to the end, `skip` are never counted (inputs). A loop or
/// branch adds, while it runs, the peak of its largest block (a loop's
/// carried values are the block arguments: handles to its operands and
/// results, not counted again).
fn sweep(
    program: &DeviceProgram,
    instrs: &[Instr],
    kept: &[usize],
    skip: &[bool],
    fused: &[bool],
) -> (f64, Option<usize>) {
    let n = program.values.len();
    let size = |v: usize| program.values.get(v).map_or(0.0, |lv| block_bytes(&lv.ty));
    let end = instrs.len();
    let last = last_uses(instrs, kept, fused, n);
    // Sweep: add each value where it is defined, drop it after its last use.
    let mut frees: Vec<Vec<usize>> = vec![Vec::new(); end + 1];
    let mut live = 0.0_f64;
    let mut peak = 0.0_f64;
    let mut peak_at = None;
    for (i, instr) in instrs.iter().enumerate() {
        for v in instr.results() {
            if v < n && !skip[v] {
                live += size(v);
                if let Some(l) = last[v] {
                    frees[l.max(i)].push(v);
                }
            }
        }
        let inner = blocks(instr)
            .into_iter()
            .map(|b| sweep(program, &b.instrs, &b.results, skip, fused).0)
            .fold(0.0, f64::max);
        if live + inner > peak || peak_at.is_none() {
            peak = peak.max(live + inner);
            peak_at = Some(i);
        }
        for v in std::mem::take(&mut frees[i]) {
            live -= size(v);
        }
    }
    (peak, peak_at)
}

/// Whether an instruction is one XLA fuses into its readers: an
/// element-wise op, a broadcast, a reshape, a constant, an iota, a mask.
fn fusible(instr: &Instr) -> bool {
    match instr {
        Instr::Op { kind, .. } => {
            kind.is_elementwise()
                || matches!(
                    kind,
                    OpKind::BroadcastInDim(_) | OpKind::Reshape(_) | OpKind::Constant(_)
                )
        }
        Instr::Iota { .. } | Instr::Mask { .. } => true,
        _ => false,
    }
}

/// Whether a reader computes its result from a fused operand with no
/// buffer for it: a fusible op, or a reduction's input (XLA's loop and
/// input fusion).
fn reads_fused(instr: &Instr) -> bool {
    fusible(instr)
        || matches!(
            instr,
            Instr::Op {
                kind: OpKind::Reduce { .. },
                ..
            }
        )
}

/// Whether XLA computes an op again in every reader rather than write it
/// once: cheap ones (moves, compares, selects, plain arithmetic); a
/// transcendental or a division read twice is written out.
fn cheap(instr: &Instr) -> bool {
    match instr {
        Instr::Op { kind, .. } => match kind {
            OpKind::Unary(u) => matches!(
                u,
                UnaryOp::Negate | UnaryOp::Abs | UnaryOp::Sign | UnaryOp::Not | UnaryOp::Square
            ),
            OpKind::Binary(b) => !matches!(
                b,
                BinaryOp::Divide | BinaryOp::Remainder | BinaryOp::Power | BinaryOp::Atan2
            ),
            _ => true,
        },
        _ => true,
    }
}

/// The values no buffer ever holds, as XLA's fusion computes them: made by
/// a fusible instruction and read only by fusible ones or as a
/// reduction's input, by one instruction or, when cheap, by several (each
/// computes it again where it needs it), and neither a program output nor
/// what a loop or branch block yields.
fn fused_values(program: &DeviceProgram, outputs: &[usize]) -> Vec<bool> {
    let n = program.values.len();
    let mut made = vec![(false, false); n];
    let mut readers_fuse = vec![true; n];
    let mut readers = vec![0usize; n];
    let mut kept = vec![false; n];
    for &v in outputs {
        if v < n {
            kept[v] = true;
        }
    }
    struct Walk<'a> {
        made: &'a mut [(bool, bool)],
        fuse: &'a mut [bool],
        readers: &'a mut [usize],
        kept: &'a mut [bool],
    }
    fn walk(instrs: &[Instr], w: &mut Walk) {
        for instr in instrs {
            let f = (fusible(instr), cheap(instr));
            let r = reads_fused(instr);
            for v in instr.results() {
                if let Some(m) = w.made.get_mut(v) {
                    *m = f;
                }
            }
            let mut operands = instr.operands();
            operands.sort_unstable();
            operands.dedup();
            for v in operands {
                if v < w.readers.len() {
                    w.readers[v] += 1;
                    w.fuse[v] &= r;
                }
            }
            for b in blocks(instr) {
                for &v in &b.results {
                    if let Some(k) = w.kept.get_mut(v) {
                        *k = true;
                    }
                }
                walk(&b.instrs, w);
            }
        }
    }
    walk(
        &program.instrs,
        &mut Walk {
            made: &mut made,
            fuse: &mut readers_fuse,
            readers: &mut readers,
            kept: &mut kept,
        },
    );
    (0..n)
        .map(|v| {
            let (fusible, cheap) = made[v];
            fusible && readers_fuse[v] && !kept[v] && (readers[v] == 1 || (readers[v] > 1 && cheap))
        })
        .collect()
}

fn blocks(instr: &Instr) -> Vec<&Block> {
    match instr {
        Instr::Loop(l) => vec![&l.cond, &l.body],
        Instr::Branch(b) => b.branches.iter().collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use meshrun_compiler::partition::partition;
    use meshrun_compiler::text::parse_module;

    fn program(body: &str, ret: &str) -> DeviceProgram {
        let text = format!(
            "module {{\n  sdy.mesh @mesh = <[\"x\"=2]>\n  func.func @main(%a: tensor<8x16xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{\"x\"}}, {{}}]>}}, %b: tensor<16xf32>) -> (tensor<8x16xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{\"x\"}}, {{}}]>}}) {{\n{body}    return {ret} : tensor<8x16xf32>\n  }}\n}}\n"
        );
        partition(&parse_module(&text).expect("parses"))
            .expect("partitions")
            .device
    }

    #[test]
    fn values_live_from_definition_to_last_use() {
        // Local blocks: %a 4x16 f32 = 256 B, %b 64 B (replicated). The
        // products are materialized: each is read by another product.
        let p = program(
            "    %0 = stablehlo.dot_general %a, %a, contracting_dims = [0] x [0] : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>\n    %1 = stablehlo.dot_general %a, %0, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>\n    %2 = stablehlo.dot_general %1, %0, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>\n",
            "%2",
        );
        let m = memory_per_device(&p);
        assert_eq!(m.arguments_bytes, 256.0 + 64.0);
        // %0 is 16x16 on every device (1 KiB, a partial sum all-reduced);
        // at the last product %0, %1 and %2 are live.
        assert!(m.peak_live_bytes >= 1024.0 + 2.0 * 256.0, "{m:?}");
    }

    /// An element-wise chain is one fused kernel: only its result (and
    /// values other ops read) take memory.
    #[test]
    fn a_fused_chain_needs_only_its_result() {
        let p = program(
            "    %0 = stablehlo.tanh %a : tensor<8x16xf32>\n    %1 = stablehlo.exponential %0 : tensor<8x16xf32>\n    %2 = stablehlo.sine %1 : tensor<8x16xf32>\n",
            "%2",
        );
        assert_eq!(memory_per_device(&p).peak_live_bytes, 256.0);
        // A value a product reads is written out.
        let p = program(
            "    %0 = stablehlo.tanh %a : tensor<8x16xf32>\n    %1 = stablehlo.dot_general %0, %0, contracting_dims = [1] x [1] : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x8xf32>\n    %2 = stablehlo.sine %0 : tensor<8x16xf32>\n",
            "%2",
        );
        let m = memory_per_device(&p);
        assert!(m.peak_live_bytes >= 2.0 * 256.0, "{m:?}");
    }

    /// A transcendental read by two ops is written once; a cheap op read
    /// by two is computed again in each.
    #[test]
    fn an_expensive_value_read_twice_is_written_out() {
        let two_readers = |op: &str| {
            program(
                &format!("    %0 = stablehlo.{op} %a : tensor<8x16xf32>\n    %1 = stablehlo.sine %0 : tensor<8x16xf32>\n    %2 = stablehlo.cosine %0 : tensor<8x16xf32>\n    %3 = stablehlo.add %1, %2 : tensor<8x16xf32>\n"),
                "%3",
            )
        };
        assert_eq!(
            memory_per_device(&two_readers("negate")).peak_live_bytes,
            256.0
        );
        assert!(memory_per_device(&two_readers("tanh")).peak_live_bytes >= 2.0 * 256.0);
    }

    #[test]
    fn an_argument_returned_as_is_costs_nothing_more() {
        let m = memory_per_device(&program("", "%a"));
        assert_eq!(m.arguments_bytes, 320.0);
        assert_eq!(m.peak_live_bytes, 0.0);
        assert_eq!(m.peak_at, None);
    }
}
