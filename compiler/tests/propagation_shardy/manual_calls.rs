//! Calls inside `sdy.manual_computation` bodies, as Shardy's call-graph
//! passes keep them (`export/test/unflatten_call_graph.mlir` and
//! `export_named_computations.mlir`: the `*_with_manual_axes*` and
//! `*_one_inside_manual_computation` cases). Shardy's cases start from the
//! state its import left (named computations, flattened `foo_0` copies,
//! `sdy.func_manual_axes`); here the same programs are written as JAX
//! writes them (plain private functions) and run through the whole
//! pipeline. What Shardy's CHECK lines give and meshrun must match: a call
//! in a body keeps calling a function in the body's local shapes, with the
//! free axes propagation found as its signature; calls of one function
//! with one signature print one function (`foo`), a function called in a
//! body and outside with different local shapes two; the manual
//! computation's own shardings are unchanged.
//!
//! Not ported as cases of their own: `unflatten_call_graph.mlir`'s
//! `calls_with_manual_axes` and `export_named_computations.mlir`'s
//! `named_computations_*_with_manual_axes*` (the same behaviour from
//! Shardy's intermediate forms, `sdy.func_manual_axes` and named
//! computations holding manual computations, which meshrun's pipeline
//! never produces), and `flatten_call_graph.mlir`'s
//! `simple_non_flat_with_manual_computations` (meshrun's import copies each
//! call site's callee, see `call_passes.rs`).

use meshrun_compiler::propagation::Strategy;
use meshrun_compiler::text::print_module;

use crate::propagation_support::run_ok;

const MESH: &str = r#"sdy.mesh @mesh = <["x"=2, "y"=2]>"#;

fn propagated(funcs: &str) -> String {
    let src = format!("module @m {{\n  {MESH}\n{funcs}\n}}\n");
    print_module(&run_ok(&src, Strategy::Full))
}

/// The function signatures, calls and manual computations of `text`,
/// trimmed (without value names before `=`).
fn outline(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| {
            l.starts_with("func.func") || l.contains("call @") || l.contains("manual_computation")
        })
        .map(|l| match l.find(" = ") {
            Some(at) if !l.starts_with("func.func") => l[at + 3..].to_string(),
            _ => l.to_string(),
        })
        .map(|l| {
            l.split(" : ")
                .next()
                .unwrap_or("")
                .replace("func.call @", "call @")
        })
        .collect()
}

fn abs_fn(name: &str, ty: &str) -> String {
    format!(
        "  func.func private @{name}(%arg0: {ty}) -> {ty} {{\n    %0 = stablehlo.abs %arg0 : {ty}\n    return %0 : {ty}\n  }}"
    )
}

const XY: &str = r#"<@mesh, [{"x", "y"}]>"#;
const Y_ARG: &str = r#"{sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}"#;
const Y_CALL: &str = r#"{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}]>]>}"#;

fn manual_over_x(calls: &str) -> String {
    format!(
        "    %0 = sdy.manual_computation(%arg0) in_shardings=[{XY}] out_shardings=[{XY}] manual_axes={{\"x\"}} (%arg1: tensor<4xf32>) {{\n{calls}\n    }} : (tensor<8xf32>) -> tensor<8xf32>"
    )
}

fn main_fn(body: &str, ret: &str) -> String {
    format!(
        "  func.func @main(%arg0: tensor<8xf32> {{sdy.sharding = #sdy.sharding{XY}}}) -> tensor<8xf32> {{\n{body}\n    return {ret} : tensor<8xf32>\n  }}"
    )
}

fn foo_signature(name: &str) -> String {
    format!("func.func private @{name}(%arg0: tensor<4xf32> {Y_ARG}) -> (tensor<4xf32> {Y_ARG}) {{")
}

/// `calls_with_manual_axes_simple`.
#[test]
fn a_call_in_a_body_calls_a_function_in_local_shapes() {
    let body = manual_over_x(
        "      %1 = func.call @foo(%arg1) : (tensor<4xf32>) -> tensor<4xf32>\n      sdy.return %1 : tensor<4xf32>",
    );
    let text = propagated(&format!(
        "{}\n{}",
        main_fn(&body, "%0"),
        abs_fn("foo", "tensor<4xf32>")
    ));
    let lines = outline(&text);
    let mc = format!(
        "sdy.manual_computation(%arg0) in_shardings=[{XY}] out_shardings=[{XY}] manual_axes={{\"x\"}} (%arg1: tensor<4xf32>) {{"
    );
    assert!(lines.contains(&mc), "{text}");
    assert!(
        lines.contains(&format!("call @foo(%arg1) {Y_CALL}")),
        "{text}"
    );
    assert!(lines.contains(&foo_signature("foo")), "{text}");
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("func.func")).count(),
        2,
        "{text}"
    );
}

/// `calls_same_func_with_manual_axes`: two calls with one signature,
/// one function.
#[test]
fn calls_of_one_function_in_a_body_share_it() {
    let body = manual_over_x(
        "      %1 = func.call @foo(%arg1) : (tensor<4xf32>) -> tensor<4xf32>\n      %2 = func.call @foo(%1) : (tensor<4xf32>) -> tensor<4xf32>\n      sdy.return %2 : tensor<4xf32>",
    );
    let text = propagated(&format!(
        "{}\n{}",
        main_fn(&body, "%0"),
        abs_fn("foo", "tensor<4xf32>")
    ));
    let lines = outline(&text);
    let calls: Vec<&String> = lines.iter().filter(|l| l.contains("call @")).collect();
    assert_eq!(calls.len(), 2, "{text}");
    assert!(
        calls
            .iter()
            .all(|c| c.starts_with("call @foo(") && c.ends_with(Y_CALL)),
        "{text}"
    );
    let funcs: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("func.func private"))
        .collect();
    assert_eq!(funcs, vec![&foo_signature("foo")], "{text}");
}

/// `calls_different_funcs_with_manual_axes_one_without`: `@foo` in the
/// body (local shapes), `@bar` on the manual computation's global result.
#[test]
fn a_body_and_its_caller_call_their_own_functions() {
    let body = manual_over_x(
        "      %1 = func.call @foo(%arg1) : (tensor<4xf32>) -> tensor<4xf32>\n      %2 = func.call @foo(%1) : (tensor<4xf32>) -> tensor<4xf32>\n      sdy.return %2 : tensor<4xf32>",
    );
    let body = format!("{body}\n    %3 = call @bar(%0) : (tensor<8xf32>) -> tensor<8xf32>");
    let text = propagated(&format!(
        "{}\n{}\n{}",
        main_fn(&body, "%3"),
        abs_fn("foo", "tensor<4xf32>"),
        abs_fn("bar", "tensor<8xf32>")
    ));
    let lines = outline(&text);
    let calls: Vec<&String> = lines.iter().filter(|l| l.contains("call @")).collect();
    assert_eq!(calls.len(), 3, "{text}");
    assert!(
        calls[..2].iter().all(|c| c.starts_with("call @foo(")),
        "{text}"
    );
    assert!(calls[2].starts_with("call @bar("), "{text}");
    // Shardy prints @foo first; meshrun adds a body's callees after the
    // module's own functions.
    let mut funcs: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("func.func private"))
        .collect();
    funcs.sort();
    assert_eq!(funcs.len(), 2, "{text}");
    assert_eq!(funcs[1], &foo_signature("foo"), "{text}");
    assert!(
        funcs[0].starts_with("func.func private @bar(%arg0: tensor<8xf32>"),
        "{text}"
    );
}

/// `calls_same_funcs_without_manual_axes_one_inside_manual_computation`:
/// `@foo` called in a body with no manual axes (global shapes) and
/// outside, `@bar` in a body manual over `x`. (Shardy's case starts with
/// `{"y"}` on the outside call; propagated from scratch that call gets
/// `{"x", "y"}`, so it calls its own copy, `@foo_0`.)
#[test]
fn a_function_called_in_a_body_without_manual_axes_and_outside() {
    let y = r#"<@mesh, [{"y"}]>"#;
    let body = format!(
        "    %0 = sdy.manual_computation(%arg0) in_shardings=[{y}] out_shardings=[{y}] manual_axes={{}} (%arg1: tensor<8xf32>) {{\n      %3 = func.call @foo(%arg1) : (tensor<8xf32>) -> tensor<8xf32>\n      sdy.return %3 : tensor<8xf32>\n    }} : (tensor<8xf32>) -> tensor<8xf32>\n    %1 = sdy.manual_computation(%0) in_shardings=[{XY}] out_shardings=[{XY}] manual_axes={{\"x\"}} (%arg1: tensor<4xf32>) {{\n      %3 = func.call @bar(%arg1) : (tensor<4xf32>) -> tensor<4xf32>\n      sdy.return %3 : tensor<4xf32>\n    }} : (tensor<8xf32>) -> tensor<8xf32>\n    %2 = call @foo(%1) : (tensor<8xf32>) -> tensor<8xf32>"
    );
    let main = format!(
        "  func.func @main(%arg0: tensor<8xf32> {{sdy.sharding = #sdy.sharding{y}}}) -> tensor<8xf32> {{\n{body}\n    return %2 : tensor<8xf32>\n  }}"
    );
    let text = propagated(&format!(
        "{main}\n{}\n{}",
        abs_fn("foo", "tensor<8xf32>"),
        abs_fn("bar", "tensor<4xf32>")
    ));
    let lines = outline(&text);
    let calls: Vec<&String> = lines.iter().filter(|l| l.contains("call @")).collect();
    assert_eq!(calls.len(), 3, "{text}");
    assert!(calls[0].starts_with("call @foo("), "{text}");
    assert!(
        calls[1].starts_with("call @bar(") && calls[1].ends_with(Y_CALL),
        "{text}"
    );
    assert!(calls[2].starts_with("call @foo"), "{text}");
    let bar = lines
        .iter()
        .find(|l| l.starts_with("func.func private @bar"))
        .expect(&text);
    assert_eq!(
        bar,
        &format!(
            "func.func private @bar(%arg0: tensor<4xf32> {Y_ARG}) -> (tensor<4xf32> {Y_ARG}) {{"
        ),
        "{text}"
    );
}
