//! `cost --overlap`: the step when collectives run beside the compute that
//! does not depend on them, as async collectives and XLA's latency-hiding
//! scheduler run them — one compute stream and one communication stream.
//!
//! A collective can run beside any instruction of its block that is
//! neither upstream of it (its operand's producers) nor downstream of it
//! (its result's readers): a scheduler may order those around it (async
//! collectives written between `start` and `done` are one such order).
//! Collectives are taken in program order, each hiding behind the
//! compute of its independent instructions not yet claimed by an earlier
//! one, up to its own time; so no instruction's compute hides more than
//! itself. A loop or branch counts as one instruction here (its compute
//! is claimable, its own collectives overlap inside its body, per
//! iteration). The no-overlap step minus what is hidden is the overlapped
//! step: what a latency-hiding scheduler could reach at best (it ignores
//! that collectives share one link and memory for buffers in flight).

use meshrun_compiler::partition::{Block, DeviceProgram, Instr};

use crate::cost::error::CostError;
use crate::cost::flops::instr_flops;
use crate::cost::model::estimate_collective;
use crate::cost::topology::Topology;

/// Seconds of one block run: its compute and communication, and how much
/// of the communication hides behind compute.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Overlap {
    pub compute_seconds: f64,
    pub communication_seconds: f64,
    pub hidden_seconds: f64,
}

/// The overlap of `program`'s top-level block (loops counted per their
/// trip counts, one iteration when unknown).
pub fn overlap(
    program: &DeviceProgram,
    topo: &Topology,
    peak_override: Option<f64>,
) -> Result<Overlap, CostError> {
    let w = Walk {
        program,
        topo,
        peak_override,
    };
    w.block(&program.instrs)
}

struct Walk<'a> {
    program: &'a DeviceProgram,
    topo: &'a Topology,
    peak_override: Option<f64>,
}

impl Walk<'_> {
    fn compute_seconds(&self, instr: &Instr) -> f64 {
        instr_flops(self.program, instr).map_or(0.0, |(elem, flops)| {
            let peak = self
                .peak_override
                .unwrap_or_else(|| self.topo.peak_tflops_for(elem));
            flops / (peak * 1e12)
        })
    }

    fn block(&self, instrs: &[Instr]) -> Result<Overlap, CostError> {
        let n = instrs.len();
        // Per instruction: its compute (claimable) and its communication.
        let mut compute = vec![0.0; n];
        let mut comm = vec![0.0; n];
        let mut total = Overlap::default();
        for (i, instr) in instrs.iter().enumerate() {
            match instr {
                Instr::Collective { collective, .. } => {
                    comm[i] = if collective.communicates() {
                        estimate_collective(collective, self.topo)?.seconds
                    } else {
                        0.0
                    };
                }
                Instr::Loop(l) => {
                    let trips = l.trip_count.map_or(1.0, |t| t.max(0) as f64);
                    let body = self.block(&l.body.instrs)?;
                    let cond = self.block(&l.cond.instrs)?;
                    compute[i] =
                        body.compute_seconds * trips + cond.compute_seconds * (trips + 1.0);
                    total.communication_seconds += body.communication_seconds * trips
                        + cond.communication_seconds * (trips + 1.0);
                    total.hidden_seconds +=
                        body.hidden_seconds * trips + cond.hidden_seconds * (trips + 1.0);
                }
                Instr::Branch(b) => {
                    // Every branch as if taken, as the FLOP count does.
                    for blk in &b.branches {
                        let o = self.block(&blk.instrs)?;
                        compute[i] += o.compute_seconds;
                        total.communication_seconds += o.communication_seconds;
                        total.hidden_seconds += o.hidden_seconds;
                    }
                }
                other => compute[i] = self.compute_seconds(other),
            }
        }
        total.compute_seconds += compute.iter().sum::<f64>();
        total.communication_seconds += comm.iter().sum::<f64>();
        // Where each value is defined in this block, and what each
        // instruction reads (inside its blocks too); values of enclosing
        // blocks are there all along.
        let mut defined_at = std::collections::HashMap::new();
        for (i, instr) in instrs.iter().enumerate() {
            for r in instr.results() {
                defined_at.insert(r, i);
            }
        }
        let reads: Vec<Vec<usize>> = instrs.iter().map(reads_of).collect();
        // Who reads each instruction's results (edges of the block's DAG).
        let mut readers: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (k, r) in reads.iter().enumerate() {
            for v in r {
                if let Some(&d) = defined_at.get(v) {
                    if d != k && !readers[d].contains(&k) {
                        readers[d].push(k);
                    }
                }
            }
        }
        let mut left = compute.clone();
        for (j, instr) in instrs.iter().enumerate() {
            if !matches!(instr, Instr::Collective { .. }) || comm[j] == 0.0 {
                continue;
            }
            // Neither upstream of the collective nor downstream of it.
            let mut tied = vec![false; n];
            tied[j] = true;
            let mut stack = vec![j];
            while let Some(k) = stack.pop() {
                for v in &reads[k] {
                    if let Some(&d) = defined_at.get(v) {
                        if !tied[d] {
                            tied[d] = true;
                            stack.push(d);
                        }
                    }
                }
            }
            let mut stack = vec![j];
            let mut down = vec![false; n];
            while let Some(k) = stack.pop() {
                for &r in &readers[k] {
                    if !down[r] {
                        down[r] = true;
                        stack.push(r);
                    }
                }
            }
            let mut need = comm[j];
            for (k, slot) in left.iter_mut().enumerate() {
                if need <= 0.0 {
                    break;
                }
                if tied[k] || down[k] {
                    continue;
                }
                let take = slot.min(need);
                *slot -= take;
                need -= take;
            }
            total.hidden_seconds += comm[j] - need;
        }
        Ok(total)
    }
}

/// Every value `instr` reads, in its own blocks too (a loop body reads
/// values of the enclosing block directly).
fn reads_of(instr: &Instr) -> Vec<usize> {
    let mut out = instr.operands();
    let blocks: Vec<&Block> = match instr {
        Instr::Loop(l) => vec![&l.cond, &l.body],
        Instr::Branch(b) => b.branches.iter().collect(),
        _ => Vec::new(),
    };
    for b in blocks {
        for i in &b.instrs {
            out.extend(reads_of(i));
        }
        out.extend(b.results.iter().copied());
    }
    out
}
