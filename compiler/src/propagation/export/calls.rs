//! Named computations back to functions, as Shardy's conservative
//! pipeline does after propagation:
//! 0. `PreOrderFuncsPass` (before its propagation): the functions in
//!    reverse post-order of the call graph. Every call is a named
//!    computation by then, so no function calls another and the order is
//!    the module's, reversed: the functions exported below are appended
//!    after them in that order. Only in a module with a `main`: the entry
//!    of one without is its first public function, which reversing would
//!    change (`Module::entry`), so that the printed module's entry is the
//!    one partitioned;
//! 1. `ExportNamedComputationsPass`: innermost first, each
//!    `sdy.named_computation` becomes a private function (its name, made
//!    unique with `_0`, `_1`, ... like MLIR's symbol table) whose argument
//!    shardings are the block arguments', and a `func.call` of it whose
//!    `sdy.sharding` is the named computation's;
//! 2. `PropagateToFuncResultsPass`: every function but the entry takes
//!    the sharding of each returned value as its result sharding;
//! 3. `UnflattenCallGraphPass`: calls of functions with the same origin
//!    and the same argument and result shardings call the first such
//!    function (a function called from several places with one sharding
//!    is printed once; with different shardings, once per sharding), and
//!    the private functions no one calls are dropped (symbol DCE);
//! 4. `InsertFuncCallReshardsPass`: where a call's result sharding is not
//!    its callee's result sharding, the call takes the callee's and an
//!    `sdy.reshard` after it gives its users the sharding they expect.

use std::collections::{HashMap, HashSet};

use crate::ir::copy::OpCopier;
use crate::ir::{Function, Module, OpId, OpKind, ParamAttrs, Value, ValueDef, Visibility};
use crate::propagation::blocks;
use crate::propagation::provenance::{FuncProvenance, Origin, Slot};
use crate::propagation::values;
use crate::sharding::TensorSharding;

use super::io_shardings::closed;
use crate::ir::ops::reshard::Reshard;

/// Run the four steps on `module`; `provenance` (one per function) stays
/// aligned with `module.funcs`.
pub fn export_calls(module: &mut Module, provenance: &mut Vec<FuncProvenance>) {
    if module.func("main").is_some() {
        module.funcs.reverse();
        provenance.reverse();
    }
    let mut origin: HashMap<String, String> = HashMap::new();
    let mut counter = 0usize;
    let originals = module.funcs.len();
    for fi in 0..originals {
        for nc in post_order_named_computations(&module.funcs[fi]) {
            let (g, prov) = export_one(module, fi, nc, &mut counter, &provenance[fi]);
            origin.insert(
                g.name.clone(),
                named_computation_name(&module.funcs[fi], nc),
            );
            turn_into_call(&mut module.funcs[fi], nc, &g.name);
            module.funcs.push(g);
            provenance.push(prov);
        }
    }
    let entry = module.entry().map(|f| f.name.clone());
    for f in &mut module.funcs {
        if Some(&f.name) != entry.as_ref() {
            propagate_to_results(f);
        }
    }
    unflatten(module, &origin);
    let live = live_functions(module);
    let mut keep = module.funcs.iter().map(|f| live.contains(&f.name));
    provenance.retain(|_| keep.next().unwrap_or(true));
    module.funcs.retain(|f| live.contains(&f.name));
    insert_call_reshards(module);
}

/// The named computations of `f`, each after those inside it.
fn post_order_named_computations(f: &Function) -> Vec<OpId> {
    fn walk(f: &Function, ids: &[OpId], out: &mut Vec<OpId>, depth: usize) {
        for &id in ids {
            if depth < 64 {
                for r in &f.op(id).regions {
                    walk(f, &r.body, out, depth + 1);
                }
            }
            if matches!(f.op(id).kind, OpKind::NamedComputation(_)) {
                out.push(id);
            }
        }
    }
    let mut out = Vec::new();
    walk(f, &f.body, &mut out, 0);
    out
}

fn named_computation_name(f: &Function, nc: OpId) -> String {
    match &f.op(nc).kind {
        OpKind::NamedComputation(n) => n.name().to_string(),
        _ => String::new(),
    }
}

/// `base`, or `base_N` with the next free `N` of the pass (MLIR's
/// `SymbolTable::insert` counts across names).
fn unique_name(module: &Module, base: &str, counter: &mut usize) -> String {
    let taken = |n: &str| module.funcs.iter().any(|f| f.name == n);
    if !taken(base) {
        return base.to_string();
    }
    loop {
        let candidate = format!("{base}_{counter}");
        *counter += 1;
        if !taken(&candidate) {
            return candidate;
        }
    }
}

/// The function made of named computation `nc` of function `fi`, and its
/// provenance (carried over from the caller's).
fn export_one(
    module: &Module,
    fi: usize,
    nc: OpId,
    counter: &mut usize,
    caller_prov: &FuncProvenance,
) -> (Function, FuncProvenance) {
    let f = &module.funcs[fi];
    let op = f.op(nc);
    let name = unique_name(module, &named_computation_name(f, nc), counter);
    let Some(region) = op.regions.first() else {
        return (Function::new(name, Vec::new()), FuncProvenance::default());
    };
    let arg_types = region.args.iter().map(|&a| f.ty(a).clone()).collect();
    let mut g = Function::new(name, arg_types);
    g.visibility = Visibility::Private;
    g.pos = op.pos;
    g.return_pos = region.return_pos;
    if let OpKind::NamedComputation(n) = &op.kind {
        for (i, s) in n.in_shardings.iter().flatten().enumerate() {
            if let Some(attrs) = g.arg_attrs.get_mut(i) {
                attrs.sharding = s.clone();
            }
        }
    }
    let mut copier = OpCopier::new(f);
    for (&a, &b) in region.args.iter().zip(&g.args) {
        copier.map[a.index()] = Some(b);
    }
    let mut body = Vec::with_capacity(region.body.len());
    for &id in &region.body {
        // The body was verified before propagation: every value is
        // defined before its use, so copying cannot fail.
        if let Ok(new) = copier.copy_op(&mut g, id) {
            body.push(new);
        }
    }
    g.body = body;
    let returns: Vec<Value> = region
        .returns
        .iter()
        .filter_map(|&v| copier.lookup(v).ok())
        .collect();
    g.result_types = returns.iter().map(|&v| g.ty(v).clone()).collect();
    g.result_attrs = vec![ParamAttrs::default(); returns.len()];
    g.returns = returns;
    let prov = carry_provenance(f, &g, &copier.map, caller_prov);
    (g, prov)
}

/// The caller's provenance of the values copied into `g`, with values and
/// ops renamed to `g`'s.
fn carry_provenance(
    f: &Function,
    g: &Function,
    map: &[Option<Value>],
    caller: &FuncProvenance,
) -> FuncProvenance {
    let mut ops: HashMap<OpId, OpId> = HashMap::new();
    for (old, new) in map.iter().enumerate() {
        let (Some(new), Some(ValueDef::Result { op, .. })) =
            (new, f.values.get(old).map(|d| d.def))
        else {
            continue;
        };
        if let ValueDef::Result { op: new_op, .. } = g.value(*new).def {
            ops.insert(op, new_op);
        }
    }
    let mut out = FuncProvenance::new(g.values.len(), g.returns.len());
    let value = |v: Value| map.get(v.index()).copied().flatten();
    for (old, new) in map.iter().enumerate() {
        let Some(new) = new else {
            continue;
        };
        let entries = caller.get(Slot::Value(Value(old as u32))).to_vec();
        let entries = entries.into_iter().map(|mut e| {
            e.origin = match e.origin {
                Origin::Op {
                    op,
                    factor,
                    from,
                    stage,
                } => match ops.get(&op) {
                    Some(&op) => Origin::Op {
                        op,
                        factor,
                        from: from.and_then(|s| match s {
                            Slot::Value(v) => value(v).map(Slot::Value),
                            Slot::Result(_) => None,
                        }),
                        stage,
                    },
                    // Propagated through the call's edge or in the caller.
                    None => Origin::Caller,
                },
                Origin::Group {
                    from: Slot::Value(v),
                } => match value(v) {
                    Some(v) => Origin::Group {
                        from: Slot::Value(v),
                    },
                    None => Origin::Caller,
                },
                Origin::Constraint {
                    from: Slot::Value(v),
                } => match value(v) {
                    Some(v) => Origin::Constraint {
                        from: Slot::Value(v),
                    },
                    None => Origin::Caller,
                },
                Origin::Annotated => Origin::Annotated,
                _ => Origin::Caller,
            };
            e
        });
        if let Some(list) = out.values.get_mut(new.index()) {
            list.extend(entries);
        }
    }
    out
}

/// Named computation `nc` of `f` becomes a call of `callee` with the same
/// operands, results and result shardings.
fn turn_into_call(f: &mut Function, nc: OpId, callee: &str) {
    let op = f.op_mut(nc);
    op.kind = OpKind::Call(crate::ir::ops::call::Call::new(callee));
    op.regions.clear();
}

/// Each result of `f` takes the sharding of the value it returns.
fn propagate_to_results(f: &mut Function) {
    for i in 0..f.returns.len() {
        let s = values::sharding_of(f, f.returns[i]).cloned();
        if let Some(attrs) = f.result_attrs.get_mut(i) {
            attrs.sharding = s;
        }
    }
}

type Key = (
    String,
    Vec<Option<TensorSharding>>,
    Vec<Option<TensorSharding>>,
);

fn key(f: &Function, origin: &HashMap<String, String>) -> Key {
    (
        origin
            .get(&f.name)
            .cloned()
            .unwrap_or_else(|| f.name.clone()),
        f.arg_attrs.iter().map(|a| a.sharding.clone()).collect(),
        f.result_attrs.iter().map(|a| a.sharding.clone()).collect(),
    )
}

/// Calls of functions with one key call the first function with that key
/// (calls in module order, each function's calls in program order).
fn unflatten(module: &mut Module, origin: &HashMap<String, String>) {
    let keys: HashMap<String, Key> = module
        .funcs
        .iter()
        .map(|f| (f.name.clone(), key(f, origin)))
        .collect();
    let mut first: HashMap<Key, String> = HashMap::new();
    for f in &module.funcs {
        for id in f.all_ops() {
            if let Some(callee) = f.op(id).kind.callee() {
                if let Some(k) = keys.get(callee) {
                    first.entry(k.clone()).or_insert_with(|| callee.to_string());
                }
            }
        }
    }
    for f in &mut module.funcs {
        for id in f.all_ops() {
            if let Some(callee) = f.op_mut(id).kind.callee_mut() {
                if let Some(target) = keys.get(callee.as_str()).and_then(|k| first.get(k)) {
                    *callee = target.clone();
                }
            }
        }
    }
}

/// The functions reachable by calls from the non-private ones.
fn live_functions(module: &Module) -> HashSet<String> {
    let mut live: HashSet<String> = HashSet::new();
    let mut stack: Vec<&Function> = module
        .funcs
        .iter()
        .filter(|f| f.visibility != Visibility::Private)
        .collect();
    for f in &stack {
        live.insert(f.name.clone());
    }
    while let Some(f) = stack.pop() {
        for id in f.all_ops() {
            if let Some(callee) = f.op(id).kind.callee() {
                if let Some(g) = module.func(callee) {
                    if live.insert(g.name.clone()) {
                        stack.push(g);
                    }
                }
            }
        }
    }
    live
}

/// Shardy's `isEquivalent`: the same sharding once both are closed.
fn equivalent(a: Option<&TensorSharding>, b: Option<&TensorSharding>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => closed(a) == closed(b),
        (None, None) => true,
        _ => false,
    }
}

/// Shardy's `InsertFuncCallReshardsPass` on its own (step 4 above).
pub fn insert_call_reshards(module: &mut Module) {
    let results: HashMap<String, Vec<Option<TensorSharding>>> = module
        .funcs
        .iter()
        .map(|f| {
            let s = f.result_attrs.iter().map(|a| a.sharding.clone()).collect();
            (f.name.clone(), s)
        })
        .collect();
    for f in &mut module.funcs {
        for b in blocks::blocks(f) {
            let ids = blocks::ops(f, b).to_vec();
            let mut out = Vec::with_capacity(ids.len());
            let mut replace: Vec<Option<Value>> = vec![None; f.values.len()];
            let mut keep_operand: Vec<(OpId, Value)> = Vec::new();
            for id in ids {
                out.push(id);
                let Some(callee) = f.op(id).kind.callee() else {
                    continue;
                };
                let Some(func_results) = results.get(callee) else {
                    continue;
                };
                let call_results = f.op(id).shardings.clone();
                let func_results: Vec<Option<TensorSharding>> =
                    if func_results.iter().all(Option::is_none) {
                        match &call_results {
                            None => continue,
                            Some(c) => c.iter().map(|s| Some(closed_replicated(s))).collect(),
                        }
                    } else {
                        func_results.clone()
                    };
                let results_of_call = f.op(id).results.clone();
                for (k, &r) in results_of_call.iter().enumerate() {
                    let want = call_results.as_ref().and_then(|c| c.get(k));
                    let have = func_results.get(k).and_then(Option::as_ref);
                    if equivalent(have, want) {
                        continue;
                    }
                    let Some(target) = want.cloned().or_else(|| have.map(closed_replicated)) else {
                        continue;
                    };
                    let ty = f.ty(r).clone();
                    let reshard = f.create_op(
                        OpKind::Reshard(Reshard { sharding: target }),
                        vec![r],
                        vec![ty],
                    );
                    f.op_mut(reshard).pos = f.op(id).pos;
                    replace.resize(f.values.len(), None);
                    replace[r.index()] = Some(f.result(reshard));
                    keep_operand.push((reshard, r));
                    out.push(reshard);
                }
                // The call now has its callee's result shardings; a result
                // without one keeps the call's (closed) or becomes open.
                if func_results.iter().all(Option::is_some) {
                    f.op_mut(id).shardings = Some(func_results.into_iter().flatten().collect());
                }
            }
            blocks::set_ops(f, b, out);
            if keep_operand.is_empty() {
                continue;
            }
            f.replace_uses(&replace);
            for (reshard, r) in keep_operand {
                f.op_mut(reshard).operands = vec![r];
            }
        }
    }
}

/// `s`'s mesh, every dimension closed and empty.
fn closed_replicated(s: &TensorSharding) -> TensorSharding {
    let mut out = closed(s);
    for d in &mut out.dims {
        d.axes.clear();
    }
    out.unreduced.clear();
    out
}
