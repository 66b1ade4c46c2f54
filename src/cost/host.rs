//! Host memory: which values of a device program live in host memory,
//! and the copies between host and device that this implies, as XLA's
//! host offloading makes them.
//!
//! A value is on the host when it is an argument whose memory kind names
//! the host (`mhlo.memory_kind = "pinned_host"`), the result of a
//! placement to the host (`@annotate_device_placement` with
//! `_xla_buffer_placement = "pinned_host"`, `@MoveToHost`), or the result
//! of an op that only moves the elements of host values (a reshape,
//! slice, dynamic slice or update, transpose, bitcast, barrier: XLA runs
//! these on host buffers, as the offloading remat policies use them to
//! stack values in a host buffer). Everything else lives on the device.
//!
//! A copy crosses the host link, once per run of the instruction that
//! needs it, when
//! - a placement moves a value to the memory it is not in;
//! - any other op (compute, a collective) reads a host value: its block
//!   is copied to the device first, once per value and block run;
//! - a result's memory kind differs from where its value is (a device
//!   value returned to `pinned_host`, a host argument returned to the
//!   device).
//!
//! Sizes are local blocks; every device copies its own block over its own
//! link at the same time, so the bytes are per device.

use meshrun_compiler::ir::ops::custom_call::Placement;
use meshrun_compiler::ir::OpKind;
use meshrun_compiler::partition::global::GStep;
use meshrun_compiler::partition::{Block, DeviceProgram, Instr, PartitionedProgram, Repeats};

/// Which way a copy goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    ToDevice,
    ToHost,
}

impl Direction {
    pub fn name(self) -> &'static str {
        match self {
            Direction::ToDevice => "host→device",
            Direction::ToHost => "device→host",
        }
    }
}

/// One copy between host and device memory.
#[derive(Debug, Clone, PartialEq)]
pub struct HostTransfer {
    pub direction: Direction,
    /// Bytes of one device's block, each time it runs.
    pub bytes_per_run: f64,
    /// How often it runs (the trip counts of the loops around it).
    pub runs: f64,
    /// It sits in a loop whose trip count depends on data.
    pub trip_count_unknown: bool,
    /// What needs it: `argument 0`, `result 1`, or the op and its place.
    pub what: String,
}

impl HostTransfer {
    /// Bytes over all its runs.
    pub fn bytes(&self) -> f64 {
        self.bytes_per_run * self.runs
    }
}

/// Every host↔device copy of a program, and where its values live.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HostTraffic {
    pub transfers: Vec<HostTransfer>,
    /// Per local value: it lives in host memory.
    pub on_host: Vec<bool>,
}

impl HostTraffic {
    /// Bytes per device copied in `direction`, over all runs.
    pub fn bytes(&self, direction: Direction) -> f64 {
        self.transfers
            .iter()
            .filter(|t| t.direction == direction)
            .map(HostTransfer::bytes)
            .fold(0.0, |a, b| a + b)
    }
}

/// The host traffic of `program` (see the module doc).
pub fn host_traffic(program: &PartitionedProgram) -> HostTraffic {
    traffic(&program.device, &program.global.steps)
}

/// Per value of `device`: it lives in host memory.
pub fn host_values(device: &DeviceProgram) -> Vec<bool> {
    traffic(device, &[]).on_host
}

/// `steps` name the ops that need each copy (none: `step N`).
fn traffic(device: &DeviceProgram, steps: &[GStep]) -> HostTraffic {
    let mut w = Walk {
        device,
        steps,
        on_host: vec![false; device.values.len()],
        transfers: Vec::new(),
    };
    let mut copied = vec![false; device.values.len()];
    for io in &device.inputs {
        if io.on_host() {
            w.set_host(io.value, true);
        }
    }
    w.block(&device.instrs, Repeats::ONCE, &mut copied);
    for (k, io) in device.outputs.iter().enumerate() {
        let here = w.is_host(io.value);
        if io.on_host() && !here {
            w.push(
                Direction::ToHost,
                io.value,
                Repeats::ONCE,
                format!("result {k}"),
            );
        } else if !io.on_host() && here && !copied.get(io.value).copied().unwrap_or(true) {
            copied[io.value] = true;
            w.push(
                Direction::ToDevice,
                io.value,
                Repeats::ONCE,
                format!("result {k}"),
            );
        }
    }
    HostTraffic {
        transfers: w.transfers,
        on_host: w.on_host,
    }
}

struct Walk<'p> {
    device: &'p DeviceProgram,
    steps: &'p [GStep],
    on_host: Vec<bool>,
    transfers: Vec<HostTransfer>,
}

impl Walk<'_> {
    fn is_host(&self, v: usize) -> bool {
        self.on_host.get(v).copied().unwrap_or(false)
    }

    fn set_host(&mut self, v: usize, host: bool) {
        if let Some(slot) = self.on_host.get_mut(v) {
            *slot = host;
        }
    }

    fn bytes(&self, v: usize) -> f64 {
        self.device
            .values
            .get(v)
            .map_or(0.0, |lv| lv.ty.byte_size() as f64)
    }

    fn push(&mut self, direction: Direction, v: usize, at: Repeats, what: String) {
        // A silent pass records nothing, nor does a loop that never runs.
        if !record(at) || at.times == 0.0 {
            return;
        }
        let bytes_per_run = self.bytes(v);
        if bytes_per_run == 0.0 {
            return;
        }
        self.transfers.push(HostTransfer {
            direction,
            bytes_per_run,
            runs: at.times,
            trip_count_unknown: at.unknown_trips,
            what,
        });
    }

    fn op_name(&self, step: usize) -> String {
        self.steps
            .get(step)
            .map_or_else(|| format!("step {step}"), |s| s.cause.op.clone())
    }

    /// Walk `instrs`; `copied` marks the host values already copied to the
    /// device in this run of the block. At [`SILENT`] only placements are
    /// decided (a loop's first pass), nothing is recorded.
    fn block(&mut self, instrs: &[Instr], at: Repeats, copied: &mut [bool]) {
        for instr in instrs {
            match instr {
                Instr::Op {
                    kind: OpKind::CustomCall(c),
                    operands,
                    results,
                    step,
                } if c.placement().is_some() => {
                    let to_host = c.placement() == Some(Placement::Host);
                    if let (Some(&x), Some(&r)) = (operands.first(), results.first()) {
                        if self.is_host(x) != to_host {
                            let dir = if to_host {
                                Direction::ToHost
                            } else {
                                Direction::ToDevice
                            };
                            let what = self.op_name(*step);
                            self.push(dir, x, at, what);
                        }
                        self.set_host(r, to_host);
                    }
                }
                Instr::Op {
                    kind: OpKind::OptimizationBarrier(_),
                    operands,
                    results,
                    ..
                } => {
                    // Each result is its own operand.
                    for (&x, &r) in operands.iter().zip(results) {
                        let host = self.is_host(x);
                        self.set_host(r, host);
                    }
                }
                Instr::Op {
                    kind,
                    operands,
                    results,
                    step,
                } if moves_elements(kind) => {
                    let data = data_operands(kind, operands);
                    if !data.is_empty() && data.iter().all(|&v| self.is_host(v)) {
                        for &r in results {
                            self.set_host(r, true);
                        }
                    } else {
                        self.fetch(operands, *step, at, copied);
                    }
                }
                Instr::Loop(l) => {
                    // Carried values stay on the host when they enter on
                    // the host and the body hands them back there: decide
                    // that with a first silent pass, then count.
                    let init: Vec<bool> = l.inits.iter().map(|&v| self.is_host(v)).collect();
                    self.set_args(&l.body, &init);
                    self.block(&l.body.instrs, SILENT, &mut copied.to_vec());
                    let carried: Vec<bool> = init
                        .iter()
                        .zip(&l.body.results)
                        .map(|(&i, &r)| i && self.is_host(r))
                        .collect();
                    let (body_at, cond_at) = loop_repeats(at, l.trip_count);
                    for (block, runs) in [(&l.cond, cond_at), (&l.body, body_at)] {
                        self.set_args(block, &carried);
                        self.block(&block.instrs, runs, &mut copied.to_vec());
                    }
                    for (&r, &h) in l.results.iter().zip(&carried) {
                        self.set_host(r, h);
                    }
                }
                Instr::Branch(b) => {
                    let inside = Repeats {
                        in_branch: true,
                        ..at
                    };
                    let mut host = vec![true; b.results.len()];
                    for block in &b.branches {
                        self.block(&block.instrs, inside, &mut copied.to_vec());
                        for (h, &r) in host.iter_mut().zip(&block.results) {
                            *h &= self.is_host(r);
                        }
                    }
                    for (&r, &h) in b.results.iter().zip(&host) {
                        self.set_host(r, h);
                    }
                    self.fetch(&[b.index], b.step, at, copied);
                }
                other => {
                    self.fetch(&other.operands(), other.step(), at, copied);
                }
            }
        }
    }

    /// Copy to the device the host values among `operands` not copied yet.
    fn fetch(&mut self, operands: &[usize], step: usize, at: Repeats, copied: &mut [bool]) {
        for &v in operands {
            if self.is_host(v) && !copied.get(v).copied().unwrap_or(true) {
                copied[v] = true;
                let what = self.op_name(step);
                self.push(Direction::ToDevice, v, at, what);
            }
        }
    }

    fn set_args(&mut self, block: &Block, host: &[bool]) {
        for (&a, &h) in block.args.iter().zip(host) {
            self.set_host(a, h);
        }
    }
}

/// Repeats that record nothing (a silent pass).
const SILENT: Repeats = Repeats {
    times: -1.0,
    unknown_trips: false,
    in_branch: false,
};

fn record(at: Repeats) -> bool {
    at.times >= 0.0
}

/// How often a loop's body and condition run, relative to `at` (a
/// silent pass stays silent).
fn loop_repeats(at: Repeats, trip_count: Option<i64>) -> (Repeats, Repeats) {
    if record(at) {
        at.in_loop(trip_count)
    } else {
        (at, at)
    }
}

/// Ops that only move elements, which XLA runs on host buffers.
fn moves_elements(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::Reshape(_)
            | OpKind::Transpose(_)
            | OpKind::Slice(_)
            | OpKind::DynamicSlice(_)
            | OpKind::DynamicUpdateSlice(_)
            | OpKind::BitcastConvert(_)
    )
}

/// The operands whose elements an element move carries (not the indices
/// of a dynamic slice or update).
fn data_operands(kind: &OpKind, operands: &[usize]) -> Vec<usize> {
    match kind {
        OpKind::DynamicSlice(_) => operands.iter().take(1).copied().collect(),
        OpKind::DynamicUpdateSlice(_) => operands.iter().take(2).copied().collect(),
        _ => operands.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use meshrun_compiler::partition::partition;
    use meshrun_compiler::propagation::{propagate, PropagationOptions};
    use meshrun_compiler::text::parse_module;

    /// `@main(%h: 8x16 f32 in pinned_host, sharded 2 ways; %d: 16 f32 on
    /// the device)`: local blocks of %h are 4x16 f32 = 256 B.
    fn traffic_of(body: &str, ret: &str, ret_ty: &str, ret_memory: &str) -> HostTraffic {
        let text = format!(
            "module {{\n  sdy.mesh @mesh = <[\"x\"=2]>\n  func.func @main(%h: tensor<8x16xf32> {{mhlo.memory_kind = \"pinned_host\", sdy.sharding = #sdy.sharding<@mesh, [{{\"x\"}}, {{}}]>}}, %d: tensor<16xf32>) -> ({ret_ty} {{mhlo.memory_kind = \"{ret_memory}\", sdy.sharding = #sdy.sharding<@mesh, [{{\"x\"}}, {{}}]>}}) {{\n{body}    return {ret} : {ret_ty}\n  }}\n}}\n"
        );
        let module = parse_module(&text).expect("parses");
        let module = propagate(&module, &PropagationOptions::default()).expect("propagates");
        let program = partition(&module).expect("partitions");
        host_traffic(&program)
    }

    fn summary(t: &HostTraffic) -> Vec<(Direction, f64, f64)> {
        t.transfers
            .iter()
            .map(|c| (c.direction, c.bytes_per_run, c.runs))
            .collect()
    }

    #[test]
    fn a_host_argument_is_copied_once_for_the_ops_that_read_it() {
        let t = traffic_of(
            "    %0 = stablehlo.tanh %h : tensor<8x16xf32>\n    %1 = stablehlo.add %0, %h : tensor<8x16xf32>\n",
            "%1",
            "tensor<8x16xf32>",
            "device",
        );
        assert_eq!(summary(&t), vec![(Direction::ToDevice, 256.0, 1.0)]);
        assert!(t.transfers[0].what.contains("stablehlo.tanh"), "{t:?}");
        assert_eq!(t.bytes(Direction::ToDevice), 256.0);
        assert_eq!(t.bytes(Direction::ToHost), 0.0);
    }

    #[test]
    fn host_values_moved_on_the_host_cost_nothing() {
        // A reshape of a host value stays on the host, and returning it to
        // host memory copies nothing.
        let t = traffic_of(
            "    %0 = stablehlo.reshape %h : (tensor<8x16xf32>) -> tensor<8x16xf32>\n",
            "%0",
            "tensor<8x16xf32>",
            "pinned_host",
        );
        assert_eq!(summary(&t), vec![]);
        // Returned to the device, it is copied there.
        let t = traffic_of("", "%h", "tensor<8x16xf32>", "device");
        assert_eq!(summary(&t), vec![(Direction::ToDevice, 256.0, 1.0)]);
    }

    #[test]
    fn placements_and_results_copy_between_memories() {
        // Computed on the device, placed on the host, returned there: one
        // device→host copy (the placement), none for the result.
        let t = traffic_of(
            "    %0 = stablehlo.tanh %h : tensor<8x16xf32>\n    %1 = stablehlo.custom_call @annotate_device_placement(%0) {mhlo.frontend_attributes = {_xla_buffer_placement = \"pinned_host\"}} : (tensor<8x16xf32>) -> tensor<8x16xf32>\n",
            "%1",
            "tensor<8x16xf32>",
            "pinned_host",
        );
        assert_eq!(
            summary(&t),
            vec![
                (Direction::ToDevice, 256.0, 1.0),
                (Direction::ToHost, 256.0, 1.0)
            ]
        );
        // Without the placement, the result's memory kind asks for it.
        let t = traffic_of(
            "    %0 = stablehlo.tanh %h : tensor<8x16xf32>\n",
            "%0",
            "tensor<8x16xf32>",
            "pinned_host",
        );
        assert_eq!(
            summary(&t),
            vec![
                (Direction::ToDevice, 256.0, 1.0),
                (Direction::ToHost, 256.0, 1.0)
            ]
        );
        assert_eq!(t.transfers[1].what, "result 0");
        // A placement on the device of a host value is the copy; the op
        // after it reads a device value.
        let t = traffic_of(
            "    %0 = stablehlo.custom_call @MoveToDevice(%h) : (tensor<8x16xf32>) -> tensor<8x16xf32>\n    %1 = stablehlo.tanh %0 : tensor<8x16xf32>\n",
            "%1",
            "tensor<8x16xf32>",
            "device",
        );
        assert_eq!(summary(&t), vec![(Direction::ToDevice, 256.0, 1.0)]);
        assert!(t.transfers[0].what.contains("custom_call"), "{t:?}");
    }

    #[test]
    fn a_loop_slicing_a_host_buffer_copies_each_slice_each_iteration() {
        // Offloading remat's backward scan: each iteration takes one row
        // block of a host buffer (on the host) and moves it to the device.
        let body = "    %c0 = stablehlo.constant dense<0> : tensor<i32>\n    %c1 = stablehlo.constant dense<1> : tensor<i32>\n    %c4 = stablehlo.constant dense<4> : tensor<i32>\n    %z = stablehlo.constant dense<0.0> : tensor<8x16xf32>\n    %r:3 = stablehlo.while(%i = %c0, %buf = %h, %acc = %z) : tensor<i32>, tensor<8x16xf32>, tensor<8x16xf32>\n    cond {\n      %p = stablehlo.compare LT, %i, %c4 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n      stablehlo.return %p : tensor<i1>\n    } do {\n      %s = stablehlo.dynamic_slice %buf, %c0, %c0, sizes = [8, 4] : (tensor<8x16xf32>, tensor<i32>, tensor<i32>) -> tensor<8x4xf32>\n      %m = stablehlo.custom_call @annotate_device_placement(%s) {mhlo.frontend_attributes = {_xla_buffer_placement = \"device\"}} : (tensor<8x4xf32>) -> tensor<8x4xf32>\n      %e = stablehlo.exponential %m : tensor<8x4xf32>\n      %u = stablehlo.dynamic_update_slice %acc, %e, %c0, %c0 : (tensor<8x16xf32>, tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<8x16xf32>\n      %n = stablehlo.add %i, %c1 : tensor<i32>\n      stablehlo.return %n, %buf, %u : tensor<i32>, tensor<8x16xf32>, tensor<8x16xf32>\n    }\n";
        let t = traffic_of(body, "%r#2", "tensor<8x16xf32>", "device");
        // The 4x4 local slice (64 B), four times; the buffer stays on the
        // host and the accumulator on the device.
        assert_eq!(summary(&t), vec![(Direction::ToDevice, 64.0, 4.0)]);
        assert_eq!(t.bytes(Direction::ToDevice), 256.0);
    }
}
