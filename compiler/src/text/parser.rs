//! Parser: text → `Module`. This file reads the structure (module, meshes,
//! functions, blocks, `return`); ops are read by `parse_ops.rs` (pretty
//! forms), `parse_generic.rs` (the quoted generic form),
//! `parse_defined.rs` (ops defined in `crate::ir::ops`) and
//! `parse_computation.rs` (scalar bodies).

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use crate::diag::{DiagKind, Diagnostic, SrcPos};
use crate::ir::{Function, Module, OpId, ParamAttrs, TensorType, Value, Visibility};
use crate::sharding::MeshDef;
use crate::text::cursor::{Cursor, PResult};
use crate::text::lexer::Tok;
use crate::text::parse_attrs::RawAttr;

/// Parse a module. Errors carry the line and column of the problem.
///
/// Accepts `module [@name] [attributes {...}] { ... }` or bare top-level
/// `sdy.mesh` / `func.func` (as in Shardy's tests), `#alias = ...`
/// definitions, `//` comments and `loc(...)` annotations (all skipped).
pub fn parse_module(src: &str) -> Result<Module, Diagnostic> {
    let mut c = Cursor::new(src);
    let mut mb = ModuleBuilder::default();
    c.skip_alias_defs()?;
    if c.at(Tok::Str) && c.text() == "\"builtin.module\"" {
        c.parse_generic_module(&mut mb)?;
    } else if c.eat_ident("module") {
        if c.at(Tok::At) {
            mb.module.name = Some(c.parse_symbol("module")?);
        }
        if c.eat_ident("attributes") {
            let raw = c.parse_attr_dict()?;
            mb.module.attrs = raw.iter().map(|a| c.named_attr(a)).collect();
        }
        c.expect(Tok::LBrace, "module")?;
        c.parse_module_items(&mut mb, Tok::RBrace)?;
        c.expect(Tok::RBrace, "module")?;
        c.skip_loc()?;
        c.skip_alias_defs()?;
        if !c.at(Tok::Eof) {
            return Err(c.expected("end of input after the module"));
        }
    } else {
        c.parse_module_items(&mut mb, Tok::Eof)?;
    }
    mb.finish()
}

/// A module being built: its symbols (for redefinition checks) and the
/// calls to resolve once every function is known.
#[derive(Default)]
pub(crate) struct ModuleBuilder {
    pub module: Module,
    symbols: HashSet<String>,
    calls: Vec<(String, SrcPos)>,
}

impl ModuleBuilder {
    /// Claim symbol `name` (a mesh or function), failing on a redefinition.
    fn claim(&mut self, name: &str, pos: SrcPos) -> PResult<()> {
        if !self.symbols.insert(name.to_string()) {
            return Err(Diagnostic::new(
                DiagKind::Syntax,
                pos,
                format!("redefinition of symbol '@{name}'"),
            ));
        }
        Ok(())
    }

    /// Check that every call names a function of the module.
    fn finish(mut self) -> PResult<Module> {
        let funcs: HashSet<&str> = self.module.funcs.iter().map(|f| f.name.as_str()).collect();
        for (callee, pos) in &self.calls {
            if !funcs.contains(callee.as_str()) {
                return Err(Diagnostic::new(
                    DiagKind::UndefinedName,
                    *pos,
                    format!("call of undefined function '@{callee}'"),
                ));
            }
        }
        crate::text::async_collectives::read_async_collectives(&mut self.module)?;
        bind_meshes(&mut self.module)?;
        Ok(self.module)
    }
}

/// Let every op resolve what it names of the module's meshes (replica
/// groups written as mesh axes), now that all of them are known: MLIR
/// symbols may be used before they are defined.
fn bind_meshes(m: &mut Module) -> PResult<()> {
    let meshes = &m.meshes;
    for f in &mut m.funcs {
        for op in &mut f.ops {
            let pos = op.pos;
            if let Some(def) = op.kind.def_mut() {
                def.bind_meshes(meshes).map_err(|e| {
                    Diagnostic::new(
                        DiagKind::UndefinedName,
                        pos,
                        format!("'{}' {e}", def.spec().name),
                    )
                })?;
            }
        }
    }
    Ok(())
}

/// An operand as written: the value and where it was named.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Operand {
    pub value: Value,
    pub pos: SrcPos,
}

/// FxHash-style hasher for value names: short keys, no untrusted-collision
/// concern worth SipHash's cost (parsing is a hot path: 10k ops in a few ms).
#[derive(Default)]
pub(crate) struct NameHasher(u64);

impl Hasher for NameHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(c);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }
}

/// A function being built, with the names of its values in scope.
pub(crate) struct FuncBuilder<'s> {
    pub func: Function,
    /// `%name` → (first value, number of results under that name).
    names: HashMap<&'s str, (u32, u32), BuildHasherDefault<NameHasher>>,
    /// Callees and where they were named, checked once the module is read.
    pub calls: Vec<(String, SrcPos)>,
    /// The regions being read, innermost last: their ops so far, and the
    /// names defined in them (forgotten when the region ends).
    regions: Vec<(Vec<OpId>, Vec<&'s str>)>,
}

impl<'s> FuncBuilder<'s> {
    pub fn new(func: Function) -> Self {
        FuncBuilder {
            func,
            names: HashMap::default(),
            calls: Vec::new(),
            regions: Vec::new(),
        }
    }

    /// Append a created op to the block being read (the innermost open
    /// region, else the function body).
    pub fn place(&mut self, id: OpId) {
        match self.regions.last_mut() {
            Some((ops, _)) => ops.push(id),
            None => self.func.body.push(id),
        }
    }

    /// Start reading a region: later ops and names belong to it.
    pub fn open_region(&mut self) {
        self.regions.push((Vec::new(), Vec::new()));
    }

    /// Finish the innermost region: its ops; its names go out of scope.
    pub fn close_region(&mut self) -> Vec<OpId> {
        let (ops, names) = self.regions.pop().unwrap_or_default();
        for n in names {
            self.names.remove(n);
        }
        ops
    }

    /// Bind `name` (including `%`) to `count` consecutive values.
    pub fn define(&mut self, name: &'s str, first: Value, count: u32, pos: SrcPos) -> PResult<()> {
        if self.names.insert(name, (first.0, count)).is_some() {
            return Err(Diagnostic::new(
                DiagKind::Syntax,
                pos,
                format!("redefinition of value '{name}'"),
            ));
        }
        if let Some((_, names)) = self.regions.last_mut() {
            names.push(name);
        }
        Ok(())
    }

    /// Bind `name` to argument `i` (which must exist).
    pub fn define_arg(&mut self, i: usize, name: &'s str, pos: SrcPos) -> PResult<()> {
        match self.func.args.get(i) {
            Some(&v) => self.define(name, v, 1, pos),
            None => Err(Diagnostic::new(
                DiagKind::Syntax,
                pos,
                format!(
                    "'{name}' is argument {i} but the function has {} argument(s)",
                    self.func.args.len()
                ),
            )),
        }
    }

    /// Resolve a use `%name` or `%name#i`.
    pub fn lookup(&self, text: &str) -> Result<Value, (DiagKind, String)> {
        let (base, index) = match text.split_once('#') {
            Some((b, i)) => (b, i.parse::<u32>().ok()),
            None => (text, Some(0)),
        };
        let Some(&(first, count)) = self.names.get(base) else {
            return Err((
                DiagKind::UndefinedName,
                format!("use of undefined value '{base}'"),
            ));
        };
        match index {
            Some(i) if i < count => Ok(Value(first + i)),
            _ => Err((
                DiagKind::UndefinedName,
                format!("'{text}' refers to a result '{base}' does not have ({count} result(s))"),
            )),
        }
    }
}

/// Result names on the left of `=`: `%0`, `%0:2`, `%a, %b`.
pub(crate) struct ResultNames<'s> {
    pub groups: Vec<(&'s str, u32, SrcPos)>,
}

impl ResultNames<'_> {
    pub fn total(&self) -> usize {
        self.groups.iter().map(|g| g.1 as usize).sum()
    }
}

impl<'s> Cursor<'s> {
    /// Skip `#name = value` and `!name = type` alias definitions.
    fn skip_alias_defs(&mut self) -> PResult<()> {
        while matches!(self.kind(), Tok::Hash | Tok::Bang) && self.peek_kind(1) == Tok::Equal {
            self.bump();
            self.bump();
            // The value: a keyword or alias, then its bracketed body if any.
            self.skip_balanced_group("alias definition")?;
            if matches!(self.kind(), Tok::LParen | Tok::Less) {
                self.skip_balanced_group("alias definition")?;
            }
        }
        Ok(())
    }

    /// Meshes and functions until `end` (`}` of the module, or end of input).
    pub(crate) fn parse_module_items(&mut self, mb: &mut ModuleBuilder, end: Tok) -> PResult<()> {
        loop {
            self.skip_alias_defs()?;
            if self.at(end) {
                return Ok(());
            }
            let generic =
                |c: &Self, name: &str| c.at(Tok::Str) && c.text().trim_matches('"') == name;
            if self.at_ident("sdy.mesh") || generic(self, "sdy.mesh") {
                let pos = self.pos();
                let mesh = if self.at(Tok::Str) {
                    self.parse_generic_mesh_def()?
                } else {
                    self.parse_mesh_def()?
                };
                mb.claim(&mesh.name, pos)?;
                mb.module.meshes.push(mesh);
            } else if self.at_ident("func.func") || generic(self, "func.func") {
                // Point at the function's name (after an optional visibility).
                let pos = if self.at(Tok::Str) {
                    self.pos()
                } else {
                    self.pos_of_tok(self.idx + 1 + usize::from(self.peek_kind(1) == Tok::Ident))
                };
                let (func, func_calls) = if self.at(Tok::Str) {
                    self.parse_generic_func()?
                } else {
                    self.parse_func()?
                };
                mb.claim(&func.name, pos)?;
                mb.module.funcs.push(func);
                mb.calls.extend(func_calls);
            } else if self.at(Tok::Ident) || self.at(Tok::Str) {
                return Err(self.err(
                    DiagKind::UnknownOp,
                    format!(
                        "unknown op '{}' at module level (expected 'func.func' or 'sdy.mesh')",
                        self.text().trim_matches('"')
                    ),
                ));
            } else {
                let what = if end == Tok::RBrace {
                    "'func.func', 'sdy.mesh' or '}'"
                } else {
                    "'func.func' or 'sdy.mesh'"
                };
                return Err(self.expected(what));
            }
        }
    }

    /// `sdy.mesh @name = <...> [{attrs}] [loc(...)]`.
    fn parse_mesh_def(&mut self) -> PResult<MeshDef> {
        let pos = self.pos();
        self.bump(); // sdy.mesh
        let name = self.parse_symbol("sdy.mesh")?;
        self.expect(Tok::Equal, "sdy.mesh")?;
        if self.at(Tok::Hash) && self.text() == "#sdy.mesh" {
            self.bump();
        }
        let mesh = self.parse_mesh_body()?;
        let attrs = if self.at(Tok::LBrace) {
            Some(self.capture_dict_text()?)
        } else {
            None
        };
        self.skip_loc()?;
        Ok(MeshDef {
            name,
            mesh,
            attrs,
            pos,
        })
    }

    /// `func.func [public|private] @name(args) [-> results] [attributes {...}]
    /// { body } [loc(...)]`.
    fn parse_func(&mut self) -> PResult<(Function, Vec<(String, SrcPos)>)> {
        let pos = self.pos();
        self.bump(); // func.func
        let visibility = if self.eat_ident("public") {
            Visibility::Public
        } else if self.eat_ident("private") {
            Visibility::Private
        } else {
            Visibility::Default
        };
        let name = self.parse_symbol("func.func")?;

        // Arguments: read them all, then create the function (which makes
        // argument `i` value `i`) and bind the names.
        let mut args: Vec<(&'s str, SrcPos, TensorType, ParamAttrs)> = Vec::new();
        self.expect(Tok::LParen, "function arguments")?;
        if !self.eat(Tok::RParen) {
            loop {
                let arg_pos = self.pos();
                if !self.at(Tok::Percent) {
                    return Err(self.expected_in("an argument name (%...)", "function arguments"));
                }
                let arg_name = self.text();
                self.bump();
                self.expect(Tok::Colon, "function argument")?;
                let ty = self.parse_type()?;
                let attrs = self.parse_param_attrs()?;
                self.skip_loc()?;
                args.push((arg_name, arg_pos, ty, attrs));
                if self.eat(Tok::RParen) {
                    break;
                }
                if !self.eat(Tok::Comma) {
                    return Err(self.expected_in("',' or ')'", "function arguments"));
                }
            }
        }
        let tys = args.iter().map(|a| a.2.clone()).collect();
        let mut b = FuncBuilder::new(Function::new(name, tys));
        b.func.visibility = visibility;
        b.func.pos = pos;
        for (i, (arg_name, arg_pos, _, attrs)) in args.into_iter().enumerate() {
            b.func.arg_attrs[i] = attrs;
            b.define_arg(i, arg_name, arg_pos)?;
        }

        // Results.
        if self.eat(Tok::Arrow) {
            if self.eat(Tok::LParen) {
                if !self.eat(Tok::RParen) {
                    loop {
                        b.func.result_types.push(self.parse_type()?);
                        b.func.result_attrs.push(self.parse_param_attrs()?);
                        if self.eat(Tok::RParen) {
                            break;
                        }
                        if !self.eat(Tok::Comma) {
                            return Err(self.expected_in("',' or ')'", "function results"));
                        }
                    }
                }
            } else {
                b.func.result_types.push(self.parse_type()?);
                b.func.result_attrs.push(ParamAttrs::default());
            }
        }
        if self.eat_ident("attributes") {
            let raw = self.parse_attr_dict()?;
            b.func.attrs = raw.iter().map(|a| self.named_attr(a)).collect();
        }
        if !self.at(Tok::LBrace) {
            if self.at(Tok::Eof) || self.at_ident("func.func") || self.at(Tok::RBrace) {
                return Err(self.err(
                    DiagKind::Unsupported,
                    format!(
                        "function '@{}' has no body (declarations are not supported)",
                        b.func.name
                    ),
                ));
            }
            return Err(self.expected_in("'{'", "function"));
        }
        self.bump();
        self.parse_func_body(&mut b)?;
        self.expect(Tok::RBrace, "function body")?;
        self.skip_loc()?;
        Ok((b.func, b.calls))
    }

    /// A function's ops through its `return`, which must match the
    /// declared result types.
    pub(crate) fn parse_func_body(&mut self, b: &mut FuncBuilder<'s>) -> PResult<()> {
        let (returns, return_pos) = self.parse_block_ops(b, &["return", "func.return"])?;
        self.check_returns(b, &returns, return_pos)?;
        b.func.returns = returns.iter().map(|o| o.value).collect();
        b.func.return_pos = return_pos;
        Ok(())
    }

    /// `{sdy.sharding = #sdy.sharding<...>, other = ...}` of an argument or
    /// result (optional).
    fn parse_param_attrs(&mut self) -> PResult<ParamAttrs> {
        let raw = self.parse_opt_attr_dict()?;
        self.param_attrs_from(&raw)
    }

    /// Split a parameter's dictionary into its sharding and the rest.
    pub(crate) fn param_attrs_from(&mut self, raw: &[RawAttr]) -> PResult<ParamAttrs> {
        let mut out = ParamAttrs::default();
        for a in raw {
            if a.name == "sdy.sharding" {
                out.sharding = Some(self.decode_sharding(a)?);
            } else {
                out.attrs.push(self.named_attr(a));
            }
        }
        Ok(out)
    }

    /// Ops of one block up to and including its terminator (one of
    /// `terminators`); the closing `}` is left to the caller. Returns the
    /// terminator's operands and position.
    pub(crate) fn parse_block_ops(
        &mut self,
        b: &mut FuncBuilder<'s>,
        terminators: &[&str],
    ) -> PResult<(Vec<Operand>, SrcPos)> {
        loop {
            let is_term = match self.kind() {
                Tok::Ident => terminators.contains(&self.text()),
                Tok::Str => {
                    let t = self.text();
                    terminators.contains(&t.get(1..t.len().saturating_sub(1)).unwrap_or(""))
                }
                Tok::RBrace | Tok::Eof => {
                    return Err(self.expected(&format!("an op or '{}'", terminators[0])));
                }
                _ => false,
            };
            if is_term {
                return self.parse_terminator(b);
            }
            self.parse_op(b)?;
        }
    }

    /// `return %a, %b : t1, t2`, `return`, or the generic
    /// `"func.return"(%a) : (t1) -> ()`.
    fn parse_terminator(&mut self, b: &mut FuncBuilder<'s>) -> PResult<(Vec<Operand>, SrcPos)> {
        let pos = self.pos();
        let name = self.text().trim_matches('"').to_string();
        let generic = self.at(Tok::Str);
        self.bump();
        let mut operands = Vec::new();
        let types;
        if generic {
            self.expect(Tok::LParen, &name)?;
            if !self.eat(Tok::RParen) {
                operands = self.parse_operand_list(b)?;
                self.expect(Tok::RParen, &name)?;
            }
            self.parse_opt_attr_dict()?;
            self.expect(Tok::Colon, &name)?;
            let (ins, outs) = self.parse_function_type()?;
            if !outs.is_empty() {
                return Err(Diagnostic::new(
                    DiagKind::Type,
                    pos,
                    format!("'{name}' has no results"),
                ));
            }
            types = ins;
        } else {
            if self.at(Tok::Percent) {
                operands = self.parse_operand_list(b)?;
            }
            self.parse_opt_attr_dict()?;
            types = if operands.is_empty() {
                Vec::new()
            } else {
                self.expect(Tok::Colon, &name)?;
                self.parse_type_list()?
            };
        }
        if types.len() != operands.len() {
            return Err(Diagnostic::new(
                DiagKind::Syntax,
                pos,
                format!(
                    "'{name}' has {} operand(s) but {} type(s)",
                    operands.len(),
                    types.len()
                ),
            ));
        }
        self.check_operand_types(b, &operands, &types)?;
        self.skip_loc()?;
        Ok((operands, pos))
    }

    /// The function's `return` must match its declared result types.
    fn check_returns(&self, b: &FuncBuilder<'s>, returns: &[Operand], pos: SrcPos) -> PResult<()> {
        let f = &b.func;
        if returns.len() != f.result_types.len() {
            return Err(Diagnostic::new(
                DiagKind::Type,
                pos,
                format!(
                    "return has {} operand(s) but function '@{}' returns {} value(s)",
                    returns.len(),
                    f.name,
                    f.result_types.len()
                ),
            ));
        }
        for (i, (o, ty)) in returns.iter().zip(&f.result_types).enumerate() {
            if f.ty(o.value) != ty {
                return Err(Diagnostic::new(
                    DiagKind::Type,
                    o.pos,
                    format!(
                        "return operand {i} has type {} but function '@{}' returns {ty}",
                        f.ty(o.value),
                        f.name
                    ),
                ));
            }
        }
        Ok(())
    }

    /// One use `%name` / `%name#i`.
    pub(crate) fn parse_operand(&mut self, b: &FuncBuilder<'s>) -> PResult<Operand> {
        if !self.at(Tok::Percent) {
            return Err(self.expected("an operand (%...)"));
        }
        let pos = self.pos();
        let value = b
            .lookup(self.text())
            .map_err(|(kind, msg)| Diagnostic::new(kind, pos, msg))?;
        self.bump();
        Ok(Operand { value, pos })
    }

    /// `%a (, %b)*`, stopping before a `,` that is not followed by a value.
    pub(crate) fn parse_operand_list(&mut self, b: &FuncBuilder<'s>) -> PResult<Vec<Operand>> {
        let mut out = vec![self.parse_operand(b)?];
        while self.at(Tok::Comma) && self.peek_kind(1) == Tok::Percent {
            self.bump();
            out.push(self.parse_operand(b)?);
        }
        Ok(out)
    }

    /// Operand types written in a signature must be the values' types.
    pub(crate) fn check_operand_types(
        &self,
        b: &FuncBuilder<'s>,
        operands: &[Operand],
        types: &[TensorType],
    ) -> PResult<()> {
        for (o, ty) in operands.iter().zip(types) {
            let actual = b.func.ty(o.value);
            if actual != ty {
                return Err(Diagnostic::new(
                    DiagKind::Type,
                    o.pos,
                    format!("operand has type {actual} but the op's signature says {ty}"),
                ));
            }
        }
        Ok(())
    }

    /// `%0 =`, `%0:2 =`, `%a, %b =` (or nothing: the op has no results).
    pub(crate) fn parse_result_names(&mut self) -> PResult<ResultNames<'s>> {
        let mut groups = Vec::new();
        if !self.at(Tok::Percent) {
            return Ok(ResultNames { groups });
        }
        loop {
            let pos = self.pos();
            if !self.at(Tok::Percent) {
                return Err(self.expected_in("a result name (%...)", "op results"));
            }
            let name = self.text();
            if name.contains('#') {
                return Err(self.err(
                    DiagKind::Syntax,
                    format!("result name '{name}' cannot have a '#' suffix"),
                ));
            }
            self.bump();
            let mut count = 1u32;
            if self.eat(Tok::Colon) {
                let n = self.parse_int("result count")?;
                count = u32::try_from(n).ok().filter(|n| *n >= 1).ok_or_else(|| {
                    Diagnostic::new(
                        DiagKind::Syntax,
                        pos,
                        format!("bad result count {n} for '{name}'"),
                    )
                })?;
            }
            groups.push((name, count, pos));
            if !self.eat(Tok::Comma) {
                break;
            }
        }
        self.expect(Tok::Equal, "op results")?;
        Ok(ResultNames { groups })
    }

    /// Bind the result names to an op's results.
    pub(crate) fn define_results(
        &self,
        b: &mut FuncBuilder<'s>,
        names: &ResultNames<'s>,
        results: &[Value],
    ) -> PResult<()> {
        let mut next = 0usize;
        for &(name, count, pos) in &names.groups {
            let Some(&first) = results.get(next) else {
                break;
            };
            b.define(name, first, count, pos)?;
            next += count as usize;
        }
        Ok(())
    }
}

/// For errors that point at a raw attribute's name.
pub(crate) fn attr_diag(a: &RawAttr, kind: DiagKind, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(kind, a.pos, message)
}
