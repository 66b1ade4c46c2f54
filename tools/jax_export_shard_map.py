#!/usr/bin/env python3
"""Export `jax.shard_map` programs from JAX as meshrun fixtures.

Usage:
    python3 tools/jax_export_shard_map.py [--out fixtures/jax_shard_map] [--only NAME ...] [--list]

Writes the same files as ``tools/jax_export.py`` (``input.mlir``, ``propagated.mlir``,
``compiled.hlo.txt``, ``in_K.npy``/``out_K.npy``, ``xla_collectives.json``,
``meta.json``) with its ``export``; the programs differ in that their bodies are
written per device with the user's own collectives (``lax.psum``, ``all_gather``,
``psum_scatter``, ``ppermute``), lowered to ``sdy.manual_computation``. They live in
their own folder because the tests that walk ``fixtures/jax`` (the unsharded
reference interpreter, the op-for-op propagation goldens) do not cover manual
computations; ``runtime/tests/shard_map_fixtures.rs`` runs them sharded.
"""

import contextlib
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


def shard_map_program(name, fn, args, mesh, in_specs, expected):
    """A Program whose JAX reference rerun uses the mesh (a shard_map cannot run on
    one device); ``expected(*args)`` is an independent numpy result checked after
    the export."""
    prog = je.Program(name, None, je.named(fn, name), args, mesh, in_specs,
                      context=contextlib.nullcontext)
    prog.expected = expected
    return prog


@program("shard_map_psum", "shard_map over (x, y): tanh of each block, lax.psum over x")
def _psum(name, rng):
    mesh = je.M_XY()

    def f(a):
        def body(b):
            return jax.lax.psum(jnp.tanh(b), "x")
        return jax.shard_map(body, mesh=mesh, in_specs=P("x", "y"), out_specs=P(None, "y"))(a)

    def expected(a):
        return np.tanh(a).reshape(4, 16, 32).sum(0)

    return shard_map_program(name, f, [je.randn(rng, 64, 32)], mesh, [P("x", "y")], expected)


@program("shard_map_gather_scatter",
         "shard_map over (x, y): all_gather over y (tiled), sin, psum_scatter over x (tiled)")
def _gather_scatter(name, rng):
    mesh = je.M_XY()

    def f(a):
        def body(b):
            g = jax.lax.all_gather(b, "y", axis=1, tiled=True)
            return jax.lax.psum_scatter(jnp.sin(g), "x", scatter_dimension=1, tiled=True)
        # The result is replicated over y (gathered there); JAX cannot infer it.
        return jax.shard_map(body, mesh=mesh, in_specs=P("x", "y"), out_specs=P(None, "x"),
                             check_vma=False)(a)

    def expected(a):
        return np.sin(a).reshape(4, 16, 32).sum(0)

    return shard_map_program(name, f, [je.randn(rng, 64, 32)], mesh, [P("x", "y")], expected)


@program("shard_map_ring_allreduce",
         "hand-written ring all-reduce on x=8: 7 lax.ppermute steps around the ring, summing")
def _ring(name, rng):
    mesh = je.M_X8()
    n = 8
    ring = [(j, (j + 1) % n) for j in range(n)]

    def f(a):
        def body(b):
            acc, buf = b, b
            for _ in range(n - 1):
                buf = jax.lax.ppermute(buf, "x", ring)
                acc = acc + buf
            return acc
        return jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(a)

    def expected(a):
        return np.tile(a.reshape(8, 8, 16).sum(0), (8, 1))

    return shard_map_program(name, f, [je.randn(rng, 64, 16)], mesh, [P("x")], expected)


@program("shard_map_partial",
         "matmul sharded automatically, then shard_map over x only (y stays automatic): "
         "psum over x, then more automatic ops")
def _partial(name, rng):
    mesh = je.M_XY()

    def f(a, w):
        h = jnp.tanh(a @ w)

        def body(b):
            return jax.lax.psum(b, "x") * 0.5
        s = jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P(),
                          axis_names={"x"})(h)
        return jnp.sin(s) + 1.0

    def expected(a, w):
        h = np.tanh(a.astype(np.float64) @ w)
        return np.sin(h.reshape(4, 16, 16).sum(0) * 0.5) + 1.0

    return shard_map_program(name, f, [je.randn(rng, 64, 32), je.randn(rng, 32, 16, scale=0.2)],
                             mesh, [P("x", None), P(None, "y")], expected)


@program("shard_map_nested",
         "shard_map over x, inside it a shard_map over y: tanh and psum over y in the inner "
         "body, psum over x in the outer one")
def _nested(name, rng):
    mesh = je.M_XY()

    def f(a):
        def inner(c):
            return jax.lax.psum(jnp.tanh(c), "y")

        def outer(b):
            # The inner shard_map takes the mesh the outer one sets (x manual).
            s = jax.shard_map(inner, in_specs=P(None, "y"), out_specs=P(),
                              axis_names={"y"})(b)
            return jax.lax.psum(s, "x")
        return jax.shard_map(outer, mesh=mesh, in_specs=P("x"), out_specs=P(),
                             axis_names={"x"})(a)

    def expected(a):
        return np.tanh(a.astype(np.float64)).reshape(4, 16, 2, 16).sum((0, 2))

    return shard_map_program(name, f, [je.randn(rng, 64, 32)], mesh, [P("x", "y")], expected)


def main(argv=None):
    return je.export_cli(BUILDERS, __doc__, "jax_shard_map", argv)


if __name__ == "__main__":
    sys.exit(main())
