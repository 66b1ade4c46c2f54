//! CUDA C++ sources of the CUDA backend's kernels (the runtime compiles
//! them with NVRTC at run time, once per process and GPU architecture).
//!
//! Everything here is plain text and tables, so it builds and is tested
//! without CUDA: [`names`] says what each kernel is called and which
//! (operation, element type) pairs exist; [`modules`] returns the sources,
//! a shared prelude (`prelude.cuh`: element types, conversions, math) and
//! the operation templates (`templates.cuh`) followed by generated
//! `extern "C"` entry points, one per name. The runtime's NVRTC test
//! compiles every module for sm_80 and sm_90 and checks that every listed
//! function is in the cubin.
//!
//! Kernel conventions: element counts are `long long`; element-wise
//! kernels use grid-stride loops, so any grid size is correct; reductions
//! take blocks of [`REDUCE_THREADS`] threads.

pub mod body;
pub mod conv;
mod generate;
#[cfg(test)]
mod host_run;
pub mod index;
pub mod names;
pub mod params;
pub mod rng;
pub mod sort;
pub mod window;

/// Threads per block of the `reduce_*` kernels (a power of two; the
/// kernels' shared-memory tree assumes it).
pub const REDUCE_THREADS: u32 = 256;

const PRELUDE: &str = include_str!("prelude.cuh");
const TEMPLATES: &str = include_str!("templates.cuh");

/// One NVRTC compilation unit.
#[derive(Debug, Clone)]
pub struct KernelModule {
    /// A short name (`elementwise`, `movement`, ...), also the NVRTC
    /// program name.
    pub name: &'static str,
    /// The complete CUDA C++ source.
    pub source: String,
    /// Every `extern "C" __global__` function the module defines.
    pub functions: Vec<String>,
}

/// Every kernel module, in a fixed order.
pub fn modules() -> Vec<KernelModule> {
    // (name, entry points, templates of this module only)
    let parts: [(&'static str, generate::Entries, &str); 9] = [
        ("elementwise", generate::elementwise(), ""),
        ("compare_select", generate::compare_select(), ""),
        ("convert", generate::convert(), ""),
        ("movement", generate::movement(), ""),
        ("reduce", generate::reduce(), ""),
        ("window", window::entries(), window::SOURCE),
        ("conv", conv::entries(), conv::SOURCE),
        ("index", index::entries(), index::SOURCE),
        ("rng", rng::entries(), rng::SOURCE),
    ];
    parts
        .into_iter()
        .map(|(name, entries, own)| KernelModule {
            name,
            source: format!(
                "// meshrun kernel module `{name}` (generated)\n{PRELUDE}\n{TEMPLATES}\n{own}\n{}",
                entries.source
            ),
            functions: entries.functions,
        })
        .collect()
}

/// The module that defines `function`, if any.
pub fn module_of(function: &str) -> Option<&'static str> {
    modules()
        .into_iter()
        .find(|m| m.functions.iter().any(|f| f == function))
        .map(|m| m.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use meshrun_compiler::ir::{ElemType, ReduceKind, UnaryOp};
    use std::collections::HashSet;

    #[test]
    fn every_function_is_defined_once_and_named_by_the_tables() {
        let mods = modules();
        let mut seen = HashSet::new();
        for m in &mods {
            for f in &m.functions {
                assert!(seen.insert(f.clone()), "{f} defined twice");
                let decl = format!("extern \"C\" __global__ void {f}(");
                assert_eq!(m.source.matches(&decl).count(), 1, "{f} in {}", m.name);
            }
        }
        for e in names::DTYPES {
            for &op in UnaryOp::ALL {
                if let Some(n) = names::unary(op, e) {
                    assert!(seen.contains(&n), "{n} not generated");
                }
            }
            for &k in ReduceKind::ALL {
                if let Some(n) = names::reduce(k, e) {
                    assert!(seen.contains(&n), "{n} not generated");
                }
            }
        }
        // 7 x 6 conversions, one strided copy per width.
        let converts = seen.iter().filter(|f| f.starts_with("convert_")).count();
        assert_eq!(converts, 42);
        assert_eq!(module_of("strided_copy_b2"), Some("movement"));
        assert_eq!(module_of("unary_tanh_bf16"), Some("elementwise"));
        assert_eq!(module_of("im2col_b4"), Some("conv"));
        assert_eq!(module_of("unary_tanh_i32"), None);
        assert!(names::reduce_many(ReduceKind::Add, ElemType::BF16).is_some());
    }
}
