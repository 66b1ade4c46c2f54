//! Table-driven tests of the StableHLO shape rules in `ir::infer`: for each
//! op kind, operands that give an exact result type and operands that must
//! be rejected with a message saying why.

use meshrun_compiler::ir::infer::{
    check_call, check_result_types, infer_broadcast_in_dim, infer_constant, infer_convert,
    infer_iota, infer_reshape, infer_result_types, is_inferable,
};
use meshrun_compiler::ir::ops::call::Call;
use meshrun_compiler::ir::ops::constant::Constant;
use meshrun_compiler::ir::ops::dot_general::DotGeneral;
use meshrun_compiler::ir::ops::reduce::Reduce;
use meshrun_compiler::ir::ops::{clamp::Clamp, compare::Compare, select::Select};
use meshrun_compiler::ir::{
    BinaryOp, CompareDirection, CompareType, DenseLiteral, DotDims, ElemType, OpKind, ReduceKind,
    Scalar, TensorType, UnaryOp,
};
use meshrun_compiler::{DimSharding, TensorSharding};

use meshrun_compiler::ir::ops::reshard::Reshard;
use meshrun_compiler::ir::ops::sharding_constraint::ShardingConstraint;
use meshrun_compiler::ir::ops::sharding_group::ShardingGroup;
use ElemType::{BF16, F16, F32, I1, I32, I8, U32};

fn t(shape: &[i64], elem: ElemType) -> TensorType {
    TensorType::new(shape.to_vec(), elem)
}

fn s(elem: ElemType) -> TensorType {
    TensorType::scalar(elem)
}

/// What a case must produce.
enum Want {
    Types(Vec<TensorType>),
    /// An error whose message contains this text.
    Err(&'static str),
}

fn ok(ty: TensorType) -> Want {
    Want::Types(vec![ty])
}

struct Case {
    name: &'static str,
    kind: OpKind,
    operands: Vec<TensorType>,
    want: Want,
}

fn case(name: &'static str, kind: OpKind, operands: Vec<TensorType>, want: Want) -> Case {
    Case {
        name,
        kind,
        operands,
        want,
    }
}

/// Run every case; report all failures at once.
fn run_infer(cases: Vec<Case>) {
    let mut failures = Vec::new();
    for c in cases {
        let got = infer_result_types(&c.kind, &c.operands);
        match (&c.want, &got) {
            (Want::Types(want), Ok(types)) if want == types => {}
            (Want::Err(sub), Err(msg)) if msg.contains(sub) => {}
            _ => failures.push(format!("{}: got {got:?}", c.name)),
        }
        // Whatever inference accepts, the checker accepts as given results.
        if let Ok(types) = &got {
            if let Err(e) = check_result_types(&c.kind, &c.operands, types) {
                failures.push(format!("{}: check rejects inferred types: {e}", c.name));
            }
        }
    }
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
}

fn dot(lb: &[i64], rb: &[i64], lc: &[i64], rc: &[i64]) -> OpKind {
    OpKind::DotGeneral(DotGeneral {
        dims: DotDims {
            lhs_batch: lb.to_vec(),
            rhs_batch: rb.to_vec(),
            lhs_contract: lc.to_vec(),
            rhs_contract: rc.to_vec(),
        },
        precision: None,
        is_dot: false,
    })
}

#[test]
fn elementwise_unary() {
    use UnaryOp::*;
    run_infer(vec![
        case(
            "tanh f32",
            OpKind::Unary(Tanh),
            vec![t(&[4, 8], F32)],
            ok(t(&[4, 8], F32)),
        ),
        case(
            "exp bf16 scalar",
            OpKind::Unary(Exp),
            vec![s(BF16)],
            ok(s(BF16)),
        ),
        case(
            "negate i32",
            OpKind::Unary(Negate),
            vec![t(&[3], I32)],
            ok(t(&[3], I32)),
        ),
        case(
            "abs i8",
            OpKind::Unary(Abs),
            vec![t(&[3], I8)],
            ok(t(&[3], I8)),
        ),
        case(
            "not i1",
            OpKind::Unary(Not),
            vec![t(&[2], I1)],
            ok(t(&[2], I1)),
        ),
        case(
            "not i32",
            OpKind::Unary(Not),
            vec![t(&[2], I32)],
            ok(t(&[2], I32)),
        ),
        case(
            "is_finite gives i1",
            OpKind::Unary(IsFinite),
            vec![t(&[5, 2], F16)],
            ok(t(&[5, 2], I1)),
        ),
        case(
            "exp of ints",
            OpKind::Unary(Exp),
            vec![t(&[4], I32)],
            Want::Err("operand must have floating-point elements, got tensor<4xi32>"),
        ),
        case(
            "abs of unsigned",
            OpKind::Unary(Abs),
            vec![t(&[4], U32)],
            Want::Err("signed integer or floating-point"),
        ),
        case(
            "negate of i1",
            OpKind::Unary(Negate),
            vec![t(&[4], I1)],
            Want::Err("integer or floating-point"),
        ),
        case(
            "not of float",
            OpKind::Unary(Not),
            vec![t(&[4], F32)],
            Want::Err("boolean (i1) or integer"),
        ),
        case(
            "two operands",
            OpKind::Unary(Sine),
            vec![t(&[4], F32), t(&[4], F32)],
            Want::Err("expects 1 operand, got 2"),
        ),
        case(
            "negative dim",
            OpKind::Unary(Sine),
            vec![t(&[-4], F32)],
            Want::Err("negative size -4"),
        ),
    ]);
}

#[test]
fn elementwise_binary_and_compare() {
    use BinaryOp::*;
    let cmp = |ct| {
        OpKind::Compare(Compare {
            direction: CompareDirection::Lt,
            compare_type: ct,
        })
    };
    run_infer(vec![
        case(
            "add",
            OpKind::Binary(Add),
            vec![t(&[16, 128], F32), t(&[16, 128], F32)],
            ok(t(&[16, 128], F32)),
        ),
        case(
            "add i1 is or",
            OpKind::Binary(Add),
            vec![s(I1), s(I1)],
            ok(s(I1)),
        ),
        case(
            "and i1",
            OpKind::Binary(And),
            vec![t(&[2], I1), t(&[2], I1)],
            ok(t(&[2], I1)),
        ),
        case(
            "remainder i32",
            OpKind::Binary(Remainder),
            vec![t(&[2], I32), t(&[2], I32)],
            ok(t(&[2], I32)),
        ),
        case(
            "shape mismatch",
            OpKind::Binary(Multiply),
            vec![t(&[4, 8], F32), t(&[8, 4], F32)],
            Want::Err("rhs has type tensor<8x4xf32> but lhs has type tensor<4x8xf32>"),
        ),
        case(
            "no implicit scalar broadcast",
            OpKind::Binary(Add),
            vec![t(&[4], F32), s(F32)],
            Want::Err("they must be equal"),
        ),
        case(
            "elem mismatch",
            OpKind::Binary(Add),
            vec![t(&[4], F32), t(&[4], BF16)],
            Want::Err("must be equal"),
        ),
        case(
            "and of floats",
            OpKind::Binary(And),
            vec![t(&[4], F32), t(&[4], F32)],
            Want::Err("operands must have boolean (i1) or integer elements"),
        ),
        case(
            "subtract of i1",
            OpKind::Binary(Subtract),
            vec![t(&[4], I1), t(&[4], I1)],
            Want::Err("integer or floating-point"),
        ),
        case(
            "one operand",
            OpKind::Binary(Add),
            vec![t(&[4], F32)],
            Want::Err("expects 2 operands, got 1"),
        ),
        case(
            "compare gives i1",
            cmp(Some(CompareType::Float)),
            vec![t(&[8, 16], F32), t(&[8, 16], F32)],
            ok(t(&[8, 16], I1)),
        ),
        case(
            "compare without type",
            cmp(None),
            vec![s(I32), s(I32)],
            ok(s(I1)),
        ),
        case(
            "compare i1 unsigned",
            cmp(Some(CompareType::Unsigned)),
            vec![s(I1), s(I1)],
            ok(s(I1)),
        ),
        case(
            "compare float as signed",
            cmp(Some(CompareType::Signed)),
            vec![s(F32), s(F32)],
            Want::Err("comparison type SIGNED does not apply to f32 operands"),
        ),
        case(
            "compare shape mismatch",
            cmp(None),
            vec![t(&[2], F32), t(&[3], F32)],
            Want::Err("rhs has type tensor<3xf32>"),
        ),
    ]);
}

#[test]
fn select_and_clamp() {
    run_infer(vec![
        case(
            "select same shape",
            OpKind::Select(Select),
            vec![t(&[8, 16], I1), t(&[8, 16], F32), t(&[8, 16], F32)],
            ok(t(&[8, 16], F32)),
        ),
        case(
            "select scalar pred",
            OpKind::Select(Select),
            vec![s(I1), t(&[8], I32), t(&[8], I32)],
            ok(t(&[8], I32)),
        ),
        case(
            "select float pred",
            OpKind::Select(Select),
            vec![t(&[8], F32), t(&[8], F32), t(&[8], F32)],
            Want::Err("predicate must have element type i1"),
        ),
        case(
            "select pred shape",
            OpKind::Select(Select),
            vec![t(&[4], I1), t(&[8], F32), t(&[8], F32)],
            Want::Err("must be a scalar or have the shape of on_true"),
        ),
        case(
            "select branch types",
            OpKind::Select(Select),
            vec![s(I1), t(&[8], F32), t(&[8], F16)],
            Want::Err("on_false has type tensor<8xf16> but on_true has type tensor<8xf32>"),
        ),
        case(
            "clamp scalar bounds",
            OpKind::Clamp(Clamp),
            vec![s(F32), t(&[8, 16], F32), s(F32)],
            ok(t(&[8, 16], F32)),
        ),
        case(
            "clamp full bounds",
            OpKind::Clamp(Clamp),
            vec![t(&[8], F32), t(&[8], F32), t(&[8], F32)],
            ok(t(&[8], F32)),
        ),
        case(
            "clamp bound shape",
            OpKind::Clamp(Clamp),
            vec![t(&[4], F32), t(&[8], F32), s(F32)],
            Want::Err("min tensor<4xf32> must be a scalar or have the shape of the operand"),
        ),
        case(
            "clamp bound elem",
            OpKind::Clamp(Clamp),
            vec![s(F32), t(&[8], F32), s(F16)],
            Want::Err("max has element type f16 but the operand has f32"),
        ),
    ]);
}

#[test]
fn transpose_concatenate_slice_pad() {
    let slice = |start: &[i64], limit: &[i64], strides: &[i64]| {
        OpKind::Slice(meshrun_compiler::ir::ops::slice::Slice {
            start: start.to_vec(),
            limit: limit.to_vec(),
            strides: strides.to_vec(),
        })
    };
    let pad = |low: &[i64], high: &[i64], interior: &[i64]| {
        OpKind::Pad(meshrun_compiler::ir::ops::pad::Pad {
            low: low.to_vec(),
            high: high.to_vec(),
            interior: interior.to_vec(),
        })
    };
    run_infer(vec![
        case(
            "transpose 3d",
            OpKind::Transpose(meshrun_compiler::ir::ops::transpose::Transpose {
                perm: vec![2, 0, 1],
            }),
            vec![t(&[2, 3, 4], F32)],
            ok(t(&[4, 2, 3], F32)),
        ),
        case(
            "transpose repeat",
            OpKind::Transpose(meshrun_compiler::ir::ops::transpose::Transpose { perm: vec![0, 0] }),
            vec![t(&[2, 3], F32)],
            Want::Err("permutation entry 0 appears more than once"),
        ),
        case(
            "transpose out of range",
            OpKind::Transpose(meshrun_compiler::ir::ops::transpose::Transpose { perm: vec![0, 2] }),
            vec![t(&[2, 3], F32)],
            Want::Err("permutation entry 2 is out of range for rank 2"),
        ),
        case(
            "transpose short",
            OpKind::Transpose(meshrun_compiler::ir::ops::transpose::Transpose { perm: vec![0] }),
            vec![t(&[2, 3], F32)],
            Want::Err("has 1 entries but the operand tensor<2x3xf32> has rank 2"),
        ),
        case(
            "concatenate",
            OpKind::Concatenate(meshrun_compiler::ir::ops::concatenate::Concatenate { dim: 1 }),
            vec![t(&[4, 3], F32), t(&[4, 5], F32), t(&[4, 1], F32)],
            ok(t(&[4, 9], F32)),
        ),
        case(
            "concatenate other dim differs",
            OpKind::Concatenate(meshrun_compiler::ir::ops::concatenate::Concatenate { dim: 1 }),
            vec![t(&[4, 3], F32), t(&[2, 5], F32)],
            Want::Err("operand 1 has size 2 in dimension 0 but operand 0 has size 4"),
        ),
        case(
            "concatenate rank differs",
            OpKind::Concatenate(meshrun_compiler::ir::ops::concatenate::Concatenate { dim: 0 }),
            vec![t(&[4, 3], F32), t(&[4], F32)],
            Want::Err("has rank 1 but operand 0"),
        ),
        case(
            "concatenate elem differs",
            OpKind::Concatenate(meshrun_compiler::ir::ops::concatenate::Concatenate { dim: 0 }),
            vec![t(&[4], F32), t(&[4], F16)],
            Want::Err("operand 1 has element type f16"),
        ),
        case(
            "concatenate dim range",
            OpKind::Concatenate(meshrun_compiler::ir::ops::concatenate::Concatenate { dim: 2 }),
            vec![t(&[4, 3], F32)],
            Want::Err("concatenate dimension 2 is out of range for rank 2"),
        ),
        case(
            "concatenate nothing",
            OpKind::Concatenate(meshrun_compiler::ir::ops::concatenate::Concatenate { dim: 0 }),
            vec![],
            Want::Err("at least 1 operand"),
        ),
        case(
            "slice with stride",
            slice(&[0, 1], &[16, 8], &[1, 3]),
            vec![t(&[16, 32], F32)],
            ok(t(&[16, 3], F32)),
        ),
        case(
            "slice empty",
            slice(&[2], &[2], &[1]),
            vec![t(&[4], F32)],
            ok(t(&[0], F32)),
        ),
        case(
            "slice past end",
            slice(&[0, 0], &[16, 33], &[1, 1]),
            vec![t(&[16, 32], F32)],
            Want::Err("dimension 1: limit 33 exceeds the dimension size 32"),
        ),
        case(
            "slice start after limit",
            slice(&[3], &[2], &[1]),
            vec![t(&[4], F32)],
            Want::Err("dimension 0: start 3 is greater than limit 2"),
        ),
        case(
            "slice negative start",
            slice(&[-1], &[2], &[1]),
            vec![t(&[4], F32)],
            Want::Err("start -1 is negative"),
        ),
        case(
            "slice zero stride",
            slice(&[0], &[2], &[0]),
            vec![t(&[4], F32)],
            Want::Err("stride 0 must be at least 1"),
        ),
        case(
            "slice wrong length",
            slice(&[0], &[2], &[1]),
            vec![t(&[4, 4], F32)],
            Want::Err("start_indices has 1 entry but the operand has rank 2"),
        ),
        case(
            "pad",
            pad(&[1, -1], &[2, 0], &[0, 1]),
            vec![t(&[4, 5], F32), s(F32)],
            // 1 + 4 + 2 = 7; -1 + 5 + 4*1 + 0 = 8
            ok(t(&[7, 8], F32)),
        ),
        case(
            "pad zero-size dim with interior",
            pad(&[1], &[1], &[3]),
            vec![t(&[0], F32), s(F32)],
            ok(t(&[2], F32)),
        ),
        case(
            "pad negative interior",
            pad(&[0], &[0], &[-1]),
            vec![t(&[4], F32), s(F32)],
            Want::Err("interior padding -1 is negative"),
        ),
        case(
            "pad crops too much",
            pad(&[-3], &[-2], &[0]),
            vec![t(&[4], F32), s(F32)],
            Want::Err("leaves a negative size -1"),
        ),
        case(
            "pad non-scalar value",
            pad(&[0], &[0], &[0]),
            vec![t(&[4], F32), t(&[1], F32)],
            Want::Err("padding value must be a scalar"),
        ),
        case(
            "pad value elem",
            pad(&[0], &[0], &[0]),
            vec![t(&[4], F32), s(F16)],
            Want::Err("padding value has element type f16"),
        ),
        case(
            "pad overflow",
            pad(&[i64::MAX], &[i64::MAX], &[0]),
            vec![t(&[4], F32), s(F32)],
            Want::Err("padded size overflows"),
        ),
    ]);
}

#[test]
fn dot_general() {
    run_infer(vec![
        case(
            "matmul",
            dot(&[], &[], &[1], &[0]),
            vec![t(&[16, 128], F32), t(&[128, 256], F32)],
            ok(t(&[16, 256], F32)),
        ),
        case(
            "batched, transposed rhs",
            dot(&[0], &[0], &[2], &[2]),
            vec![t(&[4, 8, 32], BF16), t(&[4, 16, 32], BF16)],
            ok(t(&[4, 8, 16], BF16)),
        ),
        case(
            "batch dim not leading",
            dot(&[1], &[2], &[0], &[0]),
            vec![t(&[3, 5, 7], F32), t(&[3, 2, 5], F32)],
            // batch 5, lhs free [7], rhs free [2]
            ok(t(&[5, 7, 2], F32)),
        ),
        case(
            "outer product",
            dot(&[], &[], &[], &[]),
            vec![t(&[3], F32), t(&[4], F32)],
            ok(t(&[3, 4], F32)),
        ),
        case(
            "contracting sizes differ",
            dot(&[], &[], &[1], &[0]),
            vec![t(&[16, 128], F32), t(&[256, 128], F32)],
            Want::Err(
                "contracting dimension sizes differ: lhs dim 1 has size 128, rhs dim 0 has size 256",
            ),
        ),
        case(
            "batch sizes differ",
            dot(&[0], &[0], &[2], &[1]),
            vec![t(&[4, 8, 32], F32), t(&[2, 32, 16], F32)],
            Want::Err("batching dimension sizes differ: lhs dim 0 has size 4, rhs dim 0 has size 2"),
        ),
        case(
            "contracting count differs",
            dot(&[], &[], &[1], &[]),
            vec![t(&[16, 128], F32), t(&[128, 256], F32)],
            Want::Err("lhs has 1 contracting dimension but rhs has 0"),
        ),
        case(
            "dim used twice",
            dot(&[1], &[0], &[1], &[1]),
            vec![t(&[4, 4], F32), t(&[4, 4], F32)],
            Want::Err("lhs dimension (batching or contracting) 1 appears more than once"),
        ),
        case(
            "dim out of range",
            dot(&[], &[], &[2], &[0]),
            vec![t(&[4, 4], F32), t(&[4, 4], F32)],
            Want::Err("lhs contracting dimension 2 is out of range for rank 2"),
        ),
        case(
            "elem types differ",
            dot(&[], &[], &[1], &[0]),
            vec![t(&[4, 4], F32), t(&[4, 4], BF16)],
            Want::Err("operand element types differ: lhs is f32, rhs is bf16"),
        ),
        case(
            "stablehlo.dot vector",
            OpKind::DotGeneral(DotGeneral {
                dims: DotDims::for_dot(2),
                precision: None,
                is_dot: true,
            }),
            vec![t(&[4, 8], F32), t(&[8], F32)],
            ok(t(&[4], F32)),
        ),
        case(
            "stablehlo.dot rank 3",
            OpKind::DotGeneral(DotGeneral {
                dims: DotDims::for_dot(3),
                precision: None,
                is_dot: true,
            }),
            vec![t(&[2, 4, 8], F32), t(&[8, 2], F32)],
            Want::Err("lhs must have rank 1 or 2"),
        ),
    ]);
}

#[test]
fn dot_general_accepts_preferred_element_type() {
    let k = dot(&[], &[], &[1], &[0]);
    let ops = [t(&[4, 8], BF16), t(&[8, 2], BF16)];
    check_result_types(&k, &ops, &[t(&[4, 2], F32)]).unwrap();
    let err = check_result_types(&k, &ops, &[t(&[4, 2], I32)]).unwrap_err();
    assert!(err.contains("give tensor<4x2xbf16>"), "{err}");
    let err = check_result_types(&k, &ops, &[t(&[4, 3], F32)]).unwrap_err();
    assert!(err.contains("has type tensor<4x3xf32>"), "{err}");
}

#[test]
fn reduce() {
    let red = |dims: &[i64], kind, elems: &[ElemType]| {
        OpKind::Reduce(Reduce::with_kind(dims.to_vec(), kind, elems))
    };
    run_infer(vec![
        case(
            "sum rows",
            red(&[1], ReduceKind::Add, &[F32]),
            vec![t(&[16, 128], F32), s(F32)],
            ok(t(&[16], F32)),
        ),
        case(
            "reduce all",
            red(&[0, 2, 1], ReduceKind::Maximum, &[BF16]),
            vec![t(&[2, 3, 4], BF16), s(BF16)],
            ok(s(BF16)),
        ),
        case(
            "variadic",
            red(&[0], ReduceKind::Add, &[F32, I32]),
            vec![t(&[4, 5], F32), t(&[4, 5], I32), s(F32), s(I32)],
            Want::Types(vec![t(&[5], F32), t(&[5], I32)]),
        ),
        case(
            "and over i1",
            red(&[0], ReduceKind::And, &[I1]),
            vec![t(&[4], I1), s(I1)],
            ok(s(I1)),
        ),
        // An ill-typed body is the verifier's to reject, as a function of
        // its own (`ops_defined.rs`: "in its body at ..."); inference reads
        // only its signature.
        case(
            "and over floats",
            red(&[0], ReduceKind::And, &[F32]),
            vec![t(&[4], F32), s(F32)],
            ok(s(F32)),
        ),
        case(
            "body of another type",
            red(&[0], ReduceKind::Add, &[F16]),
            vec![t(&[4], F32), s(F32)],
            Want::Err("the body takes (tensor<f16>, tensor<f16>) but must take (tensor<f32>, tensor<f32>)"),
        ),
        case(
            "init not scalar",
            red(&[0], ReduceKind::Add, &[F32]),
            vec![t(&[4, 5], F32), t(&[5], F32)],
            Want::Err("init value 0 must be a scalar, got tensor<5xf32>"),
        ),
        case(
            "init elem",
            red(&[0], ReduceKind::Add, &[F32]),
            vec![t(&[4, 5], F32), s(F16)],
            Want::Err("init value 0 has element type f16 but input 0 has f32"),
        ),
        case(
            "dim repeated",
            red(&[1, 1], ReduceKind::Add, &[F32]),
            vec![t(&[4, 5], F32), s(F32)],
            Want::Err("reduce dimension 1 appears more than once"),
        ),
        case(
            "dim out of range",
            red(&[2], ReduceKind::Add, &[F32]),
            vec![t(&[4, 5], F32), s(F32)],
            Want::Err("reduce dimension 2 is out of range for rank 2"),
        ),
        case(
            "odd operand count",
            red(&[0], ReduceKind::Add, &[F32]),
            vec![t(&[4], F32)],
            Want::Err("expects N inputs followed by N init values"),
        ),
        case(
            "input shapes differ",
            red(&[0], ReduceKind::Add, &[F32, F32]),
            vec![t(&[4], F32), t(&[5], F32), s(F32), s(F32)],
            Want::Err("input 1 tensor<5xf32> has a different shape than input 0"),
        ),
    ]);
}

#[test]
fn sdy_ops() {
    let sharding = |rank| TensorSharding::new("mesh", vec![DimSharding::open(vec![]); rank]);
    run_infer(vec![
        case(
            "constraint",
            OpKind::ShardingConstraint(ShardingConstraint {
                sharding: sharding(2),
            }),
            vec![t(&[8, 16], F32)],
            ok(t(&[8, 16], F32)),
        ),
        case(
            "reshard rank",
            OpKind::Reshard(Reshard {
                sharding: sharding(1),
            }),
            vec![t(&[8, 16], F32)],
            Want::Err("has 1 dimension shardings but the operand tensor<8x16xf32> has rank 2"),
        ),
        case(
            "sharding group has no results",
            OpKind::ShardingGroup(ShardingGroup { group_id: 0 }),
            vec![t(&[8, 16], F32)],
            Want::Types(vec![]),
        ),
        case(
            "sharding group needs an operand",
            OpKind::ShardingGroup(ShardingGroup { group_id: 0 }),
            vec![],
            Want::Err("expects 1 operand, got 0"),
        ),
    ]);
}

#[test]
fn typed_ops_are_not_inferable() {
    let kinds = [
        OpKind::Convert(meshrun_compiler::ir::ops::convert::Convert),
        OpKind::Reshape(meshrun_compiler::ir::ops::reshape::Reshape),
        OpKind::Iota(meshrun_compiler::ir::ops::iota::Iota { dim: 0 }),
        OpKind::BroadcastInDim(
            meshrun_compiler::ir::ops::broadcast_in_dim::BroadcastInDim { dims: vec![] },
        ),
        OpKind::Constant(Constant::new(DenseLiteral::Splat(Scalar::Float(0.0)))),
        OpKind::Call(Call::new("f")),
    ];
    for k in kinds {
        assert!(!is_inferable(&k), "{k:?}");
        let err = infer_result_types(&k, &[t(&[4], F32)]).unwrap_err();
        assert!(err.contains("given by the program"), "{err}");
    }
    assert!(is_inferable(&OpKind::Select(Select)));
}

#[test]
fn broadcast_in_dim() {
    let x = t(&[1, 4], F32);
    assert_eq!(
        infer_broadcast_in_dim(&x, &[0, 2], &[3, 5, 4]).unwrap(),
        t(&[3, 5, 4], F32)
    );
    // Any order is allowed (a transposing broadcast).
    assert_eq!(
        infer_broadcast_in_dim(&t(&[4, 3], F32), &[1, 0], &[3, 4]).unwrap(),
        t(&[3, 4], F32)
    );
    assert_eq!(
        infer_broadcast_in_dim(&s(F32), &[], &[8, 16]).unwrap(),
        t(&[8, 16], F32)
    );
    let bad = [
        (&[0, 1][..], &[3, 5][..], "result dimension 1 has size 5"),
        (
            &[0, 0],
            &[4, 4],
            "broadcast dimension 0 appears more than once",
        ),
        (
            &[0, 3],
            &[4, 4, 4],
            "broadcast dimension 3 is out of range for rank 3",
        ),
        (&[0], &[4, 4], "dims has 1 entries but the operand"),
        (&[0, 1], &[4, -4], "negative size -4"),
    ];
    for (dims, shape, want) in bad {
        let err = infer_broadcast_in_dim(&x, dims, shape).unwrap_err();
        assert!(err.contains(want), "{dims:?} {shape:?}: {err}");
    }
    let k = OpKind::BroadcastInDim(
        meshrun_compiler::ir::ops::broadcast_in_dim::BroadcastInDim { dims: vec![1] },
    );
    check_result_types(&k, &[t(&[4], F32)], &[t(&[2, 4], F32)]).unwrap();
    let err = check_result_types(&k, &[t(&[4], F32)], &[t(&[2, 4], F16)]).unwrap_err();
    assert!(err.contains("has type tensor<2x4xf16>"), "{err}");
    let err = check_result_types(&k, &[t(&[4], F32)], &[]).unwrap_err();
    assert!(err.contains("expects 1 result, got 0"), "{err}");
}

#[test]
fn reshape_convert_iota_constant() {
    assert_eq!(
        infer_reshape(&t(&[8, 4], F32), &[2, 16]).unwrap(),
        t(&[2, 16], F32)
    );
    let err = infer_reshape(&t(&[8, 4], F32), &[2, 15]).unwrap_err();
    assert!(
        err.contains(
            "cannot reshape tensor<8x4xf32> (32 elements) to tensor<2x15xf32> (30 elements)"
        ),
        "{err}"
    );
    let err = infer_reshape(&t(&[8, 4], F32), &[i64::MAX, 4]).unwrap_err();
    assert!(err.contains("too many"), "{err}");
    let err = check_result_types(
        &OpKind::Reshape(meshrun_compiler::ir::ops::reshape::Reshape),
        &[t(&[8, 4], F32)],
        &[t(&[32], BF16)],
    )
    .unwrap_err();
    assert!(err.contains("tensor<32xbf16>"), "{err}");

    assert_eq!(
        infer_convert(&t(&[16, 32], F32), BF16).unwrap(),
        t(&[16, 32], BF16)
    );
    check_result_types(
        &OpKind::Convert(meshrun_compiler::ir::ops::convert::Convert),
        &[t(&[4], I32)],
        &[t(&[4], F32)],
    )
    .unwrap();
    let err = check_result_types(
        &OpKind::Convert(meshrun_compiler::ir::ops::convert::Convert),
        &[t(&[4], I32)],
        &[t(&[5], F32)],
    )
    .unwrap_err();
    assert!(err.contains("give tensor<4xf32>"), "{err}");

    assert_eq!(infer_iota(1, &t(&[8, 16], I32)).unwrap(), t(&[8, 16], I32));
    assert_eq!(infer_iota(0, &t(&[16], F32)).unwrap(), t(&[16], F32));
    let err = infer_iota(2, &t(&[8, 16], I32)).unwrap_err();
    assert!(
        err.contains("iota dimension 2 is out of range for rank 2"),
        "{err}"
    );
    assert!(infer_iota(0, &s(I32)).is_err());
    assert!(infer_iota(0, &t(&[4], I1)).is_err());
    let err = check_result_types(
        &OpKind::Iota(meshrun_compiler::ir::ops::iota::Iota { dim: 0 }),
        &[t(&[4], I32)],
        &[t(&[4], I32)],
    )
    .unwrap_err();
    assert!(err.contains("expects 0 operands, got 1"), "{err}");

    let splat = DenseLiteral::Splat(Scalar::Float(2.0));
    assert_eq!(
        infer_constant(&splat, &t(&[3, 3], F32)).unwrap(),
        t(&[3, 3], F32)
    );
    let four = DenseLiteral::Elements(vec![Scalar::Float(1.0); 4]);
    assert_eq!(infer_constant(&four, &t(&[4], F32)).unwrap(), t(&[4], F32));
    let err = infer_constant(&four, &t(&[5], F32)).unwrap_err();
    assert!(
        err.contains("literal has 4 values but tensor<5xf32> has 5 elements"),
        "{err}"
    );
    let err = infer_constant(&splat, &s(I32)).unwrap_err();
    assert!(
        err.contains("is a float but the element type is i32"),
        "{err}"
    );
    let err = infer_constant(&DenseLiteral::Splat(Scalar::Int(300)), &s(I8)).unwrap_err();
    assert!(err.contains("(300) is out of range for i8"), "{err}");
    let err = infer_constant(&DenseLiteral::Splat(Scalar::Int(1)), &s(I1)).unwrap_err();
    assert!(
        err.contains("is an integer but the element type is i1"),
        "{err}"
    );
    infer_constant(&DenseLiteral::Splat(Scalar::Bool(true)), &t(&[2], I1)).unwrap();
    infer_constant(&DenseLiteral::Elements(vec![]), &t(&[0, 3], F32)).unwrap();
    let k = OpKind::Constant(Constant::new(splat));
    check_result_types(&k, &[], &[t(&[2], F16)]).unwrap();
    let err = check_result_types(&k, &[], &[t(&[2], F16), t(&[2], F16)]).unwrap_err();
    assert!(err.contains("expects 1 result, got 2"), "{err}");
}

#[test]
fn call_signature() {
    let params = [t(&[8], F32), s(I32)];
    let rets = [t(&[8], F32)];
    check_call("f", &params, &rets, &params, &rets).unwrap();
    let err = check_call("f", &params, &rets, &params[..1], &rets).unwrap_err();
    assert!(
        err.contains("@f has 2 arguments but the call passes 1"),
        "{err}"
    );
    let err = check_call("f", &params, &rets, &[t(&[8], F32), s(F32)], &rets).unwrap_err();
    assert!(
        err.contains("argument 1 of @f has type tensor<i32> but the call passes tensor<f32>"),
        "{err}"
    );
    let err = check_call("f", &params, &rets, &params, &[t(&[8], F16)]).unwrap_err();
    assert!(
        err.contains("result 0 of @f has type tensor<8xf32> but the call expects tensor<8xf16>"),
        "{err}"
    );
    let err = check_result_types(&OpKind::Call(Call::new("f")), &params, &rets).unwrap_err();
    assert!(err.contains("check_call"), "{err}");
}

#[test]
fn check_rejects_wrong_result_count_and_type() {
    let k = OpKind::Binary(BinaryOp::Add);
    let ops = [t(&[4], F32), t(&[4], F32)];
    let err = check_result_types(&k, &ops, &[t(&[4], F16)]).unwrap_err();
    assert_eq!(
        err,
        "result has type tensor<4xf16> but the operands and attributes give tensor<4xf32>"
    );
    let err = check_result_types(&k, &ops, &[]).unwrap_err();
    assert_eq!(err, "expects 1 result, got 0");
    let err = check_result_types(&k, &ops, &[t(&[-1], F32)]).unwrap_err();
    assert!(
        err.contains("result 0 type tensor<-1xf32> has negative size"),
        "{err}"
    );
}
