//! Shardy's rule notation: parse and print round-trip, and the printed form
//! is byte-for-byte what Shardy prints (the long strings below were printed
//! by Shardy's own `OpShardingRuleAttr` printer, from jaxlib 0.10.2).

use meshrun_compiler::rules::{
    factor_symbol, parse_rule, DimMapping, FactorKind, OpShardingRule, TensorMapping,
};
use meshrun_compiler::{DiagKind, SrcPos};

fn round_trip(text: &str) {
    let rule = parse_rule(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(rule.to_string(), text);
    assert_eq!(parse_rule(&rule.to_string()).as_ref(), Ok(&rule));
}

#[test]
fn printed_rules_parse_back_to_the_same_text() {
    for text in [
        "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=16, j=128}>",
        "#sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=16, j=256, k=128} reduction={k}>",
        "#sdy.op_sharding_rule<([], [])->([])>",
        "#sdy.op_sharding_rule<([])->([i, j]) {i=8, j=16}>",
        "#sdy.op_sharding_rule<([ij, k])->([i, jk]) {i=2, j=4, k=4}>",
        "#sdy.op_sharding_rule<([ij, mn])->([ik, ln]) {i=2, j=3, k=2, l=3, m=2, n=2}>",
        "#sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=16, j=16} need_replication={i}>",
        "#sdy.op_sharding_rule<([i, j], [])->([i, j]) {i=8, j=16} permutation={i, j}>",
        "#sdy.op_sharding_rule<([i, j], [i, j], [], [])->([j], [j]) {i=8, j=16} reduction={i}>",
        "#sdy.op_sharding_rule<([i])->([i]) {i=4} blocked_propagation={i}>",
        "#sdy.op_sharding_rule<([i, j, k], [i, j, k])->([i, j, k]) {i=2, j=0, k=4}>",
        "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=16, j=32}, custom>",
        "#sdy.op_sharding_rule<([i, j, k, l])->([i, k, l]) {i=2, j=3, k=5, l=7} reduction={j} need_replication={i, l} permutation={k}, custom>",
        "#sdy.op_sharding_rule<([i, j, k, l, m, n, o, p, q, r, s, t, u, v, w, x, y, z, z_1, z_2])->([i, j, k, l, m, n, o, p, q, r, s, t, u, v, w, x, y, zz_1, z_2]) {i=2, j=2, k=2, l=2, m=2, n=2, o=2, p=2, q=2, r=2, s=2, t=2, u=2, v=2, w=2, x=2, y=2, z=2, z_1=2, z_2=2}>",
    ] {
        round_trip(text);
    }
}

/// A rule with 30 factors and every optional part, built in Rust and
/// compared with the text Shardy's printer gives for the same rule.
#[test]
fn symbols_past_z_and_every_list_print_like_shardy() {
    let n = 30;
    let mut rule = OpShardingRule {
        factor_sizes: vec![2; n],
        factor_kinds: vec![FactorKind::PassThrough; n],
        blocked_propagation: vec![false; n],
        operands: vec![
            TensorMapping::new((0..n - 2).map(|f| DimMapping::new(vec![f])).collect()),
            TensorMapping::default(),
        ],
        results: vec![TensorMapping::new(vec![DimMapping::new(vec![
            n - 2,
            n - 1,
        ])])],
        is_custom: true,
    };
    rule.factor_kinds[0] = FactorKind::Reduction;
    rule.factor_kinds[1] = FactorKind::NeedReplication;
    rule.factor_kinds[2] = FactorKind::NeedReplication;
    rule.factor_kinds[3] = FactorKind::Permutation;
    rule.blocked_propagation[4] = true;
    rule.blocked_propagation[5] = true;
    let shardy = "#sdy.op_sharding_rule<([i, j, k, l, m, n, o, p, q, r, s, t, u, v, w, x, y, z, z_1, z_2, z_3, z_4, z_5, z_6, z_7, z_8, z_9, z_10], [])->([z_11z_12]) {i=2, j=2, k=2, l=2, m=2, n=2, o=2, p=2, q=2, r=2, s=2, t=2, u=2, v=2, w=2, x=2, y=2, z=2, z_1=2, z_2=2, z_3=2, z_4=2, z_5=2, z_6=2, z_7=2, z_8=2, z_9=2, z_10=2, z_11=2, z_12=2} reduction={i} need_replication={j, k} permutation={l} blocked_propagation={m, n}, custom>";
    assert_eq!(rule.to_string(), shardy);
    assert_eq!(parse_rule(shardy), Ok(rule));
    assert_eq!(factor_symbol(17), "z");
    assert_eq!(factor_symbol(18), "z_1");
}

#[test]
fn bare_and_spaced_forms_parse() {
    let expected = parse_rule(
        "#sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=2, j=3, k=4} reduction={k}>",
    )
    .expect("valid");
    for text in [
        "([i, k], [k, j])->([i, j]) {i=2, j=3, k=4} reduction={k}",
        "<([i, k], [k, j])->([i, j]) {i=2, j=3, k=4} reduction={k}>",
        "  #sdy.op_sharding_rule< ( [ i , k ] ,[k,j] ) -> ( [i, j] ) { i = 2 , j=3, k=4 }  reduction = { k } >  ",
        "([i, k], [k, j])->([i, j]) {k=4, i=2, j=3} reduction={k}",
    ] {
        assert_eq!(parse_rule(text).as_ref(), Ok(&expected), "{text}");
    }
}

#[test]
fn parsed_rule_knows_kinds_and_mappings() {
    let r = parse_rule(
        "#sdy.op_sharding_rule<([ij, k], [])->([i, jk]) {i=2, j=4, k=4} permutation={k}>",
    )
    .expect("valid");
    assert_eq!(r.factor_sizes, vec![2, 4, 4]);
    assert_eq!(r.operands[0].dims[0].factors, vec![0, 1]);
    assert!(r.operands[1].is_scalar());
    assert_eq!(r.results[0].dims[1].factors, vec![1, 2]);
    assert!(r.is_permutation(2));
    assert!(r.is_pass_through(0));
    assert!(r.has_compound_dims());
}

#[test]
fn malformed_rules_are_errors_with_positions() {
    for (text, offset) in [
        ("([i])->([i]) {i=2", 17),
        ("([i])->([i]) {i=2, i=3}", 19),
        ("([i])->([i]) {j=2}", 13),
        ("([a])->([i]) {i=2}", 2),
        ("([i])([i]) {i=2}", 5),
        ("([i])->([i]) {i=2} reduction={i} permutation={i}", 33),
        ("([i])->([i]) {i=2} reduction={j}", 19),
        ("([i])->([i]) {i=x}", 16),
        ("([i])->([i]) {i=2} extra", 19),
        ("([z_0])->([i]) {i=2}", 2),
        ("#sdy.op_sharding_rule<([i])->([i]) {i=2}", 40),
    ] {
        let err = parse_rule(text).expect_err(text);
        assert_eq!(err.offset, offset, "{text}: {err}");
    }
    // Errors found after parsing (a dimension using an unknown factor,
    // a factor used twice in one tensor, a negative size) point at the rule.
    for text in [
        "([i])->([j]) {i=2}",
        "([ii])->([i]) {i=2}",
        "([i])->([i]) {i=-1}",
    ] {
        assert!(parse_rule(text).is_err(), "{text}");
    }
}

#[test]
fn notation_errors_become_syntax_diagnostics() {
    let err = parse_rule("([i])->([i]) {i=2").expect_err("unterminated");
    let d = err.into_diagnostic(SrcPos::new(3, 10));
    assert_eq!(d.kind, DiagKind::Syntax);
    assert_eq!((d.pos.line, d.pos.col), (3, 27));
    assert!(d.message.contains("expected"), "{}", d.message);
}
