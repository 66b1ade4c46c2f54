//! Ops defined in `crate::ir::ops`, read from their definitions: the generic
//! form for every one of them, and the pretty form by following the
//! definition's directives ([`Fmt`]). No op is named here.

use crate::diag::{DiagKind, Diagnostic, SrcPos};
use crate::ir::attr::Attr;
use crate::ir::ops::DefinedOp;
use crate::ir::ops::{Arity, Decoder, Fmt, SigForm};
use crate::ir::{BinaryOp, Computation, OpKind, TensorType};
use crate::text::cursor::{Cursor, PResult, TokRange};
use crate::text::lexer::Tok;
use crate::text::parse_attrs::RawAttr;
use crate::text::parse_computation::TERMINATORS;
use crate::text::parse_generic::elementwise_kind;
use crate::text::parse_ops::{sig_types, OpParts};
use crate::text::parse_types::Signature;
use crate::text::parser::{FuncBuilder, Operand};

/// The bit counts of `eXmY` (`e8m7` → (8, 7)); `None` if the word is not
/// of that form or a count does not fit an i64 (the op's decoder then
/// checks the i32 range).
fn exp_mantissa(word: &str) -> Option<(i64, i64)> {
    let (e, m) = word.strip_prefix('e')?.split_once('m')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    if !digits(e) || !digits(m) {
        return None;
    }
    Some((e.parse().ok()?, m.parse().ok()?))
}

/// An attribute the op's text gave, before the definition decodes it.
struct Given {
    name: String,
    value: Attr,
    pos: SrcPos,
    /// The dictionary entry it came from (kept verbatim if not decoded);
    /// `None` for a pretty form's `key = value`.
    raw: Option<RawAttr>,
}

impl Given {
    /// The attribute `name` read from a pretty form's directive at `pos`.
    fn pretty(name: &str, value: Attr, pos: SrcPos) -> Given {
        Given {
            name: name.to_string(),
            value,
            pos,
            raw: None,
        }
    }
}

impl<'s> Cursor<'s> {
    /// `"name"(%a, ...) <{props}> ({regions}) {attrs} : (types) -> types`;
    /// the current token is the quoted name.
    pub(crate) fn parse_generic_defined(
        &mut self,
        b: &mut FuncBuilder<'s>,
        def: &DefinedOp,
        name: &str,
        pos: SrcPos,
    ) -> PResult<OpParts> {
        self.bump();
        self.expect(Tok::LParen, name)?;
        let operands = if self.eat(Tok::RParen) {
            Vec::new()
        } else {
            let ops = self.parse_operand_list(b)?;
            self.expect(Tok::RParen, name)?;
            ops
        };
        let mut raws = Vec::new();
        if self.at(Tok::Less) && self.peek_kind(1) == Tok::LBrace {
            self.bump();
            raws = self.parse_attr_dict()?;
            self.expect(Tok::Greater, "op properties")?;
        }
        let structural = def.regions != Arity::Exactly(0);
        if self.at(Tok::LParen) && def.spec.computations == 0 && !structural {
            return Err(self.err(
                DiagKind::Unsupported,
                format!("'{name}' cannot have regions"),
            ));
        }
        let (computations, regions) = if structural {
            (
                Vec::new(),
                self.parse_region_list(b, name, def.regions, pos)?,
            )
        } else {
            let c = self.parse_computation_list(b, name, def.spec.computations, pos)?;
            (c, Vec::new())
        };
        raws.extend(self.parse_opt_attr_dict()?);
        self.expect(Tok::Colon, name)?;
        let (operand_types, result_types) = self.parse_function_type()?;
        let given = self.given_from_raw(raws);
        let mut parts = self.decode_defined(
            def,
            name,
            pos,
            given,
            operands,
            operand_types,
            result_types,
            computations,
            &mut b.calls,
        )?;
        parts.regions = regions;
        Ok(parts)
    }

    /// The pretty form: the definition's directives after the op name (the
    /// current token).
    pub(crate) fn parse_pretty_defined(
        &mut self,
        b: &mut FuncBuilder<'s>,
        def: &DefinedOp,
        format: &[Fmt],
        name: &str,
        pos: SrcPos,
    ) -> PResult<OpParts> {
        self.bump();
        let mut operands: Vec<Operand> = Vec::new();
        let mut given = Vec::new();
        let mut types: Option<(Vec<TensorType>, Vec<TensorType>)> = None;
        // `IterArgs`: the block argument names of every region.
        let mut iter_names: Vec<(&'s str, SrcPos)> = Vec::new();
        let mut regions = Vec::new();
        let mut computations = Vec::new();
        let mut applies = None;
        for directive in format {
            match *directive {
                Fmt::IterArgs => {
                    self.expect(Tok::LParen, name)?;
                    while !self.eat(Tok::RParen) {
                        if !iter_names.is_empty() {
                            self.expect(Tok::Comma, name)?;
                        }
                        if !self.at(Tok::Percent) {
                            return Err(self.expected_in("an iteration argument (%...)", name));
                        }
                        iter_names.push((self.text(), self.pos()));
                        self.bump();
                        self.expect(Tok::Equal, name)?;
                        operands.push(self.parse_operand(b)?);
                    }
                }
                Fmt::KeywordAttrDict => {
                    if self.eat_ident("attributes") {
                        let raws = self.parse_attr_dict()?;
                        given.extend(self.given_from_raw(raws));
                    }
                }
                Fmt::Newline => {}
                Fmt::Region(keyword) => {
                    self.expect_ident(keyword, name)?;
                    self.expect(Tok::LBrace, name)?;
                    let tys = match &types {
                        Some((ins, _)) => ins.clone(),
                        None => operands
                            .iter()
                            .map(|o| b.func.ty(o.value).clone())
                            .collect(),
                    };
                    let args = iter_names
                        .iter()
                        .zip(tys)
                        .map(|(&(n, p), t)| (n, p, t))
                        .collect();
                    let index = regions.len();
                    regions.push(self.parse_region_body(b, index, args, TERMINATORS)?);
                }
                Fmt::ArgsRegion => {
                    self.expect(Tok::LParen, name)?;
                    let args = self.parse_block_arg_list()?;
                    self.expect(Tok::LBrace, name)?;
                    let index = regions.len();
                    regions.push(self.parse_region_body(b, index, args, TERMINATORS)?);
                }
                Fmt::Shardings(key, attr) => {
                    self.expect_keyword_eq(key, name)?;
                    let at = self.pos();
                    let value = Attr::Shardings(self.parse_sharding_list(key)?);
                    given.push(Given::pretty(attr, value, at));
                }
                Fmt::AxisRefs(attr) => {
                    let at = self.pos();
                    let value = Attr::AxisRefs(self.parse_axis_set(attr)?);
                    given.push(Given::pretty(attr, value, at));
                }
                Fmt::Sharding(key, attr) => {
                    self.expect_keyword_eq(key, name)?;
                    let at = self.pos();
                    let value = Attr::Sharding(self.parse_sharding_attr()?);
                    given.push(Given::pretty(attr, value, at));
                }
                Fmt::BareSharding(attr) => {
                    let at = self.pos();
                    let value = Attr::Sharding(self.parse_sharding_attr()?);
                    given.push(Given::pretty(attr, value, at));
                }
                Fmt::AxisNames(key, attr) => {
                    self.expect_keyword_eq(key, name)?;
                    let at = self.pos();
                    let value = Attr::ManualAxes(self.parse_axis_name_set(key)?);
                    given.push(Given::pretty(attr, value, at));
                }
                Fmt::Sig(SigForm::TypeList) if operands.is_empty() && !self.at(Tok::Colon) => {
                    types = Some((Vec::new(), Vec::new()));
                }
                Fmt::Operands => {
                    if self.at(Tok::Percent) {
                        operands = self.parse_operand_list(b)?;
                    }
                }
                Fmt::InitPairs => operands = self.parse_init_pairs(b, name)?,
                Fmt::Word(w) => self.expect_ident(w, name)?,
                Fmt::TypedLiteral(attr) => {
                    let at = self.pos();
                    let (literal, ty) = self.parse_dense_with_type()?;
                    types = Some((Vec::new(), vec![ty.clone()]));
                    given.push(Given::pretty(attr, Attr::Dense { literal, ty }, at));
                }
                Fmt::Enum(attr, what, names) => {
                    given.push(self.parse_enum_word(attr, what, names, name)?);
                }
                Fmt::OptionalEnum(attr, what, names) => {
                    if self.eat(Tok::Comma) {
                        given.push(self.parse_enum_word(attr, what, names, name)?);
                    }
                }
                Fmt::ExpMantissa(key, e_attr, m_attr) => {
                    self.expect_keyword_eq(key, name)?;
                    let at = self.pos();
                    let Some((e, m)) = (self.at(Tok::Ident))
                        .then(|| exp_mantissa(self.text()))
                        .flatten()
                    else {
                        return Err(self.expected_in("a format eXmY (e8m7)", name));
                    };
                    self.bump();
                    for (attr, value) in [(e_attr, e), (m_attr, m)] {
                        given.push(Given {
                            name: attr.to_string(),
                            value: Attr::Int {
                                value,
                                ty: Some("i32".into()),
                            },
                            pos: at,
                            raw: None,
                        });
                    }
                }
                Fmt::AppliesBody => {
                    if self.eat_ident("applies") {
                        applies = Some(self.parse_applied_op(name)?);
                    }
                }
                Fmt::ReducerBody => match (&applies, &types) {
                    (Some(op), Some((operand_types, _))) => {
                        computations.push(applied_body(op, operand_types, name, pos)?);
                    }
                    _ => computations.push(self.parse_reducer(b, name)?),
                },
                Fmt::Punct(p) => {
                    let tok = punct_token(p);
                    self.expect(tok, name)?;
                }
                Fmt::Keyed(key, attr) | Fmt::Assigned(key, attr) => {
                    self.expect_keyword_eq(key, name)?;
                    let at = self.pos();
                    let value = self.parse_keyed_value()?;
                    given.push(Given::pretty(attr, value, at));
                }
                Fmt::Symbol(attr) => {
                    let at = self.pos();
                    let value = Attr::Str(self.parse_symbol(name)?);
                    given.push(Given::pretty(attr, value, at));
                }
                Fmt::AttrDict | Fmt::AttrDictWith(_) => {
                    let raws = self.parse_opt_attr_dict()?;
                    given.extend(self.given_from_raw(raws));
                }
                Fmt::Bare(key, attr, dialect) => {
                    self.expect_keyword_eq(key, name)?;
                    let at = self.pos();
                    let body = self.capture_value(key)?;
                    let value = Attr::Opaque(format!("{dialect}<{}>", self.range_text(body)));
                    given.push(Given::pretty(attr, value, at));
                }
                Fmt::Group(key, entries) => {
                    self.expect_keyword_eq(key, name)?;
                    self.expect(Tok::LBrace, key)?;
                    let mut seen: Vec<&str> = Vec::new();
                    while !self.eat(Tok::RBrace) {
                        if !seen.is_empty() {
                            self.expect(Tok::Comma, key)?;
                        }
                        let at = self.pos();
                        let entry = self.text();
                        let Some(&(e, attr)) = entries.iter().find(|(e, _)| *e == entry) else {
                            let all: Vec<&str> = entries.iter().map(|(e, _)| *e).collect();
                            return Err(
                                self.expected_in(&format!("one of {}", all.join(", ")), key)
                            );
                        };
                        if seen.contains(&e) {
                            return Err(self.err(
                                DiagKind::Syntax,
                                format!("'{name}': {key} entry '{e}' is given twice"),
                            ));
                        }
                        seen.push(e);
                        self.bump();
                        self.expect(Tok::Equal, key)?;
                        let value = self.parse_attr_value(0)?;
                        given.push(Given::pretty(attr, value, at));
                    }
                }
                Fmt::SliceRanges(start_attr, limit_attr, strides_attr) => {
                    if self.at(Tok::LBracket) {
                        let at = self.pos();
                        let (start, limit, strides) = self.parse_slice_ranges()?;
                        for (attr, list) in [
                            (start_attr, start),
                            (limit_attr, limit),
                            (strides_attr, strides),
                        ] {
                            given.push(Given::pretty(attr, Attr::dense_i64(&list), at));
                        }
                    }
                }
                Fmt::Trailing(entries) => {
                    // A pair of dimension lists the text leaves out is empty.
                    let at = self.pos();
                    for e in entries {
                        if let Fmt::DimsPair { attr, dialect, .. } = *e {
                            dims_params(&mut given, attr, dialect, at);
                        }
                    }
                    while self.eat(Tok::Comma) {
                        let key = if self.kind() == Tok::Ident {
                            self.text()
                        } else {
                            ""
                        };
                        let Some(entry) = entries.iter().find(|e| e.key() == Some(key)) else {
                            return Err(self.expected_in(&one_of_keys(entries), name));
                        };
                        self.parse_keyed_entry(entry, &mut given, name)?;
                    }
                }
                Fmt::DimsPair { .. } | Fmt::EnumList { .. } | Fmt::Prefixed(..) => {
                    self.parse_keyed_entry(directive, &mut given, name)?;
                }
                Fmt::Sig(form) => {
                    self.expect(Tok::Colon, name)?;
                    types = Some(self.parse_sig_form(form, operands.len(), name, pos)?);
                }
            }
        }
        let (operand_types, result_types) = types.ok_or_else(|| {
            Diagnostic::new(
                DiagKind::Syntax,
                pos,
                format!("'{name}': its definition's pretty form has no signature"),
            )
        })?;
        if computations.len() != def.spec.computations {
            return Err(Diagnostic::new(
                DiagKind::Syntax,
                pos,
                format!(
                    "'{name}' has {} region(s), found {}",
                    def.spec.computations,
                    computations.len()
                ),
            ));
        }
        let mut parts = self.decode_defined(
            def,
            name,
            pos,
            given,
            operands,
            operand_types,
            result_types,
            computations,
            &mut b.calls,
        )?;
        parts.regions = regions;
        Ok(parts)
    }

    /// The value of a `key = value` directive. An integer right before a
    /// signature that starts with a type (`iota`'s `dim = 0 :
    /// tensor<4xi32>`) is read alone: a pretty form writes integers
    /// without their type.
    fn parse_keyed_value(&mut self) -> PResult<Attr> {
        let int = usize::from(self.at(Tok::Minus));
        if self.peek_kind(int) == Tok::Int
            && self.peek_kind(int + 1) == Tok::Colon
            && self.peek_text(int + 2) == "tensor"
        {
            let value = self.parse_int("attribute value")?;
            return Ok(Attr::Int { value, ty: None });
        }
        self.parse_attr_value(0)
    }

    /// A bare enum value, one of `names`, for the attribute `attr`.
    fn parse_enum_word(
        &mut self,
        attr: &str,
        what: &str,
        names: &[&str],
        name: &str,
    ) -> PResult<Given> {
        let at = self.pos();
        if !(self.at(Tok::Ident) && names.contains(&self.text())) {
            return Err(self.expected_in(&format!("{what} ({})", names.join(", ")), name));
        }
        let value = Attr::Ident(self.text().to_string());
        self.bump();
        Ok(Given::pretty(attr, value, at))
    }

    /// `[0:4, 2:8:2]`: per dimension a start, a limit and a stride (1
    /// when left out).
    fn parse_slice_ranges(&mut self) -> PResult<(Vec<i64>, Vec<i64>, Vec<i64>)> {
        self.expect(Tok::LBracket, "slice ranges")?;
        let (mut start, mut limit, mut strides) = (Vec::new(), Vec::new(), Vec::new());
        if !self.eat(Tok::RBracket) {
            loop {
                start.push(self.parse_int("slice start")?);
                self.expect(Tok::Colon, "slice range")?;
                limit.push(self.parse_int("slice limit")?);
                strides.push(if self.eat(Tok::Colon) {
                    self.parse_int("slice stride")?
                } else {
                    1
                });
                if self.eat(Tok::RBracket) {
                    break;
                }
                if !self.eat(Tok::Comma) {
                    return Err(self.expected_in("',' or ']'", "slice ranges"));
                }
            }
        }
        Ok((start, limit, strides))
    }

    /// One `key = value` entry of a [`Fmt::Trailing`] (or on its own):
    /// a [`Fmt::DimsPair`], [`Fmt::EnumList`] or [`Fmt::Prefixed`]; a key
    /// given again replaces what it gave before.
    fn parse_keyed_entry(
        &mut self,
        entry: &Fmt,
        given: &mut Vec<Given>,
        name: &str,
    ) -> PResult<()> {
        let at = self.pos();
        match *entry {
            Fmt::DimsPair {
                key,
                attr,
                dialect,
                lhs,
                rhs,
                ..
            } => {
                self.expect_keyword_eq(key, name)?;
                let lhs_list = self.parse_int_list(key)?;
                self.expect_ident("x", key)?;
                let rhs_list = self.parse_int_list(key)?;
                if let Some(params) = dims_params(given, attr, dialect, at) {
                    for (param, list) in [(lhs, lhs_list), (rhs, rhs_list)] {
                        params.retain(|(k, _)| k != param);
                        params.push((param.to_string(), Attr::int_list(&list)));
                    }
                }
            }
            Fmt::EnumList {
                key,
                attr,
                dialect,
                keyword,
            } => {
                self.expect_keyword_eq(key, name)?;
                let names = self.parse_ident_list(key)?;
                let enum_of = |value| Attr::Enum {
                    dialect: dialect.into(),
                    keyword: keyword.into(),
                    value,
                };
                let value = Attr::List(names.into_iter().map(enum_of).collect());
                given.retain(|g| g.name != attr || g.raw.is_some());
                given.push(Given::pretty(attr, value, at));
            }
            Fmt::Prefixed(key, prefix) => {
                self.expect_keyword_eq(key, name)?;
                // One bracketed group: `<...>` (a dictionary may follow).
                let start = self.idx;
                self.skip_balanced_group(key)?;
                let value = TokRange {
                    start,
                    end: self.idx,
                };
                let raw = RawAttr {
                    name: key.into(),
                    pos: at,
                    value: Some(value),
                    prefix: if self.range_text(value).starts_with('<') {
                        prefix
                    } else {
                        ""
                    },
                };
                given.extend(self.given_from_raw(vec![raw]));
            }
            _ => {}
        }
        Ok(())
    }

    /// `[A, B, ...]` of bare identifiers (enum values).
    fn parse_ident_list(&mut self, context: &str) -> PResult<Vec<String>> {
        self.expect(Tok::LBracket, context)?;
        let mut out = Vec::new();
        if self.eat(Tok::RBracket) {
            return Ok(out);
        }
        loop {
            if self.kind() != Tok::Ident {
                return Err(self.expected_in("a name", context));
            }
            out.push(self.text().to_string());
            self.bump();
            if self.eat(Tok::RBracket) {
                return Ok(out);
            }
            if !self.eat(Tok::Comma) {
                return Err(self.expected_in("',' or ']'", context));
            }
        }
    }

    /// `(%x init: %c), (%y init: %d)`: the inputs, then their inits.
    fn parse_init_pairs(&mut self, b: &FuncBuilder<'s>, name: &str) -> PResult<Vec<Operand>> {
        let (mut inputs, mut inits) = (Vec::new(), Vec::new());
        loop {
            self.expect(Tok::LParen, name)?;
            inputs.push(self.parse_operand(b)?);
            self.expect_ident("init", name)?;
            self.expect(Tok::Colon, name)?;
            inits.push(self.parse_operand(b)?);
            self.expect(Tok::RParen, name)?;
            if !(self.at(Tok::Comma) && self.peek_kind(1) == Tok::LParen) {
                break;
            }
            self.bump();
        }
        inputs.append(&mut inits);
        Ok(inputs)
    }

    /// The element-wise binary op named after `applies`.
    fn parse_applied_op(&mut self, name: &str) -> PResult<(BinaryOp, SrcPos)> {
        let at = self.pos();
        if self.kind() != Tok::Ident {
            return Err(self.expected_in("an op name after 'applies'", name));
        }
        let applied = self.text();
        match elementwise_kind(applied) {
            Some(OpKind::Binary(op)) => {
                self.bump();
                Ok((op, at))
            }
            _ => Err(Diagnostic::new(
                DiagKind::Unsupported,
                at,
                format!("'{name}' applying '{applied}': expected a binary element-wise op"),
            )),
        }
    }

    /// `reducer(%a: t, %b: t) (%c: u, %d: u) { ops }`: pair `k` holds block
    /// arguments `k` and `N + k`.
    fn parse_reducer(&mut self, b: &mut FuncBuilder<'s>, name: &str) -> PResult<Computation> {
        self.expect_ident("reducer", name)?;
        let (mut firsts, mut seconds) = (Vec::new(), Vec::new());
        while self.at(Tok::LParen) {
            let at = self.pos();
            self.bump();
            let mut pair = self.parse_block_arg_list()?;
            if pair.len() != 2 {
                return Err(Diagnostic::new(
                    DiagKind::Syntax,
                    at,
                    format!(
                        "'{name}': each reducer argument group has two arguments, found {}",
                        pair.len()
                    ),
                ));
            }
            seconds.push(pair.pop().expect("two arguments"));
            firsts.push(pair.pop().expect("two arguments"));
        }
        if firsts.is_empty() {
            return Err(self.expected_in("'(' and the reducer's arguments", name));
        }
        self.expect(Tok::LBrace, "reducer body")?;
        firsts.append(&mut seconds);
        self.parse_computation_rest(b, name, firsts)
    }

    /// The types after `:` in `form`, for an op with `n` operands.
    fn parse_sig_form(
        &mut self,
        form: SigForm,
        n: usize,
        name: &str,
        pos: SrcPos,
    ) -> PResult<(Vec<TensorType>, Vec<TensorType>)> {
        match form {
            SigForm::TypeList => {
                let tys = if n == 0 {
                    Vec::new()
                } else {
                    self.parse_type_list()?
                };
                Ok((tys.clone(), tys))
            }
            SigForm::Results => Ok((Vec::new(), self.parse_type_list()?)),
            SigForm::PredicateAndValue => match self.parse_signature()? {
                Signature::Pair(pred, value) => {
                    let mut operands = vec![value.clone(); n];
                    if let Some(first) = operands.first_mut() {
                        *first = pred;
                    }
                    Ok((operands, vec![value]))
                }
                Signature::Functional(ins, outs) => Ok((ins, outs)),
                Signature::Single(_) => Err(Diagnostic::new(
                    DiagKind::Syntax,
                    pos,
                    format!("'{name}' expects `: pred_type, result_type` or a function type"),
                )),
            },
            SigForm::OperandTypes => match self.parse_signature()? {
                Signature::Single(t) => Ok((vec![t; n], Vec::new())),
                sig => sig_types(sig, n, name, pos),
            },
            SigForm::FunctionType => self.parse_function_type(),
            SigForm::Functional
            | SigForm::SameType
            | SigForm::ResultType
            | SigForm::BareFunctional => {
                let sig = self.parse_signature()?;
                sig_types(sig, n, name, pos)
            }
        }
    }

    /// Dictionary entries as attribute trees (unparseable values stay
    /// opaque: only the definition decides what it accepts).
    fn given_from_raw(&mut self, raws: Vec<RawAttr>) -> Vec<Given> {
        raws.into_iter()
            .map(|raw| {
                let value = self.attr_value_of(&raw).unwrap_or_else(|_| {
                    Attr::Opaque(
                        raw.value
                            .map_or(String::new(), |r| self.range_text(r).into()),
                    )
                });
                Given {
                    name: raw.name.clone(),
                    value,
                    pos: raw.pos,
                    raw: Some(raw),
                }
            })
            .collect()
    }

    /// Build the op kind with its definition; attributes it does not take
    /// are kept verbatim (with `sdy.sharding`, which `finish_op` reads).
    #[allow(clippy::too_many_arguments)]
    fn decode_defined(
        &mut self,
        def: &DefinedOp,
        written: &str,
        pos: SrcPos,
        given: Vec<Given>,
        operands: Vec<Operand>,
        operand_types: Vec<TensorType>,
        result_types: Vec<TensorType>,
        computations: Vec<Computation>,
        calls: &mut Vec<(String, SrcPos)>,
    ) -> PResult<OpParts> {
        let name = def.spec.name;
        let candidates = given
            .iter()
            .filter(|g| g.name != "sdy.sharding")
            .map(|g| (g.name.clone(), g.value.clone()))
            .collect();
        let mut d = Decoder::new(
            written,
            name,
            candidates,
            operand_types.clone(),
            result_types.clone(),
            computations,
        );
        let kind = (def.decode)(&mut d).map_err(|e| {
            let at = e
                .attr
                .as_deref()
                .and_then(|a| given.iter().find(|g| g.name == a))
                .map_or(pos, |g| g.pos);
            let what = match &e.attr {
                Some(a) => format!("'{name}' attribute '{a}': {}", e.message),
                None => format!("'{name}' {}", e.message),
            };
            let kind = if e.type_mismatch {
                DiagKind::Type
            } else {
                DiagKind::Syntax
            };
            Diagnostic::new(kind, at, what)
        })?;
        // A call's callee must be a function of the module, which is
        // known only once the module is read: the parser checks it then,
        // at the position of the attribute that named it.
        if let Some(callee) = kind.callee() {
            let at = given
                .iter()
                .find(|g| matches!(&g.value, Attr::Symbol(s) | Attr::Str(s) if s == callee))
                .map_or(pos, |g| g.pos);
            calls.push((callee.to_string(), at));
        }
        let remaining: Vec<String> = d.remaining().map(str::to_string).collect();
        let mut attrs = Vec::new();
        for g in given {
            if g.name != "sdy.sharding" && !remaining.contains(&g.name) {
                continue;
            }
            match g.raw {
                Some(raw) => attrs.push(raw),
                None => {
                    return Err(Diagnostic::new(
                        DiagKind::Syntax,
                        g.pos,
                        format!("'{name}' has no attribute '{}'", g.name),
                    ))
                }
            }
        }
        Ok(OpParts {
            kind,
            operands,
            operand_types,
            result_types,
            attrs,
            regions: Vec::new(),
        })
    }
}

/// The parameters of the `dialect<...>` attribute `attr` that a pretty
/// form gives (a [`Fmt::DimsPair`]'s), added empty if not yet given.
fn dims_params<'g>(
    given: &'g mut Vec<Given>,
    attr: &str,
    dialect: &str,
    at: SrcPos,
) -> Option<&'g mut Vec<(String, Attr)>> {
    let pretty = |g: &Given| g.name == attr && g.raw.is_none();
    if !given.iter().any(pretty) {
        let value = Attr::Params {
            name: dialect.to_string(),
            params: Vec::new(),
        };
        given.push(Given::pretty(attr, value, at));
    }
    given.iter_mut().find_map(|g| match g {
        Given {
            name,
            value: Attr::Params { params, .. },
            raw: None,
            ..
        } if name == attr => Some(params),
        _ => None,
    })
}

/// `'a', 'b' or 'c'`: the keys of a [`Fmt::Trailing`]'s entries.
fn one_of_keys(entries: &[Fmt]) -> String {
    let keys: Vec<String> = entries
        .iter()
        .filter_map(|e| e.key())
        .map(|k| format!("'{k}'"))
        .collect();
    match keys.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => keys.concat(),
    }
}

/// The token a pretty form's punctuation directive stands for.
fn punct_token(p: &str) -> Tok {
    match p {
        "(" => Tok::LParen,
        ")" => Tok::RParen,
        "[" => Tok::LBracket,
        "]" => Tok::RBracket,
        "=" => Tok::Equal,
        ":" => Tok::Colon,
        "->" => Tok::Arrow,
        "," => Tok::Comma,
        // Not a directive any definition uses: never matches, so the
        // parser reports what it found instead.
        _ => Tok::Error,
    }
}

/// The body `applies OP` stands for: `OP(a, b)` of the one input's
/// rank-0 element type (the init value's type, the last operand).
fn applied_body(
    op: &(BinaryOp, SrcPos),
    operand_types: &[TensorType],
    name: &str,
    pos: SrcPos,
) -> PResult<Computation> {
    match operand_types {
        [_, init] => Ok(Computation::per_input(op.0, &[init.elem])),
        _ => Err(Diagnostic::new(
            DiagKind::Syntax,
            pos,
            format!("'{name}': 'applies' needs exactly one input; write the body with 'reducer'"),
        )),
    }
}
