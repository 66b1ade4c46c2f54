//! Collectives on the CPU backend, on arbitrary device groups (not in
//! mesh order, not contiguous), against a direct element-by-element
//! computation of the semantics in `partition::reshard::collective`. Each test runs
//! the devices as real threads meeting in the rendezvous.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use meshrun_compiler::ir::{ElemType, ReduceKind, TensorType};
use meshrun_compiler::partition::reshard::collective::{AllToAllDims, Collective, CollectiveKind};
use meshrun_compiler::sharding::TensorSharding;
use meshrun_compiler::splitmix::SplitMix64;
use meshrun_kernels::HostTensor;
use meshrun_runtime::backend::{Backend, Device, DeviceError, Participation};
use meshrun_runtime::cpu::collectives as coll;
use meshrun_runtime::cpu::{CpuBackend, CpuBuffer, CpuDevice};
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
        // Every member reducing for itself, and one shared reduction (the
        // default).
        let whole = run(
            &CpuBackend::new().with_chunked_all_reduce_min(usize::MAX),
            &DEVICES,
            &c,
        );
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

/// Run `c` on `devices` and return every device's result block itself.
fn run_blocks(backend: &CpuBackend, devices: &[i64], c: &Collective) -> Vec<CpuBuffer> {
    let inp: Vec<usize> = c.in_local_shape.iter().map(|&x| x as usize).collect();
    let out = TensorType::new(c.out_local_shape.clone(), ElemType::F32);
    let body = |dev: &mut CpuDevice| -> Result<CpuBuffer, RuntimeError> {
        let d = dev.id();
        let x = backend.upload(d, tensor(&inp, block(d, &inp)))?;
        dev.collective(3, c, part(c, d), &x, &out)
            .map_err(|e| RuntimeError::Program(e.to_string()))
    };
    backend.run_spmd(devices, &body).unwrap()
}

/// A result every member computes alike is built once: all members of a
/// group hold the same block, equal to what one device computes alone
/// (`collectives::all_gather`, `all_reduce`), on both the one-thread and
/// the helper-thread paths.
#[test]
fn members_share_one_result_equal_to_a_devices_own() {
    use meshrun_runtime::cpu::bands::PARALLEL_MIN_BYTES;
    let backend = CpuBackend::new().with_chunked_all_reduce_min(1);
    let cols = 256usize;
    // Small blocks, and blocks whose gathered result needs helpers.
    for rows in [3usize, PARALLEL_MIN_BYTES / 4 / cols / 3 + 1] {
        let mut gather = collective(
            CollectiveKind::AllGather,
            groups(),
            &[rows as i64, cols as i64],
            &[3 * rows as i64 - 1, cols as i64],
        );
        gather.dim_factors = vec![3, 1];
        let mut reduce = collective(
            CollectiveKind::AllReduce,
            groups(),
            &[rows as i64, cols as i64],
            &[rows as i64, cols as i64],
        );
        reduce.reduction = Some(ReduceKind::Add);
        for c in [&gather, &reduce] {
            let got = run_blocks(&backend, &DEVICES, c);
            let inp = [rows, cols];
            let out: Vec<usize> = c.out_local_shape.iter().map(|&x| x as usize).collect();
            for (pos, &d) in DEVICES.iter().enumerate() {
                let members = c.groups.iter().find(|g| g.contains(&d)).unwrap();
                let first = DEVICES.iter().position(|&x| x == members[0]).unwrap();
                assert!(
                    Arc::ptr_eq(&got[pos], &got[first]),
                    "{}: device {d} holds its own copy",
                    c.kind
                );
                let blocks: Vec<HostTensor> = members
                    .iter()
                    .map(|&m| tensor(&inp, block(m, &inp)))
                    .collect();
                let refs: Vec<&HostTensor> = blocks.iter().collect();
                let alone = match c.kind {
                    CollectiveKind::AllGather => coll::all_gather(&refs, c, &out),
                    _ => coll::all_reduce(&refs, ReduceKind::Add),
                }
                .unwrap();
                assert_eq!(f32s(&got[pos]), f32s(&alone), "{} device {d}", c.kind);
            }
            assert!(!Arc::ptr_eq(&got[0], &got[1]), "two groups, two results");
        }
    }
}

/// Runs `f` on a thread of its own and fails the test if it takes more
/// than a minute (a hang).
fn within_a_minute<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the run hung")
}

/// A device that fails before a shared collective poisons the run: the
/// members waiting for the shared result wake with `PeerFailed`, and the
/// run reports the failed device's own error.
#[test]
fn peers_waiting_for_a_shared_result_wake_when_a_device_fails() {
    let outcome = within_a_minute(|| {
        let mut c = collective(CollectiveKind::AllGather, groups(), &[2, 3], &[6, 3]);
        c.dim_factors = vec![3, 1];
        let out = TensorType::new(c.out_local_shape.clone(), ElemType::F32);
        let seen = Mutex::new(Vec::new());
        let backend = CpuBackend::new();
        let body = |dev: &mut CpuDevice| -> Result<(), RuntimeError> {
            let d = dev.id();
            if d == 3 {
                // Give the others time to reach the collective and wait.
                std::thread::sleep(Duration::from_millis(50));
                return Err(RuntimeError::Program("device 3 broke".into()));
            }
            let x = backend.upload(d, tensor(&[2, 3], block(d, &[2, 3])))?;
            let r = dev.collective(1, &c, part(&c, d), &x, &out);
            let failed = matches!(r, Err(DeviceError::PeerFailed(3)));
            seen.lock().unwrap().push((d, failed, r.is_ok()));
            r.map(|_| ())
                .map_err(|e| RuntimeError::Program(e.to_string()))
        };
        let run = backend.run_spmd(&DEVICES, &body);
        (run.map_err(|e| e.to_string()), seen.into_inner().unwrap())
    });
    let (run, mut seen) = outcome;
    assert_eq!(
        run,
        Err(RuntimeError::Program("device 3 broke".into()).to_string())
    );
    seen.sort();
    // Device 3's group (5, 0, 3) waits for it and wakes failed; the other
    // group (1, 4, 2) completes, or stops failed if it came later.
    for (d, failed, ok) in seen {
        if [5, 0].contains(&d) {
            assert!(failed, "device {d} did not wake with PeerFailed(3)");
        } else {
            assert!(failed || ok, "device {d} failed otherwise");
        }
    }
}

/// A result that cannot be built (a member's block has the wrong shape)
/// is every member's error, or, for a member that comes to take it after
/// another member has failed with it, `PeerFailed`: none of them waits for
/// a result that never comes, and the run reports the build's error.
#[test]
fn a_result_that_cannot_be_built_fails_every_member() {
    let outcome = within_a_minute(|| {
        let mut c = collective(
            CollectiveKind::AllGather,
            vec![vec![0, 1, 2]],
            &[2, 3],
            &[6, 3],
        );
        c.dim_factors = vec![3, 1];
        let out = TensorType::new(c.out_local_shape.clone(), ElemType::F32);
        let seen = Mutex::new(Vec::new());
        let backend = CpuBackend::new();
        let body = |dev: &mut CpuDevice| -> Result<(), RuntimeError> {
            let d = dev.id();
            let shape = if d == 1 { [3, 3] } else { [2, 3] };
            let x = backend.upload(d, tensor(&shape, block(d, &shape)))?;
            let r = dev.collective(1, &c, part(&c, d), &x, &out);
            seen.lock().unwrap().push(match &r {
                Err(DeviceError::Invalid(m)) => m.clone(),
                Err(DeviceError::PeerFailed(p)) => format!("peer {p} failed"),
                Ok(_) => "a result".into(),
                Err(e) => format!("another error: {e}"),
            });
            r.map(|_| ())
                .map_err(|e| RuntimeError::Program(e.to_string()))
        };
        let run = backend.run_spmd(&[0, 1, 2], &body);
        (run.map_err(|e| e.to_string()), seen.into_inner().unwrap())
    });
    let (run, errors) = outcome;
    let wrong_shape = "member 1 holds a block of shape [3, 3]";
    assert!(matches!(&run, Err(e) if e.contains(wrong_shape)), "{run:?}");
    assert_eq!(errors.len(), 3);
    assert!(errors.iter().any(|e| e.contains(wrong_shape)), "{errors:?}");
    for e in errors {
        assert!(e.contains(wrong_shape) || e.starts_with("peer"), "{e}");
    }
}

/// Kernels never use rayon inside the device threads of a run of several
/// devices (those threads are a rayon pool's workers: a kernel waiting on
/// rayon jobs could run a peer device's job and deadlock), whatever the
/// backend was asked; a one-device run, on the caller's thread, may.
#[test]
fn only_one_device_runs_use_threaded_kernels() {
    use meshrun_kernels::Parallelism;
    for backend in [
        CpuBackend::new(),
        CpuBackend::new().with_kernel_parallelism(Parallelism::Rayon(0)),
    ] {
        let pars = backend
            .run_spmd(&[0, 1, 2, 3], &|dev: &mut CpuDevice| {
                Ok(dev.kernel_parallelism())
            })
            .unwrap();
        assert!(
            pars.iter().all(|p| matches!(p, Parallelism::None)),
            "{pars:?}"
        );
    }
    let one = CpuBackend::new()
        .run_spmd(&[0], &|dev: &mut CpuDevice| Ok(dev.kernel_parallelism()))
        .unwrap();
    assert!(matches!(one[..], [Parallelism::Rayon(0)]), "{one:?}");
}
