//! Compute FLOPs per device, counted on the device program's local ops, and
//! the compute time at a stated peak.

use std::path::Path;

use meshrun::compiler::ir::ops::dot_general::DotGeneral;
use meshrun::compiler::ir::ops::reduce::Reduce;
use meshrun::compiler::ir::{BinaryOp, DotDims, ElemType, OpKind, ReduceKind, TensorType, UnaryOp};
use meshrun::compiler::partition::partition;
use meshrun::compiler::propagation::{propagate, PropagationOptions};
use meshrun::cost::flops::{count_flops, op_flops};
use meshrun::cost::report::{cost_report, estimate_compute};
use meshrun::cost::Topology;
use meshrun::load::load_file;

fn t(shape: &[i64]) -> TensorType {
    TensorType::new(shape.to_vec(), ElemType::F32)
}

#[test]
fn op_flops_follow_the_counting_rules() {
    // Batched matmul [2,3,4] x [2,4,5] -> [2,3,5]: 2·batch·M·N·K = 2·2·3·5·4.
    let dot = OpKind::DotGeneral(DotGeneral {
        dims: DotDims {
            lhs_batch: vec![0],
            rhs_batch: vec![0],
            lhs_contract: vec![2],
            rhs_contract: vec![1],
        },
        precision: None,
        is_dot: false,
    });
    assert_eq!(
        op_flops(&dot, &[&t(&[2, 3, 4]), &t(&[2, 4, 5])], &[&t(&[2, 3, 5])]),
        240.0
    );
    // Two contracting dims: [3,4,6] x [4,6,5] -> [3,5]: 2·3·5·(4·6).
    let dot2 = OpKind::DotGeneral(DotGeneral {
        dims: DotDims {
            lhs_batch: vec![],
            rhs_batch: vec![],
            lhs_contract: vec![1, 2],
            rhs_contract: vec![0, 1],
        },
        precision: None,
        is_dot: false,
    });
    assert_eq!(
        op_flops(&dot2, &[&t(&[3, 4, 6]), &t(&[4, 6, 5])], &[&t(&[3, 5])]),
        720.0
    );
    // Element-wise: one per element.
    let x = t(&[4, 6]);
    assert_eq!(op_flops(&OpKind::Unary(UnaryOp::Tanh), &[&x], &[&x]), 24.0);
    assert_eq!(
        op_flops(&OpKind::Binary(BinaryOp::Add), &[&x, &x], &[&x]),
        24.0
    );
    // Reduce: one per input element (inputs, then inits).
    let reduce = OpKind::Reduce(Reduce::with_kind(
        vec![1],
        ReduceKind::Add,
        &[ElemType::F32],
    ));
    assert_eq!(op_flops(&reduce, &[&x, &t(&[])], &[&t(&[4])]), 24.0);
    // Data movement: nothing.
    let tr =
        OpKind::Transpose(meshrun_compiler::ir::ops::transpose::Transpose { perm: vec![1, 0] });
    assert_eq!(op_flops(&tr, &[&x], &[&t(&[6, 4])]), 0.0);
    assert_eq!(
        op_flops(
            &OpKind::Reshape(meshrun_compiler::ir::ops::reshape::Reshape),
            &[&x],
            &[&t(&[24])]
        ),
        0.0
    );
}

#[test]
fn the_mlp_forward_device_program_does_the_hand_counted_work() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/jax/mlp_forward/input.mlir");
    let module = load_file(&path).expect("loads");
    let propagated = propagate(&module, &PropagationOptions::default()).expect("propagates");
    let program = partition(&propagated).expect("partitions");
    // Local blocks on data=4 × model=2: x 4x32, hidden 4x32 (64/2).
    // dots: 4x32·32x32 three times (2·4·32·32 = 8192 each) and
    // 4x32·32x16 (4096); element-wise: 2 adds and 3 tanh of 4x32 = 5·128.
    let count = count_flops(&program.device);
    assert_eq!(count.total(), 3.0 * 8192.0 + 4096.0 + 5.0 * 128.0);
    assert_eq!(count.by_dtype.len(), 1);
    assert_eq!(count.by_dtype[0].elem, ElemType::F32);

    // At H100's f32 (TF32) peak, and at a given peak.
    let h100 = Topology::builtin("h100-nvlink-8").expect("h100");
    let c = estimate_compute(&count, &h100, None);
    assert_eq!(c.by_dtype[0].peak_tflops, 494.7);
    assert!((c.seconds - 29312.0 / 494.7e12).abs() < 1e-20);
    let c = estimate_compute(&count, &h100, Some(1.0));
    assert!((c.seconds - 29312.0 / 1e12).abs() < 1e-20);
    assert!(c.peak_overridden);

    // The step is compute plus communication, no overlap.
    let r = cost_report(&program, &h100, None).expect("costs");
    assert!((r.step_seconds - (r.compute.seconds + r.communication_seconds)).abs() < 1e-18);
    assert_eq!(r.compute.flops, 29312.0);
}
