//! Memory one device needs for a step: its blocks of the arguments, held
//! for the whole step (the caller owns them), plus the peak of the values
//! the device program creates, counted from the program's liveness.
//!
//! The count follows the executor (`meshrun_runtime::executor`): a value
//! lives from the instruction that defines it to the last instruction that
//! reads it, and a program output lives to the end. While an instruction
//! runs, its operands and its results are all live (no instruction works
//! in place). Sizes are local (padded) blocks; every device runs the same
//! program on blocks of the same shapes, so the count holds for each one.
//! Buffers a backend keeps for reuse, scratch space inside kernels and
//! collectives, and the program text are not counted.
//!
//! Values in host memory (`crate::cost::host`: `pinned_host` arguments,
//! values placed on the host) are counted apart, in `host_bytes`: they
//! take no device memory. A host value an op reads is copied to the
//! device for it; that copy is not counted.

use meshrun_compiler::ir::TensorType;
use meshrun_compiler::partition::{Block, DeviceProgram, Instr};

use crate::cost::host::host_values;

/// Bytes of one device, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
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
}

impl MemoryEstimate {
    /// Device memory: arguments plus the peak of live values.
    pub fn total_bytes(&self) -> f64 {
        self.arguments_bytes + self.peak_live_bytes
    }
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
    let outputs: Vec<usize> = program.outputs.iter().map(|io| io.value).collect();
    // Device values: neither inputs nor on the host; host values apart.
    let skip_device: Vec<bool> = (0..n).map(|v| is_input[v] || host(v)).collect();
    let skip_host: Vec<bool> = (0..n).map(|v| is_input[v] || !host(v)).collect();
    let (peak, peak_at) = sweep(program, &program.instrs, &outputs, &skip_device);
    let (host_peak, _) = sweep(program, &program.instrs, &outputs, &skip_host);
    MemoryEstimate {
        arguments_bytes,
        peak_live_bytes: peak,
        peak_at,
        host_bytes: host_arguments + host_peak,
    }
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
) -> (f64, Option<usize>) {
    let n = program.values.len();
    let size = |v: usize| program.values.get(v).map_or(0.0, |lv| block_bytes(&lv.ty));
    // The last instruction that needs each created value alive.
    let end = instrs.len();
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
            *slot = Some(end);
        }
    }
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
            .map(|b| sweep(program, &b.instrs, &b.results, skip).0)
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
        // Local blocks: %a 4x16 f32 = 256 B, %b 64 B (replicated).
        let p = program(
            "    %0 = stablehlo.tanh %a : tensor<8x16xf32>\n    %1 = stablehlo.add %0, %0 : tensor<8x16xf32>\n    %2 = stablehlo.multiply %1, %0 : tensor<8x16xf32>\n    %3 = stablehlo.exponential %2 : tensor<8x16xf32>\n",
            "%3",
        );
        let m = memory_per_device(&p);
        assert_eq!(m.arguments_bytes, 256.0 + 64.0);
        // At the multiply, %0, %1 and %2 are live; after it only %2, then
        // %2 and %3, then the output %3.
        assert_eq!(m.peak_live_bytes, 3.0 * 256.0);
        assert_eq!(m.total_bytes(), 320.0 + 768.0);
    }

    #[test]
    fn a_chain_needs_two_blocks_at_a_time() {
        let p = program(
            "    %0 = stablehlo.tanh %a : tensor<8x16xf32>\n    %1 = stablehlo.exponential %0 : tensor<8x16xf32>\n    %2 = stablehlo.sine %1 : tensor<8x16xf32>\n",
            "%2",
        );
        assert_eq!(memory_per_device(&p).peak_live_bytes, 2.0 * 256.0);
    }

    #[test]
    fn an_argument_returned_as_is_costs_nothing_more() {
        let m = memory_per_device(&program("", "%a"));
        assert_eq!(m.arguments_bytes, 320.0);
        assert_eq!(m.peak_live_bytes, 0.0);
        assert_eq!(m.peak_at, None);
    }
}
