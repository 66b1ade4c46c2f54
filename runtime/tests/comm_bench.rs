//! `comm_bench`: every op and element type passes on the CPU backend, and
//! the check catches a collective that gets one element wrong.
//!
//! The broken backend cannot wrap `CpuDevice` itself (a `CpuBackend` run
//! lends its devices by `&mut`, and they cannot be built outside the
//! crate), so it is a CPU backend of its own built from the same parts:
//! device threads meeting in a `cpu::rendezvous::Rendezvous`, results from
//! the pure functions of `cpu::collectives`, local instructions from
//! `cpu::local` and the kernels. Its devices compute every collective
//! right, then the victim device corrupts one element of each result.

use std::sync::Arc;

use meshrun_compiler::ir::{ElemType, OpKind, Scalar, TensorType};
use meshrun_compiler::partition::reshard::collective::{Collective, CollectiveKind};
use meshrun_compiler::partition::RemapEntry;
use meshrun_kernels::{eval_op, with_array, HostElem, HostTensor, Parallelism};
use meshrun_runtime::backend::{Backend, Device, DeviceError, Participation};
use meshrun_runtime::comm_bench::{time_collective, BenchOp, CommBench, BENCH_ELEMS};
use meshrun_runtime::cpu::collectives as coll;
use meshrun_runtime::cpu::local;
use meshrun_runtime::cpu::rendezvous::{Rendezvous, SlotKey};
use meshrun_runtime::cpu::CpuBuffer;
use meshrun_runtime::{CpuBackend, RuntimeError};

fn bench(op: BenchOp, devices: Vec<i64>, bytes: u64, elem: ElemType) -> CommBench {
    CommBench {
        op,
        devices,
        concurrent: Vec::new(),
        bytes,
        elem,
        warmup: 1,
        iters: 2,
    }
}

#[test]
fn every_op_and_dtype_passes_on_the_cpu_backend() {
    let backend = CpuBackend::new();
    for n in [1usize, 2, 3, 8] {
        let devices: Vec<i64> = (0..n as i64).collect();
        for op in BenchOp::ALL {
            for elem in BENCH_ELEMS {
                // A size that rounds, and one of many pattern periods.
                for bytes in [100u64, 3000] {
                    let b = bench(op, devices.clone(), bytes, elem);
                    let r = time_collective(&backend, &b).unwrap();
                    let at = format!("{op} {} on {n} devices, {bytes} B", elem.name());
                    assert!(r.ok(), "{at}: {:?}", r.error);
                    assert_eq!(r.ranks, n, "{at}");
                    assert_eq!(r.times_s.len(), 2, "{at}");
                    assert!(r.times_s.iter().all(|&t| t > 0.0), "{at}");
                    let unit = (n * elem.byte_size()) as u64;
                    assert_eq!(r.bytes % unit, 0, "{at}: {} bytes", r.bytes);
                    assert!(r.bytes.abs_diff(bytes) <= unit, "{at}: {} bytes", r.bytes);
                    assert_eq!(r.count * elem.byte_size() as u64, r.bytes, "{at}");
                }
            }
        }
    }
}

#[test]
fn scattered_device_ids_and_big_all_reduces_pass() {
    let backend = CpuBackend::new();
    for op in BenchOp::ALL {
        // Ranks not in id order; the ring of the permute follows the ranks.
        let r = time_collective(&backend, &bench(op, vec![5, 2, 9], 600, ElemType::F32)).unwrap();
        assert!(r.ok(), "{op}: {:?}", r.error);
    }
    // Past the two-phase all-reduce threshold (32K elements).
    let big = bench(
        BenchOp::AllReduce,
        (0..4).collect(),
        1 << 19,
        ElemType::BF16,
    );
    let r = time_collective(&backend, &big).unwrap();
    assert!(r.ok(), "{:?}", r.error);
}

#[test]
fn concurrent_groups_each_do_their_own_collective() {
    let backend = CpuBackend::new();
    // Four groups of two as a `"model"`=2 axis makes them, and two groups
    // of four strided as a `"data"`=4 axis does.
    let model: Vec<Vec<i64>> = (0..4).map(|k| vec![2 * k, 2 * k + 1]).collect();
    let data: Vec<Vec<i64>> = (0..2).map(|k| vec![k, k + 2, k + 4, k + 6]).collect();
    for groups in [model, data] {
        for op in BenchOp::ALL {
            let mut b = bench(op, groups[0].clone(), 2000, ElemType::F32);
            b.concurrent = groups[1..].to_vec();
            let r = time_collective(&backend, &b).unwrap();
            assert!(r.ok(), "{op} on {groups:?}: {:?}", r.error);
            assert_eq!(r.ranks, groups[0].len(), "{op} on {groups:?}");
        }
    }
    // Groups must be disjoint and of one size.
    let mut b = bench(BenchOp::AllReduce, vec![0, 1], 64, ElemType::F32);
    b.concurrent = vec![vec![1, 2]];
    assert!(time_collective(&backend, &b).is_err());
    b.concurrent = vec![vec![2, 3, 4]];
    let e = time_collective(&backend, &b).unwrap_err().to_string();
    assert!(e.contains("differ in size"), "{e}");
}

#[test]
fn bad_benches_are_errors() {
    let backend = CpuBackend::new();
    let mut b = bench(BenchOp::AllGather, vec![0, 1], 64, ElemType::F32);
    b.iters = 0;
    assert!(time_collective(&backend, &b).is_err());
    let b = bench(BenchOp::AllGather, vec![0, 0], 64, ElemType::F32);
    assert!(time_collective(&backend, &b).is_err());
    let b = bench(BenchOp::AllGather, vec![0, 1], 64, ElemType::I1);
    let e = time_collective(&backend, &b).unwrap_err().to_string();
    assert!(e.contains("i1"), "{e}");
}

/// A CPU backend whose device `victim` adds one to the last element of
/// every collective result.
struct Broken {
    victim: i64,
}

struct BrokenDevice {
    id: i64,
    victim: i64,
    comm: Arc<Rendezvous<CpuBuffer>>,
}

fn invalid(e: String) -> DeviceError {
    DeviceError::Invalid(e)
}

impl Backend for Broken {
    type Buffer = CpuBuffer;
    type Device = BrokenDevice;

    fn name(&self) -> &'static str {
        "broken-cpu"
    }

    fn upload(&self, _device: i64, t: HostTensor) -> Result<CpuBuffer, RuntimeError> {
        Ok(Arc::new(t))
    }

    fn download(&self, _device: i64, b: CpuBuffer) -> Result<HostTensor, RuntimeError> {
        Ok(Arc::try_unwrap(b).unwrap_or_else(|shared| (*shared).clone()))
    }

    fn run_spmd<R: Send>(
        &self,
        devices: &[i64],
        body: &(dyn Fn(&mut BrokenDevice) -> Result<R, RuntimeError> + Sync),
    ) -> Result<Vec<R>, RuntimeError> {
        let comm = Arc::new(Rendezvous::new());
        std::thread::scope(|s| {
            let handles: Vec<_> = devices
                .iter()
                .map(|&id| {
                    let comm = comm.clone();
                    s.spawn(move || {
                        let mut dev = BrokenDevice {
                            id,
                            victim: self.victim,
                            comm: comm.clone(),
                        };
                        let r = body(&mut dev);
                        if r.is_err() {
                            comm.poison(id);
                        }
                        r
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a device thread panicked"))
                .collect()
        })
    }
}

impl BrokenDevice {
    fn exchange(
        &self,
        instance: u64,
        part: Participation<'_>,
        x: &CpuBuffer,
    ) -> Result<(Vec<CpuBuffer>, usize), DeviceError> {
        let Participation::Group {
            group,
            rank,
            members,
        } = part
        else {
            return Err(invalid("a group collective given pairs".into()));
        };
        let key = SlotKey {
            instance,
            phase: 0,
            group: group as i64,
        };
        let blocks = self
            .comm
            .exchange(key, rank, members.len(), x.clone())
            .map_err(|p| DeviceError::PeerFailed(p.failed))?;
        Ok((blocks, rank))
    }

    /// The right result of `c` for this device.
    fn right(
        &self,
        instance: u64,
        c: &Collective,
        part: Participation<'_>,
        x: &CpuBuffer,
        out: &[usize],
    ) -> Result<HostTensor, DeviceError> {
        if let Participation::Permute { send_to, recv_from } = part {
            let key = |to: i64| SlotKey {
                instance,
                phase: 0,
                group: to,
            };
            let failed =
                |p: meshrun_runtime::cpu::rendezvous::Poisoned| DeviceError::PeerFailed(p.failed);
            if let Some(t) = send_to.filter(|&t| t != self.id) {
                self.comm.send(key(t), x.clone()).map_err(failed)?;
            }
            return match recv_from {
                Some(s) if s == self.id => Ok((**x).clone()),
                Some(_) => Ok((*self.comm.recv(key(self.id)).map_err(failed)?).clone()),
                None => Err(invalid("no source".into())),
            };
        }
        let (blocks, rank) = self.exchange(instance, part, x)?;
        let refs: Vec<&HostTensor> = blocks.iter().map(|b| &**b).collect();
        let add = meshrun_compiler::ir::ReduceKind::Add;
        match c.kind {
            CollectiveKind::AllGather => coll::all_gather(&refs, c, out),
            CollectiveKind::AllToAll => coll::all_to_all(&refs, rank, c, out),
            CollectiveKind::AllReduce => coll::all_reduce(&refs, add),
            CollectiveKind::ReduceScatter => coll::reduce_scatter(&refs, rank, add, c, out),
            CollectiveKind::AllSlice => coll::all_slice(x, rank, refs.len(), c, out),
            CollectiveKind::CollectivePermute => unreachable!("handled above"),
        }
        .map_err(invalid)
    }
}

/// `t` with one added to its last element.
fn corrupt(mut t: HostTensor) -> HostTensor {
    with_array!(&mut t, a: T => {
        if let Some(x) = a.iter_mut().last() {
            *x = T::from_scalar(Scalar::Float(x.to_f64() + 1.0));
        }
    });
    t
}

impl Device for BrokenDevice {
    type Buffer = CpuBuffer;

    fn id(&self) -> i64 {
        self.id
    }

    fn buffer_type(&self, b: &CpuBuffer) -> TensorType {
        b.tensor_type()
    }

    fn read_scalar(&mut self, b: &CpuBuffer) -> Result<HostTensor, DeviceError> {
        Ok((**b).clone())
    }

    fn op(
        &mut self,
        kind: &OpKind,
        operands: &[&CpuBuffer],
        result_types: &[TensorType],
    ) -> Result<Vec<CpuBuffer>, DeviceError> {
        let refs: Vec<&HostTensor> = operands.iter().map(|b| &***b).collect();
        let out = eval_op(kind, &refs, result_types, Parallelism::None)?;
        Ok(out.into_iter().map(Arc::new).collect())
    }

    fn iota(&mut self, ty: &TensorType, dim: usize, offset: i64) -> Result<CpuBuffer, DeviceError> {
        local::iota(ty, dim, offset).map(Arc::new).map_err(invalid)
    }

    fn mask(
        &mut self,
        x: &CpuBuffer,
        dim: usize,
        valid: i64,
        fill: Scalar,
    ) -> Result<CpuBuffer, DeviceError> {
        local::mask(x, dim, valid, fill)
            .map(Arc::new)
            .map_err(invalid)
    }

    fn slice_dim(
        &mut self,
        x: &CpuBuffer,
        dim: usize,
        start: i64,
        size: i64,
    ) -> Result<CpuBuffer, DeviceError> {
        local::slice_dim(x, dim, start, size)
            .map(Arc::new)
            .map_err(invalid)
    }

    fn remap(
        &mut self,
        sources: &[&CpuBuffer],
        fill: Option<&CpuBuffer>,
        ty: &TensorType,
        dim: usize,
        table: &[RemapEntry],
    ) -> Result<CpuBuffer, DeviceError> {
        let refs: Vec<&HostTensor> = sources.iter().map(|b| &***b).collect();
        local::remap(&refs, fill.map(|f| &**f), ty, dim, table)
            .map(Arc::new)
            .map_err(invalid)
    }

    fn collective(
        &mut self,
        instance: u64,
        c: &Collective,
        part: Participation<'_>,
        x: &CpuBuffer,
        out: &TensorType,
    ) -> Result<CpuBuffer, DeviceError> {
        let shape = coll::dims(&out.shape).map_err(invalid)?;
        let r = self.right(instance, c, part, x, &shape)?;
        Ok(Arc::new(if self.id == self.victim {
            corrupt(r)
        } else {
            r
        }))
    }
}

#[test]
fn a_broken_collective_fails_the_check_and_names_the_device() {
    let devices: Vec<i64> = (0..4).collect();
    for op in BenchOp::ALL {
        for elem in [ElemType::F32, ElemType::BF16] {
            let b = bench(op, devices.clone(), 256, elem);
            // The same backend without a victim passes: the check is not
            // failing for another reason.
            let fine = time_collective(&Broken { victim: -1 }, &b).unwrap();
            assert!(fine.ok(), "{op}: {:?}", fine.error);
            let r = time_collective(&Broken { victim: 2 }, &b).unwrap();
            assert!(!r.ok(), "{op} {}: a corrupted result passed", elem.name());
            let e = r.error.unwrap();
            let last = out_elems(op, &b) - 1;
            assert!(e.contains("device 2"), "{op}: {e}");
            assert!(e.contains(&format!("element {last}")), "{op}: {e}");
            assert!(e.contains(op.name()), "{op}: {e}");
        }
    }
}

/// Elements of one device's result for `b`.
fn out_elems(op: BenchOp, b: &CommBench) -> usize {
    let c = meshrun_runtime::comm_bench::bench_collective(op, &b.devices, b.bytes, b.elem).unwrap();
    c.out_local_shape.iter().product::<i64>() as usize
}
