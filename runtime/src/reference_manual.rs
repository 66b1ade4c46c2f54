//! The reference semantics of `sdy.manual_computation` (`jax.shard_map`):
//! its body is SPMD by definition, so the reference runs it on every
//! device of its mesh, in lockstep op by op: the walk's mode of many
//! devices ([`Spmd`], run by [`crate::reference_walk`]).
//!
//! - Each operand is cut into the blocks its `in_shardings` entry gives
//!   along the manual axes ([`shard_io::shard`]); free axes keep the full
//!   extent, so devices that differ only along free axes hold (and compute)
//!   the same values. Device `p` is mesh position `p` (its id
//!   `mesh.device_at(p)`), the partition id collectives and
//!   `partition_id` name.
//! - Local ops, `while`, `case` and `func.call` run per device in the walk
//!   (which lets control flow diverge between devices); the user's
//!   collectives combine the devices' values
//!   ([`crate::reference_collectives`]). A collective inside divergent
//!   control flow is an error unless every member of each of its groups is
//!   there (on devices the program would hang).
//! - Results are rebuilt per `out_shardings` ([`shard_io::gather`]): the
//!   blocks along manual-axis-sharded dimensions are concatenated; along
//!   the others the devices must agree and the first device in mesh order
//!   that holds a block gives it, as JAX's replication check assumes.
//! - Nested manual computations cut each device's value along their own
//!   manual axes and rebuild it from the devices that agree with it on the
//!   enclosing manual axes. They must use the same mesh.

use meshrun_compiler::ir::ops::manual_computation::ManualComputation;
use meshrun_compiler::ir::{Module, OpKind, Region, TensorType};
use meshrun_compiler::partition::ProgramIo;
use meshrun_compiler::sharding::{AxisRef, DimSharding, Mesh, MeshRef, TensorSharding};
use meshrun_kernels::HostTensor;

use crate::error::RuntimeError;
use crate::reference_collectives::{is_collective, run_collective};
use crate::reference_value::{Lanes, Slot};
use crate::reference_walk::{no_value, Env, Mode, Site, Walk};
use crate::shard_io;

/// Meshes larger than this are refused: the reference holds every
/// device's values at once.
const MAX_DEVICES: i64 = 4096;

/// Run manual computation `at` of the unsharded program (one lane per
/// value) on its global `operands`; its global results.
pub(crate) fn enter<'a>(
    walk: &Walk<'_>,
    at: &Site<'_>,
    operands: &[Lanes<'a>],
    depth: usize,
) -> Result<Vec<Lanes<'a>>, RuntimeError> {
    let (mc, body) = manual_computation(at)?;
    let mesh = mesh_of(walk.module, mc).map_err(|e| at.malformed(e))?;
    let n = mesh.num_devices();
    if !(1..=MAX_DEVICES).contains(&n) {
        return Err(at.malformed(format!(
            "a mesh of {n} devices; the reference runs at most {MAX_DEVICES}"
        )));
    }
    let devices = mesh.device_list();
    let spmd = Spmd {
        mesh: &mesh,
        devices: &devices,
        manual: mc.manual_axes.clone(),
    };
    let mut args: Vec<Lanes> = Vec::with_capacity(operands.len());
    for (i, (lanes, s)) in operands.iter().zip(&mc.in_shardings).enumerate() {
        let t = lanes
            .first()
            .and_then(|l| l.as_deref())
            .ok_or_else(|| at.malformed(no_value(0)))?;
        let io = spmd.io(mc, s, t.tensor_type());
        let mut cut: Lanes = vec![None; devices.len()];
        let blocks = shard_io::shard(t, &io, &devices)
            .map_err(|e| at.malformed(format!("operand {i}: {e}")))?;
        // Devices that hold the same block share it.
        for (block, holders) in blocks {
            let block = Slot::new(block);
            for p in holders {
                cut[p] = Some(block.clone());
            }
        }
        args.push(cut);
    }
    // The body is isolated from the program around it: its own values.
    let mut env: Env = vec![None; at.f.values.len()];
    let inner = walk.with(&spmd);
    let out = inner.run_region(at.f, &mut env, body, args, &inner.all_devices(), depth)?;
    let mut results = Vec::with_capacity(out.len());
    for (j, ((lanes, s), &v)) in out
        .iter()
        .zip(&mc.out_shardings)
        .zip(&at.op.results)
        .enumerate()
    {
        let io = spmd.io(mc, s, at.f.ty(v).clone());
        let global = shard_io::gather(&io, &devices, false, |p| {
            lanes[p]
                .as_deref()
                .cloned()
                .ok_or_else(|| format!("device {p} has no value"))
        })
        .map_err(|e| at.malformed(format!("result {j}: {e}")))?;
        results.push(vec![Some(Slot::new(global))]);
    }
    Ok(results)
}

/// `at`'s manual computation and its body.
fn manual_computation<'f>(
    at: &Site<'f>,
) -> Result<(&'f ManualComputation, &'f Region), RuntimeError> {
    match (&at.op.kind, at.op.regions.as_slice()) {
        (OpKind::ManualComputation(mc), [body]) => Ok((mc, body)),
        _ => Err(at.malformed("not a manual computation with one region".into())),
    }
}

/// The mesh a manual computation's shardings name (an empty one, of one
/// device, when it has none: then it has no operands nor results).
fn mesh_of(module: &Module, mc: &ManualComputation) -> Result<Mesh, String> {
    match mc.mesh_ref() {
        None => Ok(Mesh::default()),
        Some(MeshRef::Inline(m)) => Ok(m.clone()),
        Some(MeshRef::Symbol(name)) => module
            .mesh(name)
            .map(|m| m.mesh.clone())
            .ok_or_else(|| format!("unknown mesh @{name}")),
    }
}

/// Every device of a mesh, inside manual computations on `manual` axes
/// (those of the enclosing ones too).
struct Spmd<'s> {
    mesh: &'s Mesh,
    /// Device ids in mesh order: lane `p` is device `devices[p]`.
    devices: &'s [i64],
    manual: Vec<String>,
}

impl Mode for Spmd<'_> {
    fn lanes(&self) -> usize {
        self.devices.len()
    }

    fn device_op<'a>(
        &self,
        walk: &Walk<'_>,
        at: &Site<'_>,
        env: &mut Env<'a>,
        operands: &[Lanes<'a>],
        active: &[bool],
        depth: usize,
    ) -> Option<Result<Vec<Lanes<'a>>, RuntimeError>> {
        match (&at.op.kind, at.op.regions.as_slice()) {
            (kind, []) if is_collective(kind) => Some(collective(walk, at, kind, operands, active)),
            (OpKind::PartitionId(_), []) => Some(partition_ids(at, active)),
            (OpKind::ManualComputation(_), [_]) => {
                Some(self.nested(walk, at, env, operands, active, depth))
            }
            _ => None,
        }
    }
}

/// One of the user's collectives across the active devices.
fn collective<'a>(
    walk: &Walk<'_>,
    at: &Site<'_>,
    kind: &OpKind,
    operands: &[Lanes<'a>],
    active: &[bool],
) -> Result<Vec<Lanes<'a>>, RuntimeError> {
    let [x] = operands else {
        return Err(at.malformed(format!("{} takes one operand here", kind.name())));
    };
    let ty = at
        .op
        .results
        .first()
        .map(|&v| at.f.ty(v))
        .ok_or_else(|| at.malformed(format!("{} has no result 0", kind.name())))?;
    let out = run_collective(kind, x, active, ty, walk.par)
        .map_err(|e| at.malformed(format!("{}: {e}", kind.name())))?;
    Ok(vec![out])
}

/// `partition_id`: each active device's mesh position.
fn partition_ids<'a>(at: &Site<'_>, active: &[bool]) -> Result<Vec<Lanes<'a>>, RuntimeError> {
    let lanes = active
        .iter()
        .enumerate()
        .map(|(p, &on)| {
            let id = HostTensor::from_vec(&[], vec![p as u32]);
            on.then(|| id.map(Slot::new)).transpose()
        })
        .collect::<Result<Lanes, _>>()
        .map_err(|e| at.malformed(e.to_string()))?;
    Ok(vec![lanes])
}

impl Spmd<'_> {
    /// How a value of type `global` is laid out along `mc`'s manual axes
    /// by `s` (its free axes dropped: the body sees them whole).
    fn io(&self, mc: &ManualComputation, s: &TensorSharding, global: TensorType) -> ProgramIo {
        let manual = |axes: &[AxisRef]| {
            axes.iter()
                .filter(|a| mc.is_manual(&a.name))
                .cloned()
                .collect::<Vec<_>>()
        };
        let sharding = TensorSharding {
            mesh: s.mesh.clone(),
            dims: s
                .dims
                .iter()
                .map(|d| DimSharding {
                    axes: manual(&d.axes),
                    is_closed: true,
                    priority: None,
                })
                .collect(),
            replicated: Vec::new(),
            unreduced: Vec::new(),
            unreduced_op: s.unreduced_op,
        };
        ProgramIo {
            value: 0,
            global,
            sharding,
            mesh: self.mesh.clone(),
            memory_kind: None,
            donation: Default::default(),
        }
    }

    /// A manual computation inside another: each device cuts its own value
    /// along the inner manual axes and rebuilds the results from the
    /// devices that agree with it on the enclosing manual axes.
    fn nested<'a>(
        &self,
        walk: &Walk<'_>,
        at: &Site<'_>,
        env: &mut Env<'a>,
        operands: &[Lanes<'a>],
        active: &[bool],
        depth: usize,
    ) -> Result<Vec<Lanes<'a>>, RuntimeError> {
        let (f, op) = (at.f, at.op);
        let err = |message: String| at.malformed(message);
        let (mc, body) = manual_computation(at)?;
        let mesh = mesh_of(walk.module, mc).map_err(err)?;
        if mc.mesh_ref().is_some() && mesh != *self.mesh {
            return Err(err(format!(
                "a manual computation on mesh {mesh} inside one on mesh {}",
                self.mesh
            )));
        }
        let n = active.len();
        let mut args: Vec<Lanes> = Vec::with_capacity(operands.len());
        for (i, (lanes, (s, &v))) in operands
            .iter()
            .zip(mc.in_shardings.iter().zip(&op.operands))
            .enumerate()
        {
            let io = self.io(mc, s, f.ty(v).clone());
            let mut cut: Lanes = vec![None; n];
            for p in (0..n).filter(|&p| active[p]) {
                let t = lanes[p].as_deref().ok_or_else(|| err(no_value(p)))?;
                let (block, _) = shard_io::shard(t, &io, &self.devices[p..=p])
                    .map_err(|e| err(format!("operand {i}: {e}")))?
                    .pop()
                    .ok_or_else(|| err(format!("operand {i}: no block for device {p}")))?;
                cut[p] = Some(Slot::new(block));
            }
            args.push(cut);
        }
        let outer = &self.manual;
        let mut manual = outer.clone();
        manual.extend(mc.manual_axes.iter().cloned());
        let inner = Spmd { manual, ..*self };
        let out = walk
            .with(&inner)
            .run_region(f, env, body, args, active, depth)?;
        let coords = |p: usize| -> Vec<i64> {
            let c = self.mesh.coords_of_linear(p as i64);
            self.mesh
                .axes
                .iter()
                .zip(c)
                .filter(|(a, _)| outer.contains(&a.name))
                .map(|(_, x)| x)
                .collect()
        };
        let mut results = Vec::with_capacity(out.len());
        for (j, ((lanes, s), &v)) in out
            .iter()
            .zip(&mc.out_shardings)
            .zip(&op.results)
            .enumerate()
        {
            let io = self.io(mc, s, f.ty(v).clone());
            let mut rebuilt: Lanes = vec![None; n];
            for p in (0..n).filter(|&p| active[p]) {
                let here = coords(p);
                let peers: Vec<usize> = (0..n).filter(|&q| coords(q) == here).collect();
                if let Some(q) = peers.iter().find(|&&q| !active[q]) {
                    return Err(err(format!(
                        "device {p} rebuilds a result from device {q}, which does not run \
                         this manual computation"
                    )));
                }
                let ids: Vec<i64> = peers.iter().map(|&q| self.devices[q]).collect();
                let global = shard_io::gather(&io, &ids, false, |k| {
                    lanes[peers[k]]
                        .as_deref()
                        .cloned()
                        .ok_or_else(|| no_value(peers[k]))
                })
                .map_err(|e| err(format!("result {j}: {e}")))?;
                rebuilt[p] = Some(Slot::new(global));
            }
            results.push(rebuilt);
        }
        Ok(results)
    }
}
