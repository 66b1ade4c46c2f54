//! The gather / scatter kernels' index arithmetic (`index.cuh`), ported to
//! Rust line by line over [`walk_meta`]'s table, against the CPU kernels
//! on random dimension numbers, shapes and start indices.
use super::*;
use crate::cpu::gather::{gather as cpu_gather, scatter as cpu_scatter};
use crate::HostTensor;
use meshrun_compiler::ir::ops::index_dims::{GATHER_SYNTAX, SCATTER_SYNTAX};
use meshrun_compiler::ir::{verify_module, OpKind};
use meshrun_compiler::text::parse_module;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i + 1));
        }
    }
}

/// One random gather/scatter geometry: dimension numbers, the operand and
/// indices shapes, the slice sizes along every operand dim, the slices
/// shape and random start indices (some out of range, some repeated).
struct Case {
    dims: IndexDims,
    operand: Vec<usize>,
    indices: Vec<usize>,
    sizes: Vec<i64>,
    slices: Vec<usize>,
    ids: Vec<i64>,
}

fn random_case(r: &mut Rng) -> Case {
    let rank = 1 + r.below(4);
    let operand: Vec<usize> = (0..rank).map(|_| 1 + r.below(4)).collect();
    let mut free: Vec<usize> = (0..rank).collect();
    r.shuffle(&mut free);
    // Operand batching dims (paired with indices dims below), then start
    // dims among the rest, then collapsed dims among non-batching ones.
    let n_batching = if rank > 1 && r.chance(25) { 1 } else { 0 };
    let batching: Vec<usize> = free.drain(..n_batching).collect();
    let n_start = 1 + r.below(free.len().clamp(1, 3));
    let n_start = n_start.min(free.len());
    let start_map: Vec<usize> = free[..n_start].to_vec();
    let mut collapsed: Vec<usize> = free
        .iter()
        .copied()
        .filter(|_| r.chance(40))
        .collect::<Vec<_>>();
    collapsed.sort_unstable();
    let mut sizes = vec![0i64; rank];
    for d in 0..rank {
        sizes[d] = if batching.contains(&d) || collapsed.contains(&d) {
            1
        } else if r.chance(5) {
            0
        } else {
            r.range(1, operand[d] as i64)
        };
    }
    // Indices: batch dims (one per operand batching dim, plus 0-2 free
    // ones) and the index vector dim somewhere (or implicit when it
    // would have one entry).
    let n_free_batch = r.below(3);
    let mut batch_sizes: Vec<usize> = (0..n_free_batch).map(|_| 1 + r.below(3)).collect();
    let mut batch_is_batching: Vec<Option<usize>> = vec![None; n_free_batch];
    for &od in &batching {
        let at = r.below(batch_sizes.len() + 1);
        batch_sizes.insert(at, operand[od]);
        batch_is_batching.insert(at, Some(od));
    }
    let implicit = start_map.len() == 1 && r.chance(30);
    let ivd = if implicit {
        batch_sizes.len()
    } else {
        r.below(batch_sizes.len() + 1)
    };
    let mut indices = batch_sizes.clone();
    if !implicit {
        indices.insert(ivd, start_map.len());
    }
    let (mut operand_batching, mut indices_batching) = (Vec::new(), Vec::new());
    for (j, b) in batch_is_batching.iter().enumerate() {
        if let Some(od) = b {
            let id = if !implicit && j >= ivd { j + 1 } else { j };
            operand_batching.push(*od as i64);
            indices_batching.push(id as i64);
        }
    }
    // Keep the pairs ordered by operand dim (the list must be sorted).
    let mut pairs: Vec<(i64, i64)> = operand_batching
        .iter()
        .copied()
        .zip(indices_batching.iter().copied())
        .collect();
    pairs.sort_unstable();
    let window_operand: Vec<usize> = (0..rank)
        .filter(|d| !batching.contains(d) && !collapsed.contains(d))
        .collect();
    let slices_rank = batch_sizes.len() + window_operand.len();
    let mut positions: Vec<usize> = (0..slices_rank).collect();
    r.shuffle(&mut positions);
    let mut window_dims: Vec<usize> = positions[..window_operand.len()].to_vec();
    window_dims.sort_unstable();
    let mut slices = Vec::with_capacity(slices_rank);
    let (mut b, mut w) = (0, 0);
    for p in 0..slices_rank {
        if window_dims.contains(&p) {
            slices.push(sizes[window_operand[w]] as usize);
            w += 1;
        } else {
            slices.push(batch_sizes[b]);
            b += 1;
        }
    }
    let n_ids: usize = indices.iter().product();
    let ids = (0..n_ids)
        .map(|_| {
            if r.chance(20) {
                // Repeats of the same few ids.
                r.range(0, 1)
            } else {
                r.range(-2, 5)
            }
        })
        .collect();
    Case {
        dims: IndexDims {
            window_dims: window_dims.iter().map(|&d| d as i64).collect(),
            collapsed_dims: collapsed.iter().map(|&d| d as i64).collect(),
            operand_batching_dims: pairs.iter().map(|p| p.0).collect(),
            indices_batching_dims: pairs.iter().map(|p| p.1).collect(),
            start_index_map: start_map.iter().map(|&d| d as i64).collect(),
            index_vector_dim: ivd as i64,
        },
        operand,
        indices,
        sizes,
        slices,
        ids,
    }
}

fn ty(shape: &[usize], e: &str) -> String {
    let mut s = String::from("tensor<");
    for d in shape {
        s.push_str(&format!("{d}x"));
    }
    format!("{s}{e}>")
}

/// The one op of `body` in a verified module, or `None` if the verifier
/// rejects it (the generator does not know every rule).
fn op_of(sig: &str, body: &str, ret: &str) -> Option<OpKind> {
    let text = format!("func.func @main({sig}) -> {ret} {{\n{body}\n  return %r : {ret}\n}}");
    let m = parse_module(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify_module(&m).ok()?;
    let (_, op) = m.funcs[0].ops_in_order().next()?;
    Some(op.kind.clone())
}

fn values(r: &mut Rng, n: usize) -> Vec<f32> {
    // Mixed magnitudes, so a sum's value depends on its order.
    (0..n)
        .map(|_| {
            let m = [1e-3f32, 1.0, 1e4, 3e7][r.below(4)];
            (r.range(-1000, 1000) as f32) * m / 7.0
        })
        .collect()
}

fn bits(v: &HostTensor) -> Vec<u32> {
    match v {
        HostTensor::F32(a) => a.iter().map(|x| x.to_bits()).collect(),
        other => panic!("not f32: {other:?}"),
    }
}

#[test]
fn gather_indexing_matches_the_cpu_kernel_on_random_cases() {
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    let mut checked = 0;
    for case_no in 0..600 {
        let c = random_case(&mut r);
        let idx_ty = if case_no % 2 == 0 { "i64" } else { "i32" };
        let sizes: Vec<String> = c.sizes.iter().map(|s| s.to_string()).collect();
        let body = format!(
            "  %r = \"stablehlo.gather\"(%x, %i) <{{dimension_numbers = {}, slice_sizes = array<i64: {}>}}> : ({}, {}) -> {}",
            c.dims.encode_with(&GATHER_SYNTAX),
            sizes.join(", "),
            ty(&c.operand, "f32"),
            ty(&c.indices, idx_ty),
            ty(&c.slices, "f32"),
        );
        let sig = format!(
            "%x: {}, %i: {}",
            ty(&c.operand, "f32"),
            ty(&c.indices, idx_ty)
        );
        let Some(OpKind::Gather(g)) = op_of(&sig, &body, &ty(&c.slices, "f32")) else {
            continue;
        };
        let x = values(&mut r, c.operand.iter().product());
        let xt = HostTensor::from_vec(&c.operand, x.clone()).unwrap();
        let it = if idx_ty == "i64" {
            HostTensor::from_vec(&c.indices, c.ids.clone()).unwrap()
        } else {
            HostTensor::from_vec(&c.indices, c.ids.iter().map(|&v| v as i32).collect()).unwrap()
        };
        let want = cpu_gather(&g, &xt, &it).unwrap();
        let meta = walk_meta(&c.dims, &c.operand, &c.indices, &c.slices, Some(&c.sizes))
            .unwrap_or_else(|e| panic!("{e}\n{body}"));
        let got = gather_emulated(&x, &c.ids, &meta);
        let got_bits: Vec<u32> = got.iter().map(|v| v.to_bits()).collect();
        assert_eq!(got_bits, bits(&want), "{body}\nids {:?}", c.ids);
        checked += 1;
    }
    assert!(checked > 400, "only {checked} random gathers were valid");
}

/// A region body, what it computes, and the CPU's function for it on f32.
type Region = (&'static str, ScatterUpdate, fn(f32, f32) -> f32);

/// The CPU's update functions on f32 (`cpu/gather.rs`), by region body.
fn regions() -> Vec<Region> {
    fn max_nan(x: f32, y: f32) -> f32 {
        if x.is_nan() || y.is_nan() {
            f32::NAN
        } else if x >= y {
            x
        } else {
            y
        }
    }
    fn min_nan(x: f32, y: f32) -> f32 {
        if x.is_nan() || y.is_nan() {
            f32::NAN
        } else if x <= y {
            x
        } else {
            y
        }
    }
    vec![
        (
            "%s = stablehlo.add %a, %b : tensor<f32>\n    stablehlo.return %s : tensor<f32>",
            ScatterUpdate::Combine(ReduceKind::Add),
            |x, y| x + y,
        ),
        (
            "stablehlo.return %b : tensor<f32>",
            ScatterUpdate::Replace,
            |_, y| y,
        ),
        (
            "%s = stablehlo.multiply %b, %a : tensor<f32>\n    stablehlo.return %s : tensor<f32>",
            ScatterUpdate::Combine(ReduceKind::Multiply),
            |x, y| x * y,
        ),
        (
            "%s = stablehlo.maximum %a, %b : tensor<f32>\n    stablehlo.return %s : tensor<f32>",
            ScatterUpdate::Combine(ReduceKind::Maximum),
            max_nan,
        ),
        (
            "%s = stablehlo.minimum %a, %b : tensor<f32>\n    stablehlo.return %s : tensor<f32>",
            ScatterUpdate::Combine(ReduceKind::Minimum),
            min_nan,
        ),
    ]
}

fn scatter_text(c: &Case, elem: &str, region: &str) -> (String, String) {
    let body = format!(
        "  %r = \"stablehlo.scatter\"(%x, %i, %u) <{{scatter_dimension_numbers = {}}}> ({{\n  ^bb0(%a: tensor<{elem}>, %b: tensor<{elem}>):\n    {region}\n  }}) : ({}, {}, {}) -> {}",
        c.dims.encode_with(&SCATTER_SYNTAX),
        ty(&c.operand, elem),
        ty(&c.indices, "i64"),
        ty(&c.slices, elem),
        ty(&c.operand, elem),
    );
    let sig = format!(
        "%x: {}, %i: {}, %u: {}",
        ty(&c.operand, elem),
        ty(&c.indices, "i64"),
        ty(&c.slices, elem)
    );
    (sig, body)
}

#[test]
fn scatter_indexing_matches_the_cpu_kernel_on_random_cases() {
    let mut r = Rng(0xD1B5_4A32_D192_ED03);
    let (mut checked, mut windowed) = (0, 0);
    for case_no in 0..500 {
        let c = random_case(&mut r);
        let (name, update, f) = regions()[case_no % 5];
        let (sig, body) = scatter_text(&c, "f32", name);
        let Some(OpKind::Scatter(s)) = op_of(&sig, &body, &ty(&c.operand, "f32")) else {
            continue;
        };
        assert_eq!(s.update_kind(), Ok(update));
        let x = values(&mut r, c.operand.iter().product());
        let u = values(&mut r, c.slices.iter().product());
        let xt = HostTensor::from_vec(&c.operand, x.clone()).unwrap();
        let ut = HostTensor::from_vec(&c.slices, u.clone()).unwrap();
        let it = HostTensor::from_vec(&c.indices, c.ids.clone()).unwrap();
        let want = cpu_scatter(&s, &[&xt, &it, &ut]).unwrap().remove(0);
        let meta = walk_meta(&c.dims, &c.operand, &c.indices, &c.slices, None)
            .unwrap_or_else(|e| panic!("{e}\n{body}"));
        let mut strategies = vec![ScatterStrategy::Target];
        if scatter_strategy(&meta) == ScatterStrategy::Window {
            strategies.push(ScatterStrategy::Window);
            windowed += 1;
        }
        for strategy in strategies {
            let got = scatter_emulated(strategy, &x, &c.ids, &u, &meta, f);
            let got_bits: Vec<u32> = got.iter().map(|v| v.to_bits()).collect();
            assert_eq!(
                got_bits,
                bits(&want),
                "{strategy:?}\n{body}\nids {:?}",
                c.ids
            );
        }
        checked += 1;
    }
    assert!(checked > 300, "only {checked} random scatters were valid");
    assert!(windowed > 50, "only {windowed} took the window strategy");
}

#[test]
fn overlapping_windows_take_the_per_target_strategy() {
    // Windows of 2 along a start dim: starts 0 and 1 meet at element 1
    // from different window offsets, so a thread per window offset would
    // race; the per-target kernel applies both updates in point order.
    let dims = IndexDims {
        window_dims: vec![1],
        collapsed_dims: vec![],
        operand_batching_dims: vec![],
        indices_batching_dims: vec![],
        start_index_map: vec![0],
        index_vector_dim: 1,
    };
    let meta = walk_meta(&dims, &[4], &[2], &[2, 2], None).unwrap();
    assert_eq!(scatter_strategy(&meta), ScatterStrategy::Target);
    let got = scatter_emulated(
        ScatterStrategy::Target,
        &[0.0f64; 4],
        &[0, 1],
        &[1.0, 2.0, 10.0, 20.0],
        &meta,
        |_, y| y,
    );
    assert_eq!(got, vec![1.0, 10.0, 20.0, 0.0]);
    // Rows of a table (x.at[ids].add(rows)): the window strategy.
    let rows = IndexDims {
        window_dims: vec![1],
        collapsed_dims: vec![0],
        start_index_map: vec![0],
        index_vector_dim: 1,
        ..IndexDims::default()
    };
    let meta = walk_meta(&rows, &[5, 3], &[4], &[4, 3], None).unwrap();
    assert_eq!(scatter_strategy(&meta), ScatterStrategy::Window);
    assert_eq!(window_volume(&meta), 3);
}

#[test]
fn tables_reject_windows_larger_than_the_operand() {
    let dims = IndexDims {
        window_dims: vec![1],
        start_index_map: vec![0],
        index_vector_dim: 1,
        ..IndexDims::default()
    };
    let err = walk_meta(&dims, &[2], &[3, 1], &[3, 4], Some(&[4])).unwrap_err();
    assert!(err.contains("a window of 4"), "{err}");
    assert!(walk_sizes(&[1, 0, 0]).is_err());
}

#[test]
fn names_cover_every_region_and_type() {
    use ScatterStrategy as S;
    use ScatterUpdate as U;
    assert_eq!(gather(ElemType::BF16).as_deref(), Some("gather_b2"));
    assert_eq!(gather(ElemType::I1).as_deref(), Some("gather_b1"));
    assert_eq!(gather(ElemType::U64).as_deref(), Some("gather_b8"));
    assert_eq!(
        scatter(S::Window, U::Combine(ReduceKind::Add), ElemType::U32),
        None
    );
    assert_eq!(
        scatter(S::Window, U::Combine(ReduceKind::Add), ElemType::F16).as_deref(),
        Some("scatter_window_add_f16")
    );
    assert_eq!(
        scatter(S::Target, U::Replace, ElemType::I64).as_deref(),
        Some("scatter_target_replace_b8")
    );
    assert_eq!(
        scatter(S::Target, U::Combine(ReduceKind::Multiply), ElemType::I1).as_deref(),
        Some("scatter_target_and_pred")
    );
    assert_eq!(
        scatter(S::Target, U::Combine(ReduceKind::And), ElemType::F32),
        None
    );
    let all = entries().functions;
    for strategy in [S::Target, S::Window] {
        for e in DTYPES {
            for k in [
                ReduceKind::Add,
                ReduceKind::Multiply,
                ReduceKind::Maximum,
                ReduceKind::Minimum,
            ] {
                let n = scatter(strategy, U::Combine(k), e).unwrap();
                assert!(all.contains(&n), "{n} not generated");
            }
            let n = scatter(strategy, U::Replace, e).unwrap();
            assert!(all.contains(&n), "{n} not generated");
        }
    }
    // 4 gathers; per strategy 4 replaces, 4 kinds x 6 number types, 2 on i1.
    assert_eq!(all.len(), 4 + 2 * (4 + 24 + 2));
}

#[test]
fn the_kernel_text_built_for_the_host_matches_the_cpu_kernels() {
    // index.cuh itself (not the Rust port), one thread at a time, on
    // random f32 gathers and scatters through both launch shapes.
    use super::super::host_run::{array, run};
    let mut r = Rng(0x1234_5678);
    let (mut text, mut expected) = (String::new(), 0);
    for case_no in 0..300 {
        let c = random_case(&mut r);
        let sizes: Vec<String> = c.sizes.iter().map(|s| s.to_string()).collect();
        let body = format!(
            "  %r = \"stablehlo.gather\"(%x, %i) <{{dimension_numbers = {}, slice_sizes = array<i64: {}>}}> : ({}, {}) -> {}",
            c.dims.encode_with(&GATHER_SYNTAX),
            sizes.join(", "),
            ty(&c.operand, "f32"),
            ty(&c.indices, "i64"),
            ty(&c.slices, "f32"),
        );
        let sig = format!(
            "%x: {}, %i: {}",
            ty(&c.operand, "f32"),
            ty(&c.indices, "i64")
        );
        if let Some(OpKind::Gather(g)) = op_of(&sig, &body, &ty(&c.slices, "f32")) {
            let x = values(&mut r, c.operand.iter().product());
            let xt = HostTensor::from_vec(&c.operand, x.clone()).unwrap();
            let it = HostTensor::from_vec(&c.indices, c.ids.clone()).unwrap();
            let want = bits(&cpu_gather(&g, &xt, &it).unwrap());
            let meta =
                walk_meta(&c.dims, &c.operand, &c.indices, &c.slices, Some(&c.sizes)).unwrap();
            text.push_str("G\n");
            array(&mut text, &meta);
            array(
                &mut text,
                &x.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            );
            array(&mut text, &c.ids);
            array(&mut text, &want);
            expected += 1;
        }
        let region = case_no % 5;
        let (sig, body) = scatter_text(&c, "f32", regions()[region].0);
        if let Some(OpKind::Scatter(s)) = op_of(&sig, &body, &ty(&c.operand, "f32")) {
            let x = values(&mut r, c.operand.iter().product());
            let u = values(&mut r, c.slices.iter().product());
            let xt = HostTensor::from_vec(&c.operand, x.clone()).unwrap();
            let ut = HostTensor::from_vec(&c.slices, u.clone()).unwrap();
            let it = HostTensor::from_vec(&c.indices, c.ids.clone()).unwrap();
            let want = bits(&cpu_scatter(&s, &[&xt, &it, &ut]).unwrap().remove(0));
            let meta = walk_meta(&c.dims, &c.operand, &c.indices, &c.slices, None).unwrap();
            let window = scatter_strategy(&meta) == ScatterStrategy::Window;
            text.push_str(&format!("S {region} {}\n", u8::from(window)));
            array(&mut text, &meta);
            array(
                &mut text,
                &x.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            );
            array(&mut text, &c.ids);
            array(
                &mut text,
                &u.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            );
            array(&mut text, &want);
            expected += 1 + usize::from(window);
        }
    }
    match run("index", &text) {
        Err(why) => eprintln!("skipped: {why}"),
        Ok(report) => assert!(
            report.ends_with(&format!("{expected} ok 0 differ\n")),
            "{report}"
        ),
    }
    assert!(expected > 500, "{expected} cases");
}
