//! What the executor works out once per program, block by block: that
//! every value is defined before it is read (with the scopes of loop and
//! branch blocks), each device's place in each collective, and when each
//! value can be released.
//!
//! Release rule: a block releases the values it defines (its arguments
//! and its instructions' results) after their last read *in that block*,
//! except the values it yields (or, at the top level, the program's
//! outputs). A value read inside a nested block counts as read by the
//! loop or branch instruction that owns the block, so a value from around
//! a loop lives until the loop ends. Values a block defines but never
//! reads are released when the block ends (each iteration, for a loop).

use std::collections::HashSet;

use meshrun_compiler::partition::reshard::collective::CollectiveKind;
use meshrun_compiler::partition::{Block, DeviceProgram, Instr, LocalId};

use crate::error::RuntimeError;
use crate::fusion::Unit;

/// A device's place in one collective, precomputed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    Group {
        group: usize,
        rank: usize,
    },
    Permute {
        send_to: Option<i64>,
        recv_from: Option<i64>,
    },
}

/// The plan of one block (or of the top level).
#[derive(Debug, Clone, Default)]
pub(crate) struct BlockPlan {
    /// What runs, in order: instructions, and at the top level fused
    /// groups ([`crate::fusion`]; blocks are never fused).
    pub units: Vec<Unit>,
    /// Per unit: the values to release right after it.
    pub frees: Vec<Vec<LocalId>>,
    /// Per instruction, per device position: its place in the collective
    /// (empty for other instructions).
    pub parts: Vec<Vec<Part>>,
    /// Per instruction: the plans of its blocks (a loop's cond and body, a
    /// branch's branches; empty for other instructions).
    pub subs: Vec<Vec<BlockPlan>>,
    /// Values the block defines but nobody reads: released at its end.
    pub leftovers: Vec<LocalId>,
    /// Per yielded value: whether the block defines it (then the caller
    /// takes it; otherwise it comes from around the block and is shared).
    pub owned_results: Vec<bool>,
}

/// A checked program with its plan, as a backend that runs whole
/// programs gets it ([`crate::Backend::run_whole`]); opaque outside the
/// crate.
pub struct PlannedProgram<'a> {
    pub(crate) program: &'a DeviceProgram,
    pub(crate) plan: &'a BlockPlan,
}

fn bad(msg: String) -> RuntimeError {
    RuntimeError::Program(msg)
}

/// Plan `instrs`, a block with arguments `args` whose values `keep` must
/// survive it, run as `units`; `defined` says which values are visible on
/// entry.
pub(crate) fn plan_block(
    program: &DeviceProgram,
    instrs: &[Instr],
    args: &[LocalId],
    keep: &[LocalId],
    mut defined: Vec<bool>,
    units: Vec<Unit>,
    where_: &str,
) -> Result<BlockPlan, RuntimeError> {
    let n = program.num_devices();
    let nv = program.values.len();
    let check_id = |v: usize, what: &str| {
        if v < nv {
            Ok(())
        } else {
            Err(bad(format!("{what} refers to value #{v} of {nv}")))
        }
    };
    let mut local: Vec<LocalId> = Vec::new();
    for &a in args {
        check_id(a, &format!("{where_}: a block argument"))?;
        defined[a] = true;
        local.push(a);
    }
    let mut last_use: Vec<Option<usize>> = vec![None; nv];
    let mut plan = BlockPlan::default();
    for (i, instr) in instrs.iter().enumerate() {
        let at = format!("{where_}instruction {i}");
        for v in instr.operands() {
            check_id(v, &at)?;
            if !defined[v] {
                return Err(bad(format!("{at} reads value #{v} before it is defined")));
            }
        }
        check_tables(instr, n).map_err(|m| bad(format!("{at}: {m}")))?;
        plan.parts.push(match instr {
            Instr::Collective { collective, .. } => {
                plan_parts(&program.devices, collective.kind, &collective.groups)
                    .map_err(|m| bad(format!("{at} ({}): {m}", collective.kind)))?
            }
            _ => Vec::new(),
        });
        let blocks: Vec<&Block> = match instr {
            Instr::Loop(l) => {
                check_carried(program, &l.inits, &l.cond, &l.body, &l.results)
                    .map_err(|m| bad(format!("{at} (loop): {m}")))?;
                vec![&l.cond, &l.body]
            }
            Instr::Branch(b) => {
                if b.branches.is_empty() {
                    return Err(bad(format!("{at}: a branch with no branches")));
                }
                for (k, blk) in b.branches.iter().enumerate() {
                    if blk.results.len() != b.results.len() {
                        return Err(bad(format!(
                            "{at}: branch {k} yields {} values for {} results",
                            blk.results.len(),
                            b.results.len()
                        )));
                    }
                }
                b.branches.iter().collect()
            }
            _ => Vec::new(),
        };
        let mut subs = Vec::with_capacity(blocks.len());
        for (k, blk) in blocks.into_iter().enumerate() {
            let inner = format!("{at}, block {k}: ");
            let units = (0..blk.instrs.len()).map(Unit::Instr).collect();
            subs.push(plan_block(
                program,
                &blk.instrs,
                &blk.args,
                &blk.results,
                defined.clone(),
                units,
                &inner,
            )?);
        }
        plan.subs.push(subs);
        for v in instr.results() {
            check_id(v, &at)?;
            defined[v] = true;
            local.push(v);
        }
    }
    for &v in keep {
        check_id(v, &format!("{where_}a yielded value"))?;
        if !defined[v] {
            return Err(bad(format!(
                "{where_}yields value #{v}, which is never computed"
            )));
        }
    }
    let owned: HashSet<LocalId> = local.iter().copied().collect();
    plan.owned_results = keep.iter().map(|v| owned.contains(v)).collect();
    let keep: HashSet<LocalId> = keep.iter().copied().collect();
    for (u, unit) in units.iter().enumerate() {
        let reads = match unit {
            Unit::Instr(i) => instrs[*i].operands(),
            Unit::Group(g) => g.operands.clone(),
            Unit::TransposedDot(t) => t.operands.clone(),
            Unit::DotChain(c) => c.operands(),
        };
        for v in reads {
            last_use[v] = Some(u);
        }
    }
    plan.frees = vec![Vec::new(); units.len()];
    plan.units = units;
    let mut seen = HashSet::new();
    for v in local {
        if keep.contains(&v) || !seen.insert(v) {
            continue;
        }
        match last_use[v] {
            Some(i) => plan.frees[i].push(v),
            None => plan.leftovers.push(v),
        }
    }
    Ok(plan)
}

/// A loop's initial values, both blocks' arguments, the body's yields and
/// the results are one list of local types; the condition is one `i1`.
fn check_carried(
    p: &DeviceProgram,
    inits: &[LocalId],
    cond: &Block,
    body: &Block,
    results: &[LocalId],
) -> Result<(), String> {
    let ty = |v: LocalId| p.values.get(v).map(|x| &x.ty);
    let lists = [
        ("cond arguments", &cond.args),
        ("body arguments", &body.args),
        ("body yields", &body.results),
        ("results", &results.to_vec()),
    ];
    for (what, list) in lists {
        if list.len() != inits.len() {
            return Err(format!(
                "{} {what} for {} carried values",
                list.len(),
                inits.len()
            ));
        }
        for (k, (&a, &b)) in inits.iter().zip(list.iter()).enumerate() {
            if ty(a) != ty(b) {
                return Err(format!("{what}: carried value {k} changes its type"));
            }
        }
    }
    match &cond.results[..] {
        [c] if ty(*c).is_some_and(|t| t.rank() == 0) => Ok(()),
        _ => Err("the condition must yield one scalar".into()),
    }
}

/// Every per-device table has one entry per device.
fn check_tables(instr: &Instr, n: usize) -> Result<(), String> {
    let len = match instr {
        Instr::Iota { offset: t, .. }
        | Instr::Mask { valid: t, .. }
        | Instr::SliceDim { start: t, .. } => t.0.len(),
        Instr::Remap { table, .. } => table.0.len(),
        Instr::Op { .. } | Instr::Collective { .. } | Instr::Loop(_) | Instr::Branch(_) => {
            return Ok(())
        }
    };
    if len == n {
        Ok(())
    } else {
        Err(format!(
            "a per-device table of {len} entries for {n} devices"
        ))
    }
}

/// Each device's place in a collective: its group and rank, or its permute
/// partners. Groups must split the devices into equal parts; permute pairs
/// may name each device at most once as a source and once as a target.
pub(crate) fn plan_parts(
    devices: &[i64],
    kind: CollectiveKind,
    groups: &[Vec<i64>],
) -> Result<Vec<Part>, String> {
    let position = |d: i64| {
        devices
            .iter()
            .position(|&x| x == d)
            .ok_or_else(|| format!("device {d} is not one of the program's devices"))
    };
    if kind == CollectiveKind::CollectivePermute {
        let mut parts = vec![
            Part::Permute {
                send_to: None,
                recv_from: None,
            };
            devices.len()
        ];
        let (mut sources, mut targets) = (HashSet::new(), HashSet::new());
        for pair in groups {
            let &[s, t] = pair.as_slice() else {
                return Err(format!("permute pair {pair:?} is not [source, target]"));
            };
            let (ps, pt) = (position(s)?, position(t)?);
            if !sources.insert(s) || !targets.insert(t) {
                return Err(format!("pair [{s}, {t}] repeats a source or a target"));
            }
            if let Part::Permute { send_to, .. } = &mut parts[ps] {
                *send_to = Some(t);
            }
            if let Part::Permute { recv_from, .. } = &mut parts[pt] {
                *recv_from = Some(s);
            }
        }
        return Ok(parts);
    }
    let size = groups.first().map_or(0, Vec::len);
    let mut parts: Vec<Option<Part>> = vec![None; devices.len()];
    for (g, members) in groups.iter().enumerate() {
        if members.len() != size || size == 0 {
            return Err(format!(
                "groups of different sizes ({size} and {})",
                members.len()
            ));
        }
        for (rank, &d) in members.iter().enumerate() {
            let slot = &mut parts[position(d)?];
            if slot.is_some() {
                return Err(format!("device {d} is in two groups"));
            }
            *slot = Some(Part::Group { group: g, rank });
        }
    }
    parts
        .into_iter()
        .zip(devices)
        .map(|(p, d)| p.ok_or_else(|| format!("device {d} is in no group")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_must_cover_every_device_once() {
        let devs = [0, 1, 2, 3];
        let ok = plan_parts(&devs, CollectiveKind::AllGather, &[vec![0, 2], vec![1, 3]]).unwrap();
        assert_eq!(ok[2], Part::Group { group: 0, rank: 1 });
        let missing = plan_parts(&devs, CollectiveKind::AllGather, &[vec![0, 2]]).unwrap_err();
        assert!(missing.contains("device 1 is in no group"), "{missing}");
        let twice =
            plan_parts(&devs, CollectiveKind::AllReduce, &[vec![0, 1], vec![1, 3]]).unwrap_err();
        assert!(twice.contains("two groups"), "{twice}");
        let unknown =
            plan_parts(&devs, CollectiveKind::AllReduce, &[vec![0, 9], vec![1, 3]]).unwrap_err();
        assert!(unknown.contains("device 9"), "{unknown}");
    }

    #[test]
    fn permute_pairs_give_partners() {
        let devs = [0, 1, 2];
        let parts = plan_parts(
            &devs,
            CollectiveKind::CollectivePermute,
            &[vec![0, 1], vec![2, 2]],
        )
        .unwrap();
        assert_eq!(
            parts[0],
            Part::Permute {
                send_to: Some(1),
                recv_from: None
            }
        );
        assert_eq!(
            parts[2],
            Part::Permute {
                send_to: Some(2),
                recv_from: Some(2)
            }
        );
        let dup = plan_parts(
            &devs,
            CollectiveKind::CollectivePermute,
            &[vec![0, 1], vec![2, 1]],
        );
        assert!(dup.is_err());
    }
}
