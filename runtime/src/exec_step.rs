//! One unit on one device: an instruction without blocks, a fused group,
//! a dot with the chain reading it, a transposed dot. `exec_blocks` runs
//! blocks of these units; the executor's planning lives above both.

use meshrun_compiler::ir::TensorType;
use meshrun_compiler::partition::{DeviceProgram, Instr, PerDevice};

use crate::backend::{Device, DeviceError, Participation};
use crate::exec_plan::Part;
use crate::fusion::{DotChain, Group, TransposedDot, Unit};

/// Value `v`'s buffer in `env`, or the error that it is not live (a
/// program the plan checked never gets it).
pub(crate) fn live_ref<B>(env: &[Option<B>], v: usize) -> Result<&B, DeviceError> {
    env.get(v)
        .and_then(Option::as_ref)
        .ok_or_else(|| DeviceError::Invalid(format!("value #{v} is not live")))
}

/// `live_ref` of each of `values`.
fn live_refs<'e, B>(env: &'e [Option<B>], values: &[usize]) -> Result<Vec<&'e B>, DeviceError> {
    values.iter().map(|&v| live_ref(env, v)).collect()
}

/// The value whose block `unit` may take over: the first operand of an
/// op that can write its result into it (a reshape, an identity, a
/// scatter, a dynamic_update_slice: `meshrun_kernels::cpu::in_place`),
/// when `frees` (the values released right after the unit) holds it and
/// no other operand reads it. [`step_into`] runs such a unit.
pub(crate) fn handed_over(unit: &Unit, instr: &Instr, frees: &[usize]) -> Option<usize> {
    let (
        Unit::Instr(_),
        Instr::Op {
            kind,
            operands,
            results,
            ..
        },
    ) = (unit, instr)
    else {
        return None;
    };
    let (&first, rest) = operands.split_first()?;
    let takes = results.len() == 1
        && meshrun_kernels::cpu::in_place::writes_into_first(kind, operands.len())
        && frees.contains(&first)
        && !rest.contains(&first);
    takes.then_some(first)
}

/// `instr`, the op of a unit [`handed_over`] picked, with its first
/// operand's buffer taken out of `env` and handed to the device
/// ([`Device::op_into`]).
pub(crate) fn step_into<D: Device>(
    p: &DeviceProgram,
    dev: &mut D,
    instr: &Instr,
    env: &mut [Option<D::Buffer>],
) -> Result<Vec<D::Buffer>, DeviceError> {
    let Instr::Op {
        kind,
        operands,
        results,
        ..
    } = instr
    else {
        return Err(DeviceError::Invalid(
            "only an op takes its operand over".into(),
        ));
    };
    let (&v, rest) = operands
        .split_first()
        .ok_or_else(|| DeviceError::Invalid("an op with no operand to take over".into()))?;
    let first = env
        .get_mut(v)
        .and_then(Option::take)
        .ok_or_else(|| DeviceError::Invalid(format!("value #{v} is not live")))?;
    let rest = live_refs(env, rest)?;
    let tys: Vec<TensorType> = results.iter().map(|&r| p.values[r].ty.clone()).collect();
    dev.op_into(kind, first, &rest, &tys)
}

/// Run a fused group: in one pass if the device can, else its members
/// one by one (their intermediate values live in `env` meanwhile and
/// are released after the root).
pub(crate) fn fused<D: Device>(
    p: &DeviceProgram,
    dev: &mut D,
    pos: usize,
    g: &Group,
    env: &mut [Option<D::Buffer>],
) -> Result<D::Buffer, DeviceError> {
    {
        let ops = live_refs(env, &g.operands)?;
        if let Some(r) = dev.fused(&g.chain, &ops) {
            return r;
        }
    }
    let mut root = None;
    let mut made = Vec::with_capacity(g.members.len());
    for &m in &g.members {
        let instr = &p.instrs[m];
        // A shared broadcast that also ran on its own is live already.
        if m != g.root && instr.results().first().is_some_and(|&v| env[v].is_some()) {
            continue;
        }
        // Members are element-wise ops: no collective place or number.
        let mut results = step(p, dev, pos, &[], 0, instr, env)?;
        let (Some(&v), Some(b)) = (instr.results().first(), results.pop()) else {
            return Err(DeviceError::Invalid(format!(
                "instruction {m} made no result"
            )));
        };
        if m == g.root {
            root = Some(b);
        } else {
            env[v] = Some(b);
            made.push(v);
        }
    }
    for v in made {
        if let Some(b) = env[v].take() {
            dev.release(b);
        }
    }
    root.ok_or_else(|| DeviceError::Invalid("a fused group without its root".into()))
}

/// Run a [`DotChain`]: on the dot's tiles if the device can, else the
/// dot, then its group (fused or op by op) reading it.
pub(crate) fn dot_chain<D: Device>(
    p: &DeviceProgram,
    dev: &mut D,
    pos: usize,
    c: &DotChain,
    env: &mut [Option<D::Buffer>],
) -> Result<D::Buffer, DeviceError> {
    let dot_ty = p.values[c.dot_result].ty.clone();
    let product = {
        let dot_ops = live_refs(env, &c.dot_operands)?;
        let chain_ops = c
            .group
            .operands
            .iter()
            .enumerate()
            .map(|(k, &v)| (k != c.slot).then(|| live_ref(env, v)).transpose())
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(r) = dev.dot_fused(&c.kind, &dot_ops, &dot_ty, &c.group.chain, &chain_ops) {
            return r;
        }
        dev.op(&c.kind, &dot_ops, &[dot_ty])?
            .pop()
            .ok_or_else(|| DeviceError::Invalid("the dot made no result".into()))?
    };
    env[c.dot_result] = Some(product);
    let r = fused(p, dev, pos, &c.group, env);
    if let Some(b) = env[c.dot_result].take() {
        dev.release(b);
    }
    r
}

/// Run a [`TransposedDot`]: its swapped `dot_general`, which makes the
/// transpose's result, then its all-reduce if it has one (`reduce`:
/// the collective's instance and each device's place in it).
pub(crate) fn transposed_dot<D: Device>(
    p: &DeviceProgram,
    dev: &mut D,
    pos: usize,
    t: &TransposedDot,
    reduce: Option<(u64, &[Part])>,
    env: &[Option<D::Buffer>],
) -> Result<D::Buffer, DeviceError> {
    let ops = live_refs(env, &t.operands)?;
    let ty = &p.values[t.result].ty;
    let product = dev
        .op(&t.kind, &ops, std::slice::from_ref(ty))?
        .pop()
        .ok_or_else(|| DeviceError::Invalid("the dot made no result".into()))?;
    let (Some(red), Some((instance, parts))) = (&t.reduce, reduce) else {
        return Ok(product);
    };
    let part = match parts.get(pos) {
        Some(&Part::Group { group, rank }) => Participation::Group {
            group,
            rank,
            members: &red.collective.groups[group],
        },
        _ => return Err(DeviceError::Invalid("no place in the all-reduce".into())),
    };
    let summed = dev.collective(instance, &red.collective, part, &product, ty);
    dev.release(product);
    summed
}

/// Run one instruction without blocks; its results in
/// `instr.results()` order. `parts` is each device's place in it if it
/// is a collective, `instance` numbers the collective within the run
/// (the same on every device: all run the same control flow).
pub(crate) fn step<D: Device>(
    p: &DeviceProgram,
    dev: &mut D,
    pos: usize,
    parts: &[Part],
    instance: u64,
    instr: &Instr,
    env: &[Option<D::Buffer>],
) -> Result<Vec<D::Buffer>, DeviceError> {
    let get = |v: usize| live_ref(env, v);
    let ty = |v: usize| -> &TensorType { &p.values[v].ty };
    let at = |t: &PerDevice<i64>| t.at(pos).copied().unwrap_or(0);
    Ok(match instr {
        Instr::Op {
            kind,
            operands,
            results,
            ..
        } => {
            let ops = operands
                .iter()
                .map(|&v| get(v))
                .collect::<Result<Vec<_>, _>>()?;
            let tys: Vec<TensorType> = results.iter().map(|&v| ty(v).clone()).collect();
            dev.op(kind, &ops, &tys)?
        }
        Instr::Iota {
            result,
            dim,
            offset,
            ..
        } => vec![dev.iota(ty(*result), *dim, at(offset))?],
        Instr::Collective {
            collective,
            operand,
            result,
            ..
        } => {
            let part = match parts.get(pos) {
                Some(&Part::Group { group, rank }) => Participation::Group {
                    group,
                    rank,
                    members: &collective.groups[group],
                },
                Some(&Part::Permute { send_to, recv_from }) => {
                    Participation::Permute { send_to, recv_from }
                }
                None => return Err(DeviceError::Invalid("no place in the collective".into())),
            };
            vec![dev.collective(instance, collective, part, get(*operand)?, ty(*result))?]
        }
        Instr::Mask {
            operand,
            dim,
            valid,
            fill,
            ..
        } => vec![dev.mask(get(*operand)?, *dim, at(valid), *fill)?],
        Instr::SliceDim {
            operand,
            dim,
            start,
            size,
            ..
        } => vec![dev.slice_dim(get(*operand)?, *dim, at(start), *size)?],
        Instr::Remap {
            sources,
            fill,
            result,
            dim,
            table,
            ..
        } => {
            let srcs = sources
                .iter()
                .map(|&v| get(v))
                .collect::<Result<Vec<_>, _>>()?;
            let fill = fill.map(get).transpose()?;
            let entries = table
                .at(pos)
                .ok_or_else(|| DeviceError::Invalid("no remap table for this device".into()))?;
            vec![dev.remap(&srcs, fill, ty(*result), *dim, entries)?]
        }
        Instr::Loop(_) | Instr::Branch(_) => {
            return Err(DeviceError::Invalid(
                "a loop or branch is run by run_block".into(),
            ))
        }
    })
}

/// A short name for errors: the op name, the collective kind, or the
/// instruction kind.
pub(crate) fn instr_name(instr: &Instr) -> String {
    match instr {
        Instr::Op { kind, .. } => kind.name(),
        Instr::Iota { .. } => "iota".into(),
        Instr::Collective { collective, .. } => collective.kind.to_string(),
        Instr::Mask { .. } => "mask".into(),
        Instr::SliceDim { .. } => "slice".into(),
        Instr::Remap { .. } => "remap".into(),
        Instr::Loop(_) => "loop".into(),
        Instr::Branch(_) => "branch".into(),
    }
}
