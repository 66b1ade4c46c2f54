#!/usr/bin/env python3
"""Export convolutions and windowed ops sharded on a spatial dimension
(halo exchange) as meshrun fixtures.

Usage:
    python3 tools/jax_export_halo.py [--out fixtures/jax] [--only NAME ...] [--list]

Writes the same files as ``tools/jax_export.py`` (``input.mlir``,
``propagated.mlir``, ``compiled.hlo.txt``, npy inputs/outputs,
``xla_collectives.json``, ``meta.json``) into ``fixtures/jax/halo_*``, so
``runtime/tests/executor_fixtures.rs`` checks meshrun's outputs against
JAX's and ``compiler/tests/partition_fixtures.rs`` its bytes against
XLA's. XLA's SPMD partitioner exchanges halos (collective-permutes of the
boundary rows) for every program here; each shards the height of NHWC
activations on a mesh axis of 2 or 4.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax_export as je  # noqa: E402  (sets XLA_FLAGS before importing jax)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

BUILDERS = []


def program(name, description):
    def deco(builder):
        BUILDERS.append((name, description, builder))
        return builder
    return deco


def _conv(x, w, stride=1, padding="SAME", rhs_dilation=1):
    return jax.lax.conv_general_dilated(
        x, w, (stride, stride), padding, rhs_dilation=(rhs_dilation, rhs_dilation),
        dimension_numbers=("NHWC", "HWIO", "NHWC"))


def _conv_prog(name, rng, axis, h, **kw):
    mesh = je.M_XY()
    spec = P(None, axis, None, None)

    def f(x, w):
        return _conv(x, w, **kw)

    args = [je.randn(rng, 2, h, 8, 3), je.randn(rng, 3, 3, 3, 4, scale=0.3)]
    return je.Program(name, None, je.named(f, name), args, mesh, [spec, P()],
                      out_specs=spec, rtol=1e-4, atol=1e-4)


@program("halo_conv_same", "conv 3x3 SAME stride 1, NHWC height (16) sharded on x (4): one row from each neighbour")
def _halo_conv_same(name, rng):
    return _conv_prog(name, rng, "x", 16)


@program("halo_conv_same_y", "conv 3x3 SAME stride 1, NHWC height (16) sharded on y (2)")
def _halo_conv_same_y(name, rng):
    return _conv_prog(name, rng, "y", 16)


@program("halo_conv_stride2", "conv 3x3 SAME stride 2, height (16) sharded on x (4): a right halo only")
def _halo_conv_stride2(name, rng):
    return _conv_prog(name, rng, "x", 16, stride=2)


@program("halo_conv_valid", "conv 3x3 VALID stride 1, height 18 (16 outputs) sharded on y (2)")
def _halo_conv_valid(name, rng):
    mesh = je.M_XY()

    def f(x, w):
        return _conv(x, w, padding="VALID")

    args = [je.randn(rng, 2, 18, 8, 3), je.randn(rng, 3, 3, 3, 4, scale=0.3)]
    return je.Program(name, None, je.named(f, name), args, mesh,
                      [P(None, "y", None, None), P()], rtol=1e-4, atol=1e-4)


@program("halo_conv_dilated", "conv 3x3 SAME with rhs_dilation 2 (two-row halos), height 16 sharded on x (4)")
def _halo_conv_dilated(name, rng):
    return _conv_prog(name, rng, "x", 16, rhs_dilation=2)


def _pool_prog(name, rng, init, op, win, stride, padding, axis="x", h=16, avg=False):
    mesh = je.M_XY()
    spec = P(None, axis, None, None)

    def f(x):
        w, s = (1, win, win, 1), (1, stride, stride, 1)
        y = jax.lax.reduce_window(x, init, op, w, s, padding)
        if avg:
            y = y / jax.lax.reduce_window(jnp.ones_like(x), 0.0, jax.lax.add, w, s, padding)
        return y

    return je.Program(name, None, je.named(f, name), [je.randn(rng, 2, h, 8, 3)], mesh,
                      [spec], out_specs=spec)


@program("halo_max_pool_s1", "max pool 3x3 stride 1 SAME, height 16 sharded on x (4)")
def _halo_max_pool_s1(name, rng):
    return _pool_prog(name, rng, -jnp.inf, jax.lax.max, 3, 1, "SAME")


@program("halo_max_pool_s2", "max pool 3x3 stride 2 SAME, height 16 sharded on x (4)")
def _halo_max_pool_s2(name, rng):
    return _pool_prog(name, rng, -jnp.inf, jax.lax.max, 3, 2, "SAME")


@program("halo_avg_pool", "avg pool 3x3 stride 1 SAME (window sums / window counts), height 16 sharded on y (2)")
def _halo_avg_pool(name, rng):
    return _pool_prog(name, rng, 0.0, jax.lax.add, 3, 1, "SAME", axis="y", avg=True)


if __name__ == "__main__":
    sys.exit(je.export_cli(BUILDERS, __doc__, "jax"))
