//! How the executor runs a program (type checks, injected test faults,
//! a loop limit), below both the executor and the reference interpreters,
//! which stop loops at the same iteration.

/// A test hook: make one device fail at one instruction, with an error or
/// a panic, to check that a failing device fails the whole run promptly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InjectedFault {
    pub device: i64,
    pub instr: usize,
    pub panic: bool,
}

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct ExecOptions {
    /// Do not check each result's type against the program's local type.
    /// The check is cheap and turns a wrong block shape into an error at
    /// the instruction that made it, so it is on by default.
    pub skip_type_checks: bool,
    /// See [`InjectedFault`]; `None` outside tests.
    pub fault: Option<InjectedFault>,
    /// Stop a `while` loop that has run this many iterations with an
    /// error instead of running on (`None`: no limit, as XLA). Every device
    /// evaluates the same predicate, so all stop at the same iteration.
    /// The fuzzer sets it: a mutated program may never terminate.
    pub max_loop_iterations: Option<u64>,
}

/// Count one more iteration of a `while` loop, or say why the run stops:
/// the loop already ran `max` iterations (see
/// [`ExecOptions::max_loop_iterations`]). The executor and both reference
/// interpreters count with it, so they stop at the same iteration.
pub(crate) fn count_loop_iteration(iterations: &mut u64, max: Option<u64>) -> Result<(), String> {
    if max.is_some_and(|max| *iterations >= max) {
        return Err(format!(
            "the loop ran {iterations} iterations, the limit set for this run"
        ));
    }
    *iterations += 1;
    Ok(())
}
