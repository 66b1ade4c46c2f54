//! The reference semantics of `sdy.manual_computation` (`jax.shard_map`):
//! its body is SPMD by definition, so the reference runs it once per
//! device of its mesh, in lockstep op by op.
//!
//! - Each operand is cut into the blocks its `in_shardings` entry gives
//!   along the manual axes ([`shard_io::shard`]); free axes keep the full
//!   extent, so devices that differ only along free axes hold (and compute)
//!   the same values. Device `p` is mesh position `p` (its id
//!   `mesh.device_at(p)`), the partition id collectives and
//!   `partition_id` name.
//! - Local ops run per device through the kernels; the user's collectives
//!   combine the devices' values ([`crate::reference_collectives`]).
//! - Results are rebuilt per `out_shardings` ([`shard_io::gather`]): the
//!   blocks along manual-axis-sharded dimensions are concatenated; along
//!   the others the devices must agree and the first device in mesh order
//!   that holds a block gives it, as JAX's replication check assumes.
//! - `while`, `case` and `func.call` in the body run per device, and need
//!   not be uniform: a `case` runs each branch for the devices that take
//!   it, a `while` runs until every device's condition is false (a device
//!   whose condition is false keeps its values). A collective inside such
//!   divergent control flow is an error unless every member of each of its
//!   groups is there (on devices the program would hang).
//! - Nested manual computations cut each device's value along their own
//!   manual axes and rebuild it from the devices that agree with it on the
//!   enclosing manual axes. They must use the same mesh.

use std::rc::Rc;

use meshrun_compiler::ir::ops::call::Call;
use meshrun_compiler::ir::ops::manual_computation::ManualComputation;
use meshrun_compiler::ir::{Function, Module, OpData, OpId, OpKind, Region, TensorType, Value};
use meshrun_compiler::partition::ProgramIo;
use meshrun_compiler::sharding::{DimSharding, Mesh, MeshRef, TensorSharding};
use meshrun_kernels::{eval_op, HostTensor, Parallelism};

use crate::error::RuntimeError;
use crate::reference_collectives::{is_collective, run_collective, Lanes};
use crate::reference_scope::{region_uses, MAX_CALL_DEPTH};
use crate::shard_io;

/// Meshes larger than this are refused: the reference holds every
/// device's values at once.
const MAX_DEVICES: i64 = 4096;

/// Run manual computation `op` (op `index` of `f`) on its global
/// `operands`; its global results.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_manual(
    module: &Module,
    par: Parallelism,
    max_loop_iterations: Option<u64>,
    f: &Function,
    index: usize,
    op: &OpData,
    operands: &[&HostTensor],
    depth: usize,
) -> Result<Vec<HostTensor>, RuntimeError> {
    let err = |message: String| malformed(f, index, op, message);
    let (OpKind::ManualComputation(mc), [body]) = (&op.kind, op.regions.as_slice()) else {
        return Err(err("not a manual computation with one region".into()));
    };
    let mesh = mesh_of(module, mc).map_err(err)?;
    let n = mesh.num_devices();
    if !(1..=MAX_DEVICES).contains(&n) {
        return Err(err(format!(
            "a mesh of {n} devices; the reference runs at most {MAX_DEVICES}"
        )));
    }
    let spmd = Spmd {
        module,
        par,
        max_loop_iterations,
        devices: mesh.device_list(),
        mesh,
    };
    let mut args: Vec<Lanes> = Vec::with_capacity(operands.len());
    for (i, (&t, s)) in operands.iter().zip(&mc.in_shardings).enumerate() {
        let io = spmd.io(mc, s, t.tensor_type());
        let mut lanes: Lanes = vec![None; spmd.devices.len()];
        let blocks =
            shard_io::shard(t, &io, &spmd.devices).map_err(|e| err(format!("operand {i}: {e}")))?;
        for (block, holders) in blocks {
            let block = Rc::new(block);
            for p in holders {
                lanes[p] = Some(block.clone());
            }
        }
        args.push(lanes);
    }
    let active = vec![true; spmd.devices.len()];
    let mut env: Env = vec![None; f.values.len()];
    let out = spmd.run_region(f, &mut env, body, args, &active, &mc.manual_axes, depth)?;
    let mut results = Vec::with_capacity(out.len());
    for (j, ((lanes, s), &v)) in out
        .iter()
        .zip(&mc.out_shardings)
        .zip(&op.results)
        .enumerate()
    {
        let io = spmd.io(mc, s, f.ty(v).clone());
        let global = shard_io::gather(&io, &spmd.devices, false, |p| {
            lanes[p]
                .as_deref()
                .cloned()
                .ok_or_else(|| format!("device {p} has no value"))
        })
        .map_err(|e| err(format!("result {j}: {e}")))?;
        results.push(global);
    }
    Ok(results)
}

fn malformed(f: &Function, index: usize, op: &OpData, message: String) -> RuntimeError {
    RuntimeError::Malformed {
        func: f.name.clone(),
        op_index: index,
        pos: op.pos,
        message,
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

/// The values of one function (or body) run so far, on every device.
type Env = Vec<Option<Lanes>>;

struct Spmd<'m> {
    module: &'m Module,
    par: Parallelism,
    max_loop_iterations: Option<u64>,
    mesh: Mesh,
    /// Device ids in mesh order: lane `p` is device `devices[p]`.
    devices: Vec<i64>,
}

impl Spmd<'_> {
    /// How a value of type `global` is laid out along `mc`'s manual axes
    /// by `s` (its free axes dropped: the body sees them whole).
    fn io(&self, mc: &ManualComputation, s: &TensorSharding, global: TensorType) -> ProgramIo {
        let manual = |axes: &[meshrun_compiler::sharding::AxisRef]| {
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

    /// Run function `g` on every active device.
    fn run_function(
        &self,
        g: &Function,
        args: Vec<Lanes>,
        active: &[bool],
        manual: &[String],
        depth: usize,
    ) -> Result<Vec<Lanes>, RuntimeError> {
        if depth > MAX_CALL_DEPTH {
            return Err(RuntimeError::CallDepth {
                func: g.name.clone(),
                limit: MAX_CALL_DEPTH,
            });
        }
        let mut env: Env = vec![None; g.values.len()];
        bind(&mut env, &g.args, args);
        self.run_block(g, &mut env, &g.body, &g.returns, active, manual, depth)?;
        values(g, &env, &g.returns, g.body.len(), g.return_pos)
    }

    /// Run region `r` with its arguments bound to `args`; what it returns.
    #[allow(clippy::too_many_arguments)]
    fn run_region(
        &self,
        f: &Function,
        env: &mut Env,
        r: &Region,
        args: Vec<Lanes>,
        active: &[bool],
        manual: &[String],
        depth: usize,
    ) -> Result<Vec<Lanes>, RuntimeError> {
        bind(env, &r.args, args);
        self.run_block(f, env, &r.body, &r.returns, active, manual, depth)?;
        values(f, env, &r.returns, r.body.len(), r.return_pos)
    }

    /// Run the ops `ids` on the active devices, freeing each value defined
    /// in the block after its last use in it (`keep`: the block's returns).
    /// `manual`: the manual axes of the enclosing manual computations.
    #[allow(clippy::too_many_arguments)]
    fn run_block(
        &self,
        f: &Function,
        env: &mut Env,
        ids: &[OpId],
        keep: &[Value],
        active: &[bool],
        manual: &[String],
        depth: usize,
    ) -> Result<(), RuntimeError> {
        let last = block_last_uses(f, ids, keep);
        for (index, &id) in ids.iter().enumerate() {
            let op = f.op(id);
            let operands = op
                .operands
                .iter()
                .map(|&v| {
                    lookup(env, v).ok_or_else(|| {
                        malformed(
                            f,
                            index,
                            op,
                            format!(
                                "{} uses value #{} before it is defined",
                                op.kind.name(),
                                v.0
                            ),
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            let results = self.op(f, env, index, op, operands, active, manual, depth)?;
            if results.len() != op.results.len() {
                return Err(malformed(
                    f,
                    index,
                    op,
                    format!(
                        "{} produced {} results but declares {}",
                        op.kind.name(),
                        results.len(),
                        op.results.len()
                    ),
                ));
            }
            bind(env, &op.results, results);
            for v in &last[index] {
                env[v.index()] = None;
            }
        }
        Ok(())
    }

    /// One op on every active device.
    #[allow(clippy::too_many_arguments)]
    fn op(
        &self,
        f: &Function,
        env: &mut Env,
        index: usize,
        op: &OpData,
        operands: Vec<Lanes>,
        active: &[bool],
        manual: &[String],
        depth: usize,
    ) -> Result<Vec<Lanes>, RuntimeError> {
        let err = |message: String| malformed(f, index, op, message);
        let n = active.len();
        match (&op.kind, op.regions.as_slice()) {
            (kind, []) if is_collective(kind) => {
                let [x] = operands.as_slice() else {
                    return Err(err(format!("{} takes one operand here", kind.name())));
                };
                let ty = self.result_type(f, op, 0).map_err(&err)?;
                let out = run_collective(kind, x, active, ty, self.par)
                    .map_err(|e| err(format!("{}: {e}", kind.name())))?;
                Ok(vec![out])
            }
            (OpKind::PartitionId(_), []) => {
                let lanes = (0..n)
                    .map(|p| {
                        let id = HostTensor::from_vec(&[], vec![p as u32]);
                        active[p].then(|| id.map(Rc::new)).transpose()
                    })
                    .collect::<Result<Lanes, _>>()
                    .map_err(|e| err(e.to_string()))?;
                Ok(vec![lanes])
            }
            (OpKind::Call(Call { callee }), []) => {
                let g = self
                    .module
                    .func(callee)
                    .ok_or_else(|| err(format!("call of @{callee}, which is not defined")))?;
                if operands.len() != g.args.len() {
                    return Err(err(format!(
                        "@{callee} takes {} arguments, the call passes {}",
                        g.args.len(),
                        operands.len()
                    )));
                }
                self.run_function(g, operands, active, manual, depth + 1)
            }
            (OpKind::ShardingConstraint(_) | OpKind::Reshard(_) | OpKind::ShardingGroup(_), []) => {
                if op.results.len() > operands.len() {
                    return Err(err(format!(
                        "{} has {} results for {} operands",
                        op.kind.name(),
                        op.results.len(),
                        operands.len()
                    )));
                }
                Ok(operands.into_iter().take(op.results.len()).collect())
            }
            (kind, []) => {
                let types: Vec<TensorType> = op.results.iter().map(|&v| f.ty(v).clone()).collect();
                let mut out: Vec<Lanes> = vec![vec![None; n]; op.results.len()];
                for p in (0..n).filter(|&p| active[p]) {
                    let refs = operands
                        .iter()
                        .map(|l| l[p].as_deref().ok_or_else(|| err(no_value(p))))
                        .collect::<Result<Vec<_>, _>>()?;
                    let rs = eval_op(kind, &refs, &types, self.par).map_err(|source| {
                        RuntimeError::Kernel {
                            func: f.name.clone(),
                            op_index: index,
                            pos: op.pos,
                            source,
                        }
                    })?;
                    for (o, r) in out.iter_mut().zip(rs) {
                        o[p] = Some(Rc::new(r));
                    }
                }
                Ok(out)
            }
            (OpKind::While(_), [cond, body]) => self.run_while(
                f,
                env,
                index,
                op,
                operands,
                [cond, body],
                active,
                manual,
                depth,
            ),
            (OpKind::Case(_), branches) => {
                let [which] = operands.as_slice() else {
                    return Err(err("case takes one operand, the branch index".into()));
                };
                let mut out: Vec<Lanes> = vec![vec![None; n]; op.results.len()];
                // Each branch runs for the devices whose index picks it; an
                // index out of range runs the last branch (StableHLO).
                let count = branches.len() as i64;
                let mut taken = vec![None; n];
                for p in (0..n).filter(|&p| active[p]) {
                    let k = which[p]
                        .as_deref()
                        .and_then(HostTensor::scalar_i64)
                        .ok_or_else(|| err("the branch index must be an integer scalar".into()))?;
                    taken[p] = Some(if (0..count).contains(&k) {
                        k
                    } else {
                        count - 1
                    });
                }
                for (k, branch) in branches.iter().enumerate() {
                    let on: Vec<bool> = taken.iter().map(|t| *t == Some(k as i64)).collect();
                    if !on.contains(&true) {
                        continue;
                    }
                    let rs = self.run_region(f, env, branch, Vec::new(), &on, manual, depth)?;
                    for (o, r) in out.iter_mut().zip(rs) {
                        for p in (0..n).filter(|&p| on[p]) {
                            o[p] = r[p].clone();
                        }
                    }
                }
                Ok(out)
            }
            (OpKind::ManualComputation(mc), [body]) => {
                self.nested(f, env, index, op, mc, body, operands, active, manual, depth)
            }
            (kind, regions) => Err(err(format!(
                "{} with {} region(s) cannot be interpreted",
                kind.name(),
                regions.len()
            ))),
        }
    }

    fn result_type<'f>(
        &self,
        f: &'f Function,
        op: &OpData,
        i: usize,
    ) -> Result<&'f TensorType, String> {
        op.results
            .get(i)
            .map(|&v| f.ty(v))
            .ok_or_else(|| format!("{} has no result {i}", op.kind.name()))
    }

    /// A `while` on the active devices: each device loops until its own
    /// condition is false.
    #[allow(clippy::too_many_arguments)]
    fn run_while(
        &self,
        f: &Function,
        env: &mut Env,
        index: usize,
        op: &OpData,
        mut carried: Vec<Lanes>,
        [cond, body]: [&Region; 2],
        active: &[bool],
        manual: &[String],
        depth: usize,
    ) -> Result<Vec<Lanes>, RuntimeError> {
        let err = |message: String| malformed(f, index, op, message);
        let mut running = active.to_vec();
        let mut iterations = 0u64;
        loop {
            crate::exec_options::count_loop_iteration(&mut iterations, self.max_loop_iterations)
                .map_err(err)?;
            let p = self.run_region(f, env, cond, carried.clone(), &running, manual, depth)?;
            for (d, on) in running.iter_mut().enumerate().filter(|(_, on)| **on) {
                let go = p
                    .first()
                    .and_then(|l| l[d].as_deref())
                    .and_then(HostTensor::scalar_bool)
                    .ok_or_else(|| err("the cond region must return an i1 scalar".into()))?;
                *on = go;
            }
            if !running.contains(&true) {
                return Ok(carried);
            }
            let next = self.run_region(f, env, body, carried.clone(), &running, manual, depth)?;
            for (c, nx) in carried.iter_mut().zip(next) {
                for (d, v) in nx.into_iter().enumerate() {
                    if running[d] {
                        c[d] = v;
                    }
                }
            }
        }
    }

    /// A manual computation inside another: each device cuts its own value
    /// along the inner manual axes and rebuilds the results from the
    /// devices that agree with it on the enclosing manual axes `outer`.
    #[allow(clippy::too_many_arguments)]
    fn nested(
        &self,
        f: &Function,
        env: &mut Env,
        index: usize,
        op: &OpData,
        mc: &ManualComputation,
        body: &Region,
        operands: Vec<Lanes>,
        active: &[bool],
        outer: &[String],
        depth: usize,
    ) -> Result<Vec<Lanes>, RuntimeError> {
        let err = |message: String| malformed(f, index, op, message);
        let mesh = mesh_of(self.module, mc).map_err(&err)?;
        if mc.mesh_ref().is_some() && mesh != self.mesh {
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
                cut[p] = Some(Rc::new(block));
            }
            args.push(cut);
        }
        let mut inner: Vec<String> = outer.to_vec();
        inner.extend(mc.manual_axes.iter().cloned());
        let out = self.run_region(f, env, body, args, active, &inner, depth)?;
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
                rebuilt[p] = Some(Rc::new(global));
            }
            results.push(rebuilt);
        }
        Ok(results)
    }
}

fn no_value(p: usize) -> String {
    format!("device {p} has no value for an operand")
}

fn bind(env: &mut Env, vs: &[Value], lanes: Vec<Lanes>) {
    for (&v, l) in vs.iter().zip(lanes) {
        if let Some(e) = env.get_mut(v.index()) {
            *e = Some(l);
        }
    }
}

fn lookup(env: &Env, v: Value) -> Option<Lanes> {
    env.get(v.index()).and_then(|s| s.clone())
}

/// The values `vs` (a block's returns).
fn values(
    f: &Function,
    env: &Env,
    vs: &[Value],
    op_index: usize,
    pos: meshrun_compiler::SrcPos,
) -> Result<Vec<Lanes>, RuntimeError> {
    vs.iter()
        .map(|&v| {
            lookup(env, v).ok_or_else(|| RuntimeError::Malformed {
                func: f.name.clone(),
                op_index,
                pos,
                message: format!("a return uses value #{} before it is defined", v.0),
            })
        })
        .collect()
}

/// Per op of the block `ids`: the values defined in the block whose last
/// use in the block it is (a use in an op's regions counts as that op's), so
/// they can be freed right after; values in `keep` and values never used
/// stay. Values from outside the block are never freed here: the block
/// may run again (a loop body) or its caller still needs them.
fn block_last_uses(f: &Function, ids: &[OpId], keep: &[Value]) -> Vec<Vec<Value>> {
    let mut defined = std::collections::HashMap::new();
    for &id in ids {
        for &r in &f.op(id).results {
            defined.insert(r, None);
        }
    }
    for (pos, &id) in ids.iter().enumerate() {
        let op = f.op(id);
        let used = op
            .operands
            .iter()
            .copied()
            .chain(op.regions.iter().flat_map(|r| region_uses(f, r)));
        for v in used {
            if let Some(at) = defined.get_mut(&v) {
                *at = Some(pos);
            }
        }
    }
    let mut out = vec![Vec::new(); ids.len()];
    for (v, at) in defined {
        if let Some(at) = at.filter(|_| !keep.contains(&v)) {
            out[at].push(v);
        }
    }
    out
}
