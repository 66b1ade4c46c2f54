//! Listings of the global program in Shardy's notation: with explicit
//! `sdy.reshard` / `sdy.all_reduce` steps, or with every reshard lowered
//! to its collectives (`sdy.all_gather [{}, {"x"}] %3 out_sharding=...`).
//! Each data movement is followed by a comment saying why it exists.

use std::fmt::Write;

use crate::partition::global::explicit_reshards::braced;
use crate::partition::global::{value_names, GBlock, GStepKind, GValueId, GlobalProgram};
use crate::partition::lower::Lowering;
use crate::partition::program::op_text::op_attrs;
use crate::partition::program::regions::Block;
use crate::partition::program::{DeviceProgram, Instr, LocalId, PerDevice};
use crate::partition::reshard::collective::{collective_bytes, CollectiveKind};

fn header(out: &mut String, prog: &GlobalProgram, names: &[String]) {
    for m in &prog.meshes {
        let _ = writeln!(out, "sdy.mesh @{} = {}", m.name, m.mesh);
    }
    let args: Vec<String> = prog
        .args
        .iter()
        .map(|&a| {
            let v = prog.value(a);
            format!("{}: {} {}", names[a], v.ty, v.sharding)
        })
        .collect();
    let _ = writeln!(out, "func @{}({}) {{", prog.name, args.join(", "));
}

fn footer(out: &mut String, prog: &GlobalProgram, names: &[String]) {
    let rets: Vec<String> = prog.results.iter().map(|&r| names[r].clone()).collect();
    let types: Vec<String> = prog
        .results
        .iter()
        .map(|&r| prog.value(r).ty.to_string())
        .collect();
    let _ = writeln!(out, "  return {} : {}", rets.join(", "), types.join(", "));
    out.push_str("}\n");
}

fn operand_list(ids: &[GValueId], names: &[String]) -> String {
    ids.iter()
        .map(|&v| names[v].clone())
        .collect::<Vec<_>>()
        .join(", ")
}

fn compute_line(prog: &GlobalProgram, names: &[String], i: usize) -> String {
    let s = &prog.steps[i];
    let GStepKind::Compute(kind) = &s.kind else {
        return String::new();
    };
    let results = operand_list(&s.results, names);
    let attrs = op_attrs(kind);
    let mut line = match s.results.is_empty() {
        true => format!("  {}", kind.name()),
        false => format!("  {results} = {}", kind.name()),
    };
    if !s.operands.is_empty() {
        line.push(' ');
        line.push_str(&operand_list(&s.operands, names));
        if !attrs.is_empty() {
            line.push(',');
        }
    }
    if !attrs.is_empty() {
        line.push(' ');
        line.push_str(&attrs);
    }
    let shardings: Vec<String> = s
        .results
        .iter()
        .map(|&r| prog.value(r).sharding.to_string())
        .collect();
    let types: Vec<String> = s
        .results
        .iter()
        .map(|&r| prog.value(r).ty.to_string())
        .collect();
    if !s.results.is_empty() {
        let _ = write!(
            line,
            " {{sdy.sharding = #sdy.sharding_per_value<[{}]>}} : {}",
            shardings.join(", "),
            types.join(", ")
        );
    }
    line
}

/// The lines of one step (each `"  ..."` and ending in a newline); loops
/// and branches come from [`structured_lines`].
type StepLines<'a> = dyn Fn(usize) -> String + 'a;

/// `steps` (top level or a block), nested blocks indented.
fn steps_text(
    prog: &GlobalProgram,
    names: &[String],
    steps: &[usize],
    line: &StepLines<'_>,
) -> String {
    let mut out = String::new();
    for &i in steps {
        match &prog.steps[i].kind {
            GStepKind::Loop { .. } | GStepKind::Branch { .. } => {
                out.push_str(&structured_lines(prog, names, i, line));
            }
            _ => out.push_str(&line(i)),
        }
    }
    out
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

fn block_text(
    prog: &GlobalProgram,
    names: &[String],
    head: &str,
    b: &GBlock,
    line: &StepLines<'_>,
) -> String {
    let args = operand_list(&b.args, names);
    let mut out = if args.is_empty() {
        format!("  {head} {{\n")
    } else {
        format!("  {head}({args}) {{\n")
    };
    out.push_str(&indent(&steps_text(prog, names, &b.steps, line)));
    let _ = writeln!(out, "    return {}", operand_list(&b.results, names));
    out.push_str("  }\n");
    out
}

/// A loop (`while ... cond {..} do {..}`) or a branch (`case` with one
/// block per branch).
fn structured_lines(
    prog: &GlobalProgram,
    names: &[String],
    i: usize,
    line: &StepLines<'_>,
) -> String {
    let s = &prog.steps[i];
    let results = operand_list(&s.results, names);
    let shardings: Vec<String> = s
        .results
        .iter()
        .map(|&r| prog.value(r).sharding.to_string())
        .collect();
    let mut out = String::new();
    match &s.kind {
        GStepKind::Loop {
            cond,
            body,
            trip_count,
        } => {
            let inits: Vec<String> = body
                .args
                .iter()
                .zip(&s.operands)
                .map(|(&a, &o)| format!("{} = {}", names[a], names[o]))
                .collect();
            let trips = trip_count.map_or_else(
                || "trip count unknown".to_string(),
                |n| format!("trip count {n}"),
            );
            let _ = writeln!(
                out,
                "  {results} = while({}) {{sdy.sharding = #sdy.sharding_per_value<[{}]>}}    // {}: {trips}",
                inits.join(", "),
                shardings.join(", "),
                s.cause.op
            );
            out.push_str(&block_text(prog, names, "cond", cond, line));
            out.push_str(&block_text(prog, names, "do", body, line));
        }
        GStepKind::Branch { branches } => {
            let _ = writeln!(
                out,
                "  {results} = case {} {{sdy.sharding = #sdy.sharding_per_value<[{}]>}}    // {}",
                names[s.operands[0]],
                shardings.join(", "),
                s.cause.op
            );
            for (k, b) in branches.iter().enumerate() {
                out.push_str(&block_text(prog, names, &format!("branch {k}"), b, line));
            }
        }
        _ => {}
    }
    out
}

/// The program with `sdy.reshard` and `sdy.all_reduce` steps.
pub fn print_global(prog: &GlobalProgram) -> String {
    let names = value_names(prog);
    let mut out = String::new();
    header(&mut out, prog, &names);
    let line = |i: usize| -> String {
        let s = &prog.steps[i];
        let line = match &s.kind {
            GStepKind::Reshard => {
                let (v, r) = (s.operands[0], s.results[0]);
                format!(
                    "  {} = sdy.reshard {} {} : {}    // {}: {}",
                    names[r],
                    names[v],
                    prog.value(r).sharding,
                    prog.value(r).ty,
                    s.cause.op,
                    s.cause.reason
                )
            }
            GStepKind::Relabel => {
                let (v, r) = (s.operands[0], s.results[0]);
                format!(
                    "  {} = {} : {} {}    // {}: {}",
                    names[r],
                    names[v],
                    prog.value(r).ty,
                    prog.value(r).sharding,
                    s.cause.op,
                    s.cause.reason
                )
            }
            GStepKind::ToUnreduced { axes } => {
                let (v, r) = (s.operands[0], s.results[0]);
                // Shardy's names: the axes were replicated, or ended dims.
                let sharded = prog.value(v).sharding.dims != prog.value(r).sharding.dims;
                format!(
                    "  {} = sdy.{}_to_unreduced {} {} out_sharding={} : {}    // {}: {}",
                    names[r],
                    if sharded { "sharded" } else { "replicated" },
                    braced(axes),
                    names[v],
                    prog.value(r).sharding,
                    prog.value(r).ty,
                    s.cause.op,
                    s.cause.reason
                )
            }
            GStepKind::StackPartials { axes } => {
                let (v, r) = (s.operands[0], s.results[0]);
                format!(
                    "  {} = stack_partials {} {} out_sharding={} : {}    // {}",
                    names[r],
                    braced(axes),
                    names[v],
                    prog.value(r).sharding,
                    prog.value(r).ty,
                    s.cause.op
                )
            }
            GStepKind::AllReduce { axes, reduction } => {
                let (v, r) = (s.operands[0], s.results[0]);
                format!(
                    "  {} = sdy.all_reduce {} {} out_sharding={} : {}    // {} ({}): {}",
                    names[r],
                    braced(axes),
                    names[v],
                    prog.value(r).sharding,
                    prog.value(r).ty,
                    s.cause.op,
                    reduction.name(),
                    s.cause.reason
                )
            }
            _ => compute_line(prog, &names, i),
        };
        format!("{line}\n")
    };
    out.push_str(&steps_text(prog, &names, &prog.top_level(), &line));
    footer(&mut out, prog, &names);
    out
}

/// The program with every reshard and all-reduce replaced by its
/// collectives (all-slices included, they are free).
pub fn print_lowered(prog: &GlobalProgram, lowering: &Lowering) -> String {
    let names = value_names(prog);
    let mut out = String::new();
    header(&mut out, prog, &names);
    let line = |i: usize| -> String {
        let s = &prog.steps[i];
        let mut out = String::new();
        if let GStepKind::Compute(_) = s.kind {
            out.push_str(&compute_line(prog, &names, i));
            out.push('\n');
            return out;
        }
        let collectives = lowering.per_step.get(i).map_or(&[][..], |c| &c[..]);
        let (v, r) = (s.operands[0], s.results[0]);
        if let GStepKind::StackPartials { .. } = s.kind {
            let _ = writeln!(
                out,
                "  {} = reshape {} out_sharding={} : {}    // no data moves: each device's partial result is its block of the new dimension",
                names[r],
                names[v],
                prog.value(r).sharding,
                prog.value(r).ty
            );
            return out;
        }
        if let GStepKind::ToUnreduced { axes } = &s.kind {
            let _ = writeln!(
                out,
                "  {} = to_unreduced {} {} out_sharding={} : {}    // {}",
                names[r],
                braced(axes),
                names[v],
                prog.value(r).sharding,
                prog.value(r).ty,
                s.cause.reason
            );
            return out;
        }
        if collectives.is_empty() {
            let _ = writeln!(
                out,
                "  {} = {}    // no data moves (fused into the next collective or already in place)",
                names[r], names[v]
            );
            return out;
        }
        if let Some(dim) = lowering.remap_dim.get(i).copied().flatten() {
            for (k, c) in collectives.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "  {}.halo{k} = sdy.collective_permute slab<{}> of {} along dimension {dim}, pairs={:?}    // {}: {} [{} B/device]",
                    names[r],
                    c.in_local_shape.iter().map(ToString::to_string).collect::<Vec<_>>().join("x"),
                    names[v],
                    c.groups,
                    s.cause.op,
                    s.cause.reason,
                    collective_bytes(c, lowering.num_devices)
                );
            }
            let _ = writeln!(
                out,
                "  {} = remap {} along dimension {dim} with {} halo(s) out_sharding={} : {}",
                names[r],
                names[v],
                collectives.len(),
                prog.value(r).sharding,
                prog.value(r).ty
            );
            return out;
        }
        let mut input = names[v].clone();
        for (k, c) in collectives.iter().enumerate() {
            let result = if k + 1 == collectives.len() {
                names[r].clone()
            } else {
                format!("{}.{k}", names[r])
            };
            let _ = writeln!(
                out,
                "  {result} = {}    // {}: {} [{} B/device]",
                c.to_sdy(&input),
                s.cause.op,
                s.cause.reason,
                collective_bytes(c, lowering.num_devices)
            );
            input = result;
        }
        out
    };
    out.push_str(&steps_text(prog, &names, &prog.top_level(), &line));
    footer(&mut out, prog, &names);
    out
}

/// The device program: every instruction with local types. With
/// `device`, per-device tables are resolved for that device and
/// collectives show only its group; without, tables are listed whole.
pub fn print_device(p: &DeviceProgram, device: Option<i64>) -> Result<String, String> {
    let position = match device {
        Some(d) => Some(p.position(d).ok_or_else(|| {
            format!(
                "device {d} is not one of the program's {} devices ({:?})",
                p.num_devices(),
                p.devices
            )
        })?),
        None => None,
    };
    let name = |v: LocalId| p.values[v].name.clone();
    let ty = |v: LocalId| p.values[v].ty.to_string();
    let table = |t: &PerDevice<i64>| -> String {
        match position {
            Some(i) => t.at(i).map_or_else(|| "?".into(), ToString::to_string),
            None => format!("per-device{:?}", t.0),
        }
    };
    let mut out = String::new();
    match device {
        Some(d) => {
            let _ = writeln!(
                out,
                "// device {d} of {} (devices {:?})",
                p.num_devices(),
                p.devices
            );
        }
        None => {
            let _ = writeln!(out, "// SPMD program for devices {:?}", p.devices);
        }
    }
    let _ = writeln!(out, "func @{} {{", p.name);
    for (k, io) in p.inputs.iter().enumerate() {
        let _ = writeln!(
            out,
            "  input {k}: {}: {}    // global {} {}",
            name(io.value),
            ty(io.value),
            io.global,
            io.sharding
        );
    }
    let line = |instr: &Instr| -> String {
        match instr {
            Instr::Loop(_) | Instr::Branch(_) => String::new(),
            Instr::Op {
                kind,
                operands,
                results,
                ..
            } => {
                let res: Vec<String> = results.iter().map(|&r| name(r)).collect();
                let ops: Vec<String> = operands.iter().map(|&o| name(o)).collect();
                let attrs = op_attrs(kind);
                let types: Vec<String> = results.iter().map(|&r| ty(r)).collect();
                // An op without results (a side-effecting custom call)
                // prints no `=` and no types.
                let mut l = match res.is_empty() {
                    true => format!("  {}", kind.name()),
                    false => format!("  {} = {}", res.join(", "), kind.name()),
                };
                if !ops.is_empty() {
                    let _ = write!(l, " {}", ops.join(", "));
                    if !attrs.is_empty() {
                        l.push(',');
                    }
                }
                if !attrs.is_empty() {
                    let _ = write!(l, " {attrs}");
                }
                if !types.is_empty() {
                    let _ = write!(l, " : {}", types.join(", "));
                }
                l
            }
            Instr::Iota {
                result,
                dim,
                offset,
                ..
            } => format!(
                "  {} = iota dim = {dim}, offset = {} : {}",
                name(*result),
                table(offset),
                ty(*result)
            ),
            Instr::Collective {
                collective: c,
                operand,
                result,
                cause,
                ..
            } => {
                let groups = match (position, c.kind) {
                    (Some(i), CollectiveKind::CollectivePermute) => {
                        let d = p.devices[i];
                        let from: Vec<i64> = c
                            .groups
                            .iter()
                            .filter(|g| g.last() == Some(&d) && g.first() != Some(&d))
                            .filter_map(|g| g.first().copied())
                            .collect();
                        let to: Vec<i64> = c
                            .groups
                            .iter()
                            .filter(|g| g.first() == Some(&d) && g.last() != Some(&d))
                            .filter_map(|g| g.last().copied())
                            .collect();
                        format!("receives from {from:?}, sends to {to:?}")
                    }
                    (Some(i), _) => {
                        let d = p.devices[i];
                        match c.groups.iter().find(|g| g.contains(&d)) {
                            Some(g) => format!(
                                "group {g:?}, rank {}",
                                g.iter().position(|&x| x == d).unwrap_or(0)
                            ),
                            None => "no group".into(),
                        }
                    }
                    (None, _) => format!("groups {:?}", c.groups),
                };
                let what = match c.kind {
                    CollectiveKind::AllReduce | CollectiveKind::ReduceScatter => {
                        format!(" {}", braced(&c.axes))
                    }
                    CollectiveKind::CollectivePermute => String::new(),
                    CollectiveKind::AllToAll => match c.all_to_all {
                        Some(d) => format!(" {} {}->{}", braced(&c.axes), d.src_dim, d.tgt_dim),
                        None => String::new(),
                    },
                    _ => {
                        let dims: Vec<String> = c.dim_axes.iter().map(|a| braced(a)).collect();
                        format!(" [{}]", dims.join(", "))
                    }
                };
                format!(
                    "  {} = {}{what} {}, {groups} : {} -> {}    // {}: {}",
                    name(*result),
                    c.kind,
                    name(*operand),
                    ty(*operand),
                    ty(*result),
                    cause.op,
                    cause.reason
                )
            }
            Instr::Mask {
                operand,
                result,
                dim,
                valid,
                fill,
                ..
            } => format!(
                "  {} = mask {}, dim = {dim}, valid = {}, fill = {fill:?} : {}",
                name(*result),
                name(*operand),
                table(valid),
                ty(*result)
            ),
            Instr::SliceDim {
                operand,
                result,
                dim,
                start,
                size,
                ..
            } => format!(
                "  {} = slice_dim {}, dim = {dim}, start = {}, size = {size} : {}",
                name(*result),
                name(*operand),
                table(start),
                ty(*result)
            ),
            Instr::Remap {
                sources,
                fill,
                result,
                dim,
                table: t,
                ..
            } => {
                let srcs: Vec<String> = sources.iter().map(|&s| name(s)).collect();
                let entries = match position {
                    Some(i) => t.at(i).map_or_else(String::new, |row| {
                        row.iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    }),
                    None => format!("{} per-device rows", t.0.len()),
                };
                format!(
                    "  {} = remap [{}]{}, dim = {dim}, table = [{entries}] : {}",
                    name(*result),
                    srcs.join(", "),
                    fill.map_or_else(String::new, |f| format!(", fill = {}", name(f))),
                    ty(*result)
                )
            }
        }
    };
    out.push_str(&device_instrs(p, &p.instrs, &line));
    let outs: Vec<String> = p.outputs.iter().map(|io| name(io.value)).collect();
    let _ = writeln!(out, "  return {}", outs.join(", "));
    for (k, io) in p.outputs.iter().enumerate() {
        let _ = writeln!(
            out,
            "  // output {k}: {}: {}, global {} {}",
            name(io.value),
            ty(io.value),
            io.global,
            io.sharding
        );
    }
    out.push_str("}\n");
    Ok(out)
}

/// Device instructions, one per line, loops and branches with their
/// blocks indented.
fn device_instrs(p: &DeviceProgram, instrs: &[Instr], line: &dyn Fn(&Instr) -> String) -> String {
    let names = |vs: &[LocalId]| -> String {
        vs.iter()
            .map(|&v| p.values[v].name.clone())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let types = |vs: &[LocalId]| -> String {
        vs.iter()
            .map(|&v| p.values[v].ty.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let block = |head: &str, b: &Block| -> String {
        let mut out = if b.args.is_empty() {
            format!("  {head} {{\n")
        } else {
            format!("  {head}({}) {{\n", names(&b.args))
        };
        out.push_str(&indent(&device_instrs(p, &b.instrs, line)));
        let _ = writeln!(out, "    return {}", names(&b.results));
        out.push_str("  }\n");
        out
    };
    let mut out = String::new();
    for instr in instrs {
        match instr {
            Instr::Loop(l) => {
                let inits: Vec<String> = l
                    .body
                    .args
                    .iter()
                    .zip(&l.inits)
                    .map(|(&a, &o)| format!("{} = {}", p.values[a].name, p.values[o].name))
                    .collect();
                let trips = l.trip_count.map_or_else(
                    || "trip count unknown".to_string(),
                    |n| format!("trip count {n}"),
                );
                let _ = writeln!(
                    out,
                    "  {} = loop({}) : {}    // {}: {trips}",
                    names(&l.results),
                    inits.join(", "),
                    types(&l.results),
                    l.cause.op
                );
                out.push_str(&block("cond", &l.cond));
                out.push_str(&block("do", &l.body));
            }
            Instr::Branch(b) => {
                let _ = writeln!(
                    out,
                    "  {} = branch {} : {}    // {}",
                    names(&b.results),
                    p.values[b.index].name,
                    types(&b.results),
                    b.cause.op
                );
                for (k, blk) in b.branches.iter().enumerate() {
                    out.push_str(&block(&format!("branch {k}"), blk));
                }
            }
            _ => {
                out.push_str(&line(instr));
                out.push('\n');
            }
        }
    }
    out
}
