//! reduce_window and select_and_scatter run sharded on 8 CPU devices
//! against the unsharded reference. Sharded pass-through dimensions (batch,
//! channels) stay local; a sharded window dimension whose halos would
//! come from beyond the neighbours or whose blocks are uneven (cumsum
//! along a sharded axis, pooling over rows that do not split evenly) is
//! gathered whole first, with the op and the reason in the listing (even
//! blocks exchange halos: `sharded_halo.rs`).

use meshrun_compiler::partition::CollectiveKind;
use meshrun_kernels::HostTensor;

#[path = "common/sharded.rs"]
mod sharded;
use sharded::{collectives, run_both};

/// Values that differ everywhere (so a wrong window or selection shows).
fn wavy(shape: &[usize]) -> HostTensor {
    let n: usize = shape.iter().product();
    let v = (0..n)
        .map(|i| ((i * 37 % 101) as f32) * 0.125 - 6.0)
        .collect();
    HostTensor::from_vec(shape, v).unwrap()
}

const ADD: &str = "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n    %s = stablehlo.add %a, %b : tensor<f32>\n    stablehlo.return %s : tensor<f32>";
const MAX: &str = "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n    %s = stablehlo.maximum %a, %b : tensor<f32>\n    stablehlo.return %s : tensor<f32>";

/// `jnp.cumsum(x, axis)` of a 8x12 input sharded as `sharding`.
fn cumsum(axis: usize, sharding: &str) -> String {
    let (window, padding) = if axis == 0 {
        ("8, 1", "[[7, 0], [0, 0]]")
    } else {
        ("1, 12", "[[0, 0], [11, 0]]")
    };
    format!(
        r#"
  func.func @main(%x: tensor<8x12xf32> {{sdy.sharding = #sdy.sharding<@mesh, {sharding}>}}) -> tensor<8x12xf32> {{
    %c = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %r = "stablehlo.reduce_window"(%x, %c) <{{padding = dense<{padding}> : tensor<2x2xi64>, window_dimensions = array<i64: {window}>}}> ({{
{ADD}
    }}) : (tensor<8x12xf32>, tensor<f32>) -> tensor<8x12xf32>
    return %r : tensor<8x12xf32>
  }}"#
    )
}

#[test]
fn cumsum_over_a_sharded_batch_stays_local() {
    let p = run_both(&cumsum(1, r#"[{"data", "model"}, {}]"#), &[wavy(&[8, 12])]);
    assert!(collectives(&p).is_empty(), "{:?}", collectives(&p));
}

#[test]
fn cumsum_along_a_sharded_axis_gathers_it_first() {
    let p = run_both(&cumsum(1, r#"[{"data"}, {"model"}]"#), &[wavy(&[8, 12])]);
    let c = collectives(&p);
    assert!(!c.is_empty(), "the scanned axis must be gathered");
    let gathers: Vec<_> = c
        .iter()
        .filter(|(k, _)| *k != CollectiveKind::AllSlice)
        .collect();
    assert!(
        !gathers.is_empty()
            && gathers
                .iter()
                .all(|(k, why)| *k == CollectiveKind::AllGather
                    && why.contains("stablehlo.reduce_window")
                    && why.contains("factor j (permutation)")),
        "{c:?}"
    );
    // Along rows (the scanned axis on both mesh axes).
    run_both(&cumsum(0, r#"[{"data", "model"}, {}]"#), &[wavy(&[8, 12])]);
}

/// A 2x2 / stride 2 max pool and its gradient over an NHWC input sharded
/// as `sharding` (source and result alike), 4x8x6x4.
fn max_pool_and_grad(sharding: &str) -> String {
    max_pool_and_grad_of(sharding, 6)
}

/// The same on a 4x8xWx4 input.
fn max_pool_and_grad_of(sharding: &str, w: usize) -> String {
    let text = format!(
        r#"
  func.func @main(%x: tensor<4x8x6x4xf32> {{sdy.sharding = #sdy.sharding<@mesh, {sharding}>}}, %g: tensor<4x4x3x4xf32> {{sdy.sharding = #sdy.sharding<@mesh, {sharding}>}}) -> (tensor<4x4x3x4xf32>, tensor<4x8x6x4xf32>) {{
    %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %p = "stablehlo.reduce_window"(%x, %c) <{{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}}> ({{
{MAX}
    }}) : (tensor<4x8x6x4xf32>, tensor<f32>) -> tensor<4x4x3x4xf32>
    %z = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %r = "stablehlo.select_and_scatter"(%x, %g, %z) <{{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}}> ({{
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %q = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %q : tensor<i1>
    }}, {{
{ADD}
    }}) : (tensor<4x8x6x4xf32>, tensor<4x4x3x4xf32>, tensor<f32>) -> tensor<4x8x6x4xf32>
    return %p, %r : tensor<4x4x3x4xf32>, tensor<4x8x6x4xf32>
  }}"#
    );
    text.replace("x6x4xf32", &format!("x{w}x4xf32"))
        .replace("x3x4xf32", &format!("x{}x4xf32", w / 2))
}

#[test]
fn pooling_sharded_on_batch_and_channels_stays_local() {
    let src = max_pool_and_grad(r#"[{"data"}, {}, {}, {"model"}]"#);
    let p = run_both(&src, &[wavy(&[4, 8, 6, 4]), wavy(&[4, 4, 3, 4])]);
    assert!(collectives(&p).is_empty(), "{:?}", collectives(&p));
}

#[test]
fn pooling_over_rows_split_into_whole_windows_stays_local() {
    // 8 rows = 4 windows over model (4), 8 columns = 4 windows over data (2).
    let src = max_pool_and_grad_of(r#"[{}, {"model"}, {"data"}, {}]"#, 8);
    let p = run_both(&src, &[wavy(&[4, 8, 8, 4]), wavy(&[4, 4, 4, 4])]);
    assert!(collectives(&p).is_empty(), "{:?}", collectives(&p));
}

#[test]
fn pooling_sharded_on_rows_gathers_them() {
    // Rows split into whole windows (local); 6 columns = 3 windows do not
    // split over data (2): gathered.
    let src = max_pool_and_grad(r#"[{}, {"model"}, {"data"}, {}]"#);
    let p = run_both(&src, &[wavy(&[4, 8, 6, 4]), wavy(&[4, 4, 3, 4])]);
    let c = collectives(&p);
    // (select_and_scatter reuses the gathered operand.)
    assert!(
        c.iter().any(|(k, why)| *k == CollectiveKind::AllGather
            && why.starts_with("stablehlo.reduce_window")
            && why.contains("factor k (permutation)")),
        "{c:?}"
    );
    assert!(
        !c.iter().any(|(_, why)| why.contains("factor j")),
        "rows stay local: {c:?}"
    );
}

#[test]
fn dilated_padded_windows_over_two_inputs_sharded() {
    // Max of x and sum of y over dilated, padded windows; rows sharded on
    // model (gathered), columns with a 1-wide window on data (local).
    let body = r#"
  func.func @main(%x: tensor<9x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {"data"}]>}, %y: tensor<9x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {"data"}]>}) -> (tensor<7x8xf32>, tensor<7x8xf32>) {
    %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %z = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %r:2 = "stablehlo.reduce_window"(%x, %y, %c, %z) <{base_dilations = array<i64: 2, 1>, padding = dense<[[2, 1], [0, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 3, 1>, window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %a2: tensor<f32>, %b2: tensor<f32>):
    %m = stablehlo.maximum %a, %a2 : tensor<f32>
    %s = stablehlo.add %b, %b2 : tensor<f32>
    stablehlo.return %m, %s : tensor<f32>, tensor<f32>
    }) : (tensor<9x8xf32>, tensor<9x8xf32>, tensor<f32>, tensor<f32>) -> (tensor<7x8xf32>, tensor<7x8xf32>)
    return %r#0, %r#1 : tensor<7x8xf32>, tensor<7x8xf32>
  }"#;
    run_both(body, &[wavy(&[9, 8]), wavy(&[9, 8])]);
}
