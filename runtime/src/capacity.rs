//! Whether a program fits the backend and this machine, checked before
//! anything is allocated: a mesh of 10^12 devices or a tensor of 400 GB is
//! an error that says so, not an allocation that aborts the process.
//!
//! The checks are necessary conditions only (a program that passes may
//! still run out of memory when many values are alive at once), and every
//! size is computed with overflow-checked arithmetic:
//! - the devices of every mesh: at most [`Backend::max_devices`];
//! - every local block of the device program: at most
//!   [`Backend::device_memory_bytes`];
//! - what the host holds whole (the inputs, the gathered outputs, and with
//!   the unsharded reference every value): at most
//!   [`host_memory_bytes`].

use std::sync::OnceLock;

use meshrun_compiler::ir::{Function, Module, TensorType};
use meshrun_compiler::partition::DeviceProgram;
use meshrun_compiler::{DiagKind, Diagnostic, SrcPos};

use crate::backend::Backend;

/// The memory of this machine (`MemTotal` of `/proc/meminfo`); `None`
/// where it cannot be read (then nothing is checked against it).
pub fn host_memory_bytes() -> Option<u64> {
    static TOTAL: OnceLock<Option<u64>> = OnceLock::new();
    *TOTAL.get_or_init(|| {
        let text = std::fs::read_to_string("/proc/meminfo").ok()?;
        mem_total(&text)
    })
}

/// `MemTotal:  24684096 kB` in bytes.
fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// `1.5 GiB`, `512 B`.
pub fn human_bytes(n: u128) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut x = n as f64 / 1024.0;
    let mut unit = 0;
    while x >= 1024.0 && unit + 1 < UNITS.len() {
        x /= 1024.0;
        unit += 1;
    }
    format!("{x:.1} {}", UNITS[unit])
}

/// The bytes of a tensor of type `ty`; `None` when that overflows even
/// 128 bits (a negative dimension counts as zero).
fn bytes_of(ty: &TensorType) -> Option<u128> {
    ty.shape
        .iter()
        .try_fold(ty.elem.byte_size() as u128, |n, &d| {
            n.checked_mul(d.max(0) as u128)
        })
}

/// What does not fit, and the global step of the device program it comes
/// from (to point at the op).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooLarge {
    pub step: Option<usize>,
    pub message: String,
}

/// Whether the device program `program` fits a backend that runs at most
/// `max_devices` devices of `device_memory` bytes each (`name`: the
/// backend's name, for the message).
pub fn program_fits(
    program: &DeviceProgram,
    name: &str,
    max_devices: usize,
    device_memory: Option<u64>,
) -> Result<(), TooLarge> {
    let n = program.num_devices();
    if n > max_devices {
        return Err(TooLarge {
            step: None,
            message: format!(
                "@{} runs on {n} devices; the {name} backend runs at most {max_devices}",
                program.name
            ),
        });
    }
    let Some(memory) = device_memory else {
        return Ok(());
    };
    // The instruction that defines each value, to name its op.
    let mut step_of = vec![None; program.values.len()];
    for instr in &program.instrs {
        for r in instr.results() {
            if let Some(s) = step_of.get_mut(r) {
                *s = Some(instr.step());
            }
        }
    }
    for (v, value) in program.values.iter().enumerate() {
        let bytes = bytes_of(&value.ty);
        if bytes.is_none_or(|b| b > memory as u128) {
            return Err(TooLarge {
                step: step_of[v],
                message: format!(
                    "{} needs a local block {} of {} on each device; a {name} device has {}",
                    value.name,
                    value.ty,
                    bytes.map_or_else(|| "more than 2^128 bytes".into(), human_bytes),
                    human_bytes(memory as u128)
                ),
            });
        }
    }
    Ok(())
}

/// [`program_fits`] on `backend`.
pub fn program_fits_backend<B: Backend>(
    program: &DeviceProgram,
    backend: &B,
) -> Result<(), TooLarge> {
    program_fits(
        program,
        backend.name(),
        backend.max_devices(),
        backend.device_memory_bytes(),
    )
}

/// Whether `module` can run on a backend of `name` that runs at most
/// `max_devices` devices, on a host with `host_memory` bytes: every mesh
/// has at most that many devices, the inputs and outputs of the entry
/// function fit in the host's memory, and with `reference` (the unsharded
/// run of `--check`) so does every value of every function; and nothing
/// in it is what only `run` refuses (`ir::ops::runnable`).
/// Errors point at the mesh, function or op.
pub fn module_fits(
    module: &Module,
    name: &str,
    max_devices: usize,
    host_memory: Option<u64>,
    reference: bool,
) -> Result<(), Diagnostic> {
    if let Some(d) = meshrun_compiler::ir::ops::runnable::first_unrunnable(module) {
        return Err(d);
    }
    for def in &module.meshes {
        let devices = def
            .mesh
            .axes
            .iter()
            .try_fold(1u128, |n, a| n.checked_mul(a.size.max(0) as u128));
        if devices.is_none_or(|d| d > max_devices as u128) {
            return Err(Diagnostic::new(
                DiagKind::Unsupported,
                def.pos,
                format!(
                    "mesh @{} has {} devices; the {name} backend runs at most {max_devices}",
                    def.name,
                    devices.map_or_else(|| "more than 2^128".into(), |d| d.to_string())
                ),
            ));
        }
    }
    let Some(memory) = host_memory else {
        return Ok(());
    };
    let too_large = |pos: SrcPos, what: String, bytes: Option<u128>| {
        Diagnostic::new(
            DiagKind::Unsupported,
            pos,
            format!(
                "{what}: {} of host memory, more than this machine has ({})",
                bytes.map_or_else(|| "more than 2^128 bytes".into(), human_bytes),
                human_bytes(memory as u128)
            ),
        )
    };
    let fits = |b: Option<u128>| b.is_some_and(|b| b <= memory as u128);
    if let Some(entry) = module.entry() {
        let inputs: Vec<&TensorType> = entry.args.iter().map(|&a| entry.ty(a)).collect();
        let total = sum_bytes(&inputs);
        if !fits(total) {
            let what = format!("the inputs of @{} ({})", entry.name, list(&inputs));
            return Err(too_large(entry.pos, what, total));
        }
        let outputs: Vec<&TensorType> = entry.result_types.iter().collect();
        let total = sum_bytes(&outputs);
        if !fits(total) {
            let what = format!("the outputs of @{} ({})", entry.name, list(&outputs));
            return Err(too_large(entry.pos, what, total));
        }
    }
    if reference {
        for f in &module.funcs {
            if let Some((pos, ty)) = largest_value(f).filter(|(_, ty)| !fits(bytes_of(ty))) {
                let what = format!("the unsharded reference run of @{} ({ty})", f.name);
                return Err(too_large(pos, what, bytes_of(ty)));
            }
        }
    }
    Ok(())
}

/// [`module_fits`] on `backend` and this machine.
pub fn module_fits_backend<B: Backend>(
    module: &Module,
    backend: &B,
    reference: bool,
) -> Result<(), Diagnostic> {
    module_fits(
        module,
        backend.name(),
        backend.max_devices(),
        host_memory_bytes(),
        reference,
    )
}

fn sum_bytes(types: &[&TensorType]) -> Option<u128> {
    types
        .iter()
        .try_fold(0u128, |n, ty| n.checked_add(bytes_of(ty)?))
}

fn list(types: &[&TensorType]) -> String {
    let names: Vec<String> = types.iter().map(ToString::to_string).collect();
    names.join(", ")
}

/// The largest value of `f` (arguments included) and where it is made.
fn largest_value(f: &Function) -> Option<(SrcPos, &TensorType)> {
    let args = f.args.iter().map(|&a| (f.pos, f.ty(a)));
    let results = f
        .ops_in_order()
        .flat_map(|(_, op)| op.results.iter().map(move |&r| (op.pos, f.ty(r))));
    args.chain(results)
        .max_by_key(|(_, ty)| bytes_of(ty).unwrap_or(u128::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use meshrun_compiler::ir::ElemType;

    #[test]
    fn meminfo_total_in_bytes() {
        let text = "MemTotal:       24684096 kB\nMemFree:  1 kB\n";
        assert_eq!(mem_total(text), Some(24684096 * 1024));
        assert_eq!(mem_total("MemFree: 1 kB"), None);
    }

    #[test]
    fn sizes_in_words() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(3 << 29), "1.5 GiB");
        assert_eq!(human_bytes(399_999_999_996), "372.5 GiB");
    }

    #[test]
    fn byte_counts_do_not_overflow() {
        let ty = TensorType::new(vec![i64::MAX, i64::MAX, 8], ElemType::F64);
        assert_eq!(bytes_of(&ty), None);
        let ty = TensorType::new(vec![99_999_999_999], ElemType::F32);
        assert_eq!(bytes_of(&ty), Some(399_999_999_996));
    }
}
