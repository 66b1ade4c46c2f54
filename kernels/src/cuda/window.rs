//! CUDA kernels of `reduce_window` and `select_and_scatter`
//! (`window.cuh`), their names, and the window geometry they read
//! ([`window_meta`]).
//!
//! The GPU runs the bodies JAX emits for them: a reduce_window of one
//! input whose body is one reduction (add / multiply / maximum / minimum,
//! and / or on integers: cumsum, pooling), and a select_and_scatter whose
//! select is one comparison (`GE` for max pooling, `LE` for min pooling)
//! and whose scatter is one reduction. Other bodies are an error naming
//! the op ("has no GPU kernel"). None of this has run on a GPU: NVRTC
//! compiles it in CI, and the tests below run the kernels' index
//! arithmetic, ported line by line, against the CPU kernels.

use meshrun_compiler::ir::ops::compare::Compare;
use meshrun_compiler::ir::ops::reduce_window::ReduceWindow;
use meshrun_compiler::ir::ops::select_and_scatter::SelectAndScatter;
use meshrun_compiler::ir::ops::window::Window;
use meshrun_compiler::ir::{CompareDirection, Computation, ElemType, OpKind, ReduceKind};

use super::generate::{reducer, Entries};
use super::names::{self, cuda_type, DTYPES};

/// The template source, included after `templates.cuh`.
pub(crate) const SOURCE: &str = include_str!("window.cuh");

/// Values per dimension in [`window_meta`].
pub const META_PER_DIM: usize = 7;

/// The comparisons a select body may be.
pub const SELECT_DIRECTIONS: [CompareDirection; 4] = [
    CompareDirection::Ge,
    CompareDirection::Gt,
    CompareDirection::Le,
    CompareDirection::Lt,
];

/// The reduction of a body that is one add / multiply / maximum / ...
/// of its two arguments in order.
fn single_reduction(body: &Computation) -> Option<ReduceKind> {
    ReduceKind::from_binary_op(body.single_binary_op()?)
}

/// The GPU form of a reduce_window: one input and a one-reduction body.
pub fn reduce_window_kind(op: &ReduceWindow) -> Result<ReduceKind, String> {
    if op.body.func().args.len() != 2 {
        return Err("has no GPU kernel for several inputs".into());
    }
    single_reduction(&op.body)
        .ok_or_else(|| "has no GPU kernel for a body other than one reduction".into())
}

/// The GPU form of a select_and_scatter: a select that is one `GE` / `GT`
/// / `LE` / `LT` comparison of its arguments in order, a scatter that is
/// one reduction.
pub fn select_and_scatter_kinds(
    op: &SelectAndScatter,
) -> Result<(CompareDirection, ReduceKind), String> {
    let f = op.select.func();
    let dir = match (f.body.as_slice(), f.args.as_slice(), f.returns.as_slice()) {
        ([id], [a, b], [r]) => {
            let data = f.op(*id);
            match data.kind {
                OpKind::Compare(Compare { direction, .. })
                    if data.operands == [*a, *b]
                        && data.results == [*r]
                        && SELECT_DIRECTIONS.contains(&direction) =>
                {
                    Some(direction)
                }
                _ => None,
            }
        }
        _ => None,
    }
    .ok_or("has no GPU kernel for a select body other than one GE/GT/LE/LT comparison")?;
    let kind = single_reduction(&op.scatter)
        .ok_or("has no GPU kernel for a scatter body other than one reduction")?;
    Ok((dir, kind))
}

/// `reduce_window_<kind>_<type>(const T* x, const T* init, T* y, const
/// long long* meta, long long n)`.
pub fn reduce_window(kind: ReduceKind, e: ElemType) -> Option<String> {
    let s = names::suffix(e)?;
    names::reduce_supported(kind, e).then(|| format!("reduce_window_{}_{s}", kind.name()))
}

/// `select_window_<dir>_<type>(const T* x, long long* sel, const long
/// long* meta, long long n)`.
pub fn select_window(dir: CompareDirection, e: ElemType) -> Option<String> {
    let s = names::suffix(e)?;
    (SELECT_DIRECTIONS.contains(&dir) && e != ElemType::I1)
        .then(|| format!("select_window_{}_{s}", dir.name().to_ascii_lowercase()))
}

/// `scatter_selected_<kind>_<type>(const T* src, const long long* sel,
/// const T* init, T* y, const long long* meta, long long n)`: `add` only
/// (the gradients JAX emits; each kind costs NVRTC time in CI).
pub fn scatter_selected(kind: ReduceKind, e: ElemType) -> Option<String> {
    let s = names::suffix(e)?;
    (kind == ReduceKind::Add && names::reduce_supported(kind, e))
        .then(|| format!("scatter_selected_{}_{s}", kind.name()))
}

/// The geometry the kernels read: the rank, then per dimension the input
/// size, the number of windows, window size, stride, base dilation,
/// window dilation and low padding. `None` if `input` has no windows
/// shape (the verifier rejects such an op first).
pub fn window_meta(window: &Window, input: &[usize]) -> Option<Vec<i64>> {
    let shape: Vec<i64> = input.iter().map(|&d| d as i64).collect();
    let out = window.num_windows(&shape).ok()?;
    let mut meta = vec![input.len() as i64];
    for d in 0..input.len() {
        meta.extend([
            shape[d],
            out[d],
            window.dims[d],
            window.strides[d],
            window.base_dilations[d],
            window.window_dilations[d],
            window.padding[d].0,
        ]);
    }
    Some(meta)
}

/// Every window kernel, for the `window` module.
pub(crate) fn entries() -> Entries {
    let mut out = Entries::default();
    for e in DTYPES {
        let Some(t) = cuda_type(e) else { continue };
        for &kind in ReduceKind::ALL {
            let r = reducer(kind, e);
            if let Some(name) = reduce_window(kind, e) {
                out.push(
                    name,
                    &format!(
                        "const {t}* x, const {t}* init, {t}* y, const long long* meta, long long n"
                    ),
                    &format!("reduce_window_impl<{t}, {r}>(x, init, y, meta, n);"),
                );
            }
            if let Some(name) = scatter_selected(kind, e) {
                out.push(
                    name,
                    &format!(
                        "const {t}* src, const long long* sel, const {t}* init, {t}* y, const long long* meta, long long n"
                    ),
                    &format!("scatter_selected_impl<{t}, {r}>(src, sel, init, y, meta, n);"),
                );
            }
        }
        for dir in SELECT_DIRECTIONS {
            if let Some(name) = select_window(dir, e) {
                let cmp = format!("Cmp_{}", dir.name().to_ascii_lowercase());
                out.push(
                    name,
                    &format!("const {t}* x, long long* sel, const long long* meta, long long n"),
                    &format!("select_window_impl<{t}, {cmp}>(x, sel, meta, n);"),
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    //! The kernels' index arithmetic (`window.cuh`), ported to Rust line by
    //! line over the same `meta`, against the CPU kernels.
    use super::*;
    use crate::cpu::window::{reduce_window as cpu_reduce_window, select_and_scatter};
    use crate::HostTensor;
    use meshrun_compiler::ir::OpKind;
    use meshrun_compiler::text::parse_module;

    fn tap(meta: &[i64], d: usize, o: i64, k: i64) -> i64 {
        let p = &meta[1 + META_PER_DIM * d..];
        let pos = o * p[3] + k * p[5] - p[6];
        if pos < 0 || pos % p[4] != 0 {
            return -1;
        }
        let i = pos / p[4];
        if i < p[0] {
            i
        } else {
            -1
        }
    }

    fn volume(meta: &[i64]) -> i64 {
        (0..meta[0] as usize)
            .map(|d| meta[1 + META_PER_DIM * d + 2])
            .product()
    }

    fn element(meta: &[i64], mut i: i64, mut w: i64) -> i64 {
        let (mut at, mut stride) = (0, 1);
        for d in (0..meta[0] as usize).rev() {
            let p = &meta[1 + META_PER_DIM * d..];
            let o = i % p[1];
            i /= p[1];
            let k = w % p[2];
            w /= p[2];
            let t = tap(meta, d, o, k);
            if t < 0 {
                return -1;
            }
            at += t * stride;
            stride *= p[0];
        }
        at
    }

    /// `reduce_window_impl` with an add reducer, in f64.
    fn gpu_reduce_window_add(x: &[f64], init: f64, meta: &[i64], n: i64) -> Vec<f64> {
        (0..n)
            .map(|i| {
                (0..volume(meta)).fold(init, |acc, w| {
                    let at = element(meta, i, w);
                    acc + if at < 0 { init } else { x[at as usize] }
                })
            })
            .collect()
    }

    /// `select_window_impl` (GE) then `scatter_selected_impl` (add).
    fn gpu_max_pool_grad(x: &[f64], src: &[f64], meta: &[i64], n: i64) -> Vec<f64> {
        let sel: Vec<i64> = (0..src.len() as i64)
            .map(|i| {
                let mut chosen = -1;
                for w in 0..volume(meta) {
                    let at = element(meta, i, w);
                    if at < 0 {
                        continue;
                    }
                    if chosen < 0 || x[chosen as usize] < x[at as usize] {
                        chosen = at;
                    }
                }
                chosen
            })
            .collect();
        let rank = meta[0] as usize;
        (0..n)
            .map(|q| {
                let mut acc = 0.0;
                for w in 0..volume(meta) {
                    let (mut rest_q, mut rest_w, mut win, mut win_stride) = (q, w, 0, 1);
                    let mut found = true;
                    for d in (0..rank).rev() {
                        let p = &meta[1 + META_PER_DIM * d..];
                        let c = rest_q % p[0];
                        rest_q /= p[0];
                        let k = rest_w % p[2];
                        rest_w /= p[2];
                        let num = c * p[4] + p[6] - k * p[5];
                        if num < 0 || num % p[3] != 0 || num / p[3] >= p[1] {
                            found = false;
                            break;
                        }
                        win += (num / p[3]) * win_stride;
                        win_stride *= p[1];
                    }
                    if found && sel[win as usize] == q {
                        acc += src[win as usize];
                    }
                }
                acc
            })
            .collect()
    }

    fn f64_tensor(shape: &[usize], v: &[f64]) -> HostTensor {
        HostTensor::from_vec(shape, v.to_vec()).unwrap()
    }

    /// Distinct values, with a tie.
    fn values(n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| {
                if i == 3 {
                    2.0
                } else {
                    ((i * 29 % 31) as f64) - 9.0
                }
            })
            .collect()
    }

    #[test]
    fn reduce_window_indexing_matches_the_cpu_kernel() {
        // cumsum, strided + dilated + padded windows (negative padding too),
        // windows larger than the input.
        let cases = [
            ("[1, 4]", "[1, 1]", "[1, 1]", "[1, 1]", "[[0, 0], [3, 0]]"),
            ("[2, 3]", "[1, 2]", "[2, 1]", "[1, 2]", "[[1, 2], [0, 1]]"),
            ("[2, 2]", "[2, 1]", "[1, 1]", "[1, 1]", "[[-1, 0], [2, -1]]"),
            ("[3, 2]", "[1, 1]", "[1, 3]", "[2, 1]", "[[0, 0], [1, 1]]"),
            ("[9, 2]", "[1, 1]", "[1, 1]", "[1, 1]", "[[0, 0], [0, 0]]"),
        ];
        for (dims, strides, base, wdil, pad) in cases {
            let src = format!(
                r#"func.func @f(%x: tensor<5x4xf64>, %c: tensor<f64>) -> tensor<5x4xf64> {{
  %r = "stablehlo.reduce_window"(%x, %c) <{{base_dilations = array<i64: {b}>, padding = dense<{pad}> : tensor<2x2xi64>, window_dilations = array<i64: {w}>, window_dimensions = array<i64: {d}>, window_strides = array<i64: {s}>}}> ({{
  ^bb0(%a: tensor<f64>, %b: tensor<f64>):
    %s = stablehlo.add %a, %b : tensor<f64>
    stablehlo.return %s : tensor<f64>
  }}) : (tensor<5x4xf64>, tensor<f64>) -> tensor<5x4xf64>
  return %r : tensor<5x4xf64>
}}"#,
                b = &base[1..base.len() - 1],
                w = &wdil[1..wdil.len() - 1],
                d = &dims[1..dims.len() - 1],
                s = &strides[1..strides.len() - 1],
            );
            // The declared type is not checked here; only the op is used.
            let m = parse_module(&src).unwrap();
            let f = m.func("f").unwrap();
            let (_, op) = f.ops_in_order().last().unwrap();
            let OpKind::ReduceWindow(rw) = &op.kind else {
                panic!("not a reduce_window")
            };
            let x = values(20);
            let meta = window_meta(&rw.window(2).unwrap(), &[5, 4]).unwrap();
            let xt = f64_tensor(&[5, 4], &x);
            let init = f64_tensor(&[], &[0.5]);
            let want = cpu_reduce_window(rw, &[&xt], &[&init]).unwrap();
            let n = want[0].len() as i64;
            let got = gpu_reduce_window_add(&x, 0.5, &meta, n);
            assert_eq!(
                got,
                want[0].to_f64_vec(),
                "{dims} {strides} {base} {wdil} {pad}"
            );
        }
    }

    #[test]
    fn select_and_scatter_indexing_matches_the_cpu_kernel() {
        // Non-overlapping 2x2 pooling, and overlapping padded 3x3 stride 2.
        for (dims, strides, pad, out) in [
            ("2, 2", "2, 2", "[[0, 0], [0, 0]]", [3, 2]),
            ("3, 3", "2, 2", "[[1, 1], [1, 1]]", [3, 2]),
        ] {
            let src = format!(
                r#"func.func @f(%x: tensor<6x4xf64>, %s: tensor<{o0}x{o1}xf64>, %z: tensor<f64>) -> tensor<6x4xf64> {{
  %r = "stablehlo.select_and_scatter"(%x, %s, %z) <{{padding = dense<{pad}> : tensor<2x2xi64>, window_dimensions = array<i64: {dims}>, window_strides = array<i64: {strides}>}}> ({{
  ^bb0(%a: tensor<f64>, %b: tensor<f64>):
    %p = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }}, {{
  ^bb0(%a: tensor<f64>, %b: tensor<f64>):
    %q = stablehlo.add %a, %b : tensor<f64>
    stablehlo.return %q : tensor<f64>
  }}) : (tensor<6x4xf64>, tensor<{o0}x{o1}xf64>, tensor<f64>) -> tensor<6x4xf64>
  return %r : tensor<6x4xf64>
}}"#,
                o0 = out[0],
                o1 = out[1],
            );
            let m = parse_module(&src).unwrap();
            meshrun_compiler::ir::verify_module(&m).unwrap();
            let f = m.func("f").unwrap();
            let (_, op) = f.ops_in_order().last().unwrap();
            let OpKind::SelectAndScatter(ss) = &op.kind else {
                panic!("not a select_and_scatter")
            };
            let x = values(24);
            let s: Vec<f64> = (0..out[0] * out[1]).map(|i| 1.0 + i as f64).collect();
            let meta = window_meta(&ss.window(2).unwrap(), &[6, 4]).unwrap();
            let want = select_and_scatter(
                ss,
                &f64_tensor(&[6, 4], &x),
                &f64_tensor(&out, &s),
                &f64_tensor(&[], &[0.0]),
            )
            .unwrap();
            let got = gpu_max_pool_grad(&x, &s, &meta, 24);
            assert_eq!(got, want.to_f64_vec(), "{dims} {strides} {pad}");
        }
    }

    #[test]
    fn gpu_forms_are_recognized() {
        let src = r#"func.func @f(%x: tensor<4x4xf32>, %s: tensor<2x2xf32>, %z: tensor<f32>) -> tensor<4x4xf32> {
  %r = "stablehlo.select_and_scatter"(%x, %s, %z) <{window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %p = stablehlo.compare LE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %q = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %q : tensor<f32>
  }) : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x4xf32>
  %m = "stablehlo.reduce_window"(%x, %z) <{window_dimensions = array<i64: 2, 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %q = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %q : tensor<f32>
  }) : (tensor<4x4xf32>, tensor<f32>) -> tensor<3x3xf32>
  return %r : tensor<4x4xf32>
}"#;
        let m = parse_module(src).unwrap();
        let f = m.func("f").unwrap();
        let ops: Vec<OpKind> = f.ops_in_order().map(|(_, op)| op.kind.clone()).collect();
        let OpKind::SelectAndScatter(ss) = &ops[0] else {
            panic!()
        };
        assert_eq!(
            select_and_scatter_kinds(ss),
            Ok((CompareDirection::Le, ReduceKind::Add))
        );
        let OpKind::ReduceWindow(rw) = &ops[1] else {
            panic!()
        };
        assert_eq!(reduce_window_kind(rw), Ok(ReduceKind::Maximum));
        let m = parse_module(&src.replace("compare LE, %a, %b", "compare EQ, %a, %b")).unwrap();
        let f = m.func("f").unwrap();
        let OpKind::SelectAndScatter(ss) = &f.ops_in_order().next().unwrap().1.kind else {
            panic!()
        };
        assert!(select_and_scatter_kinds(ss)
            .unwrap_err()
            .contains("GE/GT/LE/LT"));
    }

    #[test]
    fn names_follow_the_tables() {
        assert_eq!(
            reduce_window(ReduceKind::Maximum, ElemType::BF16).as_deref(),
            Some("reduce_window_maximum_bf16")
        );
        assert_eq!(reduce_window(ReduceKind::And, ElemType::F32), None);
        assert_eq!(
            select_window(CompareDirection::Ge, ElemType::F32).as_deref(),
            Some("select_window_ge_f32")
        );
        assert_eq!(select_window(CompareDirection::Eq, ElemType::F32), None);
        let all = entries().functions;
        assert!(all.contains(&"scatter_selected_add_f16".to_string()));
        assert!(all.contains(&"select_window_le_i64".to_string()));
    }
}
