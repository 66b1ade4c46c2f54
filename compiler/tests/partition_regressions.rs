//! Regressions the runtime's differential test found in the partitioner
//! (`runtime/tests/executor_known_bugs.rs` has them end to end).
//!
//! These programs only move data (reshape, negate), so they are checked on
//! index tensors: every input element is its global flat index, the device
//! program is run device by device (collectives with
//! `partition::reshard::simulate::apply`, local instructions here), and every real
//! element of every output block must be the element the output sharding
//! puts there. A local op that reads padding as data, or a block that sits
//! on the wrong device, shows up as a wrong cell.

use meshrun_compiler::ir::OpKind;
use meshrun_compiler::partition::global::GStepKind;
use meshrun_compiler::partition::reshard::simulate::{apply, layout_blocks, Block, Blocks, Cell};
use meshrun_compiler::partition::CollectiveKind;
use meshrun_compiler::partition::{
    partition, DeviceProgram, Instr, LocalId, PartitionedProgram, RemapEntry,
};
use meshrun_compiler::propagation::{propagate, PropagationOptions};
use meshrun_compiler::sharding::layout::TensorLayout;
use meshrun_compiler::text::parse_module;

fn compile(text: &str) -> PartitionedProgram {
    let module = parse_module(text).expect("parses");
    let propagated = propagate(&module, &PropagationOptions::default()).expect("propagates");
    partition(&propagated).expect("partitions")
}

fn unflat(shape: &[i64], mut f: usize) -> Vec<i64> {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        let n = shape[d].max(1) as usize;
        idx[d] = (f % n) as i64;
        f /= n;
    }
    idx
}

/// One device's result of a local instruction.
fn run_local(
    p: &DeviceProgram,
    instr: &Instr,
    pos: usize,
    get: &dyn Fn(LocalId) -> Block,
) -> Block {
    let ty = |v: LocalId| p.values[v].ty.shape.clone();
    let fresh = |shape: Vec<i64>| Block {
        cells: vec![Cell::PADDING; shape.iter().product::<i64>() as usize],
        shape,
    };
    match instr {
        Instr::Op {
            kind,
            operands,
            results,
            ..
        } => {
            let input = get(operands[0]);
            match kind {
                // Same elements in row-major order, in the local shape.
                OpKind::Reshape(_) | OpKind::Unary(_) => Block {
                    shape: ty(results[0]),
                    cells: input.cells,
                },
                other => panic!("the test simulator does not run {}", other.name()),
            }
        }
        Instr::Mask {
            operand,
            dim,
            valid,
            ..
        } => {
            let mut b = get(*operand);
            for f in 0..b.cells.len() {
                if unflat(&b.shape, f)[*dim] >= valid.0[pos] {
                    b.cells[f] = Cell::PADDING;
                }
            }
            b
        }
        Instr::SliceDim {
            operand,
            result,
            dim,
            start,
            ..
        } => {
            let src = get(*operand);
            let mut b = fresh(ty(*result));
            for f in 0..b.cells.len() {
                let mut idx = unflat(&b.shape, f);
                idx[*dim] += start.0[pos];
                b.cells[f] = src.get(&idx);
            }
            b
        }
        Instr::Remap {
            sources,
            result,
            dim,
            table,
            ..
        } => {
            let mut b = fresh(ty(*result));
            let row = &table.0[pos];
            for f in 0..b.cells.len() {
                let idx = unflat(&b.shape, f);
                b.cells[f] = match row[idx[*dim] as usize] {
                    RemapEntry::Fill => Cell::PADDING,
                    RemapEntry::Source { source, index } => {
                        let mut src = idx.clone();
                        src[*dim] = index;
                        get(sources[source as usize]).get(&src)
                    }
                };
            }
            b
        }
        Instr::Iota { .. } | Instr::Collective { .. } | Instr::Loop(_) | Instr::Branch(_) => {
            panic!("not a local data movement: {instr:?}")
        }
    }
}

/// Run the device program on index tensors and check every output.
fn check_data_movement(program: &PartitionedProgram) -> Result<(), String> {
    let p = &program.device;
    let mut vals: Vec<Option<Blocks>> = vec![None; p.values.len()];
    for io in &p.inputs {
        let blocks =
            layout_blocks(&io.mesh, &io.sharding, &io.global.shape).map_err(|e| e.to_string())?;
        vals[io.value] = Some(blocks);
    }
    for (step, instr) in p.instrs.iter().enumerate() {
        let read = |v: LocalId| vals[v].clone().unwrap_or_else(|| panic!("value {v} unset"));
        match instr {
            Instr::Collective {
                collective,
                operand,
                result,
                ..
            } if collective.kind == CollectiveKind::CollectivePermute => {
                // Pairs may cover only some devices: the others receive
                // a block of zeros (padding here).
                let input = read(*operand);
                let shape = collective.out_local_shape.clone();
                let mut out: Blocks = p
                    .devices
                    .iter()
                    .map(|&d| {
                        let cells = vec![Cell::PADDING; shape.iter().product::<i64>() as usize];
                        (
                            d,
                            Block {
                                shape: shape.clone(),
                                cells,
                            },
                        )
                    })
                    .collect();
                for pair in &collective.groups {
                    out.insert(pair[1], input[&pair[0]].clone());
                }
                vals[*result] = Some(out);
            }
            Instr::Collective {
                collective,
                operand,
                result,
                ..
            } => {
                let (next, _) =
                    apply(&read(*operand), collective, step).map_err(|e| e.to_string())?;
                vals[*result] = Some(next);
            }
            _ => {
                let mut out = Blocks::new();
                for (pos, &d) in p.devices.iter().enumerate() {
                    let get = |v: LocalId| read(v)[&d].clone();
                    out.insert(d, run_local(p, instr, pos, &get));
                }
                for r in instr.results() {
                    vals[r] = Some(out.clone());
                }
            }
        }
    }
    for (k, io) in p.outputs.iter().enumerate() {
        let want =
            layout_blocks(&io.mesh, &io.sharding, &io.global.shape).map_err(|e| e.to_string())?;
        let got = vals[io.value].as_ref().ok_or("output unset")?;
        for (device, w) in &want {
            let g = &got[device];
            for (f, cell) in w.cells.iter().enumerate() {
                if cell.is_pad() {
                    continue; // output padding is ignored
                }
                let idx = unflat(&w.shape, f);
                let have = g.get(&idx);
                if have.index != cell.index {
                    return Err(format!(
                        "output {k}, device {device}, local {idx:?}: element {} where {} belongs",
                        have.index, cell.index
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The shardings of the reshape's operand and result as the partitioned
/// program computes them.
fn reshape_shardings(program: &PartitionedProgram) -> Vec<(String, String)> {
    let g = &program.global;
    g.steps
        .iter()
        .filter(|s| {
            matches!(
                s.kind,
                GStepKind::Compute(OpKind::Reshape(meshrun_compiler::ir::ops::reshape::Reshape))
            )
        })
        .map(|s| {
            (
                g.values[s.operands[0]].sharding.to_string(),
                g.values[s.results[0]].sharding.to_string(),
            )
        })
        .collect()
}

/// Whether the block layout of a value is padded.
fn is_padded(program: &PartitionedProgram, v: usize) -> bool {
    let g = &program.global;
    let val = &g.values[v];
    let mesh = g.mesh_of(&val.sharding).expect("known mesh");
    TensorLayout::new(mesh, &val.sharding, &val.ty.shape)
        .expect("layout")
        .is_padded()
}

/// 6 rows on "a"=4 are blocks of 2 with 2 rows of padding at the end;
/// as 2x3 rows on `[{"a":(1)2}, {"a":(2)2}]` each row of 3 is padded to 4
/// instead. Shardy (JAX 0.10.2) propagates exactly these shardings, and
/// XLA moves data to do the reshape; meshrun computes it with the padded
/// factor unsharded (the operand is resharded to `[{"a":(1)2}, {}]`, which
/// is what the argument already is) and slices the result afterwards.
const RESHAPE_PADDED_ROWS: &str = r#"
module @reshape_padded {
  sdy.mesh @mesh = <["a"=4]>
  func.func public @main(%arg0: tensor<6x5xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> (tensor<2x3x5xf32>) {
    %0 = stablehlo.reshape %arg0 : (tensor<6x5xf32>) -> tensor<2x3x5xf32>
    return %0 : tensor<2x3x5xf32>
  }
}"#;

#[test]
fn reshape_of_padded_rows_moves_every_row_to_its_device() {
    let p = compile(RESHAPE_PADDED_ROWS);
    check_data_movement(&p).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        reshape_shardings(&p),
        vec![(
            r#"<@mesh, [{"a":(1)2}, {}]>"#.to_string(),
            r#"<@mesh, [{"a":(1)2}, {}, {}]>"#.to_string()
        )]
    );
}

#[test]
fn reshape_splitting_a_padded_dimension_the_other_way_moves_data_too() {
    // The merge direction: 2x3 rows on [{"a":(1)2}, {"a":(2)2}] (each row
    // of 3 padded to 4) merged into 6 rows.
    let p = compile(
        r#"
module @reshape_merge_padded {
  sdy.mesh @mesh = <["a"=4]>
  func.func public @main(%arg0: tensor<2x3x5xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a":(1)2}, {"a":(2)2}, {}]>}) -> (tensor<6x5xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) {
    %0 = stablehlo.reshape %arg0 : (tensor<2x3x5xf32>) -> tensor<6x5xf32>
    return %0 : tensor<6x5xf32>
  }
}"#,
    );
    check_data_movement(&p).unwrap_or_else(|e| panic!("{e}"));
    for (operand, result) in reshape_shardings(&p) {
        assert!(
            !result.contains(r#""a":(2)2"#) && !operand.contains(r#""a":(2)2"#),
            "the padded factor stays sharded: {operand} -> {result}"
        );
    }
}

#[test]
fn a_divisible_compound_reshape_stays_local() {
    // 8 rows on "a"=4 split into 2x4: no padding, no data movement.
    let p = compile(
        r#"
module @reshape_divisible {
  sdy.mesh @mesh = <["a"=4]>
  func.func public @main(%arg0: tensor<8x5xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> (tensor<2x4x5xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a":(1)2}, {"a":(2)2}, {}]>}) {
    %0 = stablehlo.reshape %arg0 : (tensor<8x5xf32>) -> tensor<2x4x5xf32>
    return %0 : tensor<2x4x5xf32>
  }
}"#,
    );
    check_data_movement(&p).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.device.collectives().count(), 0);
}

#[test]
fn a_padded_reshape_with_a_single_factor_per_dimension_stays_local() {
    // 7x1 -> 7: the padded factor is alone in its dimension on both sides
    // (the size-1 dimension has its own factor), so the blocks agree.
    let p = compile(
        r#"
module @reshape_padded_alone {
  sdy.mesh @mesh = <["a"=2]>
  func.func public @main(%arg0: tensor<7x1xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> (tensor<7xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}) {
    %0 = stablehlo.negate %arg0 : tensor<7x1xf32>
    %1 = stablehlo.reshape %0 : (tensor<7x1xf32>) -> tensor<7xf32>
    return %1 : tensor<7xf32>
  }
}"#,
    );
    check_data_movement(&p).unwrap_or_else(|e| panic!("{e}"));
    // (The argument and result are resharded: meshrun, like Shardy,
    // shrinks non-divisible argument and result shardings.)
    assert_eq!(
        reshape_shardings(&p),
        vec![(
            r#"<@mesh, [{"a"}, {}]>"#.to_string(),
            r#"<@mesh, [{"a"}]>"#.to_string()
        )]
    );
}

/// A size-1 dimension sharded by "a": devices a=1 hold only padding. A
/// reshape that drops the dimension must not compute from those blocks.
const RESHAPE_DROPS_SHARDED_SIZE_ONE_DIM: &str = r#"
module @reshape_size_one_dim {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func public @main(%arg0: tensor<1x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>}) -> (tensor<16xf32>) {
    %0 = stablehlo.negate %arg0 : tensor<1x16xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x16xf32>) -> tensor<16xf32>
    return %1 : tensor<16xf32>
  }
}"#;

#[test]
fn reshape_dropping_a_sharded_size_one_dim_reshards_it_first() {
    let p = compile(RESHAPE_DROPS_SHARDED_SIZE_ONE_DIM);
    check_data_movement(&p).unwrap_or_else(|e| panic!("{e}"));
    let shardings = reshape_shardings(&p);
    assert_eq!(shardings.len(), 1);
    let (operand, _) = &shardings[0];
    assert!(
        !operand.contains(r#""a""#),
        "the reshape reads a block sharded along the dropped dimension: {operand}"
    );
    // The reshape's operand is not padded any more.
    let g = &p.global;
    let step = g
        .steps
        .iter()
        .find(|s| {
            matches!(
                s.kind,
                GStepKind::Compute(OpKind::Reshape(meshrun_compiler::ir::ops::reshape::Reshape))
            )
        })
        .expect("a reshape");
    assert!(!is_padded(&p, step.operands[0]));
}

#[test]
fn broadcast_of_a_sharded_size_one_dim_reshards_it_first() {
    // The same pattern through broadcast_in_dim: the operand's size-1
    // dimension has a factor the result does not have.
    let p = compile(
        r#"
module @broadcast_size_one_dim {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func public @main(%arg0: tensor<1x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>}) -> (tensor<4x16xf32>) {
    %0 = stablehlo.negate %arg0 : tensor<1x16xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<4x16xf32>
    return %1 : tensor<4x16xf32>
  }
}"#,
    );
    let g = &p.global;
    for s in &g.steps {
        if matches!(s.kind, GStepKind::Compute(OpKind::BroadcastInDim(_))) {
            let operand = &g.values[s.operands[0]].sharding;
            assert!(
                operand.dims[0].axes.is_empty(),
                "broadcast reads a size-1 dimension sharded {operand}"
            );
        }
    }
}

/// One SPMD program serves every device: the GPT-2 training step on a
/// "model" axis of 256 and of 1024 devices (4 x 256 and 4 x 1024 devices)
/// has the same collectives, so its size (and the time to plan it) grows
/// with the device count only through the per-device tables. Remaps that
/// would fetch from more than `MAX_RESHARD_REMAP_ROUNDS` blocks (one
/// collective-permute each) become whole-block collectives.
#[test]
fn the_program_does_not_grow_collectives_with_the_mesh() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/jax/gpt2_train_step/input.mlir"
    ))
    .expect("fixture");
    let at = |model: usize| {
        let t = text.replace(
            "\"data\"=4, \"model\"=2]",
            &format!("\"data\"=4, \"model\"={model}]"),
        );
        assert!(model == 2 || t != text, "the mesh line changed");
        let p = compile(&t);
        assert_eq!(p.device.num_devices(), 4 * model);
        p.device.collectives().count()
    };
    let (eight, small, large) = (at(2), at(256), at(1024));
    assert_eq!(small, large);
    assert!(
        large <= 4 * eight,
        "{large} collectives, {eight} on 8 devices"
    );
}
