#!/usr/bin/env python3
"""Export JAX programs with loops and conditionals as meshrun fixtures.

Usage:
    python3 tools/jax_export_regions.py [--out fixtures/jax_regions] [--only NAME ...] [--list]

Writes the same files as ``tools/jax_export.py`` (``input.mlir``,
``propagated.mlir``, ``compiled.hlo.txt``, ``in_K.npy``/``out_K.npy``,
``xla_collectives.json`` with every collective's runs per loop trip count,
``meta.json``) with its ``export``. The programs use ``lax.fori_loop``,
``lax.scan``, ``lax.while_loop`` and ``lax.cond`` (``stablehlo.while`` /
``stablehlo.case``), and ``jax.checkpoint`` (``stablehlo.optimization_barrier``).
``runtime/tests/region_fixtures.rs`` partitions both Shardy's ``propagated.mlir``
and meshrun's propagation of ``input.mlir`` and runs them on 8 simulated devices.
"""

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



@program("gpt2_scan_forward",
         "GPT-2-style decoder forward with its layers applied by lax.scan over stacked per-layer "
         "weights (layer dim unsharded; Megatron attention/MLP on model, batch on data, "
         "vocab-parallel jnp.take embedding)")
def _gpt2_scan_forward(name, rng):
    return je.gpt2_programs(name, rng, train=False, scan=True)


@program("gpt2_scan_train_step",
         "GPT-2-style training step with lax.scan over the layers: value_and_grad of the "
         "cross-entropy (the backward pass is a second scan, in reverse) + SGD on the stacked "
         "weights")
def _gpt2_scan_train_step(name, rng):
    return je.gpt2_programs(name, rng, train=True, scan=True)


@program("remat_mlp_grad",
         "jax.checkpoint around each layer of a 2-layer MLP (x on data, weights on model), "
         "value_and_grad + SGD: the backward pass recomputes the layers behind "
         "stablehlo.optimization_barrier")
def _remat_mlp_grad(name, rng):
    mesh = je.M_DM()

    @jax.checkpoint
    def layer(h, w):
        return jnp.tanh(h @ w)

    def loss(w1, w2, x):
        return jnp.mean(layer(layer(x, w1), w2) ** 2)

    def f(x, w1, w2):
        l, (g1, g2) = jax.value_and_grad(loss, argnums=(0, 1))(w1, w2, x)
        return l, w1 - 0.1 * g1, w2 - 0.1 * g2

    args = [je.randn(rng, 16, 32), je.randn(rng, 32, 64, scale=0.2),
            je.randn(rng, 64, 32, scale=0.2)]
    return je.Program(name, None, je.named(f, name), args, mesh,
                      [P("data", None), P(None, "model"), P("model", None)])


def main(argv=None):
    return je.export_cli(BUILDERS, __doc__, "jax_regions", argv)


if __name__ == "__main__":
    sys.exit(main())
