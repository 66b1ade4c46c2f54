//! Run one program sharded and unsharded (include with
//! `#[path = "common/sharded.rs"] mod sharded;`).

use meshrun_compiler::partition::{CollectiveKind, PartitionedProgram};
use meshrun_compiler::text::parse_module;
use meshrun_kernels::{HostTensor, Parallelism};
use meshrun_runtime::compare::mismatch;
use meshrun_runtime::pipeline::{compile, run_sharded};
use meshrun_runtime::reference::run_function;
use meshrun_runtime::CpuBackend;

/// The 2x4 mesh the sharded op tests run on.
pub const MESH: &str = r#"sdy.mesh @mesh = <["data"=2, "model"=4]>"#;

/// Compile `body` (a `func.func @main`) on [`MESH`], run it sharded on 8
/// CPU devices and unsharded on `inputs`, and require equal results.
pub fn run_both(body: &str, inputs: &[HostTensor]) -> PartitionedProgram {
    let text = format!("module @m {{\n  {MESH}\n{body}\n}}");
    let module = parse_module(&text).unwrap_or_else(|d| panic!("{d}\n{text}"));
    let want = run_function(&module, "main", inputs, Parallelism::None).expect("reference");
    let program = compile(&module).unwrap_or_else(|d| panic!("compile: {d}"));
    let got = run_sharded(&CpuBackend::new(), &program, inputs).expect("sharded run");
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        if let Some(m) = mismatch(g, w, 1e-5) {
            panic!("output {k}: {m}\n{text}");
        }
    }
    program
}

/// Every collective of the device program with `op: reason`.
pub fn collectives(p: &PartitionedProgram) -> Vec<(CollectiveKind, String)> {
    p.device
        .collectives()
        .map(|(c, cause)| (c.kind, format!("{}: {}", cause.op, cause.reason)))
        .collect()
}
