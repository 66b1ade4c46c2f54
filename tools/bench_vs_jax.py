#!/usr/bin/env python3
"""meshrun against JAX/XLA on the CPU, side by side, in one run.

Usage:
    python3 tools/bench_vs_jax.py [--meshrun PATH] [--rounds 3] [--runs 10]
                                  [--only NAME ...] [--markdown]

Every case is one program exported from JAX (``jax.jit(f, in_shardings=...)
.lower(*args).as_text()``, as ``tools/jax_export.py`` does) and run

* in JAX (XLA's CPU backend, ``--xla_force_host_platform_device_count=8``),
  jitted once, ``--runs`` calls timed with ``block_until_ready``;
* in meshrun: ``meshrun run FILE --inputs ... --repeat RUNS --json`` (the
  same inputs as ``.npy``; compilation and input placement are not timed).

Rounds alternate the two (and which goes first), and each side's time is
the median over all its timed runs. The cases:

* ``mlp``: the 4-layer tanh MLP of ``benches/mlp.rs`` (``tanh(x @ w + b)``
  per layer), Megatron sharding (weights alternately column/row sharded on
  ``model``, batch on ``data``; mesh data=4 x model=2) on 8 devices, and
  unsharded on 1 device;
* ``train``: one SGD step of that MLP (``value_and_grad`` of an MSE loss);

at B=64 H=1024 and B=256 H=2048. Also measured in the same run, as the
roofline: one layer's matmul (256x2048 @ 2048x2048) on one thread, run
by meshrun on 1 device with ``RAYON_NUM_THREADS=1``. The 2-core roofline
of a case is its matmul FLOPs at twice that rate. meshrun's peak resident
memory per case (the whole process: parse, inputs, run) is printed next to
its input bytes.

* ``gpt2``: the GPT-2 training step of ``tools/gpt2_bench_export.py``
  (``tools/jax_export.py``'s model code: ``jnp.take`` embedding, causal
  attention, GELU MLP, ``take_along_axis`` cross-entropy, SGD; vocabulary
  2048, width 128, 4 heads, 64 tokens, batch 16, 2 layers), with its
  Megatron + DP shardings on 8 devices and unsharded on 1. Its roofline
  counts the FLOPs of XLA's cost analysis of the unsharded step (matmuls
  and element-wise work alike), so its percentage is a lower bound.
"""

import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse
import json
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

jax.config.update("jax_platforms", "cpu")
if not jax.config.jax_use_shardy_partitioner:
    jax.config.update("jax_use_shardy_partitioner", True)

LAYERS = 4
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def mlp(params, x):
    for i in range(LAYERS):
        w, b = params[2 * i], params[2 * i + 1]
        x = jnp.tanh(x @ w + b)
    return x


def forward(x, *params):
    return mlp(params, x)


def train_step(x, y, *params):
    def loss_fn(ps):
        return jnp.mean((mlp(ps, x) - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    return (loss,) + tuple(p - 0.01 * g for p, g in zip(params, grads))


def make_inputs(kind, batch, hidden):
    rng = np.random.RandomState(7)
    scale = 1.0 / np.sqrt(hidden)
    x = rng.standard_normal((batch, hidden)).astype(np.float32)
    params = []
    for _ in range(LAYERS):
        params.append((rng.standard_normal((hidden, hidden)) * scale).astype(np.float32))
        params.append((rng.standard_normal((hidden,)) * 0.1).astype(np.float32))
    if kind == "train":
        y = rng.standard_normal((batch, hidden)).astype(np.float32)
        return [x, y] + params
    return [x] + params


def specs(kind):
    """Megatron: batch on data, weights alternately column/row on model."""
    ps = []
    for i in range(LAYERS):
        ps.append(P(None, "model") if i % 2 == 0 else P("model", None))
        ps.append(P("model") if i % 2 == 0 else P())
    head = [P("data", None)] * (2 if kind == "train" else 1)
    return head + ps


def gpt2_program():
    """The bench's GPT-2 training step (a jax_export Program) at
    gpt2_bench_export's size."""
    sys.path.insert(0, os.path.join(REPO, "tools"))
    import gpt2_bench_export
    import jax_export as je

    je.set_gpt2_size(**gpt2_bench_export.SIZE)
    return je, je.gpt2_programs("gpt2_train_step", np.random.RandomState(0),
                                train=True, scan=False)


def matmul_flops(kind, batch, hidden):
    fwd = LAYERS * 2 * batch * hidden * hidden
    # Backward: two matmuls per layer (input and weight gradients).
    return fwd * 3 if kind == "train" else fwd


class Case:
    def __init__(self, kind, batch, hidden, devices):
        self.kind, self.batch, self.hidden, self.devices = kind, batch, hidden, devices
        self.name = f"{kind}_b{batch}_h{hidden}_d{devices}"

    def flops(self):
        if self.kind == "gpt2":
            return self.xla_flops
        return matmul_flops(self.kind, self.batch, self.hidden)

    def function_and_args(self):
        """The function, its arguments and their shardings on 8 devices."""
        if self.kind == "gpt2":
            je, prog = gpt2_program()
            shardings = [je.resolve(prog, s)[0] for s in prog.in_specs]
            return prog.fn, list(prog.args), shardings
        mesh = Mesh(np.array(jax.devices("cpu")[:8]).reshape(4, 2), ("data", "model"))
        f = forward if self.kind == "mlp" else train_step
        return (f, make_inputs(self.kind, self.batch, self.hidden),
                [NamedSharding(mesh, s) for s in specs(self.kind)])

    def prepare(self, workdir):
        """Export the program and its inputs; return the jitted JAX function
        and its (placed) arguments."""
        f, args, shardings = self.function_and_args()
        if self.kind == "gpt2":
            self.xla_flops = jax.jit(f).lower(*args).compile().cost_analysis()["flops"]
        if self.devices == 1:
            jitted = jax.jit(f)
            placed = [jax.device_put(a, jax.devices("cpu")[0]) for a in args]
        else:
            jitted = jax.jit(f, in_shardings=shardings)
            placed = [jax.device_put(a, s) for a, s in zip(args, shardings)]
        text = jitted.lower(*args).as_text()
        d = os.path.join(workdir, self.name)
        os.makedirs(d, exist_ok=True)
        self.mlir = os.path.join(d, "input.mlir")
        with open(self.mlir, "w") as fh:
            fh.write(text)
        self.npys = []
        for k, a in enumerate(args):
            p = os.path.join(d, f"in_{k}.npy")
            np.save(p, a)
            self.npys.append(p)
        self.input_bytes = sum(a.nbytes for a in args)
        return jitted, placed


def time_jax(jitted, placed, runs):
    jax.block_until_ready(jitted(*placed))
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        jax.block_until_ready(jitted(*placed))
        out.append((time.perf_counter() - t) * 1e3)
    return out


# Runs argv[2:] as its child and writes the child's peak resident memory
# (KiB) to argv[1]. A process forked from this one would start with the
# resident size of this process (JAX loaded: ~300 MB) as its peak (Linux
# keeps the larger of the forked and the exec'd image's high-water mark),
# so meshrun is started by a small process of its own.
PEAK_LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as fh:
    fh.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_meshrun(meshrun, mlir, npys, runs, env=None):
    """`meshrun run --json`'s report, with meshrun's peak resident memory
    (`peak_mb`, from wait4's rusage in a small launcher)."""
    cmd = [meshrun, "run", mlir, "--repeat", str(runs), "--json", "--inputs", *npys]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err, \
            tempfile.NamedTemporaryFile("r", suffix=".kib") as peak:
        launched = [sys.executable, "-c", PEAK_LAUNCHER, peak.name, shutil.which(meshrun) or meshrun]
        p = subprocess.run(launched + cmd[1:], stdout=out, stderr=err, env=env, text=True)
        out.seek(0)
        err.seek(0)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{err.read().strip()}")
        report = json.loads(out.read())
        report["peak_mb"] = int(peak.read()) / 1024  # KiB on Linux
    return report


def time_meshrun(meshrun, case, runs):
    out = run_meshrun(meshrun, case.mlir, case.npys, runs)
    case.peak_mb = max(getattr(case, "peak_mb", 0.0), out["peak_mb"])
    # Each round's median stands for its runs.
    return [out["median_ms"]] * runs


def gemm_program(workdir, m=256, k=2048, n=2048):
    """One matmul, unsharded, for meshrun's single-thread GEMM rate."""
    text = (
        "module @jit_gemm {\n"
        f"  func.func public @main(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32> {{\n"
        f"    %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
        f"(tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32>\n"
        f"    return %0 : tensor<{m}x{n}xf32>\n  }}\n}}\n"
    )
    d = os.path.join(workdir, "gemm")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "input.mlir")
    with open(path, "w") as fh:
        fh.write(text)
    rng = np.random.RandomState(3)
    npys = []
    for i, shape in enumerate([(m, k), (k, n)]):
        p = os.path.join(d, f"in_{i}.npy")
        np.save(p, rng.standard_normal(shape).astype(np.float32))
        npys.append(p)
    return path, npys, 2 * m * k * n


def machine():
    model, flags = "?", ""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name") and model == "?":
                    model = line.split(":", 1)[1].strip()
                if line.startswith("flags") and not flags:
                    flags = line
    except OSError:
        pass
    simd = "AVX-512" if "avx512f" in flags else ("AVX2" if "avx2" in flags else "no AVX2")
    return f"{model}, {os.cpu_count()} cores, {simd}, {platform.system()}"


def load():
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target"))
    ap.add_argument("--meshrun", default=os.path.join(target, "release", "meshrun"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=10, help="timed runs per side per round")
    ap.add_argument("--only", nargs="*", help="case names (e.g. mlp_b64_h1024_d8)")
    ap.add_argument("--keep", help="write the exported programs here and keep them")
    args = ap.parse_args()
    if not shutil.which(args.meshrun) and not os.path.exists(args.meshrun):
        sys.exit(f"no meshrun at {args.meshrun}: build it with `cargo build --release`")

    cases = [Case(kind, b, h, d)
             for kind in ("mlp", "train")
             for (b, h) in ((64, 1024), (256, 2048))
             for d in (8, 1)]
    g = gpt2_program()[1]
    cases += [Case("gpt2", g.args[-1].shape[0], g.args[0].shape[1], d) for d in (8, 1)]
    if args.only:
        cases = [c for c in cases if c.name in args.only]
    workdir = args.keep or tempfile.mkdtemp(prefix="bench_vs_jax_")
    print(f"machine: {machine()}; jax {jax.__version__}; load at start {load()}", flush=True)

    gemm_mlir, gemm_npys, gemm_flop = gemm_program(workdir)
    single = dict(os.environ, RAYON_NUM_THREADS="1")
    gemm_ms = []
    rows = []
    for case in cases:
        jitted, placed = case.prepare(workdir)
        jax_ms, mr_ms = [], []
        for r in range(args.rounds):
            sides = [("jax", lambda: jax_ms.extend(time_jax(jitted, placed, args.runs))),
                     ("meshrun", lambda: mr_ms.extend(time_meshrun(args.meshrun, case, args.runs)))]
            if r % 2:
                sides.reverse()
            for _, go in sides:
                go()
            # The roofline, between rounds so that it sees the same machine.
            out = run_meshrun(args.meshrun, gemm_mlir, gemm_npys, 5, env=single)
            gemm_ms.append(out["median_ms"])
        del placed
        m, x = statistics.median(mr_ms), statistics.median(jax_ms)
        rows.append((case, m, x))
        print(f"  {case.name}: meshrun {m:.2f} ms, XLA {x:.2f} ms, XLA/meshrun {x / m:.2f}  (load {load()})",
              flush=True)

    gflops = gemm_flop / (statistics.median(gemm_ms) * 1e-3) / 1e9
    print()
    print(f"machine: {machine()}; load at end {load()}")
    print(f"single-thread GEMM (256x2048 @ 2048x2048 through meshrun): {gflops:.1f} GFLOP/s; "
          f"2-core roofline = matmul FLOPs at {2 * gflops:.1f} GFLOP/s")
    print()
    print("| program | B | H | devices | meshrun ms | XLA ms | XLA/meshrun | roofline ms | meshrun % of roofline | meshrun peak MB (inputs MB) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for case, m, x in rows:
        roof = case.flops() / (2 * gflops * 1e9) * 1e3
        print(f"| {case.kind} | {case.batch} | {case.hidden} | {case.devices} | {m:.2f} | {x:.2f} | "
              f"{x / m:.2f} | {roof:.2f} | {100 * roof / m:.0f}% | "
              f"{case.peak_mb:.0f} ({case.input_bytes / 2**20:.0f}) |")
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
