//! The generic form of the module structure, as MLIR prints it with
//! `print_generic_op_form` / `--mlir-print-op-generic`:
//!
//! ```text
//! "builtin.module"() <{sym_name = "jit_f"}> ({
//!   "sdy.mesh"() <{mesh = #sdy.mesh<["x"=4]>, sym_name = "mesh"}> : () -> ()
//!   "func.func"() <{arg_attrs = [{...}], function_type = (...) -> ..., res_attrs = [...],
//!                   sym_name = "main", sym_visibility = "public"}> ({
//!   ^bb0(%arg0: tensor<8xf32>):
//!     ...
//!     "func.return"(%0) : (tensor<8xf32>) -> ()
//!   }) : () -> ()
//! }) {mhlo.num_partitions = 8 : i32} : () -> ()
//! ```

use crate::diag::{DiagKind, Diagnostic, SrcPos};
use crate::ir::{Function, ParamAttrs, Visibility};
use crate::sharding::MeshDef;
use crate::text::cursor::{Cursor, PResult};
use crate::text::lexer::Tok;
use crate::text::parse_attrs::{take_attr, RawAttr};
use crate::text::parser::{attr_diag, FuncBuilder, ModuleBuilder};

impl<'s> Cursor<'s> {
    /// `"name"() [<{props}>]`: the start of a generic structural op.
    /// Returns the properties.
    fn generic_op_head(&mut self, name: &str) -> PResult<Vec<RawAttr>> {
        self.bump(); // the quoted name
        self.expect(Tok::LParen, name)?;
        self.expect(Tok::RParen, name)?;
        if self.at(Tok::Less) && self.peek_kind(1) == Tok::LBrace {
            self.bump();
            let props = self.parse_attr_dict()?;
            self.expect(Tok::Greater, "op properties")?;
            return Ok(props);
        }
        Ok(Vec::new())
    }

    /// `: () -> ()` ending a generic structural op, then `loc(...)`.
    fn generic_op_tail(&mut self, name: &str) -> PResult<()> {
        self.expect(Tok::Colon, name)?;
        let (ins, outs) = self.parse_function_type()?;
        if !ins.is_empty() || !outs.is_empty() {
            return Err(self.err(DiagKind::Syntax, format!("'{name}' has type () -> ()")));
        }
        self.skip_loc()
    }

    /// A string-valued property (`sym_name = "main"`).
    fn string_prop(&mut self, a: &RawAttr) -> PResult<String> {
        let r = a.value.ok_or_else(|| {
            attr_diag(
                a,
                DiagKind::Syntax,
                format!("attribute '{}' needs a value", a.name),
            )
        })?;
        self.within(r, &format!("attribute '{}'", a.name), |c| {
            c.parse_string("attribute")
        })
    }

    /// The whole generic module (the current token is `"builtin.module"`).
    pub(crate) fn parse_generic_module(&mut self, mb: &mut ModuleBuilder) -> PResult<()> {
        const NAME: &str = "builtin.module";
        let mut props = self.generic_op_head(NAME)?;
        if let Some(a) = take_attr(&mut props, "sym_name") {
            mb.module.name = Some(self.string_prop(&a)?);
        }
        self.expect(Tok::LParen, NAME)?;
        self.expect(Tok::LBrace, NAME)?;
        self.parse_module_items(mb, Tok::RBrace)?;
        self.expect(Tok::RBrace, NAME)?;
        self.expect(Tok::RParen, NAME)?;
        let attrs = self.parse_opt_attr_dict()?;
        mb.module.attrs = props
            .iter()
            .chain(&attrs)
            .map(|a| self.named_attr(a))
            .collect();
        self.generic_op_tail(NAME)?;
        if !self.at(Tok::Eof) {
            return Err(self.expected("end of input after the module"));
        }
        Ok(())
    }

    /// `"sdy.mesh"() <{mesh = #sdy.mesh<...>, sym_name = "m"}> {attrs} : () -> ()`.
    pub(crate) fn parse_generic_mesh_def(&mut self) -> PResult<MeshDef> {
        const NAME: &str = "sdy.mesh";
        let pos = self.pos();
        let mut props = self.generic_op_head(NAME)?;
        let need = |props: &mut Vec<RawAttr>, key: &str| {
            take_attr(props, key).ok_or_else(|| {
                Diagnostic::new(
                    DiagKind::Syntax,
                    pos,
                    format!("'{NAME}' needs attribute '{key}'"),
                )
            })
        };
        let name_attr = need(&mut props, "sym_name")?;
        let name = self.string_prop(&name_attr)?;
        let mesh_attr = need(&mut props, "mesh")?;
        let r = mesh_attr.value.ok_or_else(|| {
            attr_diag(
                &mesh_attr,
                DiagKind::Syntax,
                "attribute 'mesh' needs a value",
            )
        })?;
        let mesh = self.within(r, "attribute 'mesh'", |c| {
            if !(c.at(Tok::Hash) && c.text() == "#sdy.mesh") {
                return Err(c.expected_in("#sdy.mesh<...>", "attribute 'mesh'"));
            }
            c.bump();
            c.parse_mesh_body()
        })?;
        let attrs = if self.at(Tok::LBrace) {
            Some(self.capture_dict_text()?)
        } else {
            None
        };
        self.generic_op_tail(NAME)?;
        Ok(MeshDef {
            name,
            mesh,
            attrs,
            pos,
        })
    }

    /// `[{...}, {...}]` of `arg_attrs` / `res_attrs`.
    fn param_attr_list(&mut self, a: &RawAttr) -> PResult<Vec<ParamAttrs>> {
        let r = a.value.ok_or_else(|| {
            attr_diag(
                a,
                DiagKind::Syntax,
                format!("attribute '{}' needs a value", a.name),
            )
        })?;
        let what = format!("attribute '{}'", a.name);
        self.within(r, &what, |c| {
            c.expect(Tok::LBracket, &what)?;
            let mut out = Vec::new();
            if c.eat(Tok::RBracket) {
                return Ok(out);
            }
            loop {
                let raw = c.parse_attr_dict()?;
                out.push(c.param_attrs_from(&raw)?);
                if c.eat(Tok::RBracket) {
                    return Ok(out);
                }
                if !c.eat(Tok::Comma) {
                    return Err(c.expected_in("',' or ']'", &what));
                }
            }
        })
    }

    /// `"func.func"() <{function_type = ..., sym_name = ..., ...}> ({
    /// ^bb0(args): ops }) {attrs} : () -> ()`.
    pub(crate) fn parse_generic_func(&mut self) -> PResult<(Function, Vec<(String, SrcPos)>)> {
        const NAME: &str = "func.func";
        let pos = self.pos();
        let mut props = self.generic_op_head(NAME)?;
        let need = |props: &mut Vec<RawAttr>, key: &str| {
            take_attr(props, key).ok_or_else(|| {
                Diagnostic::new(
                    DiagKind::Syntax,
                    pos,
                    format!("'{NAME}' needs attribute '{key}'"),
                )
            })
        };
        let name_attr = need(&mut props, "sym_name")?;
        let name = self.string_prop(&name_attr)?;
        let ty_attr = need(&mut props, "function_type")?;
        let r = ty_attr.value.ok_or_else(|| {
            attr_diag(
                &ty_attr,
                DiagKind::Syntax,
                "attribute 'function_type' needs a value",
            )
        })?;
        let (arg_types, result_types) =
            self.within(r, "attribute 'function_type'", |c| c.parse_function_type())?;
        let visibility = match take_attr(&mut props, "sym_visibility") {
            Some(a) => match self.string_prop(&a)?.as_str() {
                "public" => Visibility::Public,
                "private" => Visibility::Private,
                other => {
                    return Err(attr_diag(
                        &a,
                        DiagKind::Unsupported,
                        format!("visibility '{other}' is not supported"),
                    ))
                }
            },
            None => Visibility::Default,
        };
        let n_args = arg_types.len();
        let n_results = result_types.len();
        let mut b = FuncBuilder::new(Function::new(name, arg_types));
        b.func.visibility = visibility;
        b.func.pos = pos;
        b.func.result_types = result_types;
        b.func.result_attrs = vec![ParamAttrs::default(); n_results];
        for (key, want) in [("arg_attrs", n_args), ("res_attrs", n_results)] {
            if let Some(a) = take_attr(&mut props, key) {
                let list = self.param_attr_list(&a)?;
                if list.len() != want {
                    return Err(attr_diag(
                        &a,
                        DiagKind::Syntax,
                        format!(
                            "'{key}' has {} entries but the function type has {want}",
                            list.len()
                        ),
                    ));
                }
                if key == "arg_attrs" {
                    b.func.arg_attrs = list;
                } else {
                    b.func.result_attrs = list;
                }
            }
        }

        self.expect(Tok::LParen, NAME)?;
        self.expect(Tok::LBrace, "function body")?;
        if self.eat(Tok::Caret) {
            self.expect(Tok::LParen, "block header")?;
            let mut i = 0usize;
            if !self.eat(Tok::RParen) {
                loop {
                    if !self.at(Tok::Percent) {
                        return Err(self.expected_in("a block argument (%...)", "block header"));
                    }
                    let (arg, arg_pos) = (self.text(), self.pos());
                    self.bump();
                    self.expect(Tok::Colon, "block argument")?;
                    let ty_pos = self.pos();
                    let ty = self.parse_type()?;
                    self.skip_loc()?;
                    b.define_arg(i, arg, arg_pos)?;
                    let declared = b.func.args.get(i).map(|v| b.func.ty(*v).clone());
                    if declared.as_ref() != Some(&ty) {
                        return Err(Diagnostic::new(
                            DiagKind::Type,
                            ty_pos,
                            format!("block argument '{arg}' has type {ty} but the function type says otherwise"),
                        ));
                    }
                    i += 1;
                    if self.eat(Tok::RParen) {
                        break;
                    }
                    if !self.eat(Tok::Comma) {
                        return Err(self.expected_in("',' or ')'", "block header"));
                    }
                }
            }
            self.expect(Tok::Colon, "block header")?;
            if i != n_args {
                return Err(self.err(
                    DiagKind::Syntax,
                    format!("entry block has {i} argument(s) but the function type has {n_args}"),
                ));
            }
        } else if n_args != 0 {
            return Err(self.expected_in("a block header '^bb0(...):'", "function body"));
        }
        self.parse_func_body(&mut b)?;
        self.expect(Tok::RBrace, "function body")?;
        self.expect(Tok::RParen, NAME)?;
        let attrs = self.parse_opt_attr_dict()?;
        b.func.attrs = props
            .iter()
            .chain(&attrs)
            .map(|a| self.named_attr(a))
            .collect();
        self.generic_op_tail(NAME)?;
        Ok((b.func, b.calls))
    }
}
