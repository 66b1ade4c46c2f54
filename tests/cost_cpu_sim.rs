//! `cost::cpu_sim`: the prediction for the CPU backend has every term, one
//! fit per distinct collective grouping of the program, and a total that
//! is their sum. (How close it comes to a measured run is reported by
//! `examples/mlp.rs`, not asserted: timings belong in benchmarks.)

use std::path::Path;

use meshrun::cost::cpu_sim::predict_cpu_step;
use meshrun::load::load_file;
use meshrun::runtime::pipeline::compile;

#[test]
fn the_training_step_prediction_has_every_term() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/jax/mlp_train_step");
    let module = load_file(&dir.join("input.mlir")).unwrap();
    let program = compile(&module).unwrap();
    let p = predict_cpu_step(&program).unwrap();
    assert_eq!(p.devices, 8);
    assert!(p.cores >= 1);
    // The training step all-reduces over "model" (4 groups of 2) and over
    // "data" (2 groups of 4): two groupings, each fitted once.
    let mut shapes: Vec<(usize, usize)> = p
        .fits
        .iter()
        .map(|f| (f.groups.len(), f.groups[0].len()))
        .collect();
    shapes.sort_unstable();
    assert_eq!(shapes, vec![(2, 4), (4, 2)]);
    for f in &p.fits {
        assert!(f.fit.beta_s_per_byte > 0.0 && f.fit.alpha_s >= 0.0, "{f:?}");
    }
    for (what, t) in [
        ("communication", p.communication_s),
        ("compute", p.compute_s),
        ("overhead", p.overhead_s),
        ("dispatch", p.dispatch_s),
    ] {
        assert!(t > 0.0 && t.is_finite(), "{what}: {t}");
    }
    let sum = p.communication_s + p.compute_s + p.overhead_s + p.dispatch_s;
    assert!((p.total_s() - sum).abs() <= 1e-12 * sum);
    assert!(p.core_gflops > 0.0 && p.instr_s > 0.0);
}

#[test]
fn a_program_without_collectives_costs_no_communication() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/jax");
    // Any fixture whose partitioned program moves no data.
    let quiet = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("input.mlir"))
        .filter(|p| p.exists())
        .find_map(|p| {
            let program = compile(&load_file(&p).ok()?).ok()?;
            let silent = program.device.collectives().all(|(c, _)| !c.communicates());
            silent.then_some(program)
        })
        .expect("a fixture without communication");
    let p = predict_cpu_step(&quiet).unwrap();
    assert!(p.fits.is_empty());
    assert_eq!(p.communication_s, 0.0);
}
