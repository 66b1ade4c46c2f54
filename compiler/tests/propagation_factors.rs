//! Table-driven tests of the strategy core on factor shardings alone (no
//! IR): each case is a projection (tensors × factors, as in the tables of
//! the propagation design doc), a direction, and what basic and
//! aggressive propagation make of it.

use std::collections::BTreeMap;

use meshrun_compiler::propagation::factor_aggressive::propagate_aggressive;
use meshrun_compiler::propagation::factor_basic::propagate_basic;
use meshrun_compiler::propagation::Direction;
use meshrun_compiler::rules::{FactorSharding, ShardingProjection, TensorFactorShardings};
use meshrun_compiler::sharding::{AxisRef, Mesh};

/// One cell: a factor's axes in one tensor. `"x:1:2"` is `"x":(1)2`.
#[derive(Clone, Copy)]
struct Cell {
    factor: usize,
    axes: &'static [&'static str],
    closed: bool,
}

fn open(factor: usize, axes: &'static [&'static str]) -> Cell {
    Cell {
        factor,
        axes,
        closed: false,
    }
}

fn closed(factor: usize, axes: &'static [&'static str]) -> Cell {
    Cell {
        factor,
        axes,
        closed: true,
    }
}

fn axis(s: &str) -> AxisRef {
    let parts: Vec<&str> = s.split(':').collect();
    match parts.as_slice() {
        [name] => AxisRef::full(*name),
        [name, pre, size] => AxisRef::sub(*name, pre.parse().unwrap(), size.parse().unwrap()),
        _ => panic!("bad axis {s}"),
    }
}

fn tensor(cells: &[Cell], replicated: &[&str]) -> TensorFactorShardings {
    let mut factors = BTreeMap::new();
    for c in cells {
        factors.insert(
            c.factor,
            FactorSharding {
                axes: c.axes.iter().map(|a| axis(a)).collect(),
                is_closed: c.closed,
                is_minor_most: true,
                overflow_axes: Vec::new(),
            },
        );
    }
    TensorFactorShardings {
        factors,
        replicated: replicated.iter().map(|a| axis(a)).collect(),
        unreduced: Vec::new(),
        unreduced_op: Default::default(),
    }
}

/// The axes of every factor of every tensor, as strings.
fn table(p: &ShardingProjection) -> Vec<Vec<(usize, Vec<String>)>> {
    p.tensors()
        .map(|(_, t)| {
            t.factors
                .iter()
                .map(|(&f, fs)| (f, fs.axes.iter().map(|a| a.to_string()).collect()))
                .collect()
        })
        .collect()
}

fn expected(rows: &[&[(usize, &[&str])]]) -> Vec<Vec<(usize, Vec<String>)>> {
    rows.iter()
        .map(|row| {
            row.iter()
                .map(|(f, axes)| (*f, axes.iter().map(|a| format!("\"{a}\"")).collect()))
                .collect()
        })
        .collect()
}

struct Case {
    name: &'static str,
    operands: Vec<TensorFactorShardings>,
    results: Vec<TensorFactorShardings>,
    sizes: &'static [i64],
    direction: Direction,
    elementwise: bool,
    basic: Vec<Vec<(usize, Vec<String>)>>,
    aggressive: Vec<Vec<(usize, Vec<String>)>>,
}

fn mesh() -> Mesh {
    Mesh::new(&[
        ("a", 2),
        ("b", 2),
        ("c", 2),
        ("d", 2),
        ("e", 2),
        ("f", 2),
        ("g", 2),
        ("x", 4),
        ("y", 2),
    ])
}

fn run(case: &Case) {
    let mesh = mesh();
    let dir = |_: usize| case.direction;
    let fresh = || ShardingProjection {
        operands: case.operands.clone(),
        results: case.results.clone(),
    };
    let mut p = fresh();
    propagate_basic(&mut p, &dir, case.sizes, &mesh, false).expect("known axes");
    assert_eq!(table(&p), case.basic, "{}: basic", case.name);
    let mut p = fresh();
    propagate_aggressive(&mut p, &dir, case.sizes, &mesh, case.elementwise, false)
        .expect("known axes");
    assert_eq!(table(&p), case.aggressive, "{}: aggressive", case.name);
}

#[test]
fn spec_factor_table_example() {
    // SPEC §5 / the propagation doc: T0 F0:"a", F2:"f"; T1 F0:"a","b",
    // F1:"c","d", F2:"g"; T2 F1:"c","e". F0 gets "a","b" everywhere, F1
    // gets "c" on T0 (T1 and T2 keep theirs), F2 does not move.
    let result = expected(&[
        &[(0, &["a", "b"]), (1, &["c"]), (2, &["f"])],
        &[(0, &["a", "b"]), (1, &["c", "d"]), (2, &["g"])],
        &[(0, &["a", "b"]), (1, &["c", "e"]), (2, &[])],
    ]);
    run(&Case {
        name: "spec table",
        operands: vec![
            tensor(&[open(0, &["a"]), open(1, &[]), open(2, &["f"])], &[]),
            tensor(
                &[open(0, &["a", "b"]), open(1, &["c", "d"]), open(2, &["g"])],
                &[],
            ),
        ],
        results: vec![tensor(
            &[open(0, &[]), open(1, &["c", "e"]), open(2, &[])],
            &[],
        )],
        sizes: &[16, 16, 16],
        direction: Direction::Both,
        elementwise: false,
        basic: result.clone(),
        aggressive: result,
    });
}

#[test]
fn strategy_table() {
    let cases = vec![
        Case {
            // lhs [x] on i, rhs [x] on j: "x" is wanted by two factors.
            // Basic gives up on both; aggressive gives the result "x" on
            // the factor whose source is larger (i, 8x8 lhs over 8x2 rhs).
            name: "matmul conflict",
            operands: vec![
                tensor(&[open(0, &["x"]), open(2, &[])], &[]),
                tensor(&[open(2, &[]), open(1, &["x"])], &[]),
            ],
            results: vec![tensor(&[open(0, &[]), open(1, &[])], &[])],
            sizes: &[8, 2, 8],
            direction: Direction::Both,
            elementwise: false,
            basic: expected(&[
                &[(0, &["x"]), (2, &[])],
                &[(1, &["x"]), (2, &[])],
                &[(0, &[]), (1, &[])],
            ]),
            aggressive: expected(&[
                &[(0, &["x"]), (2, &[])],
                &[(1, &["x"]), (2, &[])],
                &[(0, &["x"]), (1, &[])],
            ]),
        },
        Case {
            name: "explicitly replicated axis blocks",
            operands: vec![tensor(&[open(0, &["x"])], &[])],
            results: vec![
                tensor(&[open(0, &[])], &["x"]),
                tensor(&[open(0, &[])], &[]),
            ],
            sizes: &[8],
            direction: Direction::Both,
            elementwise: false,
            basic: expected(&[&[(0, &["x"])], &[(0, &[])], &[(0, &[])]]),
            // Per tensor: only the replicated one refuses.
            aggressive: expected(&[&[(0, &["x"])], &[(0, &[])], &[(0, &["x"])]]),
        },
        Case {
            name: "closed empty factor blocks basic, not aggressive",
            operands: vec![tensor(&[open(0, &["x"])], &[])],
            results: vec![tensor(&[closed(0, &[])], &[]), tensor(&[open(0, &[])], &[])],
            sizes: &[8],
            direction: Direction::Both,
            elementwise: false,
            basic: expected(&[&[(0, &["x"])], &[(0, &[])], &[(0, &[])]]),
            aggressive: expected(&[&[(0, &["x"])], &[(0, &[])], &[(0, &["x"])]]),
        },
        Case {
            name: "strict prefixes are extended",
            operands: vec![
                tensor(&[open(0, &["x", "y"])], &[]),
                tensor(&[open(0, &["x"])], &[]),
            ],
            results: vec![tensor(&[open(0, &[])], &[])],
            sizes: &[16],
            direction: Direction::Both,
            elementwise: false,
            basic: expected(&[
                &[(0, &["x", "y"])],
                &[(0, &["x", "y"])],
                &[(0, &["x", "y"])],
            ]),
            aggressive: expected(&[
                &[(0, &["x", "y"])],
                &[(0, &["x", "y"])],
                &[(0, &["x", "y"])],
            ]),
        },
        Case {
            name: "forward: a result may not extend the operands",
            operands: vec![tensor(&[open(0, &[])], &[])],
            results: vec![tensor(&[open(0, &["x"])], &[])],
            sizes: &[8],
            direction: Direction::Forward,
            elementwise: false,
            basic: expected(&[&[(0, &[])], &[(0, &["x"])]]),
            aggressive: expected(&[&[(0, &[])], &[(0, &["x"])]]),
        },
        Case {
            name: "backward: results flow to operands",
            operands: vec![tensor(&[open(0, &[])], &[])],
            results: vec![tensor(&[open(0, &["x"])], &[])],
            sizes: &[8],
            direction: Direction::Backward,
            elementwise: false,
            basic: expected(&[&[(0, &["x"])], &[(0, &["x"])]]),
            aggressive: expected(&[&[(0, &["x"])], &[(0, &["x"])]]),
        },
        Case {
            name: "no direction, no propagation",
            operands: vec![tensor(&[open(0, &["x"])], &[])],
            results: vec![tensor(&[open(0, &[])], &[])],
            sizes: &[8],
            direction: Direction::None,
            elementwise: false,
            basic: expected(&[&[(0, &["x"])], &[(0, &[])]]),
            aggressive: expected(&[&[(0, &["x"])], &[(0, &[])]]),
        },
        Case {
            // x (4) into a factor of size 2 that is not the minor-most:
            // only the sub-axis "x":(1)2 fits.
            name: "non-divisible factor takes a gcd sub-axis",
            operands: vec![tensor(&[open(0, &["x"])], &[])],
            results: vec![{
                let mut t = tensor(&[open(0, &[])], &[]);
                t.factors.get_mut(&0).unwrap().is_minor_most = false;
                t
            }],
            sizes: &[2],
            direction: Direction::Both,
            elementwise: false,
            basic: vec![
                vec![(0, vec!["\"x\"".into()])],
                vec![(0, vec!["\"x\":(1)2".into()])],
            ],
            aggressive: vec![
                vec![(0, vec!["\"x\"".into()])],
                vec![(0, vec!["\"x\":(1)2".into()])],
            ],
        },
        Case {
            // Element-wise: an operand gets no more than the result has
            // (no sideways propagation between operands).
            name: "element-wise operands follow the result",
            operands: vec![
                tensor(&[open(0, &["x"])], &[]),
                tensor(&[open(0, &[])], &[]),
            ],
            results: vec![tensor(&[closed(0, &[])], &[])],
            sizes: &[8],
            direction: Direction::Both,
            elementwise: true,
            basic: expected(&[&[(0, &["x"])], &[(0, &[])], &[(0, &[])]]),
            aggressive: expected(&[&[(0, &["x"])], &[(0, &[])], &[(0, &[])]]),
        },
        Case {
            name: "non-element-wise operands propagate sideways",
            operands: vec![
                tensor(&[open(0, &["x"])], &[]),
                tensor(&[open(0, &[])], &[]),
            ],
            results: vec![tensor(&[closed(0, &[])], &[])],
            sizes: &[8],
            direction: Direction::Both,
            elementwise: false,
            basic: expected(&[&[(0, &["x"])], &[(0, &[])], &[(0, &[])]]),
            aggressive: expected(&[&[(0, &["x"])], &[(0, &["x"])], &[(0, &[])]]),
        },
        Case {
            // Equal-size sources: for element-wise ops the more sharded
            // factor (j: "x","y") goes first and wins "x".
            name: "element-wise: most sharded factor first",
            operands: vec![
                tensor(&[open(0, &["x"]), open(1, &[])], &[]),
                tensor(&[open(0, &[]), open(1, &["x", "y"])], &[]),
            ],
            results: vec![tensor(&[open(0, &[]), open(1, &[])], &[])],
            sizes: &[8, 8],
            direction: Direction::Both,
            elementwise: true,
            basic: expected(&[
                &[(0, &["x"]), (1, &[])],
                &[(0, &[]), (1, &["x", "y"])],
                &[(0, &[]), (1, &[])],
            ]),
            aggressive: expected(&[
                &[(0, &["x"]), (1, &[])],
                &[(0, &[]), (1, &["x", "y"])],
                &[(0, &[]), (1, &["x", "y"])],
            ]),
        },
        Case {
            // The same tensors on a non-element-wise op: the tie is broken
            // by source tensor index, so i (from operand 0) wins "x".
            name: "otherwise: lower source tensor first",
            operands: vec![
                tensor(&[open(0, &["x"]), open(1, &[])], &[]),
                tensor(&[open(0, &[]), open(1, &["x", "y"])], &[]),
            ],
            results: vec![tensor(&[open(0, &[]), open(1, &[])], &[])],
            sizes: &[8, 8],
            direction: Direction::Both,
            elementwise: false,
            basic: expected(&[
                &[(0, &["x"]), (1, &[])],
                &[(0, &[]), (1, &["x", "y"])],
                &[(0, &[]), (1, &[])],
            ]),
            aggressive: expected(&[
                &[(0, &["x"]), (1, &[])],
                &[(0, &[]), (1, &["x", "y"])],
                &[(0, &["x"]), (1, &[])],
            ]),
        },
    ];
    for case in &cases {
        run(case);
    }
}
