//! Printing [`Attr`] trees in MLIR syntax (the generic op form's
//! properties, and the values pretty forms embed).

use std::fmt::{self, Write};

use crate::ir::attr::Attr;
use crate::text::lexer::quote;
use crate::text::print_literal::write_dense;

fn write_entries(f: &mut fmt::Formatter<'_>, entries: &[(String, Attr)]) -> fmt::Result {
    for (i, (k, v)) in entries.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        f.write_str(k)?;
        if *v != Attr::Unit {
            write!(f, " = {v}")?;
        }
    }
    Ok(())
}

/// `[<@mesh, [...]>, ...]`: shardings as `sharding_per_value` and pretty
/// forms list them.
pub(crate) fn sharding_list(list: &[crate::sharding::TensorSharding]) -> String {
    let items: Vec<String> = list.iter().map(|s| s.to_string()).collect();
    format!("[{}]", items.join(", "))
}

/// `{"x", "y":(1)2}`: mesh axes and sub-axes.
pub(crate) fn axis_ref_list(axes: &[crate::sharding::AxisRef]) -> String {
    let items: Vec<String> = axes.iter().map(|a| a.to_string()).collect();
    format!("{{{}}}", items.join(", "))
}

/// `{"x", "y"}`: a set of mesh axis names.
pub(crate) fn axis_name_set(axes: &[String]) -> String {
    let items: Vec<String> = axes.iter().map(|a| quote(a)).collect();
    format!("{{{}}}", items.join(", "))
}

impl fmt::Display for Attr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Attr::Int { value, ty } => {
                write!(f, "{value}")?;
                if let Some(t) = ty {
                    write!(f, " : {t}")?;
                }
                Ok(())
            }
            Attr::Bool(b) => write!(f, "{b}"),
            Attr::Str(s) => f.write_str(&quote(s)),
            Attr::Symbol(s) => write!(f, "@{s}"),
            Attr::List(items) => {
                f.write_char('[')?;
                for (i, a) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{a}")?;
                }
                f.write_char(']')
            }
            Attr::DenseArray { elem, values } => {
                write!(f, "array<{elem}")?;
                for (i, v) in values.iter().enumerate() {
                    f.write_str(if i == 0 { ": " } else { ", " })?;
                    if elem == "i1" {
                        write!(f, "{}", *v != 0)?;
                    } else {
                        write!(f, "{v}")?;
                    }
                }
                f.write_char('>')
            }
            Attr::Dense { literal, ty } => {
                let mut s = String::new();
                write_dense(&mut s, literal, ty);
                write!(f, "{s} : {ty}")
            }
            Attr::Dict(entries) => {
                f.write_char('{')?;
                write_entries(f, entries)?;
                f.write_char('}')
            }
            Attr::Params { name, params } => {
                write!(f, "{name}<")?;
                write_entries(f, params)?;
                f.write_char('>')
            }
            Attr::Enum {
                dialect,
                keyword,
                value,
            } => write!(f, "{dialect}<{keyword} {value}>"),
            Attr::Shardings(list) => write!(f, "#sdy.sharding_per_value<{}>", sharding_list(list)),
            Attr::ManualAxes(axes) => write!(f, "#sdy<manual_axes{}>", axis_name_set(axes)),
            Attr::Sharding(s) => write!(f, "#sdy.sharding{s}"),
            Attr::AxisRefs(axes) => write!(f, "#sdy<axis_ref_list{}>", axis_ref_list(axes)),
            Attr::Ident(s) | Attr::Opaque(s) => f.write_str(s),
            Attr::Unit => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_mlir_syntax() {
        let a = Attr::Params {
            name: "#stablehlo.gather".into(),
            params: vec![
                ("offset_dims".into(), Attr::int_list(&[2])),
                ("index_vector_dim".into(), Attr::Int { value: 2, ty: None }),
            ],
        };
        assert_eq!(
            a.to_string(),
            "#stablehlo.gather<offset_dims = [2], index_vector_dim = 2>"
        );
        assert_eq!(Attr::dense_i64(&[1, 64]).to_string(), "array<i64: 1, 64>");
        assert_eq!(Attr::dense_i64(&[]).to_string(), "array<i64>");
        assert_eq!(Attr::i64(3).to_string(), "3 : i64");
        assert_eq!(Attr::Str("a\"b".into()).to_string(), "\"a\\\"b\"");
    }
}
