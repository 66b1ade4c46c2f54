//! No import circles: within every crate of the workspace, the modules
//! that share a parent must import each other in one direction only.
//!
//! A reference `crate::a::b::Item` (in a `use` line or inline) from the
//! file of module `p::x::...` to module `p::y::...` is an edge `x -> y`
//! between the children `x`, `y` of their common parent `p`; a module
//! reaching its own ancestor or descendant is not an edge (a parent and
//! its children are one room). Re-exports (`pub use`) are followed to the
//! module that defines the item, so `super::Thing` re-exported by a parent
//! from a sibling is an edge to that sibling. Test modules (`#[cfg(test)]
//! mod ...` at the end of a file) are left out.
//!
//! The test fails on any circle (a strongly connected set of two or more
//! siblings) and prints each one with a file and line for every edge, so
//! that the import to move is plain.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// The crates' source roots, relative to the workspace root.
const CRATES: &[&str] = &[
    "compiler/src",
    "runtime/src",
    "kernels/src",
    "src",
    "python/src",
];

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    PathSep,
    Punct(char),
}

struct Token {
    tok: Tok,
    line: usize,
}

/// Identifiers and punctuation of Rust source, without comments, string
/// and character literals (which may hold `crate::` or braces).
fn tokenize(src: &str) -> Vec<Token> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if c[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if ch == '"' || ((ch == 'r' || ch == 'b') && raw_string_start(&c, i).is_some()) {
            let (hashes, body) = if ch == '"' {
                (None, i + 1)
            } else {
                raw_string_start(&c, i).unwrap()
            };
            i = body;
            while i < c.len() {
                if c[i] == '\n' {
                    line += 1;
                }
                match hashes {
                    None if c[i] == '\\' => i += 2,
                    None if c[i] == '"' => {
                        i += 1;
                        break;
                    }
                    Some(h) if c[i] == '"' && (1..=h).all(|k| at(i + k) == '#') => {
                        i += 1 + h;
                        break;
                    }
                    _ => i += 1,
                }
            }
        } else if ch == '\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if at(i + 1) == '\\' {
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
            }
        } else if ch.is_alphanumeric() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            out.push(Token {
                tok: Tok::Ident(word),
                line,
            });
        } else if ch == ':' && at(i + 1) == ':' {
            out.push(Token {
                tok: Tok::PathSep,
                line,
            });
            i += 2;
        } else {
            out.push(Token {
                tok: Tok::Punct(ch),
                line,
            });
            i += 1;
        }
    }
    out
}

/// Where a raw or byte string starting at `i` has its body, and how many
/// `#` close it (`None` for an ordinary escaped string such as `b"..."`).
fn raw_string_start(c: &[char], i: usize) -> Option<(Option<usize>, usize)> {
    if i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_') {
        return None;
    }
    let mut j = i;
    if c.get(j) == Some(&'b') {
        j += 1;
        if c.get(j) == Some(&'"') {
            return Some((None, j + 1));
        }
    }
    if c.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while c.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    (c.get(j) == Some(&'"')).then_some((Some(hashes), j + 1))
}

/// One module of a crate: its path from the crate root and its source.
struct ModuleFile {
    path: Vec<String>,
    file: PathBuf,
    tokens: Vec<Token>,
}

fn module_files(root: &Path) -> Vec<ModuleFile> {
    let mut files = Vec::new();
    collect_rs(root, &mut files);
    files
        .into_iter()
        .map(|file| {
            let rel = file.strip_prefix(root).unwrap();
            let mut path: Vec<String> = rel
                .with_extension("")
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect();
            if matches!(
                path.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                path.pop();
            }
            let src = std::fs::read_to_string(&file).unwrap();
            let tokens = without_test_module(tokenize(&src));
            ModuleFile { path, file, tokens }
        })
        .collect()
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect_rs(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The tokens before a `#[cfg(test)] mod name {` (tests sit at the end).
fn without_test_module(tokens: Vec<Token>) -> Vec<Token> {
    let words: Vec<String> = tokens
        .iter()
        .map(|t| match &t.tok {
            Tok::Ident(s) => s.clone(),
            Tok::PathSep => "::".into(),
            Tok::Punct(c) => c.to_string(),
        })
        .collect();
    let pattern = ["#", "[", "cfg", "(", "test", ")", "]", "mod"];
    let cut = (0..words.len()).find(|&i| {
        words.len() >= i + pattern.len() && pattern.iter().zip(&words[i..]).all(|(p, w)| p == w)
    });
    let mut tokens = tokens;
    if let Some(cut) = cut {
        tokens.truncate(cut);
    }
    tokens
}

/// A path a module names, made absolute, with the line it is on and, for
/// a `use` tree, the name it binds (the last segment or its `as` alias).
struct PathRef {
    segs: Vec<String>,
    line: usize,
    binds: Option<String>,
    glob: bool,
    public_use: bool,
}

struct PathParser<'a> {
    toks: &'a [Token],
    module: &'a [String],
}

impl PathParser<'_> {
    fn ident(&self, i: usize) -> Option<&str> {
        match self.toks.get(i).map(|t| &t.tok) {
            Some(Tok::Ident(s)) => Some(s),
            _ => None,
        }
    }

    fn is(&self, i: usize, tok: &Tok) -> bool {
        self.toks.get(i).map(|t| &t.tok) == Some(tok)
    }

    /// The absolute prefix a path root stands for, if it is `crate`,
    /// `self` or a run of `super`s; the index after it.
    fn root(&self, mut i: usize) -> Option<(Vec<String>, usize)> {
        match self.ident(i)? {
            "crate" => Some((Vec::new(), i + 1)),
            "self" => Some((self.module.to_vec(), i + 1)),
            "super" => {
                let mut base = self.module.to_vec();
                while self.ident(i) == Some("super") {
                    base.pop()?;
                    i += 1;
                    if self.is(i, &Tok::PathSep) && self.ident(i + 1) == Some("super") {
                        i += 1;
                    }
                }
                Some((base, i))
            }
            _ => None,
        }
    }

    /// Parses the rest of a path or use tree after `prefix` at `i` (which
    /// is just past the root or a segment); pushes every leaf path.
    fn tree(
        &self,
        prefix: Vec<String>,
        mut i: usize,
        public_use: bool,
        out: &mut Vec<PathRef>,
    ) -> usize {
        let line = self.toks.get(i.saturating_sub(1)).map_or(0, |t| t.line);
        if !self.is(i, &Tok::PathSep) {
            let binds = prefix.last().cloned();
            let (binds, next) = if self.ident(i) == Some("as") {
                (self.ident(i + 1).map(str::to_string), i + 2)
            } else {
                (binds, i)
            };
            out.push(PathRef {
                segs: prefix,
                line,
                binds,
                glob: false,
                public_use,
            });
            return next;
        }
        i += 1;
        if self.is(i, &Tok::Punct('*')) {
            out.push(PathRef {
                segs: prefix,
                line,
                binds: None,
                glob: true,
                public_use,
            });
            return i + 1;
        }
        if self.is(i, &Tok::Punct('{')) {
            i += 1;
            while i < self.toks.len() && !self.is(i, &Tok::Punct('}')) {
                if self.is(i, &Tok::Punct(',')) {
                    i += 1;
                    continue;
                }
                if self.ident(i) == Some("self") {
                    let (binds, next) = if self.ident(i + 1) == Some("as") {
                        (self.ident(i + 2).map(str::to_string), i + 3)
                    } else {
                        (prefix.last().cloned(), i + 1)
                    };
                    let line = self.toks[i].line;
                    out.push(PathRef {
                        segs: prefix.clone(),
                        line,
                        binds,
                        glob: false,
                        public_use,
                    });
                    i = next;
                } else if let Some(name) = self.ident(i) {
                    let mut p = prefix.clone();
                    p.push(name.to_string());
                    i = self.tree(p, i + 1, public_use, out);
                } else {
                    i += 1;
                }
            }
            return i + 1;
        }
        match self.ident(i) {
            Some(name) => {
                let mut p = prefix;
                p.push(name.to_string());
                self.tree(p, i + 1, public_use, out)
            }
            None => {
                out.push(PathRef {
                    segs: prefix,
                    line,
                    binds: None,
                    glob: false,
                    public_use,
                });
                i
            }
        }
    }

    /// Whether the `use` at `i` is exported (`pub use`, `pub(crate) use`).
    fn is_pub_use(&self, i: usize) -> bool {
        if i >= 1 && self.ident(i - 1) == Some("pub") {
            return true;
        }
        i >= 4 && self.is(i - 1, &Tok::Punct(')')) && self.ident(i - 4) == Some("pub")
    }

    fn paths(&self) -> Vec<PathRef> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.toks.len() {
            // Skip the middle of a path (`a::crate` cannot occur, but
            // `$crate::` can: the `$` makes it a macro's own path).
            let after_sep = i > 0 && self.is(i - 1, &Tok::PathSep);
            if !after_sep {
                if let Some((prefix, next)) = self.root(i) {
                    let public_use =
                        i >= 1 && self.ident(i - 1) == Some("use") && self.is_pub_use(i - 1);
                    i = self.tree(prefix, next, public_use, &mut out);
                    continue;
                }
            }
            i += 1;
        }
        out
    }
}

/// Names a module defines itself (functions, types, constants, modules,
/// macros), which a glob re-export of it brings along.
fn defined_names(tokens: &[Token]) -> BTreeSet<String> {
    let kinds = [
        "fn", "struct", "enum", "trait", "type", "const", "static", "mod", "union",
    ];
    let mut names = BTreeSet::new();
    for w in tokens.windows(2) {
        if let (Tok::Ident(k), Tok::Ident(n)) = (&w[0].tok, &w[1].tok) {
            if kinds.contains(&k.as_str()) {
                names.insert(n.clone());
            }
        }
    }
    names
}

struct Crate {
    modules: BTreeSet<Vec<String>>,
    /// `(module, name) -> path` for every `pub use` that binds `name`.
    reexports: HashMap<(Vec<String>, String), Vec<String>>,
    /// `module -> sources` of its `pub use source::*`.
    globs: HashMap<Vec<String>, Vec<Vec<String>>>,
    defines: HashMap<Vec<String>, BTreeSet<String>>,
}

impl Crate {
    /// The module that defines what `segs` names.
    fn resolve(&self, segs: &[String], depth: usize) -> Vec<String> {
        let mut n = segs.len();
        while n > 0 && !self.modules.contains(&segs[..n]) {
            n -= 1;
        }
        let module = segs[..n].to_vec();
        let Some(next) = segs.get(n) else {
            return module;
        };
        if depth > 8 || self.defines.get(&module).is_some_and(|d| d.contains(next)) {
            return module;
        }
        if let Some(target) = self.reexports.get(&(module.clone(), next.clone())) {
            let mut p = target.clone();
            p.extend_from_slice(&segs[n + 1..]);
            return self.resolve(&p, depth + 1);
        }
        for source in self.globs.get(&module).into_iter().flatten() {
            let mut p = source.clone();
            p.extend_from_slice(&segs[n..]);
            let found = self.resolve(&p, depth + 1);
            if found != *source || self.defines.get(source).is_some_and(|d| d.contains(next)) {
                return found;
            }
        }
        module
    }
}

/// An import between two children of one parent, and where it is.
struct Edge {
    from: String,
    to: String,
    site: String,
}

fn crate_edges(root: &Path, workspace: &Path) -> BTreeMap<Vec<String>, Vec<Edge>> {
    let files = module_files(root);
    let mut krate = Crate {
        modules: files.iter().map(|f| f.path.clone()).collect(),
        reexports: HashMap::new(),
        globs: HashMap::new(),
        defines: HashMap::new(),
    };
    let mut refs = Vec::new();
    for f in &files {
        krate
            .defines
            .insert(f.path.clone(), defined_names(&f.tokens));
        let paths = PathParser {
            toks: &f.tokens,
            module: &f.path,
        }
        .paths();
        for p in &paths {
            if p.public_use && p.glob {
                krate
                    .globs
                    .entry(f.path.clone())
                    .or_default()
                    .push(p.segs.clone());
            } else if p.public_use {
                if let Some(name) = &p.binds {
                    krate
                        .reexports
                        .insert((f.path.clone(), name.clone()), p.segs.clone());
                }
            }
        }
        refs.push(paths);
    }
    let mut edges: BTreeMap<Vec<String>, Vec<Edge>> = BTreeMap::new();
    for (f, paths) in files.iter().zip(refs) {
        for p in paths {
            let target = krate.resolve(&p.segs, 0);
            let common = f
                .path
                .iter()
                .zip(&target)
                .take_while(|(a, b)| a == b)
                .count();
            if common == f.path.len() || common == target.len() {
                continue; // the same module, an ancestor or a descendant
            }
            let rel = f.file.strip_prefix(workspace).unwrap_or(&f.file);
            edges
                .entry(f.path[..common].to_vec())
                .or_default()
                .push(Edge {
                    from: f.path[common].clone(),
                    to: target[common].clone(),
                    site: format!("{}:{} -> {}", rel.display(), p.line, target.join("::")),
                });
        }
    }
    edges
}

/// Strongly connected sets of two or more nodes (Tarjan).
fn circles(edges: &[Edge]) -> Vec<Vec<String>> {
    let mut nodes: Vec<&str> = edges
        .iter()
        .flat_map(|e| [e.from.as_str(), e.to.as_str()])
        .collect();
    nodes.sort();
    nodes.dedup();
    let index_of: HashMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut adj = vec![BTreeSet::new(); nodes.len()];
    for e in edges {
        adj[index_of[e.from.as_str()]].insert(index_of[e.to.as_str()]);
    }
    struct State {
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(v: usize, adj: &[BTreeSet<usize>], s: &mut State) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &adj[v] {
            match s.index[w] {
                None => {
                    visit(w, adj, s);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                _ => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut set = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack[w] = false;
                set.push(w);
                if w == v {
                    break;
                }
            }
            if set.len() > 1 {
                s.out.push(set);
            }
        }
    }
    let n = nodes.len();
    let mut s = State {
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(v, &adj, &mut s);
        }
    }
    let mut out: Vec<Vec<String>> = s
        .out
        .into_iter()
        .map(|set| {
            let mut names: Vec<String> = set.into_iter().map(|i| nodes[i].to_string()).collect();
            names.sort();
            names
        })
        .collect();
    out.sort();
    out
}

/// Circles that exist and are being taken apart (issue 28): crate root,
/// parent module, members. The test fails on any other circle, and on an
/// entry here that no longer exists (remove it: the list only shrinks).
const KNOWN: &[(&str, &str, &[&str])] = &[];

/// One circle: the crate, the parent module, its members, and a text with
/// one site per edge between members.
struct Circle {
    krate: &'static str,
    parent: String,
    members: Vec<String>,
    text: String,
}

fn workspace_circles() -> Vec<Circle> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for krate in CRATES {
        for (parent, edges) in crate_edges(&workspace.join(krate), workspace) {
            let parent = if parent.is_empty() {
                "crate".to_string()
            } else {
                parent.join("::")
            };
            for members in circles(&edges) {
                let mut text = format!(
                    "{krate}: in `{parent}`, {{{}}} import each other:",
                    members.join(", ")
                );
                let mut seen = BTreeSet::new();
                for e in &edges {
                    if members.contains(&e.from)
                        && members.contains(&e.to)
                        && seen.insert((&e.from, &e.to))
                    {
                        text += &format!("\n    {} -> {}: {}", e.from, e.to, e.site);
                    }
                }
                found.push(Circle {
                    krate,
                    parent: parent.clone(),
                    members,
                    text,
                });
            }
        }
    }
    found
}

#[test]
fn no_new_import_circles() {
    let found = workspace_circles();
    for c in &found {
        eprintln!("{}", c.text); // `--nocapture` shows where each one closes
    }
    let is_known = |c: &Circle| {
        KNOWN
            .iter()
            .any(|(k, p, m)| *k == c.krate && *p == c.parent && m.iter().eq(c.members.iter()))
    };
    let new: Vec<&str> = found
        .iter()
        .filter(|c| !is_known(c))
        .map(|c| c.text.as_str())
        .collect();
    assert!(
        new.is_empty(),
        "{} new import circles:\n{}",
        new.len(),
        new.join("\n")
    );
    let gone: Vec<String> = KNOWN
        .iter()
        .filter(|(k, p, m)| {
            !found
                .iter()
                .any(|c| c.krate == *k && c.parent == *p && m.iter().eq(c.members.iter()))
        })
        .map(|(k, p, m)| format!("{k} {p} {m:?}"))
        .collect();
    assert!(
        gone.is_empty(),
        "these circles are gone; remove them from KNOWN: {gone:?}"
    );
}

/// The compiler's top-level modules, lowest first: each imports only
/// modules of lower layers (one layer may hold several modules that do not
/// import each other). A module not listed here fails the test.
const COMPILER_LAYERS: &[&[&str]] = &[
    &["diag", "splitmix"],
    &["sharding"],
    &["rules"],
    &["ir"],
    &["text"],
    &["propagation"],
    &["partition"],
];

/// Imports against `COMPILER_LAYERS` that exist and are being taken apart
/// (issue 28), by importing file and imported module. Only shrinks.
const KNOWN_AGAINST_LAYERS: &[(&str, &str)] = &[];

#[test]
fn compiler_modules_import_only_lower_layers() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let edges = crate_edges(&workspace.join("compiler/src"), workspace);
    let layer = |m: &str| COMPILER_LAYERS.iter().position(|l| l.contains(&m));
    let mut against = Vec::new();
    let mut known_seen = BTreeSet::new();
    for e in edges.get(&Vec::new()).into_iter().flatten() {
        let (Some(from), Some(to)) = (layer(&e.from), layer(&e.to)) else {
            panic!(
                "{} or {} is not in COMPILER_LAYERS ({})",
                e.from, e.to, e.site
            );
        };
        // Modules of one layer may not import each other.
        if to < from {
            continue;
        }
        let file = e.site.split(':').next().unwrap_or_default();
        if let Some(k) = KNOWN_AGAINST_LAYERS
            .iter()
            .find(|(f, m)| *f == file && *m == e.to)
        {
            known_seen.insert(*k);
            continue;
        }
        against.push(format!("{} -> {}: {}", e.from, e.to, e.site));
    }
    assert!(
        against.is_empty(),
        "imports against the compiler's layers:\n{}",
        against.join("\n")
    );
    let gone: Vec<_> = KNOWN_AGAINST_LAYERS
        .iter()
        .filter(|k| !known_seen.contains(*k))
        .collect();
    assert!(
        gone.is_empty(),
        "gone; remove them from KNOWN_AGAINST_LAYERS: {gone:?}"
    );
}

#[test]
fn finds_a_circle_and_follows_reexports() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("a")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod a;\npub mod b;\n").unwrap();
    std::fs::write(src.join("a/mod.rs"), "mod inner;\npub use inner::Thing;\n").unwrap();
    std::fs::write(
        src.join("a/inner.rs"),
        "use crate::b::f;\npub struct Thing;\n",
    )
    .unwrap();
    std::fs::write(
        src.join("b.rs"),
        "// use crate::a::Thing; in a comment\nconst S: &str = \"crate::a::Thing\";\npub fn f() {}\n",
    )
    .unwrap();
    let edges = crate_edges(&src, dir.path());
    assert!(
        circles(&edges[&Vec::new()]).is_empty(),
        "comments and strings are not imports"
    );

    std::fs::write(
        src.join("b.rs"),
        "pub fn f() -> crate::a::Thing { crate::a::Thing }\n",
    )
    .unwrap();
    let edges = crate_edges(&src, dir.path());
    assert_eq!(
        circles(&edges[&Vec::new()]),
        vec![vec!["a".to_string(), "b".to_string()]]
    );

    // Inside `a`, `inner` reaching `a`'s own items is parent and child, not a circle.
    std::fs::write(
        src.join("a/inner.rs"),
        "use super::Thing as T;\npub struct Thing;\n",
    )
    .unwrap();
    let edges = crate_edges(&src, dir.path());
    assert!(!edges.contains_key(&vec!["a".to_string()]));
}

/// `IMPORT_EDGES=compiler/src:partition cargo test --release --test
/// import_graph -- --ignored --nocapture` lists the imports between the
/// children of one module (the crate root is `crate`): a map for moving
/// files into rooms without making a circle.
#[test]
#[ignore]
fn print_edges() {
    let spec = std::env::var("IMPORT_EDGES").unwrap_or_else(|_| "compiler/src:crate".into());
    let (krate, parent) = spec
        .split_once(':')
        .expect("IMPORT_EDGES=<crate dir>:<module>");
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let parent: Vec<String> = if parent == "crate" {
        Vec::new()
    } else {
        parent.split("::").map(str::to_string).collect()
    };
    let edges = crate_edges(&workspace.join(krate), workspace);
    for e in edges.get(&parent).into_iter().flatten() {
        println!("{} {} {}", e.from, e.to, e.site);
    }
}
