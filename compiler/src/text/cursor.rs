//! The parser's token cursor: lookahead, expectations with positioned
//! diagnostics, and balanced skipping/capture of raw attribute text.
//!
//! Every grammar file (`parse_*.rs`) adds methods to [`Cursor`]; this file
//! holds only what they all share.

use crate::diag::{DiagKind, Diagnostic, SrcPos};
use crate::text::lexer::{lex, Lexed, Tok, Token};

/// A half-open range of token indices `[start, end)`: the tokens of one
/// attribute value, kept so it can be re-emitted verbatim or decoded later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TokRange {
    pub start: usize,
    pub end: usize,
}

pub(crate) struct Cursor<'s> {
    pub src: &'s str,
    lexed: Lexed,
    /// Index of the current token.
    pub idx: usize,
    /// How many regions enclose the current token (bounded by
    /// `parse_computation::MAX_REGION_DEPTH` against hostile input).
    pub region_depth: usize,
}

pub(crate) type PResult<T> = Result<T, Diagnostic>;

impl<'s> Cursor<'s> {
    pub fn new(src: &'s str) -> Cursor<'s> {
        Cursor {
            src,
            lexed: lex(src),
            idx: 0,
            region_depth: 0,
        }
    }

    /// The token at `idx` (the last token, `Eof`/`Error`, past the end).
    fn tok_at(&self, idx: usize) -> Token {
        match self.lexed.tokens.get(idx) {
            Some(t) => *t,
            None => self.lexed.tokens.last().copied().unwrap_or(Token {
                kind: Tok::Eof,
                start: 0,
                end: 0,
            }),
        }
    }

    pub fn tok(&self) -> Token {
        self.tok_at(self.idx)
    }

    pub fn kind(&self) -> Tok {
        self.tok().kind
    }

    /// Kind of the token `n` ahead of the current one.
    pub fn peek_kind(&self, n: usize) -> Tok {
        self.tok_at(self.idx + n).kind
    }

    pub fn peek_text(&self, n: usize) -> &'s str {
        self.text_of(self.tok_at(self.idx + n))
    }

    pub fn text_of(&self, t: Token) -> &'s str {
        self.src.get(t.start as usize..t.end as usize).unwrap_or("")
    }

    /// Text of the current token.
    pub fn text(&self) -> &'s str {
        self.text_of(self.tok())
    }

    /// Position of the current token.
    pub fn pos(&self) -> SrcPos {
        self.lexed.pos_at(self.tok().start as usize)
    }

    pub fn pos_of_tok(&self, idx: usize) -> SrcPos {
        self.lexed.pos_at(self.tok_at(idx).start as usize)
    }

    /// Position of a byte offset in the source.
    pub fn pos_of_offset(&self, offset: usize) -> SrcPos {
        self.lexed.pos_at(offset)
    }

    /// Advance past the current token (never past the final `Eof`/`Error`).
    pub fn bump(&mut self) {
        if self.idx + 1 < self.lexed.tokens.len() {
            self.idx += 1;
        }
    }

    pub fn at(&self, kind: Tok) -> bool {
        self.kind() == kind
    }

    /// True if the current token is the identifier `word`.
    pub fn at_ident(&self, word: &str) -> bool {
        self.kind() == Tok::Ident && self.text() == word
    }

    /// Consume the current token if it is `kind`.
    pub fn eat(&mut self, kind: Tok) -> bool {
        if self.at(kind) {
            self.bump();
            true
        } else {
            false
        }
    }

    /// Consume the identifier `word` if it is next.
    pub fn eat_ident(&mut self, word: &str) -> bool {
        if self.at_ident(word) {
            self.bump();
            true
        } else {
            false
        }
    }

    /// How the current token is shown in messages: its text, or what it is.
    pub fn found(&self) -> String {
        let t = self.tok();
        match t.kind {
            Tok::Eof => "end of input".into(),
            Tok::Error => "invalid token".into(),
            _ => {
                let text = self.text_of(t);
                if text.chars().count() > 40 {
                    let short: String = text.chars().take(37).collect();
                    format!("'{short}...'")
                } else {
                    format!("'{text}'")
                }
            }
        }
    }

    /// A diagnostic at the current token. If the current token is a lexer
    /// error, that error is reported instead (it is the real problem).
    pub fn err(&self, kind: DiagKind, message: impl Into<String>) -> Diagnostic {
        if self.kind() == Tok::Error {
            return self.lex_error();
        }
        Diagnostic::new(kind, self.pos(), message)
    }

    fn lex_error(&self) -> Diagnostic {
        let msg = self
            .lexed
            .error
            .clone()
            .unwrap_or_else(|| "invalid token".into());
        Diagnostic::new(DiagKind::Syntax, self.pos(), msg)
    }

    /// `expected WHAT, found ...` at the current token.
    pub fn expected(&self, what: &str) -> Diagnostic {
        self.err(
            DiagKind::Syntax,
            format!("expected {what}, found {}", self.found()),
        )
    }

    /// `expected WHAT in CONTEXT, found ...` at the current token.
    pub fn expected_in(&self, what: &str, context: &str) -> Diagnostic {
        self.err(
            DiagKind::Syntax,
            format!("expected {what} in {context}, found {}", self.found()),
        )
    }

    /// Consume a token of `kind` or fail naming `context`.
    pub fn expect(&mut self, kind: Tok, context: &str) -> PResult<Token> {
        let t = self.tok();
        if t.kind == kind {
            self.bump();
            Ok(t)
        } else {
            Err(self.expected_in(kind.describe(), context))
        }
    }

    /// Consume the identifier `word` or fail naming `context`.
    pub fn expect_ident(&mut self, word: &str, context: &str) -> PResult<()> {
        if self.eat_ident(word) {
            Ok(())
        } else {
            Err(self.expected_in(&format!("'{word}'"), context))
        }
    }

    /// Skip one balanced token group: a single token, or an opening bracket
    /// through its matching closer. `->` is its own token, so its `>` never
    /// closes anything. Returns an error on a mismatched closer or on
    /// reaching the end of input while a bracket is open.
    pub fn skip_balanced_group(&mut self, context: &str) -> PResult<()> {
        let mut stack: Vec<(Tok, usize)> = Vec::new();
        loop {
            let t = self.tok();
            match t.kind {
                Tok::LParen | Tok::LBracket | Tok::LBrace | Tok::Less => {
                    stack.push((closer_of(t.kind), self.idx))
                }
                Tok::RParen | Tok::RBracket | Tok::RBrace | Tok::Greater => match stack.pop() {
                    Some((want, _)) if want == t.kind => {}
                    Some((want, open)) => {
                        return Err(self.err(
                            DiagKind::Syntax,
                            format!(
                                "expected {} to close {} opened at {} in {context}, found {}",
                                want.describe(),
                                opener_of(want),
                                self.pos_of_tok(open),
                                self.found()
                            ),
                        ))
                    }
                    None => {
                        return Err(self.expected_in("attribute value", context));
                    }
                },
                Tok::Eof | Tok::Error => {
                    return Err(match stack.last() {
                        Some((want, open)) if t.kind == Tok::Eof => self.err(
                            DiagKind::Syntax,
                            format!(
                                "expected {} to close {} opened at {} in {context}, found end of input",
                                want.describe(),
                                opener_of(*want),
                                self.pos_of_tok(*open)
                            ),
                        ),
                        _ => self.expected_in("attribute value", context),
                    });
                }
                _ => {}
            }
            self.bump();
            if stack.is_empty() {
                return Ok(());
            }
        }
    }

    /// Capture the tokens of an attribute value up to (not including) a
    /// `,` or a closer at the outer level, e.g. `8 : i32` or
    /// `dense<[0, 1]> : tensor<2xindex>` in a dictionary.
    pub fn capture_value(&mut self, context: &str) -> PResult<TokRange> {
        let start = self.idx;
        loop {
            match self.kind() {
                Tok::Comma
                | Tok::RBrace
                | Tok::RParen
                | Tok::RBracket
                | Tok::Greater
                | Tok::Eof => break,
                _ => self.skip_balanced_group(context)?,
            }
        }
        if self.idx == start {
            return Err(self.expected_in("attribute value", context));
        }
        Ok(TokRange {
            start,
            end: self.idx,
        })
    }

    /// The exact source text of a token range.
    pub fn range_text(&self, r: TokRange) -> &'s str {
        if r.end <= r.start {
            return "";
        }
        let a = self.tok_at(r.start).start as usize;
        let b = self.tok_at(r.end - 1).end as usize;
        self.src.get(a..b).unwrap_or("")
    }

    /// Skip a trailing source location `loc(...)` if one is next.
    pub fn skip_loc(&mut self) -> PResult<()> {
        if self.at_ident("loc") && self.peek_kind(1) == Tok::LParen {
            self.bump();
            self.skip_balanced_group("location")?;
        }
        Ok(())
    }

    /// Run `f` on the tokens of `r` (a captured attribute value) and check
    /// that it consumed exactly those tokens. The cursor is restored after.
    pub fn within<T>(
        &mut self,
        r: TokRange,
        what: &str,
        f: impl FnOnce(&mut Self) -> PResult<T>,
    ) -> PResult<T> {
        let saved = self.idx;
        self.idx = r.start;
        let result = f(self).and_then(|v| {
            if self.idx == r.end {
                Ok(v)
            } else {
                Err(self.err(
                    DiagKind::Syntax,
                    format!("unexpected {} after {what}", self.found()),
                ))
            }
        });
        self.idx = saved;
        result
    }
}

fn closer_of(open: Tok) -> Tok {
    match open {
        Tok::LParen => Tok::RParen,
        Tok::LBracket => Tok::RBracket,
        Tok::LBrace => Tok::RBrace,
        _ => Tok::Greater,
    }
}

fn opener_of(close: Tok) -> &'static str {
    match close {
        Tok::RParen => "'('",
        Tok::RBracket => "'['",
        Tok::RBrace => "'{'",
        _ => "'<'",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_stops_at_outer_comma_and_keeps_arrows() {
        let src = "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=16, j=128}>, x = 8 : i32}";
        let mut c = Cursor::new(src);
        let r = c.capture_value("test").expect("captures");
        assert_eq!(
            c.range_text(r),
            "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=16, j=128}>"
        );
        assert!(c.at(Tok::Comma));
        c.bump();
        c.bump();
        c.bump();
        let r = c.capture_value("test").expect("captures");
        assert_eq!(c.range_text(r), "8 : i32");
    }

    #[test]
    fn capture_reports_unbalanced() {
        let mut c = Cursor::new("<[1, 2>");
        let e = c.capture_value("test").expect_err("mismatch");
        assert!(e.message.contains("expected ']'"), "{}", e.message);
        assert_eq!((e.pos.line, e.pos.col), (1, 7));
        let mut c = Cursor::new("dense<[1, 2]");
        let e = c.capture_value("test").expect_err("eof");
        assert!(e.message.contains("end of input"), "{}", e.message);
    }
}
