//! Shardy's notation for op sharding rules, printed and parsed exactly as
//! JAX dumps it:
//!
//! ```text
//! #sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=16, j=256, k=128} reduction={k}>
//! ```
//!
//! Factors are named by index: `i` .. `z` for 0..=17, then `z_1`, `z_2`,
//! ... A compound dimension concatenates its factors (`[ij, k]`), a scalar
//! is `[]`. After the sizes (omitted when there are no factors) come the
//! non-empty lists `reduction`, `need_replication`, `permutation` and
//! `blocked_propagation`, then `, custom` for a user-written rule.

use std::fmt;

use crate::diag::{DiagKind, Diagnostic, SrcPos};
use crate::rules::rule::{DimMapping, FactorKind, OpShardingRule, TensorMapping};

/// The attribute's mnemonic, as the text format keeps it.
pub const RULE_PREFIX: &str = "#sdy.op_sharding_rule";

/// Factors `0..=17` are named by one letter `i..=z`.
const LETTERS: &[u8] = b"ijklmnopqrstuvwxyz";

/// The name of factor `index`: `i`, `j`, ..., `z`, `z_1`, `z_2`, ...
pub fn factor_symbol(index: usize) -> String {
    match LETTERS.get(index) {
        Some(&c) => char::from(c).to_string(),
        None => format!("z_{}", index - (LETTERS.len() - 1)),
    }
}

impl fmt::Display for OpShardingRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{RULE_PREFIX}<(")?;
        write_tensors(f, &self.operands)?;
        f.write_str(")->(")?;
        write_tensors(f, &self.results)?;
        f.write_str(")")?;
        if !self.factor_sizes.is_empty() {
            f.write_str(" {")?;
            for (i, size) in self.factor_sizes.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{}={size}", factor_symbol(i))?;
            }
            f.write_str("}")?;
        }
        for kind in FactorKind::ALL {
            if let Some(keyword) = kind.keyword() {
                write_factor_list(f, keyword, &self.factors_of_kind(kind))?;
            }
        }
        write_factor_list(f, "blocked_propagation", &self.blocked_factors())?;
        if self.is_custom {
            f.write_str(", custom")?;
        }
        f.write_str(">")
    }
}

fn write_tensors(f: &mut fmt::Formatter<'_>, tensors: &[TensorMapping]) -> fmt::Result {
    for (t, mapping) in tensors.iter().enumerate() {
        if t > 0 {
            f.write_str(", ")?;
        }
        f.write_str("[")?;
        for (d, dim) in mapping.dims.iter().enumerate() {
            if d > 0 {
                f.write_str(", ")?;
            }
            for &factor in &dim.factors {
                f.write_str(&factor_symbol(factor))?;
            }
        }
        f.write_str("]")?;
    }
    Ok(())
}

fn write_factor_list(f: &mut fmt::Formatter<'_>, keyword: &str, factors: &[usize]) -> fmt::Result {
    if factors.is_empty() {
        return Ok(());
    }
    write!(f, " {keyword}={{")?;
    for (i, &factor) in factors.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        f.write_str(&factor_symbol(factor))?;
    }
    f.write_str("}")
}

/// A malformed rule: what is wrong and at which byte of the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("sharding rule, column {}: {message}", .offset + 1)]
pub struct NotationError {
    pub offset: usize,
    pub message: String,
}

impl NotationError {
    /// A diagnostic at `pos`, the position the rule text starts at (the
    /// error's column is added when `pos` is on the same line).
    pub fn into_diagnostic(self, pos: SrcPos) -> Diagnostic {
        let pos = if pos.is_known() {
            SrcPos::new(pos.line, pos.col + self.offset as u32)
        } else {
            pos
        };
        Diagnostic::new(DiagKind::Syntax, pos, self.to_string())
    }
}

/// Parse a rule, with or without the `#sdy.op_sharding_rule` prefix:
/// `#sdy.op_sharding_rule<([i])->([i]) {i=8}>`, `<...>` or the bare
/// `([i])->([i]) {i=8}`.
pub fn parse_rule(text: &str) -> Result<OpShardingRule, NotationError> {
    let mut p = Parser {
        text: text.as_bytes(),
        pos: 0,
    };
    p.skip_ws();
    let wrapped = if p.eat_str(RULE_PREFIX) {
        p.skip_ws();
        p.expect(b'<')?;
        true
    } else {
        p.eat(b'<')
    };
    let rule = p.rule()?;
    if wrapped {
        p.expect(b'>')?;
    }
    p.skip_ws();
    if p.pos != p.text.len() {
        return Err(p.err("unexpected text after the rule"));
    }
    rule.check()
        .map_err(|message| NotationError { offset: 0, message })?;
    Ok(rule)
}

struct Parser<'t> {
    text: &'t [u8],
    pos: usize,
}

impl Parser<'_> {
    fn err(&self, message: impl Into<String>) -> NotationError {
        NotationError {
            offset: self.pos,
            message: message.into(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_str(&mut self, s: &str) -> bool {
        self.skip_ws();
        if self.text[self.pos..].starts_with(s.as_bytes()) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), NotationError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.err(format!("expected '{}'", char::from(c))))
        }
    }

    fn rule(&mut self) -> Result<OpShardingRule, NotationError> {
        let operands = self.tensor_list()?;
        if !self.eat_str("->") {
            return Err(self.err("expected '->'"));
        }
        let results = self.tensor_list()?;
        let mut rule = OpShardingRule {
            operands,
            results,
            ..OpShardingRule::default()
        };
        self.skip_ws();
        if self.peek() == Some(b'{') {
            rule.factor_sizes = self.factor_sizes()?;
        }
        let n = rule.factor_sizes.len();
        rule.factor_kinds = vec![FactorKind::PassThrough; n];
        rule.blocked_propagation = vec![false; n];
        self.special_factor_lists(&mut rule)?;
        if self.eat(b',') {
            if !self.eat_str("custom") {
                return Err(self.err("expected 'custom'"));
            }
            rule.is_custom = true;
        }
        Ok(rule)
    }

    /// `([i, j], [])`: a parenthesized, comma-separated list of tensors.
    fn tensor_list(&mut self) -> Result<Vec<TensorMapping>, NotationError> {
        self.expect(b'(')?;
        let mut tensors = Vec::new();
        if self.eat(b')') {
            return Ok(tensors);
        }
        loop {
            tensors.push(self.tensor()?);
            if self.eat(b')') {
                return Ok(tensors);
            }
            self.expect(b',')?;
        }
    }

    /// `[ij, k]` or `[]`.
    fn tensor(&mut self) -> Result<TensorMapping, NotationError> {
        self.expect(b'[')?;
        let mut dims = Vec::new();
        if self.eat(b']') {
            return Ok(TensorMapping::new(dims));
        }
        loop {
            dims.push(DimMapping::new(self.dim()?));
            if self.eat(b']') {
                return Ok(TensorMapping::new(dims));
            }
            self.expect(b',')?;
        }
    }

    /// One or more factor symbols written together (`ij`, `zz_1`).
    fn dim(&mut self) -> Result<Vec<usize>, NotationError> {
        self.skip_ws();
        let mut factors = vec![self.symbol()?];
        while self.peek().is_some_and(|c| c.is_ascii_lowercase()) {
            factors.push(self.symbol()?);
        }
        Ok(factors)
    }

    /// A factor symbol: `i`..`z`, or `z_N` for N >= 1.
    fn symbol(&mut self) -> Result<usize, NotationError> {
        let start = self.pos;
        let index = match self.peek() {
            Some(c) if LETTERS.contains(&c) => LETTERS.iter().position(|&l| l == c),
            _ => None,
        };
        let Some(index) = index else {
            return Err(self.err("expected a factor name (i..z or z_N)"));
        };
        self.pos += 1;
        let is_z = index == LETTERS.len() - 1;
        let next_is_digit = self.text.get(self.pos + 1).is_some_and(u8::is_ascii_digit);
        if !(is_z && self.peek() == Some(b'_') && next_is_digit) {
            return Ok(index);
        }
        self.pos += 1;
        let n = self.number()?;
        match usize::try_from(n).ok().filter(|&n| n >= 1) {
            Some(n) => Ok(index + n),
            None => {
                self.pos = start;
                Err(self.err("z_N needs N >= 1"))
            }
        }
    }

    fn number(&mut self) -> Result<i64, NotationError> {
        self.skip_ws();
        let start = self.pos;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.pos += 1;
        }
        let digits_start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let digits = std::str::from_utf8(&self.text[digits_start..self.pos]).unwrap_or("");
        let value: Option<i64> = digits.parse().ok();
        match value {
            Some(v) if negative => Ok(-v),
            Some(v) => Ok(v),
            None => {
                self.pos = start;
                Err(self.err("expected a number"))
            }
        }
    }

    /// `{i=2, j=4}`: every factor once, named by its index.
    fn factor_sizes(&mut self) -> Result<Vec<i64>, NotationError> {
        self.skip_ws();
        let start = self.pos;
        self.expect(b'{')?;
        let mut sizes: Vec<Option<i64>> = Vec::new();
        loop {
            self.skip_ws();
            let at = self.pos;
            let factor = self.symbol()?;
            self.expect(b'=')?;
            let size = self.number()?;
            if sizes.len() <= factor {
                sizes.resize(factor + 1, None);
            }
            if sizes[factor].replace(size).is_some() {
                self.pos = at;
                return Err(self.err(format!("factor {} has two sizes", factor_symbol(factor))));
            }
            if self.eat(b'}') {
                break;
            }
            self.expect(b',')?;
        }
        match sizes.iter().position(Option::is_none) {
            Some(missing) => {
                self.pos = start;
                Err(self.err(format!("factor {} has no size", factor_symbol(missing))))
            }
            None => Ok(sizes.into_iter().flatten().collect()),
        }
    }

    /// `reduction={k} need_replication={i} ...`, in any order.
    fn special_factor_lists(&mut self, rule: &mut OpShardingRule) -> Result<(), NotationError> {
        loop {
            self.skip_ws();
            let at = self.pos;
            let kind = FactorKind::ALL
                .into_iter()
                .find(|k| k.keyword().is_some_and(|kw| self.keyword_follows(kw)));
            let blocked = kind.is_none() && self.keyword_follows("blocked_propagation");
            if kind.is_none() && !blocked {
                return Ok(());
            }
            while self
                .peek()
                .is_some_and(|c| c.is_ascii_lowercase() || c == b'_')
            {
                self.pos += 1;
            }
            self.expect(b'=')?;
            for factor in self.symbol_set()? {
                if factor >= rule.num_factors() {
                    self.pos = at;
                    return Err(self.err(format!("unknown factor {}", factor_symbol(factor))));
                }
                if let Some(kind) = kind {
                    if rule.factor_kinds[factor] != FactorKind::PassThrough {
                        self.pos = at;
                        return Err(self.err(format!(
                            "factor {} is in more than one of reduction, need_replication and permutation",
                            factor_symbol(factor)
                        )));
                    }
                    rule.factor_kinds[factor] = kind;
                } else {
                    rule.blocked_propagation[factor] = true;
                }
            }
        }
    }

    /// Whether `keyword=` starts at the current position.
    fn keyword_follows(&self, keyword: &str) -> bool {
        let rest = &self.text[self.pos..];
        rest.starts_with(keyword.as_bytes())
            && rest[keyword.len()..]
                .iter()
                .find(|c| !c.is_ascii_whitespace())
                == Some(&b'=')
    }

    /// `{i, k}`.
    fn symbol_set(&mut self) -> Result<Vec<usize>, NotationError> {
        self.expect(b'{')?;
        let mut factors = Vec::new();
        if self.eat(b'}') {
            return Ok(factors);
        }
        loop {
            self.skip_ws();
            factors.push(self.symbol()?);
            if self.eat(b'}') {
                return Ok(factors);
            }
            self.expect(b',')?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_past_z() {
        assert_eq!(factor_symbol(0), "i");
        assert_eq!(factor_symbol(17), "z");
        assert_eq!(factor_symbol(18), "z_1");
        assert_eq!(factor_symbol(27), "z_10");
    }

    #[test]
    fn error_points_at_the_problem() {
        let err = parse_rule("([i])->([q]) {i=2}").expect_err("q is not a factor");
        assert!(err.message.contains("factor"), "{err}");
        let err = parse_rule("([a])->([i]) {i=2}").expect_err("a is not a name");
        assert_eq!(err.offset, 2);
    }
}
