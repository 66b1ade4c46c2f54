#!/usr/bin/env python3
"""Export JAX programs with loops and conditionals as meshrun fixtures.

Usage:
    python3 tools/jax_export_regions.py [--out fixtures/jax_regions] [--only NAME ...] [--list]

Writes the same files as ``tools/jax_export.py`` (``input.mlir``,
``propagated.mlir``, ``compiled.hlo.txt``, ``in_K.npy``/``out_K.npy``,
``xla_collectives.json`` with every collective's runs per loop trip count,
``meta.json``) with its ``export``. The programs use ``lax.fori_loop``,
``lax.scan``, ``lax.while_loop`` and ``lax.cond`` (``stablehlo.while`` /
``stablehlo.case``). They live in their own folder while meshrun's own
propagation does not yet go through regions: ``runtime/tests/region_fixtures.rs``
partitions Shardy's ``propagated.mlir`` and runs it on 8 simulated devices.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax_export as je  # noqa: E402  (sets XLA_FLAGS before importing jax)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

BUILDERS = []


def program(name, description):
    def deco(builder):
        BUILDERS.append((name, description, builder))
        return builder
    return deco

@program("fori_matmul", "lax.fori_loop(0, 3) of tanh(x @ w): x on data, w on model; collectives inside the loop body")
def _fori_matmul(name, rng):
    mesh = je.M_DM()

    def f(x, w):
        return jax.lax.fori_loop(0, 3, lambda i, c: jnp.tanh(c @ w), x)

    args = [je.randn(rng, 16, 32), je.randn(rng, 32, 32, scale=0.2)]
    return je.Program(name, None, je.named(f, name), args, mesh, [P("data", None), P(None, "model")])


@program("scan_mlp", "MLP layers applied with lax.scan over stacked weights sharded on model (stack dim unsharded)")
def _scan_mlp(name, rng):
    mesh = je.M_DM()

    def f(x, w1s, w2s):
        def layer(h, ws):
            w1, w2 = ws
            return h + jax.nn.relu(h @ w1) @ w2, None
        h, _ = jax.lax.scan(layer, x, (w1s, w2s))
        return h

    args = [je.randn(rng, 16, 32), je.randn(rng, 4, 32, 64, scale=0.2), je.randn(rng, 4, 64, 32, scale=0.2)]
    return je.Program(name, None, je.named(f, name), args, mesh,
                   [P("data", None), P(None, None, "model"), P(None, "model", None)])


@program("scan_stack_sharded", "lax.scan over a stack of weights sharded along the stack (model); per-layer sums as scan outputs")
def _scan_stack_sharded(name, rng):
    mesh = je.M_DM()

    def f(x, ws):
        def layer(h, w):
            return jnp.tanh(h @ w), h.sum()
        h, sums = jax.lax.scan(layer, x, ws)
        return h, sums

    args = [je.randn(rng, 16, 32), je.randn(rng, 4, 32, 32, scale=0.2)]
    return je.Program(name, None, je.named(f, name), args, mesh,
                   [P("data", None), P("model", None, None)])


@program("while_data_dependent", "lax.while_loop whose trip count depends on a sum over sharded data (the predicate is made whole on every device)")
def _while_data_dependent(name, rng):
    mesh = je.M_XYZ()

    def f(x, v):
        def cond(c):
            h, i = c
            return (jnp.abs(h).sum() > 1.0) & (i < 20)

        def body(c):
            h, i = c
            return (h * 0.5 + v, i + 1)
        h, n = jax.lax.while_loop(cond, body, (x, 0))
        return h, n

    args = [je.randn(rng, 16, 16), je.randn(rng, 16, scale=0.001)]
    return je.Program(name, None, je.named(f, name), args, mesh, [P("x", "y"), P(None)])


@program("cond_sharded", "lax.cond on a scalar predicate with sharded operands (x on data, w on model) in both branches")
def _cond_sharded(name, rng):
    mesh = je.M_DM()

    def f(p, x, w):
        return jax.lax.cond(p > 0, lambda x: jnp.sin(x) @ w, lambda x: x @ w.T, x)

    args = [np.float32(0.7), je.randn(rng, 16, 32), je.randn(rng, 32, 32, scale=0.2)]
    return je.Program(name, None, je.named(f, name), args, mesh, [P(), P("data", None), P(None, "model")])



def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "jax_regions"))
    ap.add_argument("--only", nargs="+", metavar="NAME")
    ap.add_argument("--list", action="store_true", help="list programs and exit")
    args = ap.parse_args(argv)
    if args.list:
        for n, desc, _ in BUILDERS:
            print(f"{n}: {desc}")
        return 0
    os.makedirs(args.out, exist_ok=True)
    failures = []
    for name, desc, builder in BUILDERS:
        if args.only and name not in args.only:
            continue
        prog = builder(name, je.rng_for(name))
        prog.description = desc
        try:
            coll = je.export(prog, args.out)
        except Exception as e:  # report every failure, fail at the end
            failures.append(name)
            print(f"FAIL {name}: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        kinds = ",".join(c["kind"] for c in coll["collectives"]) or "-"
        print(f"ok   {name:36s} collectives={kinds} bytes/dev={coll['total_bytes_per_device']:.0f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
