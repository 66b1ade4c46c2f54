//! One fuzz case through every command's pipeline, in process: load
//! (`parse` + verify + validate), `propagate` (and print the result, which
//! must load again), `partition` (device program printed, collective
//! report), `cost` on the default topology, and for small programs `run`
//! with random inputs on the CPU backend, compared with the unsharded
//! reference. A stage that rejects the input must say why in one line; a
//! panic anywhere is a bug (reported with its message).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use meshrun_compiler::partition::local::padding::non_identity_init;
use meshrun_compiler::partition::partition;
use meshrun_compiler::partition::program::print::{print_device, print_global, print_lowered};
use meshrun_compiler::partition::program::report::collective_report;
use meshrun_compiler::propagation::{propagate, PropagationOptions};
use meshrun_compiler::text::print_module;
use meshrun_kernels::cpu::body_laws::{has_nan_constant, order_dependent_reduce};
use meshrun_kernels::Parallelism;
use meshrun_runtime::compare::{compare_outputs, rtol_for};
use meshrun_runtime::random_inputs::random_inputs;
use meshrun_runtime::reference::run_function_limited;
use meshrun_runtime::wide_reference::run_in_f64;
use meshrun_runtime::{CpuBackend, ExecOptions, Executor};

use crate::cost::{cost_report, Topology, DEFAULT_TOPOLOGY};
use crate::load::{load_str, LoadError};

/// Programs run only below these sizes (the fuzzer wants many cases a
/// second, not big runs; size checks themselves are fuzzed by `load`).
const RUN_MAX_DEVICES: usize = 16;
const RUN_MAX_ELEMENTS: i64 = 1 << 16;
/// A mutated loop may never end (`i = i * 1`): stop it, as a rejection.
const MAX_LOOP_ITERATIONS: u64 = 10_000;

/// How far a case got.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    Load,
    Propagate,
    Partition,
    Cost,
    Run,
}

/// The result of one case.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Every stage accepted it (the last one reached, `Run` only for small
    /// programs).
    Accepted(Stage),
    /// `stage` rejected it with `message`.
    Rejected { stage: Stage, message: String },
    /// A bug: a panic, an error of more than one line, a sharded run that
    /// differs from the unsharded one, or a propagated module that does not
    /// load again.
    Bug { stage: Stage, message: String },
}

impl Outcome {
    pub fn is_bug(&self) -> bool {
        matches!(self, Outcome::Bug { .. })
    }
}

/// Run `text` through every stage; never panics (a panic is caught and
/// returned as a bug; see [`silence_panics`] to keep it off stderr).
pub fn run_case(text: &str) -> Outcome {
    let stage = std::cell::Cell::new(Stage::Load);
    IN_CASE.with(|c| c.set(true));
    let result = catch_unwind(AssertUnwindSafe(|| stages(text, &stage)));
    IN_CASE.with(|c| c.set(false));
    match result {
        Ok(outcome) => outcome,
        Err(payload) => Outcome::Bug {
            stage: stage.into_inner(),
            message: format!("panic: {}", panic_message(&payload)),
        },
    }
}

fn stages(text: &str, stage: &std::cell::Cell<Stage>) -> Outcome {
    let rejected = |stage: Stage, message: String| {
        if message.contains('\n') {
            Outcome::Bug {
                stage,
                message: format!("an error of several lines: {message:?}"),
            }
        } else {
            Outcome::Rejected { stage, message }
        }
    };
    let path = Path::new("fuzz.mlir");
    let module = match load_str(path, text) {
        Ok(m) => m,
        Err(e) => return rejected(Stage::Load, e.to_string()),
    };

    stage.set(Stage::Propagate);
    let propagated = match propagate(&module, &PropagationOptions::default()) {
        Ok(m) => m,
        Err(diag) => return rejected(Stage::Propagate, at(path, diag)),
    };
    let printed = print_module(&propagated);
    if let Err(e) = load_str(path, &printed) {
        return Outcome::Bug {
            stage: Stage::Propagate,
            message: format!("the propagated module does not load again: {e}"),
        };
    }

    stage.set(Stage::Partition);
    let program = match partition(&propagated) {
        Ok(p) => p,
        Err(diag) => return rejected(Stage::Partition, at(path, diag)),
    };
    if let Some(&d) = program.device.devices.first() {
        if let Err(e) = print_device(&program.device, Some(d)) {
            return rejected(Stage::Partition, e);
        }
    }
    let _ = (
        print_global(&program.global),
        print_lowered(&program.global, &program.lowering),
    );
    let _ = collective_report(&program);

    stage.set(Stage::Cost);
    let topo = Topology::builtin(DEFAULT_TOPOLOGY).expect("the default topology is built in");
    if let Err(e) = cost_report(&program, &topo, None) {
        return rejected(Stage::Cost, e.to_string());
    }

    let Some(f) = module.entry() else {
        return Outcome::Accepted(Stage::Cost);
    };
    let elements: i64 = f
        .values
        .iter()
        .map(|v| v.ty.num_elements().max(0))
        .fold(0i64, |a, n| a.saturating_add(n));
    if program.device.devices.len() > RUN_MAX_DEVICES || elements > RUN_MAX_ELEMENTS {
        return Outcome::Accepted(Stage::Cost);
    }

    stage.set(Stage::Run);
    let types: Vec<_> = f.args.iter().map(|&a| f.ty(a).clone()).collect();
    let inputs = match random_inputs(&types, 1) {
        Ok(i) => i,
        Err(e) => return rejected(Stage::Run, e),
    };
    let entry = f.name.clone();
    let want = match run_function_limited(
        &module,
        &entry,
        &inputs,
        Parallelism::None,
        Some(MAX_LOOP_ITERATIONS),
    ) {
        Ok(w) => w,
        Err(e) => return rejected(Stage::Run, format!("reference: {e}")),
    };
    let exec = match Executor::new(&program.device) {
        Ok(e) => e,
        Err(e) => return rejected(Stage::Run, e.to_string()),
    };
    let opts = ExecOptions {
        max_loop_iterations: Some(MAX_LOOP_ITERATIONS),
        ..ExecOptions::default()
    };
    // Replicas are checked as `run` checks them: a program whose copies of
    // one block differ (a shard_map result replicated over a manual axis
    // it varies along) is refused with `run`'s one-line error.
    let backend = CpuBackend::new();
    let got = match exec
        .place(&backend, &inputs)
        .and_then(|placed| exec.run(&backend, &placed, &opts))
        .and_then(|outs| exec.gather(&backend, outs, true))
    {
        Ok(g) => g,
        Err(e) => return rejected(Stage::Run, e.to_string()),
    };
    let rtol = rtol_for(&module);
    // Rounding is judged against f64 as `run --check` does.
    let judged = match compare_outputs(&got, &want, rtol, || {
        run_in_f64(
            &module,
            &entry,
            &inputs,
            Parallelism::None,
            Some(MAX_LOOP_ITERATIONS),
        )
    }) {
        Ok(j) => j,
        Err(e) => return rejected(Stage::Run, e),
    };
    if let Some((k, m)) = judged.first_failure(&got, &want, rtol) {
        if let Some(pos) = module.funcs.iter().find_map(non_identity_init) {
            // Implementation-defined (see `non_identity_init`): XLA
            // differs from the reference the same way.
            return rejected(
                Stage::Run,
                format!("{pos}: a reduce's init is not its identity: results differ by design"),
            );
        }
        // NaN only counts where the program writes one (random inputs
        // hold none), so an argmax on NaN-free data stays a suspect.
        let nan = module.funcs.iter().any(has_nan_constant);
        let dependent = |f| {
            order_dependent_reduce(f, false)
                .or_else(|| nan.then(|| order_dependent_reduce(f, true)).flatten())
        };
        if let Some(pos) = module.funcs.iter().find_map(dependent) {
            // Implementation-defined too (see `body_laws`): the sharded
            // run combines the elements in another order.
            return rejected(
                Stage::Run,
                format!("{pos}: a reduce's body is not commutative and associative: results differ by design"),
            );
        }
        return Outcome::Bug {
            stage: Stage::Run,
            message: format!("output {k} differs from the unsharded run: {m}"),
        };
    }
    Outcome::Accepted(Stage::Run)
}

/// A diagnostic as the CLI prints it (`FILE:LINE:COL: message`).
fn at(path: &Path, diag: meshrun_compiler::Diagnostic) -> String {
    LoadError::Invalid {
        path: path.to_path_buf(),
        diag,
    }
    .to_string()
}

fn panic_message(payload: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".into()
    }
}

thread_local! {
    /// Whether this thread is inside [`run_case`].
    static IN_CASE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Keep panics inside [`run_case`] off stderr (a campaign reports them as
/// outcomes, with their message, not as one backtrace per case); every
/// other panic (a failing assertion of the caller) is printed as before.
pub fn silence_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !IN_CASE.with(|c| c.get()) {
            previous(info);
        }
    }));
}
