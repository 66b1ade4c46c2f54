#!/usr/bin/env python3
"""Export the programs `meshrun suggest` is tested on, from JAX, without shardings.

Usage:
    python3 tools/jax_export_suggest.py [--out fixtures/jax_suggest] [--only NAME ...] [--list]

These are the questions a user brings to `meshrun suggest`: a training step written
for one device (``jax.jit(f).lower(*args).as_text()``, no ``in_shardings``, so the
module declares no mesh) and a mesh to run it on. For every program NAME this writes
``OUT/NAME/``:

* ``input.mlir``              -- the unannotated lowering, verbatim;
* ``hand.mlir``               -- the same function lowered with the sharding a person
                                 would write (Megatron tensor parallelism on ``model`` plus
                                 data parallelism on ``data``), verbatim;
* ``hand_xla_collectives.json`` -- XLA's collectives for ``hand.mlir`` (Shardy on, SPMD
                                 partitioned for 8 devices), parsed as in ``jax_export.py``;
* ``small.mlir``              -- the same function at a small size, unannotated: the same
                                 ops in the same order (checked), for running the shardings
                                 suggested for ``input.mlir`` in seconds;
* ``meta.json``               -- mesh, shapes, dtypes, the hand shardings, notes.

Inputs and outputs are not stored: the programs are sized so that sharding pays on an
8-GPU H100 node (tens of MiB per array); tests run them with ``--random-inputs`` and
compare the sharded run with meshrun's unsharded one. Before anything is written, JAX
runs the hand-sharded program on 8 CPU devices and checks it against the unsharded run.

Shares its helpers (meshes, RNG, HLO collective parser, JSON layout) with
``tools/jax_export.py``; requires the same JAX (0.10.2, CPU).
"""

import argparse
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax_export as je  # noqa: E402  (sets XLA_FLAGS before importing jax)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402


class SuggestProgram:
    def __init__(self, name, description, fn, args, mesh, hand_specs, hand_label, notes=None,
                 rtol=1e-4, atol=1e-4):
        self.name = name
        self.description = description
        self.fn = fn
        self.args = args              # numpy arrays
        self.mesh = mesh              # the mesh to suggest for (meta), and the hand sharding's
        self.hand_specs = hand_specs  # one PartitionSpec per argument
        self.hand_label = hand_label
        self.notes = notes or []
        self.rtol, self.atol = rtol, atol


def mlp_train(name, B, H, layers=4):
    """SGD step of a tanh MLP with biases, MSE loss; returns (loss, new params)."""
    rng = je.rng_for(name)

    def loss_fn(params, x, y):
        h = x
        for i in range(layers):
            h = h @ params[2 * i] + params[2 * i + 1]
            if i < layers - 1:
                h = jnp.tanh(h)
        return jnp.mean((h - y) ** 2)

    def f(x, y, *params):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return loss, tuple(p - 0.01 * g for p, g in zip(params, grads))

    args = [je.randn(rng, B, H), je.randn(rng, B, H)]
    for _ in range(layers):
        args += [je.randn(rng, H, H, scale=1.0 / math.sqrt(H)), je.randn(rng, H, scale=0.1)]
    hand = [P("data", None), P("data", None)]
    for i in range(layers):
        hand += [P(None, "model"), P("model")] if i % 2 == 0 else [P("model", None), P(None)]
    return SuggestProgram(name, None, je.named(f, name), args, je.M_DM(), hand,
                          "Megatron (odd layers' weights by columns, even layers' by rows, "
                          "on model) + batch on data")


def attention_train(name, B, S, E, H):
    """SGD step of a multi-head attention block with q/k/v/output projections, MSE loss."""
    rng = je.rng_for(name)
    D = E // H

    def loss_fn(params, x, y):
        wq, wk, wv, wo = params
        q = (x @ wq).reshape(B, S, H, D)
        k = (x @ wk).reshape(B, S, H, D)
        v = (x @ wv).reshape(B, S, H, D)
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(D)
        p = jax.nn.softmax(s, axis=-1)
        o = jnp.einsum("bhqk,bkhd->bqhd", p, v).reshape(B, S, E)
        return jnp.mean((o @ wo - y) ** 2)

    def f(x, y, wq, wk, wv, wo):
        params = (wq, wk, wv, wo)
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return loss, tuple(p - 0.01 * g for p, g in zip(params, grads))

    args = [je.randn(rng, B, S, E), je.randn(rng, B, S, E)]
    args += [je.randn(rng, E, E, scale=1.0 / math.sqrt(E)) for _ in range(4)]
    col, row = P(None, "model"), P("model", None)
    hand = [P("data", None, None), P("data", None, None), col, col, col, row]
    return SuggestProgram(name, None, je.named(f, name), args, je.M_DM(), hand,
                          "heads on model (wq, wk, wv by columns, wo by rows) + batch on data")


def gpt2_train(name, layers, B, S, E, H, V):
    """SGD step of a GPT-2-style decoder: token and position embeddings, `layers` pre-norm
    blocks (layernorm, causal multi-head attention with a fused qkv projection, tanh-GELU
    MLP of width 4E, residuals), final layernorm, tied output projection, cross-entropy.
    Written as GPT-2 is: tokens embedded by ``jnp.take`` (a gather; its gradient a
    scatter-add into the table) and the loss picks targets by ``take_along_axis``."""
    rng = je.rng_for(name)
    D = E // H

    def layernorm(x, g, b):
        m = jnp.mean(x, axis=-1, keepdims=True)
        v = jnp.mean((x - m) ** 2, axis=-1, keepdims=True)
        return (x - m) * jax.lax.rsqrt(v + 1e-5) * g + b

    def gelu(x):
        return 0.5 * x * (1 + jnp.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))

    def block(p, x):
        ln1g, ln1b, wqkv, bqkv, wo, bo, ln2g, ln2b, wfc, bfc, wproj, bproj = p
        h = layernorm(x, ln1g, ln1b)
        q, k, v = jnp.split(h @ wqkv + bqkv, 3, axis=-1)
        q, k, v = (t.reshape(B, S, H, D) for t in (q, k, v))
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(D)
        s = jnp.where(jnp.arange(S)[:, None] >= jnp.arange(S)[None, :], s, -1e9)
        o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, axis=-1), v).reshape(B, S, E)
        x = x + o @ wo + bo
        return x + gelu(layernorm(x, ln2g, ln2b) @ wfc + bfc) @ wproj + bproj

    def loss_fn(params, tokens, targets):
        wte, wpe, lnfg, lnfb = params[:4]
        x = jnp.take(wte, tokens, axis=0) + wpe
        for i in range(layers):
            x = block(params[4 + 12 * i: 16 + 12 * i], x)
        logp = jax.nn.log_softmax(layernorm(x, lnfg, lnfb) @ wte.T, axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))

    def f(tokens, targets, *params):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens, targets)
        return loss, tuple(p - 0.01 * g for p, g in zip(params, grads))

    ones, zeros = np.ones(E, np.float32), np.zeros(E, np.float32)
    args = [rng.randint(0, V, (B, S)).astype(np.int32), rng.randint(0, V, (B, S)).astype(np.int32),
            je.randn(rng, V, E, scale=0.02), je.randn(rng, S, E, scale=0.01), ones, zeros]
    col, row, rep, vec = P(None, "model"), P("model", None), P(None), P("model")
    hand = [P("data", None), P("data", None), row, P(None, None), rep, rep]
    for _ in range(layers):
        args += [ones, zeros, je.randn(rng, E, 3 * E, scale=0.02), np.zeros(3 * E, np.float32),
                 je.randn(rng, E, E, scale=0.02), zeros, ones, zeros,
                 je.randn(rng, E, 4 * E, scale=0.02), np.zeros(4 * E, np.float32),
                 je.randn(rng, 4 * E, E, scale=0.02), zeros]
        hand += [rep, rep, col, vec, row, rep, rep, rep, col, vec, row, rep]
    return SuggestProgram(name, None, je.named(f, name), args, je.M_DM(), hand,
                          "Megatron (qkv and MLP-in by columns, attention-out and MLP-out by rows, "
                          "the embedding by vocabulary rows, on model) + batch on data",
                          rtol=2e-4, atol=2e-4)


# (name, description, builder(name), small(name)) of every program; `small` builds the
# same function at a small size (`small.mlir`: the same ops in the same order) on which the
# tests run the shardings suggested for the full-size program.
PROGRAMS = [
    ("mlp4_train_b4096_h2048",
     "SGD step of a 4-layer tanh MLP, batch 4096, hidden 2048 (hidden large relative to batch)",
     lambda name: mlp_train(name, 4096, 2048),
     lambda name: mlp_train(name, 64, 32)),
    ("mlp4_train_b16384_h512",
     "SGD step of a 4-layer tanh MLP, batch 16384, hidden 512 (batch large relative to hidden)",
     lambda name: mlp_train(name, 16384, 512),
     lambda name: mlp_train(name, 128, 16)),
    ("attention_train_b8_s512_e1024",
     "SGD step of a multi-head attention block (8 heads of 64, q/k/v/output projections, "
     "softmax, MSE loss), batch 8, sequence 512, width 1024",
     lambda name: attention_train(name, 8, 512, 1024, 8),
     lambda name: attention_train(name, 8, 16, 64, 8)),
    ("mlp16_train_b4096_h2048",
     "SGD step of a 16-layer tanh MLP, batch 4096, hidden 2048: 34 arguments, more than "
     "suggest moves one at a time",
     lambda name: mlp_train(name, 4096, 2048, layers=16),
     lambda name: mlp_train(name, 64, 32, layers=16)),
    ("gpt2_train_l2_e768",
     "SGD step of a 2-layer GPT-2-style decoder (width 768, 12 heads, sequence 256, batch 8, "
     "vocabulary 8192): jnp.take embedding (gather; scatter-add gradient), "
     "take_along_axis cross-entropy",
     lambda name: gpt2_train(name, 2, 8, 256, 768, 12, 8192),
     lambda name: gpt2_train(name, 2, 8, 16, 96, 12, 256)),
]


def op_sequence(text):
    """The op names of a lowering in order: a program and its small twin must agree."""
    return re.findall(r"\b(?:stablehlo|chlo|func|sdy)\.[a-z_]+\b|\bcall\b", text)


def export_small(prog, small, out_dir):
    """`small.mlir`: `small` (the same function at a small size) lowered without shardings."""
    text = jax.jit(prog.fn).lower(*prog.args).as_text()
    small_text = jax.jit(small.fn).lower(*small.args).as_text()
    if op_sequence(small_text) != op_sequence(text):
        raise RuntimeError(f"{prog.name}: the small program's ops differ from the full size's")
    with open(os.path.join(out_dir, prog.name, "small.mlir"), "w") as f:
        f.write(small_text)
    return [list(a.shape) for a in small.args]


def export(prog, out_dir):
    d = os.path.join(out_dir, prog.name)
    os.makedirs(d, exist_ok=True)
    text = jax.jit(prog.fn).lower(*prog.args).as_text()
    if "sdy.sharding" in text or "sdy.mesh" in text:
        raise RuntimeError(f"{prog.name}: the unannotated lowering carries shardings")

    hand_sh = [je.resolve(prog, s)[0] for s in prog.hand_specs]
    lowered = jax.jit(prog.fn, in_shardings=tuple(hand_sh)).lower(*prog.args)
    hand_text = lowered.as_text()
    compiled = lowered.compile()
    coll = je.analyze_collectives(compiled.as_text())

    # The hand-sharded program on 8 devices against the unsharded run.
    placed = [jax.device_put(a, s) for a, s in zip(prog.args, compiled.input_shardings[0])]
    got = [np.asarray(x) for x in jax.tree_util.tree_leaves(compiled(*placed))]
    dev0 = jax.devices("cpu")[0]
    ref = jax.jit(lambda *a: prog.fn(*a))(*[jax.device_put(a, dev0) for a in prog.args])
    ref = [np.asarray(x) for x in jax.tree_util.tree_leaves(ref)]
    for i, (a, r) in enumerate(zip(got, ref)):
        if not np.allclose(a, r, rtol=prog.rtol, atol=prog.atol):
            raise RuntimeError(f"{prog.name}: output {i} of the hand sharding differs from the "
                               f"unsharded run (max abs err {np.abs(a - r).max()})")

    with open(os.path.join(d, "input.mlir"), "w") as f:
        f.write(text)
    with open(os.path.join(d, "hand.mlir"), "w") as f:
        f.write(hand_text)
    je.write_json(os.path.join(d, "hand_xla_collectives.json"), coll)
    mib = sum(a.nbytes for a in prog.args + got) / 2**20
    meta = {
        "name": prog.name,
        "description": prog.description,
        "mesh": je.mesh_dict(prog.mesh),
        "inputs": [{"shape": list(a.shape), "dtype": je.dtype_name(a.dtype)} for a in prog.args],
        "outputs": [{"shape": list(a.shape), "dtype": je.dtype_name(a.dtype)} for a in got],
        "hand_in_shardings": [je.spec_to_json(s) for s in prog.hand_specs],
        "hand_description": prog.hand_label,
        "jax_version": jax.__version__,
        "notes": prog.notes + [
            f"inputs and outputs not stored ({mib:.0f} MiB); run with --random-inputs and --check"
        ],
    }
    je.write_json(os.path.join(d, "meta.json"), meta)
    return coll


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "jax_suggest"))
    ap.add_argument("--only", nargs="+", metavar="NAME")
    ap.add_argument("--list", action="store_true", help="list programs and exit")
    args = ap.parse_args(argv)
    names = [n for n, _, _, _ in PROGRAMS]
    if args.list:
        for n, desc, _, _ in PROGRAMS:
            print(f"{n}: {desc}")
        return 0
    if args.only:
        unknown = sorted(set(args.only) - set(names))
        if unknown:
            raise SystemExit(f"unknown program(s): {', '.join(unknown)}")
    os.makedirs(args.out, exist_ok=True)
    failures = 0
    for name, desc, builder, small_builder in PROGRAMS:
        if args.only and name not in args.only:
            continue
        prog = builder(name)
        prog.description = desc
        try:
            coll = export(prog, args.out)
            small_shapes = export_small(prog, small_builder(name), args.out)
            meta_path = os.path.join(args.out, name, "meta.json")
            with open(meta_path) as f:
                meta = json.load(f)
            meta["small_input_shapes"] = small_shapes
            je.write_json(meta_path, meta)
        except Exception as e:  # report every failure, fail at the end
            failures += 1
            print(f"FAIL {name}: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        kinds = ",".join(sorted({c["kind"] for c in coll["collectives"]})) or "-"
        print(f"ok   {name:34s} hand: collectives={kinds} "
              f"bytes/dev={coll['total_bytes_per_device']:.0f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
