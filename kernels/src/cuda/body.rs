//! CUDA source for a `reduce` whose body is any element-wise computation
//! (`jnp.argmax`'s comparator over values and indices): the body becomes
//! a `__device__` function, one C statement per body op built from the
//! same functors as the element-wise kernels (`templates.cuh`), and a
//! kernel folds each row of the inputs' `outer x red` matrices with it.
//!
//! Unlike the fixed reductions, such a body has no identity element: each
//! thread folds its strided share of a row starting from the first element
//! it sees (a flag says whether it saw any), the block combines the
//! threads' partials in a tree (skipping empty ones), and the init values
//! enter once, at the end, as `body(init, partial)` — the same place the
//! CPU kernel (`cpu::reduce_body`) puts them. The order of combination is
//! one StableHLO allows for an associative, commutative body, as JAX's
//! are; the CPU kernel's halving order may differ in the last bit of a
//! float sum, never in argmax's pick.
//!
//! A body is compiled per program (the module's source names its types),
//! so the runtime compiles it on first use; CI compiles [`sample_modules`]
//! (bodies that use every op kind the generator emits, on every element
//! type) with NVRTC. None of it has run on a GPU.

use meshrun_compiler::ir::ops::compare::Compare;
use meshrun_compiler::ir::ops::constant::Constant;
use meshrun_compiler::ir::{
    BinaryOp, CompareType, Computation, DenseLiteral, ElemType, OpKind, Scalar, UnaryOp,
};

use super::generate;
use super::names::{self, cuda_type};
use super::{KernelModule, PRELUDE, TEMPLATES};

/// The kernel function of every body module.
pub const REDUCE_BODY_FUNCTION: &str = "reduce_body";

/// The storage type of `e`, or why the body cannot run on a GPU.
fn storage(e: ElemType) -> Result<&'static str, String> {
    cuda_type(e).ok_or_else(|| format!("element type {e} has no GPU kernel"))
}

/// The functor of `op` on `e`: the element-wise kernels' own (same
/// support table, same functor names), so a body compiles wherever the
/// op's element-wise kernel does.
fn binary_functor(op: BinaryOp, e: ElemType) -> Result<String, String> {
    if names::binary_supported(op, e) {
        Ok(generate::binary_functor(op, e))
    } else {
        Err(format!("'{}' on {e} has no GPU kernel", op.name()))
    }
}

fn unary_functor(op: UnaryOp, e: ElemType) -> Result<String, String> {
    if names::unary_supported(op, e) {
        Ok(generate::unary_functor(op, e))
    } else {
        Err(format!("'{}' on {e} has no GPU kernel", op.name()))
    }
}

/// The C expression of a rank-0 constant, as a value of storage type `t`.
fn constant(lit: &DenseLiteral, t: &str) -> Result<String, String> {
    let s = match lit {
        DenseLiteral::Splat(s) => *s,
        DenseLiteral::Elements(v) if v.len() == 1 => v[0],
        _ => return Err("a constant in the body that is not a scalar".into()),
    };
    Ok(match s {
        // Exact bits: NaN payloads and infinities survive.
        Scalar::Float(x) => format!(
            "FromScalar<{t}>::f(__longlong_as_double({}ll))",
            x.to_bits() as i64
        ),
        Scalar::Int(i) => format!("FromScalar<{t}>::i({i}ll)"),
        Scalar::Bool(b) => format!("FromScalar<{t}>::b({b})"),
    })
}

/// `__device__ void body(a_0.., b_0.., r_0*..)`: the body as C, every
/// value held in its storage type and every op rounded to it, as the CPU
/// kernels round f16/bf16 once per op.
pub fn body_function(body: &Computation) -> Result<String, String> {
    let f = body.func();
    let name = |v: meshrun_compiler::ir::Value| format!("v{}", v.index());
    let ty = |v| storage(f.ty(v).elem);
    let mut params = Vec::new();
    for &a in &f.args {
        params.push(format!("{} {}", ty(a)?, name(a)));
    }
    for (k, &r) in f.returns.iter().enumerate() {
        params.push(format!("{}* r{k}", ty(r)?));
    }
    let mut out = format!(
        "__device__ __forceinline__ void body({}) {{\n",
        params.join(", ")
    );
    for (_, op) in f.ops_in_order() {
        let [r] = op.results[..] else {
            return Err(format!(
                "'{}' in the body has several results",
                op.kind.name()
            ));
        };
        let t = ty(r)?;
        let x: Vec<String> = op.operands.iter().map(|&v| name(v)).collect();
        let elem = |i: usize| f.ty(op.operands[i]).elem;
        let expr = match &op.kind {
            OpKind::Constant(Constant { value: lit, .. }) => constant(lit, t)?,
            OpKind::Reshape(_) | OpKind::BroadcastInDim(_) => x[0].clone(),
            OpKind::Convert(_) => format!("convert_one<{t}>({})", x[0]),
            OpKind::Unary(u) => {
                format!(
                    "St<{t}>::from({}()(ld({})))",
                    unary_functor(*u, elem(0))?,
                    x[0]
                )
            }
            OpKind::Binary(b) => format!(
                "St<{t}>::from({}()(ld({}), ld({})))",
                binary_functor(*b, elem(0))?,
                x[0],
                x[1]
            ),
            OpKind::Compare(Compare {
                direction,
                compare_type,
            }) => {
                let cmp = format!("Cmp_{}", direction.name().to_ascii_lowercase());
                let functor = if *compare_type == Some(CompareType::TotalOrder) {
                    format!("Total<{cmp}>")
                } else {
                    cmp
                };
                format!("St<{t}>::from({functor}()(ld({}), ld({})))", x[0], x[1])
            }
            OpKind::Select(_) => format!("({} ? {} : {})", x[0], x[1], x[2]),
            OpKind::Clamp(_) => format!(
                "St<{t}>::from(clamp_one(ld({}), ld({}), ld({})))",
                x[0], x[1], x[2]
            ),
            other => return Err(format!("'{}' in the body has no GPU kernel", other.name())),
        };
        out.push_str(&format!("  {t} {} = {expr};\n", name(r)));
    }
    for (k, &r) in f.returns.iter().enumerate() {
        out.push_str(&format!("  *r{k} = {};\n", name(r)));
    }
    out.push_str("}\n");
    Ok(out)
}

/// The kernel module reducing with `body`: `reduce_body(x_0.., init_0..,
/// y_0.., outer, red)` folds row `o` of every `outer x red` input into
/// `y_k[o]`. Launched with `REDUCE_THREADS` threads per block, one block
/// per row (grid-stride over rows).
pub fn reduce_body_module(body: &Computation) -> Result<KernelModule, String> {
    let f = body.func();
    let n = f.returns.len();
    if n == 0 || f.args.len() != 2 * n {
        return Err(format!(
            "a reduce body takes 2N arguments for N results, not {} for {n}",
            f.args.len()
        ));
    }
    let types: Vec<&str> = f
        .returns
        .iter()
        .map(|&r| storage(f.ty(r).elem))
        .collect::<Result<_, _>>()?;
    // clamp(min, x, max) by comparisons, so NaN stays NaN (CPU `clamp_one`).
    let mut src = String::from(
        "template <typename C> __device__ __forceinline__ C clamp_one(C l, C v, C h) {\n  \
         if (v < l) v = l;\n  if (v > h) v = h;\n  return v;\n}\n",
    );
    src.push_str(&body_function(body)?);
    let ks: Vec<usize> = (0..n).collect();
    let list = |fmt: &dyn Fn(usize) -> String| ks.iter().map(|&k| fmt(k)).collect::<Vec<_>>();
    let params = [
        list(&|k| format!("const {}* x{k}", types[k])),
        list(&|k| format!("const {}* init{k}", types[k])),
        list(&|k| format!("{}* y{k}", types[k])),
        vec!["long long outer".into(), "long long red".into()],
    ]
    .concat();
    // `acc = body(acc, other)` for tuples held in locals / shared memory.
    let combine = |acc: &dyn Fn(usize) -> String, other: &dyn Fn(usize) -> String| {
        let args = [list(acc), list(other), list(&|k| format!("&{}", acc(k)))].concat();
        format!("body({});", args.join(", "))
    };
    src.push_str(&format!(
        "extern \"C\" __global__ void {REDUCE_BODY_FUNCTION}({}) {{\n",
        params.join(", ")
    ));
    for (k, t) in types.iter().enumerate() {
        src.push_str(&format!("  __shared__ {t} part{k}[REDUCE_THREADS];\n"));
    }
    src.push_str("  __shared__ bool has[REDUCE_THREADS];\n");
    src.push_str("  for (long long o = blockIdx.x; o < outer; o += gridDim.x) {\n");
    for (k, t) in types.iter().enumerate() {
        src.push_str(&format!("    {t} a{k} = init{k}[0];\n"));
    }
    src.push_str("    bool any = false;\n");
    src.push_str("    for (long long j = threadIdx.x; j < red; j += blockDim.x) {\n");
    for (k, t) in types.iter().enumerate() {
        src.push_str(&format!("      {t} e{k} = x{k}[o * red + j];\n"));
    }
    src.push_str("      if (!any) {\n");
    for k in 0..n {
        src.push_str(&format!("        a{k} = e{k};\n"));
    }
    src.push_str(&format!(
        "        any = true;\n      }} else {{\n        {}\n      }}\n    }}\n",
        combine(&|k| format!("a{k}"), &|k| format!("e{k}"))
    ));
    for k in 0..n {
        src.push_str(&format!("    part{k}[threadIdx.x] = a{k};\n"));
    }
    src.push_str("    has[threadIdx.x] = any;\n    __syncthreads();\n");
    src.push_str("    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {\n");
    src.push_str("      unsigned int i = threadIdx.x;\n");
    src.push_str("      if (i < s && has[i + s]) {\n        if (has[i]) {\n");
    for (k, t) in types.iter().enumerate() {
        src.push_str(&format!(
            "          {t} p{k} = part{k}[i], q{k} = part{k}[i + s];\n"
        ));
    }
    src.push_str(&format!(
        "          {}\n",
        combine(&|k| format!("p{k}"), &|k| format!("q{k}"))
    ));
    for k in 0..n {
        src.push_str(&format!("          part{k}[i] = p{k};\n"));
    }
    src.push_str("        } else {\n");
    for k in 0..n {
        src.push_str(&format!("          part{k}[i] = part{k}[i + s];\n"));
    }
    src.push_str("          has[i] = true;\n        }\n      }\n      __syncthreads();\n    }\n");
    src.push_str("    if (threadIdx.x == 0) {\n");
    for (k, t) in types.iter().enumerate() {
        src.push_str(&format!(
            "      {t} s{k} = init{k}[0], t{k} = part{k}[0];\n"
        ));
    }
    src.push_str(&format!(
        "      if (has[0]) {{\n        {}\n      }}\n",
        combine(&|k| format!("s{k}"), &|k| format!("t{k}"))
    ));
    for k in 0..n {
        src.push_str(&format!("      y{k}[o] = s{k};\n"));
    }
    src.push_str("    }\n    __syncthreads();\n  }\n}\n");
    Ok(KernelModule {
        name: "reduce_body",
        source: format!(
            "// meshrun kernel module `reduce_body` (generated from a reduce body)\n{PRELUDE}\n{TEMPLATES}\n{src}"
        ),
        functions: vec![REDUCE_BODY_FUNCTION.to_string()],
    })
}

/// Bodies that together use every op kind [`body_function`] translates, on
/// every element type: what CI compiles with NVRTC in place of the bodies
/// of programs it cannot know.
pub fn sample_bodies() -> Vec<Computation> {
    let mut out = Vec::new();
    for e in [ElemType::F32, ElemType::F64, ElemType::F16, ElemType::BF16] {
        for dir in ["GT", "LT"] {
            out.push(argmax_like(e, dir, ElemType::I32));
        }
    }
    out.push(argmax_like(ElemType::I32, "GT", ElemType::I64));
    out.push(argmax_like(ElemType::I64, "LT", ElemType::I32));
    out.push(every_op_body());
    out
}

/// The kernel modules of [`sample_bodies`].
pub fn sample_modules() -> Vec<KernelModule> {
    sample_bodies()
        .iter()
        .map(|b| reduce_body_module(b).unwrap_or_else(|e| panic!("a sample body: {e}")))
        .collect()
}

fn parse_body(src: &str) -> Computation {
    let m = meshrun_compiler::text::parse_module(src)
        .unwrap_or_else(|d| panic!("a sample body does not parse: {d:?}\n{src}"));
    let f = m.funcs.first().expect("one function");
    let body = f
        .ops_in_order()
        .find_map(|(_, op)| match &op.kind {
            OpKind::Reduce(r) => Some(r.body.clone()),
            _ => None,
        })
        .expect("a reduce");
    body
}

/// JAX's argmax / argmin body over values of type `v` and indices of `i`.
fn argmax_like(v: ElemType, dir: &str, i: ElemType) -> Computation {
    let (vt, it) = (format!("tensor<{v}>"), format!("tensor<{i}>"));
    let cmp = if v.is_float() { "FLOAT" } else { "SIGNED" };
    parse_body(&format!(
        r#"func.func @f(%x: tensor<4x{v}>, %j: tensor<4x{i}>, %c: {vt}, %d: {it}) -> {it} {{
    %r:2 = stablehlo.reduce(%x init: %c), (%j init: %d) across dimensions = [0] : (tensor<4x{v}>, tensor<4x{i}>, {vt}, {it}) -> ({vt}, {it})
     reducer(%a: {vt}, %b: {vt}) (%ai: {it}, %bi: {it})  {{
      %2 = stablehlo.compare {dir}, %a, %b, {cmp} : ({vt}, {vt}) -> tensor<i1>
      %3 = stablehlo.compare NE, %a, %a, {cmp} : ({vt}, {vt}) -> tensor<i1>
      %4 = stablehlo.or %2, %3 : tensor<i1>
      %5 = stablehlo.compare EQ, %a, %b, {cmp} : ({vt}, {vt}) -> tensor<i1>
      %6 = stablehlo.compare LT, %ai, %bi, SIGNED : ({it}, {it}) -> tensor<i1>
      %7 = stablehlo.and %5, %6 : tensor<i1>
      %8 = stablehlo.or %4, %7 : tensor<i1>
      %9 = stablehlo.select %4, %a, %b : tensor<i1>, {vt}
      %10 = stablehlo.select %8, %ai, %bi : tensor<i1>, {it}
      stablehlo.return %9, %10 : {vt}, {it}
    }}
    return %r#1 : {it}
}}
"#
    ))
}

/// A (meaningless) body of three inputs that uses every other op kind:
/// constants of each scalar kind, convert, unary and binary ops on floats,
/// integers and i1, a total-order comparison, clamp, reshape.
fn every_op_body() -> Computation {
    parse_body(
        r#"func.func @f(%x: tensor<4xf32>, %y: tensor<4xi64>, %z: tensor<4xi1>, %c: tensor<f32>, %d: tensor<i64>, %e: tensor<i1>) -> tensor<f32> {
    %r:3 = stablehlo.reduce(%x init: %c), (%y init: %d), (%z init: %e) across dimensions = [0] : (tensor<4xf32>, tensor<4xi64>, tensor<4xi1>, tensor<f32>, tensor<i64>, tensor<i1>) -> (tensor<f32>, tensor<i64>, tensor<i1>)
     reducer(%a: tensor<f32>, %b: tensor<f32>) (%i: tensor<i64>, %j: tensor<i64>) (%p: tensor<i1>, %q: tensor<i1>)  {
      %one = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %nan = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %k = stablehlo.constant dense<3> : tensor<i64>
      %t = stablehlo.constant dense<true> : tensor<i1>
      %s = stablehlo.add %a, %b : tensor<f32>
      %m = stablehlo.maximum %s, %one : tensor<f32>
      %n = stablehlo.negate %m : tensor<f32>
      %ex = stablehlo.exponential %n : tensor<f32>
      %w = stablehlo.divide %ex, %one : tensor<f32>
      %cl = stablehlo.clamp %nan, %w, %one : tensor<f32>
      %sh = stablehlo.reshape %cl : (tensor<f32>) -> tensor<f32>
      %ii = stablehlo.multiply %i, %j : tensor<i64>
      %ix = stablehlo.xor %ii, %k : tensor<i64>
      %ia = stablehlo.abs %ix : tensor<i64>
      %fi = stablehlo.convert %ia : (tensor<i64>) -> tensor<f32>
      %tot = stablehlo.compare GE, %fi, %sh, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %pq = stablehlo.xor %p, %q : tensor<i1>
      %np = stablehlo.not %pq : tensor<i1>
      %all = stablehlo.and %np, %tot : tensor<i1>
      %any = stablehlo.or %all, %t : tensor<i1>
      %out = stablehlo.select %any, %sh, %fi : tensor<i1>, tensor<f32>
      stablehlo.return %out, %ia, %any : tensor<f32>, tensor<i64>, tensor<i1>
    }
    return %r#0 : tensor<f32>
}
"#,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_generate_and_name_their_types() {
        let mods = sample_modules();
        assert_eq!(mods.len(), sample_bodies().len());
        for m in &mods {
            assert!(m
                .source
                .contains("extern \"C\" __global__ void reduce_body("));
            assert_eq!(m.functions, vec![REDUCE_BODY_FUNCTION.to_string()]);
        }
        // The f16 argmax keeps values as __half and indices as int.
        let half = &mods[4].source;
        assert!(half.contains("const __half* x0, const int* x1"), "{half}");
        assert!(half.contains("St<pred_t>::from(Cmp_gt()(ld(v"), "{half}");
        let every = &mods.last().unwrap().source;
        for piece in [
            "Total<Cmp_ge>",
            "I_xor",
            "P_xor",
            "P_not",
            "F_exponential",
            "convert_one<float>",
            "clamp_one(",
            "FromScalar<long long>::i(3ll)",
            "FromScalar<pred_t>::b(true)",
        ] {
            assert!(every.contains(piece), "{piece} missing:\n{every}");
        }
    }

    #[test]
    fn ops_without_a_gpu_translation_are_named() {
        let b = parse_body(
            r#"func.func @f(%x: tensor<4xf32>, %c: tensor<f32>) -> tensor<f32> {
    %r = stablehlo.reduce(%x init: %c) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
     reducer(%a: tensor<f32>, %b: tensor<f32>)  {
      %s = stablehlo.atan2 %a, %b : tensor<f32>
      %t = stablehlo.not %s : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }
    return %r : tensor<f32>
}
"#,
        );
        let e = reduce_body_module(&b).unwrap_err();
        assert!(e.contains("'not' on f32 has no GPU kernel"), "{e}");
        // The element-wise kernels' support table decides: digamma has no
        // CUDA functor, so a body using it is refused here rather than
        // failing in NVRTC at run time.
        let b = parse_body(
            r#"func.func @f(%x: tensor<4xf32>, %c: tensor<f32>) -> tensor<f32> {
    %r = stablehlo.reduce(%x init: %c) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
     reducer(%a: tensor<f32>, %b: tensor<f32>)  {
      %s = chlo.digamma %a : tensor<f32> -> tensor<f32>
      %t = stablehlo.add %s, %b : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }
    return %r : tensor<f32>
}
"#,
        );
        let e = reduce_body_module(&b).unwrap_err();
        assert!(e.contains("'digamma' on f32 has no GPU kernel"), "{e}");
    }
}
