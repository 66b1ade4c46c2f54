//! Bad input gives a positioned `Diagnostic` naming what is wrong, and no
//! input makes the parser panic (truncations at every byte, garbage, and
//! random single-byte edits of a valid module).

use std::path::PathBuf;

use meshrun_compiler::text::{parse_module, print_module};
use meshrun_compiler::{DiagKind, Diagnostic};

/// Parse `src`, expect an error of `kind` at `line:col` whose message
/// contains every string of `needles`.
fn expect_error(src: &str, kind: DiagKind, line: u32, col: u32, needles: &[&str]) -> Diagnostic {
    let e = match parse_module(src) {
        Ok(_) => panic!("expected an error for:\n{src}"),
        Err(e) => e,
    };
    assert_eq!(e.kind, kind, "kind of `{}` for:\n{src}", e.message);
    assert_eq!(
        (e.pos.line, e.pos.col),
        (line, col),
        "position of `{}` for:\n{src}",
        e.message
    );
    for n in needles {
        assert!(e.message.contains(n), "message `{}` lacks `{n}`", e.message);
    }
    e
}

const MESH: &str = "sdy.mesh @mesh = <[\"x\"=2, \"y\"=2]>\n";

#[test]
fn missing_closing_brace() {
    expect_error(
        "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = stablehlo.tanh %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n",
        DiagKind::Syntax,
        4,
        1,
        &["expected '}'", "function body", "end of input"],
    );
    expect_error(
        "module {\n  func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n    return %a : tensor<4xf32>\n  }\n",
        DiagKind::Syntax,
        5,
        1,
        &["'}'", "end of input"],
    );
}

#[test]
fn unknown_ops_pretty_and_generic() {
    expect_error(
        "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = stablehlo.fft %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}",
        DiagKind::UnknownOp,
        2,
        8,
        &["unknown op 'stablehlo.fft'"],
    );
    expect_error(
        "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = \"stablehlo.fft\"(%a) : (tensor<4xf32>) -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n}",
        DiagKind::UnknownOp,
        2,
        8,
        &["unknown op 'stablehlo.fft'"],
    );
    expect_error(
        "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = sdy.unknown_computation<\"g\">(%a) (%b: tensor<4xf32>) {\n    sdy.return %b : tensor<4xf32>\n  } : (tensor<4xf32>) -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n}",
        DiagKind::UnknownOp,
        2,
        8,
        &["'sdy.unknown_computation'"],
    );
}

#[test]
fn undefined_names() {
    expect_error(
        "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = stablehlo.tanh %x : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}",
        DiagKind::UndefinedName,
        2,
        23,
        &["undefined value '%x'"],
    );
    expect_error(
        "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %b : tensor<4xf32>\n}",
        DiagKind::UndefinedName,
        2,
        10,
        &["'%b'"],
    );
    expect_error(
        "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = call @g(%a) : (tensor<4xf32>) -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n}",
        DiagKind::UndefinedName,
        2,
        13,
        &["undefined function '@g'"],
    );
    expect_error(
        "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0:2 = call @f(%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)\n  return %0#2 : tensor<4xf32>\n}",
        DiagKind::UndefinedName,
        3,
        10,
        &["%0#2"],
    );
}

#[test]
fn malformed_shardings() {
    // `{"x"` never closed: the bracket balance of the attribute breaks first.
    expect_error(
        &format!("{MESH}func.func @f(%a: tensor<4xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{\"x\"]>}}) {{\n  return\n}}"),
        DiagKind::Syntax,
        2,
        74,
        &["expected '}'", "sdy.sharding"],
    );
    // Balanced but wrong inside: a missing comma between axes.
    expect_error(
        &format!("{MESH}func.func @f(%a: tensor<4xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{\"x\" \"y\"}}]>}}) {{\n  return\n}}"),
        DiagKind::Syntax,
        2,
        75,
        &["expected ',' or '}'", "dimension sharding"],
    );
    expect_error(
        &format!("{MESH}func.func @f(%a: tensor<4xf32>) {{\n  %0 = stablehlo.negate %a {{sdy.sharding = #sdy.sharding<@mesh, [{{}}]>}} : tensor<4xf32>\n  return\n}}"),
        DiagKind::Syntax,
        3,
        44,
        &["#sdy.sharding_per_value"],
    );
    expect_error(
        &format!("{MESH}func.func @f(%a: tensor<4xf32>) {{\n  %0 = sdy.reshard %a <@mesh, [{{\"x\":(1}}]> : tensor<4xf32>\n  return\n}}"),
        DiagKind::Syntax,
        3,
        39,
        &["expected ')'", "sub-axis"],
    );
}

#[test]
fn bad_types() {
    expect_error(
        "func.func @f(%a: tensor<4xf99>) {\n  return\n}",
        DiagKind::Type,
        1,
        27,
        &["unknown element type 'f99'"],
    );
    expect_error(
        "func.func @f(%a: tensor<?x4xf32>) {\n  return\n}",
        DiagKind::Unsupported,
        1,
        25,
        &["dynamic dimension"],
    );
    expect_error(
        "func.func @f(%a: !stablehlo.buffer) {\n  return\n}",
        DiagKind::Unsupported,
        1,
        18,
        &["'!stablehlo.buffer'"],
    );
    expect_error(
        "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = stablehlo.tanh %a : tensor<8xf32>\n  return %0 : tensor<4xf32>\n}",
        DiagKind::Type,
        2,
        23,
        &["tensor<4xf32>", "tensor<8xf32>"],
    );
    expect_error(
        "func.func @f(%a: tensor<4xf32>) -> tensor<8xf32> {\n  return %a : tensor<4xf32>\n}",
        DiagKind::Type,
        2,
        10,
        &["returns tensor<8xf32>"],
    );
}

#[test]
fn wrong_arity() {
    expect_error(
        "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = stablehlo.add %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}",
        DiagKind::Syntax,
        2,
        8,
        &["'stablehlo.add' expects 2 operand(s), found 1"],
    );
    expect_error(
        "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = \"stablehlo.tanh\"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n}",
        DiagKind::Syntax,
        2,
        8,
        &["'stablehlo.tanh' expects 1 operand(s), found 2"],
    );
    expect_error(
        "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0, %1 = stablehlo.tanh %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}",
        DiagKind::Syntax,
        2,
        3,
        &["produces 1 result(s) but 2 name(s)"],
    );
    expect_error(
        "func.func @f(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {\n  return %a : tensor<4xf32>\n}",
        DiagKind::Type,
        2,
        3,
        &["return has 1 operand(s)", "returns 2"],
    );
}

#[test]
fn other_syntax_errors() {
    expect_error(
        "func.func @f(%a: tensor<4xf32>) {\n  %0 = stablehlo.add %a, %a {foo = \"abc} : tensor<4xf32>\n  return\n}",
        DiagKind::Syntax,
        2,
        36,
        &["unterminated string"],
    );
    expect_error(
        "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = stablehlo.tanh %a : tensor<4xf32>\n  %0 = stablehlo.tanh %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}",
        DiagKind::Syntax,
        3,
        3,
        &["redefinition of value '%0'"],
    );
    expect_error(
        "func.func @f(%a: tensor<4xf32>) {\n  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<4xf32>\n  return\n}",
        DiagKind::Type,
        2,
        42,
        &["2 elements", "tensor<4xf32>"],
    );
    expect_error(
        "func.func @f(%a: tensor<4xf32>) {\n  %0 = stablehlo.compare XX, %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n  return\n}",
        DiagKind::Syntax,
        2,
        26,
        &["comparison direction"],
    );
    expect_error(
        "func.func @f(%a: tensor<4xf32>) {\n  %0 = \"stablehlo.iota\"() : () -> tensor<4xi32>\n  return\n}",
        DiagKind::Syntax,
        2,
        8,
        &["needs attribute 'iota_dimension'"],
    );
    expect_error(
        "func.func @f() {\n  return\n}\nfunc.func @f() {\n  return\n}",
        DiagKind::Syntax,
        4,
        11,
        &["redefinition of symbol '@f'"],
    );
    expect_error(
        "module {\n} extra",
        DiagKind::Syntax,
        2,
        3,
        &["end of input"],
    );
    expect_error(
        "func.func @f() {\n  return\n}\n$",
        DiagKind::Syntax,
        4,
        1,
        &["unexpected character '$'"],
    );
    expect_error(
        "func.func private @decl(%a: tensor<4xf32>) -> tensor<4xf32>\n",
        DiagKind::Unsupported,
        2,
        1,
        &["no body"],
    );
}

#[test]
fn malformed_reduce_bodies() {
    expect_error(
        "func.func @f(%a: tensor<4xf32>, %s: tensor<f32>) {\n  %0 = stablehlo.reduce(%a init: %s) applies stablehlo.negate across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n  return\n}",
        DiagKind::Unsupported,
        2,
        46,
        &["stablehlo.negate", "binary element-wise op"],
    );
    expect_error(
        "func.func @f(%a: tensor<4xf32>, %s: tensor<f32>) {\n  %0:2 = stablehlo.reduce(%a init: %s), (%a init: %s) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)\n  return\n}",
        DiagKind::Syntax,
        2,
        10,
        &["'applies' needs exactly one input"],
    );
    expect_error(
        "func.func @f(%a: tensor<4xf32>, %s: tensor<f32>) {\n  %0 = stablehlo.reduce(%a init: %s) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n   reducer(%x: tensor<f32>, %y: tensor<f32>, %z: tensor<f32>) {\n     stablehlo.return %x : tensor<f32>\n   }\n  return\n}",
        DiagKind::Syntax,
        3,
        11,
        &["two arguments, found 3"],
    );
    expect_error(
        "func.func @f(%a: tensor<4xf32>, %s: tensor<f32>) {\n  %0 = stablehlo.reduce(%a init: %s) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n  return\n}",
        DiagKind::Syntax,
        3,
        3,
        &["expected 'reducer'"],
    );
}

fn valid_module() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/all_ops.mlir");
    std::fs::read_to_string(path).expect("all_ops.mlir")
}

/// Parse; when that succeeds, the module must round-trip exactly and its
/// printing must be a fixed point. Nothing may panic.
fn no_panic(src: &str) {
    if let Ok(m) = parse_module(src) {
        let printed = print_module(&m);
        let again = parse_module(&printed).unwrap_or_else(|e| {
            panic!(
                "printed text of a parsed module must parse: {e}\n{printed}\n--- from ---\n{src}"
            )
        });
        assert!(
            again == m,
            "parse(print(m)) != m for:\n{src}\n--- printed ---\n{printed}"
        );
        assert_eq!(
            print_module(&again),
            printed,
            "printing is not a fixed point"
        );
    }
}

#[test]
fn truncations_at_every_byte_never_panic() {
    let src = valid_module();
    assert!(parse_module(&src).is_ok());
    for end in 0..src.len() {
        if src.is_char_boundary(end) {
            let cut = &src[..end];
            if let Err(e) = parse_module(cut) {
                assert!(
                    e.pos.is_known(),
                    "error without a position for a cut at {end}: {e}"
                );
            }
            no_panic(cut);
        }
    }
}

/// A small deterministic generator (xorshift64*), to keep the test
/// reproducible without extra dependencies.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn garbage_and_mutations_never_panic() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    // Pure garbage, from all bytes and from MLIR-ish punctuation.
    let alphabet = b"%@#^!\"(){}[]<>,:=-?*+0123456789xabcdefp. \n\\";
    for _ in 0..2000 {
        let len = rng.below(80);
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                if rng.below(2) == 0 {
                    rng.next() as u8
                } else {
                    alphabet[rng.below(alphabet.len())]
                }
            })
            .collect();
        no_panic(&String::from_utf8_lossy(&bytes));
    }
    // Single-byte edits of a valid module: replace, delete, or insert.
    let src = valid_module().into_bytes();
    for _ in 0..3000 {
        let mut bytes = src.clone();
        let at = rng.below(bytes.len());
        let b = alphabet[rng.below(alphabet.len())];
        match rng.below(3) {
            0 => bytes[at] = b,
            1 => {
                bytes.remove(at);
            }
            _ => bytes.insert(at, b),
        }
        no_panic(&String::from_utf8_lossy(&bytes));
    }
    // Hostile shapes: deep brackets, huge dims, huge integers.
    for src in [
        format!("module attributes {{a = {}}} {{}}", "[".repeat(100_000)),
        format!("func.func @f(%a: tensor<{}f32>) {{\n return\n}}", "1x".repeat(10_000)),
        "func.func @f() {\n %0 = stablehlo.constant dense<1.0> : tensor<4294967296x4294967296x4294967296xf32>\n return\n}".into(),
        "func.func @f() {\n %0 = stablehlo.constant dense<[1.0]> : tensor<4294967296x4294967296x4294967296xf32>\n return\n}".into(),
        "func.func @f() {\n %0 = stablehlo.iota dim = 99999999999999999999999 : tensor<4xi32>\n return\n}".into(),
        "func.func @f(%a: tensor<99999999999999999999xf32>) {\n return\n}".into(),
        "func.func @f() {\n %0:4294967295 = stablehlo.iota dim = 0 : tensor<4xi32>\n return\n}".into(),
    ] {
        no_panic(&src);
    }
}
