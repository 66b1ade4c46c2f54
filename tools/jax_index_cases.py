#!/usr/bin/env python3
"""Unsharded JAX programs for the indexing ops (gather, scatter, dynamic_slice,
dynamic_update_slice), with inputs and JAX's outputs: the goldens of the
reference interpreter's kernels (runtime/tests/reference_fixtures.rs).

Usage: python3 tools/jax_index_cases.py [--out runtime/tests/data/jax_index_ops]

Each case NAME writes OUT/NAME/input.mlir (``jax.jit(f).lower(*args).as_text()``),
in_K.npy and out_K.npy. Index inputs include out-of-range and negative ids and
duplicate scatter targets, so the clamping and dropping rules are exercised.
Deterministic: inputs come from numpy.random.RandomState(crc32(NAME)).
"""

import argparse
import os
import shutil
import zlib

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax

jax.config.update("jax_platforms", "cpu")

CASES = []


def case(fn):
    CASES.append((fn.__name__, fn))
    return fn


def randn(rng, *shape, dtype=np.float32):
    return (rng.standard_normal(shape) * 0.5).astype(dtype)


@case
def take_fill(rng):
    """jnp.take on rows with ids out of range (mode fill: gather + mask)."""
    table = randn(rng, 10, 4)
    ids = np.array([[0, 9, 3], [10, -1, 12], [5, 5, 2]], np.int32)
    return lambda t, i: jnp.take(t, i, axis=0), [table, ids]


@case
def gather_clip(rng):
    """Raw gather: starts clamped so each 2-row window stays inside."""
    x = randn(rng, 6, 5)
    ids = np.array([[-3], [0], [4], [5], [100]], np.int32)
    dn = lax.GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(),
                                    start_index_map=(0,))
    f = lambda x, i: lax.gather(x, i, dn, slice_sizes=(2, 5),
                                mode=lax.GatherScatterMode.CLIP)
    return f, [x, ids]


@case
def gather_promise(rng):
    """PROMISE_IN_BOUNDS: the gather op's own clamping with out-of-range starts."""
    x = randn(rng, 7, 3)
    ids = np.array([[1], [-2], [8], [6]], np.int32)
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                    start_index_map=(0,))
    f = lambda x, i: lax.gather(x, i, dn, slice_sizes=(1, 3),
                                mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)
    return f, [x, ids]


@case
def gather_two_dims(rng):
    """x[i, j] advanced indexing: an index vector of two."""
    x = randn(rng, 5, 6, 3)
    i = np.array([0, 4, 2, 7], np.int32)
    j = np.array([5, 0, -1, 3], np.int32)
    return lambda x, i, j: x[i, j], [x, i, j]


@case
def take_along_axis(rng):
    """take_along_axis: gather with operand/start-indices batching dims."""
    x = randn(rng, 4, 7)
    ids = rng.randint(-2, 9, size=(4, 3)).astype(np.int32)
    return lambda x, i: jnp.take_along_axis(x, i, axis=1, mode="clip"), [x, ids]


@case
def vmap_dynamic_slice(rng):
    """vmap of dynamic_slice: a windowed gather with batching dims."""
    x = randn(rng, 3, 8, 4)
    starts = np.array([-1, 3, 7], np.int32)
    f = jax.vmap(lambda row, s: lax.dynamic_slice_in_dim(row, s, 3, axis=0))
    return f, [x, starts]


@case
def gather_index_vector_first(rng):
    """index_vector_dim = 0 and an offset dim before the batch dims."""
    x = randn(rng, 4, 5)
    ids = np.array([[1, 3, 0], [4, 0, 2]], np.int32)  # (2, 3): vector dim 0
    dn = lax.GatherDimensionNumbers(offset_dims=(0,), collapsed_slice_dims=(1,),
                                    start_index_map=(0, 1))
    f = lambda x, i: lax.gather(x, jnp.transpose(i), dn, slice_sizes=(2, 1),
                                mode=lax.GatherScatterMode.CLIP)
    return f, [x, ids]


@case
def scatter_add_dups(rng):
    """.at[ids].add with duplicate and out-of-range ids (dropped)."""
    x = randn(rng, 8, 3)
    ids = np.array([1, 3, 1, 9, -1, 7, 1], np.int32)
    u = randn(rng, 7, 3)
    return lambda x, i, u: x.at[i].add(u), [x, ids, u]


@case
def scatter_set(rng):
    """.at[ids].set with unique ids, some out of range."""
    x = randn(rng, 6, 2)
    ids = np.array([5, 0, 6, 2], np.int32)
    u = randn(rng, 4, 2)
    return lambda x, i, u: x.at[i].set(u), [x, ids, u]


@case
def scatter_mul_max_min(rng):
    """.at[].multiply / max / min with duplicates; three results."""
    x = randn(rng, 5, 2)
    ids = np.array([0, 4, 0, 2, 4, 5], np.int32)
    u = randn(rng, 6, 2)
    f = lambda x, i, u: (x.at[i].multiply(u), x.at[i].max(u), x.at[i].min(u))
    return f, [x, ids, u]


@case
def scatter_window_partly_outside(rng):
    """Windows of 3 along the scattered dim: one partly outside is dropped whole."""
    x = randn(rng, 6, 2)
    ids = np.array([[0], [3], [4], [-1]], np.int32)
    u = randn(rng, 4, 3, 2)
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1, 2), inserted_window_dims=(),
                                     scatter_dims_to_operand_dims=(0,))
    f = lambda x, i, u: lax.scatter_add(x, i, u, dn,
                                        mode=lax.GatherScatterMode.FILL_OR_DROP)
    return f, [x, ids, u]


@case
def scatter_int_add(rng):
    """Integer scatter-add (a histogram) with duplicates."""
    ids = rng.randint(-1, 11, size=(20,)).astype(np.int32)
    f = lambda i: jnp.zeros((10,), jnp.int32).at[i].add(1)
    return f, [ids]


@case
def scatter_bf16_add(rng):
    """bf16 scatter-add: each update rounded to bf16."""
    x = randn(rng, 4, 3).astype(jnp.bfloat16)
    ids = np.array([0, 0, 3, 0], np.int32)
    u = randn(rng, 4, 3).astype(jnp.bfloat16)
    return lambda x, i, u: x.at[i].add(u), [x, ids, u]


@case
def vmap_dynamic_update_slice(rng):
    """vmap of dynamic_update_slice: a scatter with batching dims."""
    x = randn(rng, 3, 6)
    u = randn(rng, 3, 2)
    s = np.array([4, -1, 5], np.int32)
    f = jax.vmap(lambda row, up, s: lax.dynamic_update_slice_in_dim(row, up, s, axis=0))
    return f, [x, u, s]


@case
def embedding_grad(rng):
    """The gradient of an embedding lookup: a scatter-add into zeros."""
    table = randn(rng, 9, 4)
    ids = np.array([[1, 8, 1], [0, 3, 8]], np.int32)
    f = jax.grad(lambda t, i: jnp.sum(jnp.sin(jnp.take(t, i, axis=0))))
    return f, [table, ids]


@case
def dynamic_slices(rng):
    """dynamic_slice and dynamic_update_slice with starts clamped at both ends."""
    x = randn(rng, 5, 6)
    u = randn(rng, 2, 4)
    a, b = np.int32(-2), np.int32(4)

    def f(x, u, a, b):
        s1 = lax.dynamic_slice(x, (a, b), (3, 3))
        s2 = lax.dynamic_slice(x, (b, a), (2, 6))
        d1 = lax.dynamic_update_slice(x, u, (b, b))
        d2 = lax.dynamic_update_slice(x, u, (a, a))
        return s1, s2, d1, d2
    return f, [x, u, a, b]


def export(cases, out):
    """Write each (name, build) case's program, inputs and JAX's outputs
    under OUT/NAME (also used by tools/jax_window_cases.py)."""
    for name, build in cases:
        rng = np.random.RandomState(zlib.crc32(name.encode()) & 0x7FFFFFFF)
        fn, inputs = build(rng)
        fn.__name__ = name
        jitted = jax.jit(fn)
        text = jitted.lower(*inputs).as_text()
        outs = jitted(*inputs)
        outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        d = os.path.join(out, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        with open(os.path.join(d, "input.mlir"), "w") as f:
            f.write(text)
        for k, a in enumerate(inputs):
            np.save(os.path.join(d, f"in_{k}.npy"), np.asarray(a))
        for k, a in enumerate(outs):
            np.save(os.path.join(d, f"out_{k}.npy"), np.asarray(a))
        print(f"{name}: {len(inputs)} inputs, {len(outs)} outputs")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="runtime/tests/data/jax_index_ops")
    args = ap.parse_args()
    export(CASES, args.out)


if __name__ == "__main__":
    main()
