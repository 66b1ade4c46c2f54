//! Printing ops defined in `crate::ir::ops` from their definitions: the pretty
//! form by following the definition's directives (the same list the
//! parser follows), else the generic form with properties and regions.

use std::fmt::Write;

use crate::ir::attr::Attr;
use crate::ir::ops::decode::I64Rows;
use crate::ir::ops::{AttrCodec, Fmt, OpDef, SigForm};
use crate::ir::NamedAttr;
use crate::ir::{Computation, Function, OpData, OpKind, TensorType, Value};
use crate::text::print_attr::{axis_name_set, axis_ref_list, sharding_list};
use crate::text::print_literal::write_dense;
use crate::text::printer::{write_attr_dict, write_symbol, FuncPrinter};

/// A value as a pretty form writes it: integer arrays as `[1, 2]`,
/// boolean arrays as `[true, false]`, rank-2 integer matrices as
/// `[[0, 1], [2, 3]]`, integers without their type, enums as their bare
/// value.
fn pretty_value(a: &Attr) -> String {
    match a {
        Attr::DenseArray { elem, values } if elem != "i1" => Attr::int_list(values).to_string(),
        Attr::DenseArray { values, .. } => {
            let items: Vec<&str> = values
                .iter()
                .map(|&v| if v != 0 { "true" } else { "false" })
                .collect();
            format!("[{}]", items.join(", "))
        }
        Attr::Dense { .. } => match I64Rows::decode(a) {
            Ok(m) => {
                let rows: Vec<String> = m
                    .rows
                    .iter()
                    .map(|r| Attr::int_list(r).to_string())
                    .collect();
                format!("[{}]", rows.join(", "))
            }
            Err(_) => a.to_string(),
        },
        Attr::Int { value, .. } => value.to_string(),
        Attr::Enum { value, .. } => value.clone(),
        other => other.to_string(),
    }
}

/// `key = value` for a [`Fmt::DimsPair`], [`Fmt::EnumList`] or
/// [`Fmt::Prefixed`], or `None` where it shows nothing. A `Prefixed`
/// attribute it writes is taken out of `dict` (the attributes left for
/// the dictionary; `None`: all of the op's).
fn keyed_entry(
    entry: &Fmt,
    attrs: &[(&'static str, Attr)],
    op: &OpData,
    dict: &mut Option<Vec<NamedAttr>>,
) -> Option<String> {
    let find = |name: &str| attrs.iter().find(|(n, _)| *n == name).map(|(_, a)| a);
    match *entry {
        Fmt::DimsPair {
            key,
            attr,
            lhs,
            rhs,
            always,
            ..
        } => {
            let param = |p: &str| match find(attr) {
                Some(Attr::Params { params, .. }) => params
                    .iter()
                    .find(|(k, _)| k == p)
                    .and_then(|(_, v)| Vec::<i64>::decode(v).ok())
                    .unwrap_or_default(),
                _ => Vec::new(),
            };
            let (l, r) = (param(lhs), param(rhs));
            if l.is_empty() && r.is_empty() && !always {
                return None;
            }
            Some(format!(
                "{key} = {} x {}",
                Attr::int_list(&l),
                Attr::int_list(&r)
            ))
        }
        Fmt::EnumList { key, attr, .. } => {
            let Attr::List(items) = find(attr)? else {
                return find(attr).map(|a| format!("{key} = {a}"));
            };
            let names: Vec<String> = items
                .iter()
                .map(|a| match a {
                    Attr::Enum { value, .. } => value.clone(),
                    other => other.to_string(),
                })
                .collect();
            Some(format!("{key} = [{}]", names.join(", ")))
        }
        Fmt::Prefixed(key, prefix) => {
            let current = dict.as_deref().unwrap_or(&op.attrs);
            let i = current.iter().position(|a| {
                a.name == key && a.value.as_deref().is_some_and(|v| v.starts_with(prefix))
            })?;
            let value = current[i].value.clone().unwrap_or_default();
            dict.get_or_insert_with(|| op.attrs.clone()).remove(i);
            Some(format!("{key} = {}", &value[prefix.len()..]))
        }
        _ => None,
    }
}

/// Whether the pretty form can show the op's regions: one `Region`
/// directive per region, and with `IterArgs` every region's arguments
/// typed as the operands.
fn regions_fit(format: &[Fmt], op: &OpData) -> bool {
    let slots = format
        .iter()
        .filter(|d| matches!(d, Fmt::Region(_) | Fmt::ArgsRegion))
        .count();
    slots == op.regions.len()
}

/// Whether the directives mention every attribute the op has.
fn covers(format: &[Fmt], attrs: &[(&'static str, Attr)]) -> bool {
    attrs
        .iter()
        .all(|(name, _)| format.iter().any(|d| d.mentions(name)))
}

/// The prefix of the ops of `func.func`'s default dialect, which MLIR
/// leaves out in a function's own body.
const DEFAULT_DIALECT_PREFIX: &str = "func.";

impl FuncPrinter<'_> {
    /// The op after its result names.
    pub(crate) fn defined(&mut self, op: &OpData, def: &dyn OpDef, sharding: Option<&str>) {
        let spec = def.spec();
        let attrs = def.attrs();
        let computations = def.computations();
        match spec.pretty {
            Some(format)
                if (computations.is_empty() || format.contains(&Fmt::ReducerBody))
                    && covers(format, &attrs)
                    && regions_fit(format, op) =>
            {
                // MLIR drops the default dialect's prefix (`func.call` is
                // `call`) only where `func.func`'s default dialect applies.
                let name = def.printed_name();
                let name = match name.strip_prefix(DEFAULT_DIALECT_PREFIX) {
                    Some(short) if self.in_function_body() => short,
                    _ => name,
                };
                self.out.push_str(name);
                self.pretty(op, format, &attrs, &computations, sharding, def);
            }
            _ => self.generic(
                op,
                def.printed_name(),
                &attrs,
                &computations,
                def.terminator(),
                sharding,
            ),
        }
    }

    fn pretty(
        &mut self,
        op: &OpData,
        format: &[Fmt],
        attrs: &[(&'static str, Attr)],
        computations: &[&Computation],
        sharding: Option<&str>,
        def: &dyn OpDef,
    ) {
        let terminator = def.terminator();
        // Tokens are separated by one space, except around `(` and
        // before `,` and `)`.
        let mut space = true;
        let mut regions = op.regions.iter();
        let mut body_printed = false;
        // The attributes the dictionary shows: all of the op's but those a
        // `Prefixed` directive wrote.
        let mut dict: Option<Vec<NamedAttr>> = None;
        for directive in format {
            match *directive {
                Fmt::IterArgs => {
                    // Every region names its arguments alike (siblings
                    // restart the numbering), so the first one's names
                    // stand for all.
                    let names: Vec<Value> =
                        op.regions.first().map_or(Vec::new(), |r| r.args.clone());
                    self.out.push('(');
                    for (i, &o) in op.operands.iter().enumerate() {
                        if i > 0 {
                            self.out.push_str(", ");
                        }
                        match names.get(i) {
                            Some(&a) => self.value(a),
                            None => self.out.push_str("%iterArg"),
                        }
                        self.out.push_str(" = ");
                        self.value(o);
                    }
                    self.out.push(')');
                    space = true;
                }
                Fmt::KeywordAttrDict => {
                    let rest = dict.as_deref().unwrap_or(&op.attrs);
                    if sharding.is_some() || !rest.is_empty() {
                        self.out.push_str(" attributes");
                        write_attr_dict(self.out, sharding, rest);
                    }
                }
                Fmt::Newline => {
                    self.out.push('\n');
                    self.pad(0);
                    space = false;
                }
                Fmt::Region(keyword) => {
                    if space {
                        self.out.push(' ');
                    }
                    let _ = write!(self.out, "{keyword} ");
                    if let Some(r) = regions.next() {
                        self.region_without_header(r, terminator);
                    }
                    space = true;
                }
                Fmt::ArgsRegion => {
                    if let Some(r) = regions.next() {
                        self.out.push_str(" (");
                        for (i, &a) in r.args.iter().enumerate() {
                            if i > 0 {
                                self.out.push_str(", ");
                            }
                            self.value(a);
                            self.out.push_str(": ");
                            self.write_ty(self.ty(a));
                        }
                        self.out.push_str(") ");
                        self.region_without_header(r, terminator);
                    }
                    space = true;
                }
                Fmt::AxisRefs(name) => {
                    if space {
                        self.out.push(' ');
                    }
                    if let Some((_, Attr::AxisRefs(axes))) = attrs.iter().find(|(n, _)| *n == name)
                    {
                        self.out.push_str(&axis_ref_list(axes));
                    }
                    space = true;
                }
                Fmt::Shardings(key, name)
                | Fmt::AxisNames(key, name)
                | Fmt::Sharding(key, name) => {
                    if space {
                        self.out.push(' ');
                    }
                    let value = match attrs.iter().find(|(n, _)| *n == name) {
                        Some((_, Attr::Shardings(list))) => sharding_list(list),
                        Some((_, Attr::ManualAxes(axes))) => axis_name_set(axes),
                        Some((_, Attr::Sharding(s))) => s.to_string(),
                        Some((_, other)) => other.to_string(),
                        None => String::new(),
                    };
                    let _ = write!(self.out, "{key}={value}");
                    space = true;
                }
                Fmt::BareSharding(name) => {
                    if space {
                        self.out.push(' ');
                    }
                    if let Some((_, Attr::Sharding(s))) = attrs.iter().find(|(n, _)| *n == name) {
                        let _ = write!(self.out, "{s}");
                    }
                    space = true;
                }
                Fmt::Sig(SigForm::TypeList) if op.operands.is_empty() => {}
                Fmt::InitPairs => {
                    let half = op.operands.len() / 2;
                    let (inputs, inits) = op.operands.split_at(half);
                    for (i, (x, c)) in inputs.iter().zip(inits).enumerate() {
                        if i > 0 {
                            self.out.push_str(", ");
                        }
                        self.out.push('(');
                        self.value(*x);
                        self.out.push_str(" init: ");
                        self.value(*c);
                        self.out.push(')');
                    }
                    space = true;
                }
                Fmt::Word(w) => {
                    if space {
                        self.out.push(' ');
                    }
                    self.out.push_str(w);
                    space = true;
                }
                Fmt::TypedLiteral(_) => {
                    if space {
                        self.out.push(' ');
                    }
                    let ty = op.results.first().and_then(|r| self.ty(*r));
                    if let Some(literal) = def.literal() {
                        let fallback = TensorType::scalar(crate::ir::ElemType::F32);
                        write_dense(self.out, literal, ty.unwrap_or(&fallback));
                    }
                    self.out.push_str(" : ");
                    self.write_ty(ty);
                    space = true;
                }
                Fmt::Enum(attr, ..) | Fmt::OptionalEnum(attr, ..) => {
                    let Some((_, value)) = attrs.iter().find(|(n, _)| *n == attr) else {
                        continue;
                    };
                    if matches!(directive, Fmt::OptionalEnum(..)) {
                        self.out.push(',');
                    }
                    if space || matches!(directive, Fmt::OptionalEnum(..)) {
                        self.out.push(' ');
                    }
                    self.out.push_str(&pretty_value(value));
                    space = true;
                }
                Fmt::ExpMantissa(key, e_attr, m_attr) => {
                    if space {
                        self.out.push(' ');
                    }
                    let int = |name: &str| match attrs.iter().find(|(n, _)| *n == name) {
                        Some((_, Attr::Int { value, .. })) => value.to_string(),
                        Some((_, other)) => other.to_string(),
                        None => String::new(),
                    };
                    let _ = write!(self.out, "{key} = e{}m{}", int(e_attr), int(m_attr));
                    space = true;
                }
                Fmt::AppliesBody => {
                    let single = match computations {
                        [c] if op.operands.len() == 2 => c.single_binary_op(),
                        _ => None,
                    };
                    if let Some(b) = single {
                        let _ = write!(self.out, " applies {}", OpKind::Binary(b).name());
                        body_printed = true;
                    }
                }
                Fmt::ReducerBody => {
                    if let (false, [c]) = (body_printed, computations) {
                        self.reducer(c);
                    }
                }
                Fmt::Operands => {
                    if op.operands.is_empty() {
                        continue;
                    }
                    if space {
                        self.out.push(' ');
                    }
                    self.values(&op.operands);
                    space = true;
                }
                Fmt::Punct(p) => {
                    self.out.push_str(p);
                    space = p != "(";
                }
                Fmt::Keyed(key, name) | Fmt::Assigned(key, name) => {
                    if space {
                        self.out.push(' ');
                    }
                    let value = attrs
                        .iter()
                        .find(|(n, _)| *n == name)
                        .map_or(String::new(), |(_, a)| pretty_value(a));
                    let eq = if matches!(directive, Fmt::Keyed(..)) {
                        " = "
                    } else {
                        "="
                    };
                    let _ = write!(self.out, "{key}{eq}{value}");
                    space = true;
                }
                Fmt::Symbol(name) => {
                    if space {
                        self.out.push(' ');
                    }
                    match attrs.iter().find(|(n, _)| *n == name) {
                        // A function's name, spelled as the function's
                        // own `func.func @name` spells it.
                        Some((_, Attr::Symbol(s))) => write_symbol(self.out, s),
                        Some((_, Attr::Str(s))) => {
                            let bare = s
                                .chars()
                                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$'));
                            if bare && !s.is_empty() {
                                let _ = write!(self.out, "@{s}");
                            } else {
                                let _ = write!(self.out, "@{}", crate::text::lexer::quote(s));
                            }
                        }
                        _ => {}
                    }
                    space = true;
                }
                Fmt::AttrDict => {
                    write_attr_dict(self.out, sharding, dict.as_deref().unwrap_or(&op.attrs))
                }
                Fmt::AttrDictWith(names) => {
                    let mut all: Vec<NamedAttr> = attrs
                        .iter()
                        .filter(|(n, _)| names.contains(n))
                        .map(|(n, v)| NamedAttr {
                            name: n.to_string(),
                            value: Some(v.to_string()),
                        })
                        .collect();
                    all.extend(dict.as_deref().unwrap_or(&op.attrs).iter().cloned());
                    all.sort_by(|a, b| a.name.cmp(&b.name));
                    write_attr_dict(self.out, sharding, &all);
                }
                Fmt::Bare(key, name, dialect) => {
                    if space {
                        self.out.push(' ');
                    }
                    let text = match attrs.iter().find(|(n, _)| *n == name) {
                        Some((_, Attr::Opaque(s))) => s.clone(),
                        Some((_, other)) => other.to_string(),
                        None => String::new(),
                    };
                    let body = text
                        .strip_prefix(dialect)
                        .and_then(|s| s.strip_prefix('<'))
                        .and_then(|s| s.strip_suffix('>'))
                        .unwrap_or(&text);
                    let _ = write!(self.out, "{key} = {body}");
                    space = true;
                }
                Fmt::Group(key, entries) => {
                    if space {
                        self.out.push(' ');
                    }
                    let items: Vec<String> = entries
                        .iter()
                        .filter_map(|&(entry, name)| {
                            let (_, v) = attrs.iter().find(|(n, _)| *n == name)?;
                            Some(format!("{entry} = {}", pretty_value(v)))
                        })
                        .collect();
                    let _ = write!(self.out, "{key} = {{{}}}", items.join(", "));
                    space = true;
                }
                Fmt::SliceRanges(start, limit, strides) => {
                    if space {
                        self.out.push(' ');
                    }
                    let list = |name: &str| {
                        attrs
                            .iter()
                            .find(|(n, _)| *n == name)
                            .and_then(|(_, a)| Vec::<i64>::decode(a).ok())
                            .unwrap_or_default()
                    };
                    let (start, limit, strides) = (list(start), list(limit), list(strides));
                    self.out.push('[');
                    for (i, (s, l)) in start.iter().zip(&limit).enumerate() {
                        if i > 0 {
                            self.out.push_str(", ");
                        }
                        let _ = write!(self.out, "{s}:{l}");
                        match strides.get(i) {
                            Some(1) | None => {}
                            Some(st) => {
                                let _ = write!(self.out, ":{st}");
                            }
                        }
                    }
                    self.out.push(']');
                    space = true;
                }
                Fmt::Trailing(entries) => {
                    for e in entries {
                        if let Some(text) = keyed_entry(e, attrs, op, &mut dict) {
                            let _ = write!(self.out, ", {text}");
                            space = true;
                        }
                    }
                }
                Fmt::DimsPair { .. } | Fmt::EnumList { .. } | Fmt::Prefixed(..) => {
                    if let Some(text) = keyed_entry(directive, attrs, op, &mut dict) {
                        if space {
                            self.out.push(' ');
                        }
                        self.out.push_str(&text);
                        space = true;
                    }
                }
                Fmt::Sig(form) => {
                    self.out.push_str(" : ");
                    self.signature(op, form);
                }
            }
        }
    }

    fn signature(&mut self, op: &OpData, form: SigForm) {
        match form {
            SigForm::Functional | SigForm::FunctionType => self.functional(op),
            SigForm::SameType => self.same_type_sig(op),
            SigForm::TypeList => self.type_list(&op.operands),
            SigForm::BareFunctional if op.operands.len() == 1 => {
                self.type_list(&op.operands);
                self.out.push_str(" -> ");
                if op.results.len() == 1 {
                    self.type_list(&op.results);
                } else {
                    self.out.push('(');
                    self.type_list(&op.results);
                    self.out.push(')');
                }
            }
            SigForm::BareFunctional => self.functional(op),
            SigForm::Results => self.type_list(&op.results),
            SigForm::ResultType => {
                let ty = op
                    .results
                    .first()
                    .or(op.operands.first())
                    .and_then(|v| self.ty(*v));
                self.write_ty(ty);
            }
            SigForm::OperandTypes => self.type_list(&op.operands),
            SigForm::PredicateAndValue => {
                let result = op.results.first().and_then(|r| self.ty(*r));
                let pred = op.operands.first().and_then(|p| self.ty(*p));
                let short = op.results.len() == 1
                    && op.operands.len() == 3
                    && op.operands[1..].iter().all(|o| self.ty(*o) == result);
                if short {
                    self.write_ty(pred);
                    self.out.push_str(", ");
                    self.write_ty(result);
                } else {
                    self.functional(op);
                }
            }
        }
    }

    /// `"name"(%a) <{k = v}> ({...}) {attrs} : (...) -> ...`.
    fn generic(
        &mut self,
        op: &OpData,
        name: &str,
        attrs: &[(&'static str, Attr)],
        computations: &[&Computation],
        terminator: &str,
        sharding: Option<&str>,
    ) {
        let _ = write!(self.out, "\"{name}\"(");
        self.values(&op.operands);
        self.out.push(')');
        // A dialect-prefixed name (`mhlo.frontend_attributes`) is a
        // discardable attribute, never a property: it goes to the
        // dictionary with the attributes kept verbatim.
        let (discardable, attrs): (Vec<_>, Vec<_>) =
            attrs.iter().partition(|(k, _)| k.contains('.'));
        if !attrs.is_empty() {
            self.out.push_str(" <{");
            for (i, (k, v)) in attrs.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                match v {
                    Attr::Unit => self.out.push_str(k),
                    _ => {
                        let _ = write!(self.out, "{k} = {v}");
                    }
                }
            }
            self.out.push_str("}>");
        }
        if !computations.is_empty() {
            self.out.push_str(" (");
            for (i, c) in computations.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                self.computation(c);
            }
            self.out.push(')');
        }
        if !op.regions.is_empty() {
            self.out.push_str(" (");
            for (i, r) in op.regions.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                self.region(r, terminator);
            }
            self.out.push(')');
        }
        if discardable.is_empty() {
            write_attr_dict(self.out, sharding, &op.attrs);
        } else {
            let mut all = op.attrs.clone();
            all.extend(discardable.iter().map(|(k, v)| NamedAttr {
                name: k.to_string(),
                value: Some(v.to_string()),
            }));
            all.sort_by(|a, b| a.name.cmp(&b.name));
            write_attr_dict(self.out, sharding, &all);
        }
        self.out.push_str(" : ");
        self.functional(op);
    }

    /// `\n reducer(%a: t, %c: t) (%b: u, %d: u)  {\n ops\n return\n }` for
    /// block arguments `(a, b, c, d)`: pair `k` is arguments `k` and `N+k`.
    fn reducer(&mut self, c: &Computation) {
        let body = c.func();
        let n = body.args.len() / 2;
        self.out.push('\n');
        self.pad(1);
        self.out.push_str("reducer");
        let mut p = self.nested(body);
        for k in 0..n {
            if k > 0 {
                p.out.push(' ');
            }
            p.out.push('(');
            for (i, a) in [body.args[k], body.args[n + k]].into_iter().enumerate() {
                if i > 0 {
                    p.out.push_str(", ");
                }
                p.value(a);
                p.out.push_str(": ");
                p.write_ty(p.ty(a));
            }
            p.out.push(')');
        }
        p.out.push_str("  {\n");
        p.body_ops(body);
        p.pad(-2);
        p.out.push('}');
    }

    /// The body's ops and its `stablehlo.return`, one per line.
    fn body_ops(&mut self, body: &Function) {
        for id in &body.body {
            if let Some(op) = body.ops.get(id.index()) {
                self.op(op);
            }
        }
        self.pad(0);
        self.out.push_str("stablehlo.return ");
        self.values(&body.returns);
        self.out.push_str(" : ");
        self.type_list(&body.returns);
        self.out.push('\n');
    }

    /// `{\n ^bb0(%a: t, ...):\n ops\n stablehlo.return ...\n }`.
    fn computation(&mut self, c: &Computation) {
        let body = c.func();
        let mut p = self.nested(body);
        p.out.push_str("{\n");
        p.pad(-2);
        p.out.push_str("^bb0(");
        for (i, a) in body.args.iter().enumerate() {
            if i > 0 {
                p.out.push_str(", ");
            }
            p.value(*a);
            p.out.push_str(": ");
            p.write_ty(p.ty(*a));
        }
        p.out.push_str("):\n");
        p.body_ops(body);
        p.pad(-2);
        p.out.push('}');
    }
}
