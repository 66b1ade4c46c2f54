//! Collectives on the CPU backend, on arbitrary device groups (not in
//! mesh order, not contiguous), against a direct element-by-element
//! computation of the semantics in `partition::collective`. Each test runs
//! the devices as real threads meeting in the rendezvous.

use meshrun_compiler::ir::{ElemType, ReduceKind, TensorType};
use meshrun_compiler::partition::collective::{AllToAllDims, Collective, CollectiveKind};
use meshrun_compiler::sharding::TensorSharding;
use meshrun_kernels::HostTensor;
use meshrun_runtime::backend::{Backend, Device, Participation};
use meshrun_runtime::cpu::CpuBackend;
use meshrun_runtime::random_inputs::SplitMix64;
use meshrun_runtime::RuntimeError;

fn collective(kind: CollectiveKind, groups: Vec<Vec<i64>>, inp: &[i64], out: &[i64]) -> Collective {
    let rank = inp.len();
    Collective {
        kind,
        axes: Vec::new(),
        dim_axes: vec![Vec::new(); rank],
        dim_factors: vec![1; rank],
        all_to_all: None,
        reduction: None,
        groups,
        in_sharding: TensorSharding::replicated("m", rank),
        out_sharding: TensorSharding::replicated("m", rank),
        global_shape: inp.to_vec(),
        in_local_shape: inp.to_vec(),
        out_local_shape: out.to_vec(),
        elem: ElemType::F32,
    }
}

/// Device `d`'s block: random values from a stream of its own.
fn block(d: i64, shape: &[usize]) -> Vec<f32> {
    let mut rng = SplitMix64::new(1000 + d as u64);
    (0..shape.iter().product::<usize>())
        .map(|_| (rng.next_f64() * 2.0 - 1.0) as f32)
        .collect()
}

fn tensor(shape: &[usize], data: Vec<f32>) -> HostTensor {
    HostTensor::from_vec(shape, data).unwrap()
}

fn f32s(t: &HostTensor) -> Vec<f32> {
    t.array::<f32>().unwrap().iter().copied().collect()
}

/// Where device `d` stands in `c` (the executor normally works this out).
fn part(c: &Collective, d: i64) -> Participation<'_> {
    if c.kind == CollectiveKind::CollectivePermute {
        let send_to = c.groups.iter().find(|p| p[0] == d).map(|p| p[1]);
        let recv_from = c.groups.iter().find(|p| p[1] == d).map(|p| p[0]);
        return Participation::Permute { send_to, recv_from };
    }
    let (g, members) = c
        .groups
        .iter()
        .enumerate()
        .find(|(_, m)| m.contains(&d))
        .unwrap();
    Participation::Group {
        group: g,
        rank: members.iter().position(|&x| x == d).unwrap(),
        members,
    }
}

/// Run `c` on every device of `devices` (each with its own block) and
/// return each device's result.
fn run(backend: &CpuBackend, devices: &[i64], c: &Collective) -> Vec<Vec<f32>> {
    let inp: Vec<usize> = c.in_local_shape.iter().map(|&x| x as usize).collect();
    let out = TensorType::new(c.out_local_shape.clone(), ElemType::F32);
    let body = |dev: &mut <CpuBackend as Backend>::Device| -> Result<Vec<f32>, RuntimeError> {
        let d = dev.id();
        let x = backend.upload(d, tensor(&inp, block(d, &inp)))?;
        let r = dev
            .collective(7, c, part(c, d), &x, &out)
            .map_err(|e| RuntimeError::Program(e.to_string()))?;
        let values = f32s(&r);
        // Hand the block back, as the executor does, so that later
        // collectives may reuse its memory.
        dev.release(r);
        Ok(values)
    };
    backend.run_spmd(devices, &body).unwrap()
}

fn unflat(shape: &[usize], mut f: usize) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        idx[d] = f % shape[d];
        f /= shape[d];
    }
    idx
}

fn flat(shape: &[usize], idx: &[usize]) -> usize {
    idx.iter().zip(shape).fold(0, |a, (&i, &n)| a * n + i)
}

/// Element `idx` of a block of `shape`, or 0 past its end.
fn at(data: &[f32], shape: &[usize], idx: &[usize]) -> f32 {
    if idx.iter().zip(shape).any(|(&i, &n)| i >= n) {
        0.0
    } else {
        data[flat(shape, idx)]
    }
}

fn digits(mut r: usize, factors: &[i64]) -> Vec<usize> {
    let mut q = vec![0; factors.len()];
    for d in (0..factors.len()).rev() {
        q[d] = r % factors[d] as usize;
        r /= factors[d] as usize;
    }
    q
}

const DEVICES: [i64; 6] = [0, 1, 2, 3, 4, 5];
/// Groups in no particular order.
fn groups() -> Vec<Vec<i64>> {
    vec![vec![5, 0, 3], vec![1, 4, 2]]
}

#[test]
fn all_gather_on_scattered_groups_with_a_cut() {
    let mut c = collective(CollectiveKind::AllGather, groups(), &[2, 3], &[5, 3]);
    c.dim_factors = vec![3, 1];
    let got = run(&CpuBackend::new(), &DEVICES, &c);
    let (inp, out) = ([2usize, 3], [5usize, 3]);
    for (pos, &d) in DEVICES.iter().enumerate() {
        let members = c.groups.iter().find(|g| g.contains(&d)).unwrap();
        let want: Vec<f32> = (0..15)
            .map(|f| {
                let idx = unflat(&out, f);
                let member = members[idx[0] / inp[0]];
                at(&block(member, &inp), &inp, &[idx[0] % inp[0], idx[1]])
            })
            .collect();
        assert_eq!(got[pos], want, "device {d}");
    }
}

#[test]
fn all_gather_along_two_dimensions() {
    let g = vec![vec![3, 1, 0, 2]];
    let mut c = collective(CollectiveKind::AllGather, g.clone(), &[2, 2], &[4, 3]);
    c.dim_factors = vec![2, 2];
    let got = run(&CpuBackend::new(), &[0, 1, 2, 3], &c);
    let inp = [2usize, 2];
    let want: Vec<f32> = (0..12)
        .map(|f| {
            let idx = unflat(&[4, 3], f);
            let (q0, q1) = (idx[0] / 2, idx[1] / 2);
            let member = g[0][q0 * 2 + q1];
            at(&block(member, &inp), &inp, &[idx[0] % 2, idx[1] % 2])
        })
        .collect();
    for r in &got {
        assert_eq!(r, &want);
    }
}

#[test]
fn all_to_all_moves_chunks_between_dimensions() {
    // in [6, 2] split along 0 into 3 chunks of 2, concatenated along 1.
    let mut c = collective(CollectiveKind::AllToAll, groups(), &[6, 2], &[2, 6]);
    c.all_to_all = Some(AllToAllDims {
        src_dim: 1,
        tgt_dim: 0,
    });
    let got = run(&CpuBackend::new(), &DEVICES, &c);
    let inp = [6usize, 2];
    for (pos, &d) in DEVICES.iter().enumerate() {
        let members = c.groups.iter().find(|g| g.contains(&d)).unwrap();
        let rank = members.iter().position(|&x| x == d).unwrap();
        let want: Vec<f32> = (0..12)
            .map(|f| {
                let idx = unflat(&[2, 6], f);
                let from = members[idx[1] / 2];
                at(&block(from, &inp), &inp, &[rank * 2 + idx[0], idx[1] % 2])
            })
            .collect();
        assert_eq!(got[pos], want, "device {d}");
    }
}

/// The rank-order reduction of the group's blocks, element by element.
fn direct_reduce(members: &[i64], shape: &[usize], kind: ReduceKind) -> Vec<f32> {
    let blocks: Vec<Vec<f32>> = members.iter().map(|&m| block(m, shape)).collect();
    (0..blocks[0].len())
        .map(|i| {
            blocks[1..].iter().fold(blocks[0][i], |a, b| match kind {
                ReduceKind::Add => a + b[i],
                ReduceKind::Maximum => a.max(b[i]),
                ReduceKind::Minimum => a.min(b[i]),
                _ => a * b[i],
            })
        })
        .collect()
}

#[test]
fn all_reduce_is_the_rank_order_reduction_on_both_paths() {
    for kind in [ReduceKind::Add, ReduceKind::Maximum, ReduceKind::Multiply] {
        let shape = [7usize, 5];
        let mut c = collective(CollectiveKind::AllReduce, groups(), &[7, 5], &[7, 5]);
        c.reduction = Some(kind);
        // Whole-block and two-phase (every member reduces a slice).
        let whole = run(&CpuBackend::new(), &DEVICES, &c);
        let chunked = run(
            &CpuBackend::new().with_chunked_all_reduce_min(1),
            &DEVICES,
            &c,
        );
        for (pos, &d) in DEVICES.iter().enumerate() {
            let members = c.groups.iter().find(|g| g.contains(&d)).unwrap();
            let want = direct_reduce(members, &shape, kind);
            assert_eq!(whole[pos], want, "{kind:?} device {d}");
            assert_eq!(chunked[pos], want, "{kind:?} chunked, device {d}");
        }
    }
}

#[test]
fn reduce_scatter_keeps_each_members_chunk_of_the_sum() {
    let mut c = collective(CollectiveKind::ReduceScatter, groups(), &[5, 2], &[2, 2]);
    c.reduction = Some(ReduceKind::Add);
    c.dim_factors = vec![3, 1];
    let got = run(&CpuBackend::new(), &DEVICES, &c);
    for (pos, &d) in DEVICES.iter().enumerate() {
        let members = c.groups.iter().find(|g| g.contains(&d)).unwrap();
        let rank = members.iter().position(|&x| x == d).unwrap();
        let sum = direct_reduce(members, &[5, 2], ReduceKind::Add);
        let want: Vec<f32> = (0..4)
            .map(|f| {
                let idx = unflat(&[2, 2], f);
                at(&sum, &[5, 2], &[rank * 2 + idx[0], idx[1]])
            })
            .collect();
        assert_eq!(got[pos], want, "device {d}");
    }
}

#[test]
fn all_slice_keeps_the_ranks_chunk_without_communication() {
    let mut c = collective(
        CollectiveKind::AllSlice,
        vec![vec![2, 0], vec![3, 1]],
        &[3, 4],
        &[3, 2],
    );
    c.dim_factors = vec![1, 2];
    let got = run(&CpuBackend::new(), &[0, 1, 2, 3], &c);
    for (pos, d) in [0i64, 1, 2, 3].into_iter().enumerate() {
        let rank = usize::from(d < 2);
        let q = digits(rank, &c.dim_factors);
        let mine = block(d, &[3, 4]);
        let want: Vec<f32> = (0..6)
            .map(|f| {
                let idx = unflat(&[3, 2], f);
                at(&mine, &[3, 4], &[idx[0], q[1] * 2 + idx[1]])
            })
            .collect();
        assert_eq!(got[pos], want, "device {d}");
    }
}

#[test]
fn permute_with_partial_pairs_gives_zeros_to_non_targets() {
    let pairs = vec![vec![0, 1], vec![1, 2], vec![2, 0], vec![3, 3], vec![4, 5]];
    let c = collective(CollectiveKind::CollectivePermute, pairs, &[2, 3], &[2, 3]);
    let got = run(&CpuBackend::new(), &DEVICES, &c);
    assert_eq!(got[1], block(0, &[2, 3]));
    assert_eq!(got[2], block(1, &[2, 3]));
    assert_eq!(got[0], block(2, &[2, 3]));
    assert_eq!(got[3], block(3, &[2, 3]));
    assert_eq!(got[5], block(4, &[2, 3]));
    assert_eq!(got[4], vec![0.0; 6], "device 4 is no pair's target");
}

#[test]
fn results_are_bitwise_deterministic() {
    let mut c = collective(
        CollectiveKind::AllReduce,
        vec![DEVICES.to_vec()],
        &[64, 33],
        &[64, 33],
    );
    c.reduction = Some(ReduceKind::Add);
    let first = run(
        &CpuBackend::new().with_chunked_all_reduce_min(1),
        &DEVICES,
        &c,
    );
    for _ in 0..5 {
        let again = run(
            &CpuBackend::new().with_chunked_all_reduce_min(1),
            &DEVICES,
            &c,
        );
        let bits =
            |v: &Vec<Vec<f32>>| -> Vec<u32> { v.iter().flatten().map(|x| x.to_bits()).collect() };
        assert_eq!(bits(&first), bits(&again));
    }
    for r in &first[1..] {
        assert_eq!(r, &first[0], "every member gets the same sum");
    }
}

/// Blocks big enough to be reused (`cpu::alloc`): results built in reused,
/// dirty memory must still be exact, padding included.
#[test]
fn big_results_in_reused_memory_are_exact() {
    use meshrun_runtime::cpu::alloc::MIN_POOLED_BYTES;
    let cols = 512usize;
    let rows = MIN_POOLED_BYTES / 4 / cols; // one block: MIN_POOLED_BYTES
    let devices = [0i64, 1, 2, 3];
    let g = vec![vec![2, 0, 3, 1]];
    // A cut all-gather (the last block only partly kept) ...
    let out_rows = 4 * rows - 3;
    let mut gather = collective(
        CollectiveKind::AllGather,
        g.clone(),
        &[rows as i64, cols as i64],
        &[out_rows as i64, cols as i64],
    );
    gather.dim_factors = vec![4, 1];
    // ... and an all-to-all whose chunks run past the blocks (padding).
    let chunk = rows / 4 + 1;
    let mut a2a = collective(
        CollectiveKind::AllToAll,
        g.clone(),
        &[rows as i64, cols as i64],
        &[chunk as i64, 4 * cols as i64],
    );
    a2a.all_to_all = Some(AllToAllDims {
        src_dim: 1,
        tgt_dim: 0,
    });
    let backend = CpuBackend::new();
    let blocks: Vec<Vec<f32>> = devices.iter().map(|&d| block(d, &[rows, cols])).collect();
    for round in 0..3 {
        let got = run(&backend, &devices, &gather);
        for (pos, &d) in devices.iter().enumerate() {
            let r = &got[pos];
            assert_eq!(r.len(), out_rows * cols, "round {round}");
            for (row, member) in [(0, g[0][0]), (rows + 5, g[0][1]), (out_rows - 1, g[0][3])] {
                let b = &blocks[member as usize];
                let local = row % rows;
                assert_eq!(
                    &r[row * cols..(row + 1) * cols],
                    &b[local * cols..(local + 1) * cols],
                    "round {round}, device {d}, row {row}"
                );
            }
        }
        let got = run(&backend, &devices, &a2a);
        for (pos, &d) in devices.iter().enumerate() {
            let rank = g[0].iter().position(|&x| x == d).unwrap();
            let r = &got[pos];
            for i in 0..chunk {
                let src_row = rank * chunk + i;
                for j in [0, cols + 1, 4 * cols - 1] {
                    let from = g[0][j / cols];
                    let want = if src_row < rows {
                        blocks[from as usize][src_row * cols + j % cols]
                    } else {
                        0.0
                    };
                    assert_eq!(
                        r[i * 4 * cols + j],
                        want,
                        "round {round} device {d} ({i}, {j})"
                    );
                }
            }
        }
    }
}
