//! Projection between dimension shardings and factor shardings: sub-axis
//! splitting, overflow, non-divisible minor-most factors, and the round
//! trip project → unproject.

use meshrun_compiler::rules::reshape::reshape_rule;
use meshrun_compiler::rules::{
    parse_rule, FactorSharding, OpShardingRule, ProjectionError, ShardingProjection, TensorId,
};
use meshrun_compiler::sharding::{AxisRef, DimSharding, Mesh, MeshRef, TensorSharding};
use proptest::prelude::*;

fn x(name: &str) -> AxisRef {
    AxisRef::full(name)
}

fn sub(name: &str, pre: i64, size: i64) -> AxisRef {
    AxisRef::sub(name, pre, size)
}

fn closed(dims: Vec<Vec<AxisRef>>) -> TensorSharding {
    TensorSharding::new("mesh", dims.into_iter().map(DimSharding::closed).collect())
}

fn mesh_ref() -> MeshRef {
    MeshRef::Symbol("mesh".into())
}

fn reshape(from: &[i64], to: &[i64]) -> OpShardingRule {
    reshape_rule(from, to)
        .expect("valid reshape")
        .expect("non-empty")
}

fn factor(
    axes: Vec<AxisRef>,
    is_closed: bool,
    is_minor_most: bool,
    overflow: Vec<AxisRef>,
) -> FactorSharding {
    FactorSharding {
        axes,
        is_closed,
        is_minor_most,
        overflow_axes: overflow,
    }
}

fn unproject(
    p: &ShardingProjection,
    id: TensorId,
    rule: &OpShardingRule,
    mesh: &Mesh,
) -> TensorSharding {
    p.to_tensor_sharding(id, rule, &mesh_ref(), mesh)
        .expect("unproject")
}

/// SPEC §4 / seed 000: `tensor<8>` on `{"x"}` (x=4) reshaped to `2x4`
/// keeps its data in place as `[{"x":(1)2}, {"x":(2)2}]`.
#[test]
fn seed_example_reshape_splits_axis_into_sub_axes() {
    let mesh = Mesh::new(&[("x", 4)]);
    let rule = reshape(&[8], &[2, 4]);
    assert_eq!(
        rule.to_string(),
        "#sdy.op_sharding_rule<([ij])->([i, j]) {i=2, j=4}>"
    );
    let operand = closed(vec![vec![x("x")]]);
    let mut p = ShardingProjection::build(&rule, &[Some(&operand)], &[None], &mesh, false)
        .expect("projects");
    let op = &p.operands[0].factors;
    assert_eq!(op[&0], factor(vec![sub("x", 1, 2)], true, false, vec![]));
    assert_eq!(op[&1], factor(vec![sub("x", 2, 2)], true, true, vec![]));
    // The result starts open and empty; take the operand's factor shardings.
    assert_eq!(
        p.results[0].factors[&0],
        factor(vec![], false, true, vec![])
    );
    p.results[0].factors = p.operands[0].factors.clone();
    let result = unproject(&p, TensorId::Result(0), &rule, &mesh);
    assert_eq!(result.to_string(), r#"<@mesh, [{"x":(1)2}, {"x":(2)2}]>"#);
    // And the operand projects back to itself.
    assert_eq!(unproject(&p, TensorId::Operand(0), &rule, &mesh), operand);
}

/// The example of Shardy's `sharding_projection.h`: open result factors
/// extended with the operand's axes.
#[test]
fn expanding_open_result_factors_and_merging_back() {
    let mesh = Mesh::new(&[("x", 4), ("y", 2)]);
    let rule = parse_rule("([ij])->([i, j]) {i=2, j=4}").expect("valid");
    let operand = closed(vec![vec![x("x"), x("y")]]);
    let mut p = ShardingProjection::build(&rule, &[Some(&operand)], &[None], &mesh, false)
        .expect("projects");
    assert_eq!(p.operands[0].factors[&0].axes, vec![sub("x", 1, 2)]);
    assert_eq!(p.operands[0].factors[&1].axes, vec![sub("x", 2, 2), x("y")]);
    let gcp = p.greatest_common_prefix_axes(2);
    assert_eq!(gcp, vec![vec![], vec![]], "the open result has nothing yet");
    let changed = p.expand_sharding(0, &[sub("x", 1, 2)]);
    assert_eq!(
        (changed.operands, changed.results),
        (vec![false], vec![true])
    );
    let changed = p.expand_sharding(1, &[sub("x", 2, 2), x("y")]);
    assert!(changed.any());
    let result = unproject(&p, TensorId::Result(0), &rule, &mesh);
    assert_eq!(
        result.to_string(),
        r#"<@mesh, [{"x":(1)2, ?}, {"x":(2)2, "y", ?}]>"#
    );
    assert_eq!(unproject(&p, TensorId::Operand(0), &rule, &mesh), operand);
    assert_eq!(
        p.greatest_common_prefix_axes(2)[1],
        vec![sub("x", 2, 2), x("y")]
    );
}

#[test]
fn compound_factors_on_both_sides_split_and_remerge() {
    // 8x4 -> 2x16: ([ij, k])->([i, jk]) {i=2, j=4, k=4}.
    let mesh = Mesh::new(&[("x", 8), ("y", 4)]);
    let rule = reshape(&[8, 4], &[2, 16]);
    let operand = closed(vec![vec![x("x")], vec![x("y")]]);
    let mut p = ShardingProjection::build(&rule, &[Some(&operand)], &[None], &mesh, false)
        .expect("projects");
    assert_eq!(p.operands[0].factors[&0].axes, vec![sub("x", 1, 2)]);
    assert_eq!(p.operands[0].factors[&1].axes, vec![sub("x", 2, 4)]);
    assert_eq!(p.operands[0].factors[&2].axes, vec![x("y")]);
    p.results[0].factors = p.operands[0].factors.clone();
    let result = unproject(&p, TensorId::Result(0), &rule, &mesh);
    assert_eq!(
        result.to_string(),
        r#"<@mesh, [{"x":(1)2}, {"x":(2)4, "y"}]>"#
    );
}

#[test]
fn a_larger_factor_takes_several_axes_and_a_sub_axis() {
    // 16 -> 8x2 with axes x=2, y=8: i=8 takes x and "y":(1)4, j takes "y":(4)2.
    let mesh = Mesh::new(&[("x", 2), ("y", 8)]);
    let rule = reshape(&[16], &[8, 2]);
    let operand = closed(vec![vec![x("x"), x("y")]]);
    let p = ShardingProjection::build(&rule, &[Some(&operand)], &[None], &mesh, false)
        .expect("projects");
    assert_eq!(p.operands[0].factors[&0].axes, vec![x("x"), sub("y", 1, 4)]);
    assert_eq!(p.operands[0].factors[&1].axes, vec![sub("y", 4, 2)]);
    assert_eq!(unproject(&p, TensorId::Operand(0), &rule, &mesh), operand);
}

#[test]
fn sub_axes_in_the_input_are_split_further() {
    // "x":(2)4 of x=8 over 8 -> 2x4: i gets "x":(2)2, j gets "x":(4)2.
    let mesh = Mesh::new(&[("x", 8)]);
    let rule = reshape(&[8], &[2, 4]);
    let operand = closed(vec![vec![sub("x", 2, 4)]]);
    let p = ShardingProjection::build(&rule, &[Some(&operand)], &[None], &mesh, false)
        .expect("projects");
    assert_eq!(p.operands[0].factors[&0].axes, vec![sub("x", 2, 2)]);
    assert_eq!(p.operands[0].factors[&1].axes, vec![sub("x", 4, 2)]);
    assert_eq!(unproject(&p, TensorId::Operand(0), &rule, &mesh), operand);
}

#[test]
fn coprime_axis_overflows_and_closes_the_next_factor() {
    // 6 -> 3x2 with x=2: i=3 shares nothing with x, so x overflows.
    let mesh = Mesh::new(&[("x", 2)]);
    let rule = reshape(&[6], &[3, 2]);
    let operand = TensorSharding::new("mesh", vec![DimSharding::open(vec![x("x")])]);
    let p = ShardingProjection::build(&rule, &[Some(&operand)], &[None], &mesh, false)
        .expect("projects");
    assert_eq!(
        p.operands[0].factors[&0],
        factor(vec![], false, false, vec![x("x")])
    );
    assert_eq!(
        p.operands[0].factors[&1],
        factor(vec![], true, true, vec![])
    );
    let overflow = p.tensors_with_overflow_axes();
    assert_eq!(
        (overflow.operands, overflow.results),
        (vec![true], vec![false])
    );
    // Projecting back restores the dimension (still open).
    assert_eq!(unproject(&p, TensorId::Operand(0), &rule, &mesh), operand);
}

#[test]
fn overflow_leaves_later_factors_of_the_dimension_out() {
    // 12 -> 3x2x2 with x=2: i overflows, j is closed, k is absent (as in
    // Shardy, which stops recording the dimension's factors).
    let mesh = Mesh::new(&[("x", 2)]);
    let rule = reshape(&[12], &[3, 2, 2]);
    assert_eq!(
        rule.to_string(),
        "#sdy.op_sharding_rule<([ijk])->([i, j, k]) {i=3, j=2, k=2}>"
    );
    let operand = closed(vec![vec![x("x")]]);
    let p = ShardingProjection::build(&rule, &[Some(&operand)], &[None], &mesh, false)
        .expect("projects");
    let f = &p.operands[0].factors;
    assert_eq!(f[&0].overflow_axes, vec![x("x")]);
    assert!(f[&1].is_closed && f[&1].axes.is_empty());
    assert!(!f.contains_key(&2));
    assert_eq!(p.results[0].factors.len(), 3);
    assert_eq!(unproject(&p, TensorId::Operand(0), &rule, &mesh), operand);
}

#[test]
fn partly_fitting_axes_overflow_after_the_fitting_part() {
    // A factor of 4 over axes x=2, y=3: x fits, y overflows.
    let mesh = Mesh::new(&[("x", 2), ("y", 3)]);
    let rule = parse_rule("([ij])->([i, j]) {i=4, j=3}").expect("valid");
    let operand = closed(vec![vec![x("x"), x("y")]]);
    let p = ShardingProjection::build(&rule, &[Some(&operand)], &[None], &mesh, false)
        .expect("projects");
    assert_eq!(
        p.operands[0].factors[&0],
        factor(vec![x("x")], true, false, vec![x("y")])
    );
    assert_eq!(unproject(&p, TensorId::Operand(0), &rule, &mesh), operand);
    assert_eq!(p.operands[0].sharding_size(&mesh), Ok(6));
}

#[test]
fn minor_most_factor_may_be_non_divisible() {
    // 6 -> 2x3 with x=4: i takes "x":(1)2, j (size 3) takes "x":(2)2 and is
    // padded; only the minor-most factor may be.
    let mesh = Mesh::new(&[("x", 4)]);
    let rule = reshape(&[6], &[2, 3]);
    let operand = closed(vec![vec![x("x")]]);
    let mut p = ShardingProjection::build(&rule, &[Some(&operand)], &[None], &mesh, false)
        .expect("projects");
    assert_eq!(p.operands[0].factors[&1].axes, vec![sub("x", 2, 2)]);
    assert_eq!(unproject(&p, TensorId::Operand(0), &rule, &mesh), operand);
    p.results[0].factors = p.operands[0].factors.clone();
    let result = unproject(&p, TensorId::Result(0), &rule, &mesh);
    assert_eq!(result.to_string(), r#"<@mesh, [{"x":(1)2}, {"x":(2)2}]>"#);

    // A single factor of 6 over x=4 is non-divisible but minor-most.
    let identity = OpShardingRule::identity(&[6], 1, 1);
    let p = ShardingProjection::build(&identity, &[Some(&operand)], &[None], &mesh, false)
        .expect("projects");
    assert_eq!(p.operands[0].factors[&0].axes, vec![x("x")]);

    // A non-minor-most factor sharded non-divisibly cannot be projected back.
    let mut bad = ShardingProjection::build(&rule, &[Some(&operand)], &[None], &mesh, false)
        .expect("projects");
    bad.operands[0].factors.get_mut(&0).expect("factor i").axes = vec![x("x")];
    assert_eq!(
        bad.to_tensor_sharding(TensorId::Operand(0), &rule, &mesh_ref(), &mesh),
        Err(ProjectionError::NonDivisibleFactor {
            factor: 0,
            factor_size: 2,
            sharded_size: 4
        })
    );
}

#[test]
fn partly_sharded_major_factor_stops_the_dimension() {
    // Result [ij] with i=4 sharded by x=2 only: j's axes would need a
    // strided view, so projecting back keeps only i's.
    let mesh = Mesh::new(&[("x", 2), ("y", 2)]);
    let rule = parse_rule("([i, j])->([ij]) {i=4, j=2}").expect("valid");
    let mut p = ShardingProjection::build(&rule, &[None], &[None], &mesh, false).expect("projects");
    p.results[0].factors.get_mut(&0).expect("i").axes = vec![x("x")];
    p.results[0].factors.get_mut(&1).expect("j").axes = vec![x("y")];
    let result = unproject(&p, TensorId::Result(0), &rule, &mesh);
    assert_eq!(result.dims[0].axes, vec![x("x")]);
}

#[test]
fn closedness_replicated_and_unreduced_are_kept() {
    let mesh = Mesh::new(&[("x", 2), ("y", 2), ("z", 2)]);
    let rule =
        parse_rule("([i, k], [k, j])->([i, j]) {i=4, j=8, k=16} reduction={k}").expect("valid");
    let lhs = TensorSharding {
        mesh: mesh_ref(),
        dims: vec![
            DimSharding::open(vec![x("x")]),
            DimSharding::closed(vec![x("y")]),
        ],
        replicated: vec![x("z")],
        unreduced: vec![],
        unreduced_op: Default::default(),
    };
    let rhs = TensorSharding {
        mesh: mesh_ref(),
        dims: vec![DimSharding::closed(vec![x("y")]), DimSharding::open(vec![])],
        replicated: vec![],
        unreduced: vec![x("x")],
        unreduced_op: Default::default(),
    };
    let p = ShardingProjection::build(&rule, &[Some(&lhs), Some(&rhs)], &[None], &mesh, true)
        .expect("projects");
    assert!(!p.operands[0].factors[&0].is_closed);
    assert!(p.operands[0].factors[&2].is_closed);
    assert!(
        p.results[0].factors[&0].is_closed,
        "missing result sharding is closed when asked"
    );
    assert_eq!(p.operands[0].replicated, vec![x("z")]);
    assert_eq!(unproject(&p, TensorId::Operand(0), &rule, &mesh), lhs);
    assert_eq!(unproject(&p, TensorId::Operand(1), &rule, &mesh), rhs);
    assert_eq!(
        unproject(&p, TensorId::Result(0), &rule, &mesh),
        TensorSharding::replicated("mesh", 2)
    );
}

#[test]
fn axes_per_factor_projection_is_closed_everywhere() {
    let mesh = Mesh::new(&[("x", 2), ("y", 4)]);
    let rule =
        parse_rule("([i, k], [k, j])->([i, j]) {i=4, j=8, k=16} reduction={k}").expect("valid");
    let p = ShardingProjection::from_axes_per_factor(&[vec![x("x")], vec![], vec![x("y")]], &rule);
    assert!(p
        .tensors()
        .all(|(_, t)| t.factors.values().all(|f| f.is_closed)));
    assert_eq!(
        unproject(&p, TensorId::Operand(0), &rule, &mesh).to_string(),
        r#"<@mesh, [{"x"}, {"y"}]>"#
    );
    assert_eq!(
        unproject(&p, TensorId::Result(0), &rule, &mesh).to_string(),
        r#"<@mesh, [{"x"}, {}]>"#
    );
}

#[test]
fn update_sharding_replaces_axes_and_overflow() {
    let mesh = Mesh::new(&[("x", 2), ("y", 3)]);
    let rule = OpShardingRule::identity(&[4, 6], 1, 1);
    let mut p = ShardingProjection::build(&rule, &[None], &[None], &mesh, false).expect("projects");
    let changed = p.update_sharding(1, &[x("y")], &[]);
    assert_eq!(
        (changed.operands, changed.results),
        (vec![true], vec![true])
    );
    assert!(
        !p.update_sharding(1, &[x("y")], &[]).any(),
        "no change the second time"
    );
    // Expanding needs the old axes to be a strict prefix of the new ones.
    assert!(!p.expand_sharding(1, &[x("x")]).any());
    assert!(p.expand_sharding(1, &[x("y"), x("x")]).any());
}

#[test]
fn projection_of_an_op_uses_its_annotations() {
    use meshrun_compiler::ir::op_rules::rule_for_op;
    use meshrun_compiler::ir::{ElemType, Function, OpKind, TensorType};
    let mesh = Mesh::new(&[("x", 4)]);
    let mut f = Function::new("f", vec![TensorType::new(vec![8], ElemType::F32)]);
    f.arg_attrs[0].sharding = Some(closed(vec![vec![x("x")]]));
    let arg = f.args[0];
    let op = f.push_op(
        OpKind::Reshape(meshrun_compiler::ir::ops::reshape::Reshape),
        vec![arg],
        vec![TensorType::new(vec![2, 4], ElemType::F32)],
    );
    let rule = rule_for_op(&f, op).expect("valid").expect("rule");
    let data = &f.ops[op.index()];
    let annotated = |values: &[meshrun_compiler::ir::Value]| -> Vec<_> {
        values.iter().map(|&v| f.sharding_of(v)).collect()
    };
    let (operands, results) = (annotated(&data.operands), annotated(&data.results));
    let p = ShardingProjection::build(&rule, &operands, &results, &mesh, false).expect("projects");
    assert_eq!(p.operands[0].factors[&0].axes, vec![sub("x", 1, 2)]);
    assert!(p.results[0]
        .factors
        .values()
        .all(|f| f.axes.is_empty() && !f.is_closed));
}

#[test]
fn bad_shardings_are_errors() {
    let mesh = Mesh::new(&[("x", 2)]);
    let rule = OpShardingRule::identity(&[4, 4], 1, 1);
    let rank1 = closed(vec![vec![x("x")]]);
    assert_eq!(
        ShardingProjection::build(&rule, &[Some(&rank1)], &[None], &mesh, false),
        Err(ProjectionError::RankMismatch {
            tensor: TensorId::Operand(0),
            rank: 2,
            sharding_rank: 1
        })
    );
    let unknown = closed(vec![vec![x("q")], vec![]]);
    let err = ShardingProjection::build(&rule, &[Some(&unknown)], &[None], &mesh, false)
        .expect_err("unknown axis");
    assert!(err.to_string().contains("\"q\""), "{err}");
    let d = err.into_diagnostic(meshrun_compiler::SrcPos::new(4, 5));
    assert_eq!(d.kind, meshrun_compiler::DiagKind::Sharding);
    assert!(matches!(
        ShardingProjection::build(&rule, &[], &[None], &mesh, false),
        Err(ProjectionError::TensorCount {
            what: "operand",
            expected: 1,
            got: 0
        })
    ));
}

/// Mesh axes `a`, `b`, `c` of the given sizes.
fn mesh_of(sizes: &[i64]) -> Mesh {
    let names = ["a", "b", "c"];
    let axes: Vec<(&str, i64)> = names.iter().copied().zip(sizes.iter().copied()).collect();
    Mesh::new(&axes)
}

/// Deal the mesh axes (in a shuffled order) to the dimensions: `owner[k]`
/// is the dimension axis `k` shards, or none.
fn sharding_from(
    mesh: &Mesh,
    rank: usize,
    order: &[usize],
    owner: &[Option<usize>],
    open: &[bool],
) -> TensorSharding {
    let mut dims: Vec<DimSharding> = (0..rank)
        .map(|d| DimSharding {
            axes: vec![],
            is_closed: !open[d],
            priority: None,
        })
        .collect();
    for &k in order {
        if let Some(d) = owner[k] {
            dims[d % rank]
                .axes
                .push(AxisRef::full(mesh.axes[k].name.clone()));
        }
    }
    TensorSharding::new("mesh", dims)
}

fn shape_strategy() -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(
        prop::sample::select(vec![1i64, 2, 3, 4, 6, 8, 12, 16]),
        1..4,
    )
}

/// A random factorization of `n` into up to 3 dimensions.
fn reshape_target(n: i64, picks: &[usize]) -> Vec<i64> {
    let mut out = Vec::new();
    let mut left = n;
    for &p in picks {
        let divisors: Vec<i64> = (1..=left).filter(|d| left % d == 0).collect();
        let d = divisors[p % divisors.len()];
        out.push(d);
        left /= d;
    }
    out.push(left);
    out
}

proptest! {
    /// Projecting a sharding onto a reshape's factors and back gives the
    /// same sharding, whatever fits, splits or overflows.
    #[test]
    fn project_then_unproject_is_identity(
        from in shape_strategy(),
        picks in prop::collection::vec(0usize..8, 0..3),
        mesh_sizes in prop::collection::vec(prop::sample::select(vec![2i64, 3, 4, 8]), 1..4),
        order in Just(vec![0usize, 1, 2]).prop_shuffle(),
        owner in prop::collection::vec(prop::option::of(0usize..4), 3),
        open in prop::collection::vec(any::<bool>(), 4),
    ) {
        let to = reshape_target(from.iter().product(), &picks);
        let rule = reshape(&from, &to);
        let mesh = mesh_of(&mesh_sizes);
        let order: Vec<usize> = order.into_iter().filter(|&k| k < mesh_sizes.len()).collect();
        let input = sharding_from(&mesh, from.len(), &order, &owner, &open);
        let output = sharding_from(&mesh, to.len(), &order, &owner, &open);
        let p = ShardingProjection::build(&rule, &[Some(&input)], &[Some(&output)], &mesh, false)
            .expect("valid shardings project");
        prop_assert_eq!(unproject(&p, TensorId::Operand(0), &rule, &mesh), input);
        prop_assert_eq!(unproject(&p, TensorId::Result(0), &rule, &mesh), output);
    }
}
