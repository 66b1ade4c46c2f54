//! Comparing a sharded run's outputs with the unsharded program's, and
//! the one-line message for a difference beyond tolerance: what `meshrun
//! run --check` and the Python package's `run(..., check=True)` report.

use anyhow::{anyhow, Context};

use meshrun_compiler::partition::local::padding::non_identity_init;
use meshrun_compiler::Module;
use meshrun_kernels::cpu::body_laws::order_dependent_reduce;
use meshrun_kernels::HostTensor;
use meshrun_runtime::compare::{compare_outputs, rtol_for, Judged, F64_ERROR_FACTOR};
use meshrun_runtime::pipeline::{run_reference, run_reference_in_f64};

/// Run `module` unsharded on `inputs` and judge `outputs` against it, at
/// `rtol` or the element types' rule; a float output over it is judged
/// again against the program computed in f64.
pub fn check_outputs(
    module: &Module,
    inputs: &[HostTensor],
    outputs: &[HostTensor],
    rtol: Option<f64>,
) -> anyhow::Result<Judged> {
    let reference = run_reference(module, inputs).context("the unsharded reference run failed")?;
    let rtol = rtol.unwrap_or_else(|| rtol_for(module));
    compare_outputs(outputs, &reference, rtol, || {
        run_reference_in_f64(module, inputs)
    })
    .map_err(|e| anyhow!(e))
}

/// The first output beyond tolerance, as one line with what may explain
/// it (a reduce whose init is not its identity, an order-dependent
/// reduction body); `None` when every output is within.
pub fn mismatch_message(module: &Module, checked: &Judged, rtol: f64) -> Option<String> {
    let (k, c) = checked
        .diffs
        .iter()
        .enumerate()
        .find(|(_, c)| !c.within())?;
    let f64_note = match (&c.against_f64, &checked.f64_unavailable) {
        (Some(e), _) => format!(
            "; against the f64 result: sharded error {:e} > {F64_ERROR_FACTOR} x unsharded error {:e} + rtol",
            e.sharded, e.unsharded
        ),
        (None, Some(why)) => format!("; no f64 reference: {why}"),
        (None, None) => String::new(),
    };
    let init_note = module
        .funcs
        .iter()
        .find_map(non_identity_init)
        .map(|pos| format!("; note: the reduce at {pos} starts from a value that is not its reduction's identity, which StableHLO applies an implementation-defined number of times (XLA and meshrun once per device holding part of a sharded reduced dimension, the unsharded run once)"))
        .unwrap_or_default();
    let order_note = |f| {
        let always = order_dependent_reduce(f, false).map(|pos| {
            format!("; note: the reduction body at {pos} is not commutative and associative")
        });
        always.or_else(|| {
            order_dependent_reduce(f, true)
                .map(|pos| format!("; note: the reduction body at {pos} is not commutative and associative when its inputs hold NaN (argmax keeps whichever NaN it meets first)"))
        })
    };
    let body_note = module
        .funcs
        .iter()
        .find_map(order_note)
        .map(|n| format!("{n}, so StableHLO leaves its result implementation-defined (a sharded run combines the elements in another order than the unsharded one)"))
        .unwrap_or_default();
    Some(format!(
        "output {k} differs from the unsharded reference beyond tolerance (max abs diff {:e}, max rel diff {:e}, rtol {:e}){f64_note}{init_note}{body_note}",
        c.max_abs,
        c.max_rel,
        rtol
    ))
}
