//! The names the printer gives values, as MLIR's printer gives them:
//! function and region arguments `%argN`, op results `%N` (`%N#k` for
//! several results), numbered in body order; a nested region's numbers
//! continue after every value of the block around it, and sibling regions
//! reuse the same numbers, so no name shadows one visible there.
//!
//! Ops whose pretty form names their region arguments (`Fmt::IterArgs`:
//! `stablehlo.while(%iterArg = ..., %iterArg_0 = ...)`) get MLIR's asm
//! names for them: `iterArg`, made unique within the scopes that see it
//! with `_K`, K from one conflict counter per function that each nested
//! region restarts from its parent's (MLIR's `SSANameState`). Named
//! arguments take no `%argN` number.

use std::collections::HashSet;

use crate::ir::ops::Fmt;
use crate::ir::{Function, OpData, OpId, Value};

/// The printed name of every value of `f`: `%argN` for arguments, `%N`
/// (or `%N#k` for multi-result ops) for op results in body order; `None`
/// for values neither an argument nor defined by the body.
pub fn value_names(f: &Function) -> Vec<Option<String>> {
    value_names_from(f, 0, 0)
}

/// [`value_names`] with argument and result numbering starting at
/// `arg_base` and `value_base` (a region body printed as its own
/// function, nested in another).
pub(crate) fn value_names_from(
    f: &Function,
    arg_base: usize,
    value_base: usize,
) -> Vec<Option<String>> {
    let mut namer = Namer {
        f,
        names: vec![None; f.values.len()],
        scopes: Vec::new(),
        conflict: 0,
    };
    namer.block(&f.args, None, &f.body, arg_base, value_base, 0);
    namer.names
}

/// Ops with results in `body` (each gets one number).
pub(crate) fn numbered_ops(f: &Function, body: &[OpId]) -> usize {
    body.iter()
        .filter(|id| {
            f.ops
                .get(id.index())
                .is_some_and(|op| !op.results.is_empty())
        })
        .count()
}

/// The asm name of the region arguments of `op`, if its pretty form names
/// them.
fn region_arg_name(op: &OpData) -> Option<&'static str> {
    let spec = op.kind.def()?.spec();
    spec.pretty?.contains(&Fmt::IterArgs).then_some("iterArg")
}

struct Namer<'f> {
    f: &'f Function,
    names: Vec<Option<String>>,
    /// Asm names taken, one set per block being named and those around it.
    scopes: Vec<HashSet<String>>,
    /// MLIR's `nextConflictID`.
    conflict: usize,
}

impl Namer<'_> {
    /// `base`, or `base_K` for the next K that no visible name has.
    fn unique(&mut self, base: &str) -> String {
        let taken = |scopes: &[HashSet<String>], n: &str| scopes.iter().any(|s| s.contains(n));
        let name = if taken(&self.scopes, base) {
            loop {
                let candidate = format!("{base}_{}", self.conflict);
                self.conflict += 1;
                if !taken(&self.scopes, &candidate) {
                    break candidate;
                }
            }
        } else {
            base.to_string()
        };
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name.clone());
        }
        name
    }

    fn set(&mut self, v: Value, name: String) {
        if let Some(slot) = self.names.get_mut(v.index()) {
            *slot = Some(name);
        }
    }

    fn block(
        &mut self,
        args: &[Value],
        arg_name: Option<&str>,
        body: &[OpId],
        arg_base: usize,
        value_base: usize,
        depth: usize,
    ) {
        self.scopes.push(HashSet::new());
        let mut next_arg = arg_base;
        for &v in args {
            let name = match arg_name {
                Some(base) => format!("%{}", self.unique(base)),
                None => {
                    next_arg += 1;
                    format!("%arg{}", next_arg - 1)
                }
            };
            self.set(v, name);
        }
        let f = self.f;
        let mut next = value_base;
        for id in body {
            let Some(op) = f.ops.get(id.index()) else {
                continue;
            };
            match op.results.as_slice() {
                [] => continue,
                [v] => self.set(*v, format!("%{next}")),
                many => {
                    for (k, &v) in many.iter().enumerate() {
                        self.set(v, format!("%{next}#{k}"));
                    }
                }
            }
            next += 1;
        }
        // The verifier bounds nesting for parsed programs; a built one
        // that nests absurdly deep just stays unnamed past this depth.
        if depth < 64 {
            let conflict = self.conflict;
            for id in body {
                let Some(op) = f.ops.get(id.index()) else {
                    continue;
                };
                let name = region_arg_name(op);
                for r in &op.regions {
                    self.conflict = conflict;
                    self.block(&r.args, name, &r.body, next_arg, next, depth + 1);
                }
            }
        }
        self.scopes.pop();
    }
}
