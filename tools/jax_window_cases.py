#!/usr/bin/env python3
"""Unsharded JAX programs for the windowed ops (reduce_window,
select_and_scatter), with inputs and JAX's outputs: the goldens of the
reference interpreter's kernels (runtime/tests/reference_fixtures.rs).

Usage: python3 tools/jax_window_cases.py [--out runtime/tests/data/jax_window_ops]

Covers what JAX emits (cumsum/cumprod/cummax/cummin forward and reverse,
max/min/avg pooling with VALID and SAME padding, the max-pool gradient) and
the corners of the spec: base and window dilations, explicit and negative
padding, windows larger than the input, several inputs in one body,
integer inputs, overlapping select_and_scatter windows.
"""

import argparse

import numpy as np
import jax.numpy as jnp
from jax import lax

from jax_index_cases import export, randn

CASES = []


def case(fn):
    CASES.append((fn.__name__, fn))
    return fn


def ints(rng, *shape):
    return rng.randint(-9, 10, size=shape).astype(np.int32)


@case
def cumulative_ops(rng):
    """jnp.cumsum / cumprod / cummax / cummin / reverse cumsum (window = axis)."""
    x = randn(rng, 3, 7)
    i = ints(rng, 5, 4)
    f = lambda x, i: (jnp.cumsum(x, axis=1), lax.cumprod(x, axis=0),
                      lax.cummax(x, axis=1), lax.cummin(i, axis=0),
                      lax.cumsum(i, axis=1, reverse=True), jnp.cumsum(i))
    return f, [x, i]


@case
def pooling(rng):
    """max / min / avg pooling, VALID and SAME, strides 1 and 2, on NHWC."""
    x = randn(rng, 2, 7, 6, 3)

    def f(x):
        mx = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        mn = lax.reduce_window(x, jnp.inf, lax.min, (1, 3, 3, 1), (1, 1, 1, 1), "SAME")
        av = lax.reduce_window(x, 0.0, lax.add, (1, 3, 2, 1), (1, 2, 2, 1), "SAME") / 6.0
        return mx, mn, av
    return f, [x]


@case
def dilations_and_padding(rng):
    """base and window dilations, asymmetric and negative padding, mul body, ints."""
    x = randn(rng, 5, 6)
    i = ints(rng, 4, 5)

    def f(x, i):
        a = lax.reduce_window(x, 0.0, lax.add, (2, 3), (1, 2),
                              ((1, 2), (0, 1)), base_dilation=(2, 1), window_dilation=(1, 2))
        b = lax.reduce_window(x, 1.0, lax.mul, (2, 2), (2, 1), ((-1, 0), (2, -1)))
        c = lax.reduce_window(i, jnp.int32(-100), lax.max, (3, 2), (1, 1),
                              ((0, 0), (1, 1)), base_dilation=(1, 3), window_dilation=(2, 1))
        d = lax.reduce_window(x, 0.0, lax.add, (9, 2), (1, 1), "VALID")  # no windows
        return a, b, c, d
    return f, [x, i]


@case
def two_inputs(rng):
    """one body over two inputs: max of values and the sum of a second input."""
    x = randn(rng, 6, 5)
    y = ints(rng, 6, 5)

    def body(a, b):
        return jnp.maximum(a[0], b[0]), a[1] + b[1]

    f = lambda x, y: lax.reduce_window((x, y), (-jnp.inf, jnp.int32(0)), body,
                                       (2, 3), (2, 1), ((0, 1), (1, 0)))
    return f, [x, y]


@case
def max_pool_grads(rng):
    """select_and_scatter from JAX's max-pool gradient: non-overlapping,
    overlapping (3x3 stride 2, SAME), ties, and min pooling's GE/LE select."""
    x = randn(rng, 2, 7, 6, 2)
    x[0, 0:2, 0:2, 0] = 1.0  # ties: the first in the window wins
    g = randn(rng, 2, 7, 6, 2)

    def pool(win, st, pad, init, op):
        return lambda x: lax.reduce_window(x, init, op, win, st, pad)

    def f(x, g):
        from jax import vjp
        outs = []
        for p in [pool((1, 2, 2, 1), (1, 2, 2, 1), "VALID", -jnp.inf, lax.max),
                  pool((1, 3, 3, 1), (1, 2, 2, 1), "SAME", -jnp.inf, lax.max),
                  pool((1, 2, 3, 1), (1, 1, 2, 1), "SAME", jnp.inf, lax.min)]:
            y, back = vjp(p, x)
            (dx,) = back(jnp.tanh(g[:, :y.shape[1], :y.shape[2], :]))
            outs.append(dx)
        return tuple(outs)
    return f, [x, g]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="runtime/tests/data/jax_window_ops")
    args = ap.parse_args()
    export(CASES, args.out)


if __name__ == "__main__":
    main()
