//! `propagation_pipeline.mlir`: the cases with `func.call` (Shardy's
//! conservative pipeline: calls become named computations, propagation
//! runs through them, and they come back as private functions whose
//! argument and result shardings are what propagation found; functions
//! with one origin and one signature are printed once, a function called
//! with different shardings once per sharding, named `f`, `f_0`, ...).
//!
//! Not ported: the last case (a callee constraining an `unreduced`
//! argument, checking that no `sdy.replicated_to_unreduced` collective is
//! inserted): meshrun's export inserts no explicit collectives.

use meshrun_compiler::propagation::Strategy;
use meshrun_compiler::text::print_module;

use crate::propagation_support::run_ok;

fn propagated(funcs: &str) -> String {
    let src = format!("module @m {{\n  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n{funcs}\n}}\n");
    print_module(&run_ok(&src, Strategy::Full))
}

/// The lines of `text` that start (after indentation) with `func.func` or
/// contain `call @`, trimmed, in order.
fn outline(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| l.starts_with("func.func") || l.contains("call @"))
        .map(str::to_string)
        .collect()
}

const A: &str = r#"#sdy.sharding<@mesh, [{"a"}, {}]>"#;
const B: &str = r#"#sdy.sharding<@mesh, [{"b"}, {}]>"#;

fn arg(s: &str) -> String {
    format!("%arg0: tensor<8x2xi32> {{sdy.sharding = {s}}}")
}

fn per_value(s: &str) -> String {
    let inner = s
        .trim_start_matches("#sdy.sharding")
        .trim_start_matches('<')
        .trim_end_matches('>');
    format!("{{sdy.sharding = #sdy.sharding_per_value<[<{inner}>]>}}")
}

fn signature(name: &str, private: bool, arg_s: &str, res_s: &str) -> String {
    format!(
        "func.func {}@{name}({}) -> (tensor<8x2xi32> {{sdy.sharding = {res_s}}}) {{",
        if private { "private " } else { "" },
        arg(arg_s)
    )
}

fn call(result: &str, callee: &str, operand: &str, s: &str) -> String {
    format!(
        "{result} = call @{callee}({operand}) {} : (tensor<8x2xi32>) -> tensor<8x2xi32>",
        per_value(s)
    )
}

/// `call_argument_sharding_propagation`: into the callee from the
/// caller's argument, and back out to the caller's result.
#[test]
fn call_argument_sharding_reaches_the_callee() {
    let t = propagated(&format!(
        r#"  func.func @main({}) -> tensor<8x2xi32> {{
    %0 = stablehlo.add %arg0, %arg0 : tensor<8x2xi32>
    %1 = call @foo(%0) : (tensor<8x2xi32>) -> tensor<8x2xi32>
    return %1 : tensor<8x2xi32>
  }}
  func.func private @foo(%arg0: tensor<8x2xi32>) -> tensor<8x2xi32> {{
    return %arg0 : tensor<8x2xi32>
  }}"#,
        arg(A)
    ));
    assert_eq!(
        outline(&t),
        [
            signature("main", false, A, A),
            call("%1", "foo", "%0", A),
            signature("foo", true, A, A),
        ]
    );
}

/// `call_result_sharding_propagation`: from the caller's result back into
/// the callee's body and out to the caller's argument.
#[test]
fn call_result_sharding_reaches_the_callee() {
    let t = propagated(&format!(
        r#"  func.func @main(%arg0: tensor<8x2xi32>) -> (tensor<8x2xi32> {{sdy.sharding = {A}}}) {{
    %0 = stablehlo.add %arg0, %arg0 : tensor<8x2xi32>
    %1 = call @foo(%0) : (tensor<8x2xi32>) -> tensor<8x2xi32>
    return %1 : tensor<8x2xi32>
  }}
  func.func private @foo(%arg0: tensor<8x2xi32>) -> tensor<8x2xi32> {{
    %0 = stablehlo.subtract %arg0, %arg0 : tensor<8x2xi32>
    return %0 : tensor<8x2xi32>
  }}"#
    ));
    assert_eq!(
        outline(&t),
        [
            signature("main", false, A, A),
            call("%1", "foo", "%0", A),
            signature("foo", true, A, A),
        ]
    );
    assert!(t.contains(&format!(
        "%0 = stablehlo.subtract %arg0, %arg0 {} : tensor<8x2xi32>",
        per_value(A)
    )));
}

/// `call_inside_out_propagation`: two constraints inside the callee give
/// its argument ["a"] and its result ["b"]; the caller follows both ways,
/// and the constraints become reshards.
#[test]
fn call_constraints_inside_shard_both_sides() {
    let t = propagated(
        r#"  func.func @main(%arg0: tensor<8x2xi32>) -> tensor<8x2xi32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<8x2xi32>
    %1 = call @foo(%0) : (tensor<8x2xi32>) -> tensor<8x2xi32>
    return %1 : tensor<8x2xi32>
  }
  func.func private @foo(%arg0: tensor<8x2xi32>) -> tensor<8x2xi32> {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"a"}, {}]> : tensor<8x2xi32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"b"}, {}]> : tensor<8x2xi32>
    return %1 : tensor<8x2xi32>
  }"#,
    );
    assert_eq!(
        outline(&t),
        [
            signature("main", false, A, B),
            call("%1", "foo", "%0", B),
            signature("foo", true, A, B),
        ]
    );
    assert!(t.contains(r#"%0 = sdy.reshard %arg0 <@mesh, [{"a"}, {}]> : tensor<8x2xi32>"#));
    assert!(t.contains(r#"%1 = sdy.reshard %0 <@mesh, [{"b"}, {}]> : tensor<8x2xi32>"#));
}

/// `simple non flat`: a function called twice with one sharding is
/// printed once and both calls call it.
#[test]
fn function_called_twice_alike_is_kept_once() {
    let t = propagated(&format!(
        r#"  func.func @main({}) -> tensor<8x2xi32> {{
    %0 = stablehlo.add %arg0, %arg0 : tensor<8x2xi32>
    %1 = call @foo(%0) : (tensor<8x2xi32>) -> tensor<8x2xi32>
    %2 = call @foo(%0) : (tensor<8x2xi32>) -> tensor<8x2xi32>
    return %2 : tensor<8x2xi32>
  }}
  func.func private @foo(%arg0: tensor<8x2xi32>) -> tensor<8x2xi32> {{
    return %arg0 : tensor<8x2xi32>
  }}"#,
        arg(A)
    ));
    assert_eq!(
        outline(&t),
        [
            signature("main", false, A, A),
            call("%1", "foo", "%0", A),
            call("%2", "foo", "%0", A),
            signature("foo", true, A, A),
        ]
    );
}

const MAIN_FOO_BAR: &str = r#"    %0 = stablehlo.add %arg0, %arg0 : tensor<8x2xi32>
    %1 = call @foo(%0) : (tensor<8x2xi32>) -> tensor<8x2xi32>
    %2 = call @bar(%1) : (tensor<8x2xi32>) -> tensor<8x2xi32>
    return %2 : tensor<8x2xi32>
  }"#;

const BAR: &str = r#"  func.func private @bar(%arg0: tensor<8x2xi32>) -> tensor<8x2xi32> {
    return %arg0 : tensor<8x2xi32>
  }"#;

/// `a non flat call graph ... propagates from main` and `... propagates
/// from foo`: main calls foo and bar, foo calls bar; both bar calls end up
/// with one sharding and call one function, `bar_0` (the copy exported
/// from main's call, after `bar` was taken by foo's).
#[test]
fn non_flat_call_graph_dedups_to_one_copy() {
    for (main_arg, foo_abs) in [
        (arg(A), String::new()),
        (
            "%arg0: tensor<8x2xi32>".to_string(),
            format!("{} ", per_value(A)),
        ),
    ] {
        let t = propagated(&format!(
            r#"  func.func @main({main_arg}) -> tensor<8x2xi32> {{
{MAIN_FOO_BAR}
  func.func private @foo(%arg0: tensor<8x2xi32>) -> tensor<8x2xi32> {{
    %0 = stablehlo.abs %arg0 {foo_abs}: tensor<8x2xi32>
    %1 = call @bar(%0) : (tensor<8x2xi32>) -> tensor<8x2xi32>
    return %1 : tensor<8x2xi32>
  }}
{BAR}"#
        ));
        assert_eq!(
            outline(&t),
            [
                signature("main", false, A, A),
                call("%1", "foo", "%0", A),
                call("%2", "bar_0", "%1", A),
                signature("foo", true, A, A),
                call("%1", "bar_0", "%0", A),
                signature("bar_0", true, A, A),
            ],
            "{t}"
        );
    }
}

/// `... two bar calls have different shardings`: one function per
/// sharding (`bar` for foo's call on ["b"], `bar_0` for main's on ["a"]),
/// and foo's second constraint becomes a reshard before its call.
#[test]
fn function_called_with_different_shardings_is_kept_per_sharding() {
    let t = propagated(
        r#"  func.func @main(%arg0: tensor<8x2xi32>) -> tensor<8x2xi32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<8x2xi32>
    %1 = call @foo(%0) : (tensor<8x2xi32>) -> tensor<8x2xi32>
    %2 = call @bar(%0) : (tensor<8x2xi32>) -> tensor<8x2xi32>
    return %2 : tensor<8x2xi32>
  }
  func.func private @bar(%arg0: tensor<8x2xi32>) -> tensor<8x2xi32> {
    return %arg0 : tensor<8x2xi32>
  }
  func.func private @foo(%arg0: tensor<8x2xi32>) -> tensor<8x2xi32> {
    %0 = stablehlo.abs %arg0 : tensor<8x2xi32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"a"}, {}]> : tensor<8x2xi32>
    %2 = sdy.sharding_constraint %0 <@mesh, [{"b"}, {}]> : tensor<8x2xi32>
    %3 = call @bar(%2) : (tensor<8x2xi32>) -> tensor<8x2xi32>
    return %3 : tensor<8x2xi32>
  }"#,
    );
    let o = outline(&t);
    assert_eq!(
        o,
        [
            signature("main", false, A, A),
            call("%1", "foo", "%0", B),
            call("%2", "bar_0", "%0", A),
            signature("bar", true, B, B),
            signature("foo", true, A, B),
            o[5].clone(),
            signature("bar_0", true, A, A),
        ],
        "{t}"
    );
    assert!(
        o[5].contains("call @bar(")
            && o[5].ends_with(&format!(
                "{} : (tensor<8x2xi32>) -> tensor<8x2xi32>",
                per_value(B)
            )),
        "{t}"
    );
    assert!(
        t.contains(&format!(
            "stablehlo.abs %arg0 {} : tensor<8x2xi32>",
            per_value(A)
        )),
        "{t}"
    );
    assert!(
        t.contains(r#"sdy.reshard %0 <@mesh, [{"b"}, {}]> : tensor<8x2xi32>"#),
        "{t}"
    );
}

/// A call inside a loop body (how JAX lowers `fori_loop`'s body, here
/// `compiler/tests/data/jax_cond_fori.mlir` with one argument sharded):
/// the call stays in the body, and the callee's signature has the loop's
/// shardings.
#[test]
fn call_inside_a_loop_body_is_kept() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/jax_cond_fori.mlir");
    let src = std::fs::read_to_string(path).expect("test data");
    let src = src
        .replacen(
            "attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {",
            "{\n  sdy.mesh @mesh = <[\"x\"=2, \"y\"=2]>",
            1,
        )
        .replacen(
            "%arg1: tensor<4x4xf32>, %arg2",
            "%arg1: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {}]>}, %arg2",
            1,
        );
    let m = run_ok(&src, Strategy::Full);
    assert_eq!(m.funcs.len(), 2);
    let main = m.entry().unwrap();
    let calls: Vec<_> = main
        .all_ops()
        .into_iter()
        .filter(|&id| main.op(id).kind.callee() == Some("closed_call"))
        .collect();
    assert_eq!(calls.len(), 1, "the call stays in the loop body");
    assert!(!main.body.contains(&calls[0]));
    let x = r#"<@mesh, [{"x"}, {}]>"#;
    let callee = m.func("closed_call").expect("callee kept");
    let s = |p: &meshrun_compiler::ir::ParamAttrs| p.sharding.as_ref().map(|s| s.to_string());
    assert_eq!(s(&callee.arg_attrs[2]).as_deref(), Some(x));
    assert_eq!(s(&callee.result_attrs[1]).as_deref(), Some(x));
    let call = main.op(calls[0]);
    assert_eq!(
        call.shardings.as_ref().map(|v| v[1].to_string()).as_deref(),
        Some(x)
    );
}

/// Function names and callees of `text`, in print order (`func @f`,
/// `call @g`).
fn order(text: &str) -> Vec<String> {
    outline(text)
        .iter()
        .map(|l| {
            let at = l.find('@').unwrap_or(0);
            let name: String = l[at + 1..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let kind = if l.starts_with("func.func") {
                "func"
            } else {
                "call"
            };
            format!("{kind} @{name}")
        })
        .collect()
}

/// The order in which Shardy prints the functions: its `PreOrderFuncsPass`
/// puts them in reverse post-order of the call graph, and every call is a
/// named computation by then, so the functions no one calls come in
/// reverse (`@other` before `@main`); `ExportNamedComputationsPass` then
/// appends the callees in that order, innermost first (`@other`'s `@baz`
/// takes the plain name, `@main`'s is `@baz_0`). A callee defined before
/// its callers (`@foo`, public) comes back after them, private; the
/// private function no one calls is dropped. Expected: what the
/// `sdy-propagation-pipeline` of JAX 0.10.2's jaxlib printed for this
/// module (none of Shardy's lit cases has two uncalled functions).
#[test]
fn functions_print_in_shardys_order() {
    let t = propagated(&format!(
        r#"  func.func @foo(%arg0: tensor<8x2xi32>) -> tensor<8x2xi32> {{
    %0 = stablehlo.negate %arg0 : tensor<8x2xi32>
    return %0 : tensor<8x2xi32>
  }}
  func.func private @unused(%arg0: tensor<8x2xi32>) -> tensor<8x2xi32> {{
    return %arg0 : tensor<8x2xi32>
  }}
  func.func @main({}) -> tensor<8x2xi32> {{
    %1 = call @foo(%arg0) : (tensor<8x2xi32>) -> tensor<8x2xi32>
    %2 = call @baz(%1) : (tensor<8x2xi32>) -> tensor<8x2xi32>
    return %2 : tensor<8x2xi32>
  }}
  func.func @other({}) -> tensor<8x2xi32> {{
    %1 = call @baz(%arg0) : (tensor<8x2xi32>) -> tensor<8x2xi32>
    return %1 : tensor<8x2xi32>
  }}
  func.func private @baz(%arg0: tensor<8x2xi32>) -> tensor<8x2xi32> {{
    %0 = stablehlo.abs %arg0 : tensor<8x2xi32>
    return %0 : tensor<8x2xi32>
  }}"#,
        arg(A),
        arg(B)
    ));
    assert_eq!(
        order(&t),
        [
            "func @other",
            "call @baz",
            "func @main",
            "call @foo",
            "call @baz_0",
            "func @baz",
            "func @foo",
            "func @baz_0",
        ],
        "{t}"
    );
    assert!(t.contains(&signature("baz", true, B, B)), "{t}");
    assert!(t.contains(&signature("foo", true, A, A)), "{t}");
    assert!(t.contains(&signature("baz_0", true, A, A)), "{t}");
}

/// Several callers of one function with one sharding: the function is
/// exported from `@main` first (now first), and `@f1`'s copy, the same
/// sharding, is deduplicated into it (JAX 0.10.2's Shardy printed this
/// order too). A public function called by another (`@f2`) is printed as
/// a private callee.
#[test]
fn callees_follow_the_reversed_callers() {
    let t = propagated(&format!(
        r#"  func.func @f1({}) -> tensor<8x2xi32> {{
    %1 = call @g(%arg0) : (tensor<8x2xi32>) -> tensor<8x2xi32>
    return %1 : tensor<8x2xi32>
  }}
  func.func @f2(%arg0: tensor<8x2xi32>) -> tensor<8x2xi32> {{
    %0 = stablehlo.abs %arg0 : tensor<8x2xi32>
    return %0 : tensor<8x2xi32>
  }}
  func.func private @g(%arg0: tensor<8x2xi32>) -> tensor<8x2xi32> {{
    %0 = stablehlo.negate %arg0 : tensor<8x2xi32>
    return %0 : tensor<8x2xi32>
  }}
  func.func @main({}) -> tensor<8x2xi32> {{
    %1 = call @g(%arg0) : (tensor<8x2xi32>) -> tensor<8x2xi32>
    %2 = call @f2(%1) : (tensor<8x2xi32>) -> tensor<8x2xi32>
    return %2 : tensor<8x2xi32>
  }}"#,
        arg(A),
        arg(A)
    ));
    assert_eq!(
        order(&t),
        [
            "func @main",
            "call @g",
            "call @f2",
            "func @f1",
            "call @g",
            "func @g",
            "func @f2",
        ],
        "{t}"
    );
}
