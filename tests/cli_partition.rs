//! `meshrun partition`: the command line, and a check that the device
//! program it prints computes what JAX computed.
//!
//! The check runs the SPMD program on every device in turn (a plain
//! sequential simulation of the collectives, following the semantics in
//! `compiler/src/partition/reshard/collective.rs` and `program.rs`), with
//! local ops through the CPU kernels, then gathers the outputs by their
//! shardings and compares them with the fixtures' `out_K.npy`. It is a
//! test of the partitioner, not of the runtime (which has its own).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use meshrun::compiler::ir::{ElemType, ReduceKind, Scalar, TensorType};
use meshrun::compiler::partition::{
    partition, DeviceProgram, Instr, LocalId, PartitionedProgram, RemapEntry,
};
use meshrun::compiler::partition::{Collective, CollectiveKind};
use meshrun::compiler::propagation::{propagate, PropagationOptions};
use meshrun::compiler::sharding::layout::TensorLayout;
use meshrun::compiler::text::parse_module;
use meshrun::runtime::npy::read_npy;
use meshrun_kernels::{eval_op, HostTensor, Parallelism};

fn fixture_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/jax")
        .join(name)
}

fn fixture_names() -> Vec<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/jax");
    let mut v: Vec<String> = std::fs::read_dir(root)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.path().join("propagated.mlir").is_file())
                .map(|e| e.file_name().to_string_lossy().to_string())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

// ---------------------------------------------------------------- simulator

/// A local block as f64 values (exact for every element type used here).
#[derive(Clone, Debug)]
struct Block {
    shape: Vec<i64>,
    data: Vec<f64>,
    elem: ElemType,
}

impl Block {
    fn zeros(ty: &TensorType) -> Block {
        Block {
            shape: ty.shape.clone(),
            data: vec![0.0; ty.num_elements() as usize],
            elem: ty.elem,
        }
    }

    fn from_host(t: &HostTensor) -> Block {
        Block {
            shape: t.shape().iter().map(|&d| d as i64).collect(),
            data: t.to_f64_vec(),
            elem: t.elem_type(),
        }
    }

    fn to_host(&self) -> HostTensor {
        let shape: Vec<usize> = self.shape.iter().map(|&d| d as usize).collect();
        // Integer sums wrap (exact in f64 for the fixtures' 32-bit sums).
        let bits = self.elem.bit_width();
        let data = if self.elem.is_integer() && bits < 64 {
            let m = 2f64.powi(bits as i32);
            let signed = !self.elem.is_unsigned();
            let wrap = |v: f64| {
                let r = v.rem_euclid(m);
                if signed && r >= m / 2.0 {
                    r - m
                } else {
                    r
                }
            };
            self.data.iter().map(|&v| wrap(v)).collect()
        } else {
            self.data.clone()
        };
        let t = HostTensor::from_vec(&shape, data).expect("shape fits");
        t.convert(self.elem).expect("convertible")
    }

    fn get(&self, idx: &[i64]) -> f64 {
        if idx.iter().zip(&self.shape).any(|(&i, &n)| i < 0 || i >= n) {
            return 0.0;
        }
        self.data[flat(&self.shape, idx)]
    }
}

fn flat(shape: &[i64], idx: &[i64]) -> usize {
    idx.iter().zip(shape).fold(0, |acc, (&i, &n)| acc * n + i) as usize
}

fn unflat(shape: &[i64], mut f: usize) -> Vec<i64> {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        let n = shape[d].max(1) as usize;
        idx[d] = (f % n) as i64;
        f /= n;
    }
    idx
}

fn digits(mut rank: i64, factors: &[i64]) -> Vec<i64> {
    let mut q = vec![0; factors.len()];
    for d in (0..factors.len()).rev() {
        q[d] = rank % factors[d].max(1);
        rank /= factors[d].max(1);
    }
    q
}

fn compose(q: &[i64], factors: &[i64]) -> i64 {
    q.iter().zip(factors).fold(0, |acc, (&x, &f)| acc * f + x)
}

fn combine(kind: ReduceKind, a: f64, b: f64) -> f64 {
    match kind {
        ReduceKind::Add => a + b,
        ReduceKind::Multiply => a * b,
        ReduceKind::Maximum => a.max(b),
        ReduceKind::Minimum => a.min(b),
        ReduceKind::And => ((a != 0.0) && (b != 0.0)) as i64 as f64,
        ReduceKind::Or => ((a != 0.0) || (b != 0.0)) as i64 as f64,
    }
}

fn scalar_f64(s: &Scalar) -> f64 {
    s.as_f64()
}

fn slice_block(input: &Block, rank: i64, c: &Collective) -> Block {
    let q = digits(rank, &c.dim_factors);
    let mut out = Block::zeros(&TensorType::new(c.out_local_shape.clone(), c.elem));
    for f in 0..out.data.len() {
        let idx = unflat(&out.shape, f);
        let src: Vec<i64> = idx
            .iter()
            .enumerate()
            .map(|(d, &i)| q[d] * c.out_local_shape[d] + i)
            .collect();
        out.data[f] = input.get(&src);
    }
    out
}

/// Run collective `c` on every device's block of `operand`.
fn run_collective(c: &Collective, inputs: &HashMap<i64, Block>) -> HashMap<i64, Block> {
    let mut out = HashMap::new();
    let ty = TensorType::new(c.out_local_shape.clone(), c.elem);
    if c.kind == CollectiveKind::CollectivePermute {
        for &d in inputs.keys() {
            out.insert(d, Block::zeros(&ty));
        }
        for pair in &c.groups {
            out.insert(pair[1], inputs[&pair[0]].clone());
        }
        return out;
    }
    for members in &c.groups {
        let blocks: Vec<&Block> = members.iter().map(|d| &inputs[d]).collect();
        for (rank, &device) in members.iter().enumerate() {
            let rank = rank as i64;
            let block = match c.kind {
                CollectiveKind::AllSlice => slice_block(blocks[rank as usize], rank, c),
                CollectiveKind::AllGather => {
                    let mut o = Block::zeros(&ty);
                    for f in 0..o.data.len() {
                        let idx = unflat(&o.shape, f);
                        let (q, inner): (Vec<i64>, Vec<i64>) = idx
                            .iter()
                            .zip(&c.in_local_shape)
                            .map(|(&i, &n)| if n == 0 { (0, 0) } else { (i / n, i % n) })
                            .unzip();
                        let m = compose(&q, &c.dim_factors) as usize;
                        o.data[f] = blocks[m].get(&inner);
                    }
                    o
                }
                CollectiveKind::AllToAll => {
                    let dims = c.all_to_all.expect("all-to-all dims");
                    let (s, t) = (dims.src_dim, dims.tgt_dim);
                    let mut o = Block::zeros(&ty);
                    for f in 0..o.data.len() {
                        let idx = unflat(&o.shape, f);
                        let n = c.in_local_shape[s];
                        let from = if n == 0 { 0 } else { idx[s] / n };
                        let mut src = idx.clone();
                        src[s] = if n == 0 { 0 } else { idx[s] % n };
                        src[t] = rank * c.out_local_shape[t] + idx[t];
                        o.data[f] = blocks[from as usize].get(&src);
                    }
                    o
                }
                CollectiveKind::AllReduce | CollectiveKind::ReduceScatter => {
                    let kind = c.reduction.expect("reduction");
                    let mut sum = blocks[0].clone();
                    for b in &blocks[1..] {
                        for (a, x) in sum.data.iter_mut().zip(&b.data) {
                            *a = combine(kind, *a, *x);
                        }
                    }
                    if c.kind == CollectiveKind::AllReduce {
                        sum
                    } else {
                        slice_block(&sum, rank, c)
                    }
                }
                CollectiveKind::CollectivePermute => unreachable!(),
            };
            out.insert(device, block);
        }
    }
    out
}

/// Run `p` on `inputs` (global tensors) and return the gathered outputs.
fn run_program(p: &DeviceProgram, inputs: &[HostTensor]) -> Vec<HostTensor> {
    let mut vals: Vec<HashMap<i64, Block>> = vec![HashMap::new(); p.values.len()];
    // Shard the inputs; padding gets a recognisable junk value.
    for (io, t) in p.inputs.iter().zip(inputs) {
        let global = Block::from_host(t);
        let layout = TensorLayout::new(&io.mesh, &io.sharding, &io.global.shape).expect("layout");
        for &d in &p.devices {
            let s = layout.slice(d).expect("device");
            let local = &p.values[io.value].ty;
            let mut b = Block::zeros(local);
            for f in 0..b.data.len() {
                let idx = unflat(&b.shape, f);
                let inside = idx.iter().zip(&s.extent).all(|(&i, &e)| i < e);
                b.data[f] = if inside {
                    let g: Vec<i64> = idx.iter().zip(&s.offset).map(|(i, o)| i + o).collect();
                    global.get(&g)
                } else {
                    1.0e3 // junk in the padding
                };
            }
            vals[io.value].insert(d, b);
        }
    }
    for instr in &p.instrs {
        match instr {
            Instr::Collective {
                collective,
                operand,
                result,
                ..
            } => {
                for (d, b) in &vals[*operand] {
                    assert_eq!(
                        b.shape, collective.in_local_shape,
                        "device {d}: {collective} is given a block of another shape"
                    );
                }
                vals[*result] = run_collective(collective, &vals[*operand]);
            }
            _ => {
                for (pos, &d) in p.devices.iter().enumerate() {
                    let out = run_local(p, instr, pos, d, &vals);
                    for (r, b) in instr.results().into_iter().zip(out) {
                        vals[r].insert(d, b);
                    }
                }
            }
        }
    }
    p.outputs
        .iter()
        .map(|io| {
            let layout =
                TensorLayout::new(&io.mesh, &io.sharding, &io.global.shape).expect("layout");
            let mut g = Block::zeros(&io.global);
            for &d in &p.devices {
                let s = layout.slice(d).expect("device");
                let b = &vals[io.value][&d];
                for f in 0..b.data.len() {
                    let idx = unflat(&b.shape, f);
                    if idx.iter().zip(&s.extent).all(|(&i, &e)| i < e) {
                        let gi: Vec<i64> = idx.iter().zip(&s.offset).map(|(i, o)| i + o).collect();
                        let k = flat(&g.shape, &gi);
                        g.data[k] = b.data[f];
                    }
                }
            }
            g.to_host()
        })
        .collect()
}

fn run_local(
    p: &DeviceProgram,
    instr: &Instr,
    pos: usize,
    d: i64,
    vals: &[HashMap<i64, Block>],
) -> Vec<Block> {
    let get = |v: LocalId| &vals[v][&d];
    match instr {
        Instr::Op {
            kind,
            operands,
            results,
            ..
        } => {
            let hosts: Vec<HostTensor> = operands.iter().map(|&o| get(o).to_host()).collect();
            let refs: Vec<&HostTensor> = hosts.iter().collect();
            let types: Vec<TensorType> = results.iter().map(|&r| p.values[r].ty.clone()).collect();
            eval_op(kind, &refs, &types, Parallelism::None)
                .unwrap_or_else(|e| panic!("{}: {e}", kind.name()))
                .iter()
                .map(Block::from_host)
                .collect()
        }
        Instr::Iota {
            result,
            dim,
            offset,
            ..
        } => {
            let mut b = Block::zeros(&p.values[*result].ty);
            let off = offset.0[pos];
            for f in 0..b.data.len() {
                b.data[f] = (unflat(&b.shape, f)[*dim] + off) as f64;
            }
            vec![b]
        }
        Instr::Mask {
            operand,
            dim,
            valid,
            fill,
            ..
        } => {
            let mut b = get(*operand).clone();
            for f in 0..b.data.len() {
                if unflat(&b.shape, f)[*dim] >= valid.0[pos] {
                    b.data[f] = scalar_f64(fill);
                }
            }
            vec![b]
        }
        Instr::SliceDim {
            operand,
            result,
            dim,
            start,
            ..
        } => {
            let src = get(*operand);
            let mut b = Block::zeros(&p.values[*result].ty);
            for f in 0..b.data.len() {
                let mut idx = unflat(&b.shape, f);
                idx[*dim] += start.0[pos];
                b.data[f] = src.get(&idx);
            }
            vec![b]
        }
        Instr::Remap {
            sources,
            fill,
            result,
            dim,
            table,
            ..
        } => {
            let fill_v = fill.map_or(0.0, |fv| get(fv).data[0]);
            let mut b = Block::zeros(&p.values[*result].ty);
            let row = &table.0[pos];
            for f in 0..b.data.len() {
                let idx = unflat(&b.shape, f);
                b.data[f] = match row[idx[*dim] as usize] {
                    RemapEntry::Fill => fill_v,
                    RemapEntry::Source { source, index } => {
                        let mut src = idx.clone();
                        src[*dim] = index;
                        get(sources[source as usize]).get(&src)
                    }
                };
            }
            vec![b]
        }
        Instr::Collective { .. } | Instr::Loop(_) | Instr::Branch(_) => {
            unreachable!("this test program has no collectives, loops or branches")
        }
    }
}

/// Sums may run in another order; bf16 and f16 programs round more.
fn tolerance(p: &DeviceProgram) -> (f64, f64) {
    let has = |e: ElemType| p.values.iter().any(|v| v.ty.elem == e);
    if has(ElemType::BF16) {
        (3e-2, 3e-2)
    } else if has(ElemType::F16) {
        (5e-3, 5e-3)
    } else {
        (1e-4, 1e-4)
    }
}

/// Run a fixture's partitioned program and compare with JAX's outputs.
fn check_fixture(name: &str, program: &PartitionedProgram) -> Result<(), String> {
    let dir = fixture_dir(name);
    let mut inputs = Vec::new();
    for k in 0.. {
        let path = dir.join(format!("in_{k}.npy"));
        if !path.is_file() {
            break;
        }
        inputs.push(read_npy(&path).map_err(|e| e.to_string())?);
    }
    let outputs = run_program(&program.device, &inputs);
    for (k, got) in outputs.iter().enumerate() {
        let mut want = read_npy(&dir.join(format!("out_{k}.npy"))).map_err(|e| e.to_string())?;
        if got.shape().is_empty() && want.len() == 1 {
            // numpy stores a scalar output as shape (1,).
            want = Block {
                shape: Vec::new(),
                ..Block::from_host(&want)
            }
            .to_host();
        }
        let (rtol, atol) = tolerance(&program.device);
        if !got.allclose(&want, rtol, atol) {
            return Err(format!(
                "{name}: output {k} differs from JAX (max abs diff {:?})",
                got.max_abs_diff(&want)
            ));
        }
    }
    Ok(())
}

fn parse(path: &Path) -> meshrun::compiler::Module {
    parse_module(&std::fs::read_to_string(path).expect("readable")).expect("parses")
}

/// Fixtures this f64 simulator cannot run, and where they are run instead.
const NOT_SIMULATED: &[(&str, &str)] = &[(
    "random_rbg",
    "ui64 generator states are not exact in f64 and rbg's key split is a while loop; \
     runtime/tests/executor_fixtures.rs runs it on 8 devices against JAX's bits",
)];

#[test]
fn partitioned_fixtures_compute_what_jax_computed() {
    let mut failures = Vec::new();
    let names = fixture_names();
    for name in &names {
        if let Some((_, why)) = NOT_SIMULATED.iter().find(|(n, _)| n == name) {
            eprintln!("{name}: not simulated here: {why}");
            continue;
        }
        let dir = fixture_dir(name);
        let m = parse(&dir.join("propagated.mlir"));
        match partition(&m) {
            Ok(p) => {
                if let Err(e) = check_fixture(name, &p) {
                    failures.push(format!("propagated: {e}"));
                }
            }
            Err(e) => failures.push(format!("{name}: partition failed: {e}")),
        }
        let input = parse(&dir.join("input.mlir"));
        match propagate(&input, &PropagationOptions::default()).and_then(|m| partition(&m)) {
            Ok(p) => {
                if let Err(e) = check_fixture(name, &p) {
                    failures.push(format!("input + propagation: {e}"));
                }
            }
            Err(e) => failures.push(format!("{name}: propagate + partition failed: {e}")),
        }
    }
    assert!(!names.is_empty(), "no fixtures found");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------- CLI

fn meshrun() -> Command {
    Command::cargo_bin("meshrun").expect("binary")
}

#[test]
fn cli_prints_explicit_reshards_and_collectives() {
    let path = fixture_dir("conflict_seed003").join("propagated.mlir");
    let out = meshrun()
        .arg("partition")
        .arg(&path)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(r#"sdy.reshard %arg1 <@mesh, [{"y"}, {}]>"#),
        "{stdout}"
    );
    assert!(stdout.contains(r#"sdy.all_reduce {"y"}"#), "{stdout}");
    assert!(
        stdout.contains(r#"sdy.all_gather [{}, {"x"}] %arg1"#),
        "{stdout}"
    );
    assert!(stdout.contains("total 896 bytes/device"), "{stdout}");
}

#[test]
fn cli_json_lists_collectives_with_op_and_reason() {
    let path = fixture_dir("conflict_seed003").join("propagated.mlir");
    let out = meshrun()
        .args(["partition", "--json"])
        .arg(&path)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["num_devices"], 8);
    assert_eq!(v["total_bytes_per_device"], 896.0);
    let cs = v["collectives"].as_array().expect("list");
    assert_eq!(cs.len(), 2);
    assert_eq!(cs[0]["kind"], "all-gather");
    assert_eq!(
        cs[0]["groups"],
        serde_json::json!([[0, 2, 4, 6], [1, 3, 5, 7]])
    );
    assert_eq!(cs[0]["in_shape"], serde_json::json!([16, 4]));
    assert_eq!(cs[0]["out_shape"], serde_json::json!([16, 16]));
    assert_eq!(cs[0]["bytes_per_device"], 768.0);
    assert!(cs[0]["op"].as_str().unwrap().contains("stablehlo.dot"));
    assert!(cs[0]["reason"].as_str().unwrap().contains("operand 1"));
    assert_eq!(cs[1]["kind"], "all-reduce");
    assert_eq!(cs[1]["axes"], serde_json::json!(["\"y\""]));
    assert!(cs[1]["reason"].as_str().unwrap().contains("partial sums"));
}

#[test]
fn cli_device_program_shows_local_shapes_and_groups() {
    let path = fixture_dir("conflict_seed003").join("input.mlir");
    let out = meshrun()
        .args(["partition", "--device", "3"])
        .arg(&path)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("device 3 of 8"), "{stdout}");
    assert!(stdout.contains("%arg0: tensor<2x16xf32>"), "{stdout}");
    assert!(stdout.contains("group [1, 3, 5, 7], rank 1"), "{stdout}");
    assert!(stdout.contains("group [2, 3], rank 1"), "{stdout}");
}

#[test]
fn cli_rejects_unknown_device_and_bad_files() {
    let path = fixture_dir("conflict_seed003").join("propagated.mlir");
    let out = meshrun()
        .args(["partition", "--device", "8"])
        .arg(&path)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: device 8 is not one of the program's 8 devices"),
        "{stderr}"
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.mlir");
    std::fs::write(
        &bad,
        r#"module @m {
  sdy.mesh @a = <["x"=2]>
  sdy.mesh @b = <["x"=4]>
  func.func public @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@a, [{"x"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@b, [{"x"}]>}) {
    return %arg0 : tensor<8xf32>
  }
}
"#,
    )
    .expect("write");
    let out = meshrun()
        .args(["partition", "--no-propagate"])
        .arg(&bad)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(&format!("error: {}", bad.display())),
        "{stderr}"
    );
    assert!(stderr.contains("same devices"), "{stderr}");
    assert!(stderr.contains("@a") && stderr.contains("@b"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

// ---------------------------------------------------------------- random programs

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn f32(&mut self) -> f32 {
        (self.next() % 2001) as f32 / 1000.0 - 1.0
    }
}

/// A random sharding of a rank-`rank` tensor over axes `x` (2) and `y` (4):
/// each axis shards a random dimension or none.
fn random_sharding(rng: &mut Rng, rank: usize) -> String {
    let mut dims: Vec<Vec<&str>> = vec![Vec::new(); rank];
    let mut axes = ["x", "y"];
    if rng.below(2) == 0 {
        axes.swap(0, 1);
    }
    for a in axes {
        let pick = rng.below(rank + 1);
        if pick < rank {
            dims[pick].push(a);
        }
    }
    let dims: Vec<String> = dims
        .iter()
        .map(|d| {
            let v: Vec<String> = d.iter().map(|a| format!("\"{a}\"")).collect();
            format!("{{{}}}", v.join(", "))
        })
        .collect();
    format!("<@mesh, [{}]>", dims.join(", "))
}

fn random_input(rng: &mut Rng, shape: &[usize]) -> HostTensor {
    let n: usize = shape.iter().product();
    HostTensor::from_vec(shape, (0..n).map(|_| rng.f32()).collect::<Vec<f32>>()).expect("fits")
}

/// One of a few program shapes, every value with a random sharding
/// (sizes 6 and 5 are not divisible by the axes: padding everywhere).
fn random_program(rng: &mut Rng) -> (String, Vec<Vec<usize>>) {
    let s = |r: usize, rng: &mut Rng| random_sharding(rng, r);
    let head = "module @m {\n  sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n";
    let (body, inputs) = match rng.below(5) {
        0 => (
            format!(
                r#"  func.func @main(%arg0: tensor<6x5xf32> {{sdy.sharding = #sdy.sharding{}}}, %arg1: tensor<5x12xf32> {{sdy.sharding = #sdy.sharding{}}}) -> (tensor<6x12xf32> {{sdy.sharding = #sdy.sharding{}}}) {{
    %0 = stablehlo.exponential %arg0 {{sdy.sharding = #sdy.sharding_per_value<[{}]>}} : tensor<6x5xf32>
    %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0] {{sdy.sharding = #sdy.sharding_per_value<[{}]>}} : (tensor<6x5xf32>, tensor<5x12xf32>) -> tensor<6x12xf32>
    %2 = stablehlo.tanh %1 {{sdy.sharding = #sdy.sharding_per_value<[{}]>}} : tensor<6x12xf32>
    return %2 : tensor<6x12xf32>
  }}
"#,
                s(2, rng),
                s(2, rng),
                s(2, rng),
                s(2, rng),
                s(2, rng),
                s(2, rng)
            ),
            vec![vec![6, 5], vec![5, 12]],
        ),
        1 => (
            format!(
                r#"  func.func @main(%arg0: tensor<6x10xf32> {{sdy.sharding = #sdy.sharding{}}}) -> (tensor<10xf32> {{sdy.sharding = #sdy.sharding{}}}, tensor<6xf32>) {{
    %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %0 = stablehlo.cosine %arg0 {{sdy.sharding = #sdy.sharding_per_value<[{}]>}} : tensor<6x10xf32>
    %1 = stablehlo.reduce(%0 init: %c) applies stablehlo.maximum across dimensions = [0] {{sdy.sharding = #sdy.sharding_per_value<[{}]>}} : (tensor<6x10xf32>, tensor<f32>) -> tensor<10xf32>
    %2 = stablehlo.reduce(%0 init: %z) applies stablehlo.add across dimensions = [1] {{sdy.sharding = #sdy.sharding_per_value<[{}]>}} : (tensor<6x10xf32>, tensor<f32>) -> tensor<6xf32>
    return %1, %2 : tensor<10xf32>, tensor<6xf32>
  }}
"#,
                s(2, rng),
                s(1, rng),
                s(2, rng),
                s(1, rng),
                s(1, rng)
            ),
            vec![vec![6, 10]],
        ),
        2 => (
            format!(
                r#"  func.func @main(%arg0: tensor<12x10xf32> {{sdy.sharding = #sdy.sharding{}}}) -> (tensor<5x7xf32> {{sdy.sharding = #sdy.sharding{}}}, tensor<15x13xf32>) {{
    %0 = stablehlo.slice %arg0 [1:11:2, 2:9] {{sdy.sharding = #sdy.sharding_per_value<[{}]>}} : (tensor<12x10xf32>) -> tensor<5x7xf32>
    %p = stablehlo.constant dense<-2.0> : tensor<f32>
    %1 = stablehlo.pad %arg0, %p, low = [2, -1], high = [1, 2], interior = [0, 1] {{sdy.sharding = #sdy.sharding_per_value<[{}]>}} : (tensor<12x10xf32>, tensor<f32>) -> tensor<15x20xf32>
    %2 = stablehlo.slice %1 [0:15, 3:16] {{sdy.sharding = #sdy.sharding_per_value<[{}]>}} : (tensor<15x20xf32>) -> tensor<15x13xf32>
    return %0, %2 : tensor<5x7xf32>, tensor<15x13xf32>
  }}
"#,
                s(2, rng),
                s(2, rng),
                s(2, rng),
                s(2, rng),
                s(2, rng)
            ),
            vec![vec![12, 10]],
        ),
        3 => (
            format!(
                r#"  func.func @main(%arg0: tensor<6x4xf32> {{sdy.sharding = #sdy.sharding{}}}, %arg1: tensor<6x9xf32> {{sdy.sharding = #sdy.sharding{}}}) -> (tensor<13x6xf32> {{sdy.sharding = #sdy.sharding{}}}) {{
    %0 = stablehlo.concatenate %arg0, %arg1, %arg0, dim = 1 {{sdy.sharding = #sdy.sharding_per_value<[{}]>}} : (tensor<6x4xf32>, tensor<6x9xf32>, tensor<6x4xf32>) -> tensor<6x17xf32>
    %1 = stablehlo.transpose %0, dims = [1, 0] {{sdy.sharding = #sdy.sharding_per_value<[{}]>}} : (tensor<6x17xf32>) -> tensor<17x6xf32>
    %2 = stablehlo.slice %1 [4:17, 0:6] {{sdy.sharding = #sdy.sharding_per_value<[{}]>}} : (tensor<17x6xf32>) -> tensor<13x6xf32>
    return %2 : tensor<13x6xf32>
  }}
"#,
                s(2, rng),
                s(2, rng),
                s(2, rng),
                s(2, rng),
                s(2, rng),
                s(2, rng)
            ),
            vec![vec![6, 4], vec![6, 9]],
        ),
        _ => (
            format!(
                r#"  func.func @main(%arg0: tensor<8x6xf32> {{sdy.sharding = #sdy.sharding{}}}, %arg1: tensor<6xf32> {{sdy.sharding = #sdy.sharding{}}}) -> (tensor<4x12xf32> {{sdy.sharding = #sdy.sharding{}}}) {{
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] {{sdy.sharding = #sdy.sharding_per_value<[{}]>}} : (tensor<6xf32>) -> tensor<8x6xf32>
    %1 = stablehlo.multiply %arg0, %0 {{sdy.sharding = #sdy.sharding_per_value<[{}]>}} : tensor<8x6xf32>
    %2 = stablehlo.reshape %1 {{sdy.sharding = #sdy.sharding_per_value<[{}]>}} : (tensor<8x6xf32>) -> tensor<48xf32>
    %3 = stablehlo.reshape %2 {{sdy.sharding = #sdy.sharding_per_value<[{}]>}} : (tensor<48xf32>) -> tensor<4x12xf32>
    %4 = stablehlo.iota dim = 1 {{sdy.sharding = #sdy.sharding_per_value<[{}]>}} : tensor<4x12xf32>
    %5 = stablehlo.add %3, %4 {{sdy.sharding = #sdy.sharding_per_value<[{}]>}} : tensor<4x12xf32>
    return %5 : tensor<4x12xf32>
  }}
"#,
                s(2, rng),
                s(1, rng),
                s(2, rng),
                s(2, rng),
                s(2, rng),
                s(1, rng),
                s(2, rng),
                s(2, rng),
                s(2, rng)
            ),
            vec![vec![8, 6], vec![6]],
        ),
    };
    (format!("{head}{body}}}\n"), inputs)
}

/// Random case 172: the dot's partial sums are all-reduced over x, then
/// resharded to [{"y"}, {"x"}] by a plan whose first all-slice over x cuts
/// the 6 rows as if they were 8 (blocks of 4, see `partition::reshard::padded`);
/// the reduce-scatter fused from the two must cut the same blocks.
#[test]
fn reduce_scatter_fused_into_a_padded_reshard_keeps_its_blocks() {
    use meshrun::runtime::reference::run_function;
    let text = r#"module @m {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<6x5xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %arg1: tensor<5x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<6x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %0 = stablehlo.exponential %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y", "x"}]>]>} : tensor<6x5xf32>
    %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : (tensor<6x5xf32>, tensor<5x12xf32>) -> tensor<6x12xf32>
    %2 = stablehlo.tanh %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {"x"}]>]>} : tensor<6x12xf32>
    return %2 : tensor<6x12xf32>
  }
}
"#;
    let m = parse_module(text).expect("parses");
    let mut rng = Rng(172);
    let inputs = [
        random_input(&mut rng, &[6, 5]),
        random_input(&mut rng, &[5, 12]),
    ];
    let want = run_function(&m, "main", &inputs, Parallelism::None).expect("reference");
    let p = partition(&m).expect("partitions");
    assert!(
        p.device.instrs.iter().any(|i| matches!(
            i,
            Instr::Collective { collective, .. } if collective.kind == CollectiveKind::ReduceScatter
        )),
        "the all-reduce is fused into the reshard"
    );
    let got = run_program(&p.device, &inputs);
    assert!(
        got[0].allclose(&want[0], 1e-4, 1e-4),
        "max abs diff {:?}",
        got[0].max_abs_diff(&want[0])
    );
}

#[test]
fn random_shardings_compute_what_the_unsharded_program_computes() {
    use meshrun::runtime::reference::run_function;
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut failures = Vec::new();
    for case in 0..400 {
        let (text, shapes) = random_program(&mut rng);
        let m = parse_module(&text).unwrap_or_else(|e| panic!("case {case}: {e}\n{text}"));
        let inputs: Vec<HostTensor> = shapes.iter().map(|s| random_input(&mut rng, s)).collect();
        let want = run_function(&m, "main", &inputs, Parallelism::None)
            .unwrap_or_else(|e| panic!("case {case}: reference: {e}\n{text}"));
        let p = match partition(&m) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("case {case}: partition failed: {e}\n{text}"));
                continue;
            }
        };
        let got = run_program(&p.device, &inputs);
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            if !g.allclose(w, 1e-4, 1e-4) {
                failures.push(format!(
                    "case {case}: output {k} differs (max abs diff {:?})\n{text}",
                    g.max_abs_diff(w)
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures ({}), first:\n{}",
        failures.len(),
        failures
            .iter()
            .filter_map(|f| f.lines().next())
            .collect::<Vec<_>>()
            .join("; "),
        failures[0]
    );
}
