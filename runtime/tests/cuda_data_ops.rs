//! gather, scatter, rng_bit_generator and bitcast_convert on every
//! backend, compared BITWISE with the CPU kernels (the executor compares
//! replicas bitwise, so a GPU scatter-add must sum in the CPU's order):
//! clamped and batched gathers, scatters through both launch shapes (rows
//! of a table, overlapping windows) with every region, every RNG
//! algorithm and state size, bitcasts between widths. On CUDA the run
//! must also take no host fallback.
//!
//! Without a GPU the `cuda` instances print why they skipped (the kernels'
//! index arithmetic is checked on the CPU in `meshrun_kernels::cuda`); the
//! `cpu` instances always run and check the harness.

mod common;

use meshrun_compiler::ir::{OpKind, TensorType};
use meshrun_compiler::text::parse_module;
use meshrun_kernels::cpu::bitcast::to_le_bytes;
use meshrun_kernels::{eval_op, HostTensor, Parallelism};
use meshrun_runtime::backend::{Backend, Device};
use meshrun_runtime::RuntimeError;

/// The one op of `@main` in `body` (its signature and return type given)
/// and its result types.
fn op_of(sig: &str, ret: &str, body: &str) -> (OpKind, Vec<TensorType>) {
    let text = format!("func.func @main({sig}) -> {ret} {{\n{body}\n}}");
    let m = parse_module(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let f = &m.funcs[0];
    let (_, op) = f.ops_in_order().next().expect("one op");
    let types = op.results.iter().map(|&r| f.ty(r).clone()).collect();
    (op.kind.clone(), types)
}

fn f32s(shape: &[usize]) -> HostTensor {
    let n: usize = shape.iter().product();
    // Mixed magnitudes: a sum's bits depend on its order.
    let v: Vec<f32> = (0..n)
        .map(|i| [1e-3f32, 1.0, 3e7, -7.5][i % 4] * (1.0 + (i * 37 % 11) as f32))
        .collect();
    HostTensor::from_vec(shape, v).unwrap()
}

fn bits(t: &HostTensor) -> (TensorType, Vec<u8>) {
    let b = match t {
        HostTensor::Pred(a) => a.iter().map(|&x| u8::from(x)).collect(),
        other => to_le_bytes(other).expect("bytes"),
    };
    (t.tensor_type(), b)
}

const ROWS: &str = r#"%r = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<T>, %b: tensor<T>):
    REGION
  }) : (tensor<4x3xT>, tensor<6xI>, tensor<6x3xT>) -> tensor<4x3xT>
  return %r : tensor<4x3xT>"#;

const OVERLAP: &str = r#"%r = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<T>, %b: tensor<T>):
    REGION
  }) : (tensor<6xT>, tensor<5x1xI>, tensor<5x3xT>) -> tensor<6xT>
  return %r : tensor<6xT>"#;

struct Case {
    kind: OpKind,
    results: Vec<TensorType>,
    operands: Vec<HostTensor>,
}

fn scatter_case(template: &str, elem: &str, idx: &str, region: &str, sizes: [&[usize]; 3]) -> Case {
    let body = template
        .replace("REGION", region)
        .replace("tensor<T>", &format!("tensor<{elem}>"))
        .replace("xT>", &format!("x{elem}>"))
        .replace("xI>", &format!("x{idx}>"));
    let t = |s: &[usize], e: &str| {
        let d: Vec<String> = s.iter().map(|d| d.to_string()).collect();
        format!("tensor<{}x{e}>", d.join("x"))
    };
    let sig = format!(
        "%x: {}, %i: {}, %u: {}",
        t(sizes[0], elem),
        t(sizes[1], idx),
        t(sizes[2], elem)
    );
    let (kind, results) = op_of(&sig, &t(sizes[0], elem), &format!("  {body}"));
    let elem = results[0].elem;
    let conv = |x: HostTensor| x.convert(elem).unwrap();
    let n_ids: usize = sizes[1].iter().product();
    // Repeated ids, one below the table, one past its end.
    let ids: Vec<i64> = [1, 3, 1, -1, 2, 9, 0, 1]
        .iter()
        .cycle()
        .take(n_ids)
        .copied()
        .collect();
    let ids = HostTensor::from_vec(sizes[1], ids).unwrap();
    let ids = ids
        .convert(if idx == "i32" {
            meshrun_compiler::ir::ElemType::I32
        } else {
            meshrun_compiler::ir::ElemType::I64
        })
        .unwrap();
    Case {
        kind,
        results,
        operands: vec![conv(f32s(sizes[0])), ids, conv(f32s(sizes[2]))],
    }
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    // Gathers: rows at clamped ids (i32 and i64), the spec's batched
    // example, 2-D windows on several element types.
    for (idx, e) in [
        ("i32", "f32"),
        ("i64", "bf16"),
        ("i64", "i1"),
        ("i32", "i64"),
    ] {
        let (kind, results) = op_of(
            &format!("%t: tensor<4x3x{e}>, %i: tensor<5x{idx}>"),
            &format!("tensor<5x3x{e}>"),
            &format!(
                r#"  %r = "stablehlo.gather"(%t, %i) <{{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 3>}}> : (tensor<4x3x{e}>, tensor<5x{idx}>) -> tensor<5x3x{e}>
  return %r : tensor<5x3x{e}>"#
            ),
        );
        let ids = HostTensor::from_vec(&[5], vec![-1i64, 2, 7, 0, 2])
            .unwrap()
            .convert(if idx == "i32" {
                meshrun_compiler::ir::ElemType::I32
            } else {
                meshrun_compiler::ir::ElemType::I64
            })
            .unwrap();
        let table = f32s(&[4, 3]).convert(results[0].elem).unwrap();
        out.push(Case {
            kind,
            results,
            operands: vec![table, ids],
        });
    }
    let (kind, results) = op_of(
        "%x: tensor<2x3x4x2xf32>, %i: tensor<2x1x2xi32>",
        "tensor<2x1x2x2xf32>",
        r#"  %r = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1, 2], index_vector_dim = 2>, slice_sizes = array<i64: 1, 1, 2, 2>}> : (tensor<2x3x4x2xf32>, tensor<2x1x2xi32>) -> tensor<2x1x2x2xf32>
  return %r : tensor<2x1x2x2xf32>"#,
    );
    out.push(Case {
        kind,
        results,
        operands: vec![
            f32s(&[2, 3, 4, 2]),
            HostTensor::from_vec(&[2, 1, 2], vec![1i32, 3, 2, -4]).unwrap(),
        ],
    });
    // Scatters: every region on rows of a table (one thread per window
    // element) and on overlapping windows (one thread per target).
    let add = "%s = stablehlo.add %a, %b : tensor<T>\n    stablehlo.return %s : tensor<T>";
    let regions = [
        add,
        "stablehlo.return %b : tensor<T>",
        "%s = stablehlo.multiply %b, %a : tensor<T>\n    stablehlo.return %s : tensor<T>",
        "%s = stablehlo.maximum %a, %b : tensor<T>\n    stablehlo.return %s : tensor<T>",
        "%s = stablehlo.minimum %a, %b : tensor<T>\n    stablehlo.return %s : tensor<T>",
    ];
    for e in ["f32", "f16", "bf16", "f64", "i32", "i64"] {
        for region in regions {
            out.push(scatter_case(
                ROWS,
                e,
                "i32",
                region,
                [&[4, 3], &[6], &[6, 3]],
            ));
            out.push(scatter_case(
                OVERLAP,
                e,
                "i64",
                region,
                [&[6], &[5, 1], &[5, 3]],
            ));
        }
    }
    for region in [
        "%s = stablehlo.or %a, %b : tensor<T>\n    stablehlo.return %s : tensor<T>",
        "%s = stablehlo.and %a, %b : tensor<T>\n    stablehlo.return %s : tensor<T>",
        "stablehlo.return %b : tensor<T>",
    ] {
        out.push(scatter_case(
            ROWS,
            "i1",
            "i64",
            region,
            [&[4, 3], &[6], &[6, 3]],
        ));
        out.push(scatter_case(
            OVERLAP,
            "i1",
            "i32",
            region,
            [&[6], &[5, 1], &[5, 3]],
        ));
    }
    // rng_bit_generator: every algorithm and state size, 32- and 64-bit
    // values, odd and even shapes.
    for (alg, words, ty) in [
        ("PHILOX", 3, "3x5xui32"),
        ("PHILOX", 2, "7xui64"),
        ("DEFAULT", 2, "2x3xi32"),
        ("THREE_FRY", 2, "3x4xui32"),
        ("THREE_FRY", 2, "5x3xf32"),
        ("THREE_FRY", 2, "3xui64"),
    ] {
        let (kind, results) = op_of(
            &format!("%s: tensor<{words}xui64>"),
            &format!("(tensor<{words}xui64>, tensor<{ty}>)"),
            &format!(
                "  %n, %b = stablehlo.rng_bit_generator %s, algorithm = {alg} : (tensor<{words}xui64>) -> (tensor<{words}xui64>, tensor<{ty}>)\n  return %n, %b : tensor<{words}xui64>, tensor<{ty}>"
            ),
        );
        let state: Vec<u64> = [0x1234_5678_9abc_def0, u64::MAX - 1, 7][..words].to_vec();
        out.push(Case {
            kind,
            results,
            operands: vec![HostTensor::from_vec(&[words], state).unwrap()],
        });
    }
    // bitcast_convert: same width, wide to narrow and back.
    for (from, to, x) in [
        (
            "3xui32",
            "3xf32",
            HostTensor::from_vec(&[3], vec![0x3f80_0000u32, 0x7fc0_0001, 1]).unwrap(),
        ),
        ("3xf32", "3xi32", f32s(&[3])),
        (
            "2xf64",
            "2x2xi32",
            HostTensor::from_vec(&[2], vec![1.5f64, -0.0]).unwrap(),
        ),
        (
            "2x2xi32",
            "2xf64",
            HostTensor::from_vec(&[2, 2], vec![1i32, -2, 3, 0x7ff0_0000]).unwrap(),
        ),
        (
            "4xf16",
            "4xbf16",
            f32s(&[4])
                .convert(meshrun_compiler::ir::ElemType::F16)
                .unwrap(),
        ),
        (
            "2xui64",
            "2xf64",
            HostTensor::from_vec(&[2], vec![u64::MAX, 0x3ff0_0000_0000_0000]).unwrap(),
        ),
    ] {
        let (kind, results) = op_of(
            &format!("%x: tensor<{from}>"),
            &format!("tensor<{to}>"),
            &format!("  %r = stablehlo.bitcast_convert %x : (tensor<{from}>) -> tensor<{to}>\n  return %r : tensor<{to}>"),
        );
        out.push(Case {
            kind,
            results,
            operands: vec![x],
        });
    }
    out
}

fn rt(e: impl ToString) -> RuntimeError {
    RuntimeError::Program(e.to_string())
}

fn run_op<B: Backend>(backend: &B, c: &Case) -> Result<Vec<HostTensor>, RuntimeError> {
    backend.prepare(&[0])?;
    let bufs = c
        .operands
        .iter()
        .map(|t| backend.upload(0, t.clone()))
        .collect::<Result<Vec<_>, _>>()?;
    let outs = backend.run_spmd(&[0], &|dev: &mut B::Device| {
        let refs: Vec<&B::Buffer> = bufs.iter().collect();
        dev.op(&c.kind, &refs, &c.results).map_err(rt)
    })?;
    outs.into_iter()
        .flatten()
        .map(|b| backend.download(0, b))
        .collect()
}

fn data_ops_match_the_cpu_kernels_bitwise<B: Backend>(backend: &B) {
    let cases = cases();
    assert!(cases.len() > 80, "{} cases", cases.len());
    let mut failures = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let refs: Vec<&HostTensor> = c.operands.iter().collect();
        let want = eval_op(&c.kind, &refs, &c.results, Parallelism::None).unwrap_or_else(|e| {
            panic!("case {i} ({}): the CPU kernel refused: {e}", c.kind.name())
        });
        match run_op(backend, c) {
            Ok(got) => {
                let (g, w): (Vec<_>, Vec<_>) = (
                    got.iter().map(bits).collect(),
                    want.iter().map(bits).collect(),
                );
                if g != w {
                    failures.push(format!("case {i} ({}): {g:?} != {w:?}", c.kind.name()));
                }
            }
            Err(e) => failures.push(format!("case {i} ({}): {e}", c.kind.name())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ on {}:\n{}",
        failures.len(),
        cases.len(),
        backend.name(),
        failures.join("\n")
    );
}

backend_tests!(data_ops_match_the_cpu_kernels_bitwise);

/// The same cases on CUDA take no host fallback (they all have kernels).
#[cfg(feature = "cuda")]
#[test]
fn cuda_runs_the_data_ops_without_host_fallbacks() {
    let Some(backend) = common::backends::cuda() else {
        return;
    };
    let before = backend.host_fallbacks();
    data_ops_match_the_cpu_kernels_bitwise(&backend);
    assert_eq!(backend.host_fallbacks(), before);
}

/// What the CPU kernel refuses, the backend refuses too (one line).
fn refusals_match<B: Backend>(backend: &B) {
    let (kind, results) = op_of(
        "%x: tensor<3xi1>",
        "tensor<3xi1>",
        "  %r = stablehlo.bitcast_convert %x : (tensor<3xi1>) -> tensor<3xi1>\n  return %r : tensor<3xi1>",
    );
    let c = Case {
        kind,
        results,
        operands: vec![HostTensor::from_vec(&[3], vec![true, false, true]).unwrap()],
    };
    let refs: Vec<&HostTensor> = c.operands.iter().collect();
    assert!(eval_op(&c.kind, &refs, &c.results, Parallelism::None).is_err());
    let err = run_op(backend, &c).unwrap_err().to_string();
    assert!(err.contains("i1 has no bit layout"), "{err}");
    assert!(!err.contains('\n'), "{err}");
}

backend_tests!(refusals_match);
