//! `sdy.propagation_barrier` (`basic_propagation.mlir`:
//! `propagation_barrier_{forward,backward}_*`, `..._none_two_shardings`;
//! `sharding_group_propagation.mlir`: `shard_as_applies_despite_barrier`):
//! shardings cross the barrier only in its allowed direction, in every
//! strategy (Shardy propagates it with its own direction, not the
//! schedule's). The single passes keep open dimensions open; the whole
//! pipeline closes them.

use meshrun_compiler::propagation::Strategy;

use crate::propagation_support::{expect, run_ok};

/// `expect`, with the shardings closed after the whole pipeline.
fn check(m: &meshrun_compiler::Module, strategy: Strategy, cases: &[(&str, &str)]) {
    let closed: Vec<(&str, String)> = cases
        .iter()
        .map(|&(name, want)| match strategy {
            Strategy::Full => (name, want.replace(", ?}", "}").replace("{?}", "{}")),
            _ => (name, want.to_string()),
        })
        .collect();
    let cases: Vec<(&str, &str)> = closed.iter().map(|(n, w)| (*n, w.as_str())).collect();
    expect(m, &cases);
}

/// `%arg0` sharded on "a"; `%0 = barrier(sine(%arg0))`; the function
/// result sharded on "b" along dimension 1.
fn program(direction: &str) -> String {
    format!(
        r#"module @m {{
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @main(%arg0: tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"a", ?}}, {{?}}]>}}) -> (tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{?}}, {{"b", ?}}]>}}) {{
    %0 = stablehlo.sine %arg0 : tensor<8x8xf32>
    %1 = sdy.propagation_barrier %0 allowed_direction={direction} : tensor<8x8xf32>
    %2 = stablehlo.cosine %1 : tensor<8x8xf32>
    return %2 : tensor<8x8xf32>
  }}
}}
"#
    )
}

#[test]
fn forward_barrier_passes_operand_shardings_only() {
    for strategy in [Strategy::Basic, Strategy::OpPriority, Strategy::Full] {
        let m = run_ok(&program("FORWARD"), strategy);
        check(
            &m,
            strategy,
            &[
                ("%0", r#"<@mesh, [{"a", ?}, {?}]>"#),
                ("%1", r#"<@mesh, [{"a", ?}, {"b", ?}]>"#),
                ("%2", r#"<@mesh, [{"a", ?}, {"b", ?}]>"#),
            ],
        );
    }
}

#[test]
fn backward_barrier_passes_result_shardings_only() {
    for strategy in [Strategy::Basic, Strategy::OpPriority, Strategy::Full] {
        let m = run_ok(&program("BACKWARD"), strategy);
        check(
            &m,
            strategy,
            &[
                ("%0", r#"<@mesh, [{"a", ?}, {"b", ?}]>"#),
                ("%1", r#"<@mesh, [{?}, {"b", ?}]>"#),
                ("%2", r#"<@mesh, [{?}, {"b", ?}]>"#),
            ],
        );
    }
}

#[test]
fn none_barrier_passes_nothing() {
    for strategy in [Strategy::Basic, Strategy::OpPriority, Strategy::Full] {
        let m = run_ok(&program("NONE"), strategy);
        check(
            &m,
            strategy,
            &[
                ("%0", r#"<@mesh, [{"a", ?}, {?}]>"#),
                ("%1", r#"<@mesh, [{?}, {"b", ?}]>"#),
                ("%2", r#"<@mesh, [{?}, {"b", ?}]>"#),
            ],
        );
    }
}
