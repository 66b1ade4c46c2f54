//! The per-device program: local types, device offsets, padding masks,
//! halo exchanges. (That it computes the right numbers is checked by
//! running it on the JAX fixtures, in the root crate's
//! `tests/cli_partition.rs`.)

use meshrun_compiler::ir::{OpKind, Scalar};
use meshrun_compiler::partition::program::print::print_device;
use meshrun_compiler::partition::CollectiveKind;
use meshrun_compiler::partition::{partition, DeviceProgram, Instr, RemapEntry};
use meshrun_compiler::text::parse_module;

fn program(text: &str) -> DeviceProgram {
    partition(&parse_module(text).expect("parses"))
        .expect("partitions")
        .device
}

fn local_shape(p: &DeviceProgram, v: usize) -> Vec<i64> {
    p.values[v].ty.shape.clone()
}

#[test]
fn inputs_and_outputs_have_local_types_and_global_shardings() {
    let p = program(
        r#"module @m {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func @main(%arg0: tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
    %0 = stablehlo.tanh %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : tensor<8x6xf32>
    return %0 : tensor<8x6xf32>
  }
}"#,
    );
    assert_eq!(p.devices, (0..8).collect::<Vec<i64>>());
    assert_eq!(local_shape(&p, p.inputs[0].value), vec![2, 3]);
    assert_eq!(p.inputs[0].global.shape, vec![8, 6]);
    assert_eq!(
        p.inputs[0].sharding.to_string(),
        r#"<@mesh, [{"x"}, {"y"}]>"#
    );
    assert_eq!(local_shape(&p, p.outputs[0].value), vec![2, 3]);
    assert_eq!(p.instrs.len(), 1);
    assert!(matches!(
        &p.instrs[0],
        Instr::Op {
            kind: OpKind::Unary(_),
            ..
        }
    ));
}

#[test]
fn iota_along_a_sharded_dimension_starts_at_the_device_offset() {
    let p = program(
        r#"module @m {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func @main() -> (tensor<8x4xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %0 = stablehlo.iota dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x4xi32>
    return %0 : tensor<8x4xi32>
  }
}"#,
    );
    let Instr::Iota {
        dim,
        offset,
        result,
        ..
    } = &p.instrs[0]
    else {
        panic!("expected an iota with offsets: {:?}", p.instrs[0]);
    };
    assert_eq!(*dim, 0);
    assert_eq!(local_shape(&p, *result), vec![2, 4]);
    // Device d sits at x = d / 2: rows 2x .. 2x+2.
    assert_eq!(offset.0, vec![0, 0, 2, 2, 4, 4, 6, 6]);
}

#[test]
fn padding_is_masked_to_the_reduction_identity_before_reducing() {
    // 12 rows on x=8: blocks of 2, the last two devices hold only padding.
    let p = program(
        r#"module @m {
  sdy.mesh @mesh = <["x"=8]>
  func.func @main(%arg0: tensor<12x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<16xf32>, tensor<16xf32>) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>]>} : (tensor<12x16xf32>, tensor<f32>) -> tensor<16xf32>
    %1 = stablehlo.exponential %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<12x16xf32>
    %cst0 = stablehlo.constant dense<0.0> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst0) applies stablehlo.add across dimensions = [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>]>} : (tensor<12x16xf32>, tensor<f32>) -> tensor<16xf32>
    return %0, %2 : tensor<16xf32>, tensor<16xf32>
  }
}"#,
    );
    let masks: Vec<(&Scalar, &Vec<i64>)> = p
        .instrs
        .iter()
        .filter_map(|i| match i {
            Instr::Mask {
                fill,
                valid,
                dim: 0,
                ..
            } => Some((fill, &valid.0)),
            _ => None,
        })
        .collect();
    assert_eq!(masks.len(), 2, "{}", print_device(&p, None).unwrap());
    assert_eq!(*masks[0].0, Scalar::Float(f64::NEG_INFINITY));
    assert_eq!(*masks[1].0, Scalar::Float(0.0));
    assert_eq!(*masks[0].1, vec![2, 2, 2, 2, 2, 2, 0, 0]);
    // Each reduce reads its mask, then partial results are all-reduced.
    let reductions: Vec<Option<_>> = p.collectives().map(|(c, _)| c.reduction).collect();
    assert_eq!(reductions.len(), 2);
}

#[test]
fn zero_padding_survives_zero_preserving_ops_but_not_exp() {
    let p = program(
        r#"module @m {
  sdy.mesh @mesh = <["x"=8]>
  func.func @main(%arg0: tensor<12x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4xf32>, tensor<4xf32>) {
    %cst = stablehlo.constant dense<0.0> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>]>} : (tensor<12x4xf32>, tensor<f32>) -> tensor<4xf32>
    %1 = stablehlo.tanh %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<12x4xf32>
    %2 = stablehlo.exponential %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<12x4xf32>
    %3 = stablehlo.reduce(%2 init: %cst) applies stablehlo.add across dimensions = [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>]>} : (tensor<12x4xf32>, tensor<f32>) -> tensor<4xf32>
    return %0, %3 : tensor<4xf32>, tensor<4xf32>
  }
}"#,
    );
    let masks = p
        .instrs
        .iter()
        .filter(|i| matches!(i, Instr::Mask { .. }))
        .count();
    // One mask for %arg0 (unknown padding), one after exp (exp(0) = 1).
    assert_eq!(masks, 2, "{}", print_device(&p, None).unwrap());
}

#[test]
fn slice_of_a_sharded_dimension_exchanges_only_the_needed_rows() {
    // 16 rows on x=4 (blocks of 4) sliced [2:14:2] -> 6 rows on x (blocks
    // of 2): block r needs rows 2+4r (own block) and 4+4r (next block).
    let p = program(
        r#"module @m {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %0 = stablehlo.slice %arg0 [2:14:2, 0:8] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<16x8xf32>) -> tensor<6x8xf32>
    return %0 : tensor<6x8xf32>
  }
}"#,
    );
    let kinds: Vec<&str> = p
        .instrs
        .iter()
        .map(|i| match i {
            Instr::SliceDim { .. } => "slice_dim",
            Instr::Collective { .. } => "permute",
            Instr::Remap { .. } => "remap",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        vec!["slice_dim", "permute", "remap"],
        "{}",
        print_device(&p, None).unwrap()
    );
    let Instr::SliceDim { size, start, .. } = &p.instrs[0] else {
        unreachable!()
    };
    assert_eq!(*size, 1);
    assert_eq!(start.0, vec![0, 0, 0, 0]);
    let Instr::Collective { collective: c, .. } = &p.instrs[1] else {
        unreachable!()
    };
    assert_eq!(c.kind, CollectiveKind::CollectivePermute);
    // Blocks 1, 2, 3 send their first row to 0, 1, 2; block 3 of the
    // result (rows 6, 7) is past the end and needs nothing.
    assert_eq!(c.groups, vec![vec![1, 0], vec![2, 1], vec![3, 2]]);
    let Instr::Remap { table, sources, .. } = &p.instrs[2] else {
        unreachable!()
    };
    assert_eq!(sources.len(), 2);
    let own = |index| RemapEntry::Source { source: 0, index };
    let halo = RemapEntry::Source {
        source: 1,
        index: 0,
    };
    assert_eq!(table.0[0], vec![own(2), halo]);
    assert_eq!(table.0[2], vec![own(2), halo]);
    assert_eq!(table.0[3], vec![RemapEntry::Fill, RemapEntry::Fill]);
}

#[test]
fn slice_of_a_replicated_dimension_into_a_sharded_one_is_local() {
    let p = program(
        r#"module @m {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %0 = stablehlo.slice %arg0 [4:8, 0:8] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x8xf32>) -> tensor<4x8xf32>
    return %0 : tensor<4x8xf32>
  }
}"#,
    );
    assert_eq!(p.total_bytes_per_device(), 0.0);
    let Some(Instr::Remap { table, .. }) = p.instrs.last() else {
        panic!("{}", print_device(&p, None).unwrap());
    };
    let src = |index| RemapEntry::Source { source: 0, index };
    assert_eq!(table.0[0], vec![src(4), src(5)]);
    assert_eq!(table.0[1], vec![src(6), src(7)]);
}

#[test]
fn device_listing_resolves_tables_and_groups() {
    let p = program(
        r#"module @m {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main() -> (tensor<8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
    %0 = stablehlo.iota dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : tensor<8xi32>
    return %0 : tensor<8xi32>
  }
}"#,
    );
    let text = print_device(&p, Some(3)).expect("device 3 exists");
    assert!(text.contains("offset = 6"), "{text}");
    assert!(print_device(&p, Some(4)).is_err());
}

/// `@main(%x, %w)` with these shardings, one convolution (NHWC x HWIO),
/// its result sharded as `out`.
fn conv_program(lhs: &str, rhs: &str, fg: i64, shardings: [&str; 3], out: &str) -> DeviceProgram {
    let [sx, sw, so] = shardings;
    program(&format!(
        r#"module @m {{
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%x: {lhs} {{sdy.sharding = #sdy.sharding<@mesh, {sx}>}}, %w: {rhs} {{sdy.sharding = #sdy.sharding<@mesh, {sw}>}}) -> ({out}) {{
    %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {{stride = [1, 1], pad = [[1, 1], [1, 1]]}} {{batch_group_count = 1 : i64, feature_group_count = {fg} : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, {so}>]>}} : ({lhs}, {rhs}) -> {out}
    return %0 : {out}
  }}
}}"#
    ))
}

/// The local convolution and the reasons of every collective.
fn conv_and_causes(
    p: &DeviceProgram,
) -> (
    meshrun_compiler::ir::ops::convolution::Convolution,
    Vec<String>,
) {
    let mut conv = None;
    let mut causes = Vec::new();
    for i in &p.instrs {
        match i {
            Instr::Op {
                kind: OpKind::Convolution(c),
                ..
            } => conv = Some(c.clone()),
            Instr::Collective {
                cause, collective, ..
            } => causes.push(format!("{}: {}", collective.kind, cause.reason)),
            _ => {}
        }
    }
    (conv.expect("a local convolution"), causes)
}

#[test]
fn convolution_shardings_stay_local_or_say_why_they_move() {
    let (lhs, rhs, out) = (
        "tensor<8x6x6x8xf32>",
        "tensor<3x3x8x12xf32>",
        "tensor<8x6x6x12xf32>",
    );
    // Batch or output features sharded: local, no collective.
    for s in [
        [
            r#"[{"x"}, {}, {}, {}]"#,
            "[{}, {}, {}, {}]",
            r#"[{"x"}, {}, {}, {}]"#,
        ],
        [
            "[{}, {}, {}, {}]",
            r#"[{}, {}, {}, {"x"}]"#,
            r#"[{}, {}, {}, {"x"}]"#,
        ],
    ] {
        let p = conv_program(lhs, rhs, 1, s, out);
        let (_, causes) = conv_and_causes(&p);
        assert!(causes.is_empty(), "{s:?}: {causes:?}");
    }
    // Input features sharded on both operands: partial sums, all-reduced.
    let p = conv_program(
        lhs,
        rhs,
        1,
        [
            r#"[{}, {}, {}, {"x"}]"#,
            r#"[{}, {}, {"x"}, {}]"#,
            "[{}, {}, {}, {}]",
        ],
        out,
    );
    let (_, causes) = conv_and_causes(&p);
    assert_eq!(causes.len(), 1, "{causes:?}");
    assert!(
        causes[0].contains("partial sums of stablehlo.convolution"),
        "{causes:?}"
    );
    // A sharded spatial dimension that does not split evenly (6 rows
    // over 4) is gathered, saying why (even blocks exchange halos:
    // runtime/tests/sharded_halo.rs).
    let p = conv_program(
        lhs,
        rhs,
        1,
        [
            r#"[{}, {"x"}, {}, {}]"#,
            "[{}, {}, {}, {}]",
            "[{}, {}, {}, {}]",
        ],
        out,
    );
    let (_, causes) = conv_and_causes(&p);
    assert!(
        causes
            .iter()
            .any(|c| c.contains("windows along lhs dimension 1 read beyond the neighbouring blocks (or its blocks are uneven)")),
        "{causes:?}"
    );
    // Depthwise: 4 feature groups on 4 devices, one whole group each.
    let p = conv_program(
        lhs,
        "tensor<3x3x2x12xf32>",
        4,
        [
            r#"[{}, {}, {}, {"x"}]"#,
            r#"[{}, {}, {}, {"x"}]"#,
            r#"[{}, {}, {}, {"x"}]"#,
        ],
        out,
    );
    let (conv, causes) = conv_and_causes(&p);
    assert!(causes.is_empty(), "{causes:?}");
    assert_eq!(conv.feature_group_count, 1);
}
