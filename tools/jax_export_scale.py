#!/usr/bin/env python3
"""Shape-only fixtures at real model sizes: "will it fit, what will it cost".

Llama-style training steps (token embedding, RMSNorm, grouped-query
attention with RoPE, SwiGLU, the layers in a ``lax.scan`` under
``jax.checkpoint``, cross-entropy over the vocabulary, an SGD step on
parameters that are donated), at real widths, lowered from
``jax.ShapeDtypeStruct`` only (no arrays exist) and compiled by XLA for
the real device count with ``--xla_force_host_platform_device_count=N``
(XLA compiles without allocating). FSDP over "data" times tensor
parallelism over "model", and one step with sequence parallelism too.

Each fixture is ``fixtures/scale/NAME/``: ``input.mlir`` (the lowered
text, JAX 0.12), ``propagated.mlir`` (Shardy's propagation of it, as XLA
ran it) and ``meta.json``: the configuration, XLA's
``compiled.memory_analysis()`` per device (arguments, outputs, aliased,
temporaries; ``total = arguments + outputs - aliased + temporaries``),
XLA's collective bytes per device (a collective in a loop body counted
once per iteration), and the seconds JAX took to lower and XLA to compile.

Usage (Python >= 3.12 with jax 0.12; each program runs in its own process,
as the device count is fixed when jax starts):

    python tools/jax_export_scale.py [--only NAME ...] [--list] [--out DIR]
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# name: (model, mesh axes {name: size} in order, batch, sequence). "data"
# shards the batch and (FSDP) the weights, "model" is tensor parallelism;
# "seq", where present, shards the tokens of each sequence and shares the
# weights' FSDP sharding with "data" (sequence / context parallelism as
# MaxText's "fsdp" x "sequence" x "tensor" meshes do).
MODELS = {
    "1b": dict(d=2048, ffn=5632, heads=32, kv=4, vocab=32000, layers=4),
    "7b": dict(d=4096, ffn=11008, heads=32, kv=32, vocab=32000, layers=4),
    "70b": dict(d=8192, ffn=28672, heads=64, kv=8, vocab=32000, layers=4),
}
PROGRAMS = {
    "llama_1b_train_8": ("1b", {"data": 2, "model": 4}, 8, 1024),
    "llama_7b_train_8": ("7b", {"data": 2, "model": 4}, 8, 2048),
    "llama_7b_train_64": ("7b", {"data": 8, "model": 8}, 32, 2048),
    "llama_70b_train_256": ("70b", {"data": 32, "model": 8}, 64, 4096),
    "llama_70b_seq_train_256": ("70b", {"data": 8, "seq": 4, "model": 8}, 16, 16384),
}


def describe(name):
    model, axes, batch, seq = PROGRAMS[name]
    m = MODELS[model]
    parts = [f"FSDP data={axes['data']}"]
    if "seq" in axes:
        parts.append(f"sequence parallel seq={axes['seq']}")
    parts.append(f"tensor parallel model={axes['model']}")
    return (f"Llama-style {model} training step (d={m['d']}, ffn={m['ffn']}, "
            f"{m['heads']} heads / {m['kv']} kv, vocab {m['vocab']}, {m['layers']} scanned "
            f"layers with remat, bf16), batch {batch} x {seq} tokens, "
            f"{' x '.join(parts)} on {devices(axes)} devices")


def devices(axes):
    n = 1
    for size in axes.values():
        n *= size
    return n


def xla_peak_live_bytes(dump_dir):
    """The live bytes at the peak of XLA's schedule of the entry program:
    the last cumulative count under "Live ranges at N (peak):" of its
    ``*-live-range.txt`` dump."""
    hits = sorted(glob.glob(os.path.join(dump_dir, "*jit_step*after_optimizations-live-range.txt")))
    if len(hits) != 1:
        raise RuntimeError(f"expected one live-range dump in {dump_dir}, found {hits}")
    peak, inside = None, False
    with open(hits[0]) as fh:
        for line in fh:
            if "(peak):" in line:
                inside = True
            elif inside:
                m = re.search(r"cumulative: ([0-9]+) bytes", line)
                if not m:
                    break
                peak = int(m.group(1))
    if peak is None:
        raise RuntimeError(f"no peak in {hits[0]}")
    return peak


def export_one(name, out_root):
    """Runs in a process whose XLA_FLAGS already give the device count."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    from jax.sharding import NamedSharding, PartitionSpec as P

    sys.path.insert(0, HERE)
    import jax_export as je  # noqa: E402

    # jax_export sets 8 devices; jax reads the flag when it first starts.
    os.environ["XLA_FLAGS"] = os.environ["MESHRUN_SCALE_FLAGS"]

    model, axes, batch, seq = PROGRAMS[name]
    m = MODELS[model]
    d, f, h, kv, v, layers = m["d"], m["ffn"], m["heads"], m["kv"], m["vocab"], m["layers"]
    hd = d // h
    auto = jax.sharding.AxisType.Auto
    mesh = jax.make_mesh(tuple(axes.values()), tuple(axes), axis_types=(auto,) * len(axes))
    # The weights' FSDP axes, the tokens' axes.
    fsdp = ("data", "seq") if "seq" in axes else "data"
    token_spec = P("data", "seq") if "seq" in axes else P("data", None)
    bf = jnp.bfloat16

    def rms(x, g):
        x32 = x.astype(jnp.float32)
        y = x32 * lax.rsqrt(jnp.mean(x32 * x32, axis=-1, keepdims=True) + 1e-6)
        return (y * g).astype(bf)

    def rope(x):
        pos = jnp.arange(seq, dtype=jnp.float32)[:, None]
        freq = 1.0 / (10000 ** (jnp.arange(0, hd, 2, dtype=jnp.float32) / hd))
        ang = pos * freq[None, :]
        cos = jnp.cos(ang)[None, :, None, :].astype(bf)
        sin = jnp.sin(ang)[None, :, None, :].astype(bf)
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return jnp.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)

    def layer(x, p):
        b = x.shape[0]
        if "seq" in axes:
            # As sequence-parallel models do: the residual stream stays
            # sharded by batch and by sequence (else propagation follows
            # the weights' FSDP axes and replicates the tokens).
            x = lax.with_sharding_constraint(x, NamedSharding(mesh, P("data", "seq", None)))
        y = rms(x, p["g1"])
        q = rope((y @ p["wq"]).reshape(b, seq, h, hd))
        k = rope((y @ p["wk"]).reshape(b, seq, kv, hd))
        val = (y @ p["wv"]).reshape(b, seq, kv, hd)
        k = jnp.repeat(k, h // kv, axis=2)
        val = jnp.repeat(val, h // kv, axis=2)
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k).astype(jnp.float32) / np.sqrt(hd)
        s = jnp.where(jnp.tril(jnp.ones((seq, seq), bool)), s, -1e9)
        a = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, axis=-1).astype(bf), val)
        x = x + a.reshape(b, seq, d) @ p["wo"]
        y = rms(x, p["g2"])
        return x + (jax.nn.silu(y @ p["w1"]) * (y @ p["w3"])) @ p["w2"], None

    def loss(params, tokens, labels):
        x = params["embed"][tokens]
        x, _ = lax.scan(jax.checkpoint(layer), x, params["layers"])
        x = rms(x, params["g"])
        logits = (x @ params["unembed"]).astype(jnp.float32)
        logp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, labels[..., None], axis=-1))

    def step(params, tokens, labels):
        l, g = jax.value_and_grad(loss)(params, tokens, labels)
        return l, jax.tree.map(lambda p, gp: (p - 0.01 * gp).astype(p.dtype), params, g)

    def sd(shape, dtype, spec):
        return jax.ShapeDtypeStruct(shape, dtype, sharding=NamedSharding(mesh, spec))

    col, row = P(None, fsdp, "model"), P(None, "model", fsdp)
    params = {
        "embed": sd((v, d), bf, P(None, fsdp)),
        "unembed": sd((d, v), bf, P(fsdp, "model")),
        "g": sd((d,), jnp.float32, P()),
        "layers": {
            "g1": sd((layers, d), jnp.float32, P()), "g2": sd((layers, d), jnp.float32, P()),
            "wq": sd((layers, d, h * hd), bf, col), "wk": sd((layers, d, kv * hd), bf, col),
            "wv": sd((layers, d, kv * hd), bf, col), "wo": sd((layers, h * hd, d), bf, row),
            "w1": sd((layers, d, f), bf, col), "w3": sd((layers, d, f), bf, col),
            "w2": sd((layers, f, d), bf, row),
        },
    }
    tokens = sd((batch, seq), jnp.int32, token_spec)
    labels = sd((batch, seq), jnp.int32, token_spec)
    t0 = time.time()
    lowered = jax.jit(step, donate_argnums=(0,)).lower(params, tokens, labels)
    text = lowered.as_text()
    t1 = time.time()
    compiled = lowered.compile()
    t2 = time.time()
    # Shardy's propagation of the same program (compiled again with a dump:
    # the timed compile above has none).
    dump = tempfile.mkdtemp(prefix=f"jax_export_scale_{name}_")
    try:
        lowered.compile(compiler_options={"xla_dump_to": dump,
                                          "xla_dump_hlo_pass_re": "shardy-xla"})
        with open(je.find_propagated(dump)) as fh:
            propagated = fh.read()
        peak_live = xla_peak_live_bytes(dump)
    finally:
        shutil.rmtree(dump, ignore_errors=True)
    mem = compiled.memory_analysis()
    hlo = compiled.as_text()
    coll = je.analyze_collectives(hlo)
    xla_mem = {
        "argument_bytes": int(mem.argument_size_in_bytes),
        "output_bytes": int(mem.output_size_in_bytes),
        "alias_bytes": int(mem.alias_size_in_bytes),
        "temp_bytes": int(mem.temp_size_in_bytes),
    }
    xla_mem["total_bytes"] = (xla_mem["argument_bytes"] + xla_mem["output_bytes"]
                              - xla_mem["alias_bytes"] + xla_mem["temp_bytes"])
    # The most bytes live at one point of XLA's schedule (arguments
    # included): what XLA's buffers need before its heap packs them into
    # one temporary block (the total above includes the packing's gaps).
    xla_mem["peak_live_bytes"] = peak_live
    n_params = sum(int(np.prod(x.shape)) for x in jax.tree.leaves(params))
    meta = {
        "name": name,
        "description": describe(name),
        "jax_version": jax.__version__,
        "num_devices": devices(axes),
        "mesh": dict(axes),
        "model": dict(m, batch=batch, seq=seq, params=n_params),
        "xla_memory_per_device": xla_mem,
        "xla_collective_bytes_per_device": coll["total_bytes_per_device"],
        "xla_collectives": len(coll["collectives"]),
        "lower_s": round(t1 - t0, 2),
        "xla_compile_s": round(t2 - t1, 2),
    }
    out = os.path.join(out_root, name)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "input.mlir"), "w") as fh:
        fh.write(text)
    with open(os.path.join(out, "propagated.mlir"), "w") as fh:
        fh.write(propagated)
    je.write_json(os.path.join(out, "meta.json"), meta)
    gib = xla_mem["total_bytes"] / 2**30
    print(f"ok   {name:24} {devices(axes):4} devices  XLA {gib:7.2f} GiB/device  "
          f"{coll['total_bytes_per_device'] / 2**20:9.1f} MiB moved  compile {t2 - t1:.1f} s")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(HERE), "fixtures", "scale"))
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        export_one(args.child, args.out)
        return 0
    if args.list:
        for name in PROGRAMS:
            print(f"{name:24} {describe(name)}")
        return 0
    failed = 0
    for name in args.only or list(PROGRAMS):
        if name not in PROGRAMS:
            print(f"unknown program {name}", file=sys.stderr)
            return 2
        _, axes, _, _ = PROGRAMS[name]
        env = dict(os.environ, JAX_PLATFORMS="cpu",
                   MESHRUN_SCALE_FLAGS=f"--xla_force_host_platform_device_count={devices(axes)}")
        r = subprocess.run([sys.executable, __file__, "--child", name, "--out", args.out],
                           env=env)
        failed += r.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
