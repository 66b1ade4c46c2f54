//! Convolutions and reduce_windows sharded along a window dimension whose
//! windows overlap the block boundaries: each device fetches only the
//! boundary rows of its neighbours (collective-permutes, "halo of ..."),
//! as XLA's SPMD partitioner does, and the results match the unsharded
//! reference. Halos beyond a neighbour's block, uneven blocks and
//! select_and_scatter gather the dimension instead.

use meshrun_compiler::partition::CollectiveKind;
use meshrun_kernels::HostTensor;

#[path = "common/sharded.rs"]
mod sharded;
use sharded::{collectives, run_both};

fn wavy(shape: &[usize]) -> HostTensor {
    let n: usize = shape.iter().product();
    let v = (0..n)
        .map(|i| ((i * 37 % 101) as f32) * 0.125 - 6.0)
        .collect();
    HostTensor::from_vec(shape, v).unwrap()
}

fn windows(size: i64, k: i64, stride: i64, pad: (i64, i64), lhs_dil: i64, rhs_dil: i64) -> i64 {
    let padded = (size - 1) * lhs_dil + 1 + pad.0 + pad.1;
    let span = (k - 1) * rhs_dil + 1;
    (padded - span) / stride + 1
}

/// A 2xHx8x3 NHWC input convolved with a 3x3x3x4 kernel; the height's
/// window attributes as given (the width's: SAME, stride 1), the input
/// and output sharded as `sharding`.
fn conv(
    h: i64,
    stride: i64,
    pad: (i64, i64),
    lhs_dil: i64,
    rhs_dil: i64,
    sharding: &str,
) -> (String, i64) {
    let oh = windows(h, 3, stride, pad, lhs_dil, rhs_dil);
    let text = format!(
        r#"
  func.func @main(%x: tensor<2x{h}x8x3xf32> {{sdy.sharding = #sdy.sharding<@mesh, {sharding}>}}, %w: tensor<3x3x3x4xf32>) -> (tensor<2x{oh}x8x4xf32> {{sdy.sharding = #sdy.sharding<@mesh, {sharding}>}}) {{
    %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {{stride = [{stride}, 1], pad = [[{}, {}], [1, 1]], lhs_dilate = [{lhs_dil}, 1], rhs_dilate = [{rhs_dil}, 1], reverse = [false, false]}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : (tensor<2x{h}x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<2x{oh}x8x4xf32>
    return %0 : tensor<2x{oh}x8x4xf32>
  }}"#,
        pad.0, pad.1
    );
    (text, oh)
}

fn run_conv(
    h: i64,
    stride: i64,
    pad: (i64, i64),
    lhs_dil: i64,
    rhs_dil: i64,
    sharding: &str,
) -> Vec<(CollectiveKind, String)> {
    let (text, _) = conv(h, stride, pad, lhs_dil, rhs_dil, sharding);
    let p = run_both(&text, &[wavy(&[2, h as usize, 8, 3]), wavy(&[3, 3, 3, 4])]);
    collectives(&p)
}

fn only_halos(c: &[(CollectiveKind, String)], op: &str) {
    assert!(!c.is_empty(), "no halo exchanged");
    assert!(
        c.iter()
            .all(|(k, why)| *k == CollectiveKind::CollectivePermute
                && why.contains(&format!("halo of {op}"))
                && why.contains("along dimension 1")),
        "{c:?}"
    );
}

#[test]
fn same_conv_on_rows_exchanges_one_row_with_each_neighbour() {
    // 16 rows over model (4) and over data (2); both axes (8 blocks of 2).
    for sharding in [
        r#"[{}, {"model"}, {}, {}]"#,
        r#"[{}, {"data"}, {}, {}]"#,
        r#"[{}, {"data", "model"}, {}, {}]"#,
        r#"[{"data"}, {"model"}, {}, {}]"#,
    ] {
        let c = run_conv(16, 1, (1, 1), 1, 1, sharding);
        only_halos(&c, "stablehlo.convolution");
        assert_eq!(c.len(), 2, "{sharding}: one permute per direction: {c:?}");
    }
}

#[test]
fn strided_valid_dilated_and_negative_padded_convs_exchange_halos() {
    let model = r#"[{}, {"model"}, {}, {}]"#;
    // stride 2 SAME: a right halo only.
    let c = run_conv(16, 2, (0, 1), 1, 1, model);
    only_halos(&c, "stablehlo.convolution");
    assert_eq!(c.len(), 1, "{c:?}");
    // VALID: 18 rows -> 16 windows, blocks of 9 and 4.
    let c = run_conv(18, 1, (0, 0), 1, 1, r#"[{}, {"data"}, {}, {}]"#);
    only_halos(&c, "stablehlo.convolution");
    // rhs dilation 2 (two-row halos), SAME.
    only_halos(
        &run_conv(16, 1, (2, 2), 1, 2, model),
        "stablehlo.convolution",
    );
    // Negative padding (rows trimmed at the edges).
    only_halos(
        &run_conv(20, 1, (-1, 3), 1, 1, model),
        "stablehlo.convolution",
    );
}

#[test]
fn transposed_conv_with_lhs_dilation_exchanges_halos() {
    // lhs_dilation 2 (a strided conv's input gradient): 8 rows -> 16
    // outputs; the blocks keep the base dilation.
    only_halos(
        &run_conv(8, 1, (1, 2), 2, 1, r#"[{}, {"model"}, {}, {}]"#),
        "stablehlo.convolution",
    );
    // lhs_dilation 3 with stride 2: the blocks start at other phases of
    // the dilated input, so the holes are built in.
    let h = 8;
    let (text, oh) = conv(h, 2, (5, 6), 3, 1, r#"[{}, {"model"}, {}, {}]"#);
    assert_eq!(oh, 16);
    let p = run_both(&text, &[wavy(&[2, h as usize, 8, 3]), wavy(&[3, 3, 3, 4])]);
    only_halos(&collectives(&p), "stablehlo.convolution");
}

#[test]
fn halos_beyond_the_neighbours_gather_the_rows() {
    // Blocks of 2 rows, rhs dilation 3: 3 rows from each side (two hops).
    let c = run_conv(8, 1, (3, 3), 1, 3, r#"[{}, {"model"}, {}, {}]"#);
    assert!(
        c.iter().any(|(k, why)| *k == CollectiveKind::AllGather
            && why.contains("read beyond the neighbouring blocks")),
        "{c:?}"
    );
    // Uneven blocks: 10 rows over 4.
    let c = run_conv(10, 1, (1, 1), 1, 1, r#"[{}, {"model"}, {}, {}]"#);
    assert!(
        c.iter().any(|(k, _)| *k == CollectiveKind::AllGather),
        "{c:?}"
    );
}

const MAX: &str = "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n    %s = stablehlo.maximum %a, %b : tensor<f32>\n    stablehlo.return %s : tensor<f32>";

/// A max pool over rows and columns of a 2xHx8x3 input.
fn pool(
    h: i64,
    win: i64,
    stride: i64,
    pad: (i64, i64),
    base: i64,
    sharding: &str,
) -> (String, i64) {
    let oh = {
        let padded = (h - 1) * base + 1 + pad.0 + pad.1;
        (padded - win) / stride + 1
    };
    let text = format!(
        r#"
  func.func @main(%x: tensor<2x{h}x8x3xf32> {{sdy.sharding = #sdy.sharding<@mesh, {sharding}>}}) -> (tensor<2x{oh}x8x3xf32> {{sdy.sharding = #sdy.sharding<@mesh, {sharding}>}}) {{
    %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %r = "stablehlo.reduce_window"(%x, %c) <{{base_dilations = array<i64: 1, {base}, 1, 1>, padding = dense<[[0, 0], [{}, {}], [1, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, {win}, 3, 1>, window_strides = array<i64: 1, {stride}, 1, 1>}}> ({{
{MAX}
    }}) : (tensor<2x{h}x8x3xf32>, tensor<f32>) -> tensor<2x{oh}x8x3xf32>
    return %r : tensor<2x{oh}x8x3xf32>
  }}"#,
        pad.0, pad.1
    );
    (text, oh)
}

#[test]
fn max_pools_on_rows_exchange_halos_filled_with_the_init_value() {
    let model = r#"[{}, {"model"}, {}, {}]"#;
    for (h, win, stride, pad, base) in [
        (16, 3, 1, (1, 1), 1), // 3x3 SAME stride 1
        (16, 3, 2, (0, 1), 1), // 3x3 SAME stride 2
        (16, 2, 1, (0, 0), 1), // VALID 2x2 stride 1 -> 15 rows: uneven, gathered
        (8, 3, 1, (1, 2), 2),  // base dilation 2
        (16, 5, 1, (2, 2), 1), // two-row halos
    ] {
        let (text, oh) = pool(h, win, stride, pad, base, model);
        let p = run_both(&text, &[wavy(&[2, h as usize, 8, 3])]);
        let c = collectives(&p);
        if oh % 4 == 0 {
            only_halos(&c, "stablehlo.reduce_window");
        } else {
            assert!(
                c.iter().any(|(k, _)| *k == CollectiveKind::AllGather),
                "{c:?}"
            );
        }
    }
}
