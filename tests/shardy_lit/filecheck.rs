//! A FileCheck for lit tests' CHECK lines, as LLVM's FileCheck reads them
//! (without `--enable-var-scope`, `--match-full-lines`, numeric variables):
//!
//! * directives `P:`, `P-NEXT:`, `P-SAME:`, `P-NOT:`, `P-DAG:`,
//!   `P-LABEL:`, `P-EMPTY:` for each prefix `P` (default `CHECK`), found
//!   anywhere in a line where `P` is not part of a longer word;
//! * the pattern is the rest of the line, leading and trailing blanks
//!   dropped; `{{re}}` is a regular expression, `[[X:re]]` defines the
//!   variable `X` as what `re` matched, `[[X]]` is its value (taken
//!   literally; from a definition earlier in the same pattern, a
//!   back-reference); everything else is literal;
//! * runs of blanks (spaces, tabs) in the input and in patterns count as
//!   one space unless `strict_whitespace`, the only normalization FileCheck
//!   makes;
//! * `CHECK-LABEL`s are found first, in order; they cut the input into
//!   blocks, and the directives between two labels must match within the
//!   block between them. FileCheck goes on with the next block after a
//!   failure, so each block has its own outcome: `check` returns one per
//!   block. (Where FileCheck gives up, a label not found, this goes on
//!   from the same place with the next label, so that later blocks still
//!   get an outcome.)

use super::regex::{find_bytes, Regex};
use std::collections::HashMap;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Check,
    Next,
    Same,
    Not,
    Dag,
    Label,
    Empty,
}

impl Kind {
    fn suffix(self) -> &'static str {
        match self {
            Kind::Check => "",
            Kind::Next => "-NEXT",
            Kind::Same => "-SAME",
            Kind::Not => "-NOT",
            Kind::Dag => "-DAG",
            Kind::Label => "-LABEL",
            Kind::Empty => "-EMPTY",
        }
    }
}

/// One directive of the check file.
#[derive(Clone, Debug)]
pub struct Directive {
    pub kind: Kind,
    pub prefix: String,
    /// 1-based line in the check file.
    pub line: usize,
    /// The pattern as written (blanks trimmed).
    pub pattern: String,
}

impl fmt::Display for Directive {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "line {}: {}{}: {}",
            self.line,
            self.prefix,
            self.kind.suffix(),
            self.pattern
        )
    }
}

#[derive(Clone, Debug)]
pub struct Options {
    pub prefixes: Vec<String>,
    pub strict_whitespace: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            prefixes: vec!["CHECK".to_string()],
            strict_whitespace: false,
        }
    }
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

/// The directives of a check file, in order. `first_line` is the line
/// number of the text's first line (a piece of a split file).
pub fn parse_checks(text: &str, opts: &Options, first_line: usize) -> Vec<Directive> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if let Some(d) = parse_line(line, opts, first_line + n) {
            out.push(d);
        }
    }
    out
}

/// FileCheck's default comment prefixes: a line whose first directive is
/// `COM:` or `RUN:` checks nothing.
const COMMENT_PREFIXES: [&str; 2] = ["COM", "RUN"];

fn parse_line(line: &str, opts: &Options, number: usize) -> Option<Directive> {
    let bytes = line.as_bytes();
    let comment = COMMENT_PREFIXES
        .iter()
        .filter_map(|c| {
            line.match_indices(c).map(|(at, _)| at).find(|&at| {
                (at == 0 || !is_word(bytes[at - 1])) && line[at + c.len()..].starts_with(':')
            })
        })
        .min();
    // The earliest directive in the line wins.
    let mut best: Option<(usize, Directive)> = None;
    for prefix in &opts.prefixes {
        let mut from = 0;
        while let Some(off) = line[from..].find(prefix.as_str()) {
            let at = from + off;
            from = at + 1;
            if at > 0 && is_word(bytes[at - 1]) {
                continue;
            }
            let rest = &line[at + prefix.len()..];
            let kinds = [
                ("", Kind::Check),
                ("-NEXT", Kind::Next),
                ("-SAME", Kind::Same),
                ("-NOT", Kind::Not),
                ("-DAG", Kind::Dag),
                ("-LABEL", Kind::Label),
                ("-EMPTY", Kind::Empty),
            ];
            let Some((suffix, kind)) = kinds
                .iter()
                .find(|(s, _)| rest.starts_with(s) && rest[s.len()..].starts_with(':'))
            else {
                continue;
            };
            let pattern = rest[suffix.len() + 1..].trim_matches([' ', '\t']);
            if best.as_ref().is_none_or(|(b, _)| at < *b) {
                best = Some((
                    at,
                    Directive {
                        kind: *kind,
                        prefix: prefix.clone(),
                        line: number,
                        pattern: pattern.to_string(),
                    },
                ));
            }
            break;
        }
    }
    match (best, comment) {
        (Some((at, _)), Some(c)) if c < at => None,
        (best, _) => best.map(|(_, d)| d),
    }
}

/// Runs of blanks as one space.
pub fn canonicalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = false;
    for c in text.chars() {
        if c == ' ' || c == '\t' {
            if !blank {
                out.push(' ');
            }
            blank = true;
        } else {
            out.push(c);
            blank = false;
        }
    }
    out
}

/// A pattern's pieces.
#[derive(Clone, Debug, PartialEq)]
enum Piece {
    Lit(String),
    Re(String),
    Def(String, String),
    Use(String),
}

fn valid_name(name: &str) -> bool {
    let name = name.strip_prefix('$').unwrap_or(name);
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Where the `]]` closing a `[[` at `s[0..]` (past the `[[`) is: brackets
/// of a regex inside nest, `\` escapes.
fn var_end(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'[' => depth += 1,
            b']' if depth > 0 => depth -= 1,
            b']' if b.get(i + 1) == Some(&b']') => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

fn pieces(pattern: &str) -> Result<Vec<Piece>, String> {
    let mut out = Vec::new();
    let mut lit = String::new();
    let mut rest = pattern;
    while !rest.is_empty() {
        if let Some(inner) = rest.strip_prefix("{{") {
            let end = inner
                .find("}}")
                .ok_or_else(|| "`{{` without `}}`".to_string())?;
            if !lit.is_empty() {
                out.push(Piece::Lit(std::mem::take(&mut lit)));
            }
            out.push(Piece::Re(inner[..end].to_string()));
            rest = &inner[end + 2..];
        } else if rest.starts_with("[[[") {
            // Extra `[`s before a `[[` are literal (FileCheck does so).
            lit.push('[');
            rest = &rest[1..];
        } else if let Some(inner) = rest.strip_prefix("[[") {
            let end = var_end(inner).ok_or_else(|| "`[[` without `]]`".to_string())?;
            let body = &inner[..end];
            if !lit.is_empty() {
                out.push(Piece::Lit(std::mem::take(&mut lit)));
            }
            if body.starts_with('#') {
                return Err(format!("numeric variable `[[{body}]]` not supported"));
            }
            match body.split_once(':') {
                Some((name, re)) if valid_name(name) => {
                    out.push(Piece::Def(name.to_string(), re.to_string()))
                }
                None if valid_name(body) => out.push(Piece::Use(body.to_string())),
                _ => return Err(format!("invalid variable `[[{body}]]`")),
            }
            rest = &inner[end + 2..];
        } else {
            let c = rest.chars().next().unwrap();
            lit.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    if !lit.is_empty() {
        out.push(Piece::Lit(lit));
    }
    Ok(out)
}

fn escape(lit: &str) -> String {
    let mut out = String::new();
    for c in lit.chars() {
        if "\\^$.|?*+()[]{}".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A pattern ready to search: a fixed string, or a regex with the
/// variables it defines (name, group).
enum Compiled {
    Fixed(String),
    Re(Regex, Vec<(String, usize)>),
}

fn compile(pattern: &str, vars: &HashMap<String, String>) -> Result<Compiled, String> {
    let ps = pieces(pattern)?;
    if ps.iter().all(|p| matches!(p, Piece::Lit(_))) {
        return Ok(Compiled::Fixed(pattern.to_string()));
    }
    let mut re = String::new();
    let mut group = 0;
    let mut defs: Vec<(String, usize)> = Vec::new();
    for p in &ps {
        match p {
            Piece::Lit(l) => re.push_str(&escape(l)),
            Piece::Re(r) => {
                // Count the groups the user's regex opens.
                let inner = Regex::new(r)?;
                re.push('(');
                re.push_str(r);
                re.push(')');
                group += 1 + inner.groups;
            }
            Piece::Def(name, r) => {
                let inner = Regex::new(r)?;
                group += 1;
                defs.push((name.clone(), group));
                re.push('(');
                re.push_str(r);
                re.push(')');
                group += inner.groups;
            }
            Piece::Use(name) => {
                if let Some((_, g)) = defs.iter().rev().find(|(n, _)| n == name) {
                    if *g > 9 {
                        return Err(format!("too many groups before `[[{name}]]`"));
                    }
                    re.push_str(&format!("\\{g}"));
                } else if let Some(v) = vars.get(name) {
                    re.push_str(&escape(v));
                } else {
                    return Err(format!("undefined variable `{name}`"));
                }
            }
        }
    }
    Ok(Compiled::Re(Regex::new(&re)?, defs))
}

/// Where a pattern matched in the input.
#[derive(Clone, Copy, Debug)]
struct Found {
    start: usize,
    end: usize,
}

/// Why a block failed.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The directive that failed.
    pub directive: Directive,
    /// What happened, and what the input had near where it looked.
    pub message: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}\n  {}", self.directive, self.message)
    }
}

/// The outcome of one block: the directives from a `CHECK-LABEL` (or the
/// file's start) to the next one.
#[derive(Clone, Debug)]
pub struct BlockResult {
    /// The block's label directive, if it starts with one.
    pub label: Option<Directive>,
    /// The directives of the block (its label included).
    pub directives: Vec<Directive>,
    pub failure: Option<Failure>,
}

/// Matches directives against one input.
pub struct Checker<'a> {
    input: String,
    opts: &'a Options,
    vars: HashMap<String, String>,
}

impl<'a> Checker<'a> {
    pub fn new(input: &str, opts: &'a Options) -> Self {
        let input = if opts.strict_whitespace {
            input.to_string()
        } else {
            canonicalize(input)
        };
        Checker {
            input,
            opts,
            vars: HashMap::new(),
        }
    }

    fn pattern_text(&self, d: &Directive) -> String {
        if self.opts.strict_whitespace {
            d.pattern.clone()
        } else {
            canonicalize(&d.pattern)
        }
    }

    /// The first match of `d`'s pattern in `[from, to)`; defines its
    /// variables when `define`.
    fn find(
        &mut self,
        d: &Directive,
        from: usize,
        to: usize,
        define: bool,
    ) -> Result<Option<Found>, String> {
        if d.pattern.is_empty() {
            return Err(format!(
                "found empty check string with prefix '{}:'",
                d.prefix
            ));
        }
        let text = &self.input.as_bytes()[..to];
        match compile(&self.pattern_text(d), &self.vars)? {
            Compiled::Fixed(s) => Ok(find_bytes(&text[from..], s.as_bytes()).map(|off| Found {
                start: from + off,
                end: from + off + s.len(),
            })),
            Compiled::Re(re, defs) => {
                let Some(m) = re.find_at(text, from) else {
                    return Ok(None);
                };
                if define {
                    for (name, g) in defs {
                        if let Some((a, b)) = m.groups[g - 1] {
                            self.vars.insert(name, self.input[a..b].to_string());
                        }
                    }
                }
                Ok(Some(Found {
                    start: m.start,
                    end: m.end,
                }))
            }
        }
    }

    fn line_of(&self, pos: usize) -> (usize, &str) {
        let start = self.input[..pos].rfind('\n').map_or(0, |p| p + 1);
        let end = self.input[pos..]
            .find('\n')
            .map_or(self.input.len(), |p| pos + p);
        let number = self.input[..start].matches('\n').count() + 1;
        (number, &self.input[start..end])
    }

    fn newlines(&self, a: usize, b: usize) -> usize {
        self.input[a..b].matches('\n').count()
    }

    /// The line in `[from, to)` most like the pattern: the most of its
    /// blank-separated literal words, the first such line.
    fn closest(&self, d: &Directive, from: usize, to: usize) -> Option<String> {
        let words: Vec<String> = pieces(&self.pattern_text(d))
            .unwrap_or_default()
            .iter()
            .filter_map(|p| match p {
                Piece::Lit(l) => Some(l.clone()),
                Piece::Use(n) => self.vars.get(n).cloned(),
                _ => None,
            })
            .flat_map(|l| {
                l.split(' ')
                    .filter(|w| !w.is_empty())
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect();
        let mut best: Option<(usize, usize)> = None; // (score, line start)
        let mut pos = from;
        for line in self.input[from..to].split_inclusive('\n').take(400) {
            let score = words.iter().filter(|w| line.contains(w.as_str())).count();
            if score > 0 && best.is_none_or(|(s, _)| score > s) {
                best = Some((score, pos));
            }
            pos += line.len();
        }
        best.map(|(score, at)| {
            let (n, text) = self.line_of(at);
            format!(
                "{score} of its {} words on output line {n}: `{}`",
                words.len(),
                text.trim()
            )
        })
    }

    fn near(&self, pos: usize) -> String {
        if pos >= self.input.len() {
            return "the end of the output".to_string();
        }
        let (n, text) = self.line_of(pos);
        format!("output line {n}: `{}`", text.trim())
    }

    /// A failure of `d`, with the values of the variables it uses (as
    /// FileCheck's "with X equal to ..." notes).
    fn fail(&self, d: &Directive, mut message: String) -> Failure {
        for p in pieces(&d.pattern).unwrap_or_default() {
            if let Piece::Use(name) = p {
                if let Some(v) = self.vars.get(&name) {
                    message.push_str(&format!("; with [[{name}]] equal to `{v}`"));
                }
            }
        }
        Failure {
            directive: d.clone(),
            message,
        }
    }

    /// Check the NOTs in `[from, to)`.
    fn check_nots(&mut self, nots: &[Directive], from: usize, to: usize) -> Result<(), Failure> {
        for n in nots {
            match self.find(n, from, to, false) {
                Err(e) => return Err(self.fail(n, e)),
                Ok(Some(f)) => {
                    let msg = format!("excluded pattern found at {}", self.near(f.start));
                    return Err(self.fail(n, msg));
                }
                Ok(None) => {}
            }
        }
        Ok(())
    }

    fn no_match(&self, d: &Directive, from: usize, to: usize) -> Failure {
        let mut msg = format!("no match after {}", self.near(from));
        if let Some(c) = self.closest(d, from, to) {
            msg.push_str(&format!("; closest: {c}"));
        }
        self.fail(d, msg)
    }

    /// One block's directives within `[from, to)`; the previous match
    /// ended at `from`.
    fn check_block(&mut self, ds: &[Directive], from: usize, to: usize) -> Result<(), Failure> {
        let mut pos = from;
        let mut nots: Vec<Directive> = Vec::new();
        let mut i = 0;
        while i < ds.len() {
            let d = &ds[i];
            match d.kind {
                Kind::Not => {
                    nots.push(d.clone());
                    i += 1;
                }
                Kind::Dag => {
                    // A group of DAGs: each matched from `pos`, not
                    // overlapping one another; the NOTs before them must
                    // not occur before the first of them.
                    let mut found: Vec<Found> = Vec::new();
                    while i < ds.len() && ds[i].kind == Kind::Dag {
                        let d = ds[i].clone();
                        let mut at = pos;
                        loop {
                            let f = match self.find(&d, at, to, true) {
                                Err(e) => return Err(self.fail(&d, e)),
                                Ok(None) => return Err(self.no_match(&d, pos, to)),
                                Ok(Some(f)) => f,
                            };
                            match found.iter().find(|g| f.start < g.end && g.start < f.end) {
                                Some(g) => at = g.end.max(f.start + 1),
                                None => {
                                    found.push(f);
                                    break;
                                }
                            }
                        }
                        i += 1;
                    }
                    let first = found.iter().map(|f| f.start).min().unwrap_or(pos);
                    self.check_nots(&std::mem::take(&mut nots), pos, first)?;
                    pos = found.iter().map(|f| f.end).max().unwrap_or(pos);
                }
                Kind::Empty => {
                    // The next line is empty.
                    let next = self.input[pos..to].find('\n').map(|p| pos + p + 1);
                    let ok = next
                        .is_some_and(|n| n == to || self.input.as_bytes().get(n) == Some(&b'\n'));
                    if !ok {
                        let msg = format!("the line after {} is not empty", self.near(pos));
                        return Err(self.fail(d, msg));
                    }
                    let n = next.unwrap();
                    self.check_nots(&std::mem::take(&mut nots), pos, n)?;
                    pos = n;
                    i += 1;
                }
                Kind::Check | Kind::Next | Kind::Same | Kind::Label => {
                    let f = match self.find(d, pos, to, true) {
                        Err(e) => return Err(self.fail(d, e)),
                        Ok(None) => {
                            let mut f = self.no_match(d, pos, to);
                            if d.kind == Kind::Next {
                                let next = self.input[pos..]
                                    .find('\n')
                                    .map_or(self.input.len(), |p| pos + p + 1);
                                f.message = format!(
                                    "no match; expected on the line after the previous match, {}{}",
                                    self.near(next),
                                    f.message
                                        .split_once("; closest:")
                                        .map(|(_, c)| format!("; closest:{c}"))
                                        .unwrap_or_default()
                                );
                            }
                            return Err(f);
                        }
                        Ok(Some(f)) => f,
                    };
                    // As FileCheck: the line of the match first, then the
                    // NOTs in the text skipped to reach it.
                    let lines = self.newlines(pos, f.start);
                    match d.kind {
                        Kind::Next if lines == 0 => {
                            let msg = format!(
                                "found on the same line as the previous match, {}",
                                self.near(f.start)
                            );
                            return Err(self.fail(d, msg));
                        }
                        Kind::Next if lines > 1 => {
                            let next = pos + self.input[pos..].find('\n').unwrap() + 1;
                            let msg = format!(
                                "not on the line after the previous match: found {lines} lines \
                                 on, {}; the next line is {}",
                                self.near(f.start),
                                self.near(next)
                            );
                            return Err(self.fail(d, msg));
                        }
                        Kind::Same if lines > 0 => {
                            let line_end = self.input[pos..]
                                .find('\n')
                                .map_or(self.input.len(), |p| pos + p);
                            let msg = format!(
                                "not on the same line as the previous match (which the line \
                                 continues with `{}`): found {lines} lines on, {}",
                                self.input[pos..line_end].trim(),
                                self.near(f.start)
                            );
                            return Err(self.fail(d, msg));
                        }
                        _ => {}
                    }
                    self.check_nots(&std::mem::take(&mut nots), pos, f.start)?;
                    pos = f.end;
                    i += 1;
                }
            }
        }
        self.check_nots(&nots, pos, to)
    }
}

/// Check `directives` against `input`: one result per block.
pub fn check(input: &str, directives: &[Directive], opts: &Options) -> Vec<BlockResult> {
    let mut c = Checker::new(input, opts);
    // Blocks: the directives before the first label, then from each label
    // to the next.
    let mut blocks: Vec<Vec<Directive>> = vec![Vec::new()];
    for d in directives {
        if d.kind == Kind::Label {
            blocks.push(Vec::new());
        }
        blocks.last_mut().unwrap().push(d.clone());
    }
    if blocks[0].is_empty() {
        blocks.remove(0);
    }
    // Find the labels in order: (start, end) of each block's label match.
    let mut label_at: Vec<Option<(usize, usize)>> = Vec::new();
    let mut label_err: Vec<Option<Failure>> = Vec::new();
    let mut search = 0;
    for b in &blocks {
        let d = &b[0];
        if d.kind != Kind::Label {
            label_at.push(None);
            label_err.push(None);
            continue;
        }
        match c.find(d, search, c.input.len(), true) {
            Ok(Some(f)) => {
                label_at.push(Some((f.start, f.end)));
                label_err.push(None);
                search = f.end;
            }
            Ok(None) => {
                label_at.push(None);
                let msg = format!("label not found after {}", c.near(search));
                label_err.push(Some(c.fail(d, msg)));
            }
            Err(e) => {
                label_at.push(None);
                label_err.push(Some(c.fail(d, e)));
            }
        }
    }
    let mut out = Vec::new();
    let mut from = 0;
    for (k, b) in blocks.iter().enumerate() {
        let is_label = b[0].kind == Kind::Label;
        let result = if let Some(e) = &label_err[k] {
            Err(e.clone())
        } else {
            // The block runs to the end of the next label found.
            let to = label_at[k + 1..]
                .iter()
                .flatten()
                .next()
                .map_or(c.input.len(), |&(_, end)| end);
            let (start, body) = match label_at[k] {
                Some((_, end)) => (end, &b[1..]),
                None => (from, &b[..]),
            };
            // The next label again at the end, for the NOTs before it.
            let mut ds: Vec<Directive> = body.to_vec();
            if let Some(next) = blocks[k + 1..]
                .iter()
                .zip(&label_at[k + 1..])
                .find_map(|(nb, at)| at.map(|_| nb[0].clone()))
            {
                ds.push(next);
            }
            if let Some((_, end)) = label_at[k] {
                from = end;
            }
            c.check_block(&ds, start, to)
        };
        if let Some((_, end)) = label_at[k] {
            from = from.max(end);
        }
        out.push(BlockResult {
            label: is_label.then(|| b[0].clone()),
            directives: b.clone(),
            failure: result.err(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(input: &str, checks: &str) -> Vec<Option<String>> {
        let opts = Options::default();
        let ds = parse_checks(checks, &opts, 1);
        check(input, &ds, &opts)
            .into_iter()
            .map(|b| b.failure.map(|f| f.to_string()))
            .collect()
    }

    fn ok(input: &str, checks: &str) {
        let r = run(input, checks);
        assert!(r.iter().all(Option::is_none), "{r:#?}");
    }

    fn fails(input: &str, checks: &str, needles: &[&str]) -> String {
        let r = run(input, checks);
        let f = r
            .iter()
            .flatten()
            .next()
            .unwrap_or_else(|| panic!("no failure: {r:?}"));
        for n in needles {
            assert!(f.contains(n), "expected `{n}` in:\n{f}");
        }
        f.clone()
    }

    #[test]
    fn parses_directives_and_prefixes() {
        let opts = Options {
            prefixes: vec!["CHECK".into(), "FOO".into()],
            strict_whitespace: false,
        };
        let text = "// CHECK: a  \n// CHECK-NEXT:b\n// MYCHECK: no\n// CHECK-BOGUS: no\n\
                    // FOO-DAG: c\n// CHECK-SAME: d\n// CHECK-NOT: e\n// CHECK-LABEL: @f\n\
                    // CHECK-EMPTY:\n// BAR: no\n";
        let ds = parse_checks(text, &opts, 10);
        let got: Vec<(Kind, &str, usize)> = ds
            .iter()
            .map(|d| (d.kind, d.pattern.as_str(), d.line))
            .collect();
        assert_eq!(
            got,
            vec![
                (Kind::Check, "a", 10),
                (Kind::Next, "b", 11),
                (Kind::Dag, "c", 14),
                (Kind::Same, "d", 15),
                (Kind::Not, "e", 16),
                (Kind::Label, "@f", 17),
                (Kind::Empty, "", 18),
            ]
        );
        assert_eq!(ds[2].prefix, "FOO");
    }

    #[test]
    fn comment_prefixes_and_extra_brackets() {
        let opts = Options::default();
        // A RUN line naming the prefix is no directive.
        let ds = parse_checks(
            "// RUN: opt | FileCheck %s --check-prefix=CHECK\n// COM: CHECK: x\n",
            &opts,
            1,
        );
        assert!(ds.is_empty(), "{ds:?}");
        // `[[[X:re]]]`: a literal `[`, the variable, a literal `]`.
        ok(
            "<[[{x}]]>\nuse [{x}]\n",
            "CHECK: <[[[V:.*]]]>\nCHECK-NEXT: use [[V]]",
        );
        fails("x\n", "CHECK:", &["empty check string"]);
    }

    #[test]
    fn check_finds_in_order() {
        ok("a\nb\nc\n", "CHECK: a\nCHECK: c");
        fails(
            "a\nb\nc\n",
            "CHECK: c\nCHECK: a",
            &["line 2: CHECK: a", "no match after output line 3"],
        );
    }

    #[test]
    fn whitespace_runs_are_one_space() {
        ok("x =   add\t a", "CHECK: x = add a");
        ok("x = add a", "CHECK:   x    =  add a   ");
        let opts = Options {
            strict_whitespace: true,
            ..Options::default()
        };
        let ds = parse_checks("CHECK: x = add a", &opts, 1);
        assert!(check("x =  add a", &ds, &opts)[0].failure.is_some());
    }

    #[test]
    fn check_next() {
        ok("a\nb\n", "CHECK: a\nCHECK-NEXT: b");
        fails(
            "a\nx\nb\n",
            "CHECK: a\nCHECK-NEXT: b",
            &[
                "CHECK-NEXT: b",
                "not on the line after",
                "found 2 lines on, output line 3: `b`",
                "the next line is output line 2: `x`",
            ],
        );
        fails(
            "a b\n",
            "CHECK: a\nCHECK-NEXT: b",
            &["same line as the previous match"],
        );
        fails(
            "a\nx\n",
            "CHECK: a\nCHECK-NEXT: b",
            &["no match; expected on the line after the previous match, output line 2: `x`"],
        );
    }

    #[test]
    fn check_same() {
        ok("a b c\n", "CHECK: a\nCHECK-SAME: b\nCHECK-SAME: c");
        fails(
            "a c\nb\n",
            "CHECK: a\nCHECK-SAME: b",
            &["not on the same line", "continues with `c`"],
        );
        // SAME continues after the previous match: an earlier `b` is not it.
        fails("b a\n", "CHECK: a\nCHECK-SAME: b", &["no match"]);
    }

    #[test]
    fn check_not() {
        ok("a\nb\nc\n", "CHECK: a\nCHECK-NOT: x\nCHECK: c");
        fails(
            "a\nx\nc\n",
            "CHECK: a\nCHECK-NOT: x\nCHECK: c",
            &["CHECK-NOT: x", "excluded pattern found at output line 2"],
        );
        // Only between the matches around it.
        ok("x\na\nc\nx\n", "CHECK: a\nCHECK-NOT: x\nCHECK: c");
        // At the end: up to the end of the block.
        fails("a\nx\n", "CHECK: a\nCHECK-NOT: x", &["excluded"]);
        ok("a\nx\n", "CHECK: x\nCHECK-NOT: x");
    }

    #[test]
    fn check_dag() {
        ok("b\na\nc\n", "CHECK-DAG: a\nCHECK-DAG: b\nCHECK: c");
        // Two DAGs cannot take the same text.
        fails(
            "a\nc\n",
            "CHECK-DAG: a\nCHECK-DAG: a\nCHECK: c",
            &["line 2: CHECK-DAG: a", "no match"],
        );
        ok("a\na\nc\n", "CHECK-DAG: a\nCHECK-DAG: a\nCHECK: c");
    }

    #[test]
    fn check_empty() {
        ok("a\n\nb\n", "CHECK: a\nCHECK-EMPTY:\nCHECK-NEXT: b");
        fails("a\nb\n", "CHECK: a\nCHECK-EMPTY:", &["not empty"]);
    }

    #[test]
    fn captures_defined_and_reused() {
        let input = "%0 = add %arg0, %arg1\n%1 = mul %0, %0\nreturn %1\n";
        ok(
            input,
            "CHECK: %[[ADD:.*]] = add %arg0, %[[B:.*]]\nCHECK-NEXT: %[[MUL:.*]] = mul %[[ADD]], %[[ADD]]\nCHECK-NEXT: return %[[MUL]]",
        );
        fails(
            input,
            "CHECK: %[[ADD:.*]] = add\nCHECK: return %[[ADD]]",
            &[
                "CHECK: return %[[ADD]]",
                "no match",
                "with [[ADD]] equal to `0`",
            ],
        );
        // Greedy within the line: `.*` stops where the rest still matches.
        // (X = `a, %b`, Y = `c`: the longest match, the first variable
        // longest.)
        ok(
            "%a, %b, %c\nuse %a, %b, %c\n",
            "CHECK: %[[X:.*]], %[[Y:.*]]\nCHECK-NEXT: use %[[X]], %[[Y]]\n",
        );
        fails(
            "%a, %b, %c\nuse %a, %b\n",
            "CHECK: %[[X:.*]], %[[Y:.*]]\nCHECK-NEXT: use %[[X]], %[[Y]]\n",
            &["no match"],
        );
        fails("x\n", "CHECK: [[UNDEF]]", &["undefined variable `UNDEF`"]);
        // A variable used in the pattern that defines it: a back-reference.
        ok("f(x, x)\n", "CHECK: f([[V:[a-z]+]], [[V]])");
        fails("f(x, y)\n", "CHECK: f([[V:[a-z]+]], [[V]])", &["no match"]);
    }

    #[test]
    fn variables_are_not_scoped_by_labels() {
        ok(
            "func @a\n%x = c\nfunc @b\nuse %x\n",
            "CHECK-LABEL: @a\nCHECK: %[[V:.*]] = c\nCHECK-LABEL: @b\nCHECK: use %[[V]]",
        );
    }

    #[test]
    fn regex_blocks() {
        ok(
            "tensor<8x16xf32>\n",
            "CHECK: tensor<{{[0-9]+}}x{{[0-9]+}}xf32>",
        );
        ok("a.b\n", "CHECK: a{{.}}b");
        fails(
            "tensor<8xf32>\n",
            "CHECK: tensor<{{[a-z]+}}xf32>",
            &["no match"],
        );
        // Everything outside `{{ }}` is literal.
        fails("ab\n", "CHECK: a.", &["no match"]);
        ok("a.\n", "CHECK: a.");
    }

    #[test]
    fn labels_split_blocks() {
        let input = "func @f\n  x\nfunc @g\n  y\nfunc @h\n  z\n";
        let r = run(
            input,
            "CHECK-LABEL: @f\nCHECK: y\nCHECK-LABEL: @g\nCHECK: y\nCHECK-LABEL: @h\nCHECK-NEXT: z",
        );
        // `y` is after @g: not in @f's block.
        assert_eq!(r.len(), 3);
        assert!(
            r[0].as_ref()
                .is_some_and(|f| f.contains("line 2: CHECK: y")),
            "{r:?}"
        );
        assert!(r[1].is_none() && r[2].is_none(), "{r:?}");
        // A missing label fails its block; the others still get checked.
        let r = run(
            input,
            "CHECK-LABEL: @f\nCHECK-LABEL: @nope\nCHECK: q\nCHECK-LABEL: @h\nCHECK-NEXT: z",
        );
        assert!(r[0].is_none(), "{r:?}");
        assert!(
            r[1].as_ref().is_some_and(|f| f.contains("label not found")),
            "{r:?}"
        );
        assert!(r[2].is_none(), "{r:?}");
        // A NOT at the end of a block runs up to the next label.
        let r = run(
            input,
            "CHECK-LABEL: @f\nCHECK-NOT: y\nCHECK-LABEL: @g\nCHECK-NOT: z\nCHECK-LABEL: @h",
        );
        assert!(r.iter().all(Option::is_none), "{r:?}");
        let r = run(input, "CHECK-LABEL: @f\nCHECK-NOT: x\nCHECK-LABEL: @g");
        assert!(r[0].is_some() && r[1].is_none(), "{r:?}");
    }

    #[test]
    fn directives_before_the_first_label_are_a_block() {
        let r = run("mesh\nfunc @f\n", "CHECK: mesh\nCHECK-LABEL: @f");
        assert_eq!(r.len(), 2);
        assert!(r.iter().all(Option::is_none), "{r:?}");
    }

    #[test]
    fn failure_shows_the_closest_line() {
        let input = "func @f\n  %0 = add %a, %b {sharding = <[{\"x\"}]>}\n  return %0\n";
        let f = fails(
            input,
            "CHECK-LABEL: @f\nCHECK: add %a, %b {sharding = <[{\"y\"}]>}",
            &[
                "line 2: CHECK: add",
                "closest: ",
                "output line 2: `%0 = add %a, %b {sharding = <[{\"x\"}]>}`",
            ],
        );
        assert!(f.contains("no match after output line 1"), "{f}");
    }

    #[test]
    fn bad_patterns_fail_their_block() {
        fails("x\n", "CHECK: [[#N]]", &["numeric variable"]);
        fails("x\n", "CHECK: {{(}}", &["bad regex"]);
        fails("x\n", "CHECK: [[1 2]]", &["invalid variable"]);
    }
}
