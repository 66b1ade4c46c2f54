//! Synthetic programs for benchmarks and scale tests, written as the text
//! JAX would print, so that they exercise the same parser path as real
//! exports.

use std::fmt::Write;

/// A `layers`-layer tanh MLP chain `x -> tanh(x @ w_i + b_i)` on a
/// `data`x`model` mesh, with the batch of `x` sharded on `data` and the
/// weights alternating Megatron-style between column and row sharding.
/// Every layer is 4 ops (dot_general, broadcast_in_dim, add, tanh), so
/// `layers = 2500` gives a 10k-op module. The mesh is `data`=4 ×
/// `model`=2 (8 devices).
pub fn mlp_chain_text(layers: usize, batch: i64, hidden: i64) -> String {
    mlp_chain_text_on(layers, batch, hidden, 4, 2)
}

/// [`mlp_chain_text`] on a `data` × `model` mesh.
pub fn mlp_chain_text_on(layers: usize, batch: i64, hidden: i64, data: i64, model: i64) -> String {
    let mut s = String::new();
    let t = |shape: &[i64]| {
        let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
        format!("tensor<{}xf32>", dims.join("x"))
    };
    let act = t(&[batch, hidden]);
    let w = t(&[hidden, hidden]);
    let b = t(&[hidden]);
    let _ = writeln!(
        s,
        "module @jit_mlp_chain attributes {{mhlo.num_partitions = {} : i32}} {{",
        data * model
    );
    let _ = writeln!(
        s,
        "  sdy.mesh @mesh = <[\"data\"={data}, \"model\"={model}]>"
    );
    let _ = write!(
        s,
        "  func.func public @main(%arg0: {act} {{sdy.sharding = #sdy.sharding<@mesh, [{{\"data\"}}, {{}}]>}}"
    );
    for i in 0..layers {
        let ws = if i % 2 == 0 {
            r#"[{}, {"model"}]"#
        } else {
            r#"[{"model"}, {}]"#
        };
        let _ = write!(
            s,
            ", %w{i}: {w} {{sdy.sharding = #sdy.sharding<@mesh, {ws}>}}, %b{i}: {b}"
        );
    }
    let _ = writeln!(s, ") -> ({act} {{jax.result_info = \"result\"}}) {{");
    let mut x = "%arg0".to_string();
    for i in 0..layers {
        let _ = writeln!(
            s,
            "    %d{i} = stablehlo.dot_general {x}, %w{i}, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : ({act}, {w}) -> {act}"
        );
        let _ = writeln!(
            s,
            "    %bb{i} = stablehlo.broadcast_in_dim %b{i}, dims = [1] : ({b}) -> {act}"
        );
        let _ = writeln!(s, "    %a{i} = stablehlo.add %d{i}, %bb{i} : {act}");
        let _ = writeln!(s, "    %t{i} = stablehlo.tanh %a{i} : {act}");
        x = format!("%t{i}");
    }
    let _ = writeln!(s, "    return {x} : {act}\n  }}\n}}");
    s
}
