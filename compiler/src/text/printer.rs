//! Printer: `Module` → text in the dialect the parser reads, using the
//! pretty op forms JAX prints. Arguments are named `%argN` and op results
//! `%N` (`%N:K` / `%N#i` for several results), so printing is canonical:
//! print → parse → print gives the same text.
//!
//! The printer never panics, even on a module built in Rust that breaks
//! the IR's rules (dangling values, wrong operand counts): it prints what is
//! there and leaves the complaint to `ir::verify` or to the parser.

use std::fmt::Write;

use crate::ir::{
    Function, Module, NamedAttr, OpData, OpKind, ParamAttrs, Region, TensorType, Value,
};
use crate::sharding::TensorSharding;
use crate::text::lexer::quote;
use crate::text::parse_attrs::is_bare_attr_name;
use crate::text::value_names::{numbered_ops, value_names, value_names_from};

pub fn print_module(m: &Module) -> String {
    let ops: usize = m.funcs.iter().map(|f| f.body.len()).sum();
    let mut out = String::with_capacity(256 + ops * 160);
    out.push_str("module");
    if let Some(name) = &m.name {
        out.push(' ');
        write_symbol(&mut out, name);
    }
    if !m.attrs.is_empty() {
        out.push_str(" attributes");
        write_attr_dict(&mut out, None, &m.attrs);
    }
    out.push_str(" {\n");
    for mesh in &m.meshes {
        out.push_str("  sdy.mesh ");
        write_symbol(&mut out, &mesh.name);
        let _ = write!(out, " = {}", mesh.mesh);
        if let Some(attrs) = &mesh.attrs {
            out.push(' ');
            out.push_str(attrs);
        }
        out.push('\n');
    }
    for f in &m.funcs {
        FuncPrinter::new(f, &mut out).print();
    }
    out.push_str("}\n");
    out
}

/// `@name`, quoted when it is not a bare identifier.
pub(crate) fn write_symbol(out: &mut String, name: &str) {
    out.push('@');
    if is_bare_attr_name(name) {
        out.push_str(name);
    } else {
        out.push_str(&quote(name));
    }
}

/// ` {a = v, unit, ...}` (nothing if empty). `sdy.sharding`, if given, is
/// placed where MLIR's sorted dictionaries put it: before the first
/// attribute whose name sorts after it.
pub(crate) fn write_attr_dict(out: &mut String, sharding: Option<&str>, attrs: &[NamedAttr]) {
    if sharding.is_none() && attrs.is_empty() {
        return;
    }
    out.push_str(" {");
    let mut first = true;
    let mut sep = |out: &mut String| {
        if !first {
            out.push_str(", ");
        }
        first = false;
    };
    let mut pending = sharding;
    for a in attrs {
        if let Some(s) = pending {
            if a.name.as_str() > "sdy.sharding" {
                sep(out);
                out.push_str("sdy.sharding = ");
                out.push_str(s);
                pending = None;
            }
        }
        sep(out);
        if is_bare_attr_name(&a.name) {
            out.push_str(&a.name);
        } else {
            out.push_str(&quote(&a.name));
        }
        if let Some(v) = &a.value {
            out.push_str(" = ");
            out.push_str(v);
        }
    }
    if let Some(s) = pending {
        sep(out);
        out.push_str("sdy.sharding = ");
        out.push_str(s);
    }
    out.push('}');
}

fn per_value_text(shardings: &[TensorSharding]) -> String {
    let mut s = String::from("#sdy.sharding_per_value<[");
    for (i, sh) in shardings.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "{sh}");
    }
    s.push_str("]>");
    s
}

/// Prints one function (or one region's body); owns the value → name
/// table.
pub(crate) struct FuncPrinter<'a> {
    pub f: &'a Function,
    pub out: &'a mut String,
    /// Printed name of each value (`None`: not defined by args or body).
    names: Vec<Option<String>>,
    /// Indentation of the ops of this body.
    indent: usize,
    /// Arguments visible in the block being printed (its own and the
    /// enclosing ones'), and the number after its last value: where a
    /// nested region's numbering starts (as in [`value_names_from`]).
    args_in_scope: usize,
    block_end: usize,
}

impl<'a> FuncPrinter<'a> {
    fn new(f: &'a Function, out: &'a mut String) -> Self {
        let names = value_names(f);
        FuncPrinter {
            f,
            out,
            names,
            indent: 4,
            args_in_scope: f.args.len(),
            block_end: numbered_ops(f, &f.body),
        }
    }

    /// Whether the ops being printed are a function's own body, where
    /// `func.func`'s default dialect applies (not the regions of the ops
    /// in it).
    pub(crate) fn in_function_body(&self) -> bool {
        self.indent <= 4
    }

    /// A printer for a region's body nested in this one.
    pub(crate) fn nested<'b>(&'b mut self, body: &'b Function) -> FuncPrinter<'b> {
        let arg_base = self.args_in_scope;
        FuncPrinter {
            f: body,
            names: value_names_from(body, arg_base, self.block_end),
            indent: self.indent + 2,
            args_in_scope: arg_base + body.args.len(),
            block_end: self.block_end + numbered_ops(body, &body.body),
            out: self.out,
        }
    }

    /// A structural region of an op of this function:
    /// `{\n [^bb0(args):\n] ops\n terminator ...\n }`.
    pub(crate) fn region(&mut self, r: &Region, terminator: &str) {
        self.region_body(r, terminator, true);
    }

    /// A region whose block arguments the op's pretty form already named
    /// (`stablehlo.while`'s `cond { ... }`).
    pub(crate) fn region_without_header(&mut self, r: &Region, terminator: &str) {
        self.region_body(r, terminator, false);
    }

    fn region_body(&mut self, r: &Region, terminator: &str, header: bool) {
        let saved = (self.indent, self.args_in_scope, self.block_end);
        self.out.push_str("{\n");
        if header && !r.args.is_empty() {
            self.pad(0);
            self.out.push_str("^bb0(");
            for (i, a) in r.args.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                self.value(*a);
                self.out.push_str(": ");
                self.write_ty(self.ty(*a));
            }
            self.out.push_str("):\n");
        }
        self.indent += 2;
        self.args_in_scope += r.args.len();
        self.block_end += numbered_ops(self.f, &r.body);
        for id in &r.body {
            if let Some(op) = self.f.ops.get(id.index()) {
                self.op(op);
            }
        }
        self.pad(0);
        self.out.push_str(terminator);
        if !r.returns.is_empty() {
            self.out.push(' ');
            self.values(&r.returns);
            self.out.push_str(" : ");
            self.type_list(&r.returns);
        }
        self.out.push('\n');
        (self.indent, self.args_in_scope, self.block_end) = saved;
        self.pad(0);
        self.out.push('}');
    }

    pub(crate) fn pad(&mut self, extra: isize) {
        for _ in 0..self.indent.saturating_add_signed(extra) {
            self.out.push(' ');
        }
    }

    pub(crate) fn value(&mut self, v: Value) {
        match self.names.get(v.index()).and_then(|n| n.as_deref()) {
            Some(n) => self.out.push_str(n),
            None => {
                let _ = write!(self.out, "%undefined{}", v.0);
            }
        }
    }

    pub(crate) fn values(&mut self, vs: &[Value]) {
        for (i, v) in vs.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.value(*v);
        }
    }

    pub(crate) fn ty(&self, v: Value) -> Option<&'a TensorType> {
        self.f.values.get(v.index()).map(|d| &d.ty)
    }

    pub(crate) fn write_ty(&mut self, t: Option<&TensorType>) {
        match t {
            Some(t) => {
                let _ = write!(self.out, "{t}");
            }
            None => self.out.push_str("tensor<f32>"),
        }
    }

    pub(crate) fn type_list(&mut self, vs: &[Value]) {
        for (i, v) in vs.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.write_ty(self.ty(*v));
        }
    }

    /// `(t1, t2) -> t3` or `-> (t3, t4)` / `-> ()` for other result counts.
    pub(crate) fn functional(&mut self, op: &OpData) {
        self.out.push('(');
        self.type_list(&op.operands);
        self.out.push_str(") -> ");
        if op.results.len() == 1 {
            self.type_list(&op.results);
        } else {
            self.out.push('(');
            self.type_list(&op.results);
            self.out.push(')');
        }
    }

    /// `t` when every operand and the single result have type `t`, else
    /// the functional form (MLIR's SameOperandsAndResultType printing).
    pub(crate) fn same_type_sig(&mut self, op: &OpData) {
        let result = match op.results.as_slice() {
            [r] => self.ty(*r),
            _ => None,
        };
        let all_same = result.is_some() && op.operands.iter().all(|o| self.ty(*o) == result);
        if all_same {
            self.write_ty(result);
        } else {
            self.functional(op);
        }
    }

    fn param_attrs(&mut self, p: Option<&ParamAttrs>) {
        if let Some(p) = p {
            let sharding = p.sharding.as_ref().map(|s| format!("#sdy.sharding{s}"));
            write_attr_dict(self.out, sharding.as_deref(), &p.attrs);
        }
    }

    fn print(mut self) {
        let f = self.f;
        self.out.push_str("  func.func ");
        if let Some(kw) = f.visibility.keyword() {
            self.out.push_str(kw);
            self.out.push(' ');
        }
        write_symbol(self.out, &f.name);
        self.out.push('(');
        for (i, v) in f.args.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.value(*v);
            self.out.push_str(": ");
            self.write_ty(self.ty(*v));
            self.param_attrs(f.arg_attrs.get(i));
        }
        self.out.push(')');
        let plain_results = f
            .result_attrs
            .iter()
            .all(|p| p.sharding.is_none() && p.attrs.is_empty());
        match f.result_types.as_slice() {
            [] => {}
            [t] if plain_results => {
                let _ = write!(self.out, " -> {t}");
            }
            tys => {
                self.out.push_str(" -> (");
                for (i, t) in tys.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    let _ = write!(self.out, "{t}");
                    self.param_attrs(f.result_attrs.get(i));
                }
                self.out.push(')');
            }
        }
        if !f.attrs.is_empty() {
            self.out.push_str(" attributes");
            write_attr_dict(self.out, None, &f.attrs);
        }
        self.out.push_str(" {\n");
        for id in &f.body {
            if let Some(op) = f.ops.get(id.index()) {
                self.op(op);
            }
        }
        self.out.push_str("    return");
        if !f.returns.is_empty() {
            self.out.push(' ');
            self.values(&f.returns);
            self.out.push_str(" : ");
            self.type_list(&f.returns);
        }
        self.out.push_str("\n  }\n");
    }

    pub(crate) fn op(&mut self, op: &OpData) {
        self.pad(0);
        match op.results.as_slice() {
            [] => {}
            [v] => {
                self.value(*v);
                self.out.push_str(" = ");
            }
            [v, ..] => {
                let base = self
                    .names
                    .get(v.index())
                    .and_then(|n| n.as_deref())
                    .and_then(|n| n.split_once('#'))
                    .map(|(b, _)| b.to_string())
                    .unwrap_or_else(|| format!("%undefined{}", v.0));
                let _ = write!(self.out, "{base}:{} = ", op.results.len());
            }
        }
        let sharding = op.shardings.as_deref().map(per_value_text);
        if let Some(def) = op.kind.def() {
            self.defined(op, def, sharding.as_deref());
            self.out.push('\n');
            return;
        }
        let attrs = |p: &mut Self| write_attr_dict(p.out, sharding.as_deref(), &op.attrs);
        let name = op.kind.name();
        match &op.kind {
            OpKind::Unary(_) | OpKind::Binary(_) if is_chlo(&op.kind) => {
                // CHLO's format: `chlo.erf %x : t -> t`,
                // `chlo.zeta %a, %b : t, t -> t`.
                let _ = write!(self.out, "{name} ");
                self.values(&op.operands);
                attrs(self);
                self.out.push_str(" : ");
                self.type_list(&op.operands);
                self.out.push_str(" -> ");
                self.type_list(&op.results);
            }
            OpKind::Unary(_) | OpKind::Binary(_) => {
                let _ = write!(self.out, "{name} ");
                self.values(&op.operands);
                attrs(self);
                self.out.push_str(" : ");
                self.same_type_sig(op);
            }
            _ => {}
        }
        self.out.push('\n');
    }
}

/// Whether an element-wise op is CHLO's (printed with CHLO's signature).
fn is_chlo(kind: &OpKind) -> bool {
    match kind {
        OpKind::Unary(u) => u.is_chlo(),
        OpKind::Binary(b) => b.is_chlo(),
        _ => false,
    }
}
