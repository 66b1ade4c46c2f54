//! `meshrun._meshrun`: the Rust side of the `meshrun` Python package.
//!
//! Thin on purpose: every function takes the program's text (and the name
//! errors call it by), calls the same library paths as the CLI
//! (`meshrun::plan`, `cost`, `execute`, `check`, `suggest`, `show`) and
//! answers with the CLI's JSON documents and tables as strings, and arrays
//! as `.npy` bytes. The Python package (`python/meshrun/`) turns those into
//! dataclasses, numpy arrays, pytrees and `NamedSharding`s. Every call
//! releases the GIL while it works, so other Python threads (and other
//! meshrun calls) run meanwhile. Bad input raises `meshrun.Error` (a
//! `ValueError`) with the CLI's one-line message.

use std::path::Path;

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use serde_json::{json, Value};

use meshrun::bench_comm::size::parse_memory_cap;
use meshrun::check::{check_outputs, mismatch_message};
use meshrun::compiler::propagation::PropagationOptions;
use meshrun::compiler::text::print_module;
use meshrun::compiler::Module;
use meshrun::cost::memory::memory_per_device;
use meshrun::cost::render::{annotate_json, render_table};
use meshrun::cost::{cost_report, Topology};
use meshrun::execute::{check_inputs, main_input_types, run_sharded};
use meshrun::load::load_str;
use meshrun::plan::{partition_file, plan_json, plan_text};
use meshrun::runtime::compare::rtol_for;
use meshrun::runtime::npy;
use meshrun::runtime::CpuBackend;
use meshrun::suggest::output::{render_json, render_text};
use meshrun::suggest::search::{Progress, ProgressSink, SearchOptions};
use meshrun::suggest::{parse_mesh, suggest as run_suggest, SuggestOptions};

create_exception!(
    meshrun,
    Error,
    PyValueError,
    "Bad input to meshrun; the message is the CLI's one line."
);

/// `Err` as `meshrun.Error` with the whole chain on one line, as the CLI
/// prints it after `error: `.
fn py_err(e: anyhow::Error) -> PyErr {
    Error::new_err(format!("{e:#}"))
}

fn load(text: &str, name: &str) -> anyhow::Result<Module> {
    Ok(load_str(Path::new(name), text)?)
}

fn propagation(conservative: bool) -> PropagationOptions {
    PropagationOptions {
        conservative,
        ..PropagationOptions::default()
    }
}

fn to_json(v: &Value) -> String {
    // A `Value` always serializes.
    serde_json::to_string(v).unwrap_or_default()
}

/// The plan: `partition --json`'s document with meshes, argument and
/// result shardings and memory (`meshrun::plan::plan_json`), plus `table`
/// (the text for people).
#[pyfunction]
#[pyo3(signature = (text, name, propagate = true, conservative = false))]
fn compile(
    py: Python<'_>,
    text: &str,
    name: &str,
    propagate: bool,
    conservative: bool,
) -> PyResult<String> {
    py.detach(|| {
        let module = load(text, name)?;
        let opts = propagation(conservative);
        let program = partition_file(Path::new(name), &module, propagate.then_some(&opts))?;
        let memory = memory_per_device(&program.device);
        let mut doc = plan_json(&program, &memory);
        if let Value::Object(o) = &mut doc {
            o.insert("table".into(), json!(plan_text(&program, &memory)));
        }
        Ok(to_json(&doc))
    })
    .map_err(py_err)
}

/// `cost --json`'s document plus `table` (what `cost` prints).
#[pyfunction]
#[pyo3(signature = (text, name, topology, peak_tflops = None, topology_json = None, memory_per_device = None))]
fn cost(
    py: Python<'_>,
    text: &str,
    name: &str,
    topology: &str,
    peak_tflops: Option<f64>,
    topology_json: Option<&str>,
    memory_per_device: Option<&str>,
) -> PyResult<String> {
    py.detach(|| {
        let memory_cap = memory_per_device
            .map(|s| parse_memory_cap("memory_per_device", s).map_err(anyhow::Error::msg))
            .transpose()?;
        if let Some(p) = peak_tflops {
            if !(p.is_finite() && p > 0.0) {
                anyhow::bail!("peak_tflops: {p} is not a positive number of TFLOP/s");
            }
        }
        let topo = match topology_json {
            Some(j) => Topology::from_json(j, "the topology dict")?,
            None => Topology::resolve(topology)?,
        };
        let module = load(text, name)?;
        topo.check_module_fits(&module)
            .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let program = partition_file(Path::new(name), &module, Some(&propagation(false)))?;
        let mut report = cost_report(&program, &topo, peak_tflops)?;
        report.memory_cap = memory_cap;
        let mut doc = plan_json(&program, &report.memory);
        annotate_json(&mut doc, &report);
        if let Value::Object(o) = &mut doc {
            o.insert("table".into(), json!(render_table(&report, name)));
        }
        Ok(to_json(&doc))
    })
    .map_err(py_err)
}

/// Run on simulated CPU devices. `inputs`: one `.npy` file's bytes per
/// argument of `@main`. Returns the outputs as `.npy` bytes and a JSON
/// report (devices, times, and with `check` every output's difference
/// from the unsharded run); a difference beyond tolerance raises.
#[pyfunction]
#[pyo3(signature = (text, name, inputs, check = false, rtol = None, repeat = 1, conservative = false))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    text: &str,
    name: &str,
    inputs: Vec<Vec<u8>>,
    check: bool,
    rtol: Option<f64>,
    repeat: usize,
    conservative: bool,
) -> PyResult<(Vec<Bound<'py, PyBytes>>, String)> {
    let (outputs, report) = py
        .detach(|| -> anyhow::Result<(Vec<Vec<u8>>, Value)> {
            if let Some(r) = rtol {
                if !(r.is_finite() && r > 0.0) {
                    anyhow::bail!("rtol: {r} is not a positive number");
                }
            }
            let file = Path::new(name);
            let module = load(text, name)?;
            let backend = CpuBackend::new();
            let (ran, given) = run_sharded(
                &backend,
                file,
                &module,
                &propagation(conservative),
                repeat,
                check,
                |module| {
                    let types = main_input_types(file, module)?;
                    let tensors = inputs
                        .iter()
                        .enumerate()
                        .map(|(k, b)| npy::decode(b).map_err(|e| anyhow::anyhow!("input {k}: {e}")))
                        .collect::<anyhow::Result<Vec<_>>>()?;
                    check_inputs(&types, &tensors)?;
                    Ok(tensors)
                },
            )?;
            let rtol = rtol.unwrap_or_else(|| rtol_for(&module));
            let mut report = json!({
                "devices": ran.devices,
                "backend": "cpu",
                "times_ms": ran.times_ms,
            });
            if check {
                let judged = check_outputs(&module, &given, &ran.outputs, Some(rtol))?;
                if let Some(message) = mismatch_message(&module, &judged, rtol) {
                    anyhow::bail!("{message}");
                }
                let diffs: Vec<Value> = judged
                    .diffs
                    .iter()
                    .map(|c| json!({"max_abs_diff": c.max_abs, "max_rel_diff": c.max_rel}))
                    .collect();
                report["check"] = json!({"rtol": rtol, "outputs": diffs});
            }
            let bytes = ran
                .outputs
                .iter()
                .enumerate()
                .map(|(k, t)| npy::encode(t).map_err(|e| anyhow::anyhow!("output {k}: {e}")))
                .collect::<anyhow::Result<Vec<_>>>()?;
            Ok((bytes, report))
        })
        .map_err(py_err)?;
    let outputs = outputs.iter().map(|b| PyBytes::new(py, b)).collect();
    Ok((outputs, to_json(&report)))
}

/// `suggest --json`'s document plus `table` (what `suggest` prints) and
/// `module` (the program with the suggested shardings).
#[pyfunction]
#[pyo3(signature = (text, name, topology, mesh = None, memory_per_device = None, keep_given = false, top = 3, topology_json = None, progress = None))]
#[allow(clippy::too_many_arguments)]
fn suggest(
    py: Python<'_>,
    text: &str,
    name: &str,
    topology: &str,
    mesh: Option<&str>,
    memory_per_device: Option<&str>,
    keep_given: bool,
    top: usize,
    topology_json: Option<&str>,
    progress: Option<Py<PyAny>>,
) -> PyResult<String> {
    // `progress(step, steps, evaluated)` is called after every round of the
    // search, taking the GIL for the call only.
    let sink = match progress {
        Some(f) => ProgressSink::new(move |p: Progress| {
            Python::attach(|py| {
                // A failing callback must not stop the search: its error
                // is printed, as Python prints errors of callbacks.
                if let Err(e) = f.call1(py, (p.step, p.steps, p.evaluated)) {
                    e.print(py);
                }
            })
        }),
        None => ProgressSink::default(),
    };
    py.detach(|| {
        let mesh = mesh.map(parse_mesh).transpose()?;
        let memory_per_device = memory_per_device
            .map(|s| parse_memory_cap("memory_per_device", s).map_err(anyhow::Error::msg))
            .transpose()?;
        let topology = match topology_json {
            Some(j) => Topology::from_json(j, "the topology dict")?,
            None => Topology::resolve(topology)?,
        };
        let module = load(text, name)?;
        let opts = SuggestOptions {
            mesh,
            topology,
            memory_per_device,
            keep_given,
            top,
            search: SearchOptions {
                progress: sink,
                ..SearchOptions::default()
            },
        };
        let s = run_suggest(&module, &opts).map_err(|e| anyhow::anyhow!("{name}: suggest: {e}"))?;
        let mut doc = render_json(&s);
        if let Value::Object(o) = &mut doc {
            o.insert("table".into(), json!(render_text(&s, name)));
            o.insert("module".into(), json!(print_module(&s.annotated_module())));
        }
        Ok(to_json(&doc))
    })
    .map_err(py_err)
}

/// What `meshrun show` prints (`propagated`: after propagation, as
/// `show --propagated`).
#[pyfunction]
#[pyo3(signature = (text, name, all = false, propagated = true))]
fn show(py: Python<'_>, text: &str, name: &str, all: bool, propagated: bool) -> PyResult<String> {
    py.detach(|| {
        let mut module = load(text, name)?;
        if propagated {
            module = meshrun::compiler::propagation::propagate(&module, &propagation(false))
                .map_err(|diag| meshrun::load::LoadError::Invalid {
                    path: Path::new(name).to_path_buf(),
                    diag,
                })?;
        }
        Ok(meshrun::show::show_module(&module, all))
    })
    .map_err(py_err)
}

/// The types of `@main`'s arguments and results:
/// `{"arguments": [{"shape", "dtype"}], "results": [...]}`.
#[pyfunction]
fn signature(py: Python<'_>, text: &str, name: &str) -> PyResult<String> {
    py.detach(|| {
        let module = load(text, name)?;
        let main = module
            .func("main")
            .ok_or_else(|| anyhow::anyhow!("{name}: the module has no function @main"))?;
        let ty = |t: &meshrun::compiler::ir::TensorType| json!({"shape": t.shape, "dtype": t.elem.name()});
        let args: Vec<Value> = main.args.iter().map(|&a| ty(main.ty(a))).collect();
        let results: Vec<Value> = main.result_types.iter().map(ty).collect();
        Ok(to_json(&json!({"arguments": args, "results": results})))
    })
    .map_err(py_err)
}

/// The names of the built-in topologies.
#[pyfunction]
fn topologies() -> Vec<&'static str> {
    Topology::builtin_names()
}

#[pymodule]
fn _meshrun(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("Error", m.py().get_type::<Error>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_function(wrap_pyfunction!(cost, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(suggest, m)?)?;
    m.add_function(wrap_pyfunction!(show, m)?)?;
    m.add_function(wrap_pyfunction!(topologies, m)?)?;
    m.add_function(wrap_pyfunction!(signature, m)?)?;
    Ok(())
}
