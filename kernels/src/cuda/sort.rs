//! CUDA source for `stablehlo.sort` with any comparator body and for
//! `chlo.top_k`: one thread per row (grid-stride over rows) sorts the
//! row's positions by a stable bottom-up merge sort in two scratch index
//! buffers, then gathers the sorted elements.
//!
//! The comparator becomes a `__device__` function exactly as a reduce
//! body does ([`super::body::body_function`]). The merge takes the right
//! run's element only when it goes strictly before the left one, so the
//! order is stable, as the CPU kernel's (`cpu::sort`) and what JAX's
//! stable sorts and `top_k` (lower index first) return; an unstable sort
//! may return it too. top_k orders by `>` with NaN first, as
//! `cpu::top_k`.
//!
//! A sort module is generated per comparator and compiled on first use;
//! CI compiles [`sample_modules`] (argsort-style comparators over every
//! element type, and every top_k module) with NVRTC. None of it has run
//! on a GPU.

use meshrun_compiler::ir::{Computation, ElemType};

use super::body::body_function;
use super::names::cuda_type;
use super::{KernelModule, PRELUDE, TEMPLATES};

/// The kernel function of every sort module.
pub const SORT_FUNCTION: &str = "sort_rows";
/// The kernel function of every top_k module.
pub const TOP_K_FUNCTION: &str = "top_k_rows";

fn storage(e: ElemType) -> Result<&'static str, String> {
    cuda_type(e).ok_or_else(|| format!("element type {e} has no GPU kernel"))
}

/// Statements sorting positions `0..n` of one row into `src` (a pointer
/// to one of the scratch rows `p`, `t`), stably, by `before(i, j)`: a C
/// expression saying whether the element at flat index `i` goes strictly
/// before the one at `j` (`base` is the row's first flat index).
fn merge_sort(before: &dyn Fn(&str, &str) -> String) -> String {
    format!(
        "    for (long long i = 0; i < n; ++i) p[i] = i;
    long long* src = p;
    long long* dst = t;
    for (long long w = 1; w < n; w *= 2) {{
      for (long long lo = 0; lo < n; lo += 2 * w) {{
        long long mid = lo + w < n ? lo + w : n;
        long long hi = lo + 2 * w < n ? lo + 2 * w : n;
        long long a = lo, b = mid, o = lo;
        while (a < mid && b < hi) {{
          long long ia = src[a], ib = src[b];
          if ({}) {{
            dst[o++] = ib;
            ++b;
          }} else {{
            dst[o++] = ia;
            ++a;
          }}
        }}
        while (a < mid) dst[o++] = src[a++];
        while (b < hi) dst[o++] = src[b++];
      }}
      long long* s = src;
      src = dst;
      dst = s;
    }}
",
        before("base + ib", "base + ia")
    )
}

/// The row loop around `body` (statements using `base`, `p`, `t`, `n`).
fn row_loop(body: &str) -> String {
    format!(
        "  for (long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x; r < rows;
       r += (long long)gridDim.x * blockDim.x) {{
    long long base = r * n;
    long long* p = p_all + base;
    long long* t = t_all + base;
{body}  }}
"
    )
}

fn module(name: &'static str, function: &str, src: String) -> KernelModule {
    KernelModule {
        name,
        source: format!(
            "// meshrun kernel module `{name}` (generated)\n{PRELUDE}\n{TEMPLATES}\n{src}"
        ),
        functions: vec![function.to_string()],
    }
}

/// The module sorting with `comparator` (arguments `(a_0, b_0, a_1, b_1,
/// ...)`, one pair per input, returning i1): `sort_rows(x_0.., y_0..,
/// p, t, rows, n)` sorts every row of the `rows × n` inputs `x_k`
/// together into `y_k`; `p` and `t` are `rows · n` scratch indices.
pub fn sort_module(comparator: &Computation) -> Result<KernelModule, String> {
    let f = comparator.func();
    let inputs = f.args.len() / 2;
    if inputs == 0 || f.args.len() != 2 * inputs || f.returns.len() != 1 {
        return Err(format!(
            "a sort comparator takes two arguments per input and returns one i1, not {} -> {}",
            f.args.len(),
            f.returns.len()
        ));
    }
    if f.ty(f.returns[0]).elem != ElemType::I1 {
        return Err("a sort comparator returns i1".into());
    }
    let types: Vec<&str> = (0..inputs)
        .map(|k| storage(f.ty(f.args[2 * k]).elem))
        .collect::<Result<_, _>>()?;
    let mut src = String::from(
        "template <typename C> __device__ __forceinline__ C clamp_one(C l, C v, C h) {\n  \
         if (v < l) v = l;\n  if (v > h) v = h;\n  return v;\n}\n",
    );
    src.push_str(&body_function(comparator)?);
    let xs: Vec<String> = (0..inputs).map(|k| format!("x{k}")).collect();
    let const_params: Vec<String> = types
        .iter()
        .enumerate()
        .map(|(k, t)| format!("const {t}* x{k}"))
        .collect();
    // before(i, j): the comparator on the elements at flat i and j.
    let pairs: Vec<String> = xs.iter().map(|x| format!("{x}[i], {x}[j]")).collect();
    src.push_str(&format!(
        "__device__ __forceinline__ bool before({}, long long i, long long j) {{\n  \
         pred_t c;\n  body({}, &c);\n  return c != 0;\n}}\n",
        const_params.join(", "),
        pairs.join(", ")
    ));
    let params = [
        const_params.clone(),
        types
            .iter()
            .enumerate()
            .map(|(k, t)| format!("{t}* y{k}"))
            .collect(),
        vec![
            "long long* p_all".into(),
            "long long* t_all".into(),
            "long long rows".into(),
            "long long n".into(),
        ],
    ]
    .concat();
    let call = |i: &str, j: &str| format!("before({}, {i}, {j})", xs.join(", "));
    let mut body = merge_sort(&call);
    body.push_str("    for (long long i = 0; i < n; ++i) {\n");
    for k in 0..inputs {
        body.push_str(&format!("      y{k}[base + i] = x{k}[base + src[i]];\n"));
    }
    body.push_str("    }\n");
    src.push_str(&format!(
        "extern \"C\" __global__ void {SORT_FUNCTION}({}) {{\n{}}}\n",
        params.join(", "),
        row_loop(&body)
    ));
    Ok(module("sort", SORT_FUNCTION, src))
}

/// The top_k module for element type `e`: `top_k_rows(x, y, idx, p, t,
/// rows, n, k)` writes the `k` largest elements of each row of the
/// `rows × n` matrix `x` (NaN first, then by `>`, ties by lower index) to
/// the `rows × k` matrices `y` and `idx` (i32 positions).
pub fn top_k_module(e: ElemType) -> Result<KernelModule, String> {
    let t = storage(e)?;
    let mut src = format!(
        "__device__ __forceinline__ bool greater(const {t}* x, long long i, long long j) {{\n  \
         auto a = ld(x[i]);\n  auto b = ld(x[j]);\n  \
         bool na = a != a, nb = b != b;\n  \
         return na ? !nb : (!nb && a > b);\n}}\n"
    );
    let mut body = merge_sort(&|i, j| format!("greater(x, {i}, {j})"));
    body.push_str(
        "    for (long long i = 0; i < k; ++i) {\n      \
         y[r * k + i] = x[base + src[i]];\n      \
         idx[r * k + i] = (int)src[i];\n    }\n",
    );
    src.push_str(&format!(
        "extern \"C\" __global__ void {TOP_K_FUNCTION}(const {t}* x, {t}* y, int* idx, \
         long long* p_all, long long* t_all, long long rows, long long n, long long k) {{\n{}}}\n",
        row_loop(&body)
    ));
    Ok(module("top_k", TOP_K_FUNCTION, src))
}

/// Comparators of the shapes JAX writes (argsort's values + indices in
/// total order, a descending sort of one input) over every element type.
pub fn sample_comparators() -> Vec<Computation> {
    let mut out = Vec::new();
    for e in [
        ElemType::F32,
        ElemType::F64,
        ElemType::F16,
        ElemType::BF16,
        ElemType::I32,
        ElemType::I64,
        ElemType::I1,
    ] {
        out.push(comparator(e, true));
        out.push(comparator(e, false));
    }
    out
}

/// Every sort and top_k module CI compiles (see the module doc).
pub fn sample_modules() -> Vec<KernelModule> {
    let mut out: Vec<KernelModule> = sample_comparators()
        .iter()
        .map(|c| sort_module(c).unwrap_or_else(|e| panic!("a sample comparator: {e}")))
        .collect();
    for e in super::names::DTYPES {
        out.push(top_k_module(e).unwrap_or_else(|err| panic!("top_k on {e}: {err}")));
    }
    out
}

/// An argsort comparator over values of `e` and i32 indices (`with_index`)
/// or a one-input descending one.
fn comparator(e: ElemType, with_index: bool) -> Computation {
    let v = format!("tensor<{e}>");
    let (cmp, dir) = match e {
        ElemType::I1 => ("UNSIGNED", "GT"),
        e if e.is_float() => ("TOTALORDER", if with_index { "LT" } else { "GT" }),
        _ => ("SIGNED", "LT"),
    };
    let src = if with_index {
        format!(
            r#"func.func @f(%x: tensor<4x{e}>, %i: tensor<4xi32>) -> tensor<4xi32> {{
    %r:2 = "stablehlo.sort"(%x, %i) <{{dimension = 0 : i64, is_stable = true}}> ({{
    ^bb0(%a: {v}, %b: {v}, %c: tensor<i32>, %d: tensor<i32>):
      %l = stablehlo.compare {dir}, %a, %b, {cmp} : ({v}, {v}) -> tensor<i1>
      stablehlo.return %l : tensor<i1>
    }}) : (tensor<4x{e}>, tensor<4xi32>) -> (tensor<4x{e}>, tensor<4xi32>)
    return %r#1 : tensor<4xi32>
}}
"#
        )
    } else {
        format!(
            r#"func.func @f(%x: tensor<4x{e}>) -> tensor<4x{e}> {{
    %r = "stablehlo.sort"(%x) <{{dimension = 0 : i64}}> ({{
    ^bb0(%a: {v}, %b: {v}):
      %l = stablehlo.compare {dir}, %a, %b, {cmp} : ({v}, {v}) -> tensor<i1>
      stablehlo.return %l : tensor<i1>
    }}) : (tensor<4x{e}>) -> tensor<4x{e}>
    return %r : tensor<4x{e}>
}}
"#
        )
    };
    let m = meshrun_compiler::text::parse_module(&src)
        .unwrap_or_else(|d| panic!("a sample comparator does not parse: {d:?}\n{src}"));
    let f = m.funcs.first().expect("one function");
    let found = f.ops_in_order().find_map(|(_, op)| match &op.kind {
        meshrun_compiler::OpKind::Sort(s) => Some(s.comparator.clone()),
        _ => None,
    });
    found.expect("a sort")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sort_and_top_k_modules_name_their_types() {
        let mods = sample_modules();
        assert_eq!(
            mods.len(),
            sample_comparators().len() + super::super::names::DTYPES.len()
        );
        let argsort = &mods[0].source;
        assert!(
            argsort.contains(
                "sort_rows(const float* x0, const int* x1, float* y0, int* y1, long long* p_all"
            ),
            "{argsort}"
        );
        assert!(
            argsort.contains("before(x0, x1, base + ib, base + ia)"),
            "{argsort}"
        );
        assert!(argsort.contains("Total<Cmp_lt>"), "{argsort}");
        let top = mods.last().unwrap();
        assert_eq!(top.functions, vec![TOP_K_FUNCTION.to_string()]);
        assert!(top.source.contains("idx[r * k + i] = (int)src[i];"));
    }
}
