//! A convolution's dimension numbers (`#stablehlo.conv<...>`): which
//! dimension of the input, kernel and output is the batch, the feature and
//! each spatial dimension.
//!
//! The compact spelling lists every dimension of each tensor in order:
//! `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]` (`b` batch, `f` feature, `i` /
//! `o` the kernel's input / output feature, `k` the k-th spatial
//! dimension). The raw spelling names every field:
//! `raw input_batch_dimension = 0, ..., output_spatial_dimensions = [1, 2]`.
//! The pretty form writes the compact body bare after `dim_numbers =`.

use crate::ir::attr::Attr;
use crate::ir::ops::AttrCodec;

/// The attribute's dialect name: the generic form writes
/// `#stablehlo.conv<body>`.
pub const CONV_ATTR: &str = "#stablehlo.conv";

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ConvDims {
    pub input_batch: usize,
    pub input_feature: usize,
    pub input_spatial: Vec<usize>,
    pub kernel_input_feature: usize,
    pub kernel_output_feature: usize,
    pub kernel_spatial: Vec<usize>,
    pub output_batch: usize,
    pub output_feature: usize,
    pub output_spatial: Vec<usize>,
}

/// One token of the compact or raw spelling.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(i64),
    Word(String),
    Punct(char),
    Arrow,
}

fn number(chars: &mut std::iter::Peekable<std::str::Chars>) -> Result<i64, String> {
    let mut t = String::new();
    while let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit()) {
        t.push(d);
        chars.next();
    }
    t.parse()
        .map_err(|_| format!("'{t}' is not a dimension number"))
}

fn tokens(s: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '-' {
            chars.next();
            if chars.peek() == Some(&'>') {
                chars.next();
                out.push(Tok::Arrow);
            } else {
                out.push(Tok::Int(-number(&mut chars)?));
            }
        } else if c.is_ascii_digit() {
            out.push(Tok::Int(number(&mut chars)?));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let mut t = String::new();
            while let Some(&d) = chars
                .peek()
                .filter(|d| d.is_ascii_alphanumeric() || **d == '_')
            {
                t.push(d);
                chars.next();
            }
            out.push(Tok::Word(t));
        } else if "[],=".contains(c) {
            chars.next();
            out.push(Tok::Punct(c));
        } else {
            return Err(format!("unexpected character '{c}'"));
        }
    }
    Ok(out)
}

/// Reads tokens front to back.
struct Reader {
    toks: Vec<Tok>,
    at: usize,
}

impl Reader {
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.at).cloned();
        self.at += 1;
        t
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }

    fn expect(&mut self, want: Tok, what: &str) -> Result<(), String> {
        match self.next() {
            Some(t) if t == want => Ok(()),
            _ => Err(format!("expected {what}")),
        }
    }

    /// `[x, y, ...]` of integers or one-letter words.
    fn list(&mut self) -> Result<Vec<Tok>, String> {
        self.expect(Tok::Punct('['), "'['")?;
        let mut items = Vec::new();
        if self.peek() == Some(&Tok::Punct(']')) {
            self.next();
            return Ok(items);
        }
        loop {
            match self.next() {
                Some(t @ (Tok::Int(_) | Tok::Word(_))) => items.push(t),
                _ => return Err("expected a dimension (a number or a letter)".into()),
            }
            match self.next() {
                Some(Tok::Punct(',')) => {}
                Some(Tok::Punct(']')) => return Ok(items),
                _ => return Err("expected ',' or ']'".into()),
            }
        }
    }
}

/// One tensor's dimensions in the compact spelling: where the two named
/// dimensions (`letters`) and each spatial dimension are.
fn read_section(
    items: &[Tok],
    letters: [char; 2],
    what: &str,
) -> Result<(usize, usize, Vec<usize>), String> {
    let mut named = [None, None];
    let mut spatial: Vec<Option<usize>> = vec![None; items.len().saturating_sub(2)];
    for (pos, t) in items.iter().enumerate() {
        match t {
            Tok::Word(w) => {
                let k = letters
                    .iter()
                    .position(|&l| w.len() == 1 && w.starts_with(l))
                    .ok_or_else(|| {
                        format!(
                            "the {what} dimensions may name '{}' and '{}', not '{w}'",
                            letters[0], letters[1]
                        )
                    })?;
                if named[k].replace(pos).is_some() {
                    return Err(format!("the {what} dimensions name '{w}' twice"));
                }
            }
            Tok::Int(s) => {
                let slot = usize::try_from(*s)
                    .ok()
                    .and_then(|s| spatial.get_mut(s))
                    .ok_or_else(|| {
                        format!(
                            "spatial dimension {s} of the {what} is out of range (it has {} spatial dimensions)",
                            items.len().saturating_sub(2)
                        )
                    })?;
                if slot.replace(pos).is_some() {
                    return Err(format!(
                        "the {what} dimensions name spatial dimension {s} twice"
                    ));
                }
            }
            _ => unreachable!("read_section gets list items only"),
        }
    }
    let [Some(a), Some(b)] = named else {
        return Err(format!(
            "the {what} dimensions must name '{}' and '{}' once each",
            letters[0], letters[1]
        ));
    };
    let spatial = spatial
        .into_iter()
        .map(|p| p.ok_or_else(|| format!("the {what} dimensions leave out a spatial dimension")))
        .collect::<Result<_, _>>()?;
    Ok((a, b, spatial))
}

impl ConvDims {
    /// The compact body `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]` or the raw
    /// one `raw input_batch_dimension = 0, ...`.
    pub fn parse_body(body: &str) -> Result<ConvDims, String> {
        let mut r = Reader {
            toks: tokens(body)?,
            at: 0,
        };
        if r.peek() == Some(&Tok::Word("raw".into())) {
            r.next();
            return Self::parse_raw(&mut r);
        }
        let input = r.list()?;
        if r.next() != Some(Tok::Word("x".into())) {
            return Err("expected 'x' after the input dimensions".into());
        }
        let kernel = r.list()?;
        r.expect(Tok::Arrow, "'->' after the kernel dimensions")?;
        let output = r.list()?;
        if r.peek().is_some() {
            return Err("unexpected text after the output dimensions".into());
        }
        if input.len() != kernel.len() || input.len() != output.len() {
            return Err(format!(
                "the input, kernel and output list {}, {} and {} dimensions (one rank for all)",
                input.len(),
                kernel.len(),
                output.len()
            ));
        }
        let (input_batch, input_feature, input_spatial) =
            read_section(&input, ['b', 'f'], "input")?;
        let (kernel_input_feature, kernel_output_feature, kernel_spatial) =
            read_section(&kernel, ['i', 'o'], "kernel")?;
        let (output_batch, output_feature, output_spatial) =
            read_section(&output, ['b', 'f'], "output")?;
        Ok(ConvDims {
            input_batch,
            input_feature,
            input_spatial,
            kernel_input_feature,
            kernel_output_feature,
            kernel_spatial,
            output_batch,
            output_feature,
            output_spatial,
        })
    }

    fn parse_raw(r: &mut Reader) -> Result<ConvDims, String> {
        let mut d = ConvDims::default();
        let mut seen: Vec<String> = Vec::new();
        while let Some(t) = r.next() {
            let Tok::Word(key) = t else {
                return Err("expected a field name".into());
            };
            if seen.contains(&key) {
                return Err(format!("field '{key}' is given twice"));
            }
            r.expect(Tok::Punct('='), "'='")?;
            let one = |r: &mut Reader| match r.next() {
                Some(Tok::Int(v)) if v >= 0 => Ok(v as usize),
                _ => Err(format!("{key}: expected a dimension")),
            };
            let many = |r: &mut Reader| -> Result<Vec<usize>, String> {
                r.list()?
                    .into_iter()
                    .map(|t| match t {
                        Tok::Int(v) if v >= 0 => Ok(v as usize),
                        _ => Err(format!("{key}: expected dimensions")),
                    })
                    .collect()
            };
            match key.as_str() {
                "input_batch_dimension" => d.input_batch = one(r)?,
                "input_feature_dimension" => d.input_feature = one(r)?,
                "input_spatial_dimensions" => d.input_spatial = many(r)?,
                "kernel_input_feature_dimension" => d.kernel_input_feature = one(r)?,
                "kernel_output_feature_dimension" => d.kernel_output_feature = one(r)?,
                "kernel_spatial_dimensions" => d.kernel_spatial = many(r)?,
                "output_batch_dimension" => d.output_batch = one(r)?,
                "output_feature_dimension" => d.output_feature = one(r)?,
                "output_spatial_dimensions" => d.output_spatial = many(r)?,
                _ => return Err(format!("unknown field '{key}'")),
            }
            seen.push(key);
            match r.next() {
                None => break,
                Some(Tok::Punct(',')) => {}
                Some(_) => return Err("expected ','".into()),
            }
        }
        Ok(d)
    }

    /// Spec C12-C13, C17-C20 for tensors of rank `n`.
    pub fn check_rank(&self, n: usize) -> Result<(), String> {
        let groups: [(&str, Vec<usize>); 3] = [
            (
                "input",
                [
                    vec![self.input_batch, self.input_feature],
                    self.input_spatial.clone(),
                ]
                .concat(),
            ),
            (
                "kernel",
                [
                    vec![self.kernel_input_feature, self.kernel_output_feature],
                    self.kernel_spatial.clone(),
                ]
                .concat(),
            ),
            (
                "output",
                [
                    vec![self.output_batch, self.output_feature],
                    self.output_spatial.clone(),
                ]
                .concat(),
            ),
        ];
        for (what, dims) in groups {
            if dims.len() != n {
                return Err(format!(
                    "the dimension numbers give the {what} {} dimensions but the operands have rank {n}",
                    dims.len()
                ));
            }
            for (k, &d) in dims.iter().enumerate() {
                if d >= n {
                    return Err(format!("{what} dimension {d} is out of range for rank {n}"));
                }
                if dims[..k].contains(&d) {
                    return Err(format!(
                        "the {what} dimension numbers use dimension {d} twice"
                    ));
                }
            }
        }
        Ok(())
    }

    /// The compact body, as StableHLO prints it.
    pub fn body(&self) -> String {
        let section = |n: usize, a: (usize, char), b: (usize, char), spatial: &[usize]| {
            let mut items = vec![String::new(); n];
            for (&d, s) in spatial.iter().zip(0..) {
                if let Some(slot) = items.get_mut(d) {
                    *slot = s.to_string();
                }
            }
            for (d, l) in [a, b] {
                if let Some(slot) = items.get_mut(d) {
                    *slot = l.to_string();
                }
            }
            format!("[{}]", items.join(", "))
        };
        let n = self.input_spatial.len() + 2;
        format!(
            "{}x{}->{}",
            section(
                n,
                (self.input_batch, 'b'),
                (self.input_feature, 'f'),
                &self.input_spatial
            ),
            section(
                n,
                (self.kernel_input_feature, 'i'),
                (self.kernel_output_feature, 'o'),
                &self.kernel_spatial
            ),
            section(
                n,
                (self.output_batch, 'b'),
                (self.output_feature, 'f'),
                &self.output_spatial
            ),
        )
    }
}

impl AttrCodec for ConvDims {
    fn decode(a: &Attr) -> Result<Self, String> {
        let text = match a {
            Attr::Opaque(s) => s.as_str(),
            _ => {
                return Err(format!(
                    "expected {CONV_ATTR}<...>, found {}",
                    a.kind_name()
                ))
            }
        };
        let body = text
            .trim()
            .strip_prefix(CONV_ATTR)
            .and_then(|s| s.trim_start().strip_prefix('<'))
            .and_then(|s| s.trim_end().strip_suffix('>'))
            .ok_or_else(|| format!("expected {CONV_ATTR}<...>, found '{text}'"))?;
        ConvDims::parse_body(body)
    }

    fn encode(&self) -> Option<Attr> {
        Some(Attr::Opaque(format!("{CONV_ATTR}<{}>", self.body())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_and_raw_spellings() {
        let d = ConvDims::parse_body("[b, 0, 1, f]x[0, 1, i, o]->[0, 1, b, f]").unwrap();
        assert_eq!((d.input_batch, d.input_feature), (0, 3));
        assert_eq!(d.input_spatial, vec![1, 2]);
        assert_eq!((d.kernel_input_feature, d.kernel_output_feature), (2, 3));
        assert_eq!(
            (d.output_batch, d.output_feature, d.output_spatial.clone()),
            (2, 3, vec![0, 1])
        );
        assert_eq!(d.body(), "[b, 0, 1, f]x[0, 1, i, o]->[0, 1, b, f]");
        let raw = ConvDims::parse_body(
            "raw input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1, 2], \
             kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1], \
             output_batch_dimension = 2, output_feature_dimension = 3, output_spatial_dimensions = [0, 1]",
        )
        .unwrap();
        assert_eq!(raw, d);
        let flipped = ConvDims::parse_body("[f, 1, 0, b]x[o, 1, 0, i]->[f, 0, 1, b]").unwrap();
        assert_eq!(flipped.input_spatial, vec![2, 1]);
        assert_eq!(flipped.body(), "[f, 1, 0, b]x[o, 1, 0, i]->[f, 0, 1, b]");
    }

    #[test]
    fn malformed_spellings_say_what_is_wrong() {
        let err = |s: &str| ConvDims::parse_body(s).unwrap_err();
        assert!(err("[b, 0, f]x[0, i, o]->[b, 0]").contains("one rank"));
        assert!(err("[b, 0, 0, f]x[0, 1, i, o]->[b, 0, 1, f]").contains("twice"));
        assert!(err("[b, 0, 2, f]x[0, 1, i, o]->[b, 0, 1, f]").contains("out of range"));
        assert!(err("[b, 0, 1, o]x[0, 1, i, o]->[b, 0, 1, f]").contains("not 'o'"));
        assert!(err("[b, 0, 1, f][0, 1, i, o]->[b, 0, 1, f]").contains("'x'"));
    }
}
