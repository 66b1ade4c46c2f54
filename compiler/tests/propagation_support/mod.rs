//! Helpers shared by the propagation tests: run a strategy on MLIR text and
//! read shardings back by the names the printer gives values.

#![allow(dead_code)]

use meshrun_compiler::ir::Module;
use meshrun_compiler::propagation::explain::find_slot;
use meshrun_compiler::propagation::values::sharding_of;
use meshrun_compiler::propagation::{propagate, PropagationOptions, Slot, Strategy};
use meshrun_compiler::text::parse_module;
use meshrun_compiler::Diagnostic;

pub fn parse(src: &str) -> Module {
    parse_module(src).unwrap_or_else(|e| panic!("test module does not parse: {e}\n{src}"))
}

/// Propagate `src` with `strategy`; single strategies keep open dimensions
/// (as Shardy's single passes do), `Full` closes everything.
pub fn run(src: &str, strategy: Strategy) -> Result<Module, Diagnostic> {
    let opts = PropagationOptions {
        strategy,
        close: strategy == Strategy::Full,
        ..PropagationOptions::default()
    };
    propagate(&parse(src), &opts)
}

pub fn run_ok(src: &str, strategy: Strategy) -> Module {
    run(src, strategy).unwrap_or_else(|e| panic!("propagation failed: {e}"))
}

/// The sharding of `name` (`%arg0`, `%3`, `result0`) of the entry function,
/// in Shardy's syntax, or `none`.
pub fn sharding(m: &Module, name: &str) -> String {
    let f = m.entry().expect("entry function");
    let slot = find_slot(f, name).unwrap_or_else(|| panic!("no value {name}"));
    let s = match slot {
        Slot::Value(v) => sharding_of(f, v),
        Slot::Result(i) => f.result_attrs[i].sharding.as_ref(),
    };
    s.map_or("none".to_string(), |s| s.to_string())
}

/// Assert the sharding of every `(name, expected)` pair.
pub fn expect(m: &Module, cases: &[(&str, &str)]) {
    let mut wrong = Vec::new();
    for (name, want) in cases {
        let got = sharding(m, name);
        if &got != want {
            wrong.push(format!("{name}: got {got}, want {want}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
