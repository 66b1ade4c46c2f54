//! `--explain VALUE`: a value's propagated sharding, axis by axis, with the
//! op, factor and tensor each axis came from. Values are named as the
//! printer names them in the propagated module (`%argN`, `%N`, `%N#k`),
//! and function results as `resultN`.

use std::fmt::Write;

use crate::diag::{DiagKind, Diagnostic, SrcPos};
use crate::ir::{Function, Value};
use crate::rules::factor_symbol;
use crate::text::value_names;

use super::provenance::{Origin, Slot};
use super::values::sharding_of;
use super::Propagated;

/// Find the slot a user names: `%argN`, `%N`, `%N#k` or `resultN`.
pub fn find_slot(f: &Function, name: &str) -> Option<Slot> {
    let name = name.trim();
    if let Some(i) = name.strip_prefix("result") {
        let i: usize = i.trim().parse().ok()?;
        return (i < f.returns.len()).then_some(Slot::Result(i));
    }
    let wanted = if name.starts_with('%') {
        name.to_string()
    } else {
        format!("%{name}")
    };
    value_names(f)
        .iter()
        .position(|n| n.as_deref() == Some(wanted.as_str()))
        .map(|i| Slot::Value(Value(i as u32)))
}

/// The explanation of `value` in function `func` (the entry function if
/// `None`) of a propagated module.
pub fn explain(p: &Propagated, func: Option<&str>, value: &str) -> Result<String, Diagnostic> {
    let index = match func {
        Some(name) => p.module.funcs.iter().position(|f| f.name == name),
        None => p
            .module
            .entry()
            .and_then(|e| p.module.funcs.iter().position(|f| f.name == e.name)),
    }
    .ok_or_else(|| {
        Diagnostic::new(
            DiagKind::UndefinedName,
            SrcPos::UNKNOWN,
            "the module has no such function to explain",
        )
    })?;
    let f = &p.module.funcs[index];
    let slot = find_slot(f, value).ok_or_else(|| {
        Diagnostic::new(
            DiagKind::UndefinedName,
            SrcPos::UNKNOWN,
            format!(
                "@{} has no value {value}; name an argument (%arg0), an op result (%3, %4#1) \
                 or a function result (result0) of the propagated module",
                f.name
            ),
        )
    })?;
    let names = value_names(f);
    let name_of = |s: Slot| match s {
        Slot::Value(v) => names
            .get(v.index())
            .cloned()
            .flatten()
            .unwrap_or_else(|| format!("value #{}", v.0)),
        Slot::Result(i) => format!("result{i}"),
    };
    let (ty, sharding) = match slot {
        Slot::Value(v) => (f.ty(v).clone(), sharding_of(f, v).cloned()),
        Slot::Result(i) => (
            f.result_types
                .get(i)
                .cloned()
                .unwrap_or_else(|| f.ty(f.returns[i]).clone()),
            f.result_attrs.get(i).and_then(|a| a.sharding.clone()),
        ),
    };
    let mut out = String::new();
    let _ = write!(out, "{} : {ty}", name_of(slot));
    match &sharding {
        Some(s) => {
            let _ = writeln!(out, " sharded {s}");
        }
        None => {
            let _ = writeln!(out, " has no sharding");
        }
    }
    let entries = p
        .provenance
        .get(index)
        .map_or(&[][..], |prov| prov.get(slot));
    if entries.is_empty() {
        let _ = writeln!(out, "  no dimension is sharded (replicated)");
    }
    if let Some(s) = sharding.as_ref().filter(|s| !s.unreduced.is_empty()) {
        let axes: Vec<String> = s.unreduced.iter().map(|a| a.to_string()).collect();
        let _ = writeln!(
            out,
            "  unreduced over {{{}}}: a partial sum, as annotated or constrained",
            axes.join(", ")
        );
    }
    let stage = |s: usize| p.stages.get(s).cloned().unwrap_or_default();
    for e in entries {
        let _ = write!(out, "  dim {} {}: ", e.dim, e.axis);
        let _ = match &e.origin {
            Origin::Annotated => writeln!(out, "written in the program"),
            Origin::Caller => writeln!(out, "from the caller of @{}, through the call", f.name),
            Origin::Constraint { from } => {
                writeln!(out, "from the sharding constraint {}", name_of(*from))
            }
            Origin::Op {
                op,
                factor,
                from,
                stage: s,
            } => {
                let data = f.ops.get(op.index());
                let what = data.map_or("an op".to_string(), |d| d.kind.name());
                let at = data.map_or(String::new(), |d| format!(" at {}", d.pos));
                let source = from.map_or(String::new(), |t| format!(", from {}", name_of(t)));
                writeln!(
                    out,
                    "propagated through {what}{at} along factor {}{source} ({})",
                    factor_symbol(*factor),
                    stage(*s)
                )
            }
            Origin::Group { from } => {
                writeln!(out, "shared with {} in its sharding group", name_of(*from))
            }
            Origin::FuncResult { index, stage: s } => match slot {
                Slot::Result(_) => {
                    let returned = f.returns.get(*index).map(|&v| name_of(Slot::Value(v)));
                    writeln!(
                        out,
                        "from the value @{} returns, {} ({})",
                        f.name,
                        returned.unwrap_or_default(),
                        stage(*s)
                    )
                }
                Slot::Value(_) => writeln!(
                    out,
                    "from the sharding of result{index} of @{} ({})",
                    f.name,
                    stage(*s)
                ),
            },
        };
    }
    Ok(out)
}
