//! Text mutations of real programs: the fuzzer's inputs stay close to what
//! users feed meshrun (JAX exports) while breaking one thing at a time —
//! numbers turned absurd, lines dropped, duplicated or swapped, tokens of
//! the sharding and type syntax spliced in, element types and axis names
//! exchanged, the text truncated.

use meshrun_compiler::splitmix::SplitMix64;

/// The mutations' random choices: SplitMix64, seedable, so every case is
/// reproducible from its seed alone.
#[derive(Debug, Clone)]
pub struct Rng(SplitMix64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(SplitMix64::new(seed))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Numbers that break size, rank and index arithmetic.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "7",
    "-1",
    "-2",
    "64",
    "1024",
    "2147483647",
    "2147483648",
    "4294967296",
    "999999999998",
    "9223372036854775807",
    "18446744073709551615",
    "99999999999999999999999",
];

/// Pieces of the syntax spliced in at random places.
const SNIPPETS: &[&str] = &[
    "{\"data\"}",
    "{\"model\"}",
    "{}",
    "{?}",
    "{\"data\", ?}",
    "{\"model\":(1)2}",
    "{\"data\":(2)2}",
    "{\"x\"}",
    "p0",
    "p9999999999",
    "replicated={\"data\"}",
    "unreduced={\"model\"}",
    "unreduced=max{\"data\"}",
    "unreduced=min{\"model\", \"data\"}",
    "replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = [#stablehlo.axis_ref<name = \"data\">]>",
    "#stablehlo.replica_group_mesh_axes<mesh = @nomesh, axes = []>",
    "#stablehlo.axis_ref<name = \"model\", sub_axis_info = #stablehlo.sub_axis_info<pre_size = 1, size = 2>>",
    "stablehlo.custom_call @foo(%0) : (tensor<8xf32>) -> tensor<8xf32>",
    "stablehlo.custom_call @\"reduce-scatter-done\"",
    "sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=4}>",
    "stablehlo.after_all",
    "chlo.ragged_dot",
    "mhlo.memory_kind = \"pinned_host\"",
    "tensor<",
    "tensor<8xf32>",
    "tensor<0x4xf32>",
    "tensor<?x4xf32>",
    "tensor<4x4xi1>",
    "!stablehlo.token",
    ">",
    "<",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    "%0",
    "%arg0",
    "%999",
    "@main",
    "@mesh",
    "dense<1.0>",
    "dense<[1, 2]>",
    "sdy.mesh @m2 = <[\"data\"=0]>",
    "sdy.mesh @m3 = <[\"a\"=2, \"a\"=2]>",
    "#sdy.sharding<@mesh, [{\"data\"}, {\"data\"}]>",
    "#sdy.sharding<@nomesh, [{}]>",
    "sdy.sharding_constraint",
    "stablehlo.while",
    "stablehlo.case",
    "func.call @main",
    "dims = [5]",
    "contracting_dims = [0] x [0]",
    "\"",
    "\n",
];

/// Words exchanged for one another.
const SWAPS: &[&[&str]] = &[
    &["f32", "f16", "bf16", "f64", "i32", "i64", "i1", "ui8"],
    &["\"data\"", "\"model\"", "\"x\"", "\"nope\""],
    &[
        "stablehlo.add",
        "stablehlo.multiply",
        "stablehlo.maximum",
        "stablehlo.dot_general",
        "stablehlo.tanh",
        "stablehlo.reshape",
        "stablehlo.transpose",
        "stablehlo.gather",
    ],
    &["@mesh", "@other", "@main"],
    &["{}", "{?}", "{\"data\"}"],
];

/// Apply 1 to 3 random mutations to `text`.
pub fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut s = text.to_string();
    for _ in 0..1 + rng.below(3) {
        s = mutate_once(&s, rng);
    }
    s
}

fn mutate_once(s: &str, rng: &mut Rng) -> String {
    if s.is_empty() {
        return rng.pick(SNIPPETS).to_string();
    }
    match rng.below(10) {
        0 => replace_number(s, rng),
        1 => edit_lines(s, rng, |lines, rng| {
            let i = rng.below(lines.len());
            lines.remove(i);
        }),
        2 => edit_lines(s, rng, |lines, rng| {
            let i = rng.below(lines.len());
            let line = lines[i].clone();
            lines.insert(rng.below(lines.len() + 1), line);
        }),
        3 => edit_lines(s, rng, |lines, rng| {
            let (i, j) = (rng.below(lines.len()), rng.below(lines.len()));
            lines.swap(i, j);
        }),
        4 => {
            let at = char_boundary(s, rng.below(s.len()));
            let end = char_boundary(s, (at + 1 + rng.below(20)).min(s.len()));
            format!("{}{}", &s[..at], &s[end..])
        }
        5 => {
            let at = char_boundary(s, rng.below(s.len() + 1));
            format!("{}{}{}", &s[..at], rng.pick(SNIPPETS), &s[at..])
        }
        6 => swap_word(s, rng),
        7 => s[..char_boundary(s, rng.below(s.len()))].to_string(),
        8 => {
            let from = char_boundary(s, rng.below(s.len()));
            let to = char_boundary(s, (from + 1 + rng.below(80)).min(s.len()));
            let at = char_boundary(s, rng.below(s.len() + 1));
            format!("{}{}{}", &s[..at], &s[from..to], &s[at..])
        }
        _ => {
            let at = char_boundary(s, rng.below(s.len()));
            let c = (b' ' + rng.below(95) as u8) as char;
            let mut out = s.to_string();
            let end = char_boundary(s, at + 1);
            out.replace_range(at..end.max(at), &c.to_string());
            out
        }
    }
}

/// The largest char boundary of `s` at or before `i`.
fn char_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn edit_lines(s: &str, rng: &mut Rng, edit: impl FnOnce(&mut Vec<String>, &mut Rng)) -> String {
    let mut lines: Vec<String> = s.lines().map(str::to_string).collect();
    if lines.is_empty() {
        return String::new();
    }
    edit(&mut lines, rng);
    lines.join("\n")
}

/// Replace one run of digits by an absurd number or its neighbour.
fn replace_number(s: &str, rng: &mut Rng) -> String {
    let runs: Vec<(usize, usize)> = {
        let b = s.as_bytes();
        let mut runs = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if b[i].is_ascii_digit() {
                let start = i;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                runs.push((start, i));
            } else {
                i += 1;
            }
        }
        runs
    };
    if runs.is_empty() {
        return s.to_string();
    }
    let (start, end) = *rng.pick(&runs);
    let new = match rng.below(3) {
        0 => s[start..end]
            .parse::<u64>()
            .map(|n| n.saturating_add(1).to_string())
            .unwrap_or_else(|_| "1".into()),
        1 => s[start..end]
            .parse::<u64>()
            .map(|n| n.saturating_sub(1).to_string())
            .unwrap_or_else(|_| "0".into()),
        _ => rng.pick(NUMBERS).to_string(),
    };
    format!("{}{}{}", &s[..start], new, &s[end..])
}

/// Exchange one occurrence of a word for another of its family.
fn swap_word(s: &str, rng: &mut Rng) -> String {
    let family = *rng.pick(SWAPS);
    let found: Vec<(usize, &str)> = family
        .iter()
        .flat_map(|w| s.match_indices(w).map(move |(i, _)| (i, *w)))
        .collect();
    if found.is_empty() {
        return s.to_string();
    }
    let (at, word) = *rng.pick(&found);
    let new = rng.pick(family);
    format!("{}{}{}", &s[..at], new, &s[at + word.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_are_reproducible_and_change_the_text() {
        let text = "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n  return %arg0 : tensor<8xf32>\n}\n";
        let a: Vec<String> = (0..50).map(|s| mutate(text, &mut Rng::new(s))).collect();
        let b: Vec<String> = (0..50).map(|s| mutate(text, &mut Rng::new(s))).collect();
        assert_eq!(a, b);
        assert!(a.iter().filter(|m| m.as_str() != text).count() > 40);
    }
}
