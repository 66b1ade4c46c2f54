//! The backend differential suite: the same test bodies on the CPU and
//! the CUDA backend (`backend_tests!`), each checking a backend against
//! the CPU kernels and the CPU collectives, which define the semantics.
//!
//! - `every_op_matches_the_cpu_kernels`: every op family on every element
//!   type it supports, special values included (NaN, ±0, ±inf, integer
//!   overflow, division by zero), one device;
//! - `local_instructions_match_the_cpu`: iota offsets, padding masks,
//!   per-device slices and remaps;
//! - `collectives_match_the_cpu_collectives`: every collective kind on 8
//!   devices over groups that, on GPUs, take every route (local copies on
//!   one GPU, NCCL, staged through leaders when 8 devices share 2 GPUs);
//! - `every_fixture_runs_and_matches_the_reference`: the JAX fixtures
//!   through the executor (the MLP on 8 mesh devices among them);
//! - `structured_fixtures_match_jax`: loops and a branch (the executor
//!   reads their conditions with `Device::read_scalar`) and every
//!   shard_map fixture, whose user-written collectives take the same
//!   `Device::collective` path (NCCL on GPUs) as the partitioner's;
//! - `random_programs_match_the_reference`: random sharded programs of the
//!   runtime's differential generator.
//!
//! Without a GPU the `cuda` instances print why they skipped; the `cpu`
//! instances always run (and check the harness itself).

mod common;

use meshrun_compiler::ir::ops::constant::Constant;
use meshrun_compiler::ir::ops::{clamp::Clamp, compare::Compare, select::Select};
use std::path::{Path, PathBuf};

use meshrun_compiler::ir::ops::dot_general::DotGeneral;
use meshrun_compiler::ir::ops::ragged_dot::{RaggedDot, RaggedDotDims};
use meshrun_compiler::ir::ops::reduce::{Reduce, ReduceAttrs};
use meshrun_compiler::ir::{
    infer_result_types, BinaryOp, CompareDirection, CompareType, DenseLiteral, DotDims, ElemType,
    OpKind, ReduceKind, Scalar, TensorType, UnaryOp,
};
use meshrun_compiler::partition::reshard::collective::{AllToAllDims, Collective, CollectiveKind};
use meshrun_compiler::partition::RemapEntry;
use meshrun_compiler::sharding::TensorSharding;
use meshrun_compiler::text::parse_module;
use meshrun_kernels::{eval_op, HostTensor, Parallelism};
use meshrun_runtime::backend::{Backend, Device, Participation};
use meshrun_runtime::compare::{mismatch, rtol_for, rtol_for_elem};
use meshrun_runtime::cpu::{collectives as cpu_coll, local};
use meshrun_runtime::npy::read_npy;
use meshrun_runtime::pipeline::compile;
use meshrun_runtime::random_inputs::random_inputs;
use meshrun_runtime::reference::run_function;
use meshrun_runtime::testgen;
use meshrun_runtime::{ExecOptions, Executor, RuntimeError};

// ------------------------------------------------------------------ helpers

fn ty(shape: &[i64], elem: ElemType) -> TensorType {
    TensorType::new(shape.to_vec(), elem)
}

/// A tensor of `shape` whose element `i` is `f(i)`, converted to `elem`.
fn tensor(shape: &[usize], elem: ElemType, f: impl Fn(usize) -> f64) -> HostTensor {
    let n: usize = shape.iter().product();
    let t = HostTensor::from_vec(shape, (0..n).map(f).collect::<Vec<f64>>()).unwrap();
    t.convert(elem).unwrap()
}

/// Deterministic values in `[lo, hi)`.
fn spread(lo: f64, hi: f64) -> impl Fn(usize) -> f64 {
    move |i| lo + (hi - lo) * (((i * 7919 + 13) % 101) as f64 / 101.0)
}

fn tolerance(t: &HostTensor) -> f64 {
    rtol_for_elem(t.elem_type())
}

fn rt(e: impl ToString) -> RuntimeError {
    RuntimeError::Program(e.to_string())
}

/// Run `kind` on one device of `backend` and download the results.
fn run_op<B: Backend>(
    backend: &B,
    kind: &OpKind,
    operands: &[HostTensor],
    results: &[TensorType],
) -> Result<Vec<HostTensor>, RuntimeError> {
    backend.prepare(&[0])?;
    let bufs = operands
        .iter()
        .map(|t| backend.upload(0, t.clone()))
        .collect::<Result<Vec<_>, _>>()?;
    let outs = backend.run_spmd(&[0], &|dev: &mut B::Device| {
        let refs: Vec<&B::Buffer> = bufs.iter().collect();
        dev.op(kind, &refs, results).map_err(rt)
    })?;
    outs.into_iter()
        .flatten()
        .map(|b| backend.download(0, b))
        .collect()
}

// ------------------------------------------------------------- op cases

struct Case {
    kind: OpKind,
    operands: Vec<HostTensor>,
    /// `None`: infer from the operands.
    results: Option<Vec<TensorType>>,
}

fn case(kind: OpKind, operands: Vec<HostTensor>) -> Case {
    Case {
        kind,
        operands,
        results: None,
    }
}

fn typed(kind: OpKind, operands: Vec<HostTensor>, results: Vec<TensorType>) -> Case {
    Case {
        kind,
        operands,
        results: Some(results),
    }
}

const FLOATS: [ElemType; 4] = [ElemType::F32, ElemType::F64, ElemType::F16, ElemType::BF16];
const ALL: [ElemType; 7] = [
    ElemType::F64,
    ElemType::F32,
    ElemType::F16,
    ElemType::BF16,
    ElemType::I1,
    ElemType::I32,
    ElemType::I64,
];

fn special_floats(i: usize) -> f64 {
    [
        f64::NAN,
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1.5,
        -2.5,
        1e-3,
    ][i % 8]
}

fn op_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let shape = [3usize, 5];
    // Unary ops on floats (positive inputs where the domain needs them).
    for e in FLOATS {
        for &op in UnaryOp::ALL {
            // Bit ops take integers only (their cases are below).
            if matches!(
                op,
                UnaryOp::Not | UnaryOp::Popcnt | UnaryOp::CountLeadingZeros
            ) {
                continue;
            }
            let positive = matches!(
                op,
                UnaryOp::Log | UnaryOp::Log1p | UnaryOp::Sqrt | UnaryOp::Rsqrt
            );
            let x = if op == UnaryOp::IsFinite {
                tensor(&shape, e, special_floats)
            } else if positive {
                tensor(&shape, e, spread(0.05, 3.0))
            } else {
                tensor(&shape, e, spread(-2.5, 2.5))
            };
            cases.push(case(OpKind::Unary(op), vec![x]));
        }
        cases.push(case(
            OpKind::Unary(UnaryOp::Sign),
            vec![tensor(&shape, e, special_floats)],
        ));
    }
    // Integer and boolean unary ops, overflow included.
    for e in [ElemType::I32, ElemType::I64] {
        let x = tensor(&shape, e, |i| {
            [-7.0, 0.0, 5.0, -2147483648.0, 2147483647.0][i % 5]
        });
        for op in [
            UnaryOp::Negate,
            UnaryOp::Abs,
            UnaryOp::Sign,
            UnaryOp::Square,
            UnaryOp::Not,
        ] {
            cases.push(case(OpKind::Unary(op), vec![x.clone()]));
        }
    }
    cases.push(case(
        OpKind::Unary(UnaryOp::Not),
        vec![tensor(&shape, ElemType::I1, |i| (i % 2) as f64)],
    ));
    // Binary ops.
    for e in FLOATS {
        let a = tensor(&shape, e, spread(-2.0, 2.0));
        let b = tensor(&shape, e, spread(0.5, 2.0));
        for &op in BinaryOp::ALL {
            // Logical and shift ops take integers only (cases below).
            if matches!(
                op,
                BinaryOp::And
                    | BinaryOp::Or
                    | BinaryOp::Xor
                    | BinaryOp::ShiftLeft
                    | BinaryOp::ShiftRightLogical
                    | BinaryOp::ShiftRightArithmetic
            ) {
                continue;
            }
            let lhs = if op == BinaryOp::Power {
                tensor(&shape, e, spread(0.1, 2.0))
            } else {
                a.clone()
            };
            cases.push(case(OpKind::Binary(op), vec![lhs, b.clone()]));
        }
        let s = tensor(&shape, e, special_floats);
        let t = tensor(&shape, e, |i| special_floats(i + 3));
        cases.push(case(
            OpKind::Binary(BinaryOp::Maximum),
            vec![s.clone(), t.clone()],
        ));
        cases.push(case(OpKind::Binary(BinaryOp::Minimum), vec![s, t]));
    }
    for e in [ElemType::I32, ElemType::I64] {
        let a = tensor(&shape, e, |i| {
            [-7.0, 9.0, -2147483648.0, 3.0, 0.0, 2.0, -1.0][i % 7]
        });
        let b = tensor(&shape, e, |i| {
            [2.0, 0.0, -1.0, -3.0, 5.0, 3.0, -2.0, 1.0][i % 8]
        });
        // Every binary op defined on integers (atan2, next_after and the
        // other float-only functions are not).
        for &op in BinaryOp::ALL {
            let kind = OpKind::Binary(op);
            let types = [a.tensor_type(), b.tensor_type()];
            if infer_result_types(&kind, &types).is_ok() {
                cases.push(case(kind, vec![a.clone(), b.clone()]));
            }
        }
    }
    let p = tensor(&shape, ElemType::I1, |i| (i % 2) as f64);
    let q = tensor(&shape, ElemType::I1, |i| (i % 3 == 0) as u8 as f64);
    for op in [
        BinaryOp::And,
        BinaryOp::Or,
        BinaryOp::Xor,
        BinaryOp::Minimum,
        BinaryOp::Maximum,
        BinaryOp::Multiply,
        BinaryOp::Add,
    ] {
        cases.push(case(OpKind::Binary(op), vec![p.clone(), q.clone()]));
    }
    // Comparisons, partial and total order.
    for e in ALL {
        let (a, b) = if e.is_float() {
            (
                tensor(&shape, e, special_floats),
                tensor(&shape, e, |i| special_floats(i / 2)),
            )
        } else {
            (
                tensor(&shape, e, |i| (i % 3) as f64),
                tensor(&shape, e, |i| (i % 2) as f64),
            )
        };
        for &direction in CompareDirection::ALL {
            let types: &[Option<CompareType>] = if e.is_float() {
                &[
                    None,
                    Some(CompareType::Float),
                    Some(CompareType::TotalOrder),
                ]
            } else {
                &[None]
            };
            for &compare_type in types {
                cases.push(case(
                    OpKind::Compare(Compare {
                        direction,
                        compare_type,
                    }),
                    vec![a.clone(), b.clone()],
                ));
            }
        }
    }
    // Select with a scalar and a full predicate; clamp with scalar and full
    // bounds.
    for e in ALL {
        let a = tensor(&shape, e, spread(-3.0, 3.0));
        let b = tensor(&shape, e, spread(4.0, 9.0));
        let full = tensor(&shape, ElemType::I1, |i| (i % 3 == 1) as u8 as f64);
        let scalar = tensor(&[], ElemType::I1, |_| 1.0);
        cases.push(case(
            OpKind::Select(Select),
            vec![full, a.clone(), b.clone()],
        ));
        cases.push(case(
            OpKind::Select(Select),
            vec![scalar, a.clone(), b.clone()],
        ));
        if e != ElemType::I1 {
            let lo = tensor(&[], e, |_| -1.0);
            let hi = tensor(&shape, e, spread(0.0, 2.0));
            cases.push(case(OpKind::Clamp(Clamp), vec![lo, a.clone(), hi]));
        }
    }
    let with_nan = tensor(&shape, ElemType::F32, special_floats);
    cases.push(case(
        OpKind::Clamp(Clamp),
        vec![
            tensor(&[], ElemType::F32, |_| -1.0),
            with_nan,
            tensor(&[], ElemType::F32, |_| 1.0),
        ],
    ));
    // Every conversion, with rounding, saturation and NaN.
    for from in ALL {
        let x = if from.is_float() {
            tensor(&shape, from, |i| {
                [0.1, -1.7, 2.5, 3e10, -3e10, f64::NAN, 0.0, 65520.0][i % 8]
            })
        } else {
            tensor(&shape, from, |i| {
                [0.0, 1.0, -3.0, 2147483647.0, 16777217.0][i % 5]
            })
        };
        for to in ALL {
            let out = ty(&[3, 5], to);
            cases.push(typed(
                OpKind::Convert(meshrun_compiler::ir::ops::convert::Convert),
                vec![x.clone()],
                vec![out],
            ));
        }
    }
    // Iota and constants.
    for e in ALL {
        for dim in 0..2 {
            cases.push(typed(
                OpKind::Iota(meshrun_compiler::ir::ops::iota::Iota { dim }),
                vec![],
                vec![ty(&[3, 4], e)],
            ));
        }
        cases.push(typed(
            OpKind::Constant(Constant::new(DenseLiteral::Splat(Scalar::Float(1.5)))),
            vec![],
            vec![ty(&[2, 2], e)],
        ));
    }
    // Data movement on several widths.
    for e in [ElemType::F32, ElemType::F16, ElemType::I1, ElemType::I64] {
        let x = tensor(&[2, 3, 4], e, |i| (i % 11) as f64);
        cases.push(typed(
            OpKind::BroadcastInDim(
                meshrun_compiler::ir::ops::broadcast_in_dim::BroadcastInDim { dims: vec![0, 2] },
            ),
            vec![tensor(&[2, 1], e, |i| i as f64 + 1.0)],
            vec![ty(&[2, 5, 3], e)],
        ));
        cases.push(typed(
            OpKind::Reshape(meshrun_compiler::ir::ops::reshape::Reshape),
            vec![x.clone()],
            vec![ty(&[6, 4], e)],
        ));
        cases.push(case(
            OpKind::Transpose(meshrun_compiler::ir::ops::transpose::Transpose {
                perm: vec![2, 0, 1],
            }),
            vec![x.clone()],
        ));
        cases.push(case(
            OpKind::Slice(meshrun_compiler::ir::ops::slice::Slice {
                start: vec![0, 1, 1],
                limit: vec![2, 3, 4],
                strides: vec![1, 2, 2],
            }),
            vec![x.clone()],
        ));
        cases.push(case(
            OpKind::Pad(meshrun_compiler::ir::ops::pad::Pad {
                low: vec![1, -1, 0],
                high: vec![0, 2, -1],
                interior: vec![1, 0, 1],
            }),
            vec![x.clone(), tensor(&[], e, |_| 7.0)],
        ));
        cases.push(case(
            OpKind::Concatenate(meshrun_compiler::ir::ops::concatenate::Concatenate { dim: 1 }),
            vec![x.clone(), tensor(&[2, 1, 4], e, |_| 1.0), x.clone()],
        ));
    }
    // Reductions over every set of dims.
    let x = tensor(&[4, 6, 3], ElemType::F32, spread(-1.0, 1.0));
    let zero = tensor(&[], ElemType::F32, |_| 0.0);
    for dims in [vec![], vec![0], vec![1], vec![2], vec![0, 2], vec![0, 1, 2]] {
        for kind in [
            ReduceKind::Add,
            ReduceKind::Maximum,
            ReduceKind::Minimum,
            ReduceKind::Multiply,
        ] {
            cases.push(case(
                OpKind::Reduce(Reduce::with_kind(dims.clone(), kind, &[ElemType::F32])),
                vec![x.clone(), zero.clone()],
            ));
        }
    }
    for e in [ElemType::F16, ElemType::BF16, ElemType::F64] {
        let x = tensor(&[8, 300], e, spread(-1.0, 1.0));
        let init = tensor(&[], e, |_| 0.5);
        cases.push(case(
            OpKind::Reduce(Reduce::with_kind(vec![1], ReduceKind::Add, &[e])),
            vec![x, init],
        ));
    }
    for e in [ElemType::I32, ElemType::I64, ElemType::I1] {
        let x = tensor(&[5, 7], e, |i| ((i * 5) % 9) as f64);
        let init = tensor(&[], e, |_| if e == ElemType::I1 { 0.0 } else { 3.0 });
        for &kind in ReduceKind::ALL {
            cases.push(case(
                OpKind::Reduce(Reduce::with_kind(vec![0], kind, &[e])),
                vec![x.clone(), init.clone()],
            ));
        }
    }
    cases.push(case(
        OpKind::Reduce(Reduce::with_kind(
            vec![1],
            ReduceKind::Add,
            &[ElemType::F32, ElemType::F32],
        )),
        vec![
            x.clone(),
            x.clone(),
            zero.clone(),
            tensor(&[], ElemType::F32, |_| 1.0),
        ],
    ));
    // Argmax with JAX's comparator (values + indices, ties to the smaller
    // index; `spread` repeats values): the generated body kernel, over
    // every set of dims, and over an empty dim (the init values).
    let argmax = meshrun_kernels::cuda::body::sample_bodies()[0].clone();
    let arg = |dims: Vec<i64>| {
        OpKind::Reduce(Reduce {
            attrs: ReduceAttrs { dimensions: dims },
            body: argmax.clone(),
        })
    };
    let idx = tensor(&[4, 6, 3], ElemType::I32, |i| (i % 6) as f64);
    let (ninf, izero) = (
        tensor(&[], ElemType::F32, |_| f64::NEG_INFINITY),
        tensor(&[], ElemType::I32, |_| 0.0),
    );
    for dims in [vec![0], vec![1], vec![2], vec![0, 2], vec![0, 1, 2]] {
        cases.push(case(
            arg(dims),
            vec![x.clone(), idx.clone(), ninf.clone(), izero.clone()],
        ));
    }
    cases.push(case(
        arg(vec![1]),
        vec![
            tensor(&[3, 0], ElemType::F32, |_| 0.0),
            tensor(&[3, 0], ElemType::I32, |_| 0.0),
            ninf.clone(),
            izero.clone(),
        ],
    ));
    // Empty reduced dimension: the result is the init value.
    cases.push(case(
        OpKind::Reduce(Reduce::with_kind(
            vec![1],
            ReduceKind::Maximum,
            &[ElemType::F32],
        )),
        vec![
            tensor(&[3, 0], ElemType::F32, |_| 0.0),
            tensor(&[], ElemType::F32, |_| -4.0),
        ],
    ));
    // dot_general: plain, batched, transposed operands, half types, f64, and
    // integers (on the host).
    let plain = DotDims::for_dot(2);
    let dot = |dims: DotDims| {
        OpKind::DotGeneral(DotGeneral {
            dims,
            precision: None,
            is_dot: false,
        })
    };
    for e in FLOATS {
        cases.push(case(
            dot(plain.clone()),
            vec![
                tensor(&[5, 7], e, spread(-1.0, 1.0)),
                tensor(&[7, 3], e, spread(-1.0, 1.0)),
            ],
        ));
    }
    cases.push(typed(
        dot(plain.clone()),
        vec![
            tensor(&[16, 32], ElemType::BF16, spread(-1.0, 1.0)),
            tensor(&[32, 8], ElemType::BF16, spread(-1.0, 1.0)),
        ],
        vec![ty(&[16, 8], ElemType::F32)],
    ));
    cases.push(case(
        dot(DotDims {
            lhs_batch: vec![0, 2],
            rhs_batch: vec![0, 2],
            lhs_contract: vec![3],
            rhs_contract: vec![3],
        }),
        vec![
            tensor(&[2, 3, 2, 4], ElemType::F32, spread(-1.0, 1.0)),
            tensor(&[2, 5, 2, 4], ElemType::F32, spread(-1.0, 1.0)),
        ],
    ));
    cases.push(case(
        dot(DotDims {
            lhs_batch: vec![],
            rhs_batch: vec![],
            lhs_contract: vec![0],
            rhs_contract: vec![1],
        }),
        vec![
            tensor(&[6, 4], ElemType::F32, spread(-1.0, 1.0)),
            tensor(&[3, 6], ElemType::F32, spread(-1.0, 1.0)),
        ],
    ));
    cases.push(case(
        dot(plain),
        vec![
            tensor(&[3, 4], ElemType::I32, |i| i as f64),
            tensor(&[4, 2], ElemType::I32, |i| i as f64 - 3.0),
        ],
    ));
    // ragged_dot's steps on the device (slices, cuBLAS products, zero
    // blocks, concatenations): rows in groups of 3, 0, 5 and 4 rows past
    // them; the weight gradient (a ragged contracting dimension); sizes
    // per batch element.
    let ragged = |lhs_contract, rhs_contract, lhs_ragged, rhs_group, batch: bool| {
        OpKind::RaggedDot(RaggedDot {
            dims: RaggedDotDims {
                lhs_batch: if batch { vec![0] } else { vec![] },
                rhs_batch: if batch { vec![0] } else { vec![] },
                lhs_contract,
                rhs_contract,
                lhs_ragged,
                rhs_group,
            },
        })
    };
    let sizes = |shape: &[usize], v: &[i32]| HostTensor::from_vec(shape, v.to_vec()).unwrap();
    cases.push(case(
        ragged(vec![1], vec![1], vec![0], vec![0], false),
        vec![
            tensor(&[12, 5], ElemType::F32, spread(-1.0, 1.0)),
            tensor(&[3, 5, 7], ElemType::F32, spread(-1.0, 1.0)),
            sizes(&[3], &[3, 0, 5]),
        ],
    ));
    cases.push(case(
        ragged(vec![0], vec![0], vec![0], vec![], false),
        vec![
            tensor(&[12, 5], ElemType::F32, spread(-1.0, 1.0)),
            tensor(&[12, 7], ElemType::F32, spread(-1.0, 1.0)),
            sizes(&[3], &[3, 0, 5]),
        ],
    ));
    cases.push(case(
        ragged(vec![2], vec![2], vec![1], vec![1], true),
        vec![
            tensor(&[2, 6, 4], ElemType::F32, spread(-1.0, 1.0)),
            tensor(&[2, 3, 4, 5], ElemType::F32, spread(-1.0, 1.0)),
            sizes(&[2, 3], &[2, 2, 2, 1, 0, 4]),
        ],
    ));
    cases
}

fn every_op_matches_the_cpu_kernels<B: Backend>(backend: &B) {
    let mut failures = Vec::new();
    let cases = op_cases();
    for (i, c) in cases.iter().enumerate() {
        let results = match &c.results {
            Some(r) => r.clone(),
            None => {
                let types: Vec<TensorType> =
                    c.operands.iter().map(HostTensor::tensor_type).collect();
                infer_result_types(&c.kind, &types)
                    .unwrap_or_else(|e| panic!("case {i} {:?}: {e}", c.kind))
            }
        };
        let refs: Vec<&HostTensor> = c.operands.iter().collect();
        let want = eval_op(&c.kind, &refs, &results, Parallelism::None);
        let got = run_op(backend, &c.kind, &c.operands, &results);
        let what = format!(
            "case {i}: {} on {:?}",
            c.kind.name(),
            c.operands
                .iter()
                .map(HostTensor::tensor_type)
                .collect::<Vec<_>>()
        );
        match (want, got) {
            (Ok(want), Ok(got)) => {
                for (g, w) in got.iter().zip(&want) {
                    if let Some(m) = mismatch(g, w, tolerance(w)) {
                        failures.push(format!("{what}: {m}"));
                    }
                }
            }
            (Err(_), Err(_)) => {}
            (Ok(_), Err(e)) => failures.push(format!("{what}: the backend failed: {e}")),
            (Err(e), Ok(_)) => failures.push(format!(
                "{what}: the CPU kernel refused ({e}) but the backend did not"
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} op cases differ on {}:\n{}",
        failures.len(),
        cases.len(),
        backend.name(),
        failures.join("\n")
    );
}

// -------------------------------------------------- local instructions

fn local_instructions_match_the_cpu<B: Backend>(backend: &B) {
    backend.prepare(&[0]).unwrap();
    let x = tensor(&[3, 5], ElemType::F32, |i| i as f64);
    let a = tensor(&[4, 2], ElemType::BF16, |i| i as f64);
    let b = tensor(&[1, 2], ElemType::BF16, |_| 9.0);
    let fill = tensor(&[], ElemType::BF16, |_| -1.0);
    let table = vec![
        RemapEntry::Source {
            source: 0,
            index: 1,
        },
        RemapEntry::Source {
            source: 0,
            index: 2,
        },
        RemapEntry::Fill,
        RemapEntry::Fill,
        RemapEntry::Source {
            source: 1,
            index: 0,
        },
        RemapEntry::Source {
            source: 0,
            index: 0,
        },
    ];
    let remap_ty = ty(&[6, 2], ElemType::BF16);
    let iota_ty = ty(&[2, 3], ElemType::I64);
    let bufs: Vec<B::Buffer> = [&x, &a, &b, &fill]
        .iter()
        .map(|t| backend.upload(0, (*t).clone()).unwrap())
        .collect();
    let outs = backend
        .run_spmd(&[0], &|dev: &mut B::Device| {
            Ok(vec![
                dev.iota(&iota_ty, 1, 6).map_err(rt)?,
                dev.mask(&bufs[0], 1, 3, Scalar::Float(f64::NEG_INFINITY))
                    .map_err(rt)?,
                dev.mask(&bufs[0], 0, -1, Scalar::Int(2)).map_err(rt)?,
                dev.slice_dim(&bufs[0], 1, 2, 3).map_err(rt)?,
                dev.remap(&[&bufs[1], &bufs[2]], Some(&bufs[3]), &remap_ty, 0, &table)
                    .map_err(rt)?,
                dev.remap(&[&bufs[1], &bufs[2]], None, &remap_ty, 0, &table)
                    .map_err(rt)?,
            ])
        })
        .unwrap();
    let got: Vec<HostTensor> = outs
        .into_iter()
        .flatten()
        .map(|b| backend.download(0, b).unwrap())
        .collect();
    let want = [
        local::iota(&iota_ty, 1, 6).unwrap(),
        local::mask(&x, 1, 3, Scalar::Float(f64::NEG_INFINITY)).unwrap(),
        local::mask(&x, 0, -1, Scalar::Int(2)).unwrap(),
        local::slice_dim(&x, 1, 2, 3).unwrap(),
        local::remap(&[&a, &b], Some(&fill), &remap_ty, 0, &table).unwrap(),
        local::remap(&[&a, &b], None, &remap_ty, 0, &table).unwrap(),
    ];
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "instruction {k} on {}", backend.name());
    }
    // Malformed instructions are errors, not crashes.
    let bad = backend.run_spmd(&[0], &|dev: &mut B::Device| {
        dev.slice_dim(&bufs[0], 1, 4, 3).map_err(rt)
    });
    assert!(bad.is_err());
    let bad = backend.run_spmd(&[0], &|dev: &mut B::Device| {
        let table = [RemapEntry::Source {
            source: 0,
            index: 7,
        }; 6];
        dev.remap(&[&bufs[1]], None, &remap_ty, 0, &table)
            .map_err(rt)
    });
    assert!(bad.is_err());
}

// ---------------------------------------------------------- collectives

fn collective(
    kind: CollectiveKind,
    groups: Vec<Vec<i64>>,
    factors: Vec<i64>,
    in_shape: Vec<i64>,
    out_shape: Vec<i64>,
    elem: ElemType,
) -> Collective {
    let rank = in_shape.len();
    Collective {
        kind,
        axes: vec![],
        dim_axes: vec![vec![]; rank],
        dim_factors: factors,
        all_to_all: None,
        reduction: None,
        groups,
        in_sharding: TensorSharding::replicated("m", rank),
        out_sharding: TensorSharding::replicated("m", rank),
        global_shape: out_shape.clone(),
        in_local_shape: in_shape,
        out_local_shape: out_shape,
        elem,
    }
}

/// Device `d`'s block: distinct per device and element.
fn block(d: i64, shape: &[usize], elem: ElemType) -> HostTensor {
    if elem == ElemType::I1 {
        return tensor(shape, elem, move |i| ((i as i64 + d) % 3 == 0) as u8 as f64);
    }
    tensor(shape, elem, move |i| {
        (d * 100 + i as i64) as f64 * 0.25 - 3.0
    })
}

fn part_of(c: &Collective, d: i64) -> (Option<(usize, usize)>, Option<i64>, Option<i64>) {
    if c.kind == CollectiveKind::CollectivePermute {
        let send_to = c.groups.iter().find(|p| p[0] == d).map(|p| p[1]);
        let recv_from = c.groups.iter().find(|p| p[1] == d).map(|p| p[0]);
        return (None, send_to, recv_from);
    }
    let g = c
        .groups
        .iter()
        .enumerate()
        .find_map(|(g, m)| m.iter().position(|&x| x == d).map(|r| (g, r)));
    (g, None, None)
}

/// What device `d` must end with (the CPU collectives' semantics).
fn expected(c: &Collective, d: i64, blocks: &[HostTensor], out: &[usize]) -> HostTensor {
    let (g, _, recv_from) = part_of(c, d);
    if c.kind == CollectiveKind::CollectivePermute {
        return match recv_from {
            Some(s) => blocks[s as usize].clone(),
            None => HostTensor::zeros(&blocks[0].tensor_type()).unwrap(),
        };
    }
    let (g, rank) = g.unwrap();
    let members: Vec<&HostTensor> = c.groups[g].iter().map(|&m| &blocks[m as usize]).collect();
    let size = members.len();
    match c.kind {
        CollectiveKind::AllSlice => cpu_coll::all_slice(members[rank], rank, size, c, out),
        CollectiveKind::AllGather => cpu_coll::all_gather(&members, c, out),
        CollectiveKind::AllToAll => cpu_coll::all_to_all(&members, rank, c, out),
        CollectiveKind::AllReduce => cpu_coll::all_reduce(&members, c.reduction.unwrap()),
        CollectiveKind::ReduceScatter => {
            cpu_coll::reduce_scatter(&members, rank, c.reduction.unwrap(), c, out)
        }
        CollectiveKind::CollectivePermute => unreachable!(),
    }
    .unwrap()
}

fn collective_cases() -> Vec<Collective> {
    use CollectiveKind as K;
    let halves = vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]];
    let pairs = vec![vec![0, 4], vec![1, 5], vec![2, 6], vec![3, 7]];
    let mixed = vec![vec![4, 0, 5, 1], vec![6, 2, 7, 3]];
    let all = vec![(0..8).collect::<Vec<i64>>()];
    let mut cases = Vec::new();
    for (groups, n) in [(&halves, 4), (&pairs, 2), (&mixed, 4), (&all, 8)] {
        let n64 = n as i64;
        cases.push(collective(
            K::AllGather,
            groups.clone(),
            vec![n64, 1],
            vec![2, 3],
            vec![2 * n64, 3],
            ElemType::F32,
        ));
        cases.push(collective(
            K::AllGather,
            groups.clone(),
            vec![1, n64],
            vec![2, 3],
            vec![2, 3 * n64 - 1],
            ElemType::BF16,
        ));
        cases.push(collective(
            K::AllSlice,
            groups.clone(),
            vec![1, n64],
            vec![2, 8],
            vec![2, 8 / n64],
            ElemType::F32,
        ));
        let mut a2a = collective(
            K::AllToAll,
            groups.clone(),
            vec![1, 1],
            vec![2, 8],
            vec![2 * n64, 8 / n64],
            ElemType::I32,
        );
        a2a.all_to_all = Some(AllToAllDims {
            src_dim: 0,
            tgt_dim: 1,
        });
        cases.push(a2a);
        for (kind, elem) in [
            (ReduceKind::Add, ElemType::F32),
            (ReduceKind::Add, ElemType::F16),
            (ReduceKind::Maximum, ElemType::F32),
            (ReduceKind::Multiply, ElemType::I64),
            (ReduceKind::Or, ElemType::I32),
            (ReduceKind::And, ElemType::I1),
            (ReduceKind::Add, ElemType::I1),
        ] {
            let mut r = collective(
                K::AllReduce,
                groups.clone(),
                vec![1, 1],
                vec![3, 4],
                vec![3, 4],
                elem,
            );
            r.reduction = Some(kind);
            cases.push(r);
        }
        let mut rs = collective(
            K::ReduceScatter,
            groups.clone(),
            vec![n64, 1],
            vec![8, 3],
            vec![8 / n64, 3],
            ElemType::F32,
        );
        rs.reduction = Some(ReduceKind::Add);
        cases.push(rs);
        let mut rs = collective(
            K::ReduceScatter,
            groups.clone(),
            vec![1, n64],
            vec![2, 5],
            vec![2, 5usize.div_ceil(n) as i64],
            ElemType::F64,
        );
        rs.reduction = Some(ReduceKind::Maximum);
        cases.push(rs);
    }
    // Permutes: a shift across all devices, swaps within halves, and a
    // partial one (devices without a source end with zeros).
    let shift: Vec<Vec<i64>> = (0..8).map(|d| vec![d, (d + 1) % 8]).collect();
    let swaps: Vec<Vec<i64>> = (0..8).map(|d| vec![d, d ^ 1]).collect();
    let partial = vec![vec![0, 7], vec![7, 0], vec![3, 3]];
    for groups in [shift, swaps, partial] {
        cases.push(collective(
            K::CollectivePermute,
            groups,
            vec![1, 1],
            vec![2, 3],
            vec![2, 3],
            ElemType::F32,
        ));
    }
    cases
}

fn collectives_match_the_cpu_collectives<B: Backend>(backend: &B) {
    let devices: Vec<i64> = (0..8).collect();
    backend.prepare(&devices).unwrap();
    for (i, c) in collective_cases().iter().enumerate() {
        let in_shape: Vec<usize> = c.in_local_shape.iter().map(|&d| d as usize).collect();
        let out: Vec<usize> = c.out_local_shape.iter().map(|&d| d as usize).collect();
        let out_ty = ty(&c.out_local_shape, c.elem);
        let blocks: Vec<HostTensor> = devices
            .iter()
            .map(|&d| block(d, &in_shape, c.elem))
            .collect();
        let bufs: Vec<B::Buffer> = devices
            .iter()
            .map(|&d| backend.upload(d, blocks[d as usize].clone()).unwrap())
            .collect();
        let outs = backend
            .run_spmd(&devices, &|dev: &mut B::Device| {
                let d = dev.id();
                let (g, send_to, recv_from) = part_of(c, d);
                let part = match g {
                    Some((group, rank)) => Participation::Group {
                        group,
                        rank,
                        members: &c.groups[group],
                    },
                    None => Participation::Permute { send_to, recv_from },
                };
                dev.collective(0, c, part, &bufs[d as usize], &out_ty)
                    .map_err(rt)
            })
            .unwrap_or_else(|e| {
                panic!("collective case {i} ({} over {:?}): {e}", c.kind, c.groups)
            });
        for (d, b) in devices.iter().zip(outs) {
            let got = backend.download(*d, b).unwrap();
            let want = expected(c, *d, &blocks, &out);
            if let Some(m) = mismatch(&got, &want, rtol_for_elem(c.elem)) {
                panic!(
                    "collective case {i} ({} of {} over {:?}) on {}: device {d}: {m}",
                    c.kind,
                    c.elem,
                    c.groups,
                    backend.name()
                );
            }
        }
    }
}

// ------------------------------------------------------------- fixtures

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/jax")
}

fn numbered(dir: &Path, prefix: &str) -> Vec<HostTensor> {
    (0..)
        .map(|i| dir.join(format!("{prefix}_{i}.npy")))
        .take_while(|p| p.exists())
        .map(|p| read_npy(&p).unwrap())
        .collect()
}

fn run_fixture<B: Backend>(backend: &B, dir: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(dir.join("input.mlir")).map_err(|e| e.to_string())?;
    let module = parse_module(&text).map_err(|d| format!("input.mlir:{d}"))?;
    let inputs = numbered(dir, "in");
    let program = compile(&module).map_err(|d| format!("compile: {}: {}", d.pos, d.message))?;
    let exec = Executor::new(&program.device).map_err(|e| e.to_string())?;
    let got = exec
        .run_global(backend, &inputs, &ExecOptions::default())
        .map_err(|e| e.to_string())?;
    let want =
        run_function(&module, "main", &inputs, Parallelism::None).map_err(|e| e.to_string())?;
    let rtol = rtol_for(&module);
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        if let Some(m) = mismatch(g, w, rtol) {
            return Err(format!("output {k}: {m}"));
        }
    }
    Ok(())
}

fn every_fixture_runs_and_matches_the_reference<B: Backend>(backend: &B) {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("input.mlir").exists())
        .collect();
    dirs.sort();
    let failed: Vec<String> = dirs
        .iter()
        .filter_map(|d| {
            run_fixture(backend, d)
                .err()
                .map(|e| format!("{}: {e}", d.display()))
        })
        .collect();
    assert!(dirs.len() >= 45, "only {} fixtures", dirs.len());
    assert!(
        failed.is_empty(),
        "fixtures that fail on {}:\n{}",
        backend.name(),
        failed.join("\n")
    );
}

// ------------------------------------------- loops, branches, shard_map

/// Fixtures with structure and JAX 0.12's fixtures, checked against JAX's
/// outputs (the reference interpreter does not run manual computations).
fn structured_fixtures_match_jax<B: Backend>(backend: &B) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
    // JAX 0.12's programs: mesh-axes groups, unreduced values, host
    // memory, async collectives, ragged_dot (its GPU steps) in all modes.
    let mut dirs = Vec::new();
    for (folder, at_least) in [("jax_regions", 5), ("jax_shard_map", 5), ("jax_0_12", 20)] {
        let mut found: Vec<PathBuf> = std::fs::read_dir(root.join(folder))
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join("input.mlir").exists())
            .collect();
        found.sort();
        assert!(
            found.len() >= at_least,
            "only {} fixtures in {folder}",
            found.len()
        );
        dirs.extend(found);
    }
    let mut failed = Vec::new();
    for dir in &dirs {
        let run = || -> Result<(), String> {
            let text =
                std::fs::read_to_string(dir.join("input.mlir")).map_err(|e| e.to_string())?;
            let module = parse_module(&text).map_err(|d| format!("input.mlir:{d}"))?;
            let program =
                compile(&module).map_err(|d| format!("compile: {}: {}", d.pos, d.message))?;
            let exec = Executor::new(&program.device).map_err(|e| e.to_string())?;
            let got = exec
                .run_global(backend, &numbered(dir, "in"), &ExecOptions::default())
                .map_err(|e| e.to_string())?;
            let want = numbered(dir, "out");
            if got.len() != want.len() {
                return Err(format!("{} outputs, JAX gives {}", got.len(), want.len()));
            }
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                if let Some(m) = mismatch(g, w, rtol_for(&module)) {
                    return Err(format!("output {k} vs JAX: {m}"));
                }
            }
            Ok(())
        };
        if let Err(e) = run() {
            failed.push(format!("{}: {e}", dir.display()));
        }
    }
    assert!(
        failed.is_empty(),
        "fixtures that fail on {}:\n{}",
        backend.name(),
        failed.join("\n")
    );
}

// ------------------------------------------------------ random programs

/// Random sharded programs (the runtime's differential generator,
/// `testgen`): sharded on the backend vs the unsharded reference.
/// `MESHRUN_BACKEND_DIFF_CASES` cases (default 100).
fn random_programs_match_the_reference<B: Backend>(backend: &B) {
    let cases: u64 = std::env::var("MESHRUN_BACKEND_DIFF_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let mut failures = Vec::new();
    let mut ran = 0;
    for seed in 1..=cases {
        let text = testgen::program(seed, false);
        let module = parse_module(&text).unwrap();
        let f = module.func("main").unwrap();
        let types: Vec<TensorType> = f.args.iter().map(|&a| f.ty(a).clone()).collect();
        let inputs = random_inputs(&types, seed).unwrap();
        let program = compile(&module).unwrap();
        // Programs the CPU differential test also steers around (a known
        // bug of another component).
        if testgen::has_padded_reshape(&program) {
            continue;
        }
        ran += 1;
        let want = run_function(&module, "main", &inputs, Parallelism::None).unwrap();
        let exec = Executor::new(&program.device).unwrap();
        match exec.run_global(backend, &inputs, &ExecOptions::default()) {
            Err(e) => failures.push(format!("seed {seed}: {e}")),
            Ok(got) => {
                for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                    if let Some(m) = mismatch(g, w, 1e-5) {
                        failures.push(format!("seed {seed}: output {k}: {m}"));
                    }
                }
            }
        }
    }
    assert!(
        ran * 2 >= cases as usize,
        "only {ran} of {cases} programs ran"
    );
    assert!(
        failures.is_empty(),
        "random programs that differ on {}:\n{}",
        backend.name(),
        failures.join("\n")
    );
}

backend_tests!(
    every_op_matches_the_cpu_kernels,
    local_instructions_match_the_cpu,
    collectives_match_the_cpu_collectives,
    every_fixture_runs_and_matches_the_reference,
    structured_fixtures_match_jax,
    random_programs_match_the_reference,
);

/// Without a GPU, opening the CUDA backend fails with one line that says
/// why; with one, it opens.
#[cfg(feature = "cuda")]
#[test]
fn the_cuda_backend_opens_or_says_why_not() {
    match meshrun_runtime::cuda::probe::gpus() {
        Err(why) => {
            let err = meshrun_runtime::cuda::open_backend()
                .err()
                .expect("no GPU, yet the backend opened");
            let msg = err.to_string();
            assert!(msg.contains(&why), "{msg}");
            assert!(!msg.contains('\n'), "{msg}");
        }
        Ok(gpus) => {
            let backend = meshrun_runtime::cuda::open_backend().unwrap();
            assert_eq!(backend.gpus().len().min(gpus.len()), backend.gpus().len());
        }
    }
}
