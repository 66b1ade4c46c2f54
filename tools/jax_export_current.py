#!/usr/bin/env python3
"""Export programs of the current JAX (0.12) as meshrun fixtures.

Usage (JAX >= 0.11 needs Python >= 3.12):
    ~/.pyenv/versions/3.12.1/bin/python -m venv /tmp/jax012
    /tmp/jax012/bin/pip install jax==0.12.0.1
    /tmp/jax012/bin/python tools/jax_export_current.py [--out fixtures/jax_0_12] [--only NAME ...]

Writes the same files as ``tools/jax_export.py`` (``input.mlir``,
``propagated.mlir``, ``compiled.hlo.txt``, ``in_K.npy``/``out_K.npy``,
``xla_collectives.json``, ``meta.json`` with ``jax_version``). The programs
use what JAX 0.11+ writes differently from 0.10.2, as users write them:

- every ``jax.shard_map`` collective prints its groups as mesh axes
  (``#stablehlo.replica_group_mesh_axes<mesh = @mesh_0, axes = [...]>``,
  ``jax_use_rgv3``): the shard_map fixtures of ``jax_export_shard_map.py``
  again, an expert-parallel MoE with ``all_to_all``, FSDP with
  ``all_gather`` + ``psum_scatter``, a 4-stage ``ppermute`` pipeline in a
  ``fori_loop``;
- ``lax.axis_index`` in a partial-manual shard_map (a nested
  ``sdy.manual_computation`` around ``partition_id``);
- an explicit-mode training step, an ``unreduced={"data"}`` scan carry,
  ``pinned_host`` memory kinds, an async ``psum_scatter_start``, and
  ``lax.ragged_dot`` lowered for CPU and for cuda (tokens or experts
  sharded).

``runtime/tests/jax_0_12_fixtures.rs`` runs every fixture of the folder.
"""

import contextlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax_export as je  # noqa: E402  (sets XLA_FLAGS before importing jax)
import jax_export_shard_map as jsm  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.ad_checkpoint import checkpoint_name  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

BUILDERS = list(jsm.BUILDERS)


def program(name, description):
    def deco(builder):
        BUILDERS.append((name, description, builder))
        return builder
    return deco


def shard_map_program(name, fn, args, mesh, in_specs, expected, **kw):
    prog = je.Program(name, None, je.named(fn, name), args, mesh, in_specs,
                      context=contextlib.nullcontext, **kw)
    prog.expected = expected
    return prog


@program("moe_all_to_all",
         "expert-parallel MoE in shard_map over ep=8: softmax gate, tokens sent to their "
         "expert's device by all_to_all, a per-expert MLP, all_to_all back, gate-weighted")
def _moe(name, rng):
    mesh = je.make_mesh([("ep", 8)])
    e, t, d, h = 8, 64, 16, 32   # experts, tokens, width, hidden

    def f(x, wg, w1, w2):
        def body(xb, wg, w1b, w2b):
            # xb: 8 local tokens; token j of every device goes to expert j.
            gate = jax.nn.softmax(xb @ wg, axis=-1)           # [8, e]
            score = jnp.take_along_axis(gate, jnp.arange(e)[:, None] % e, axis=1)
            sent = lax.all_to_all(xb[:, None, :], "ep", 0, 1, tiled=True)   # [1, 8, d]
            hid = jax.nn.gelu(jnp.einsum("otd,odh->oth", sent, w1b))
            out = jnp.einsum("oth,ohd->otd", hid, w2b)          # [1, 8, d]
            back = lax.all_to_all(out, "ep", 1, 0, tiled=True)[:, 0, :]     # [8, d]
            return xb + score * back
        return jax.shard_map(body, mesh=mesh,
                             in_specs=(P("ep"), P(), P("ep"), P("ep")),
                             out_specs=P("ep"))(x, wg, w1, w2)

    args = [je.randn(rng, t, d), je.randn(rng, d, e), je.randn(rng, e, d, h, scale=0.3),
            je.randn(rng, e, h, d, scale=0.3)]

    def expected(x, wg, w1, w2):
        x64 = x.astype(np.float64)
        logits = x64 @ wg
        gate = np.exp(logits - logits.max(-1, keepdims=True))
        gate /= gate.sum(-1, keepdims=True)
        out = np.zeros_like(x64)
        for i in range(t):
            j = i % 8                       # position on its device = its expert
            a = x64[i] @ w1[j]
            g = 0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * (a + 0.044715 * a ** 3)))
            out[i] = x64[i] + gate[i, j] * (g @ w2[j])
        return out

    return shard_map_program(name, f, args, mesh, [P("ep"), P(), P("ep"), P("ep")], expected)


@program("fsdp_gather_scatter",
         "FSDP step in shard_map over data=8: all_gather of row-sharded weights, forward, "
         "the weight gradient psum_scatter'ed back to its shard, SGD update")
def _fsdp(name, rng):
    mesh = je.make_mesh([("data", 8)])
    b, d, h = 64, 32, 16

    def f(x, w):
        def body(xb, wb):
            wf = lax.all_gather(wb, "data", axis=0, tiled=True)    # [d, h]
            y = jnp.tanh(xb @ wf)                                 # [b/8, h]
            dy = (1 - y * y) * y                                  # d(0.5*sum(y^2))/d(pre)
            g = xb.T @ dy                                         # [d, h], partial over data
            gs = lax.psum_scatter(g, "data", scatter_dimension=0, tiled=True)
            return y, wb - 0.1 * gs
        return jax.shard_map(body, mesh=mesh, in_specs=(P("data"), P("data")),
                             out_specs=(P("data"), P("data")))(x, w)

    args = [je.randn(rng, b, d), je.randn(rng, d, h, scale=0.2)]

    def expected(x, w):
        y = np.tanh(x.astype(np.float64) @ w)
        return y

    return shard_map_program(name, f, args, mesh, [P("data"), P("data")], expected)


@program("pipeline_ppermute",
         "4-stage pipeline in shard_map over stage=4 x data=2: a fori_loop of 7 ticks, "
         "each stage applies its layer and ppermutes to the next, psum of the last stage's")
def _pipeline(name, rng):
    mesh = je.make_mesh([("stage", 4), ("data", 2)])
    stages, micro, mb, d = 4, 4, 8, 16

    def f(xs, ws):
        def body(xs, w):
            s = lax.axis_index("stage")
            w = w[0]                                          # this stage's layer

            def tick(t, carry):
                state, outs = carry
                inject = xs[jnp.minimum(t, micro - 1)]
                state = jnp.where((s == 0) & (t < micro), inject, state)
                state = jnp.tanh(state @ w)
                done = t - (stages - 1)
                outs = jnp.where((s == stages - 1) & (done >= 0),
                                 lax.dynamic_update_index_in_dim(outs, state, jnp.maximum(done, 0), 0),
                                 outs)
                state = lax.ppermute(state, "stage",
                                     [(i, (i + 1) % stages) for i in range(stages)])
                return state, outs

            # The carry differs per stage: say so (JAX's varying manual axes).
            state0 = lax.pcast(jnp.zeros_like(xs[0]), ("stage",), to="varying")
            outs0 = lax.pcast(jnp.zeros_like(xs), ("stage",), to="varying")
            _, outs = lax.fori_loop(0, micro + stages - 1, tick, (state0, outs0))
            return lax.psum(outs, "stage")
        return jax.shard_map(body, mesh=mesh, in_specs=(P(None, "data"), P("stage")),
                             out_specs=P(None, "data"))(xs, ws)

    args = [je.randn(rng, micro, mb, d), je.randn(rng, stages, d, d, scale=0.4)]

    def expected(xs, ws):
        out = xs.astype(np.float64)
        for k in range(stages):
            out = np.tanh(out @ ws[k])
        return out

    return shard_map_program(name, f, args, mesh, [P(None, "data"), P("stage")], expected)


@program("partial_manual_axis_index",
         "matmul sharded automatically, then shard_map over model only (data automatic): "
         "each block scaled by lax.axis_index('model') + 1, psum over model")
def _partial_axis_index(name, rng):
    mesh = je.M_DM()

    def f(x, w):
        y = jnp.tanh(x @ w)

        def body(b):
            i = lax.axis_index("model")
            return lax.psum(b * (i + 1).astype(b.dtype), "model")
        return jax.shard_map(body, mesh=mesh, in_specs=P(None, "model"), out_specs=P(),
                             axis_names={"model"})(y)

    args = [je.randn(rng, 32, 16), je.randn(rng, 16, 8)]

    def expected(x, w):
        y = np.tanh(x.astype(np.float64) @ w)
        return y[:, :4] * 1 + y[:, 4:] * 2

    return shard_map_program(name, f, args, mesh, [P("data"), P(None, "model")], expected)


def explicit_mesh():
    return je.make_mesh([("data", 4), ("model", 2)],
                        types=(je.AxisType.Explicit, je.AxisType.Explicit))


def explicit_program(name, fn, args, mesh, in_specs, **kw):
    return je.Program(name, None, je.named(fn, name), args, mesh, in_specs,
                      context=lambda: jax.set_mesh(mesh), place_args=True,
                      notes=["both mesh axes AxisType.Explicit; traced under jax.set_mesh(mesh)."],
                      **kw)


@program("explicit_train_step",
         "explicit sharding mode: an MLP step with einsum out_sharding=, jax.reshard of the "
         "activations, and the gradient step (data=4 x model=2, both Explicit)")
def _explicit_train(name, rng):
    mesh = explicit_mesh()

    def f(w1, w2, x, y):
        def loss(w1, w2):
            h = jnp.einsum("bd,dh->bh", x, w1, out_sharding=P("data", "model"))
            h = jax.nn.relu(h)
            h = jax.reshard(h, P("data", None))
            p = jnp.einsum("bh,ho->bo", h, w2, out_sharding=P("data", None))
            return ((p - y) ** 2).mean()
        l, (g1, g2) = jax.value_and_grad(loss, argnums=(0, 1))(w1, w2)
        return l, w1 - 0.1 * g1, w2 - 0.1 * g2

    args = [je.randn(rng, 16, 32, scale=0.3), je.randn(rng, 32, 8, scale=0.3),
            je.randn(rng, 64, 16), je.randn(rng, 64, 8)]
    return explicit_program(name, f, args, mesh,
                            [P(None, "model"), P(None, None), P("data", None), P("data", None)])


@program("unreduced_grad_accum",
         "explicit mode: a weight gradient accumulated over 3 microbatches in a lax.scan whose "
         "carry starts as jnp.zeros(out_sharding=P(None, 'model', unreduced={'data'})), "
         "reduced once by jax.reshard after the loop")
def _unreduced_accum(name, rng):
    mesh = explicit_mesh()

    def f(w, xs, ys):
        def micro(acc, xy):
            x, y = xy
            p = jnp.einsum("bd,dh->bh", x, w)
            dy = 2 * (p - y)
            g = jnp.einsum("bd,bh->dh", x, dy,
                           out_sharding=P(None, "model", unreduced={"data"}))
            return acc + g, None
        acc0 = jnp.zeros(w.shape, w.dtype, out_sharding=P(None, "model", unreduced={"data"}))
        g, _ = lax.scan(micro, acc0, (xs, ys))
        g = jax.reshard(g, P(None, "model"))
        return w - 0.01 * g

    args = [je.randn(rng, 16, 8, scale=0.3), je.randn(rng, 3, 32, 16), je.randn(rng, 3, 32, 8)]

    def check(text):
        return None if "unreduced=" in text else "expected unreduced={...} in input.mlir"

    return explicit_program(name, f, args, mesh,
                            [P(None, "model"), P(None, "data", None), P(None, "data", "model")],
                            check=check)


@program("host_offload",
         "parameters in pinned_host memory (mhlo.memory_kind), brought to the device with "
         "jax.device_put inside jit, an MLP whose activations are offloaded by the "
         "save_and_offload_only_these_names remat policy, the result put back on the host")
def _host_offload(name, rng):
    mesh = je.M_DM()
    host = jax.sharding.NamedSharding(mesh, P(None, "model"), memory_kind="pinned_host")
    dev = jax.sharding.NamedSharding(mesh, P(None, "model"), memory_kind="device")
    out_host = jax.sharding.NamedSharding(mesh, P("data", None), memory_kind="pinned_host")

    def f(w1, w2, x):
        w1d = jax.device_put(w1, dev)
        policy = jax.checkpoint_policies.save_and_offload_only_these_names(
            names_which_can_be_saved=[], names_which_can_be_offloaded=["hidden"],
            offload_src="device", offload_dst="pinned_host")

        def loss(w1d, w2):
            h = jnp.tanh(x @ w1d)
            h = checkpoint_name(h, "hidden")
            return jnp.sum((h @ w2) ** 2)
        l, g = jax.value_and_grad(jax.checkpoint(loss, policy=policy))(w1d, w2)
        return jax.device_put(x @ w1d @ w2 + l, out_host), g

    args = [je.randn(rng, 16, 32, scale=0.3), je.randn(rng, 32, 8, scale=0.3),
            je.randn(rng, 32, 16)]
    return je.Program(name, None, je.named(f, name), args, mesh,
                      [host, (mesh, P(None, None)), (mesh, P("data", None))],
                      out_specs=[out_host, (mesh, P(None, "model"))], place_args=True,
                      context=contextlib.nullcontext)


@program("async_psum_scatter",
         "shard_map over data=4 x model=2: lax.psum_scatter_start over data, compute that "
         "overlaps it (sin and a reduction), .done(), then the sum")
def _async_psum_scatter(name, rng):
    mesh = je.M_DM()

    def f(a):
        def body(b):
            fut = lax.psum_scatter_start(b, "data", scatter_dimension=0, tiled=True)
            c = jnp.sin(b)
            return fut.done() + c.sum()
        return jax.shard_map(body, mesh=mesh, in_specs=P(None, "model"),
                             out_specs=P("data", "model"))(a)

    def expected(a):
        a64 = a.astype(np.float64)
        out = np.zeros((64, 8))
        for m in range(2):
            blk = a64[:, 4 * m:4 * m + 4]
            out[:, 4 * m:4 * m + 4] = 4 * blk + np.sin(blk).sum()
        return out

    return shard_map_program(name, f, [je.randn(rng, 64, 8)], mesh, [P(None, "model")], expected)


def _ragged_moe(name, rng, platforms, w_spec=P(None, None, "model")):
    mesh = je.M_DM()
    g, t, d, h = 4, 64, 16, 8

    def f(x, w, sizes):
        return jnp.tanh(lax.ragged_dot(x, w, sizes))

    sizes = np.array([10, 22, 0, 32], np.int32)
    args = [je.randn(rng, t, d), je.randn(rng, g, d, h, scale=0.3), sizes]
    prog = je.Program(name, None, je.named(f, name), args, mesh,
                      [P("data", None), w_spec, P()],
                      text_platforms=platforms)

    def expected(x, w, sizes):
        out = np.zeros((t, h))
        start = 0
        for k, n in enumerate(sizes):
            out[start:start + n] = x[start:start + n].astype(np.float64) @ w[k]
            start += n
        return np.tanh(out)

    prog.expected = expected
    return prog


@program("ragged_dot_moe_cpu",
         "lax.ragged_dot (the MoE grouped matmul) as JAX lowers it for CPU: tokens on data, "
         "expert weights' outputs on model, 4 groups of 10/22/0/32 rows")
def _ragged_cpu(name, rng):
    return _ragged_moe(name, rng, None)


@program("ragged_dot_moe_cuda",
         "the same lax.ragged_dot lowered for cuda (chlo.ragged_dot, as GPU/TPU lowering "
         "prints it); XLA's numbers from the CPU lowering")
def _ragged_cuda(name, rng):
    return _ragged_moe(name, rng, ("cuda",))


@program("ragged_dot_expert_parallel",
         "lax.ragged_dot lowered for cuda with the experts sharded over model (2 of 4 per "
         "device) and the tokens over data: expert parallelism; XLA's numbers from the CPU "
         "lowering")
def _ragged_experts(name, rng):
    return _ragged_moe(name, rng, ("cuda",), P("model", None, None))


def _ragged_moe_train(name, rng, platforms, w1_spec=P(None, None, "model"),
                      w2_spec=P(None, "model", None)):
    """A dropless top-1 MoE training step as users write it with
    lax.ragged_dot: tokens sorted by expert, two grouped matmuls, the
    outputs scattered back by ``.at[order].set``, gate-weighted, an SGD
    step on the router and both expert weights. Its gradient holds mode 2
    ragged_dots (a ragged contracting dimension) when lowered for cuda."""
    mesh = je.M_DM()
    e, t, d, h = 4, 64, 16, 32

    def f(router, w1, w2, x, y):
        def loss(router, w1, w2):
            logits = x @ router
            expert = jnp.argmax(logits, axis=-1)
            gate = jnp.take_along_axis(jax.nn.softmax(logits, axis=-1), expert[:, None], axis=-1)
            order = jnp.argsort(expert)
            sizes = jnp.bincount(expert, length=e).astype(jnp.int32)
            hid = jax.nn.gelu(lax.ragged_dot(x[order], w1, sizes))
            out = jnp.zeros((t, d), x.dtype).at[order].set(lax.ragged_dot(hid, w2, sizes))
            return jnp.mean((out * gate - y) ** 2)
        l, (gr, g1, g2) = jax.value_and_grad(loss, argnums=(0, 1, 2))(router, w1, w2)
        return l, router - 0.1 * gr, w1 - 0.1 * g1, w2 - 0.1 * g2

    args = [je.randn(rng, d, e), je.randn(rng, e, d, h, scale=0.3),
            je.randn(rng, e, h, d, scale=0.3), je.randn(rng, t, d), je.randn(rng, t, d)]
    return je.Program(name, None, je.named(f, name), args, mesh,
                      [P(), w1_spec, w2_spec, P("data", None), P("data", None)],
                      text_platforms=platforms)


@program("ragged_dot_moe_train_cpu",
         "a dropless top-1 MoE training step with lax.ragged_dot (argsort routing, two grouped "
         "matmuls, .at[order].set, SGD on router and experts) as JAX lowers it for CPU; "
         "tokens on data, expert hidden dims on model")
def _ragged_train_cpu(name, rng):
    return _ragged_moe_train(name, rng, None)


@program("ragged_dot_moe_train_cuda",
         "the same MoE training step lowered for cuda: chlo.ragged_dot forward and its "
         "gradients (mode 2: a ragged contracting dimension for the expert weights); XLA's "
         "numbers from the CPU lowering")
def _ragged_train_cuda(name, rng):
    return _ragged_moe_train(name, rng, ("cuda",))


@program("ragged_dot_moe_train_experts_cpu",
         "the MoE training step with the experts sharded over model (2 of 4 per device), as "
         "JAX lowers it for CPU")
def _ragged_train_experts_cpu(name, rng):
    return _ragged_moe_train(name, rng, None, P("model", None, None), P("model", None, None))


@program("ragged_dot_moe_train_experts_cuda",
         "the MoE training step lowered for cuda with the experts sharded over model (2 of 4 "
         "per device): the expert-weight gradients are mode 2 ragged_dots whose result "
         "groups are sharded; XLA's numbers from the CPU lowering")
def _ragged_train_experts(name, rng):
    return _ragged_moe_train(name, rng, ("cuda",), P("model", None, None), P("model", None, None))


@program("ragged_dot_batched_sizes_cuda",
         "lax.ragged_dot_general with a batch dimension and group sizes per batch element "
         "(group_sizes [b, g]), batch sharded over data and the output features over model, "
         "lowered for cuda; XLA's numbers from the CPU lowering")
def _ragged_batched(name, rng):
    mesh = je.M_DM()
    b, m, k, n, g = 4, 16, 8, 6, 3
    dims = lax.RaggedDotDimensionNumbers(
        dot_dimension_numbers=(([2], [2]), ([0], [1])),
        lhs_ragged_dimensions=[1], rhs_group_dimensions=[0])

    def f(x, w, sizes):
        return jnp.tanh(lax.ragged_dot_general(x, w, sizes, dims))

    sizes = np.array([[4, 0, 12], [16, 0, 0], [5, 5, 5], [0, 7, 2]], np.int32)
    args = [je.randn(rng, b, m, k), je.randn(rng, g, b, k, n, scale=0.3), sizes]
    prog = je.Program(name, None, je.named(f, name), args, mesh,
                      [P("data", None, None), P(None, "data", None, "model"), P("data", None)],
                      text_platforms=("cuda",))

    def expected(x, w, sizes):
        out = np.zeros((b, m, n))
        for bi in range(b):
            start = 0
            for gi, cnt in enumerate(sizes[bi]):
                out[bi, start:start + cnt] = x[bi, start:start + cnt].astype(np.float64) @ w[gi, bi]
                start += cnt
        return np.tanh(out)

    prog.expected = expected
    return prog


def main(argv=None):
    return je.export_cli(BUILDERS, __doc__, "jax_0_12", argv)


if __name__ == "__main__":
    sys.exit(main())
