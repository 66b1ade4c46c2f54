//! Tokenizer for the MLIR subset meshrun reads.
//!
//! The whole source is lexed up front into a flat token vector; tokens hold
//! byte offsets only, and line/column are computed on demand from a table of
//! line starts (so positions cost nothing unless a diagnostic or an op asks
//! for one). A malformed token (unterminated string, stray character) ends
//! the vector with an `Error` token whose message the parser reports when it
//! reaches it, so an earlier syntax error is still reported first.

use crate::diag::SrcPos;

/// What a token is. Punctuation kinds carry no text; everything else is read
/// back from the source span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tok {
    /// End of input.
    Eof,
    /// A malformed token; see [`Lexed::error`].
    Error,
    /// A bare identifier: `func.func`, `tensor`, `x128xf32`, `GT`, `p1`.
    Ident,
    /// `%name`, `%0`, `%0#1` (the result-number suffix is part of the token).
    Percent,
    /// `@name` or `@"quoted name"`.
    At,
    /// `#name`: attribute aliases and dialect attributes (`#sdy.sharding`).
    Hash,
    /// `^bb0`: block labels.
    Caret,
    /// `!name`: dialect types (`!stablehlo.token`).
    Bang,
    /// Decimal or `0x` hexadecimal integer, unsigned.
    Int,
    /// Decimal float with a `.` (`1.000000e+00`, `2.5`), unsigned.
    Float,
    /// A double-quoted string; the span includes the quotes.
    Str,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Less,
    Greater,
    Comma,
    Colon,
    Equal,
    /// `->` (one token, so raw attribute capture never sees its `>`).
    Arrow,
    Question,
    Star,
    Plus,
    Minus,
}

impl Tok {
    /// How the token kind is named in "expected ..." messages.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Tok::Eof => "end of input",
            Tok::Error => "invalid token",
            Tok::Ident => "identifier",
            Tok::Percent => "value name (%...)",
            Tok::At => "symbol name (@...)",
            Tok::Hash => "attribute (#...)",
            Tok::Caret => "block label (^...)",
            Tok::Bang => "dialect type (!...)",
            Tok::Int => "integer",
            Tok::Float => "float",
            Tok::Str => "string",
            Tok::LParen => "'('",
            Tok::RParen => "')'",
            Tok::LBracket => "'['",
            Tok::RBracket => "']'",
            Tok::LBrace => "'{'",
            Tok::RBrace => "'}'",
            Tok::Less => "'<'",
            Tok::Greater => "'>'",
            Tok::Comma => "','",
            Tok::Colon => "':'",
            Tok::Equal => "'='",
            Tok::Arrow => "'->'",
            Tok::Question => "'?'",
            Tok::Star => "'*'",
            Tok::Plus => "'+'",
            Tok::Minus => "'-'",
        }
    }
}

/// One token: its kind and byte span `[start, end)` in the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: Tok,
    pub start: u32,
    pub end: u32,
}

/// The lexed source: tokens (always ending in `Eof` or `Error`), the byte
/// offsets where lines start, and the message of a trailing `Error` token.
#[derive(Debug)]
pub(crate) struct Lexed {
    pub tokens: Vec<Token>,
    pub line_starts: Vec<usize>,
    pub error: Option<String>,
}

impl Lexed {
    /// 1-based line and (byte) column of a byte offset.
    pub fn pos_at(&self, offset: usize) -> SrcPos {
        let line = self.line_starts.partition_point(|&s| s <= offset);
        let start = self
            .line_starts
            .get(line.wrapping_sub(1))
            .copied()
            .unwrap_or(0);
        SrcPos::new(
            line.max(1) as u32,
            (offset.saturating_sub(start) + 1) as u32,
        )
    }
}

/// Characters allowed after the first one of a bare identifier.
fn is_ident_continue(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.')
}

/// Characters allowed in `%`, `#`, `!` and `^` names (MLIR's suffix-id).
fn is_suffix_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.' | b'-')
}

/// Lex the whole source. Never panics; a bad token stops lexing with an
/// `Error` token.
pub(crate) fn lex(src: &str) -> Lexed {
    let bytes = src.as_bytes();
    let mut line_starts = vec![0usize];
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'\n' {
            line_starts.push(i + 1);
        }
    }
    let mut tokens = Vec::with_capacity(bytes.len() / 4 + 1);
    let mut i = 0usize;
    let mut error = None;
    // Offsets are stored as u32; refuse (as a lex error) anything longer.
    if bytes.len() >= u32::MAX as usize {
        tokens.push(Token {
            kind: Tok::Error,
            start: 0,
            end: 0,
        });
        return Lexed {
            tokens,
            line_starts,
            error: Some("input larger than 4 GiB".into()),
        };
    }
    loop {
        // Skip whitespace and `//` comments.
        while i < bytes.len() {
            match bytes[i] {
                b' ' | b'\t' | b'\n' | b'\r' => i += 1,
                b'/' if bytes.get(i + 1) == Some(&b'/') => {
                    while i < bytes.len() && bytes[i] != b'\n' {
                        i += 1;
                    }
                }
                _ => break,
            }
        }
        let start = i;
        if i >= bytes.len() {
            tokens.push(Token {
                kind: Tok::Eof,
                start: start as u32,
                end: start as u32,
            });
            break;
        }
        let c = bytes[i];
        let kind = match c {
            b'(' => single(&mut i, Tok::LParen),
            b')' => single(&mut i, Tok::RParen),
            b'[' => single(&mut i, Tok::LBracket),
            b']' => single(&mut i, Tok::RBracket),
            b'{' => single(&mut i, Tok::LBrace),
            b'}' => single(&mut i, Tok::RBrace),
            b'<' => single(&mut i, Tok::Less),
            b'>' => single(&mut i, Tok::Greater),
            b',' => single(&mut i, Tok::Comma),
            b':' => single(&mut i, Tok::Colon),
            b'=' => single(&mut i, Tok::Equal),
            b'?' => single(&mut i, Tok::Question),
            b'*' => single(&mut i, Tok::Star),
            b'+' => single(&mut i, Tok::Plus),
            b'-' if bytes.get(i + 1) == Some(&b'>') => {
                i += 2;
                Ok(Tok::Arrow)
            }
            b'-' => single(&mut i, Tok::Minus),
            b'"' => lex_string(bytes, &mut i),
            b'%' => lex_sigil(bytes, &mut i, Tok::Percent, true),
            b'#' => lex_sigil(bytes, &mut i, Tok::Hash, false),
            b'^' => lex_sigil(bytes, &mut i, Tok::Caret, false),
            b'!' => lex_sigil(bytes, &mut i, Tok::Bang, false),
            b'@' => {
                if bytes.get(i + 1) == Some(&b'"') {
                    i += 1;
                    lex_string(bytes, &mut i).map(|_| Tok::At)
                } else {
                    lex_sigil(bytes, &mut i, Tok::At, false)
                }
            }
            b'0'..=b'9' => Ok(lex_number(bytes, &mut i)),
            c if c.is_ascii_alphabetic() || c == b'_' => {
                i += 1;
                while i < bytes.len() && is_ident_continue(bytes[i]) {
                    i += 1;
                }
                Ok(Tok::Ident)
            }
            _ => {
                let ch = src[i..].chars().next().unwrap_or('?');
                Err(format!("unexpected character '{}'", ch.escape_default()))
            }
        };
        match kind {
            Ok(kind) => tokens.push(Token {
                kind,
                start: start as u32,
                end: i as u32,
            }),
            Err(msg) => {
                tokens.push(Token {
                    kind: Tok::Error,
                    start: start as u32,
                    end: start as u32,
                });
                error = Some(msg);
                break;
            }
        }
    }
    Lexed {
        tokens,
        line_starts,
        error,
    }
}

fn single(i: &mut usize, kind: Tok) -> Result<Tok, String> {
    *i += 1;
    Ok(kind)
}

/// A string literal starting at `bytes[*i] == '"'`. Escapes are skipped
/// here and decoded by [`unescape`].
fn lex_string(bytes: &[u8], i: &mut usize) -> Result<Tok, String> {
    *i += 1;
    while *i < bytes.len() {
        match bytes[*i] {
            b'"' => {
                *i += 1;
                return Ok(Tok::Str);
            }
            b'\\' => *i += 2,
            b'\n' => return Err("unterminated string (newline before closing '\"')".into()),
            _ => *i += 1,
        }
    }
    Err("unterminated string".into())
}

/// `%name`, `#name`, `^name`, `!name`, `@name`. For `%` a `#N` result
/// number directly after the name is part of the token.
fn lex_sigil(bytes: &[u8], i: &mut usize, kind: Tok, result_suffix: bool) -> Result<Tok, String> {
    let sigil = bytes[*i] as char;
    *i += 1;
    let name_start = *i;
    while *i < bytes.len() && is_suffix_char(bytes[*i]) {
        *i += 1;
    }
    if *i == name_start {
        return Err(format!("expected a name after '{sigil}'"));
    }
    if result_suffix
        && bytes.get(*i) == Some(&b'#')
        && bytes.get(*i + 1).is_some_and(|c| c.is_ascii_digit())
    {
        *i += 1;
        while *i < bytes.len() && bytes[*i].is_ascii_digit() {
            *i += 1;
        }
    }
    Ok(kind)
}

/// An unsigned number: `12`, `0x1F`, `1.5`, `1.`, `2.5e-3`.
fn lex_number(bytes: &[u8], i: &mut usize) -> Tok {
    let start = *i;
    if bytes[start] == b'0'
        && bytes.get(start + 1) == Some(&b'x')
        && bytes.get(start + 2).is_some_and(|c| c.is_ascii_hexdigit())
    {
        *i += 2;
        while *i < bytes.len() && bytes[*i].is_ascii_hexdigit() {
            *i += 1;
        }
        return Tok::Int;
    }
    while *i < bytes.len() && bytes[*i].is_ascii_digit() {
        *i += 1;
    }
    if bytes.get(*i) != Some(&b'.') {
        return Tok::Int;
    }
    *i += 1;
    while *i < bytes.len() && bytes[*i].is_ascii_digit() {
        *i += 1;
    }
    if matches!(bytes.get(*i), Some(b'e' | b'E')) {
        let mut j = *i + 1;
        if matches!(bytes.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if bytes.get(j).is_some_and(|c| c.is_ascii_digit()) {
            while j < bytes.len() && bytes[j].is_ascii_digit() {
                j += 1;
            }
            *i = j;
        }
    }
    Tok::Float
}

/// Decode the body of a string token (the text between the quotes):
/// `\\`, `\"`, `\n`, `\t` and two-hex-digit escapes `\XX`.
pub(crate) fn unescape(body: &str) -> Result<String, String> {
    if !body.contains('\\') {
        return Ok(body.to_string());
    }
    let bytes = body.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        match bytes.get(i + 1) {
            Some(b'\\') => out.push(b'\\'),
            Some(b'"') => out.push(b'"'),
            Some(b'n') => out.push(b'\n'),
            Some(b't') => out.push(b'\t'),
            Some(&h) if h.is_ascii_hexdigit() => {
                let lo = bytes.get(i + 2).copied().filter(u8::is_ascii_hexdigit);
                match lo {
                    Some(lo) => {
                        let hex = [h, lo];
                        let s = std::str::from_utf8(&hex).map_err(|e| e.to_string())?;
                        let v = u8::from_str_radix(s, 16).map_err(|e| e.to_string())?;
                        out.push(v);
                        i += 1;
                    }
                    None => return Err("bad escape in string: expected two hex digits".into()),
                }
            }
            _ => return Err("bad escape in string".into()),
        }
        i += 2;
    }
    String::from_utf8(out).map_err(|_| "string escape produces invalid UTF-8".to_string())
}

/// Write `s` as an MLIR string literal (quotes and escapes).
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\{:02X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Tok> {
        lex(src).tokens.iter().map(|t| t.kind).collect()
    }

    #[test]
    fn lexes_types_and_arrows() {
        assert_eq!(
            kinds("(tensor<16x128xf32>) -> tensor<f32>"),
            vec![
                Tok::LParen,
                Tok::Ident,
                Tok::Less,
                Tok::Int,
                Tok::Ident,
                Tok::Greater,
                Tok::RParen,
                Tok::Arrow,
                Tok::Ident,
                Tok::Less,
                Tok::Ident,
                Tok::Greater,
                Tok::Eof
            ]
        );
    }

    #[test]
    fn lexes_values_numbers_and_strings() {
        let src = "%0#1 %arg0 %cst_0 0xFF800000 1.000000e+00 -2 \"a\\\"b\" @f #sdy.sharding // c";
        assert_eq!(
            kinds(src),
            vec![
                Tok::Percent,
                Tok::Percent,
                Tok::Percent,
                Tok::Int,
                Tok::Float,
                Tok::Minus,
                Tok::Int,
                Tok::Str,
                Tok::At,
                Tok::Hash,
                Tok::Eof
            ]
        );
        let lexed = lex(src);
        let t = lexed.tokens[0];
        assert_eq!(&src[t.start as usize..t.end as usize], "%0#1");
    }

    #[test]
    fn reports_unterminated_string_and_positions() {
        let lexed = lex("a\n  \"abc");
        assert_eq!(lexed.tokens.last().map(|t| t.kind), Some(Tok::Error));
        assert!(lexed
            .error
            .as_deref()
            .unwrap_or("")
            .contains("unterminated"));
        let p = lexed.pos_at(4);
        assert_eq!((p.line, p.col), (2, 3));
    }

    #[test]
    fn unescape_and_quote_round_trip() {
        for s in ["plain", "a\"b", "back\\slash", "nl\nx", "\u{1}"] {
            let q = quote(s);
            assert_eq!(unescape(&q[1..q.len() - 1]).as_deref(), Ok(s));
        }
        assert_eq!(unescape("\\41").as_deref(), Ok("A"));
        assert!(unescape("\\q").is_err());
    }
}
