//! `basic_propagation_manual_computation.mlir`: propagation through
//! `sdy.manual_computation` (basic strategy, open dimensions kept). Operand
//! `i` and the body's argument `i` share `in_shardings[i]`, what the body
//! returns and result `i` share `out_shardings[i]`; the body sees them
//! without the manual axes, and only free axes are added, never to a
//! closed dimension.
//!
//! Shardy blocks propagation in these cases with a test-only
//! `stablehlo.custom_call @sdy_testonly`, which has no sharding rule;
//! meshrun has no custom calls, so the same barrier is an `sdy.reshard` to
//! a fully open sharding (no rule ties its operand and result either), and
//! a custom call without operands is a constant. A custom call without
//! results that only kept a block argument in use is left out.
//!
//! Not ported: `manual_computation_with_tokens` (meshrun has no token
//! type).

use meshrun_compiler::ir::OpKind;
use meshrun_compiler::propagation::values::sharding_of;
use meshrun_compiler::propagation::Strategy;
use meshrun_compiler::sharding::TensorSharding;
use meshrun_compiler::Module;

use crate::propagation_support::run_ok;

const MESH: &str = r#"sdy.mesh @mesh = <["a"=2, "b"=2, "c"=2, "d"=2, "e"=2, "f"=2, "g"=2]>"#;

/// What Shardy's CHECK lines give for one case: the function's argument
/// and result shardings (`none`: no axes at all), the first manual
/// computation's `in_shardings` and `out_shardings`, and the sharding of
/// some ops of its body (by position in the body).
struct Want<'a> {
    args: &'a [&'a str],
    results: &'a [&'a str],
    ins: &'a str,
    outs: &'a str,
    body: &'a [(usize, &'a str)],
}

/// Shardy prints no sharding where a value has no axes; meshrun may keep
/// a fully open one.
fn show(s: Option<&TensorSharding>) -> String {
    match s {
        Some(s) if s.dims.iter().any(|d| !d.axes.is_empty()) || !s.replicated.is_empty() => {
            s.to_string()
        }
        _ => "none".to_string(),
    }
}

fn list(v: &[TensorSharding]) -> String {
    v.iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn check(func: &str, want: Want) {
    let src = format!("module @m {{\n  {MESH}\n  {func}\n}}\n");
    let m: Module = run_ok(&src, Strategy::Basic);
    let f = m.entry().expect("a function");
    let mut wrong = Vec::new();
    let mut same = |what: String, got: String, want: &str| {
        if got != want {
            wrong.push(format!("{what}: got {got}, want {want}"));
        }
    };
    for (i, want) in want.args.iter().enumerate() {
        same(
            format!("%arg{i}"),
            show(f.arg_attrs[i].sharding.as_ref()),
            want,
        );
    }
    for (i, want) in want.results.iter().enumerate() {
        let got = show(f.result_attrs[i].sharding.as_ref());
        same(format!("result {i}"), got, want);
    }
    let (id, mc) = f
        .all_ops()
        .into_iter()
        .find_map(|id| match &f.op(id).kind {
            OpKind::ManualComputation(mc) => Some((id, mc.clone())),
            _ => None,
        })
        .expect("a manual computation");
    same("in_shardings".into(), list(&mc.in_shardings), want.ins);
    same("out_shardings".into(), list(&mc.out_shardings), want.outs);
    let body = &f.op(id).regions[0].body;
    for &(k, want) in want.body {
        let got = show(sharding_of(f, f.op(body[k]).results[0]));
        same(format!("body op {k}"), got, want);
    }
    assert!(wrong.is_empty(), "{}\n{}", wrong.join("\n"), {
        meshrun_compiler::text::print_module(&m)
    });
}

const A: &str = r#"<@mesh, [{"a", ?}, {?}]>"#;
const B: &str = r#"<@mesh, [{"b", ?}, {?}]>"#;
const BA: &str = r#"<@mesh, [{"b", "a", ?}, {?}]>"#;
const OPEN: &str = r#"<@mesh, [{?}, {?}]>"#;

// ------------------------------------------------------- no manual axes

/// `manual_computation_output_sharding_annotation`: `out_shardings` enters
/// the body and reaches what the body returns (the barrier keeps it from
/// the operand).
#[test]
fn out_sharding_enters_the_body() {
    check(
        r##"func.func @main(%arg0: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{?}, {?}]>] out_shardings=[<@mesh, [{"a", ?}, {?}]>] manual_axes={} (%arg1: tensor<32x32xf32>) {
      %1 = sdy.reshard %arg1 <@mesh, [{?}, {?}]> : tensor<32x32xf32>
      %2 = stablehlo.add %1, %1 : tensor<32x32xf32>
      sdy.return %2 : tensor<32x32xf32>
    } : (tensor<32x32xf32>) -> tensor<32x32xf32>
    return %0 : tensor<32x32xf32>
  }"##,
        Want {
            args: &["none"],
            results: &[A],
            ins: OPEN,
            outs: A,
            body: &[(1, A)],
        },
    );
}

/// `manual_computation_output_inside_body_forward_propagation`.
#[test]
fn body_sharding_leaves_forward() {
    check(
        r##"func.func @main(%arg0: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{?}, {?}]>] out_shardings=[<@mesh, [{?}, {?}]>] manual_axes={} (%arg1: tensor<32x32xf32>) {
      %1 = sdy.reshard %arg1 <@mesh, [{?}, {?}]> : tensor<32x32xf32>
      %2 = stablehlo.add %1, %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>]>} : tensor<32x32xf32>
      sdy.return %2 : tensor<32x32xf32>
    } : (tensor<32x32xf32>) -> tensor<32x32xf32>
    return %0 : tensor<32x32xf32>
  }"##,
        Want {
            args: &["none"],
            results: &[A],
            ins: OPEN,
            outs: A,
            body: &[],
        },
    );
}

/// `manual_computation_directly_returned_body_arg`.
#[test]
fn directly_returned_body_arg() {
    check(
        r##"func.func @main(%arg0: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a", ?}, {?}]>] out_shardings=[<@mesh, [{"a", ?}, {?}]>] manual_axes={} (%arg1: tensor<32x32xf32>) {
      sdy.return %arg1 : tensor<32x32xf32>
    } : (tensor<32x32xf32>) -> tensor<32x32xf32>
    return %0 : tensor<32x32xf32>
  }"##,
        Want {
            args: &[A],
            results: &[A],
            ins: A,
            outs: A,
            body: &[],
        },
    );
}

/// `manual_computation_directly_returned_body_arg_conflict`: dimension 0
/// agrees and is extended, dimension 1 conflicts and keeps each side.
#[test]
fn directly_returned_body_arg_conflict() {
    let ins = r#"<@mesh, [{"a", "b", ?}, {"c", ?}]>"#;
    let outs = r#"<@mesh, [{"a", "b", ?}, {"d", ?}]>"#;
    check(
        r##"func.func @main(%arg0: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a", ?}, {"c", ?}]>] out_shardings=[<@mesh, [{"a", "b", ?}, {"d", ?}]>] manual_axes={} (%arg1: tensor<32x32xf32>) {
      sdy.return %arg1 : tensor<32x32xf32>
    } : (tensor<32x32xf32>) -> tensor<32x32xf32>
    return %0 : tensor<32x32xf32>
  }"##,
        Want {
            args: &[ins],
            results: &[outs],
            ins,
            outs,
            body: &[],
        },
    );
}

/// `manual_computation_sharding_inside_body_propagation`: a sharding in
/// the body reaches both sides.
#[test]
fn body_sharding_reaches_both_sides() {
    check(
        r##"func.func @main(%arg0: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{?}, {?}]>] out_shardings=[<@mesh, [{?}, {?}]>] manual_axes={} (%arg1: tensor<32x32xf32>) {
      %1 = stablehlo.add %arg1, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>]>} : tensor<32x32xf32>
      sdy.return %1 : tensor<32x32xf32>
    } : (tensor<32x32xf32>) -> tensor<32x32xf32>
    return %0 : tensor<32x32xf32>
  }"##,
        Want {
            args: &[A],
            results: &[A],
            ins: A,
            outs: A,
            body: &[],
        },
    );
}

// ------------------------------------------------------- manual axes

/// `append_in_sharding_from_inside`: a free axis in the body goes back
/// out to `in_shardings` and the operand, after the manual axis.
#[test]
fn append_in_sharding_from_inside() {
    check(
        r##"func.func @main(%arg0: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"b", ?}, {?}]>] out_shardings=[<@mesh, [{"b", ?}, {?}]>] manual_axes={"b"} (%arg1: tensor<16x32xf32>) {
      %1 = stablehlo.add %arg1, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", ?}, {?}]>]>} : tensor<16x32xf32>
      %2 = sdy.reshard %1 <@mesh, [{?}, {?}]> : tensor<16x32xf32>
      sdy.return %2 : tensor<16x32xf32>
    } : (tensor<32x32xf32>) -> tensor<32x32xf32>
    return %0 : tensor<32x32xf32>
  }"##,
        Want {
            args: &[BA],
            results: &[B],
            ins: BA,
            outs: B,
            body: &[],
        },
    );
}

/// `append_out_sharding_from_inside`.
#[test]
fn append_out_sharding_from_inside() {
    check(
        r##"func.func @main(%arg0: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"b", ?}, {?}]>] out_shardings=[<@mesh, [{"b", ?}, {?}]>] manual_axes={"b"} (%arg1: tensor<16x32xf32>) {
      %1 = sdy.reshard %arg1 <@mesh, [{?}, {?}]> : tensor<16x32xf32>
      %2 = stablehlo.add %1, %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", ?}, {?}]>]>} : tensor<16x32xf32>
      sdy.return %2 : tensor<16x32xf32>
    } : (tensor<32x32xf32>) -> tensor<32x32xf32>
    return %0 : tensor<32x32xf32>
  }"##,
        Want {
            args: &[B],
            results: &[BA],
            ins: B,
            outs: BA,
            body: &[],
        },
    );
}

/// `append_in_sharding_from_outside`: the operand's free axis enters the
/// body.
#[test]
fn append_in_sharding_from_outside() {
    check(
        r##"func.func @main(%arg0: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"b", "a", ?}, {?}]>]>} : tensor<32x32xf32>
    %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{"b", ?}, {?}]>] out_shardings=[<@mesh, [{"b", ?}, {?}]>] manual_axes={"b"} (%arg1: tensor<16x32xf32>) {
      %2 = stablehlo.add %arg1, %arg1 : tensor<16x32xf32>
      %3 = sdy.reshard %2 <@mesh, [{?}, {?}]> : tensor<16x32xf32>
      sdy.return %3 : tensor<16x32xf32>
    } : (tensor<32x32xf32>) -> tensor<32x32xf32>
    return %1 : tensor<32x32xf32>
  }"##,
        Want {
            args: &[BA],
            results: &[B],
            ins: BA,
            outs: B,
            body: &[(0, A)],
        },
    );
}

/// `append_in_sharding_from_outside_multiple_operands`: only operand 1's
/// edge takes the axis; operand 0 stays replicated along the manual axis.
#[test]
fn append_in_sharding_from_outside_multiple_operands() {
    check(
        r##"func.func @main(%arg0: tensor<32x32xf32>, %arg1: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = stablehlo.add %arg1, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"b", "a", ?}, {?}]>]>} : tensor<32x32xf32>
    %1 = sdy.manual_computation(%arg0, %0) in_shardings=[<@mesh, [{?}, {?}], replicated={"b"}>, <@mesh, [{"b", ?}, {?}]>] out_shardings=[<@mesh, [{"b", ?}, {?}]>] manual_axes={"b"} (%arg2: tensor<32x32xf32>, %arg3: tensor<16x32xf32>) {
      %2 = stablehlo.add %arg3, %arg3 : tensor<16x32xf32>
      sdy.return %2 : tensor<16x32xf32>
    } : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    return %1 : tensor<32x32xf32>
  }"##,
        Want {
            args: &["none", BA],
            results: &[BA],
            ins: &format!(r#"<@mesh, [{{?}}, {{?}}], replicated={{"b"}}>, {BA}"#),
            outs: BA,
            body: &[(0, A)],
        },
    );
}

/// `append_out_sharding_from_outside`: a use's free axis enters the body
/// backwards, through `out_shardings`.
#[test]
fn append_out_sharding_from_outside() {
    check(
        r##"func.func @main(%arg0: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"b", ?}, {?}]>] out_shardings=[<@mesh, [{"b", ?}, {?}]>] manual_axes={"b"} (%arg1: tensor<16x32xf32>) {
      %1 = sdy.reshard %arg1 <@mesh, [{?}, {?}]> : tensor<16x32xf32>
      %2 = stablehlo.add %1, %1 : tensor<16x32xf32>
      sdy.return %2 : tensor<16x32xf32>
    } : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %3 = stablehlo.add %0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"b", "a", ?}, {?}]>]>} : tensor<32x32xf32>
    return %3 : tensor<32x32xf32>
  }"##,
        Want {
            args: &[B],
            results: &[BA],
            ins: B,
            outs: BA,
            body: &[(0, A), (1, A)],
        },
    );
}

/// `append_out_sharding_from_inside_multiple_results`: only result 1's
/// `out_shardings` takes the body's axis.
#[test]
fn append_out_sharding_from_inside_multiple_results() {
    check(
        r##"func.func @main(%arg0: tensor<32x32xf32>) -> (tensor<32x32xf32>, tensor<32x32xf32>) {
    %0:2 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"b", ?}, {?}]>] out_shardings=[<@mesh, [{?}, {?}], replicated={"b"}>, <@mesh, [{"b", ?}, {?}]>] manual_axes={"b"} (%arg1: tensor<16x32xf32>) {
      %1 = sdy.reshard %arg1 <@mesh, [{?}, {?}]> : tensor<16x32xf32>
      %2 = stablehlo.add %1, %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", ?}, {?}]>]>} : tensor<16x32xf32>
      %3 = stablehlo.constant dense<1.0> : tensor<32x32xf32>
      %4 = stablehlo.add %3, %3 : tensor<32x32xf32>
      sdy.return %4, %2 : tensor<32x32xf32>, tensor<16x32xf32>
    } : (tensor<32x32xf32>) -> (tensor<32x32xf32>, tensor<32x32xf32>)
    return %0#0, %0#1 : tensor<32x32xf32>, tensor<32x32xf32>
  }"##,
        Want {
            args: &[B],
            results: &["none", BA],
            ins: B,
            outs: &format!(r#"<@mesh, [{{?}}, {{?}}], replicated={{"b"}}>, {BA}"#),
            body: &[(0, A), (1, A), (2, "none"), (3, "none")],
        },
    );
}

/// `remove_existing_free_axes_in_shardings`: the body's free axes replace
/// the free axes written in `in_shardings` (here they extend them).
#[test]
fn free_axes_in_shardings_from_inside() {
    let bac = r#"<@mesh, [{"b", "a", "c", ?}, {?}]>"#;
    check(
        r##"func.func @main(%arg0: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"b", "a", ?}, {?}]>] out_shardings=[<@mesh, [{"b", ?}, {?}]>] manual_axes={"b"} (%arg1: tensor<16x32xf32>) {
      %1 = stablehlo.add %arg1, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", "c", ?}, {?}]>]>} : tensor<16x32xf32>
      %2 = sdy.reshard %1 <@mesh, [{?}, {?}]> : tensor<16x32xf32>
      sdy.return %2 : tensor<16x32xf32>
    } : (tensor<32x32xf32>) -> tensor<32x32xf32>
    return %0 : tensor<32x32xf32>
  }"##,
        Want {
            args: &[bac],
            results: &[B],
            ins: bac,
            outs: B,
            body: &[],
        },
    );
}

/// `remove_existing_free_axes_out_shardings`.
#[test]
fn free_axes_out_shardings_from_inside() {
    let bac = r#"<@mesh, [{"b", "a", "c", ?}, {?}]>"#;
    check(
        r##"func.func @main(%arg0: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"b", ?}, {?}]>] out_shardings=[<@mesh, [{"b", "a", ?}, {?}]>] manual_axes={"b"} (%arg1: tensor<16x32xf32>) {
      %1 = sdy.reshard %arg1 <@mesh, [{?}, {?}]> : tensor<16x32xf32>
      %2 = stablehlo.add %1, %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", "c", ?}, {?}]>]>} : tensor<16x32xf32>
      sdy.return %2 : tensor<16x32xf32>
    } : (tensor<32x32xf32>) -> tensor<32x32xf32>
    return %0 : tensor<32x32xf32>
  }"##,
        Want {
            args: &[B],
            results: &[bac],
            ins: B,
            outs: bac,
            body: &[],
        },
    );
}

/// `multiple_manual_axes_same_dim`: the free axis goes after both manual
/// axes, in each side's own order.
#[test]
fn multiple_manual_axes_same_dim() {
    let abc = r#"<@mesh, [{"a", "b", "c", ?}, {?}]>"#;
    let bac = r#"<@mesh, [{"b", "a", "c", ?}, {?}]>"#;
    check(
        r##"func.func @main(%arg0: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a", "b", ?}, {?}]>] out_shardings=[<@mesh, [{"b", "a", ?}, {?}]>] manual_axes={"a", "b"} (%arg1: tensor<8x32xf32>) {
      %1 = stablehlo.add %arg1, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"c", ?}, {?}]>]>} : tensor<8x32xf32>
      sdy.return %1 : tensor<8x32xf32>
    } : (tensor<32x32xf32>) -> tensor<32x32xf32>
    return %0 : tensor<32x32xf32>
  }"##,
        Want {
            args: &[abc],
            results: &[bac],
            ins: abc,
            outs: bac,
            body: &[],
        },
    );
}

/// `multiple_manual_axes_different_dim`: free and manual axes on both
/// dimensions, manual axes replicated on one side each.
#[test]
fn multiple_manual_axes_different_dim() {
    let ins = r#"<@mesh, [{"a", "b", "e", ?}, {"d", "f", "g", ?}], replicated={"c"}>"#;
    let outs = r#"<@mesh, [{"b", "a", "e", ?}, {"c", "f", "g", ?}], replicated={"d"}>"#;
    check(
        r##"func.func @main(%arg0: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a", "b", ?}, {"d", ?}], replicated={"c"}>] out_shardings=[<@mesh, [{"b", "a", ?}, {"c", ?}], replicated={"d"}>] manual_axes={"a", "b", "c", "d"} (%arg1: tensor<8x16xf32>) {
      %1 = stablehlo.add %arg1, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"e", ?}, {"f", "g", ?}]>]>} : tensor<8x16xf32>
      sdy.return %1 : tensor<8x16xf32>
    } : (tensor<32x32xf32>) -> tensor<32x32xf32>
    return %0 : tensor<32x32xf32>
  }"##,
        Want {
            args: &[r#"<@mesh, [{"a", "b", "e", ?}, {"d", "f", "g", ?}]>"#],
            results: &[r#"<@mesh, [{"b", "a", "e", ?}, {"c", "f", "g", ?}]>"#],
            ins,
            outs,
            body: &[],
        },
    );
}

/// `free_axis_on_own_dim_from_inside`.
#[test]
fn free_axis_on_own_dim_from_inside() {
    let both = r#"<@mesh, [{"b", ?}, {"a", ?}]>"#;
    check(
        r##"func.func @main(%arg0: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"b", ?}, {?}]>] out_shardings=[<@mesh, [{"b", ?}, {?}]>] manual_axes={"b"} (%arg1: tensor<16x32xf32>) {
      %1 = stablehlo.add %arg1, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {"a", ?}]>]>} : tensor<16x32xf32>
      sdy.return %1 : tensor<16x32xf32>
    } : (tensor<32x32xf32>) -> tensor<32x32xf32>
    return %0 : tensor<32x32xf32>
  }"##,
        Want {
            args: &[both],
            results: &[both],
            ins: both,
            outs: both,
            body: &[],
        },
    );
}

/// `free_axis_on_own_dim_from_outside`: the argument's axis enters through
/// `in_shardings`, the result's through `out_shardings`, and each crosses
/// the body to the other side.
#[test]
fn free_axis_on_own_dim_from_outside() {
    let all = r#"<@mesh, [{"b", ?}, {"a", ?}, {"c", ?}]>"#;
    check(
        r##"func.func @main(%arg0: tensor<32x32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"a", ?}, {?}]>}) -> (tensor<32x32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {?}, {"c", ?}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"b", ?}, {?}, {?}]>] out_shardings=[<@mesh, [{"b", ?}, {?}, {?}]>] manual_axes={"b"} (%arg1: tensor<16x32x32xf32>) {
      %1 = stablehlo.add %arg1, %arg1 : tensor<16x32x32xf32>
      sdy.return %1 : tensor<16x32x32xf32>
    } : (tensor<32x32x32xf32>) -> tensor<32x32x32xf32>
    return %0 : tensor<32x32x32xf32>
  }"##,
        Want {
            args: &[all],
            results: &[all],
            ins: all,
            outs: all,
            body: &[],
        },
    );
}

// ------------------------------------------------------- replicated axes

/// `@main` of the replicated-axes cases: `manual_axes` and the replicated
/// axis vary; `outer_adds` puts an add before and after the op.
fn replicated_case(manual_axes: &str, body_sharding: &str, outer_adds: bool) -> String {
    let (operand, last, ret) = if outer_adds {
        (
            "%0",
            "\n    %3 = stablehlo.add %1, %1 : tensor<32x32xf32>",
            "%3",
        )
    } else {
        ("%arg0", "", "%1")
    };
    let first = if outer_adds {
        "%0 = stablehlo.add %arg0, %arg0 : tensor<32x32xf32>\n    "
    } else {
        ""
    };
    format!(
        r##"func.func @main(%arg0: tensor<32x32xf32>) -> tensor<32x32xf32> {{
    {first}%1 = sdy.manual_computation({operand}) in_shardings=[<@mesh, [{{"b", ?}}, {{?}}], replicated={{"c"}}>] out_shardings=[<@mesh, [{{"b", ?}}, {{?}}], replicated={{"c"}}>] manual_axes={manual_axes} (%arg1: tensor<16x32xf32>) {{
      %2 = stablehlo.add %arg1, %arg1 {{sdy.sharding = #sdy.sharding_per_value<[{body_sharding}]>}} : tensor<16x32xf32>
      sdy.return %2 : tensor<16x32xf32>
    }} : (tensor<32x32xf32>) -> tensor<32x32xf32>{last}
    return {ret} : tensor<32x32xf32>
  }}"##
    )
}

/// `replicated_manual_axes`, `replicated_manual_axes_directly_used_
/// returned_from_func`, `replicated_free_axes` and `replicated_free_axes_
/// directly_used_returned_from_func`: a replicated axis, manual or free,
/// stays on `in_shardings`/`out_shardings` and reaches no value.
#[test]
fn replicated_axes_stay_on_the_op() {
    let on_op = r#"<@mesh, [{"b", "a", ?}, {?}], replicated={"c"}>"#;
    for manual in [r#"{"b", "c"}"#, r#"{"b"}"#] {
        for outer_adds in [true, false] {
            check(
                &replicated_case(manual, A, outer_adds),
                Want {
                    args: &[BA],
                    results: &[BA],
                    ins: on_op,
                    outs: on_op,
                    body: &[],
                },
            );
        }
    }
}

/// `replicated_inside_body`: a replicated axis in the body does not reach
/// `in_shardings`/`out_shardings`.
#[test]
fn replicated_inside_body_stays_inside() {
    let src = r##"func.func @main(%arg0: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"b", ?}, {?}]>] out_shardings=[<@mesh, [{"b", ?}, {?}]>] manual_axes={"b"} (%arg1: tensor<16x32xf32>) {
      %1 = stablehlo.add %arg1, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", ?}, {?}], replicated={"c"}>]>} : tensor<16x32xf32>
      sdy.return %1 : tensor<16x32xf32>
    } : (tensor<32x32xf32>) -> tensor<32x32xf32>
    return %0 : tensor<32x32xf32>
  }"##;
    check(
        src,
        Want {
            args: &[BA],
            results: &[BA],
            ins: BA,
            outs: BA,
            body: &[],
        },
    );
}

// ------------------------------------------------------- closed dimensions

/// `preserve_untouched_closed_dim`.
#[test]
fn untouched_closed_dim_is_kept() {
    let closed = r#"<@mesh, [{"b", "a", ?}, {}]>"#;
    check(
        r##"func.func @main(%arg0: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"b", ?}, {}]>] out_shardings=[<@mesh, [{"b", ?}, {}]>] manual_axes={"b"} (%arg1: tensor<16x32xf32>) {
      %1 = stablehlo.add %arg1, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", ?}, {?}]>]>} : tensor<16x32xf32>
      sdy.return %1 : tensor<16x32xf32>
    } : (tensor<32x32xf32>) -> tensor<32x32xf32>
    return %0 : tensor<32x32xf32>
  }"##,
        Want {
            args: &[BA],
            results: &[BA],
            ins: closed,
            outs: closed,
            body: &[],
        },
    );
}

/// `dont_propagate_into_closed_dim_from_inside`.
#[test]
fn closed_dim_takes_nothing_from_inside() {
    let closed = r#"<@mesh, [{"b"}, {?}]>"#;
    check(
        r##"func.func @main(%arg0: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"b"}, {?}]>] out_shardings=[<@mesh, [{"b"}, {?}]>] manual_axes={"b"} (%arg1: tensor<16x32xf32>) {
      %1 = stablehlo.add %arg1, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", ?}, {?}]>]>} : tensor<16x32xf32>
      sdy.return %1 : tensor<16x32xf32>
    } : (tensor<32x32xf32>) -> tensor<32x32xf32>
    return %0 : tensor<32x32xf32>
  }"##,
        Want {
            args: &[B],
            results: &[B],
            ins: closed,
            outs: closed,
            body: &[],
        },
    );
}

/// `dont_propagate_into_out_sharding_closed_dim_from_outside`.
#[test]
fn closed_out_sharding_takes_nothing_from_outside() {
    check(
        r##"func.func @main(%arg0: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"b", ?}, {?}]>] out_shardings=[<@mesh, [{"b"}, {?}]>] manual_axes={"b"} (%arg1: tensor<16x32xf32>) {
      %1 = stablehlo.add %arg1, %arg1 : tensor<16x32xf32>
      sdy.return %1 : tensor<16x32xf32>
    } : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %2 = stablehlo.add %0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"b", "a", ?}, {?}]>]>} : tensor<32x32xf32>
    return %2 : tensor<32x32xf32>
  }"##,
        Want {
            args: &[B],
            results: &[BA],
            ins: B,
            outs: r#"<@mesh, [{"b"}, {?}]>"#,
            body: &[],
        },
    );
}

/// `dont_propagate_into_in_sharding_closed_dim_from_outside`.
#[test]
fn closed_in_sharding_takes_nothing_from_outside() {
    check(
        r##"func.func @main(%arg0: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"b", "a", ?}, {?}]>]>} : tensor<32x32xf32>
    %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{"b"}, {?}]>] out_shardings=[<@mesh, [{"b", ?}, {?}]>] manual_axes={"b"} (%arg1: tensor<16x32xf32>) {
      %2 = stablehlo.add %arg1, %arg1 : tensor<16x32xf32>
      sdy.return %2 : tensor<16x32xf32>
    } : (tensor<32x32xf32>) -> tensor<32x32xf32>
    return %1 : tensor<32x32xf32>
  }"##,
        Want {
            args: &[BA],
            results: &[B],
            ins: r#"<@mesh, [{"b"}, {?}]>"#,
            outs: B,
            body: &[],
        },
    );
}

// ------------------------------------------------------- nested (not Shardy's)

/// A manual computation nested in another: the free axis `c` of the
/// function's argument enters the outer body (after the manual `a`), then
/// the inner one's `in_shardings` (where `a` is no longer seen) and its
/// body. The inner `in_shardings`/`out_shardings` shard dimension 1 on
/// `b`, free in the outer body: like any sharding on the values there, it
/// reaches the outer op's open dimension 1 (the argument's is closed).
#[test]
fn nested_manual_computations_carry_a_free_axis_inwards() {
    let src = format!(
        "module @m {{\n  {MESH}\n  {}\n}}\n",
        r##"func.func @main(%arg0: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "c"}, {}]>}) -> tensor<32x32xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a", ?}, {?}]>] out_shardings=[<@mesh, [{"a", ?}, {?}]>] manual_axes={"a"} (%arg1: tensor<16x32xf32>) {
      %1 = sdy.manual_computation(%arg1) in_shardings=[<@mesh, [{?}, {"b", ?}]>] out_shardings=[<@mesh, [{?}, {"b", ?}]>] manual_axes={"b"} (%arg2: tensor<16x16xf32>) {
        %2 = stablehlo.add %arg2, %arg2 : tensor<16x16xf32>
        sdy.return %2 : tensor<16x16xf32>
      } : (tensor<16x32xf32>) -> tensor<16x32xf32>
      sdy.return %1 : tensor<16x32xf32>
    } : (tensor<32x32xf32>) -> tensor<32x32xf32>
    return %0 : tensor<32x32xf32>
  }"##
    );
    let m = run_ok(&src, Strategy::Basic);
    let f = m.entry().expect("a function");
    let manual: Vec<_> = f
        .all_ops()
        .into_iter()
        .filter_map(|id| match &f.op(id).kind {
            OpKind::ManualComputation(mc) => Some((id, mc.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(manual.len(), 2);
    let (outer, inner) = (&manual[0].1, &manual[1].1);
    assert_eq!(
        list(&outer.in_shardings),
        r#"<@mesh, [{"a", "c", ?}, {"b", ?}]>"#
    );
    assert_eq!(
        list(&outer.out_shardings),
        r#"<@mesh, [{"a", "c", ?}, {"b", ?}]>"#
    );
    assert_eq!(
        show(f.arg_attrs[0].sharding.as_ref()),
        r#"<@mesh, [{"a", "c"}, {}]>"#
    );
    assert_eq!(
        list(&inner.in_shardings),
        r#"<@mesh, [{"c", ?}, {"b", ?}]>"#
    );
    assert_eq!(
        list(&inner.out_shardings),
        r#"<@mesh, [{"c", ?}, {"b", ?}]>"#
    );
    let add = f.op(manual[1].0).regions[0].body[0];
    assert_eq!(
        show(sharding_of(f, f.op(add).results[0])),
        r#"<@mesh, [{"c", ?}, {?}]>"#
    );
}
