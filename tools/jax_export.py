#!/usr/bin/env python3
"""Export reference SPMD programs from JAX as meshrun test fixtures.

Usage:
    python3 tools/jax_export.py [--out fixtures/jax] [--only NAME ...] [--list]

For every program NAME this writes ``OUT/NAME/``:

* ``input.mlir``         -- ``jax.jit(f, in_shardings=..., out_shardings=...).lower(*args).as_text()``
                            (verbatim, StableHLO + Shardy dialect, as JAX prints it);
* ``propagated.mlir``    -- Shardy's module after propagation, as XLA dumps it
                            (``shardy/module_NNNN.jit_NAME/02.after_propagation.mlir``), verbatim;
* ``compiled.hlo.txt``   -- ``compiled.as_text()``: XLA's per-device (SPMD-partitioned) HLO;
* ``in_K.npy``/``out_K.npy`` -- inputs and JAX's outputs (output pytree flattened in order,
                            which is the order of the MLIR ``@main`` results);
* ``xla_collectives.json`` -- the collectives in ``compiled.hlo.txt`` with per-device byte counts;
* ``meta.json``          -- mesh, shardings, shapes, dtypes, JAX version, notes.

Requires JAX with Shardy (0.10.x). Runs on CPU with 8 simulated host devices.
Deterministic: every program draws its inputs from ``numpy.random.RandomState(crc32(NAME))``.
"""

import os

# Must be set before jax is imported.
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse
import contextlib
import glob
import json
import math
import re
import shutil
import sys
import tempfile
import zlib

import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P

jax.config.update("jax_platforms", "cpu")
if not jax.config.jax_use_shardy_partitioner:
    jax.config.update("jax_use_shardy_partitioner", True)
assert jax.config.jax_use_shardy_partitioner, "Shardy partitioner must be enabled"
# Source file names in HLO metadata (compiled.hlo.txt) relative to the repository root,
# so that the fixtures do not depend on where the checkout lives.
jax.config.update("jax_hlo_source_file_canonicalization_regex", r".*/(?=tools/)")

NUM_DEVICES = 8
U = P.UNCONSTRAINED


# ----------------------------------------------------------------------------
# Meshes
# ----------------------------------------------------------------------------

def _devices():
    devs = jax.devices("cpu")
    if len(devs) != NUM_DEVICES:
        raise SystemExit(f"expected {NUM_DEVICES} CPU devices, got {len(devs)}")
    return np.array(devs)


def make_mesh(axes, types=None):
    """axes: list of (name, size); devices in default order 0..7 (row-major)."""
    names = tuple(n for n, _ in axes)
    sizes = tuple(s for _, s in axes)
    if types is None:
        types = (AxisType.Auto,) * len(axes)
    return Mesh(_devices().reshape(sizes), names, axis_types=tuple(types))


def mesh_dict(mesh):
    return {str(n): int(s) for n, s in mesh.shape.items()}


# ----------------------------------------------------------------------------
# Program registry
# ----------------------------------------------------------------------------

class Program:
    def __init__(self, name, description, fn, args, mesh, in_specs,
                 out_specs=None, context=None, notes=None, extra_meshes=None,
                 check=None, place_args=False, rtol=1e-5, atol=1e-5,
                 xla_sharded_wrong=(), text_platforms=None):
        self.name = name
        self.description = description
        self.fn = fn
        self.args = args            # list of numpy arrays
        self.mesh = mesh            # primary mesh (for meta)
        self.in_specs = in_specs    # list of None | (mesh, P) | P (on primary mesh)
        self.out_specs = out_specs  # None | pytree of (mesh, P) / P / None
        self.context = context      # callable returning a context manager (e.g. jax.set_mesh)
        self.notes = notes or []
        self.extra_meshes = extra_meshes or {}  # name -> mesh, for multi-mesh programs
        self.check = check          # optional callable(input_text) -> error str or None
        self.place_args = place_args  # lower with device_put (committed) args, for Explicit meshes
        self.rtol, self.atol = rtol, atol  # tolerance vs. the unsharded single-device run
        # Outputs XLA's sharded run gets wrong (an XLA bug, checked against an
        # f64 run): the fixture stores the unsharded run's outputs instead and
        # says so in meta.json's notes.
        self.xla_sharded_wrong = tuple(xla_sharded_wrong)
        # input.mlir lowered for these platforms (e.g. ("cuda",): the GPU
        # lowering of ragged_dot) while XLA compiles and runs the CPU one.
        self.text_platforms = text_platforms


BUILDERS = []


def program(name, description):
    def deco(builder):
        BUILDERS.append((name, description, builder))
        return builder
    return deco


def rng_for(name):
    return np.random.RandomState(zlib.crc32(name.encode()) & 0x7FFFFFFF)


def randn(rng, *shape, scale=0.5, dtype=np.float32):
    return (rng.standard_normal(shape) * scale).astype(dtype)


def named(fn, name):
    """Give fn the program's name so the module is called @jit_NAME."""
    fn.__name__ = name
    fn.__qualname__ = name
    return fn


# ----------------------------------------------------------------------------
# Programs
# ----------------------------------------------------------------------------

def M_DM():
    return make_mesh([("data", 4), ("model", 2)])


def M_XY():
    return make_mesh([("x", 4), ("y", 2)])


def M_XYZ():
    return make_mesh([("x", 2), ("y", 2), ("z", 2)])


def M_X8():
    return make_mesh([("x", 8)])


@program("mlp_seed", "sin(tanh(x) @ w1 @ w2); x on data, w1 on model, w2 left to propagation (seed 004)")
def _mlp_seed(name, rng):
    mesh = M_DM()

    def f(x, w1, w2):
        return jnp.sin(jnp.tanh(x) @ w1 @ w2)

    args = [randn(rng, 16, 128), randn(rng, 128, 256, scale=0.1), randn(rng, 256, 128, scale=0.1)]
    return Program(name, None, named(f, name), args, mesh,
                   [P("data", None), P(None, "model"), None])


@program("mlp_forward", "4-layer tanh MLP with biases, Megatron-style column/row shardings, batch on data")
def _mlp_forward(name, rng):
    mesh = M_DM()

    def f(x, w1, b1, w2, w3, b3, w4):
        h = jnp.tanh(x @ w1 + b1)
        h = jnp.tanh(h @ w2)
        h = jnp.tanh(h @ w3 + b3)
        return h @ w4

    args = [randn(rng, 16, 32), randn(rng, 32, 64, scale=0.2), randn(rng, 64, scale=0.1),
            randn(rng, 64, 32, scale=0.2), randn(rng, 32, 64, scale=0.2), randn(rng, 64, scale=0.1),
            randn(rng, 64, 16, scale=0.2)]
    specs = [P("data", None), P(None, "model"), P("model"), P("model", None),
             P(None, "model"), P("model"), P("model", None)]
    return Program(name, None, named(f, name), args, mesh, specs)


@jax.jit
def relu(x):
    return jnp.maximum(x, 0.0)


def _needs_call(text):
    if not re.search(r"\bcall @", text):
        return "expected a `call @...` in the exported module (nested jit was inlined)"
    return None


@program("mlp_train_step", "SGD step: value_and_grad of MSE loss of a 2-layer relu MLP (relu is a nested jit -> func.call); returns (loss, new params)")
def _mlp_train_step(name, rng):
    mesh = M_DM()

    def loss_fn(params, x, y):
        w1, b1, w2, b2 = params
        h = relu(x @ w1 + b1)
        pred = h @ w2 + b2
        return jnp.mean((pred - y) ** 2)

    def f(x, y, w1, b1, w2, b2):
        params = (w1, b1, w2, b2)
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        new = tuple(p - 0.1 * g for p, g in zip(params, grads))
        return loss, new

    args = [randn(rng, 16, 32), randn(rng, 16, 8), randn(rng, 32, 64, scale=0.2),
            randn(rng, 64, scale=0.1), randn(rng, 64, 8, scale=0.2), randn(rng, 8, scale=0.1)]
    specs = [P("data", None), P("data", None), P(None, "model"), P("model"),
             P("model", None), None]
    return Program(name, None, named(f, name), args, mesh, specs, check=_needs_call)


@program("call_twice", "a nested-jit helper called twice on differently sharded values (func.func private + two calls)")
def _call_twice(name, rng):
    mesh = M_XY()

    @jax.jit
    def gelu_ish(v):
        return v * jax.nn.sigmoid(1.702 * v)

    def f(a, b):
        return gelu_ish(a) + gelu_ish(b).T

    args = [randn(rng, 8, 16), randn(rng, 16, 8)]
    return Program(name, None, named(f, name), args, mesh, [P("x", "y"), P(None, "x")],
                   check=_needs_call)


@program("elementwise_unary", "chain of unary ops: abs negate exp log tanh sin cos sqrt rsqrt, sigmoid (JAX emits 1/(1+exp(-x)), no stablehlo.logistic)")
def _elementwise_unary(name, rng):
    mesh = M_XY()

    def f(x):
        a = jnp.abs(x) + 0.5
        y = -jnp.log(a) + jnp.exp(-a)
        y = jnp.tanh(y) + jnp.sin(x) * jnp.cos(x)
        y = y + jax.nn.sigmoid(x)
        y = y + jnp.sqrt(a) - jax.lax.rsqrt(a)
        return y

    return Program(name, None, named(f, name), [randn(rng, 8, 16)], mesh, [P("x", "y")])


@program("elementwise_unary_more", "more unary ops: expm1 log1p floor ceil sign, jnp.square (emitted as chlo.square); dim 1 on (y, z)")
def _elementwise_unary_more(name, rng):
    mesh = M_XYZ()

    def f(x):
        a = jnp.abs(x)
        y = jnp.expm1(x) + jnp.log1p(a)
        y = y + jnp.floor(x * 4.0) * 0.25 + jnp.ceil(x * 4.0) * 0.25
        y = y * jnp.sign(x) + jnp.square(x)
        return y

    return Program(name, None, named(f, name), [randn(rng, 8, 8, 4)], mesh,
                   [P("x", ("y", "z"), None)])


@program("elementwise_binary", "binary ops add sub mul div max min pow on two differently sharded operands")
def _elementwise_binary(name, rng):
    mesh = M_XYZ()

    def f(x, y):
        a = x + y
        b = x - y
        c = a * b
        d = c / (jnp.abs(y) + 1.0)
        e = jnp.maximum(d, x) - jnp.minimum(d, y)
        g = jnp.power(jnp.abs(x) + 0.5, y)
        return e + g

    args = [randn(rng, 8, 16), randn(rng, 8, 16)]
    return Program(name, None, named(f, name), args, mesh,
                   [P(("x", "y"), "z"), P(None, "z")])


@program("batched_matmul", "einsum bij,bjk->bik: batch on x, contracting dim on y (partial sum -> all-reduce)")
def _batched_matmul(name, rng):
    mesh = M_XY()

    def f(a, b):
        return jnp.einsum("bij,bjk->bik", a, b)

    args = [randn(rng, 8, 16, 32), randn(rng, 8, 32, 16)]
    return Program(name, None, named(f, name), args, mesh,
                   [P("x", None, "y"), P("x", "y", None)])


@program("dot_transposed_operands", "dot_general with non-standard contracting dims: einsum ji,kj->ik")
def _dot_transposed(name, rng):
    mesh = M_XY()

    def f(a, b):
        return jnp.einsum("ji,kj->ik", a, b)

    args = [randn(rng, 32, 16), randn(rng, 8, 32)]
    return Program(name, None, named(f, name), args, mesh, [P("x", None), P("y", None)])


@program("attention", "multi-head attention: q k^T / sqrt(d), softmax (reduce max + reduce add), @ v; batch on data, heads on model")
def _attention(name, rng):
    mesh = M_DM()

    def f(q, k, v):
        d = q.shape[-1]
        s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(d)
        m = jnp.max(s, axis=-1, keepdims=True)
        e = jnp.exp(s - m)
        p = e / jnp.sum(e, axis=-1, keepdims=True)
        return jnp.einsum("bhqk,bhkd->bhqd", p, v)

    args = [randn(rng, 4, 4, 16, 8), randn(rng, 4, 4, 16, 8), randn(rng, 4, 4, 16, 8)]
    spec = P("data", "model", None, None)
    return Program(name, None, named(f, name), args, mesh, [spec, spec, spec])


@program("attention_projections", "attention with input projections: x @ wq/wk/wv (heads sharded on model), jax.nn.softmax, output projection")
def _attention_proj(name, rng):
    mesh = M_DM()
    H, D = 4, 8

    def f(x, wq, wk, wv, wo):
        B, S, E = x.shape
        q = (x @ wq).reshape(B, S, H, D)
        k = (x @ wk).reshape(B, S, H, D)
        v = (x @ wv).reshape(B, S, H, D)
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(D)
        p = jax.nn.softmax(s, axis=-1)
        o = jnp.einsum("bhqk,bkhd->bqhd", p, v).reshape(B, S, H * D)
        return o @ wo

    args = [randn(rng, 4, 8, 32), randn(rng, 32, 32, scale=0.2), randn(rng, 32, 32, scale=0.2),
            randn(rng, 32, 32, scale=0.2), randn(rng, 32, 32, scale=0.2)]
    specs = [P("data", None, None), P(None, "model"), P(None, "model"), P(None, "model"),
             P("model", None)]
    return Program(name, None, named(f, name), args, mesh, specs)


@program("reshape_merge", "reshape 8x4 sharded [x, y] into 32 (merged dim sharded on x,y)")
def _reshape_merge(name, rng):
    mesh = M_XY()

    def f(x):
        return jnp.sin(x.reshape(32)) * 2.0

    return Program(name, None, named(f, name), [randn(rng, 8, 4)], mesh, [P("x", "y")])


@program("reshape_split_subaxes", "reshape 32 sharded on x=8 into 2x4x4: needs sub-axes x:(1)2 and x:(2)4")
def _reshape_split(name, rng):
    mesh = M_X8()

    def f(x):
        return jnp.cos(x.reshape(2, 4, 4)) + 1.0

    return Program(name, None, named(f, name), [randn(rng, 32)], mesh, [P("x")])


@program("reshape_8x4_to_2x16", "reshape 8x4 (dim 0 on x=8) into 2x16: compound factor ((ij),k)->(i,(jk)), sub-axes")
def _reshape_8x4(name, rng):
    mesh = M_X8()

    def f(x, y):
        return x.reshape(2, 16) * y

    args = [randn(rng, 8, 4), randn(rng, 2, 16)]
    return Program(name, None, named(f, name), args, mesh, [P("x", None), None])


@program("reshape_roundtrip", "reshape 16x8 on [x, y] to 4x4x8, transpose, reshape back to 16x8 and add the input")
def _reshape_roundtrip(name, rng):
    mesh = M_XY()

    def f(x):
        y = x.reshape(4, 4, 8)
        y = jnp.tanh(y).transpose(1, 0, 2)
        return y.reshape(16, 8) + x

    return Program(name, None, named(f, name), [randn(rng, 16, 8)], mesh, [P("x", "y")])


@program("transpose", "transposes of a rank-3 tensor sharded on two dims, added to a differently sharded operand")
def _transpose(name, rng):
    mesh = M_XY()

    def f(x, y):
        return jnp.transpose(x, (2, 0, 1)) + y

    args = [randn(rng, 4, 8, 16), randn(rng, 16, 4, 8)]
    return Program(name, None, named(f, name), args, mesh, [P("x", "y", None), None])


@program("broadcast", "broadcast_in_dim: bias row, scalar, outer product a[:,None]*b[None,:]")
def _broadcast(name, rng):
    mesh = M_XY()

    def f(x, b, u, v):
        return x + b[None, :] + 1.5 + u[:, None] * v[None, :]

    args = [randn(rng, 8, 16), randn(rng, 16), randn(rng, 8), randn(rng, 16)]
    return Program(name, None, named(f, name), args, mesh,
                   [P("x", None), P("y"), None, None])


@program("reductions", "reduce sum / max / min / prod over different dims of a [x, -, y] tensor")
def _reductions(name, rng):
    mesh = M_XY()

    def f(x):
        s = jnp.sum(x, axis=1)
        mx = jnp.max(x, axis=0)
        mn = jnp.min(x, axis=2)
        pr = jnp.prod(1.0 + 0.1 * x, axis=2)
        return s, mx, mn, pr

    return Program(name, None, named(f, name), [randn(rng, 8, 16, 4)], mesh,
                   [P("x", None, "y")])


@program("reduce_sharded_dim", "sum and max over a sharded dim: partial results, all-reduce (add and max)")
def _reduce_sharded(name, rng):
    mesh = M_XY()

    def f(x):
        return jnp.sum(x, axis=1), jnp.max(x, axis=1), jnp.sum(x)

    return Program(name, None, named(f, name), [randn(rng, 16, 32)], mesh, [P("y", "x")])


@program("argmax_accuracy", "accuracy: jnp.argmax/argmin over logits whose class dim is on model (reduce of values + iota with a comparator body), == labels, mean over a data-sharded batch")
def _argmax_accuracy(name, rng):
    mesh = M_DM()

    def f(logits, labels):
        pred = jnp.argmax(logits, axis=-1)
        acc = jnp.mean((pred == labels).astype(jnp.float32))
        return acc, pred, jnp.argmin(logits, axis=-1)

    logits = randn(rng, 32, 64, scale=1.0)
    labels = np.argmax(logits, axis=-1).astype(np.int32)
    labels[::3] = rng.randint(0, 64, size=labels[::3].shape)
    return Program(name, None, named(f, name), [logits, labels], mesh,
                   [P("data", "model"), P("data")])


@program("sort_argsort", "jnp.argsort along rows of a batch-sharded matrix (sort of values + iota with JAX's total-order comparator, is_stable) and jnp.sort along the sharded batch dim (the sorted dim must be whole)")
def _sort_argsort(name, rng):
    mesh = M_DM()

    def f(x):
        return jnp.argsort(x, axis=-1), jnp.sort(x, axis=0)

    x = randn(rng, 16, 32, scale=1.0)
    x[3, 5] = x[3, 9]  # a tie: the stable sort keeps index order
    return Program(name, None, named(f, name), [x], mesh, [P("data", None)])


@program("top_k_logits", "jax.lax.top_k of logits sharded on batch (chlo.top_k: values and int32 indices of the 5 largest per row)")
def _top_k_logits(name, rng):
    mesh = M_DM()

    def f(logits):
        values, indices = jax.lax.top_k(logits, 5)
        return values, indices

    return Program(name, None, named(f, name), [randn(rng, 16, 64, scale=1.0)], mesh,
                   [P("data", None)])


@program("reverse", "jnp.flip along an unsharded dim and along a sharded one (stablehlo.reverse: device d's block comes from the mirrored device)")
def _reverse(name, rng):
    mesh = M_DM()

    def f(x):
        return jnp.flip(x, axis=1), jnp.flip(x, axis=0) * 2.0

    return Program(name, None, named(f, name), [randn(rng, 16, 12)], mesh,
                   [P("data", None)])


@program("mean_var", "jnp.mean and jnp.var over rows and over everything")
def _mean_var(name, rng):
    mesh = M_DM()

    def f(x):
        return jnp.mean(x, axis=0), jnp.var(x, axis=1), jnp.mean(x)

    return Program(name, None, named(f, name), [randn(rng, 16, 32)], mesh, [P("data", "model")])


@program("layernorm", "layer norm: mean, variance, rsqrt, scale and shift; batch on data")
def _layernorm(name, rng):
    mesh = M_DM()

    def f(x, g, b):
        mu = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
        return (x - mu) * jax.lax.rsqrt(var + 1e-5) * g + b

    args = [randn(rng, 16, 32), 1.0 + randn(rng, 32, scale=0.1), randn(rng, 32, scale=0.1)]
    return Program(name, None, named(f, name), args, mesh, [P("data", None), P("model"), None])


@program("cross_entropy", "log-softmax cross-entropy loss with i32 labels (one-hot via iota compare), mean over batch")
def _cross_entropy(name, rng):
    mesh = M_DM()

    def f(logits, labels):
        logp = jax.nn.log_softmax(logits, axis=-1)
        onehot = jax.nn.one_hot(labels, logits.shape[-1], dtype=logits.dtype)
        return -jnp.mean(jnp.sum(onehot * logp, axis=-1))

    args = [randn(rng, 16, 10, scale=1.0), rng.randint(0, 10, size=(16,)).astype(np.int32)]
    return Program(name, None, named(f, name), args, mesh, [P("data", None), P("data")])


@program("concatenate", "concatenate along a replicated dim and along a sharded dim")
def _concatenate(name, rng):
    mesh = M_XY()

    def f(a, b, c):
        ab = jnp.concatenate([a, b], axis=1)
        return jnp.concatenate([ab, c], axis=0)

    args = [randn(rng, 8, 4), randn(rng, 8, 12), randn(rng, 8, 16)]
    return Program(name, None, named(f, name), args, mesh,
                   [P("x", None), P("x", None), P(None, "y")])


@program("slice", "static slices, one strided, of a [x, y] tensor")
def _slice(name, rng):
    mesh = M_XY()

    def f(x):
        a = x[2:14:2, 4:20]
        b = jax.lax.slice(x, (0, 8), (6, 24))
        return a + b

    return Program(name, None, named(f, name), [randn(rng, 16, 32)], mesh, [P("x", "y")])


@program("pad", "lax.pad with low/high edge padding and interior padding, and jnp.pad")
def _pad(name, rng):
    mesh = M_XY()

    def f(x):
        a = jax.lax.pad(x, np.float32(0.0), [(1, 2, 0), (0, 0, 1)])
        b = jnp.pad(x, ((2, 1), (3, 12)), constant_values=-1.0)
        return a, b

    return Program(name, None, named(f, name), [randn(rng, 8, 16)], mesh, [P("x", None)])


@program("sharding_constraint_unconstrained", "with_sharding_constraint with an UNCONSTRAINED dim (open sharding {?}) in the middle of a matmul chain")
def _wsc_unconstrained(name, rng):
    mesh = M_DM()

    def f(x, w):
        y = jnp.sin(x)
        y = jax.lax.with_sharding_constraint(y, NamedSharding(mesh, P(U, "model")))
        z = y @ w
        return jax.lax.with_sharding_constraint(z, NamedSharding(mesh, P("data", U)))

    args = [randn(rng, 16, 32), randn(rng, 32, 16, scale=0.2)]
    return Program(name, None, named(f, name), args, mesh, [P("data", None), None])


@program("non_divisible", "dim of size 12 constrained onto x=8 (non-divisible, padded) via with_sharding_constraint, then reduced")
def _non_divisible(name, rng):
    mesh = M_X8()

    def f(x):
        y = jnp.exp(x * 0.5)
        y = jax.lax.with_sharding_constraint(y, NamedSharding(mesh, P("x", None)))
        return y * 2.0, jnp.sum(y, axis=0), jnp.max(y, axis=0)

    return Program(name, None, named(f, name), [randn(rng, 12, 16)], mesh, [None],
                   notes=["JAX refuses non-divisible in_shardings for arguments (IndivisibleError: "
                          "'implies that array axis 0 is partitioned 8 times, but the dimension size is 12'); "
                          "the non-divisible sharding is therefore introduced by with_sharding_constraint "
                          "on an intermediate, which JAX accepts."])


@program("non_divisible_7", "dim of size 7 constrained onto data=4 and size 12 onto model*data via with_sharding_constraint")
def _non_divisible_7(name, rng):
    mesh = M_DM()

    def f(x, y):
        a = jax.lax.with_sharding_constraint(jnp.tanh(x), NamedSharding(mesh, P("data", None)))
        b = jax.lax.with_sharding_constraint(jnp.sin(y), NamedSharding(mesh, P(None, ("model", "data"))))
        return a @ b

    args = [randn(rng, 7, 16), randn(rng, 16, 12)]
    return Program(name, None, named(f, name), args, mesh, [None, None],
                   notes=["non-divisible shardings only on intermediates (sizes 7 over 4, 12 over 8)."])


@program("aggressive_conflict", "x on [data, -] and w on [data, -] both feed a matmul: axis data wanted by two factors")
def _aggressive_conflict(name, rng):
    mesh = M_DM()

    def f(x, w):
        return jnp.tanh(x @ w)

    args = [randn(rng, 16, 32), randn(rng, 32, 16, scale=0.2)]
    return Program(name, None, named(f, name), args, mesh, [P("data", None), P("data", None)])


@program("conflict_seed003", "seed 003: lhs [x, y], rhs [y, x], mesh x=4 y=2: x used by i and j -> rhs reshard, partial over y")
def _conflict_003(name, rng):
    mesh = M_XY()

    def f(a, b):
        return a @ b

    args = [randn(rng, 8, 32), randn(rng, 32, 16)]
    return Program(name, None, named(f, name), args, mesh, [P("x", "y"), P("y", "x")],
                   out_specs=P("x", None))


@program("out_sharding_override", "out_shardings [model, -] differs from what propagation wants ([data, model])")
def _out_override(name, rng):
    mesh = M_DM()

    def f(x, w):
        return jnp.sin(x @ w)

    args = [randn(rng, 16, 32), randn(rng, 32, 16, scale=0.2)]
    return Program(name, None, named(f, name), args, mesh, [P("data", None), P(None, "model")],
                   out_specs=P("model", None))


@program("reduce_scatter", "contracting dim sharded on x, out_shardings [x, -]: a reduce-scatter pattern (XLA:CPU emits all-reduce + dynamic-slice)")
def _reduce_scatter(name, rng):
    mesh = M_XY()

    def f(x, w):
        return x @ w

    args = [randn(rng, 16, 32), randn(rng, 32, 16, scale=0.2)]
    return Program(name, None, named(f, name), args, mesh, [P(None, "x"), P("x", None)],
                   out_specs=P("x", None))


@program("all_to_all_reshard", "reshard [x, y, -] -> [-, y, x] by with_sharding_constraint (all-to-all of x from dim 0 to dim 2)")
def _all_to_all(name, rng):
    mesh = M_XY()

    def f(x):
        y = jax.lax.with_sharding_constraint(x * 2.0, NamedSharding(mesh, P(None, "y", "x")))
        return jnp.sin(y)

    return Program(name, None, named(f, name), [randn(rng, 8, 4, 8)], mesh, [P("x", "y", None)],
                   out_specs=P(None, "y", "x"))


@program("collective_permute_reshard", "reshard [(x,y), -] -> [z, -] on x=y=z=2 (collective-permute then all-gather)")
def _cp(name, rng):
    mesh = M_XYZ()

    def f(x):
        y = jax.lax.with_sharding_constraint(x + 1.0, NamedSharding(mesh, P("z", None)))
        return y * y

    return Program(name, None, named(f, name), [randn(rng, 8, 8)], mesh, [P(("x", "y"), None)],
                   out_specs=P("z", None))


@program("mesh_xyz_matmul", "3-D mesh x=y=z=2: lhs [(x,y), z], rhs [z, -]: contracting on z, batch on x*y")
def _xyz_matmul(name, rng):
    mesh = M_XYZ()

    def f(a, b, c):
        return jnp.tanh(a @ b) @ c

    args = [randn(rng, 16, 32), randn(rng, 32, 16, scale=0.2), randn(rng, 16, 8, scale=0.2)]
    return Program(name, None, named(f, name), args, mesh,
                   [P(("x", "y"), "z"), P("z", None), None])


@program("two_meshes", "two meshes over the same 8 devices (data=4,model=2 and a=2,b=4); args and a constraint on different meshes")
def _two_meshes(name, rng):
    m1 = M_DM()
    m2 = make_mesh([("a", 2), ("b", 4)])

    def f(x, y):
        z = jnp.sin(x) + y
        z = jax.lax.with_sharding_constraint(z, NamedSharding(m2, P("b", "a")))
        return z * 2.0

    args = [randn(rng, 16, 8), randn(rng, 16, 8)]
    return Program(name, None, named(f, name), args, m1,
                   [(m1, P("data", None)), (m2, P("a", None))],
                   extra_meshes={"mesh_ab": m2})


@program("mesh_device_order", "two meshes x=4,y=2 over the same devices, the second with device_ids=[0,2,4,6,1,3,5,7] (NamedSharding._logical_device_ids)")
def _mesh_device_order(name, rng):
    mesh = M_XY()
    perm = (0, 2, 4, 6, 1, 3, 5, 7)
    permuted = NamedSharding(mesh, P("x", None), _logical_device_ids=perm)

    def f(a, b):
        return a * 2.0 + jnp.sin(b)

    args = [randn(rng, 8, 16), randn(rng, 8, 16)]
    return Program(name, None, named(f, name), args, mesh, [P("x", None), permuted],
                   notes=[f"input 1 uses NamedSharding(mesh, P('x', None), _logical_device_ids={list(perm)}) "
                          "(private JAX API); JAX prints it as a second sdy.mesh with device_ids.",
                          "A Mesh built over a permuted jax.devices() list does NOT produce device_ids: "
                          "JAX prints an iota sdy.mesh and moves the order into the executable's device "
                          "assignment. Mixing such a mesh with an iota-ordered one in one jit is refused: "
                          "'ValueError: Received incompatible devices for jitted computation. Got "
                          "ARG_SHARDING with device ids [0, 1, 2, 3, 4, 5, 6, 7] on platform CPU and "
                          "sharding_constraint inside jit with device ids [0, 2, 4, 6, 1, 3, 5, 7] on "
                          "platform CPU'."])


@program("explicit_replicated", "mesh with x Explicit, y Auto: jax.sharding.reshard emits replicated={\"x\"} constraints")
def _explicit_replicated(name, rng):
    mesh = make_mesh([("x", 4), ("y", 2)], types=(AxisType.Explicit, AxisType.Auto))

    def f(a, b):
        c = a @ b
        c = jax.sharding.reshard(c, P(None, None))
        return jnp.sin(c)

    args = [randn(rng, 16, 8), randn(rng, 8, 16)]

    def check(text):
        return None if 'replicated={"x"}' in text else "expected replicated={\"x\"} in input.mlir"

    return Program(name, None, named(f, name), args, mesh, [P("x", None), P(None, "y")],
                   context=lambda: jax.set_mesh(mesh), check=check, place_args=True,
                   notes=["mesh axis x is AxisType.Explicit, y is Auto; traced under jax.set_mesh(mesh)."])


@program("unreduced_matmul", "fully Explicit mesh: dot_general with out_sharding unreduced={x}, then reshard to [x, -]")
def _unreduced(name, rng):
    mesh = make_mesh([("x", 4), ("y", 2)], types=(AxisType.Explicit, AxisType.Explicit))

    def f(a, b):
        c = jax.lax.dot_general(a, b, (((1,), (0,)), ((), ())),
                                out_sharding=P(None, None, unreduced={"x"}))
        c = jax.sharding.reshard(c, P("x", None))
        return jnp.sin(c)

    args = [randn(rng, 16, 8), randn(rng, 8, 16)]

    def check(text):
        return None if "unreduced=" in text else "expected unreduced={...} in input.mlir"

    return Program(name, None, named(f, name), args, mesh, [P(None, "x"), P("x", None)],
                   context=lambda: jax.set_mesh(mesh), check=check, place_args=True,
                   notes=["both mesh axes AxisType.Explicit; traced under jax.set_mesh(mesh)."])


@program("unreduced_add_replicated", "Explicit mesh: a replicated value resharded to unreduced={x} (replicated_to_unreduced: kept by one device, zeros elsewhere) added to an unreduced dot, reduced once")
def _unreduced_add_replicated(name, rng):
    mesh = make_mesh([("x", 4), ("y", 2)], types=(AxisType.Explicit, AxisType.Explicit))

    def f(a, b, bias):
        c = jax.lax.dot_general(a, b, (((1,), (0,)), ((), ())),
                                out_sharding=P(None, "y", unreduced={"x"}))
        u = jax.sharding.reshard(bias, P(None, "y", unreduced={"x"}))
        s = c + u
        return jnp.tanh(jax.sharding.reshard(s, P(None, "y")))

    args = [randn(rng, 16, 8), randn(rng, 8, 16), randn(rng, 16, 16)]

    def check(text):
        return None if text.count("unreduced=") >= 2 else "expected unreduced={...} constraints in input.mlir"

    return Program(name, None, named(f, name), args, mesh, [P(None, "x"), P("x", "y"), P(None, None)],
                   context=lambda: jax.set_mesh(mesh), check=check, place_args=True,
                   notes=["both mesh axes AxisType.Explicit; traced under jax.set_mesh(mesh)."])


@program("shard_alike", "jax.experimental.shard_alike: two values forced to share a sharding (sdy.sharding_group)")
def _shard_alike(name, rng):
    from jax.experimental.shard_alike import shard_alike
    mesh = M_XY()

    def f(a, b):
        a2, b2 = shard_alike(jnp.sin(a), jnp.cos(b))
        return a2 * b2

    args = [randn(rng, 8, 16), randn(rng, 8, 16)]
    return Program(name, None, named(f, name), args, mesh, [P("x", None), None])


@program("compare_select", "compare (gt, eq, lt) and select (jnp.where), clamp")
def _compare_select(name, rng):
    mesh = M_XY()

    def f(x, y):
        a = jnp.where(x > y, x * 2.0, y - 1.0)
        b = jnp.where(x == x, a, 0.0)
        c = jnp.where(y < 0.0, -a, b)
        return jnp.clip(c, -1.0, 1.0)

    args = [randn(rng, 8, 16), randn(rng, 8, 16)]
    return Program(name, None, named(f, name), args, mesh, [P("x", "y"), P("x", None)])


@program("iota", "iota (arange and broadcasted_iota), i32 -> f32 convert, added to a sharded tensor")
def _iota(name, rng):
    mesh = M_XY()

    def f(x):
        r = jnp.arange(16, dtype=jnp.float32)[None, :]
        c = jax.lax.broadcasted_iota(jnp.int32, (8, 16), 0)
        mask = (c % 2) == 0
        return jnp.where(mask, x + r, x - c.astype(jnp.float32)), c * 3

    return Program(name, None, named(f, name), [randn(rng, 8, 16)], mesh, [P("x", "y")])


@program("convert_bf16", "f32 -> bf16 matmul and tanh in bf16 -> f32 (inputs and outputs f32)")
def _convert_bf16(name, rng):
    mesh = M_DM()

    def f(x, w):
        xb = x.astype(jnp.bfloat16)
        wb = w.astype(jnp.bfloat16)
        h = jnp.tanh(xb @ wb)
        return h.astype(jnp.float32) + x[:, :16]

    args = [randn(rng, 16, 32), randn(rng, 32, 16, scale=0.2)]
    return Program(name, None, named(f, name), args, mesh, [P("data", None), P(None, "model")])


@program("f16_program", "f16 inputs and outputs: matmul, exp, sum")
def _f16(name, rng):
    mesh = M_DM()

    def f(x, w):
        h = jnp.exp(x @ w * 0.25)
        return h, jnp.sum(h, axis=1)

    args = [randn(rng, 16, 32, dtype=np.float16), randn(rng, 32, 16, scale=0.2, dtype=np.float16)]
    return Program(name, None, named(f, name), args, mesh, [P("data", None), P(None, "model")])


@program("constant_table", "non-splat dense constants (a 16x16 table and a small vector) combined with the input")
def _constant_table(name, rng):
    mesh = M_XY()
    table = (np.arange(256, dtype=np.float32).reshape(16, 16) / 256.0).astype(np.float32)
    vec = np.array([1.0, -2.0, 0.5, 3.0], dtype=np.float32)

    def f(x):
        y = x * table + 0.25
        return y.reshape(16, 4, 4) * vec

    return Program(name, None, named(f, name), [randn(rng, 16, 16)], mesh, [P("x", "y")])


@contextlib.contextmanager
def unrolled_threefry():
    """Lower threefry2x32 on CPU the way JAX lowers it for TPUs (and GPUs
    without the threefry kernel): the five rounds unrolled, no
    stablehlo.while. JAX's CPU rule rolls them into a while loop, which the
    partitioner does not split yet; the bits are the same either way."""
    from jax._src.interpreters import mlir as _mlir
    from jax._src.random import threefry2x32 as _tf
    table = _mlir._platform_specific_lowerings["cpu"]
    saved = table.get(_tf.threefry2x32_p)
    _mlir.register_lowering(_tf.threefry2x32_p, _tf._threefry2x32_lowering_rule, platform="cpu")
    try:
        yield
    finally:
        if saved is None:
            table.pop(_tf.threefry2x32_p, None)
        else:
            table[_tf.threefry2x32_p] = saved


@program("random_dropout", "jax.random.bernoulli dropout inside jit (threefry2x32, partitionable: shifts, xor, or, ui32/ui64 iota, bitcast_convert to f32) and the raw jax.random.bits; x on (data, model), key replicated; threefry rounds unrolled (see unrolled_threefry)")
def _random_dropout(name, rng):
    mesh = M_DM()

    def f(key_data, x):
        key = jax.random.wrap_key_data(key_data, impl="threefry2x32")
        k1, k2 = jax.random.split(key)
        keep = jax.random.bernoulli(k1, 0.75, x.shape)
        bits = jax.random.bits(k2, (x.shape[0], 8), dtype=jnp.uint32)
        return jnp.where(keep, x / 0.75, 0.0), keep, bits

    key = np.asarray(jax.random.key_data(jax.random.key(1234)), dtype=np.uint32)
    return Program(name, None, named(f, name), [key, randn(rng, 16, 32)], mesh,
                   [P(None), P("data", "model")], context=unrolled_threefry,
                   notes=["threefry2x32 lowered unrolled on CPU (JAX's TPU/GPU lowering); "
                          "JAX's CPU lowering puts the rounds in a stablehlo.while"])


@program("integer_ops", "integer and bit ops on sharded i32/ui32/ui8/i8 tensors: shifts (incl. out-of-range amounts), and/or/xor/not, popcnt, clz, remainder and division by zero, wrapping add/mul, integer power, bitcast_convert, converts between widths, integer sums")
def _integer_ops(name, rng):
    mesh = M_XY()

    def f(a, b, u):
        s = b % 40  # shift amounts, some >= 32
        x = (a << s) ^ jax.lax.shift_right_logical(a, s) | jax.lax.shift_right_arithmetic(a, s)
        y = jax.lax.population_count(x) + jax.lax.clz(a) - (~a & 0xFF)
        z = jnp.remainder(a, b) + jax.lax.rem(a, b) + jax.lax.div(a, b) + a * b + a ** 3
        w = jax.lax.shift_right_logical(u, jnp.uint32(3)) + (u << jnp.uint32(7)) + u * u
        w = w ^ jax.lax.bitcast_convert_type(a, jnp.uint32)
        v = jax.lax.bitcast_convert_type(u, jnp.int8)  # 4 bytes per element
        n8 = u.astype(jnp.uint8) + jnp.uint8(200)
        i8 = (a.astype(jnp.int8) * jnp.int8(3)).astype(jnp.int32)
        return (x + y + z + i8, w, jnp.sum(w, axis=1), v, n8,
                jax.lax.population_count(n8), jnp.sum(x, axis=0))

    a = rng.randint(-2**31, 2**31, size=(8, 16), dtype=np.int64).astype(np.int32)
    b = rng.randint(-50, 50, size=(8, 16)).astype(np.int32)
    u = rng.randint(0, 2**32, size=(8, 16), dtype=np.uint64).astype(np.uint32)
    return Program(name, None, named(f, name), [a, b, u], mesh,
                   [P("x", "y"), P("x", None), P(None, "y")])


# ----------------------------------------------------------------------------
# Indexing programs: gather, scatter, dynamic slices (issue 12)
# ----------------------------------------------------------------------------

@program("vocab_parallel_embedding", "jnp.take of token ids (some out of range: filled with 0) from a table sharded on the vocabulary (Megatron: P('model', None)), ids on data")
def _vocab_parallel_embedding(name, rng):
    mesh = M_DM()

    def f(table, ids):
        return jnp.take(table, ids, axis=0, mode="fill", fill_value=0.0)

    ids = rng.randint(0, 64, size=(8, 6)).astype(np.int32)
    ids[1, 2], ids[5, 0] = 64, -70
    args = [randn(rng, 64, 16), ids]
    return Program(name, None, named(f, name), args, mesh, [P("model", None), P("data", None)])


@program("embedding_bag", "embedding-bag: weighted sum of the rows of 5 ids per bag (gather + reduce), table on model, bags on data")
def _embedding_bag(name, rng):
    mesh = M_DM()

    def f(table, ids, w):
        rows = jnp.take(table, ids, axis=0, mode="clip")
        return jnp.sum(rows * w[..., None], axis=1)

    args = [randn(rng, 48, 16), rng.randint(0, 48, size=(8, 5)).astype(np.int32),
            randn(rng, 8, 5)]
    return Program(name, None, named(f, name), args, mesh,
                   [P("model", None), P("data", None), P("data", None)])


@program("embedding_grad", "gradient of a vocab-parallel lookup: scatter-add of the rows' cotangents into a table sharded on model, ids on data")
def _embedding_grad(name, rng):
    mesh = M_DM()

    def loss(table, ids):
        return jnp.sum(jnp.sin(jnp.take(table, ids, axis=0, mode="clip")))

    f = jax.grad(loss)
    ids = rng.randint(0, 32, size=(8, 6)).astype(np.int32)
    ids[0, :3] = 7  # duplicates
    args = [randn(rng, 32, 16), ids]
    return Program(name, None, named(f, name), args, mesh, [P("model", None), P("data", None)])


@program("dynamic_slices", "dynamic_slice and dynamic_update_slice of a tensor sharded on both dims, starts clamped")
def _dynamic_slices(name, rng):
    mesh = M_DM()

    def f(x, u, a, b):
        s = jax.lax.dynamic_slice(x, (a, 0), (4, 16))
        d = jax.lax.dynamic_update_slice(x, u, (b, 0))
        return s * 2.0, d

    args = [randn(rng, 16, 16), randn(rng, 3, 16), np.int32(5), np.int32(14)]
    return Program(name, None, named(f, name), args, mesh,
                   [P("data", "model"), P(), P(), P()])


# ----------------------------------------------------------------------------
# Windowed programs: reduce_window, select_and_scatter (issue 12)
# ----------------------------------------------------------------------------

def _max_pool_2x2(x):
    return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


@program("cumsum_batch", "jnp.cumsum along the feature axis of a batch sharded on data (reduce_window: window = axis, low padding)")
def _cumsum_batch(name, rng):
    mesh = M_DM()

    def f(x, y):
        return jnp.cumsum(x, axis=1), jnp.cumsum(y, axis=0)

    args = [randn(rng, 16, 12), rng.randint(-5, 5, size=(6, 8)).astype(np.int32)]
    return Program(name, None, named(f, name), args, mesh, [P("data", None), P(None, "data")])


@program("max_pool", "2x2 max pooling (stride 2) of an NHWC batch: batch on data, channels on model")
def _max_pool(name, rng):
    mesh = M_DM()
    f = _max_pool_2x2
    return Program(name, None, named(f, name), [randn(rng, 8, 8, 6, 4)], mesh,
                   [P("data", None, None, "model")])


@program("max_pool_grad", "gradient of 2x2 max pooling (select_and_scatter): batch on data, channels on model")
def _max_pool_grad(name, rng):
    mesh = M_DM()

    def loss(x, w):
        return jnp.sum(jnp.tanh(_max_pool_2x2(x)) * w)

    f = jax.grad(loss)
    args = [randn(rng, 8, 8, 6, 4), randn(rng, 8, 4, 3, 4)]
    return Program(name, None, named(f, name), args, mesh,
                   [P("data", None, None, "model"), P("data", None, None, "model")])


@program("avg_pool", "3x3 average pooling, stride 2, SAME padding (reduce_window add, divided by the window counts), batch on data")
def _avg_pool(name, rng):
    mesh = M_DM()

    def f(x):
        win, st = (1, 3, 3, 1), (1, 2, 2, 1)
        s = jax.lax.reduce_window(x, 0.0, jax.lax.add, win, st, "SAME")
        n = jax.lax.reduce_window(jnp.ones_like(x), 0.0, jax.lax.add, win, st, "SAME")
        return s / n

    return Program(name, None, named(f, name), [randn(rng, 8, 7, 7, 2)], mesh,
                   [P("data", None, None, None)])


# ----------------------------------------------------------------------------
# Convolutions (issue 12): a small CNN, its training step, a depthwise conv
# ----------------------------------------------------------------------------

def _conv_nhwc(x, w, stride=1, padding="SAME", groups=1):
    return jax.lax.conv_general_dilated(
        x, w, (stride, stride), padding, dimension_numbers=("NHWC", "HWIO", "NHWC"),
        feature_group_count=groups)


def _cnn_params(rng):
    return [randn(rng, 3, 3, 3, 8, scale=0.3), randn(rng, 8, scale=0.1),
            randn(rng, 3, 3, 1, 8, scale=0.3), randn(rng, 8, scale=0.1),
            randn(rng, 2 * 2 * 8, 10, scale=0.2), randn(rng, 10, scale=0.1)]


def _cnn_forward(p, x):
    """conv 3x3 SAME (3 -> 8) + relu, depthwise conv 3x3 stride 2 + relu,
    2x2 max pool, dense to 10 logits."""
    w1, b1, w2, b2, wd, bd = p
    h = jax.nn.relu(_conv_nhwc(x, w1) + b1)
    h = jax.nn.relu(_conv_nhwc(h, w2, stride=2, groups=8) + b2)
    h = _max_pool_2x2(h)
    return h.reshape(h.shape[0], -1) @ wd + bd


def _cnn_loss(p, x, labels):
    logp = jax.nn.log_softmax(_cnn_forward(p, x), axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=-1))


@program("cnn_forward", "small CNN forward: conv 3x3 SAME + relu, depthwise conv 3x3 stride 2 + relu, 2x2 max pool, dense; NHWC batch on data, parameters replicated")
def _cnn_forward_prog(name, rng):
    mesh = M_DM()
    params = _cnn_params(rng)

    def f(x, *p):
        return _cnn_forward(p, x)

    x = randn(rng, 8, 8, 8, 3)
    return Program(name, None, named(f, name), [x] + params, mesh,
                   [P("data", None, None, None)] + [P()] * len(params), rtol=1e-4, atol=1e-4)


@program("cnn_train_step", "the small CNN's training step: value_and_grad of the cross-entropy + SGD; the conv gradients use lhs_dilation (stride 2), window reversal layouts and batch_group_count (depthwise weights); batch on data")
def _cnn_train_step_prog(name, rng):
    mesh = M_DM()
    params = _cnn_params(rng)

    def f(x, labels, *p):
        loss, grads = jax.value_and_grad(_cnn_loss)(list(p), x, labels)
        return [loss] + [a - 0.1 * g for a, g in zip(p, grads)]

    x = randn(rng, 8, 8, 8, 3)
    labels = rng.randint(0, 10, size=(8,)).astype(np.int32)
    # XLA's SPMD partitioner gets the depthwise weight gradient (a
    # convolution with batch_group_count = 8 whose batch is sharded on
    # data) wrong: off by 0.017 from the unsharded and f64 runs.
    return Program(name, None, named(f, name), [x, labels] + params, mesh,
                   [P("data", None, None, None), P("data")] + [P()] * len(params),
                   rtol=1e-4, atol=1e-4, xla_sharded_wrong=[3])


@program("depthwise_conv", "depthwise conv 3x3 (feature_group_count = 8, channel multiplier 2): batch on data, channels on model (each device keeps whole groups)")
def _depthwise_conv_prog(name, rng):
    mesh = M_DM()

    def f(x, w):
        return _conv_nhwc(x, w, groups=8)

    args = [randn(rng, 8, 6, 6, 8), randn(rng, 3, 3, 1, 16, scale=0.3)]
    return Program(name, None, named(f, name), args, mesh,
                   [P("data", None, None, "model"), P(None, None, None, "model")])


# A GPT-2-style decoder written as JAX users write it: token embedding with
# jnp.take (a gather), learned positions, pre-LN blocks with causal
# attention and a GELU MLP (layers unrolled in Python), a final LN and
# logits tied to the embedding; loss = cross-entropy with take_along_axis.
# Megatron + DP: batch on data, attention heads and MLP columns on model,
# the embedding table's vocabulary on model.
def set_gpt2_size(v, d, h, t, b, l):
    """Vocabulary, width, heads, tokens, batch and layers of the GPT-2
    programs (the fixtures' size below; tools/gpt2_bench_export.py exports
    a larger one for the benchmark), and GPT2_LAYER: one decoder layer's
    weights as (name, shape, sharding, scale, offset)."""
    global GPT2_V, GPT2_D, GPT2_H, GPT2_T, GPT2_B, GPT2_L, GPT2_LAYER
    GPT2_V, GPT2_D, GPT2_H, GPT2_T, GPT2_B, GPT2_L = v, d, h, t, b, l
    GPT2_LAYER = [
        ("ln1_g", (d,), (), 0.05, 1.0),
        ("ln1_b", (d,), (), 0.05, 0.0),
        ("qkv", (d, 3 * d), (None, "model"), 0.2, 0.0),
        ("proj", (d, d), ("model", None), 0.2, 0.0),
        ("ln2_g", (d,), (), 0.05, 1.0),
        ("ln2_b", (d,), (), 0.05, 0.0),
        ("fc", (d, 4 * d), (None, "model"), 0.2, 0.0),
        ("out", (4 * d, d), ("model", None), 0.2, 0.0),
    ]


set_gpt2_size(64, 32, 4, 8, 8, 2)


def _gpt2_params(rng, stacked=False):
    """Names, arrays and shardings of the parameters; with ``stacked``,
    each layer weight is one array with a leading (unsharded) layer
    dimension, as models applying their layers with ``lax.scan`` keep
    them. The same draws in the same order either way."""
    r = lambda *s, sc=0.2: (rng.standard_normal(s) * sc).astype(np.float32)
    D = GPT2_D
    names, arrays, specs = [], [], []

    def add(n, a, spec):
        names.append(n)
        arrays.append(a)
        specs.append(spec)

    add("wte", r(GPT2_V, D), P("model", None))
    add("wpe", r(GPT2_T, D, sc=0.05), P())
    layers = [{n: off + r(*shape, sc=sc) for n, shape, _, sc, off in GPT2_LAYER}
              for _ in range(GPT2_L)]
    if stacked:
        for n, _, spec, _, _ in GPT2_LAYER:
            add(n, np.stack([lw[n] for lw in layers]), P(None, *spec))
    else:
        for l, lw in enumerate(layers):
            for n, _, spec, _, _ in GPT2_LAYER:
                add(f"{n}{l}", lw[n], P(*spec))
    add("lnf_g", 1 + r(D, sc=0.05), P())
    add("lnf_b", r(D, sc=0.05), P())
    return names, arrays, specs


def _gpt2_ln(x, g, b):
    mu = jnp.mean(x, -1, keepdims=True)
    var = jnp.mean((x - mu) ** 2, -1, keepdims=True)
    return (x - mu) * jax.lax.rsqrt(var + 1e-5) * g + b


def _gpt2_block(x, w, mask):
    """One pre-LN decoder layer; ``w`` maps GPT2_LAYER's names to weights."""
    B, T, D, H = GPT2_B, GPT2_T, GPT2_D, GPT2_H
    h = _gpt2_ln(x, w["ln1_g"], w["ln1_b"])
    q, k, v = jnp.split(h @ w["qkv"], 3, axis=-1)
    heads = lambda t: t.reshape(B, T, H, D // H)
    q, k, v = heads(q), heads(k), heads(v)
    a = jnp.einsum("bthd,bshd->bhts", q, k) / np.float32(np.sqrt(D // H))
    a = jax.nn.softmax(jnp.where(mask, a, -1e9), axis=-1)
    o = jnp.einsum("bhts,bshd->bthd", a, v).reshape(B, T, D)
    x = x + o @ w["proj"]
    h = _gpt2_ln(x, w["ln2_g"], w["ln2_b"])
    return x + jax.nn.gelu(h @ w["fc"]) @ w["out"]


def _gpt2_forward(p, ids, scan=False):
    """Logits; with ``scan``, the layers are applied with ``lax.scan`` over
    the stacked weights of ``_gpt2_params(rng, stacked=True)``."""
    x = jnp.take(p["wte"], ids, axis=0) + p["wpe"][None, :GPT2_T]
    mask = jnp.tril(jnp.ones((GPT2_T, GPT2_T), bool))
    if scan:
        stacked = {n: p[n] for n, *_ in GPT2_LAYER}
        x, _ = jax.lax.scan(lambda x, w: (_gpt2_block(x, w, mask), None), x, stacked)
    else:
        for l in range(GPT2_L):
            x = _gpt2_block(x, {n: p[f"{n}{l}"] for n, *_ in GPT2_LAYER}, mask)
    x = _gpt2_ln(x, p["lnf_g"], p["lnf_b"])
    return x @ p["wte"].T


def _gpt2_loss(p, ids, labels, scan=False):
    logp = jax.nn.log_softmax(_gpt2_forward(p, ids, scan), axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[..., None], axis=-1))


def gpt2_programs(name, rng, train, scan):
    """The GPT-2 forward (``train=False``) or training step (value_and_grad
    of the cross-entropy + SGD) as a Program."""
    mesh = M_DM()
    names, arrays, specs = _gpt2_params(rng, stacked=scan)
    ids = rng.randint(0, GPT2_V, size=(GPT2_B, GPT2_T)).astype(np.int32)
    if not train:
        def f(*args):
            return _gpt2_forward(dict(zip(names, args[:-1])), args[-1], scan)

        return Program(name, None, named(f, name), arrays + [ids], mesh,
                       specs + [P("data", None)], rtol=1e-4, atol=1e-4)
    labels = rng.randint(0, GPT2_V, size=(GPT2_B, GPT2_T)).astype(np.int32)

    def step(*args):
        p = dict(zip(names, args[:-2]))
        loss, grads = jax.value_and_grad(_gpt2_loss)(p, args[-2], args[-1], scan)
        return [loss] + [p[n] - 0.1 * grads[n] for n in names]

    return Program(name, None, named(step, name), arrays + [ids, labels], mesh,
                   specs + [P("data", None), P("data", None)], rtol=1e-4, atol=1e-4)


@program("gpt2_forward", "GPT-2-style decoder forward (2 layers unrolled, vocab 64, width 32, 4 heads): jnp.take embedding on a vocab-parallel table, Megatron attention/MLP on model, batch on data")
def _gpt2_forward_prog(name, rng):
    return gpt2_programs(name, rng, train=False, scan=False)


@program("gpt2_train_step", "GPT-2-style training step: value_and_grad of the cross-entropy (take_along_axis) + SGD; the embedding gradient is a scatter-add into the vocab-parallel table")
def _gpt2_train_step_prog(name, rng):
    return gpt2_programs(name, rng, train=True, scan=False)


@program("random_rbg", "stablehlo.rng_bit_generator as jax.random emits it with the rbg and unsafe_rbg PRNG impls (algorithm DEFAULT, a 4xui32 key bitcast to 2xui64; rbg splits with threefry in a while loop, unsafe_rbg with rng_bit_generator), uint8/uint32 bits, uniform and normal floats multiplied into x on (x, y), and lax.rng_bit_generator with THREE_FRY (odd and even shapes) and PHILOX, uint16/uint32; bits equal JAX's")
def _random_rbg(name, rng):
    mesh = M_XY()

    def f(kd_rbg, kd_unsafe, state, x):
        k = jax.random.wrap_key_data(kd_rbg, impl="rbg")
        k1, k2 = jax.random.split(k)
        u = jax.random.uniform(k1, x.shape) * x
        b32 = jax.random.bits(k2, (8, 6), dtype=jnp.uint32)
        ku = jax.random.wrap_key_data(kd_unsafe, impl="unsafe_rbg")
        q1, q2 = jax.random.split(ku)
        n = jax.random.normal(q1, x.shape) + x
        b8 = jax.random.bits(q2, (4, 5), dtype=jnp.uint8)
        s1, t_odd = jax.lax.rng_bit_generator(state, (7, 5), dtype=jnp.uint32,
                                              algorithm=jax.lax.RandomAlgorithm.RNG_THREE_FRY)
        s2, t_even = jax.lax.rng_bit_generator(s1, (3, 4, 2), dtype=jnp.uint16,
                                               algorithm=jax.lax.RandomAlgorithm.RNG_THREE_FRY)
        s3, p = jax.lax.rng_bit_generator(s2, (5, 3), dtype=jnp.uint32,
                                          algorithm=jax.lax.RandomAlgorithm.RNG_PHILOX)
        return u, b32, n, b8, t_odd, t_even, p, s3

    kd_rbg = np.asarray(jax.random.key_data(jax.random.key(7, impl="rbg")), dtype=np.uint32)
    kd_unsafe = np.asarray(jax.random.key_data(jax.random.key(11, impl="unsafe_rbg")),
                           dtype=np.uint32)
    state = np.array([0x12345678, 0x9abcdef0, 0xfffffffe, 0x00000003], dtype=np.uint32)
    return Program(name, None, named(f, name), [kd_rbg, kd_unsafe, state, randn(rng, 8, 16)],
                   mesh, [P(None), P(None), P(None), P("x", "y")])


@program("elementwise_math", "the remaining element-wise ops JAX emits, on sharded f32 with inf/nan/-0.0/halves among the inputs: atan2, cbrt, round_nearest_even (jnp.round), round_nearest_afz (lax.round), is_finite, tan, logistic (jax.nn.sigmoid), power (negative bases, integer and fractional exponents), chlo.erf, chlo.erf_inv, chlo.erfc, chlo.lgamma, chlo.digamma, sign of -0.0 and nan")
def _elementwise_math(name, rng):
    mesh = M_XY()

    def f(x, y):
        a = jnp.arctan2(x, y) + jnp.cbrt(x)
        r = jnp.round(x * 2.0) + jax.lax.round(x * 2.0, jax.lax.RoundingMethod.AWAY_FROM_ZERO)
        fin = jnp.isfinite(x)
        t = jnp.tan(jnp.where(fin, x, 0.0) * 0.5) + jax.nn.sigmoid(x)
        p = jnp.power(y, jnp.floor(x)) + jnp.power(jnp.abs(y), x)
        e = jax.scipy.special.erf(x) + jax.scipy.special.erfc(y)
        ei = jax.lax.erf_inv(jnp.clip(y * 0.4, -1.0, 1.0))
        g = jax.lax.lgamma(jnp.abs(x) + 0.25) + jax.lax.digamma(jnp.abs(y) + 0.25)
        return a + r + t + e + g, p, ei, fin, jnp.sign(x)

    x = randn(rng, 8, 16, scale=2.0)
    x[0, :6] = [np.inf, -np.inf, np.nan, -0.0, 0.5, -2.5]
    x[1, :4] = [1.5, -1.5, 2.5, 0.0]
    y = randn(rng, 8, 16, scale=2.0)
    y[0, :4] = [0.0, -0.0, -2.0, 1.0]
    return Program(name, None, named(f, name), [x, y], mesh, [P("x", "y"), P(None, "y")])


# ----------------------------------------------------------------------------
# Helpers: shardings, dtypes
# ----------------------------------------------------------------------------

DTYPE_NAMES = {
    "float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64",
    "int32": "i32", "int64": "i64", "int8": "i8", "int16": "i16",
    "uint8": "ui8", "uint16": "ui16", "uint32": "ui32", "uint64": "ui64", "bool": "i1",
}


def dtype_name(dt):
    n = np.dtype(dt).name
    if n not in DTYPE_NAMES:
        raise ValueError(f"unsupported dtype {n}")
    return DTYPE_NAMES[n]


def spec_to_json(spec):
    if spec is None:
        return None
    out = []
    for d in spec:
        if d is None:
            out.append(None)
        elif d is U:
            out.append("UNCONSTRAINED")
        elif isinstance(d, tuple):
            out.append([str(a) for a in d])
        else:
            out.append(str(d))
    return out


def resolve(prog, s):
    """None | P | (mesh, P) -> (NamedSharding | None, mesh | None, P | None)."""
    if s is None:
        return None, None, None
    if isinstance(s, NamedSharding):
        return s, s.mesh, s.spec
    if isinstance(s, tuple) and len(s) == 2 and isinstance(s[0], Mesh):
        mesh, spec = s
    else:
        mesh, spec = prog.mesh, s
    return NamedSharding(mesh, spec), mesh, spec


def mesh_label(prog, mesh):
    if mesh is None:
        return None
    if mesh is prog.mesh:
        return "primary"
    for k, m in prog.extra_meshes.items():
        if m is mesh:
            return k
    return "unnamed"


# ----------------------------------------------------------------------------
# HLO collective parsing
# ----------------------------------------------------------------------------

ELEM_BYTES = {
    "pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2,
    "s32": 4, "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16,
    "f8e4m3fn": 1, "f8e5m2": 1,
}

HLO_DTYPE_JSON = {"pred": "i1", "s8": "i8", "s16": "i16", "s32": "i32", "s64": "i64",
                  "u8": "ui8", "u16": "ui16", "u32": "ui32", "u64": "ui64"}

HANDLED_KINDS = {"all-gather", "all-reduce", "reduce-scatter", "all-to-all", "collective-permute"}
ASYNC_DONE = {k + "-done" for k in ("all-gather", "all-reduce", "collective-permute")}
ASYNC_START = {k + "-start" for k in ("all-gather", "all-reduce", "collective-permute")}
# Opcodes that move data between devices but are not handled: fail loudly.
UNHANDLED_COLLECTIVE_RE = re.compile(
    r"^(ragged-all-to-all|collective-broadcast|send|recv|send-done|recv-done|"
    r"all-to-all-start|all-to-all-done|reduce-scatter-start|reduce-scatter-done|"
    r".*all-gather.*|.*all-reduce.*|.*reduce-scatter.*|.*all-to-all.*|.*collective-permute.*)$")

INSTR_HEAD_RE = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*")
ARRAY_SHAPE_RE = re.compile(r"([a-z][a-z0-9]*)\[([^\]]*)\](?:\{[^}]*\})?")


def _balanced(s, i, open_ch, close_ch):
    """s[i] == open_ch; return index just past the matching close_ch."""
    assert s[i] == open_ch, (s[i:i + 20], open_ch)
    depth = 0
    j = i
    while j < len(s):
        c = s[j]
        if c == open_ch:
            depth += 1
        elif c == close_ch:
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    raise ValueError(f"unbalanced {open_ch}{close_ch} in: {s[i:i + 200]}")


def parse_shape(text):
    """HLO shape text -> list of (dtype, dims). Tuples are flattened."""
    # XLA numbers the elements of long tuples: (f32[2], /*index=5*/f32[3]).
    text = re.sub(r"/\*.*?\*/", "", text).strip()
    if text.startswith("("):
        inner = text[1:_balanced(text, 0, "(", ")") - 1]
        out = []
        for part in _split_top(inner):
            if part.strip():
                out.extend(parse_shape(part))
        return out
    m = ARRAY_SHAPE_RE.match(text)
    if not m:
        raise ValueError(f"cannot parse HLO shape: {text!r}")
    dims = [int(d.lstrip("<=")) for d in m.group(2).split(",") if d.strip()]
    return [(m.group(1), dims)]


def _split_top(s):
    parts, depth, cur = [], 0, []
    for c in s:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return parts


def parse_instruction(line):
    """Return dict(name, shape_text, opcode, operands_text, attrs_text) or None."""
    m = INSTR_HEAD_RE.match(line)
    if not m:
        return None
    name = m.group(1)
    rest = line[m.end():]
    if rest.startswith("("):
        end = _balanced(rest, 0, "(", ")")
    else:
        sm = ARRAY_SHAPE_RE.match(rest)
        if not sm:
            return None
        end = sm.end()
    shape_text = rest[:end]
    rest = rest[end:].lstrip()
    om = re.match(r"([\w\-]+)\(", rest)
    if not om:
        return None
    opcode = om.group(1)
    p0 = om.end() - 1
    p1 = _balanced(rest, p0, "(", ")")
    return {"name": name, "shape_text": shape_text, "opcode": opcode,
            "operands_text": rest[p0 + 1:p1 - 1], "attrs_text": rest[p1:]}


def _iota_groups(dims_g, reshape, perm):
    arr = np.arange(int(np.prod(reshape))).reshape(reshape)
    if perm is not None:
        arr = arr.transpose(perm)
    return arr.reshape(dims_g).tolist()


def _parse_iota_tile(text):
    """'[2,4]T(1,0)' or '[8]' -> flat list of device ids."""
    m = re.fullmatch(r"\s*\[([\d,\s]*)\](?:T\(([\d,\s]*)\))?\s*", text)
    if not m:
        ints = [int(v) for v in re.findall(r"-?\d+", text)]
        return ints
    reshape = [int(v) for v in m.group(1).split(",") if v.strip()]
    arr = np.arange(int(np.prod(reshape))).reshape(reshape)
    if m.group(2):
        arr = arr.transpose([int(v) for v in m.group(2).split(",") if v.strip()])
    return arr.reshape(-1).tolist()


def _parse_mesh_groups(attrs, num_devices):
    """replica_groups=mesh['a'=4,'b'=2], device_ids=(...) {'a', 'b':(1)2}"""
    i = attrs.index("replica_groups=mesh[")
    j = attrs.index("[", i)
    k = _balanced(attrs, j, "[", "]")
    axes = []
    for part in attrs[j + 1:k - 1].split(","):
        mm = re.fullmatch(r"\s*'?([^'=]+)'?\s*=\s*(\d+)\s*", part)
        if not mm:
            raise ValueError(f"cannot parse mesh axis {part!r} in {attrs[i:i + 200]}")
        axes.append((mm.group(1), int(mm.group(2))))
    rest = attrs[k:]
    ids = list(range(int(np.prod([s for _, s in axes]))))
    dm = re.match(r"\s*,\s*device_ids=\(", rest)
    if dm:
        p0 = dm.end() - 1
        p1 = _balanced(rest, p0, "(", ")")
        ids = _parse_iota_tile(rest[p0 + 1:p1 - 1])
        rest = rest[p1:]
    gm = re.match(r"\s*\{([^}]*)\}", rest)
    if not gm:
        raise ValueError(f"cannot parse mesh replica group axes in {attrs[i:i + 200]}")
    sizes = [s for _, s in axes]
    names = [n for n, _ in axes]
    if len(ids) != int(np.prod(sizes)):
        raise ValueError(f"mesh device_ids length mismatch in {attrs[i:i + 200]}")
    group_refs = []  # (axis index, pre, size)
    for ref in [r.strip() for r in gm.group(1).split(",") if r.strip()]:
        rm = re.fullmatch(r"'?([^':]+)'?(?::\((\d+)\)(\d+))?", ref)
        if not rm:
            raise ValueError(f"cannot parse axis ref {ref!r}")
        ai = names.index(rm.group(1))
        if rm.group(2):
            group_refs.append((ai, int(rm.group(2)), int(rm.group(3))))
        else:
            group_refs.append((ai, 1, sizes[ai]))
    groups = {}
    for flat, dev in enumerate(ids):
        coords = np.unravel_index(flat, sizes)
        rank = 0
        for ai, pre, sz in group_refs:
            n = sizes[ai]
            post = n // (pre * sz)
            sub = (coords[ai] // post) % sz
            rank = rank * sz + sub
        # group key: coordinates with the grouped sub-axes zeroed out
        key = []
        for ai in range(len(sizes)):
            c = int(coords[ai])
            for aj, pre, sz in group_refs:
                if aj == ai:
                    post = sizes[ai] // (pre * sz)
                    c -= ((c // post) % sz) * post
            key.append(c)
        groups.setdefault(tuple(key), {})[rank] = int(dev)
    out = []
    for key in sorted(groups):
        g = groups[key]
        out.append([g[r] for r in sorted(g)])
    return out


def parse_replica_groups(attrs, num_devices):
    if "replica_groups=mesh[" in attrs:
        return _parse_mesh_groups(attrs, num_devices)
    m = re.search(r"replica_groups=", attrs)
    if not m:
        return [list(range(num_devices))]
    s = attrs[m.end():]
    if s.startswith("{"):
        body = s[:_balanced(s, 0, "{", "}")]
        groups = [[int(v) for v in g.split(",") if v.strip()]
                  for g in re.findall(r"\{([\d,\s]*)\}", body[1:-1])]
        groups = [g for g in groups if g]
        if not groups:
            return [list(range(num_devices))]
        return groups
    im = re.match(r"\[([\d,]+)\]<=\[([\d,]+)\](?:T\(([\d,]+)\))?", s)
    if im:
        gdims = [int(v) for v in im.group(1).split(",")]
        reshape = [int(v) for v in im.group(2).split(",")]
        perm = [int(v) for v in im.group(3).split(",")] if im.group(3) else None
        return _iota_groups(gdims, reshape, perm)
    raise ValueError(f"cannot parse replica_groups: {s[:200]}")


def parse_pairs(attrs):
    m = re.search(r"source_target_pairs=\{", attrs)
    if not m:
        raise ValueError(f"collective-permute without source_target_pairs: {attrs[:200]}")
    s = attrs[m.end() - 1:]
    body = s[:_balanced(s, 0, "{", "}")]
    return [[int(a), int(b)] for a, b in re.findall(r"\{\s*(\d+)\s*,\s*(\d+)\s*\}", body)]


def _nbytes(shapes):
    return sum(ELEM_BYTES[dt] * int(np.prod(d, dtype=np.int64)) for dt, d in shapes)


def _computation_runs(instrs):
    """How often each computation runs per run of the entry computation:
    a while's body `known_trip_count` times (its condition once more),
    called/branch computations as often as their caller. Returns (runs,
    set of computations inside a while without a known trip count)."""
    edges = []  # (caller, callee, factor, unknown)
    for ins in instrs:
        attrs = ins["attrs_text"]
        caller = ins["computation"]
        if ins["opcode"] == "while":
            tm = re.search(r'"known_trip_count":\{"n":"(\d+)"\}', attrs)
            n = int(tm.group(1)) if tm else None
            bm = re.search(r"body=%?([\w.\-]+)", attrs)
            cm = re.search(r"condition=%?([\w.\-]+)", attrs)
            if bm:
                edges.append((caller, bm.group(1), n if n is not None else 1, n is None))
            if cm:
                edges.append((caller, cm.group(1), n + 1 if n is not None else 1, n is None))
            continue
        for key in ("to_apply", "calls", "true_computation", "false_computation"):
            for m in re.finditer(key + r"=%?([\w.\-]+)", attrs):
                edges.append((caller, m.group(1), 1, False))
        bm = re.search(r"branch_computations=\{([^}]*)\}", attrs)
        if bm:
            for c in re.findall(r"%?([\w.\-]+)", bm.group(1)):
                edges.append((caller, c, 1, False))
    callees = {c for _, c, _, _ in edges}
    comps = {ins["computation"] for ins in instrs}
    runs = {c: 1 for c in comps if c not in callees}
    unknown = set()
    for _ in range(len(comps) + 1):
        for caller, callee, factor, unk in edges:
            if caller in runs:
                runs[callee] = runs[caller] * factor
                if unk or caller in unknown:
                    unknown.add(callee)
    return runs, unknown


def analyze_collectives(hlo):
    header = hlo.splitlines()[0] if hlo else ""
    nm = re.search(r"num_partitions=(\d+)", header)
    num_devices = int(nm.group(1)) if nm else NUM_DEVICES
    rm = re.search(r"replica_count=(\d+)", header)
    if rm and int(rm.group(1)) != 1:
        raise ValueError("replica_count != 1 is not supported")

    instrs = []
    shapes = {}
    comp_root = {}
    cur_comp = None
    for line in hlo.splitlines():
        cm = re.match(r"^(?:ENTRY\s+)?%?([\w.\-]+)\s*\(.*\)\s*->\s*.*\{\s*$", line)
        if cm and not line.startswith(" "):
            cur_comp = cm.group(1)
            continue
        ins = parse_instruction(line)
        if ins is None:
            continue
        ins["computation"] = cur_comp
        shapes[ins["name"]] = parse_shape(ins["shape_text"])
        if line.lstrip().startswith("ROOT"):
            comp_root[cur_comp] = ins["opcode"]
        instrs.append(ins)

    runs, unknown = _computation_runs(instrs)

    done_of = {}  # start name -> done instruction
    for ins in instrs:
        if ins["opcode"] in ASYNC_DONE:
            ops = re.findall(r"%([\w.\-]+)", ins["operands_text"])
            if ops:
                done_of[ops[0]] = ins

    out = []
    for ins in instrs:
        op = ins["opcode"]
        if op in ASYNC_DONE:
            continue
        kind = None
        if op in HANDLED_KINDS:
            kind = op
        elif op in ASYNC_START:
            kind = op[: -len("-start")]
        elif UNHANDLED_COLLECTIVE_RE.match(op):
            raise ValueError(f"unknown/unhandled collective kind {op!r} in: {ins['name']}")
        if kind is None:
            continue
        operand_names = re.findall(r"%([\w.\-]+)", ins["operands_text"])
        if not operand_names:
            # older syntax without % sigils: "f32[4] x"
            operand_names = [t.split()[-1] for t in _split_top(ins["operands_text"]) if t.strip()]
        in_shapes = []
        for n in operand_names:
            if n not in shapes:
                raise ValueError(f"operand {n} of {ins['name']} not found")
            in_shapes.extend(shapes[n])
        if op in ASYNC_START:
            done = done_of.get(ins["name"])
            if done is None:
                raise ValueError(f"{ins['name']}: {op} without matching -done")
            out_shapes = shapes[done["name"]]
        else:
            out_shapes = shapes[ins["name"]]
        attrs = ins["attrs_text"]
        in_b = _nbytes(in_shapes)
        out_b = _nbytes(out_shapes)
        entry = {
            "kind": kind,
            "name": ins["name"],
            "dtype": HLO_DTYPE_JSON.get(in_shapes[0][0], in_shapes[0][0]),
        }
        if len(in_shapes) == 1:
            entry["in_shape"] = in_shapes[0][1]
        else:
            entry["in_shape"] = [d for _, d in in_shapes]
        if len(out_shapes) == 1:
            entry["out_shape"] = out_shapes[0][1]
        else:
            entry["out_shape"] = [d for _, d in out_shapes]
        if kind == "collective-permute":
            pairs = parse_pairs(attrs)
            entry["groups"] = []
            entry["source_target_pairs"] = pairs
            moving = sum(1 for s, t in pairs if s != t)
            bpd = moving * in_b / num_devices
        else:
            groups = parse_replica_groups(attrs, num_devices)
            entry["groups"] = groups
            tot = 0.0
            for g in groups:
                G = len(g)
                if kind == "all-gather":
                    per = out_b - in_b
                elif kind == "reduce-scatter":
                    per = in_b - out_b
                elif kind == "all-reduce":
                    per = 2.0 * (G - 1) / G * in_b
                elif kind == "all-to-all":
                    per = (G - 1) / G * in_b
                else:
                    raise AssertionError(kind)
                tot += G * per
            bpd = tot / num_devices
            if kind in ("all-reduce", "reduce-scatter"):
                tm = re.search(r"to_apply=%?([\w.\-]+)", attrs)
                if tm:
                    entry["reduction"] = comp_root.get(tm.group(1))
            if kind in ("all-gather", "all-to-all", "reduce-scatter"):
                dm = re.search(r"dimensions=\{([\d,]*)\}", attrs)
                if dm:
                    entry["dimensions"] = [int(v) for v in dm.group(1).split(",") if v]
        if op in ASYNC_START:
            entry["async"] = True
        # A collective in a while body runs once per iteration: XLA's known
        # trip count multiplies its bytes (as meshrun's report does); in a
        # loop without one, one iteration is counted and flagged.
        times = runs.get(ins["computation"], 1)
        entry["runs"] = times
        entry["trip_count_unknown"] = ins["computation"] in unknown
        entry["bytes_per_run"] = float(bpd)
        entry["bytes_per_device"] = float(bpd) * times
        out.append(entry)
    total = float(sum(e["bytes_per_device"] for e in out))
    return {"num_devices": num_devices, "collectives": out, "total_bytes_per_device": total}


# ----------------------------------------------------------------------------
# Export
# ----------------------------------------------------------------------------

def _json_fmt(obj, indent=0):
    """Indented JSON; lists of scalars and lists of lists of scalars stay on one line."""
    def scalar(v):
        return not isinstance(v, (list, dict))

    def flat(v):
        if not isinstance(v, list):
            return False
        if any(isinstance(x, str) and len(x) > 40 for x in v):
            return False
        return all(scalar(x) or (isinstance(x, list) and all(scalar(y) for y in x)) for x in v)

    pad = " " * (indent + 1)
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [f"{pad}{json.dumps(str(k))}: {_json_fmt(v, indent + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    if isinstance(obj, list):
        if flat(obj):
            return json.dumps(obj)
        items = [pad + _json_fmt(v, indent + 1) for v in obj]
        return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"
    return json.dumps(obj)


def write_json(path, obj):
    text = _json_fmt(obj)
    assert json.loads(text) == json.loads(json.dumps(obj))
    with open(path, "w") as f:
        f.write(text + "\n")


def find_propagated(dump_dir):
    hits = sorted(p for p in glob.glob(os.path.join(dump_dir, "**", "*"), recursive=True)
                  if os.path.isfile(p) and re.search(r"shardy.*02\.after_propagation", p))
    if len(hits) != 1:
        listing = "\n  ".join(sorted(glob.glob(os.path.join(dump_dir, "**"), recursive=True)))
        raise RuntimeError(f"expected exactly one *shardy*02.after_propagation* dump, found "
                           f"{len(hits)} in {dump_dir}:\n  {listing}")
    return hits[0]


def export(prog, out_dir):
    d = os.path.join(out_dir, prog.name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)

    in_sh, in_meta, in_mesh_names, in_logical = [], [], [], {}
    for s in prog.in_specs:
        ns, mesh, spec = resolve(prog, s)
        in_sh.append(ns)
        in_meta.append(spec_to_json(spec))
        in_mesh_names.append(mesh_label(prog, mesh))
        if ns is not None and ns._logical_device_ids is not None:
            in_logical[len(in_sh) - 1] = [int(v) for v in ns._logical_device_ids]

    jit_kwargs = {"in_shardings": tuple(in_sh)}
    out_meta = None
    if prog.out_specs is not None:
        def conv(s):
            return resolve(prog, s)[0]
        if isinstance(prog.out_specs, (list, tuple)) and not isinstance(prog.out_specs, P):
            jit_kwargs["out_shardings"] = tuple(conv(s) for s in prog.out_specs)
            out_meta = [spec_to_json(resolve(prog, s)[2]) for s in prog.out_specs]
        else:
            jit_kwargs["out_shardings"] = conv(prog.out_specs)
            out_meta = spec_to_json(resolve(prog, prog.out_specs)[2])

    ctx = prog.context() if prog.context else contextlib.nullcontext()
    with ctx:
        jitted = jax.jit(prog.fn, **jit_kwargs)
        if prog.place_args:
            lower_args = [a if ns is None else jax.device_put(a, ns)
                          for a, ns in zip(prog.args, in_sh)]
        else:
            lower_args = prog.args
        lowered = jitted.lower(*lower_args)
        text = lowered.as_text()
        if prog.text_platforms:
            text = jitted.trace(*lower_args).lower(
                lowering_platforms=tuple(prog.text_platforms)).as_text()
            prog.notes.append(f"input.mlir is the {'/'.join(prog.text_platforms)} lowering; "
                              "XLA's collectives and outputs are the CPU lowering's")
        if prog.check:
            err = prog.check(text)
            if err:
                raise RuntimeError(f"{prog.name}: {err}")
        dump = tempfile.mkdtemp(prefix=f"jax_export_{prog.name}_")
        try:
            compiled = lowered.compile(compiler_options={
                "xla_dump_to": dump, "xla_dump_hlo_pass_re": "shardy-xla"})
            prop_path = find_propagated(dump)
            shutil.copyfile(prop_path, os.path.join(d, "propagated.mlir"))
            prop_rel = re.sub(r"module_\d+", "module_NNNN", os.path.relpath(prop_path, dump))
        finally:
            shutil.rmtree(dump, ignore_errors=True)
        hlo = compiled.as_text()

        placed = []
        in_shardings_c = compiled.input_shardings[0]
        for a, s in zip(prog.args, in_shardings_c):
            placed.append(jax.device_put(a, s))
        outs = compiled(*placed)
        leaves = jax.tree_util.tree_leaves(outs)
        out_arrays = [np.asarray(x) for x in leaves]
        # Reference: the same function, unsharded, on one device.
        if prog.context is None:
            # with_sharding_constraint is dropped so that nothing refers to 8 devices.
            saved = jax.lax.with_sharding_constraint
            jax.lax.with_sharding_constraint = lambda x, *_a, **_k: x
            try:
                dev0 = jax.devices("cpu")[0]
                fresh = lambda *a: prog.fn(*a)  # new identity: no cached trace
                ref = jax.jit(fresh)(*[jax.device_put(a, dev0) for a in prog.args])
            finally:
                jax.lax.with_sharding_constraint = saved
        else:
            ref = jax.jit(prog.fn)(*[jax.device_put(a, s) for a, s in
                                     zip(prog.args, in_shardings_c)])
        ref = [np.asarray(x) for x in jax.tree_util.tree_leaves(ref)]
    if len(ref) != len(out_arrays):
        raise RuntimeError(f"{prog.name}: output count mismatch vs reference")
    for i, (a, r) in enumerate(zip(out_arrays, ref)):
        if a.shape != r.shape or a.dtype != r.dtype:
            raise RuntimeError(f"{prog.name}: output {i} shape/dtype differs from reference")
        tol = dict(rtol=prog.rtol, atol=prog.atol)
        if a.dtype in (np.float16,):
            tol = dict(rtol=2e-3, atol=2e-3)
        # NaN equals NaN (as runtime/src/compare.rs): fixtures feed inf/nan.
        if i in prog.xla_sharded_wrong:
            err = np.abs(a.astype(np.float64) - r).max()
            if np.allclose(a.astype(np.float64), r.astype(np.float64), **tol):
                raise RuntimeError(f"{prog.name}: output {i} is listed as wrong but XLA gets it right")
            prog.notes.append(f"output {i}: XLA's sharded run is off by {err:.3g} (max abs) from the "
                              f"unsharded run, which an f64 run confirms; out_{i}.npy is the unsharded run's")
            out_arrays[i] = r
            continue
        if not np.allclose(a.astype(np.float64), r.astype(np.float64), equal_nan=True, **tol):
            raise RuntimeError(f"{prog.name}: output {i} differs from the unsharded reference "
                               f"(max abs err {np.abs(a.astype(np.float64) - r).max()})")

    with open(os.path.join(d, "input.mlir"), "w") as f:
        f.write(text)
    with open(os.path.join(d, "compiled.hlo.txt"), "w") as f:
        f.write(hlo)
    for i, a in enumerate(prog.args):
        np.save(os.path.join(d, f"in_{i}.npy"), np.asarray(a, order="C"))
    for i, a in enumerate(out_arrays):
        if a.dtype.name == "bfloat16":
            raise RuntimeError(f"{prog.name}: bf16 output {i}; convert to f32 inside the program")
        np.save(os.path.join(d, f"out_{i}.npy"), np.asarray(a, order="C"))

    coll = analyze_collectives(hlo)
    write_json(os.path.join(d, "xla_collectives.json"), coll)

    meta = {
        "name": prog.name,
        "description": prog.description,
        "mesh": mesh_dict(prog.mesh),
        "in_shardings": in_meta,
        "inputs": [{"shape": list(a.shape), "dtype": dtype_name(a.dtype)} for a in prog.args],
        "outputs": [{"shape": list(a.shape), "dtype": dtype_name(a.dtype)} for a in out_arrays],
        "jax_version": jax.__version__,
    }
    ids0 = [int(dv.id) for dv in prog.mesh.devices.reshape(-1)]
    if ids0 != list(range(len(ids0))):
        meta["mesh_device_ids"] = ids0
    if prog.extra_meshes:
        meta["meshes"] = {"primary": mesh_dict(prog.mesh)}
        for k, m in prog.extra_meshes.items():
            meta["meshes"][k] = mesh_dict(m)
            ids = [int(dv.id) for dv in m.devices.reshape(-1)]
            if ids != list(range(len(ids))):
                meta["meshes"][k + "_device_ids"] = ids
        meta["in_meshes"] = in_mesh_names
    types = [str(t).split(".")[-1] for t in prog.mesh.axis_types]
    if any(t != "Auto" for t in types):
        meta["mesh_axis_types"] = dict(zip(mesh_dict(prog.mesh).keys(), types))
    if in_logical:
        meta["in_logical_device_ids"] = [in_logical.get(i) for i in range(len(prog.args))]
    if out_meta is not None:
        meta["out_shardings"] = out_meta
    if prog.notes:
        meta["notes"] = prog.notes
    meta["propagated_dump_file"] = prop_rel
    write_json(os.path.join(d, "meta.json"), meta)
    return coll


SELFTEST_HLO = """HloModule t, entry_computation_layout={()->f32[]}, num_partitions=8

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add = f32[] add(%x, %y)
}

%max (x.1: f32[], y.1: f32[]) -> f32[] {
  %x.1 = f32[] parameter(0)
  %y.1 = f32[] parameter(1)
  ROOT %maximum = f32[] maximum(%x.1, %y.1)
}

ENTRY %main (p0: f32[4,8], p1: f32[8]) -> (f32[16,8], f32[4,8]) {
  %p0 = f32[4,8]{1,0} parameter(0), sharding={replicated}
  %p1 = f32[8]{0} parameter(1)
  %ar = (f32[4,8]{1,0}, f32[8]{0}) all-reduce(%p0, %p1), channel_id=1, replica_groups={{0,1},{2,3},{4,5},{6,7}}, use_global_device_ids=true, to_apply=%add
  %ags = (f32[4,8]{1,0}, f32[16,8]{1,0}) all-gather-start(%p0), channel_id=2, replica_groups=[2,4]<=[4,2]T(1,0), dimensions={0}, use_global_device_ids=true
  %agd = f32[16,8]{1,0} all-gather-done(%ags)
  %ars = f32[8]{0} all-reduce-start(%p1), channel_id=3, replica_groups=[4,2]<=[8], use_global_device_ids=true, to_apply=%max
  %ard = f32[8]{0} all-reduce-done(%ars)
  %rs = f32[1,8]{1,0} reduce-scatter(%p0), channel_id=4, replica_groups=mesh['a'=2,'b'=4] {'b'}, dimensions={0}, use_global_device_ids=true, to_apply=%add
  %a2a = f32[4,8]{1,0} all-to-all(%p0), channel_id=5, replica_groups=mesh['a'=2,'b'=4], device_ids=([4,2]T(1,0)) {'b':(2)2}, dimensions={1}
  %cps = (f32[4,8]{1,0}, f32[4,8]{1,0}, u32[], u32[]) collective-permute-start(%p0), channel_id=6, source_target_pairs={{0,1},{1,0},{2,2}}
  %cpd = f32[4,8]{1,0} collective-permute-done(%cps)
  ROOT %t = (f32[16,8]{1,0}, f32[4,8]{1,0}) tuple(%agd, %cpd)
}
"""


def selftest():
    r = analyze_collectives(SELFTEST_HLO)
    c = {e["name"]: e for e in r["collectives"]}
    assert sorted(c) == ["a2a", "ags", "ar", "ars", "cps", "rs"], sorted(c)
    assert c["ar"]["groups"] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert c["ar"]["bytes_per_device"] == 2 * 1 / 2 * (128 + 32)
    assert c["ar"]["reduction"] == "add" and c["ars"]["reduction"] == "maximum"
    assert c["ags"]["groups"] == [[0, 2, 4, 6], [1, 3, 5, 7]], c["ags"]["groups"]
    assert c["ags"]["in_shape"] == [4, 8] and c["ags"]["out_shape"] == [16, 8]
    assert c["ags"]["bytes_per_device"] == 512 - 128
    assert c["ars"]["groups"] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert c["rs"]["groups"] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert c["rs"]["bytes_per_device"] == 128 - 32
    # device_ids [0,2,4,6,1,3,5,7] as a=2 x b=4; b:(2)2 is the minor half of b
    assert c["a2a"]["groups"] == [[0, 2], [4, 6], [1, 3], [5, 7]], c["a2a"]["groups"]
    assert c["a2a"]["bytes_per_device"] == 0.5 * 128
    assert c["cps"]["source_target_pairs"] == [[0, 1], [1, 0], [2, 2]]
    assert c["cps"]["bytes_per_device"] == 2 * 128 / 8
    assert _parse_iota_tile("[2,4]T(1,0)") == [0, 4, 1, 5, 2, 6, 3, 7]
    assert parse_shape("(f32[2]{0}, /*index=5*/f32[3,4]{1,0})") == [("f32", [2]), ("f32", [3, 4])]
    assert parse_replica_groups("replica_groups={}", 8) == [list(range(8))]
    assert parse_replica_groups("replica_groups=[2,4]<=[2,2,2]T(2,1,0)", 8) == \
        [[0, 4, 2, 6], [1, 5, 3, 7]]
    try:
        analyze_collectives(SELFTEST_HLO.replace("all-to-all(", "ragged-all-to-all("))
    except ValueError:
        pass
    else:
        raise AssertionError("unknown collective kind was accepted")
    print("selftest ok")


def export_cli(builders, doc, folder, argv=None, selftest=None):
    """The command line of a fixture script over its ``builders`` ((name,
    description, builder) triples): ``--out`` (default fixtures/FOLDER),
    ``--only NAME ...``, ``--list`` (and ``--selftest`` when a ``selftest``
    is given, which also runs before exporting). Exports each program,
    checks its JAX output against ``prog.expected(*args)`` where the builder
    gave one (an independent numpy result), and reports every failure
    before failing."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", folder))
    ap.add_argument("--only", nargs="+", metavar="NAME")
    ap.add_argument("--list", action="store_true", help="list programs and exit")
    if selftest:
        ap.add_argument("--selftest", action="store_true",
                        help="check the HLO collective parser on a synthetic module and exit")
    args = ap.parse_args(argv)
    if selftest and args.selftest:
        selftest()
        return 0
    names = [n for n, _, _ in builders]
    if len(set(names)) != len(names):
        raise SystemExit("duplicate program names")
    if args.list:
        for n, desc, _ in builders:
            print(f"{n}: {desc}")
        return 0
    unknown = sorted(set(args.only or []) - set(names))
    if unknown:
        raise SystemExit(f"unknown program(s): {', '.join(unknown)}")
    if selftest:
        selftest()
    os.makedirs(args.out, exist_ok=True)
    failures = []
    for name, desc, builder in builders:
        if args.only and name not in args.only:
            continue
        prog = builder(name, rng_for(name))
        prog.description = desc
        try:
            coll = export(prog, args.out)
        except Exception as e:  # report every failure, fail at the end
            failures.append(name)
            print(f"FAIL {name}: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        expected = getattr(prog, "expected", None)
        if expected is not None:
            out = np.load(os.path.join(args.out, name, "out_0.npy"))
            want = expected(*prog.args)
            if out.shape != want.shape or not np.allclose(out, want, rtol=1e-4, atol=1e-4):
                failures.append(name)
                print(f"FAIL {name}: JAX's output differs from the numpy expectation",
                      file=sys.stderr)
                continue
        kinds = ",".join(c["kind"] for c in coll["collectives"]) or "-"
        print(f"ok   {name:36s} collectives={kinds} bytes/dev={coll['total_bytes_per_device']:.0f}")
    if failures:
        print(f"{len(failures)} program(s) failed", file=sys.stderr)
        return 1
    return 0


def main(argv=None):
    return export_cli(BUILDERS, __doc__, "jax", argv, selftest=selftest)


if __name__ == "__main__":
    sys.exit(main())
