//! The sharding rule of every op kind, as Shardy notation. The expected
//! strings are what JAX 0.10.2 (XLA's Shardy) writes as `sdy.sharding_rule`
//! for the same op and shapes, except where noted (forms XLA canonicalizes
//! away before propagation; there we follow Shardy's registry).

use meshrun_compiler::ir::op_rules::{rule_for_op, rule_for_op_with};
use meshrun_compiler::ir::ops::call::Call;
use meshrun_compiler::ir::ops::constant::Constant;
use meshrun_compiler::ir::ops::dot_general::DotGeneral;
use meshrun_compiler::ir::ops::reduce::Reduce;
use meshrun_compiler::ir::ops::reshard::Reshard;
use meshrun_compiler::ir::ops::sharding_constraint::ShardingConstraint;
use meshrun_compiler::ir::ops::sharding_group::ShardingGroup;
use meshrun_compiler::ir::ops::{clamp::Clamp, compare::Compare, select::Select};
use meshrun_compiler::ir::{
    BinaryOp, CompareDirection, DenseLiteral, DotDims, ElemType, Function, OpId, OpKind,
    ReduceKind, Scalar, TensorType, UnaryOp,
};
use meshrun_compiler::rules::{OpShardingRule, RuleOptions};
use meshrun_compiler::sharding::TensorSharding;
use meshrun_compiler::{DiagKind, Diagnostic};

/// `"8x16"` → `[8, 16]`; `""` is a scalar.
fn shape(s: &str) -> Vec<i64> {
    if s.is_empty() {
        return Vec::new();
    }
    s.split('x')
        .map(|d| d.parse().expect("test shape"))
        .collect()
}

fn f32s(shapes: &[&str]) -> Vec<TensorType> {
    shapes
        .iter()
        .map(|s| TensorType::new(shape(s), ElemType::F32))
        .collect()
}

/// A function whose arguments have `operands` and whose only op is `kind`
/// with `results`.
fn single_op(kind: OpKind, operands: &[&str], results: &[&str]) -> (Function, OpId) {
    let mut f = Function::new("f", f32s(operands));
    let args = f.args.clone();
    let op = f.push_op(kind, args, f32s(results));
    (f, op)
}

fn rule(
    kind: OpKind,
    operands: &[&str],
    results: &[&str],
) -> Result<Option<OpShardingRule>, Diagnostic> {
    let (f, op) = single_op(kind, operands, results);
    rule_for_op(&f, op)
}

fn notation(kind: OpKind, operands: &[&str], results: &[&str]) -> String {
    match rule(kind.clone(), operands, results) {
        Ok(Some(r)) => r.to_string(),
        Ok(None) => "none".into(),
        Err(e) => panic!("{} {operands:?} -> {results:?}: {e}", kind.name()),
    }
}

fn dot(lhs_batch: &[i64], rhs_batch: &[i64], lhs_contract: &[i64], rhs_contract: &[i64]) -> OpKind {
    OpKind::DotGeneral(DotGeneral {
        dims: DotDims {
            lhs_batch: lhs_batch.to_vec(),
            rhs_batch: rhs_batch.to_vec(),
            lhs_contract: lhs_contract.to_vec(),
            rhs_contract: rhs_contract.to_vec(),
        },
        precision: None,
        is_dot: false,
    })
}

fn plain_dot(lhs_rank: usize) -> OpKind {
    OpKind::DotGeneral(DotGeneral {
        dims: DotDims::for_dot(lhs_rank),
        precision: None,
        is_dot: true,
    })
}

#[test]
fn rule_of_every_op_kind() {
    let cases: Vec<(OpKind, &[&str], &[&str], &str)> = vec![
        (
            OpKind::Unary(UnaryOp::Tanh),
            &["16x128"],
            &["16x128"],
            "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=16, j=128}>",
        ),
        (
            OpKind::Unary(UnaryOp::Negate),
            &[""],
            &[""],
            "#sdy.op_sharding_rule<([])->([])>",
        ),
        (
            OpKind::Binary(BinaryOp::Add),
            &["8x16", "8x16"],
            &["8x16"],
            "#sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16}>",
        ),
        (
            OpKind::Binary(BinaryOp::Divide),
            &["", ""],
            &[""],
            "#sdy.op_sharding_rule<([], [])->([])>",
        ),
        (
            OpKind::Binary(BinaryOp::Add),
            &["16x1", "16x1"],
            &["16x1"],
            "#sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=16, j=1}>",
        ),
        (
            OpKind::Binary(BinaryOp::Add),
            &["2x0x4", "2x0x4"],
            &["2x0x4"],
            "#sdy.op_sharding_rule<([i, j, k], [i, j, k])->([i, j, k]) {i=2, j=0, k=4}>",
        ),
        (
            OpKind::Compare(Compare {
                direction: CompareDirection::Gt,
                compare_type: None,
            }),
            &["8x16", "8x16"],
            &["8x16"],
            "#sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=16}>",
        ),
        (
            OpKind::Convert(meshrun_compiler::ir::ops::convert::Convert),
            &["16"],
            &["16"],
            "#sdy.op_sharding_rule<([i])->([i]) {i=16}>",
        ),
        (
            OpKind::Select(Select),
            &["8x16", "8x16", "8x16"],
            &["8x16"],
            "#sdy.op_sharding_rule<([i, j], [i, j], [i, j])->([i, j]) {i=8, j=16}>",
        ),
        // XLA broadcasts a scalar predicate before Shardy runs; Shardy's
        // registry gives the scalar no factor.
        (
            OpKind::Select(Select),
            &["", "8x16", "8x16"],
            &["8x16"],
            "#sdy.op_sharding_rule<([], [i, j], [i, j])->([i, j]) {i=8, j=16}>",
        ),
        (
            OpKind::Clamp(Clamp),
            &["8x16", "8x16", "8x16"],
            &["8x16"],
            "#sdy.op_sharding_rule<([i, j], [i, j], [i, j])->([i, j]) {i=8, j=16}>",
        ),
        // Likewise canonicalized by XLA; Shardy's registry test has this form.
        (
            OpKind::Clamp(Clamp),
            &["", "4x8", ""],
            &["4x8"],
            "#sdy.op_sharding_rule<([], [i, j], [])->([i, j]) {i=4, j=8}>",
        ),
        (
            OpKind::BroadcastInDim(meshrun_compiler::ir::ops::broadcast_in_dim::BroadcastInDim { dims: vec![] }),
            &[""],
            &["8x16"],
            "#sdy.op_sharding_rule<([])->([i, j]) {i=8, j=16}>",
        ),
        (
            OpKind::BroadcastInDim(meshrun_compiler::ir::ops::broadcast_in_dim::BroadcastInDim { dims: vec![1] }),
            &["16"],
            &["8x16"],
            "#sdy.op_sharding_rule<([j])->([i, j]) {i=8, j=16}>",
        ),
        (
            OpKind::BroadcastInDim(meshrun_compiler::ir::ops::broadcast_in_dim::BroadcastInDim { dims: vec![0] }),
            &["8"],
            &["8x4"],
            "#sdy.op_sharding_rule<([i])->([i, j]) {i=8, j=4}>",
        ),
        (
            OpKind::BroadcastInDim(meshrun_compiler::ir::ops::broadcast_in_dim::BroadcastInDim { dims: vec![1, 2] }),
            &["8x1"],
            &["4x8x1"],
            "#sdy.op_sharding_rule<([j, k])->([i, j, k]) {i=4, j=8, k=1}>",
        ),
        (
            OpKind::BroadcastInDim(meshrun_compiler::ir::ops::broadcast_in_dim::BroadcastInDim { dims: vec![0, 1] }),
            &["1x1"],
            &["1x1"],
            "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=1, j=1}>",
        ),
        // A size-1 dimension expanded in place: its own size-1 factor, then
        // the result dimension's (Shardy's registry tests).
        (
            OpKind::BroadcastInDim(meshrun_compiler::ir::ops::broadcast_in_dim::BroadcastInDim { dims: vec![0, 1, 2] }),
            &["2x1x13"],
            &["2x64x13"],
            "#sdy.op_sharding_rule<([i, j, l])->([i, k, l]) {i=2, j=1, k=64, l=13}>",
        ),
        (
            OpKind::BroadcastInDim(meshrun_compiler::ir::ops::broadcast_in_dim::BroadcastInDim { dims: vec![0, 2, 1, 3, 4] }),
            &["2x3x5x1x7"],
            &["2x5x3x11x7x13"],
            "#sdy.op_sharding_rule<([i, k, j, l, n])->([i, j, k, m, n, o]) {i=2, j=5, k=3, l=1, m=11, n=7, o=13}>",
        ),
        (
            OpKind::Transpose(meshrun_compiler::ir::ops::transpose::Transpose { perm: vec![1, 0] }),
            &["16x8"],
            &["8x16"],
            "#sdy.op_sharding_rule<([j, i])->([i, j]) {i=8, j=16}>",
        ),
        (
            OpKind::Transpose(meshrun_compiler::ir::ops::transpose::Transpose { perm: vec![3, 0, 2, 1] }),
            &["2x3x4x5"],
            &["5x2x4x3"],
            "#sdy.op_sharding_rule<([j, l, k, i])->([i, j, k, l]) {i=5, j=2, k=4, l=3}>",
        ),
        (
            plain_dot(2),
            &["16x128", "128x256"],
            &["16x256"],
            "#sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=16, j=256, k=128} reduction={k}>",
        ),
        (
            plain_dot(1),
            &["16", "16x32"],
            &["32"],
            "#sdy.op_sharding_rule<([j], [j, i])->([i]) {i=32, j=16} reduction={j}>",
        ),
        (
            plain_dot(2),
            &["16x32", "32"],
            &["16"],
            "#sdy.op_sharding_rule<([i, j], [j])->([i]) {i=16, j=32} reduction={j}>",
        ),
        (
            plain_dot(1),
            &["32", "32"],
            &[""],
            "#sdy.op_sharding_rule<([i], [i])->([]) {i=32} reduction={i}>",
        ),
        (
            dot(&[0], &[0], &[2], &[1]),
            &["4x8x16", "4x16x32"],
            &["4x8x32"],
            "#sdy.op_sharding_rule<([i, j, l], [i, l, k])->([i, j, k]) {i=4, j=8, k=32, l=16} reduction={l}>",
        ),
        (
            dot(&[1, 0], &[2, 3], &[3], &[0]),
            &["2x3x4x5", "5x7x3x2"],
            &["3x2x4x7"],
            "#sdy.op_sharding_rule<([j, i, k, m], [m, l, i, j])->([i, j, k, l]) {i=3, j=2, k=4, l=7, m=5} reduction={m}>",
        ),
        (
            dot(&[], &[], &[2, 0, 3], &[0, 2, 3]),
            &["2x3x4x5", "4x7x2x5"],
            &["3x7"],
            "#sdy.op_sharding_rule<([l, i, k, m], [k, j, l, m])->([i, j]) {i=3, j=7, k=4, l=2, m=5} reduction={k, l, m}>",
        ),
        (
            dot(&[], &[], &[0], &[0]),
            &["16x64", "16x32"],
            &["64x32"],
            "#sdy.op_sharding_rule<([k, i], [k, j])->([i, j]) {i=64, j=32, k=16} reduction={k}>",
        ),
        (
            OpKind::Reduce(Reduce::with_kind(vec![1], ReduceKind::Add, &[ElemType::F32])),
            &["16x32", ""],
            &["16"],
            "#sdy.op_sharding_rule<([i, j], [])->([i]) {i=16, j=32} reduction={j}>",
        ),
        (
            OpKind::Reduce(Reduce::with_kind(vec![0, 1], ReduceKind::Add, &[ElemType::F32])),
            &["16x32", ""],
            &[""],
            "#sdy.op_sharding_rule<([i, j], [])->([]) {i=16, j=32} reduction={i, j}>",
        ),
        (
            OpKind::Reduce(Reduce::with_kind(vec![2, 0], ReduceKind::Maximum, &[ElemType::F32])),
            &["2x3x4x5", ""],
            &["3x5"],
            "#sdy.op_sharding_rule<([i, j, k, l], [])->([j, l]) {i=2, j=3, k=4, l=5} reduction={i, k}>",
        ),
        (
            OpKind::Reduce(Reduce::with_kind(
                vec![0],
                ReduceKind::Add,
                &[ElemType::F32, ElemType::F32],
            )),
            &["8x16", "8x16", "", ""],
            &["16", "16"],
            "#sdy.op_sharding_rule<([i, j], [i, j], [], [])->([j], [j]) {i=8, j=16} reduction={i}>",
        ),
        (
            OpKind::Concatenate(meshrun_compiler::ir::ops::concatenate::Concatenate { dim: 0 }),
            &["8x16", "4x16"],
            &["12x16"],
            "#sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=12, j=16} need_replication={i}>",
        ),
        (
            OpKind::Concatenate(meshrun_compiler::ir::ops::concatenate::Concatenate { dim: 1 }),
            &["4x1x256", "4x1x256", "4x1x256"],
            &["4x3x256"],
            "#sdy.op_sharding_rule<([i, j, k], [i, j, k], [i, j, k])->([i, j, k]) {i=4, j=3, k=256} need_replication={j}>",
        ),
        (
            OpKind::Slice(meshrun_compiler::ir::ops::slice::Slice {
                start: vec![2, 0],
                limit: vec![6, 16],
                strides: vec![1, 1],
            }),
            &["8x16"],
            &["4x16"],
            "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16} permutation={i}>",
        ),
        (
            OpKind::Slice(meshrun_compiler::ir::ops::slice::Slice {
                start: vec![0, 0],
                limit: vec![8, 16],
                strides: vec![2, 2],
            }),
            &["8x16"],
            &["4x8"],
            "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16} permutation={i, j}>",
        ),
        (
            OpKind::Pad(meshrun_compiler::ir::ops::pad::Pad {
                low: vec![1, 2],
                high: vec![2, 3],
                interior: vec![0, 0],
            }),
            &["8x16", ""],
            &["11x21"],
            "#sdy.op_sharding_rule<([i, j], [])->([i, j]) {i=8, j=16} permutation={i, j}>",
        ),
        (
            OpKind::Pad(meshrun_compiler::ir::ops::pad::Pad {
                low: vec![0, -1],
                high: vec![0, -1],
                interior: vec![0, 0],
            }),
            &["16x8", ""],
            &["16x6"],
            "#sdy.op_sharding_rule<([i, j], [])->([i, j]) {i=16, j=8} permutation={j}>",
        ),
        (
            OpKind::ShardingConstraint(ShardingConstraint {
                sharding: TensorSharding::open("mesh", 2),
            }),
            &["8x16"],
            &["8x16"],
            "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>",
        ),
        (OpKind::Iota(meshrun_compiler::ir::ops::iota::Iota { dim: 0 }), &[], &["16"], "none"),
        (OpKind::Constant(Constant::new(DenseLiteral::Splat(Scalar::Float(0.0)))), &[], &[""], "none"),
        (
            OpKind::Reshard(Reshard {
                sharding: TensorSharding::replicated("mesh", 2),
            }),
            &["8x16"],
            &["8x16"],
            "none",
        ),
        (OpKind::ShardingGroup(ShardingGroup { group_id: 0 }), &["8x16"], &[], "none"),
        (OpKind::Call(Call::new("g")), &["8x16"], &["8x16"], "none"),
    ];
    for (kind, operands, results, expected) in cases {
        assert_eq!(
            notation(kind.clone(), operands, results),
            expected,
            "{} {operands:?} -> {results:?}",
            kind.name()
        );
    }
}

#[test]
fn every_binary_and_unary_op_is_pointwise() {
    for &u in UnaryOp::ALL {
        assert_eq!(
            notation(OpKind::Unary(u), &["4x2"], &["4x2"]),
            "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=4, j=2}>"
        );
    }
    for &b in BinaryOp::ALL {
        assert_eq!(
            notation(OpKind::Binary(b), &["3", "3"], &["3"]),
            "#sdy.op_sharding_rule<([i], [i])->([i]) {i=3}>"
        );
    }
}

#[test]
fn conservative_mode_blocks_changed_dims() {
    let conservative = RuleOptions { conservative: true };
    let (f, op) = single_op(
        OpKind::Concatenate(meshrun_compiler::ir::ops::concatenate::Concatenate { dim: 0 }),
        &["8x16", "4x16"],
        &["12x16"],
    );
    let r = rule_for_op_with(&f, op, conservative)
        .expect("valid")
        .expect("rule");
    assert_eq!(
        r.to_string(),
        "#sdy.op_sharding_rule<([j, i], [k, i])->([l, i]) {i=16, j=1, k=1, l=1}>"
    );
    let slice = OpKind::Slice(meshrun_compiler::ir::ops::slice::Slice {
        start: vec![2, 0],
        limit: vec![6, 16],
        strides: vec![1, 1],
    });
    let (f, op) = single_op(slice, &["8x16"], &["4x16"]);
    let r = rule_for_op_with(&f, op, conservative)
        .expect("valid")
        .expect("rule");
    // Shardy's registry (op_sharding_rule_registry_conservative.mlir): the
    // sliced dimension keeps its permutation factor, blocked.
    assert_eq!(
        r.to_string(),
        "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16} permutation={i} blocked_propagation={i}>"
    );
    let pad = OpKind::Pad(meshrun_compiler::ir::ops::pad::Pad {
        low: vec![0, 1],
        high: vec![0, -1],
        interior: vec![0, 0],
    });
    let (f, op) = single_op(pad, &["8x16", ""], &["8x16"]);
    let r = rule_for_op_with(&f, op, conservative)
        .expect("valid")
        .expect("rule");
    // Sizes that match are pass-through even where padding shifts them.
    assert_eq!(
        r.to_string(),
        "#sdy.op_sharding_rule<([i, j], [])->([i, j]) {i=8, j=16}>"
    );
    let pad = OpKind::Pad(meshrun_compiler::ir::ops::pad::Pad {
        low: vec![1, 0],
        high: vec![1, 0],
        interior: vec![0, 0],
    });
    let (f, op) = single_op(pad, &["8x16", ""], &["10x16"]);
    let r = rule_for_op_with(&f, op, conservative)
        .expect("valid")
        .expect("rule");
    assert_eq!(
        r.to_string(),
        "#sdy.op_sharding_rule<([i, j], [])->([i, j]) {i=8, j=16} permutation={i} blocked_propagation={i}>"
    );
}

/// Reshape factorizations; every expected string is what JAX 0.10.2 wrote
/// for the same reshape.
#[test]
fn reshape_factorization_table() {
    let table: &[(&str, &str, &str)] = &[
        ("8x4", "2x16", "([ij, k])->([i, jk]) {i=2, j=4, k=4}"),
        ("2x4x32", "8x32", "([i, j, k])->([ij, k]) {i=2, j=4, k=32}"),
        ("8x32", "2x4x32", "([ij, k])->([i, j, k]) {i=2, j=4, k=32}"),
        ("8", "2x4", "([ij])->([i, j]) {i=2, j=4}"),
        (
            "6x4",
            "4x6",
            "([ij, mn])->([ik, ln]) {i=2, j=3, k=2, l=3, m=2, n=2}",
        ),
        (
            "4x6",
            "6x4",
            "([ij, ln])->([ik, mn]) {i=2, j=2, k=3, l=3, m=2, n=2}",
        ),
        ("7x3", "21", "([i, j])->([ij]) {i=7, j=3}"),
        ("21", "7x3", "([ij])->([i, j]) {i=7, j=3}"),
        (
            "6x10",
            "4x15",
            "([ij, mn])->([ik, ln]) {i=2, j=3, k=2, l=3, m=2, n=5}",
        ),
        ("2x1x4", "8", "([i, j, k])->([ik]) {i=2, j=1, k=4}"),
        ("1", "1x1", "([i])->([j, k]) {i=1, j=1, k=1}"),
        ("1x1", "1", "([i, j])->([k]) {i=1, j=1, k=1}"),
        ("1x8", "8x1", "([i, j])->([j, k]) {i=1, j=8, k=1}"),
        (
            "16x1x4",
            "4x1x16",
            "([ik, l, m])->([i, j, km]) {i=4, j=1, k=4, l=1, m=4}",
        ),
        ("4x8x1", "4x8", "([i, j, k])->([i, j]) {i=4, j=8, k=1}"),
        ("1x1x4", "4", "([i, j, k])->([k]) {i=1, j=1, k=4}"),
        (
            "3x4",
            "2x6",
            "([i, lm])->([j, km]) {i=3, j=2, k=3, l=2, m=2}",
        ),
        (
            "5x6",
            "3x10",
            "([i, lm])->([j, km]) {i=5, j=3, k=5, l=3, m=2}",
        ),
        (
            "12x10",
            "8x15",
            "([ij, mn])->([ik, ln]) {i=4, j=3, k=2, l=3, m=2, n=5}",
        ),
        (
            "2x3x4",
            "4x6",
            "([i, j, mn])->([ik, ln]) {i=2, j=3, k=2, l=3, m=2, n=2}",
        ),
        (
            "4x6",
            "2x3x4",
            "([ij, ln])->([i, k, mn]) {i=2, j=2, k=3, l=3, m=2, n=2}",
        ),
        ("6", "2x3", "([ij])->([i, j]) {i=2, j=3}"),
        ("6x7", "7x6", "([i, k])->([j, l]) {i=6, j=7, k=7, l=6}"),
        (
            "9x4",
            "6x6",
            "([ij, mn])->([ik, ln]) {i=3, j=3, k=2, l=3, m=2, n=2}",
        ),
        (
            "10x9",
            "6x15",
            "([ij, mn])->([ik, ln]) {i=2, j=5, k=3, l=5, m=3, n=3}",
        ),
        (
            "2x3x5",
            "5x6",
            "([i, k, m])->([j, l]) {i=2, j=5, k=3, l=6, m=5}",
        ),
        ("12", "3x4", "([ij])->([i, j]) {i=3, j=4}"),
        ("4x3", "2x6", "([ij, k])->([i, jk]) {i=2, j=2, k=3}"),
        ("24", "2x3x4", "([ijk])->([i, j, k]) {i=2, j=3, k=4}"),
        (
            "8x9",
            "12x6",
            "([ij, ln])->([ik, mn]) {i=4, j=2, k=3, l=3, m=2, n=3}",
        ),
        (
            "4x8x32",
            "4x8x4x8",
            "([i, j, kl])->([i, j, k, l]) {i=4, j=8, k=4, l=8}",
        ),
    ];
    for (from, to, expected) in table {
        assert_eq!(
            notation(
                OpKind::Reshape(meshrun_compiler::ir::ops::reshape::Reshape),
                &[from],
                &[to]
            ),
            format!("#sdy.op_sharding_rule<{expected}>"),
            "reshape {from} -> {to}"
        );
    }
}

#[test]
fn empty_reshape_has_no_rule() {
    assert_eq!(
        notation(
            OpKind::Reshape(meshrun_compiler::ir::ops::reshape::Reshape),
            &["0x4"],
            &["4x0"]
        ),
        "none"
    );
}

#[test]
fn malformed_ops_give_type_diagnostics() {
    let bad: Vec<(OpKind, &[&str], &[&str])> = vec![
        (
            OpKind::Reshape(meshrun_compiler::ir::ops::reshape::Reshape),
            &["8"],
            &["3x3"],
        ),
        (
            OpKind::Transpose(meshrun_compiler::ir::ops::transpose::Transpose { perm: vec![0, 0] }),
            &["2x2"],
            &["2x2"],
        ),
        (
            OpKind::Transpose(meshrun_compiler::ir::ops::transpose::Transpose { perm: vec![1, 0] }),
            &["2x3"],
            &["2x3"],
        ),
        (
            OpKind::BroadcastInDim(
                meshrun_compiler::ir::ops::broadcast_in_dim::BroadcastInDim { dims: vec![5] },
            ),
            &["4"],
            &["4x4"],
        ),
        (
            OpKind::BroadcastInDim(
                meshrun_compiler::ir::ops::broadcast_in_dim::BroadcastInDim { dims: vec![0] },
            ),
            &["3"],
            &["4"],
        ),
        (dot(&[], &[], &[1], &[0]), &["4x8", "7x2"], &["4x2"]),
        (dot(&[], &[], &[9], &[0]), &["4x8", "8x2"], &["4x2"]),
        (dot(&[], &[], &[1], &[0]), &["4x8", "8x2"], &["4x2x1"]),
        (
            OpKind::Reduce(Reduce::with_kind(
                vec![3],
                ReduceKind::Add,
                &[ElemType::F32],
            )),
            &["4x8", ""],
            &["4"],
        ),
        (
            OpKind::Reduce(Reduce::with_kind(
                vec![1],
                ReduceKind::Add,
                &[ElemType::F32],
            )),
            &["4x8"],
            &["4"],
        ),
        (
            OpKind::Concatenate(meshrun_compiler::ir::ops::concatenate::Concatenate { dim: 2 }),
            &["4x8", "4x8"],
            &["8x8"],
        ),
        (
            OpKind::Concatenate(meshrun_compiler::ir::ops::concatenate::Concatenate { dim: 0 }),
            &["4x8", "4x7"],
            &["8x8"],
        ),
        (OpKind::Binary(BinaryOp::Add), &["4x8", "8x4"], &["4x8"]),
        (OpKind::Select(Select), &["4x8", "4x8"], &["4x8"]),
        (
            OpKind::Slice(meshrun_compiler::ir::ops::slice::Slice {
                start: vec![0],
                limit: vec![2],
                strides: vec![1],
            }),
            &["4x8"],
            &["2"],
        ),
    ];
    for (kind, operands, results) in bad {
        match rule(kind.clone(), operands, results) {
            Err(d) => {
                assert_eq!(d.kind, DiagKind::Type, "{}: {}", kind.name(), d.message);
                assert!(d.message.starts_with(&kind.name()), "{}", d.message);
            }
            Ok(r) => panic!("{} {operands:?} -> {results:?} gave {r:?}", kind.name()),
        }
    }
}

#[test]
fn unknown_op_id_is_a_diagnostic() {
    let (f, _) = single_op(
        OpKind::Convert(meshrun_compiler::ir::ops::convert::Convert),
        &["4"],
        &["4"],
    );
    let err = rule_for_op(&f, OpId(7)).expect_err("no op 7");
    assert_eq!(err.kind, DiagKind::UndefinedName);
}

#[test]
fn rule_helpers_describe_the_factors() {
    let r = rule(
        dot(&[0], &[0], &[2], &[1]),
        &["4x8x16", "4x16x32"],
        &["4x8x32"],
    )
    .expect("valid")
    .expect("rule");
    assert_eq!(r.num_factors(), 4);
    assert!(r.is_batching_factor(0));
    assert!(!r.is_batching_factor(1), "lhs free dim is not in the rhs");
    assert!(r.is_reduction(3));
    assert_eq!(
        r.factors_of_kind(meshrun_compiler::rules::FactorKind::Reduction),
        vec![3]
    );
    use meshrun_compiler::rules::TensorId;
    let with_k: Vec<_> = r.tensors_with_factor(3).collect();
    assert_eq!(
        with_k,
        vec![(TensorId::Operand(0), 2), (TensorId::Operand(1), 1)]
    );
    assert_eq!(r.tensor(2), r.results.first());
    assert_eq!(r.tensor_id(2), TensorId::Result(0));
    assert!(!r.has_compound_dims());
}
