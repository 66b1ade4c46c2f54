//! Shardy's call passes one by one (`import/test/flatten_call_graph.mlir`,
//! `import_func_calls.mlir`, `propagate_sharding_from_func_to_call.mlir`;
//! `export/test/insert_func_call_reshards.mlir`): what `import::calls`
//! makes of calls before propagation, and the reshards `export::calls`
//! puts after calls whose sharding is not their callee's.
//!
//! meshrun's import does the three import passes in one (every call site
//! gets its own copy of the callee as a named computation, so the copies
//! Shardy's flattening names `foo_0`, ... are never functions); the cases
//! are checked on the named computations. Not ported: the cases about
//! attributes meshrun does not keep on named computations
//! (`backend_config`, `random_attr`), about `sdy.data_flow_edge` ops
//! (meshrun's edges are implicit, `propagation::data_flow`), and
//! `import_func_calls_add_data_flow_edges_on_named_computations_false.mlir`
//! (an option meshrun does not have).

use meshrun_compiler::ir::{Function, Module, OpKind};
use meshrun_compiler::propagation::export::calls::insert_call_reshards;
use meshrun_compiler::propagation::import::import_calls;
use meshrun_compiler::sharding::TensorSharding;
use meshrun_compiler::text::{parse_module, print_module};

fn module(funcs: &str) -> Module {
    let src = format!("module @m {{\n  sdy.mesh @mesh = <[\"x\"=2, \"y\"=2]>\n{funcs}\n}}\n");
    parse_module(&src).unwrap_or_else(|d| panic!("{d}\n{src}"))
}

fn imported(funcs: &str) -> Module {
    let mut m = module(funcs);
    import_calls(&mut m).expect("import");
    m
}

/// One named computation as the tests see it.
#[derive(Debug, PartialEq)]
struct Nc {
    name: String,
    /// Its block arguments' shardings (`in_shardings`), if any.
    ins: Option<Vec<Option<String>>>,
    /// Its results' shardings (`out_shardings`), if any.
    outs: Option<Vec<String>>,
    /// The op names of its body.
    body: Vec<String>,
}

fn show(s: &TensorSharding) -> String {
    s.to_string()
}

/// The named computations of `f`, in program order (nested ones after
/// the one holding them).
fn named_computations(f: &Function) -> Vec<Nc> {
    f.all_ops()
        .into_iter()
        .filter_map(|id| {
            let op = f.op(id);
            let OpKind::NamedComputation(n) = &op.kind else {
                return None;
            };
            Some(Nc {
                name: n.name().to_string(),
                ins: n
                    .in_shardings
                    .as_ref()
                    .map(|v| v.iter().map(|s| s.as_ref().map(show)).collect()),
                outs: op.shardings.as_ref().map(|v| v.iter().map(show).collect()),
                body: op.regions[0]
                    .body
                    .iter()
                    .map(|&b| f.op(b).kind.name())
                    .collect(),
            })
        })
        .collect()
}

fn names(m: &Module) -> Vec<String> {
    m.funcs.iter().map(|f| f.name.clone()).collect()
}

const XY: &str = r#"<@mesh, [{"x"}, {"y"}]>"#;
const YX: &str = r#"<@mesh, [{"y"}, {"x"}]>"#;
const Y_: &str = r#"<@mesh, [{"y"}, {}]>"#;

fn nc(name: &str, ins: Option<Vec<Option<&str>>>, outs: Option<Vec<&str>>, body: &[&str]) -> Nc {
    Nc {
        name: name.into(),
        ins: ins.map(|v| v.into_iter().map(|s| s.map(str::to_string)).collect()),
        outs: outs.map(|v| v.into_iter().map(str::to_string).collect()),
        body: body.iter().map(|s| s.to_string()).collect(),
    }
}

/// `flatten_call_graph.mlir: main_calls_foo_twice` and
/// `import_func_calls.mlir: multiple_call_ops_same_name`: each call site
/// gets its own copy, named after the callee; the callee is dropped.
#[test]
fn each_call_site_gets_its_own_copy() {
    let m = imported(
        r#"  func.func @main(%arg0: tensor<8x2xi32>) -> (tensor<8x2xi32>, tensor<8x2xi32>) {
    %0 = call @foo(%arg0) : (tensor<8x2xi32>) -> tensor<8x2xi32>
    %1 = call @foo(%0) : (tensor<8x2xi32>) -> tensor<8x2xi32>
    return %0, %1 : tensor<8x2xi32>, tensor<8x2xi32>
  }
  func.func private @foo(%arg0: tensor<8x2xi32>) -> tensor<8x2xi32> {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<8x2xi32>
    return %0 : tensor<8x2xi32>
  }"#,
    );
    assert_eq!(names(&m), ["main"]);
    let main = m.entry().unwrap();
    let copy = || nc("foo", None, None, &["stablehlo.multiply"]);
    assert_eq!(named_computations(main), [copy(), copy()]);
    // The second copy reads the first one's result.
    let ops: Vec<_> = main.ops_in_order().map(|(_, op)| op.clone()).collect();
    assert_eq!(ops[1].operands, ops[0].results);
}

/// `flatten_call_graph.mlir: main_calls_foo_calls_bar_twice`: nested
/// calls nest their named computations, one per call site.
#[test]
fn nested_calls_nest_named_computations() {
    let m = imported(
        r#"  func.func @main(%arg0: tensor<8xi32>) -> tensor<8xi32> {
    %0 = call @foo(%arg0) : (tensor<8xi32>) -> tensor<8xi32>
    return %0 : tensor<8xi32>
  }
  func.func private @foo(%arg0: tensor<8xi32>) -> tensor<8xi32> {
    %1 = call @bar(%arg0) : (tensor<8xi32>) -> tensor<8xi32>
    %2 = call @bar(%arg0) : (tensor<8xi32>) -> tensor<8xi32>
    %3 = stablehlo.add %1, %2 : tensor<8xi32>
    return %3 : tensor<8xi32>
  }
  func.func private @bar(%arg0: tensor<8xi32>) -> tensor<8xi32> {
    return %arg0 : tensor<8xi32>
  }"#,
    );
    assert_eq!(names(&m), ["main"]);
    assert_eq!(
        named_computations(m.entry().unwrap()),
        [
            nc(
                "foo",
                None,
                None,
                &[
                    "sdy.named_computation",
                    "sdy.named_computation",
                    "stablehlo.add"
                ]
            ),
            nc("bar", None, None, &[]),
            nc("bar", None, None, &[]),
        ]
    );
}

/// `import_func_calls.mlir: backend_config_out_shardings`: the block
/// arguments start with the callee's argument shardings, the results with
/// the call's; the callee's result shardings are not read.
#[test]
fn arguments_from_the_callee_results_from_the_call() {
    let m = imported(&format!(
        r#"  func.func @main(%arg0: tensor<8x2xi32>) -> tensor<8x2xi32> {{
    %0 = call @bar(%arg0) {{sdy.sharding = #sdy.sharding_per_value<[{XY}]>}} : (tensor<8x2xi32>) -> tensor<8x2xi32>
    return %0 : tensor<8x2xi32>
  }}
  func.func private @bar(%arg0: tensor<8x2xi32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}]>}}) -> (tensor<8x2xi32> {{sdy.sharding = #sdy.sharding<@mesh, [{{}}, {{"y"}}]>}}) {{
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<8x2xi32>
    return %0 : tensor<8x2xi32>
  }}"#
    ));
    assert_eq!(
        named_computations(m.entry().unwrap()),
        [nc(
            "bar",
            Some(vec![Some(r#"<@mesh, [{"x"}, {}]>"#)]),
            Some(vec![XY]),
            &["stablehlo.multiply"]
        )]
    );
}

/// `import_func_calls.mlir: inlineable_false`: several results, a
/// returned block argument.
#[test]
fn several_results_and_a_returned_argument() {
    let m = imported(
        r#"  func.func @main(%arg0: tensor<8x2xi32>, %arg1: tensor<8x2xi32>) -> tensor<8x2xi32> {
    %0:2 = call @baz(%arg0, %arg1) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, [{}, {"y"}]>]>} : (tensor<8x2xi32>, tensor<8x2xi32>) -> (tensor<8x2xi32>, tensor<8x2xi32>)
    %1 = stablehlo.add %0#0, %0#1 : tensor<8x2xi32>
    return %1 : tensor<8x2xi32>
  }
  func.func private @baz(%arg0: tensor<8x2xi32>, %arg1: tensor<8x2xi32>) -> (tensor<8x2xi32>, tensor<8x2xi32>) {
    %0 = stablehlo.multiply %arg0, %arg1 : tensor<8x2xi32>
    return %0, %arg1 : tensor<8x2xi32>, tensor<8x2xi32>
  }"#,
    );
    let main = m.entry().unwrap();
    assert_eq!(
        named_computations(main),
        [nc(
            "baz",
            None,
            Some(vec![r#"<@mesh, [{"x"}, {}]>"#, r#"<@mesh, [{}, {"y"}]>"#]),
            &["stablehlo.multiply"]
        )]
    );
    let (_, op) = main.ops_in_order().next().unwrap();
    let region = &op.regions[0];
    assert_eq!(region.returns[1], region.args[1]);
    let (_, add) = main.ops_in_order().nth(1).unwrap();
    assert_eq!(add.operands, op.results);
}

fn from_callee(call_sharding: &str, callee_results: [Option<&str>; 2]) -> Option<Vec<String>> {
    let res = |s: Option<&str>| match s {
        Some(s) => format!(" {{sdy.sharding = #sdy.sharding{s}}}"),
        None => String::new(),
    };
    let m = imported(&format!(
        r#"  func.func @main(%arg0: tensor<8x2xi32>, %arg1: tensor<4x2xi32>) -> (tensor<8x2xi32>, tensor<4x2xi32>) {{
    %0:2 = call @foo(%arg0, %arg1) {call_sharding} : (tensor<8x2xi32>, tensor<4x2xi32>) -> (tensor<8x2xi32>, tensor<4x2xi32>)
    return %0#0, %0#1 : tensor<8x2xi32>, tensor<4x2xi32>
  }}
  func.func private @foo(%arg0: tensor<8x2xi32>, %arg1: tensor<4x2xi32>) -> (tensor<8x2xi32>{}, tensor<4x2xi32>{}) {{
    return %arg0, %arg1 : tensor<8x2xi32>, tensor<4x2xi32>
  }}"#,
        res(callee_results[0]),
        res(callee_results[1])
    ));
    let mut ncs = named_computations(m.entry().unwrap());
    assert_eq!(ncs.len(), 1);
    ncs.remove(0).outs
}

/// `propagate_sharding_from_func_to_call.mlir`: a call without result
/// shardings takes its callee's (`multiple_results`; a result the callee
/// leaves open stays open: `multiple_results_call_no_sharding_func_has_
/// sharding_on_one_no_sharding_on_the_other`), a call with its own keeps
/// them, empty ones too (`do_not_overwrite_call_sharding`,
/// `keep_empty_call_sharding`, `multiple_results_one_same_one_is_empty`),
/// and neither having any leaves none (`both_call_and_func_has_empty_
/// result_shardings`).
#[test]
fn calls_take_their_callees_result_shardings_when_they_have_none() {
    assert_eq!(
        from_callee("", [Some(XY), Some(Y_)]),
        Some(vec![XY.to_string(), Y_.to_string()])
    );
    assert_eq!(
        from_callee("", [Some(XY), None]),
        Some(vec![XY.to_string(), r#"<@mesh, [{?}, {?}]>"#.to_string()])
    );
    let own =
        format!(r#"{{sdy.sharding = #sdy.sharding_per_value<[{YX}, <@mesh, [{{}}, {{}}]>]>}}"#);
    assert_eq!(
        from_callee(&own, [Some(XY), Some(Y_)]),
        Some(vec![YX.to_string(), r#"<@mesh, [{}, {}]>"#.to_string()])
    );
    assert_eq!(from_callee("", [None, None]), None);
}

/// `insert_func_call_reshards.mlir: multiple_same_calls_different_
/// shardings` and the single-call case: where a call's result sharding
/// is its callee's nothing is added; where it differs, the call takes
/// the callee's and a reshard after it gives the users the call's.
#[test]
fn calls_reshard_to_what_their_users_expect() {
    let mut m = module(&format!(
        r#"  func.func @main(%arg0: tensor<8x2xi32>) -> tensor<8x2xi32> {{
    %0 = call @baz(%arg0) {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{"x"}}, {{}}]>]>}} : (tensor<8x2xi32>) -> tensor<8x2xi32>
    %1 = call @baz(%0) {{sdy.sharding = #sdy.sharding_per_value<[{XY}]>}} : (tensor<8x2xi32>) -> tensor<8x2xi32>
    return %1 : tensor<8x2xi32>
  }}
  func.func private @baz(%arg0: tensor<8x2xi32>) -> (tensor<8x2xi32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}]>}}) {{
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<8x2xi32>
    return %0 : tensor<8x2xi32>
  }}"#
    ));
    insert_call_reshards(&mut m);
    let text = print_module(&m);
    let main: Vec<&str> = text
        .lines()
        .map(str::trim)
        .skip_while(|l| !l.starts_with("func.func @main"))
        .take_while(|l| !l.starts_with("func.func private"))
        .collect();
    let x_ = r#"#sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>"#;
    assert_eq!(
        main[1..5],
        [
            format!("%0 = call @baz(%arg0) {{sdy.sharding = {x_}}} : (tensor<8x2xi32>) -> tensor<8x2xi32>"),
            format!("%1 = call @baz(%0) {{sdy.sharding = {x_}}} : (tensor<8x2xi32>) -> tensor<8x2xi32>"),
            format!("%2 = sdy.reshard %1 {XY} : tensor<8x2xi32>"),
            "return %2 : tensor<8x2xi32>".to_string(),
        ]
    );
}

/// `insert_func_call_reshards.mlir`, first case: neither the call nor the
/// callee has a sharding: nothing changes.
#[test]
fn calls_without_shardings_get_no_reshards() {
    let src = r#"  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = call @foo(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
  func.func private @foo(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }"#;
    let mut m = module(src);
    let before = print_module(&m);
    insert_call_reshards(&mut m);
    assert_eq!(print_module(&m), before);
}
