//! The IR verifier: checks that a module is a well-formed program before
//! anything interprets it. Every later pass (propagation, partitioning, the
//! interpreter) may assume what is checked here: values are defined before
//! use, every op's result types follow its shape rules (see
//! [`crate::ir::infer`]), calls match their callee and do not recurse,
//! annotations have one entry per value.
//!
//! Each problem is a [`Diagnostic`] at the op's (or function's) position
//! whose message starts with the op name, e.g.
//! `stablehlo.dot_general: contracting dimension sizes differ: ...`.
//! [`module_errors`] collects all of them (one CLI line each);
//! [`verify_module`] returns the first.

use crate::diag::{DiagKind, Diagnostic, SrcPos};
use crate::ir::infer::{check_call, check_result_types};
use crate::ir::ops::RegionTypes;
use crate::ir::types::TensorType;
use crate::ir::{Function, Module, OpData, OpId, Value, ValueDef};
use crate::sharding::{MeshRef, TensorSharding};

mod call_graph;
mod manual;
pub mod shardings;

/// Check a whole module; `Err` is its first problem.
pub fn verify_module(m: &Module) -> Result<(), Diagnostic> {
    first_error(module_errors(m))
}

/// Check one function of `m` (calls are resolved in `m`); `Err` is its first
/// problem. Call cycles are a module-level property: see [`verify_module`].
pub fn verify_function(m: &Module, f: &Function) -> Result<(), Diagnostic> {
    first_error(function_errors(m, f))
}

/// Every problem of a module: duplicate function names, each function's
/// problems in program order, then call cycles.
pub fn module_errors(m: &Module) -> Vec<Diagnostic> {
    let mut errors = Vec::new();
    for (i, f) in m.funcs.iter().enumerate() {
        if m.funcs[..i].iter().any(|g| g.name == f.name) {
            errors.push(Diagnostic::new(
                DiagKind::Type,
                f.pos,
                format!("func.func: function @{} is defined more than once", f.name),
            ));
        }
    }
    for f in &m.funcs {
        errors.extend(function_errors(m, f));
    }
    errors.extend(call_graph::cycle_errors(m));
    errors
}

/// Every problem of one function, in program order.
pub fn function_errors(m: &Module, f: &Function) -> Vec<Diagnostic> {
    let mut checker = FunctionChecker::new(m, f);
    checker.check_signature();
    checker.check_body();
    checker.check_returns();
    let mut errors = checker.errors;
    errors.extend(manual::placement_errors(m, f));
    errors
}

fn first_error(errors: Vec<Diagnostic>) -> Result<(), Diagnostic> {
    match errors.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Walks one function in program order, tracking which values are defined
/// so far.
struct FunctionChecker<'a> {
    module: &'a Module,
    f: &'a Function,
    errors: Vec<Diagnostic>,
    /// `defined[v]`: value `v` is an argument or a result of an op already
    /// walked, in a scope that is still open.
    defined: Vec<bool>,
    /// Values defined so far, in order: leaving a region undefines what
    /// was defined inside it.
    defined_log: Vec<Value>,
    /// Ops already walked (an op listed twice is an error).
    seen: Vec<bool>,
    /// Index in `body` of each op (first occurrence), `None` if not there.
    body_index: Vec<Option<usize>>,
}

impl<'a> FunctionChecker<'a> {
    fn new(module: &'a Module, f: &'a Function) -> Self {
        let mut body_index = vec![None; f.ops.len()];
        for (i, id) in f.body.iter().enumerate() {
            if let Some(slot) = body_index.get_mut(id.index()) {
                slot.get_or_insert(i);
            }
        }
        FunctionChecker {
            module,
            f,
            errors: Vec::new(),
            defined: vec![false; f.values.len()],
            defined_log: Vec::new(),
            seen: vec![false; f.ops.len()],
            body_index,
        }
    }

    fn error(&mut self, kind: DiagKind, pos: SrcPos, message: String) {
        self.errors.push(Diagnostic::new(kind, pos, message));
    }

    fn func_error(&mut self, message: String) {
        let msg = format!("func.func @{}: {message}", self.f.name);
        self.error(DiagKind::Type, self.f.pos, msg);
    }

    fn op_error(&mut self, op: &OpData, kind: DiagKind, message: String) {
        self.error(kind, op.pos, format!("{}: {message}", op.kind.name()));
    }

    fn value_type(&self, v: Value) -> Option<&'a TensorType> {
        self.f.values.get(v.index()).map(|d| &d.ty)
    }

    /// Arguments and their attributes; result attributes.
    fn check_signature(&mut self) {
        let f = self.f;
        if f.arg_attrs.len() != f.args.len() {
            self.func_error(format!(
                "has {} but {}",
                count(f.args.len(), "argument", "arguments"),
                count(
                    f.arg_attrs.len(),
                    "argument attribute entry",
                    "argument attribute entries"
                )
            ));
        }
        if f.result_attrs.len() != f.result_types.len() {
            self.func_error(format!(
                "has {} but {}",
                count(f.result_types.len(), "result", "results"),
                count(
                    f.result_attrs.len(),
                    "result attribute entry",
                    "result attribute entries"
                )
            ));
        }
        for (i, &v) in f.args.iter().enumerate() {
            match f.values.get(v.index()) {
                Some(data) if data.def == ValueDef::Arg(i as u32) => {
                    self.define(v);
                    if let Some(msg) = negative_dim(&data.ty) {
                        self.func_error(format!("argument {i} {msg}"));
                    }
                }
                _ => self.func_error(format!("argument {i} is not recorded as argument {i}")),
            }
        }
        for (i, attrs) in f.arg_attrs.iter().enumerate() {
            if let (Some(s), Some(ty)) = (
                &attrs.sharding,
                f.args.get(i).and_then(|&v| self.value_type(v)),
            ) {
                if let Some(msg) = sharding_rank_mismatch(self.module, s, ty) {
                    self.error(
                        DiagKind::Sharding,
                        f.pos,
                        format!("func.func @{}: argument {i}: {msg}", f.name),
                    );
                }
            }
        }
        for (i, ty) in f.result_types.iter().enumerate() {
            if let Some(msg) = negative_dim(ty) {
                self.func_error(format!("result {i} {msg}"));
            }
            if let Some(s) = f.result_attrs.get(i).and_then(|a| a.sharding.as_ref()) {
                if let Some(msg) = sharding_rank_mismatch(self.module, s, ty) {
                    self.error(
                        DiagKind::Sharding,
                        f.pos,
                        format!("func.func @{}: result {i}: {msg}", f.name),
                    );
                }
            }
        }
    }

    /// Every op in program order.
    fn check_body(&mut self) {
        let f = self.f;
        self.check_block(&f.body);
    }

    /// The ops of one block (the body or a region) in order.
    fn check_block(&mut self, ids: &'a [OpId]) {
        let f = self.f;
        for &id in ids {
            let Some(op) = f.ops.get(id.index()) else {
                self.func_error(format!("the body lists op #{}, which does not exist", id.0));
                continue;
            };
            if std::mem::replace(&mut self.seen[id.index()], true) {
                self.op_error(op, DiagKind::Type, "op appears twice in the body".into());
                continue;
            }
            self.check_op(id, op);
        }
    }

    fn define(&mut self, v: Value) {
        if let Some(d) = self.defined.get_mut(v.index()) {
            *d = true;
            self.defined_log.push(v);
        }
    }

    fn check_op(&mut self, id: OpId, op: &'a OpData) {
        let operand_types = self.check_operands(id, op);
        let region_types = self.check_regions(id, op);
        let result_types = self.check_result_values(id, op);
        if let (Some(operands), Some(results), Some(regions)) =
            (operand_types, result_types, region_types)
        {
            let checked =
                self.check_bodies(op)
                    .and_then(|()| match (op.kind.callee(), op.kind.def()) {
                        (Some(callee), _) => self.check_call_op(callee, &operands, &results),
                        (_, Some(def)) if !regions.is_empty() || def.takes_regions() => def
                            .check_with_regions(&operands, &results, &regions)
                            .map_err(|msg| (DiagKind::Type, msg)),
                        (_, None) if !regions.is_empty() => {
                            Err((DiagKind::Type, "cannot have regions".to_string()))
                        }
                        _ => check_result_types(&op.kind, &operands, &results)
                            .map_err(|msg| (DiagKind::Type, msg)),
                    });
            let checked = checked.and_then(|()| match op.kind.def() {
                Some(def) => def
                    .check_in_module(&self.module.meshes, &operands, &results, &regions)
                    .map_err(|msg| (DiagKind::Sharding, msg)),
                None => Ok(()),
            });
            if let Err((kind, msg)) = checked {
                self.op_error(op, kind, msg);
            }
            self.check_op_shardings(op, &results);
        }
        for &r in &op.results {
            self.define(r);
        }
    }

    /// The op's scalar bodies that are checked as functions of their own
    /// (`OpDef::bodies_checked_as_functions`); a body is its own scope, so
    /// it is checked against an empty module.
    fn check_bodies(&self, op: &OpData) -> Result<(), (DiagKind, String)> {
        let Some(def) = op.kind.def() else {
            return Ok(());
        };
        for (what, body) in def.bodies_checked_as_functions() {
            if let Some(e) = function_errors(&Module::default(), body.func())
                .into_iter()
                .next()
            {
                return Err((
                    DiagKind::Type,
                    if e.pos.is_known() {
                        format!("in its {what} at {}: {}", e.pos, e.message)
                    } else {
                        format!("in its {what}: {}", e.message)
                    },
                ));
            }
        }
        Ok(())
    }

    /// Each region: its arguments point back at it, its ops check in a
    /// scope of their own (values defined before the op are visible), its
    /// returned values are defined. Returns the regions' argument and
    /// return types (`None` if a value is missing).
    fn check_regions(&mut self, id: OpId, op: &'a OpData) -> Option<Vec<RegionTypes>> {
        let mut out = Some(Vec::with_capacity(op.regions.len()));
        for (r, region) in op.regions.iter().enumerate() {
            let mark = self.defined_log.len();
            let mut args = Vec::with_capacity(region.args.len());
            for (i, &a) in region.args.iter().enumerate() {
                let expected = ValueDef::RegionArg {
                    op: id,
                    region: r as u32,
                    index: i as u32,
                };
                match self.f.values.get(a.index()) {
                    Some(data) if data.def == expected => args.push(data.ty.clone()),
                    _ => {
                        self.op_error(
                            op,
                            DiagKind::Type,
                            format!("argument {i} of region {r} is not recorded as one"),
                        );
                        out = None;
                        continue;
                    }
                }
                self.define(a);
            }
            self.check_block(&region.body);
            let mut returns = Vec::with_capacity(region.returns.len());
            for (i, &v) in region.returns.iter().enumerate() {
                match self.f.values.get(v.index()) {
                    Some(data) if self.defined[v.index()] => returns.push(data.ty.clone()),
                    _ => {
                        self.error(
                            DiagKind::UndefinedName,
                            region.return_pos,
                            format!(
                                "{}: region {r} returns a value ({i}) that is not defined there",
                                op.kind.name()
                            ),
                        );
                        out = None;
                    }
                }
            }
            for v in self.defined_log.drain(mark..) {
                self.defined[v.index()] = false;
            }
            if let Some(o) = out.as_mut() {
                o.push(RegionTypes { args, returns });
            }
        }
        out
    }

    /// Operands exist and are defined earlier; their types if all exist.
    fn check_operands(&mut self, id: OpId, op: &OpData) -> Option<Vec<TensorType>> {
        let mut types = Some(Vec::with_capacity(op.operands.len()));
        for (i, &v) in op.operands.iter().enumerate() {
            match self.f.values.get(v.index()) {
                None => {
                    self.op_error(
                        op,
                        DiagKind::UndefinedName,
                        format!("operand {i} does not exist"),
                    );
                    types = None;
                }
                Some(data) => {
                    if !self.defined[v.index()] {
                        let why = self.why_undefined(data.def, Some(id));
                        self.op_error(
                            op,
                            DiagKind::UndefinedName,
                            format!("operand {i} is used before it is defined: {why}"),
                        );
                    }
                    if let Some(t) = types.as_mut() {
                        t.push(data.ty.clone());
                    }
                }
            }
        }
        types
    }

    /// Where an undefined value would have come from, in words; `user` is
    /// the op that uses it (`None` for the return).
    fn why_undefined(&self, def: ValueDef, user: Option<OpId>) -> String {
        match def {
            ValueDef::Arg(n) => format!("it claims to be argument {n}, which this function lacks"),
            ValueDef::Result { op, .. } if Some(op) == user => "it is a result of this op".into(),
            ValueDef::Result { op, .. } => {
                let Some(data) = self.f.ops.get(op.index()) else {
                    return "its defining op does not exist".into();
                };
                let name = data.kind.name();
                match self.body_index.get(op.index()).copied().flatten() {
                    Some(_) if data.pos.is_known() => {
                        format!(
                            "it comes from the {name} at {}, later in the body",
                            data.pos
                        )
                    }
                    Some(_) => format!("it comes from a {name} later in the body"),
                    None => format!(
                        "its defining {name} is not in the function body or an enclosing region"
                    ),
                }
            }
            ValueDef::RegionArg { op, region, .. } => match self.f.ops.get(op.index()) {
                Some(data) => format!(
                    "it is an argument of region {region} of the {} at {}, used outside that region",
                    data.kind.name(),
                    data.pos
                ),
                None => "its region's op does not exist".into(),
            },
        }
    }

    /// Result values exist and point back at this op; their types.
    fn check_result_values(&mut self, id: OpId, op: &OpData) -> Option<Vec<TensorType>> {
        let mut types = Vec::with_capacity(op.results.len());
        for (i, &r) in op.results.iter().enumerate() {
            let expected = ValueDef::Result {
                op: id,
                index: i as u32,
            };
            match self.f.values.get(r.index()) {
                Some(data) if data.def == expected => types.push(data.ty.clone()),
                _ => {
                    self.op_error(
                        op,
                        DiagKind::Type,
                        format!("result {i} is not recorded as a result of this op"),
                    );
                    return None;
                }
            }
        }
        Some(types)
    }

    fn check_call_op(
        &self,
        callee: &str,
        operands: &[TensorType],
        results: &[TensorType],
    ) -> Result<(), (DiagKind, String)> {
        let Some(g) = self.module.func(callee) else {
            return Err((
                DiagKind::UndefinedName,
                format!("no function named @{callee} in the module"),
            ));
        };
        let params: Option<Vec<TensorType>> = g
            .args
            .iter()
            .map(|&v| g.values.get(v.index()).map(|d| d.ty.clone()))
            .collect();
        let Some(params) = params else {
            return Err((
                DiagKind::Type,
                format!("@{callee} has a malformed argument list"),
            ));
        };
        check_call(callee, &params, &g.result_types, operands, results)
            .map_err(|msg| (DiagKind::Type, msg))
    }

    /// `sdy.sharding`: one sharding per result, of the result's rank (an
    /// op without results may hold one rank-0 sharding: where it runs, as
    /// Shardy keeps on a side-effecting custom call).
    fn check_op_shardings(&mut self, op: &OpData, results: &[TensorType]) {
        let Some(shardings) = &op.shardings else {
            return;
        };
        if shardings.len() != results.len() && !op.is_placement_only() {
            self.op_error(
                op,
                DiagKind::Sharding,
                format!(
                    "has {} but {} in sdy.sharding",
                    count(results.len(), "result", "results"),
                    count(shardings.len(), "sharding", "shardings")
                ),
            );
            return;
        }
        for (i, (s, ty)) in shardings.iter().zip(results).enumerate() {
            if let Some(msg) = sharding_rank_mismatch(self.module, s, ty) {
                self.op_error(op, DiagKind::Sharding, format!("result {i}: {msg}"));
            }
        }
    }

    /// The `return`: defined values matching the declared result types.
    fn check_returns(&mut self) {
        let f = self.f;
        let pos = f.return_pos;
        let err = |this: &mut Self, kind, msg: String| {
            this.error(kind, pos, format!("func.return: {msg}"));
        };
        if f.returns.len() != f.result_types.len() {
            err(
                self,
                DiagKind::Type,
                format!(
                    "returns {} but @{} declares {}",
                    count(f.returns.len(), "value", "values"),
                    f.name,
                    count(f.result_types.len(), "result", "results")
                ),
            );
        }
        for (i, &v) in f.returns.iter().enumerate() {
            let Some(data) = f.values.get(v.index()) else {
                err(
                    self,
                    DiagKind::UndefinedName,
                    format!("value {i} does not exist"),
                );
                continue;
            };
            if !self.defined[v.index()] {
                let why = self.why_undefined(data.def, None);
                err(
                    self,
                    DiagKind::UndefinedName,
                    format!("value {i} is not defined before the return: {why}"),
                );
            }
            if let Some(declared) = f.result_types.get(i) {
                if *declared != data.ty {
                    err(
                        self,
                        DiagKind::Type,
                        format!(
                            "value {i} has type {} but @{} declares result {i} as {declared}",
                            data.ty, f.name
                        ),
                    );
                }
            }
        }
    }
}

/// `"1 result"`, `"2 results"`: `n` with the noun's singular or plural.
fn count(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// `Some(why)` if a type has a negative dimension size.
fn negative_dim(ty: &TensorType) -> Option<String> {
    ty.shape.iter().position(|&d| d < 0).map(|i| {
        format!(
            "type {ty} has negative size {} in dimension {i}",
            ty.shape[i]
        )
    })
}

/// `Some(why)` unless `s` has one dimension sharding per dimension of `ty`.
/// A sharding on a maximal mesh has none whatever the rank (the sharding
/// validator checks it).
fn sharding_rank_mismatch(m: &Module, s: &TensorSharding, ty: &TensorType) -> Option<String> {
    let maximal = match &s.mesh {
        MeshRef::Symbol(name) => m.mesh(name).is_some_and(|d| d.mesh.is_maximal()),
        MeshRef::Inline(mesh) => mesh.is_maximal(),
    };
    (!maximal && s.dims.len() != ty.rank()).then(|| {
        format!(
            "sharding {s} has {} dimension shardings but {ty} has rank {}",
            s.dims.len(),
            ty.rank()
        )
    })
}
