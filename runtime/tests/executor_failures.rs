//! A device that fails makes the whole run fail quickly with that device's
//! error: no hang (the others are woken from their collectives), no abort
//! (panics are caught). Bad inputs and malformed programs are errors
//! before anything runs.

use std::path::Path;
use std::time::{Duration, Instant};

use meshrun_compiler::partition::{Instr, PartitionedProgram};
use meshrun_compiler::text::parse_module;
use meshrun_kernels::HostTensor;
use meshrun_runtime::backend::{Backend, Device, DeviceError, Participation};
use meshrun_runtime::executor::InjectedFault;
use meshrun_runtime::npy::read_npy;
use meshrun_runtime::pipeline::{compile, with_source};
use meshrun_runtime::{CpuBackend, ExecOptions, Executor, RuntimeError};

fn mlp() -> (PartitionedProgram, Vec<HostTensor>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/jax/mlp_forward");
    let text = std::fs::read_to_string(dir.join("input.mlir")).unwrap();
    let module = parse_module(&text).unwrap();
    let inputs = (0..7)
        .map(|i| read_npy(&dir.join(format!("in_{i}.npy"))).unwrap())
        .collect();
    (compile(&module).unwrap(), inputs)
}

fn first_collective(p: &PartitionedProgram) -> usize {
    p.device
        .instrs
        .iter()
        .position(|i| matches!(i, Instr::Collective { .. }))
        .expect("the MLP has collectives")
}

fn run_with_fault(fault: InjectedFault) -> (RuntimeError, Duration) {
    let (program, inputs) = mlp();
    let exec = Executor::new(&program.device).unwrap();
    let opts = ExecOptions {
        fault: Some(fault),
        ..ExecOptions::default()
    };
    let start = Instant::now();
    let err = exec
        .run_global(&CpuBackend::new(), &inputs, &opts)
        .expect_err("an injected fault fails the run");
    (err, start.elapsed())
}

#[test]
fn a_device_error_fails_the_run_with_that_devices_error() {
    let (program, _) = mlp();
    // Device 3 fails right at the first collective, where the others wait
    // for it; then at the very first and the last instruction.
    let last = program.device.instrs.len() - 1;
    for instr in [first_collective(&program), 0, last] {
        let (err, took) = run_with_fault(InjectedFault {
            device: 3,
            instr,
            panic: false,
        });
        match &err {
            RuntimeError::Instruction {
                device, instr: i, ..
            } => {
                assert_eq!((*device, *i), (3, instr), "{err}");
            }
            other => panic!("expected device 3's error, got {other}"),
        }
        assert!(err.to_string().contains("injected fault"), "{err}");
        assert!(took < Duration::from_secs(5), "took {took:?}");
        // The error can name the source op the instruction comes from.
        let located = with_source(&program, err).to_string();
        assert!(located.contains(", from stablehlo."), "{located}");
    }
}

#[test]
fn a_device_panic_is_caught_and_reported() {
    let (program, _) = mlp();
    let (err, took) = run_with_fault(InjectedFault {
        device: 6,
        instr: first_collective(&program),
        panic: true,
    });
    match &err {
        RuntimeError::DevicePanic { device, message } => {
            assert_eq!(*device, 6);
            assert!(message.contains("injected fault"), "{message}");
        }
        other => panic!("expected device 6's panic, got {other}"),
    }
    assert!(took < Duration::from_secs(5), "took {took:?}");
}

#[test]
fn waiting_members_wake_when_a_peer_fails() {
    use meshrun_compiler::ir::{ElemType, TensorType};
    use meshrun_compiler::partition::reshard::collective::{Collective, CollectiveKind};
    use meshrun_compiler::sharding::TensorSharding;
    let backend = CpuBackend::new();
    let c = Collective {
        kind: CollectiveKind::AllReduce,
        axes: Vec::new(),
        dim_axes: vec![Vec::new()],
        dim_factors: vec![1],
        all_to_all: None,
        reduction: Some(meshrun_compiler::ir::ReduceKind::Add),
        groups: vec![vec![0, 1, 2, 3]],
        in_sharding: TensorSharding::replicated("m", 1),
        out_sharding: TensorSharding::replicated("m", 1),
        global_shape: vec![4],
        in_local_shape: vec![4],
        out_local_shape: vec![4],
        elem: ElemType::F32,
    };
    let ty = TensorType::new(vec![4], ElemType::F32);
    let start = Instant::now();
    let body = |dev: &mut <CpuBackend as Backend>::Device| -> Result<(), RuntimeError> {
        let d = dev.id();
        if d == 2 {
            std::thread::sleep(Duration::from_millis(100));
            return Err(RuntimeError::Program("device 2 gave up".into()));
        }
        let x = backend.upload(d, HostTensor::from_vec(&[4], vec![1.0f32; 4]).unwrap())?;
        let part = Participation::Group {
            group: 0,
            rank: d as usize,
            members: &c.groups[0],
        };
        match dev.collective(0, &c, part, &x, &ty) {
            Err(DeviceError::PeerFailed(2)) => Err(RuntimeError::Aborted {
                device: d,
                failed: 2,
            }),
            other => {
                panic!("device {d}: expected to be woken by device 2's failure, got {other:?}")
            }
        }
    };
    let err = backend.run_spmd(&[0, 1, 2, 3], &body).unwrap_err();
    assert_eq!(err.to_string(), "device 2 gave up");
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[test]
fn bad_inputs_are_errors_before_running() {
    let (program, inputs) = mlp();
    let exec = Executor::new(&program.device).unwrap();
    let backend = CpuBackend::new();
    let opts = ExecOptions::default();
    let err = exec
        .run_global(&backend, &inputs[..6], &opts)
        .expect_err("too few inputs");
    assert!(
        matches!(
            err,
            RuntimeError::InputCount {
                expected: 7,
                got: 6,
                ..
            }
        ),
        "{err}"
    );
    let mut swapped = inputs.clone();
    swapped.swap(0, 1);
    let err = exec
        .run_global(&backend, &swapped, &opts)
        .expect_err("wrong shapes");
    assert!(
        matches!(err, RuntimeError::InputMismatch { index: 0, .. }),
        "{err}"
    );
    let mut as_f16 = inputs.clone();
    as_f16[2] = inputs[2]
        .convert(meshrun_compiler::ir::ElemType::F16)
        .unwrap();
    let err = exec.run_global(&backend, &as_f16, &opts).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("input 2: expected tensor<64xf32>"),
        "{err}"
    );
}

#[test]
fn malformed_programs_are_refused_up_front() {
    let (program, _) = mlp();
    let k = first_collective(&program);
    let mut broken = program.device.clone();
    if let Instr::Collective { collective, .. } = &mut broken.instrs[k] {
        collective.groups.pop();
    }
    let err = Executor::new(&broken).err().expect("a device in no group");
    assert!(err.to_string().contains("is in no group"), "{err}");
    // The last instruction moved first reads values not yet computed.
    let mut broken = program.device.clone();
    let last = broken.instrs.len() - 1;
    broken.instrs.swap(0, last);
    let err = Executor::new(&broken).err().expect("use before definition");
    assert!(err.to_string().contains("before it is defined"), "{err}");
}
