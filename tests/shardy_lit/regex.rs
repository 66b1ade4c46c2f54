//! The regular expressions of FileCheck patterns: POSIX extended syntax as
//! LLVM's `Regex` reads it with the `Newline` flag (`.` and `[^...]` never
//! match a newline, `^` / `$` match at line boundaries), leftmost-longest
//! overall match as POSIX requires. A small backtracking matcher: the
//! patterns are one line long and the lines they run over are short.
//!
//! Supported: literals, `\X` (X taken literally), `.`, bracket expressions
//! (`[a-z_]`, `[^,]`, `[[:alnum:]]`), `( )`, `|`, `* + ? {n} {n,} {n,m}`,
//! `^`, `$`, and back-references `\1`..`\9` (used for a FileCheck variable
//! defined and used in the same pattern). Bytes, not characters.

/// One instruction of a compiled expression.
#[derive(Clone, Debug)]
enum Inst {
    Byte(u8),
    /// Any byte but `\n`.
    Any,
    /// A bracket expression: the 256 bytes it admits.
    Set(Box<[bool; 256]>),
    /// Try `.0` first, then `.1`.
    Split(usize, usize),
    Jmp(usize),
    /// Record the position in capture slot `.0`.
    Save(usize),
    /// The text of group `.0` again.
    Backref(usize),
    Bol,
    Eol,
    Match,
}

#[derive(Clone, Debug)]
enum Node {
    Empty,
    Byte(u8),
    Any,
    Set(Box<[bool; 256]>),
    Cat(Vec<Node>),
    Alt(Vec<Node>),
    Group(usize, Box<Node>),
    Repeat(Box<Node>, usize, Option<usize>),
    Backref(usize),
    Bol,
    Eol,
}

/// A compiled expression.
#[derive(Clone, Debug)]
pub struct Regex {
    prog: Vec<Inst>,
    /// Capture groups, numbered from 1 in order of their `(`.
    pub groups: usize,
    backrefs: bool,
    /// Bytes the match must start with (a literal prefix), for the search.
    prefix: Vec<u8>,
}

/// A match: where it starts and ends, and each group's span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Match {
    pub start: usize,
    pub end: usize,
    pub groups: Vec<Option<(usize, usize)>>,
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    groups: usize,
    backrefs: bool,
}

impl Parser<'_> {
    fn err<T>(&self, what: &str) -> Result<T, String> {
        Err(format!(
            "bad regex `{}` at offset {}: {what}",
            String::from_utf8_lossy(self.s),
            self.i
        ))
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn alt(&mut self) -> Result<Node, String> {
        let mut alts = vec![self.cat()?];
        while self.peek() == Some(b'|') {
            self.i += 1;
            alts.push(self.cat()?);
        }
        Ok(if alts.len() == 1 {
            alts.pop().unwrap()
        } else {
            Node::Alt(alts)
        })
    }

    fn cat(&mut self) -> Result<Node, String> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == b'|' || c == b')' {
                break;
            }
            let atom = self.atom()?;
            let atom = self.quantified(atom)?;
            items.push(atom);
        }
        Ok(match items.len() {
            0 => Node::Empty,
            1 => items.pop().unwrap(),
            _ => Node::Cat(items),
        })
    }

    fn number(&mut self) -> Option<usize> {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        std::str::from_utf8(&self.s[start..self.i])
            .ok()?
            .parse()
            .ok()
    }

    fn quantified(&mut self, mut atom: Node) -> Result<Node, String> {
        loop {
            let (min, max) = match self.peek() {
                Some(b'*') => (0, None),
                Some(b'+') => (1, None),
                Some(b'?') => (0, Some(1)),
                Some(b'{') if self.s.get(self.i + 1).is_some_and(|c| c.is_ascii_digit()) => {
                    self.i += 1;
                    let min = self.number().unwrap_or(0);
                    let max = if self.peek() == Some(b',') {
                        self.i += 1;
                        if self.peek() == Some(b'}') {
                            None
                        } else {
                            match self.number() {
                                Some(m) => Some(m),
                                None => return self.err("bad bound"),
                            }
                        }
                    } else {
                        Some(min)
                    };
                    if self.peek() != Some(b'}') {
                        return self.err("unclosed `{`");
                    }
                    if max.is_some_and(|m| m < min) || min > 1000 {
                        return self.err("bad bound");
                    }
                    (min, max)
                }
                _ => return Ok(atom),
            };
            self.i += 1;
            atom = Node::Repeat(Box::new(atom), min, max);
        }
    }

    fn atom(&mut self) -> Result<Node, String> {
        let c = self.peek().expect("an atom");
        self.i += 1;
        Ok(match c {
            b'.' => Node::Any,
            b'^' => Node::Bol,
            b'$' => Node::Eol,
            b'(' => {
                self.groups += 1;
                let n = self.groups;
                let inner = self.alt()?;
                if self.peek() != Some(b')') {
                    return self.err("unclosed `(`");
                }
                self.i += 1;
                Node::Group(n, Box::new(inner))
            }
            b'[' => self.bracket()?,
            b'\\' => match self.peek() {
                None => return self.err("trailing `\\`"),
                Some(d @ b'1'..=b'9') => {
                    self.i += 1;
                    let n = (d - b'0') as usize;
                    if n > self.groups {
                        return self.err("back-reference to a group not yet opened");
                    }
                    self.backrefs = true;
                    Node::Backref(n)
                }
                Some(e) => {
                    self.i += 1;
                    Node::Byte(e)
                }
            },
            b'*' | b'+' | b'?' => return self.err("nothing to repeat"),
            other => Node::Byte(other),
        })
    }

    fn bracket(&mut self) -> Result<Node, String> {
        let mut set = Box::new([false; 256]);
        let negate = self.peek() == Some(b'^');
        if negate {
            self.i += 1;
        }
        let mut first = true;
        loop {
            let Some(c) = self.peek() else {
                return self.err("unclosed `[`");
            };
            if c == b']' && !first {
                self.i += 1;
                break;
            }
            first = false;
            if c == b'[' && self.s.get(self.i + 1) == Some(&b':') {
                let rest = &self.s[self.i + 2..];
                let Some(end) = rest.windows(2).position(|w| w == b":]") else {
                    return self.err("unclosed `[:`");
                };
                let name = std::str::from_utf8(&rest[..end]).unwrap_or("");
                let test: fn(u8) -> bool = match name {
                    "alnum" => |b| b.is_ascii_alphanumeric(),
                    "alpha" => |b| b.is_ascii_alphabetic(),
                    "digit" => |b| b.is_ascii_digit(),
                    "lower" => |b| b.is_ascii_lowercase(),
                    "upper" => |b| b.is_ascii_uppercase(),
                    "space" => |b| b.is_ascii_whitespace() || b == 0x0b,
                    "blank" => |b| b == b' ' || b == b'\t',
                    "punct" => |b| b.is_ascii_punctuation(),
                    "xdigit" => |b| b.is_ascii_hexdigit(),
                    "print" => |b| (0x20..0x7f).contains(&b),
                    "graph" => |b| (0x21..0x7f).contains(&b),
                    "cntrl" => |b| b.is_ascii_control(),
                    _ => return self.err("unknown character class"),
                };
                for b in 0..=255u8 {
                    if test(b) {
                        set[b as usize] = true;
                    }
                }
                self.i += 2 + end + 2;
                continue;
            }
            self.i += 1;
            let lo = c;
            if self.peek() == Some(b'-') && self.s.get(self.i + 1).is_some_and(|&n| n != b']') {
                let hi = self.s[self.i + 1];
                self.i += 2;
                if hi < lo {
                    return self.err("bad range");
                }
                for b in lo..=hi {
                    set[b as usize] = true;
                }
            } else {
                set[lo as usize] = true;
            }
        }
        if negate {
            for b in set.iter_mut() {
                *b = !*b;
            }
            set[b'\n' as usize] = false;
        }
        Ok(Node::Set(set))
    }
}

fn emit(node: &Node, prog: &mut Vec<Inst>) {
    match node {
        Node::Empty => {}
        Node::Byte(b) => prog.push(Inst::Byte(*b)),
        Node::Any => prog.push(Inst::Any),
        Node::Set(s) => prog.push(Inst::Set(s.clone())),
        Node::Bol => prog.push(Inst::Bol),
        Node::Eol => prog.push(Inst::Eol),
        Node::Backref(n) => prog.push(Inst::Backref(*n)),
        Node::Cat(items) => items.iter().for_each(|n| emit(n, prog)),
        Node::Group(n, inner) => {
            prog.push(Inst::Save(2 * n));
            emit(inner, prog);
            prog.push(Inst::Save(2 * n + 1));
        }
        Node::Alt(alts) => {
            // split L1, next; L1: a; jmp end; next: split L2, ...
            let mut jumps = Vec::new();
            for (k, alt) in alts.iter().enumerate() {
                if k + 1 < alts.len() {
                    let split = prog.len();
                    prog.push(Inst::Split(split + 1, 0));
                    emit(alt, prog);
                    jumps.push(prog.len());
                    prog.push(Inst::Jmp(0));
                    let next = prog.len();
                    prog[split] = Inst::Split(split + 1, next);
                } else {
                    emit(alt, prog);
                }
            }
            let end = prog.len();
            for j in jumps {
                prog[j] = Inst::Jmp(end);
            }
        }
        Node::Repeat(inner, min, max) => {
            for _ in 0..*min {
                emit(inner, prog);
            }
            match max {
                None => {
                    let split = prog.len();
                    prog.push(Inst::Split(split + 1, 0));
                    emit(inner, prog);
                    prog.push(Inst::Jmp(split));
                    let end = prog.len();
                    prog[split] = Inst::Split(split + 1, end);
                }
                Some(max) => {
                    let mut splits = Vec::new();
                    for _ in *min..*max {
                        splits.push(prog.len());
                        prog.push(Inst::Split(0, 0));
                        emit(inner, prog);
                    }
                    let end = prog.len();
                    for s in splits {
                        prog[s] = Inst::Split(s + 1, end);
                    }
                }
            }
        }
    }
}

fn literal_prefix(node: &Node, out: &mut Vec<u8>) -> bool {
    match node {
        Node::Byte(b) => {
            out.push(*b);
            true
        }
        Node::Cat(items) => items.iter().all(|n| literal_prefix(n, out)),
        Node::Empty => true,
        _ => false,
    }
}

impl Regex {
    pub fn new(pattern: &str) -> Result<Regex, String> {
        let mut p = Parser {
            s: pattern.as_bytes(),
            i: 0,
            groups: 0,
            backrefs: false,
        };
        let node = p.alt()?;
        if p.i != p.s.len() {
            return p.err("unmatched `)`");
        }
        let mut prog = Vec::new();
        emit(&node, &mut prog);
        prog.push(Inst::Match);
        let mut prefix = Vec::new();
        literal_prefix(&node, &mut prefix);
        Ok(Regex {
            prog,
            groups: p.groups,
            backrefs: p.backrefs,
            prefix,
        })
    }

    /// The leftmost-longest match starting at or after `from`.
    pub fn find_at(&self, text: &[u8], from: usize) -> Option<Match> {
        let mut start = from;
        // A match never spans a newline: search line by line, with one
        // table of explored states per line.
        let mut stamps: Vec<u32> = Vec::new();
        let mut line: Option<(usize, usize)> = None; // (line start, line end)
        let mut generation = 0u32;
        while start <= text.len() {
            if !self.prefix.is_empty() {
                let off = find_bytes(&text[start..], &self.prefix)?;
                start += off;
            }
            if line.is_none_or(|(_, end)| start > end) {
                let end = text[start..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(text.len(), |p| start + p);
                line = Some((start, end));
                if !self.backrefs {
                    stamps = vec![0; self.prog.len() * (end - start + 1)];
                    generation = 0;
                }
            }
            let (line_start, line_end) = line.unwrap();
            generation += 1;
            let mut run = Run {
                prog: &self.prog,
                text: &text[..line_end],
                caps: vec![None; 2 * (self.groups + 1)],
                line_start,
                stamps: &mut stamps,
                generation,
                best: None,
                first_only: self.backrefs,
                steps: 0,
            };
            run.go(0, start);
            if let Some((end, caps)) = run.best {
                let groups = (1..=self.groups)
                    .map(|g| match (caps[2 * g], caps[2 * g + 1]) {
                        (Some(a), Some(b)) => Some((a, b)),
                        _ => None,
                    })
                    .collect();
                return Some(Match { start, end, groups });
            }
            start += 1;
        }
        None
    }
}

pub fn find_bytes(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

struct Run<'a> {
    prog: &'a [Inst],
    /// The text up to the end of the line being searched.
    text: &'a [u8],
    caps: Vec<Option<usize>>,
    line_start: usize,
    /// Without back-references, what a state can reach does not depend on
    /// the path to it: each (instruction, position) is explored once per
    /// start (`stamps[..] == generation`: explored). With them (no stamps),
    /// the first greedy match is taken.
    stamps: &'a mut Vec<u32>,
    generation: u32,
    best: Option<(usize, Vec<Option<usize>>)>,
    first_only: bool,
    steps: usize,
}

impl Run<'_> {
    /// Explore from (pc, pos); true stops the search (first-match mode).
    fn go(&mut self, mut pc: usize, mut pos: usize) -> bool {
        loop {
            self.steps += 1;
            if self.steps > 5_000_000 {
                return true; // give up on a pathological pattern
            }
            if !self.stamps.is_empty() {
                let width = self.text.len() - self.line_start + 1;
                let k = pc * width + (pos - self.line_start);
                if self.stamps[k] == self.generation {
                    return false;
                }
                self.stamps[k] = self.generation;
            }
            match &self.prog[pc] {
                Inst::Byte(b) => {
                    if self.text.get(pos) != Some(b) {
                        return false;
                    }
                    pc += 1;
                    pos += 1;
                }
                Inst::Any => {
                    if self.text.get(pos).is_none_or(|&c| c == b'\n') {
                        return false;
                    }
                    pc += 1;
                    pos += 1;
                }
                Inst::Set(s) => match self.text.get(pos) {
                    Some(&c) if s[c as usize] => {
                        pc += 1;
                        pos += 1;
                    }
                    _ => return false,
                },
                Inst::Bol => {
                    if pos != 0 && self.text[pos - 1] != b'\n' {
                        return false;
                    }
                    pc += 1;
                }
                Inst::Eol => {
                    if pos != self.text.len() && self.text[pos] != b'\n' {
                        return false;
                    }
                    pc += 1;
                }
                Inst::Backref(n) => {
                    let (Some(a), Some(b)) = (self.caps[2 * n], self.caps[2 * n + 1]) else {
                        return false;
                    };
                    let len = b - a;
                    if pos + len > self.text.len() || self.text[a..b] != self.text[pos..pos + len] {
                        return false;
                    }
                    pc += 1;
                    pos += len;
                }
                Inst::Jmp(t) => pc = *t,
                Inst::Split(a, b) => {
                    let (a, b) = (*a, *b);
                    if self.go(a, pos) {
                        return true;
                    }
                    pc = b;
                }
                Inst::Save(slot) => {
                    let slot = *slot;
                    let old = self.caps[slot];
                    self.caps[slot] = Some(pos);
                    let stop = self.go(pc + 1, pos);
                    self.caps[slot] = old;
                    return stop;
                }
                Inst::Match => {
                    if self.best.as_ref().is_none_or(|(end, _)| pos > *end) {
                        self.best = Some((pos, self.caps.clone()));
                    }
                    return self.first_only;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(re: &str, text: &str) -> Option<(usize, usize)> {
        Regex::new(re)
            .unwrap()
            .find_at(text.as_bytes(), 0)
            .map(|m| (m.start, m.end))
    }

    #[test]
    fn literals_dot_and_classes() {
        assert_eq!(find("abc", "xxabcx"), Some((2, 5)));
        assert_eq!(find("a.c", "abc"), Some((0, 3)));
        assert_eq!(find("a.c", "a\nc"), None, "`.` never matches a newline");
        assert_eq!(find("[0-9]+", "ab123c"), Some((2, 5)));
        assert_eq!(find("[^,]*", "ab,c"), Some((0, 2)));
        assert_eq!(find("[[:digit:]]{2}", "a1b23"), Some((3, 5)));
        assert_eq!(find("x\\.y", "xzy x.y"), Some((4, 7)));
        assert_eq!(find("[]a]+", "b]a]"), Some((1, 4)));
    }

    #[test]
    fn leftmost_longest() {
        // POSIX: the longest match at the leftmost start, not the first
        // alternative's.
        assert_eq!(find("a|ab|abc", "xabcd"), Some((1, 4)));
        assert_eq!(find("x*(xy)?", "xxy"), Some((0, 3)));
        assert_eq!(find("a.*b", "a b b\nb"), Some((0, 5)));
    }

    #[test]
    fn anchors_and_bounds() {
        assert_eq!(find("^b", "ab\nbc"), Some((3, 4)));
        assert_eq!(find("a$", "ab\na\n"), Some((3, 4)));
        assert_eq!(find("a{2,3}", "aaaa"), Some((0, 3)));
        assert_eq!(find("(ab)+", "ababx"), Some((0, 4)));
    }

    #[test]
    fn groups_and_backrefs() {
        let re = Regex::new("%(.*) = add %(.*), %\\1").unwrap();
        let text = b"%x = add %y, %x";
        let m = re.find_at(text, 0).unwrap();
        assert_eq!(m.groups, vec![Some((1, 2)), Some((10, 11))]);
        assert!(re.find_at(b"%x = add %y, %z", 0).is_none());
    }

    #[test]
    fn bad_patterns_are_errors() {
        for bad in ["(a", "a)", "[a", "*a", "a{3,1}", "[[:nope:]]", "\\1"] {
            assert!(Regex::new(bad).is_err(), "{bad}");
        }
    }
}
