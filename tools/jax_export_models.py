#!/usr/bin/env python3
"""Export small real-world JAX models as meshrun fixtures.

Usage:
    python3 tools/jax_export_models.py [--out fixtures/jax_models] [--only NAME ...] [--list]

Writes the same files as ``tools/jax_export.py`` (``input.mlir``,
``propagated.mlir``, ``compiled.hlo.txt``, ``in_K.npy``/``out_K.npy``,
``xla_collectives.json``, ``meta.json``) with its ``export``. The programs are
what users write and the other fixture folders do not cover: a ViT block, a
top-k mixture of experts, a hand-written Adam step with weight decay and global
norm clipping, an LSTM over time, dropout keys split per layer inside a scan
(JAX's CPU threefry lowering, rounds in a while loop), sampling (gumbel-max and
nucleus), bf16 mixed precision, segment sums / bincount, lax.switch with a
remat'd scan, and shard_map sequence/expert parallelism. Each is lowered
exactly as ``jax.jit(f, in_shardings=...).lower(...)`` prints it, with no
lowering overrides. ``runtime/tests/model_fixtures.rs`` runs them on 8
simulated devices.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax_export as je  # noqa: E402  (sets XLA_FLAGS before importing jax)
import jax_export_shard_map as jsm  # noqa: E402

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


def layernorm(x, g, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) * jax.lax.rsqrt(var + eps) * g + b


@program("vit_block",
         "ViT: patchify 16x16x3 images by reshape/transpose into 4x4 patches, patch embedding, "
         "class token, position embedding, one pre-LN block (4-head attention with softmax, "
         "MLP with exact erf GELU), tanh-approx GELU head; batch on data, heads/MLP on model")
def _vit_block(name, rng):
    mesh = je.M_DM()
    B, H, W, C, p, D, NH, F, NC = 8, 16, 16, 3, 4, 32, 4, 64, 10
    hd = D // NH

    def f(img, w_patch, cls, pos, g1, b1, wqkv, wo, g2, b2, w1, w2, w_head):
        n = (H // p) * (W // p)
        x = img.reshape(B, H // p, p, W // p, p, C).transpose(0, 1, 3, 2, 4, 5)
        x = x.reshape(B, n, p * p * C) @ w_patch
        x = jnp.concatenate([jnp.broadcast_to(cls, (B, 1, D)), x], axis=1) + pos
        h = layernorm(x, g1, b1)
        qkv = jnp.einsum("btd,dshk->sbhtk", h, wqkv)
        q, k, v = qkv[0], qkv[1], qkv[2]
        att = jax.nn.softmax(jnp.einsum("bhqk,bhsk->bhqs", q, k) / np.sqrt(hd), axis=-1)
        o = jnp.einsum("bhqs,bhsk->bqhk", att, v)
        x = x + jnp.einsum("bqhk,hkd->bqd", o, wo)
        h = layernorm(x, g2, b2)
        x = x + jax.nn.gelu(h @ w1, approximate=False) @ w2
        return jax.nn.gelu(x[:, 0] @ w_head, approximate=True)

    args = [je.randn(rng, B, H, W, C, scale=1.0), je.randn(rng, p * p * C, D, scale=0.2),
            je.randn(rng, 1, 1, D), je.randn(rng, 1, (H // p) * (W // p) + 1, D, scale=0.1),
            1.0 + je.randn(rng, D, scale=0.1), je.randn(rng, D, scale=0.1),
            je.randn(rng, D, 3, NH, hd, scale=0.2), je.randn(rng, NH, hd, D, scale=0.2),
            1.0 + je.randn(rng, D, scale=0.1), je.randn(rng, D, scale=0.1),
            je.randn(rng, D, F, scale=0.2), je.randn(rng, F, D, scale=0.2),
            je.randn(rng, D, NC, scale=0.2)]
    specs = [P("data"), P(), P(), P(), P(), P(), P(None, None, "model", None),
             P("model", None, None), P(), P(), P(None, "model"), P("model", None), P()]
    return je.Program(name, None, je.named(f, name), args, mesh, specs, rtol=1e-4, atol=1e-4)


@program("moe_top2",
         "mixture of experts: softmax router, lax.top_k(2) gates renormalized, one_hot dispatch "
         "with capacity by cumsum, einsum dispatch/combine, 4 experts (tanh MLP) sharded on model, "
         "tokens on data, load-balancing aux loss")
def _moe_top2(name, rng):
    mesh = je.M_DM()
    T, D, E, F, K, CAP = 64, 16, 4, 32, 2, 40

    def f(x, w_router, w1, w2):
        logits = x @ w_router
        probs = jax.nn.softmax(logits, axis=-1)
        gates, idx = jax.lax.top_k(probs, K)
        gates = gates / gates.sum(-1, keepdims=True)
        mask = jax.nn.one_hot(idx, E, dtype=x.dtype)  # [T, K, E]
        # Position of each token in its expert's buffer, k-major like GShard.
        flat = mask.transpose(1, 0, 2).reshape(K * T, E)
        pos = (jnp.cumsum(flat, axis=0) - 1.0) * flat
        pos = pos.reshape(K, T, E).transpose(1, 0, 2)
        keep = (pos < CAP) & (mask > 0)
        slot = jax.nn.one_hot(jnp.where(keep, pos, -1).astype(jnp.int32).max(1), CAP,
                              dtype=x.dtype)  # [T, E, CAP]
        kept = keep.any(1).astype(x.dtype)
        dispatch = slot * kept[..., None]
        combine = dispatch * (gates[..., None] * mask * keep).sum(1)[..., None]
        xe = jnp.einsum("tec,td->ecd", dispatch, x)
        he = jnp.tanh(jnp.einsum("ecd,edf->ecf", xe, w1))
        ye = jnp.einsum("ecf,efd->ecd", he, w2)
        y = jnp.einsum("tec,ecd->td", combine, ye)
        aux = E * jnp.mean(probs.mean(0) * mask.sum(1).mean(0))
        return y, aux

    args = [je.randn(rng, T, D, scale=1.0), je.randn(rng, D, E, scale=0.5),
            je.randn(rng, E, D, F, scale=0.3), je.randn(rng, E, F, D, scale=0.3)]
    specs = [P("data", None), P(), P("model", None, None), P("model", None, None)]
    return je.Program(name, None, je.named(f, name), args, mesh, specs, rtol=1e-4, atol=1e-4)


@program("adam_train_step",
         "MLP training step with Adam written by hand: value_and_grad, gradient clipping by the "
         "global norm (sqrt of summed squares, minimum), bias correction b**t with a traced step, "
         "sqrt + eps, decoupled weight decay; x on data, weights on model")
def _adam_train_step(name, rng):
    mesh = je.M_DM()
    b1, b2, lr, eps, wd, max_norm = 0.9, 0.999, 1e-2, 1e-8, 1e-2, 1.0

    def loss_fn(params, x, y):
        w1, bb1, w2 = params
        h = jax.nn.relu(x @ w1 + bb1)
        return jnp.mean((h @ w2 - y) ** 2)

    def f(step, x, y, w1, bb1, w2, m1, mb1, m2, v1, vb1, v2):
        params, ms, vs = (w1, bb1, w2), (m1, mb1, m2), (v1, vb1, v2)
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        gnorm = jnp.sqrt(sum(jnp.sum(g * g) for g in grads))
        scale = jnp.minimum(1.0, max_norm / (gnorm + 1e-6))
        grads = [g * scale for g in grads]
        t = (step + 1).astype(jnp.float32)
        new_p, new_m, new_v = [], [], []
        for p_, g, m, v in zip(params, grads, ms, vs):
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            mhat = m / (1 - b1 ** t)
            vhat = v / (1 - jnp.power(b2, t))
            new_p.append(p_ - lr * (mhat / (jnp.sqrt(vhat) + eps) + wd * p_))
            new_m.append(m)
            new_v.append(v)
        return (loss, gnorm, step + 1, *new_p, *new_m, *new_v)

    shapes = [(16, 64), (64,), (64, 8)]
    params = [je.randn(rng, *s, scale=0.3) for s in shapes]
    ms = [je.randn(rng, *s, scale=0.01) for s in shapes]
    vs = [np.abs(je.randn(rng, *s, scale=0.001)) for s in shapes]
    pspecs = [P(None, "model"), P("model"), P("model", None)]
    args = [np.int32(4), je.randn(rng, 32, 16, scale=1.0), je.randn(rng, 32, 8, scale=1.0)] \
        + params + ms + vs
    specs = [P(), P("data", None), P("data", None)] + pspecs * 3
    return je.Program(name, None, je.named(f, name), args, mesh, specs, rtol=1e-4, atol=1e-5)


@program("lstm_scan",
         "LSTM over 12 time steps with lax.scan (sigmoid/tanh gates from one fused matmul), "
         "batch on data, hidden units of the gate matmul on model; final state and per-step "
         "outputs projected")
def _lstm_scan(name, rng):
    mesh = je.M_DM()
    B, T, D, Hd = 8, 12, 8, 16

    def f(xs, wx, wh, b, wout):
        def cell(carry, x):
            h, c = carry
            z = x @ wx + h @ wh + b
            i, fg, g, o = jnp.split(z, 4, axis=-1)
            c = jax.nn.sigmoid(fg) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h
        h0 = jnp.zeros((B, Hd), xs.dtype)
        (h, c), hs = jax.lax.scan(cell, (h0, h0), xs.transpose(1, 0, 2))
        return hs.transpose(1, 0, 2) @ wout, h, c

    args = [je.randn(rng, B, T, D, scale=1.0), je.randn(rng, D, 4 * Hd, scale=0.3),
            je.randn(rng, Hd, 4 * Hd, scale=0.3), je.randn(rng, 4 * Hd, scale=0.1),
            je.randn(rng, Hd, 4, scale=0.3)]
    specs = [P("data", None, None), P(None, "model"), P(None, "model"), P("model"), P()]
    return je.Program(name, None, je.named(f, name), args, mesh, specs, rtol=1e-4, atol=1e-4)


@program("dropout_scan_layers",
         "residual MLP layer stack in lax.scan with dropout keys split per layer inside the body "
         "(jax.random.fold_in with the layer index, split, bernoulli; threefry2x32 as JAX lowers "
         "it on CPU, its rounds in a stablehlo.while), x on data, stacked weights on model")
def _dropout_scan_layers(name, rng):
    mesh = je.M_DM()
    L, B, D, F = 3, 16, 16, 32

    def f(key_data, x, w1s, w2s):
        key = jax.random.wrap_key_data(key_data, impl="threefry2x32")

        def layer(h, xs):
            i, w1, w2 = xs
            k = jax.random.fold_in(key, i)
            k1, k2 = jax.random.split(k)
            a = jax.nn.relu(h @ w1)
            a = jnp.where(jax.random.bernoulli(k1, 0.9, a.shape), a / 0.9, 0.0)
            o = a @ w2
            o = jnp.where(jax.random.bernoulli(k2, 0.8, o.shape), o / 0.8, 0.0)
            return h + o, jnp.mean(o)
        h, means = jax.lax.scan(layer, x, (jnp.arange(L), w1s, w2s))
        return h, means

    key = np.asarray(jax.random.key_data(jax.random.key(42)), dtype=np.uint32)
    args = [key, je.randn(rng, B, D, scale=1.0), je.randn(rng, L, D, F, scale=0.3),
            je.randn(rng, L, F, D, scale=0.3)]
    specs = [P(None), P("data", None), P(None, None, "model"), P(None, "model", None)]
    return je.Program(name, None, je.named(f, name), args, mesh, specs, rtol=1e-4, atol=1e-4)


@program("sampling_top_p",
         "token sampling from logits: temperature, nucleus (top-p) filter by a descending sort, "
         "cumsum of softmax and where, then jax.random.categorical (gumbel-max argmax) and the "
         "greedy argmax; logits batch on data, vocab on model")
def _sampling_top_p(name, rng):
    mesh = je.M_DM()
    B, V, top_p, temp = 8, 64, 0.9, 0.8

    def f(key_data, logits):
        key = jax.random.wrap_key_data(key_data, impl="threefry2x32")
        z = logits / temp
        srt = jnp.sort(z, axis=-1)[:, ::-1]
        cum = jnp.cumsum(jax.nn.softmax(srt, axis=-1), axis=-1)
        # The smallest logit kept: the first sorted position whose cumsum reaches top_p.
        cut_idx = jnp.sum(cum < top_p, axis=-1, keepdims=True)
        cutoff = jnp.take_along_axis(srt, cut_idx, axis=-1)
        filtered = jnp.where(z < cutoff, -jnp.inf, z)
        sample = jax.random.categorical(key, filtered, axis=-1)
        lse = jax.nn.logsumexp(filtered, axis=-1)
        return sample, jnp.argmax(logits, axis=-1), lse

    key = np.asarray(jax.random.key_data(jax.random.key(7)), dtype=np.uint32)
    args = [key, je.randn(rng, B, V, scale=2.0)]
    return je.Program(name, None, je.named(f, name), args, mesh, [P(None), P("data", "model")],
                      rtol=1e-4, atol=1e-4)


@program("bf16_mixed_precision",
         "mixed precision classifier: f32 params cast to bf16, bf16 matmuls and GELU, loss in f32 "
         "with logsumexp, jnp.clip, jnp.where label smoothing, accuracy; value_and_grad back to f32 "
         "with jnp.linalg.norm of the gradients; batch on data, hidden on model")
def _bf16_mixed(name, rng):
    mesh = je.M_DM()
    B, D, Hd, C = 32, 16, 64, 8

    def loss_fn(params, x, labels):
        w1, w2 = params
        h = jax.nn.gelu(x.astype(jnp.bfloat16) @ w1.astype(jnp.bfloat16))
        logits = (h @ w2.astype(jnp.bfloat16)).astype(jnp.float32)
        logits = jnp.clip(logits, -10.0, 10.0)
        onehot = jax.nn.one_hot(labels, C)
        target = jnp.where(onehot > 0, 0.9, 0.1 / (C - 1))
        logp = logits - jax.nn.logsumexp(logits, axis=-1, keepdims=True)
        return -jnp.mean(jnp.sum(target * logp, -1)), logits

    def f(x, labels, w1, w2):
        (loss, logits), grads = jax.value_and_grad(loss_fn, has_aux=True)((w1, w2), x, labels)
        acc = jnp.mean((jnp.argmax(logits, -1) == labels).astype(jnp.float32))
        norms = jnp.stack([jnp.linalg.norm(g) for g in grads])
        return loss, acc, norms, w1 - 0.1 * grads[0], w2 - 0.1 * grads[1]

    args = [je.randn(rng, B, D, scale=1.0), rng.randint(0, C, size=(B,)).astype(np.int32),
            je.randn(rng, D, Hd, scale=0.3), je.randn(rng, Hd, C, scale=0.3)]
    specs = [P("data", None), P("data"), P(None, "model"), P("model", None)]
    return je.Program(name, None, je.named(f, name), args, mesh, specs, rtol=2e-2, atol=2e-2)


@program("segment_bincount",
         "graph-style aggregation: jax.ops.segment_sum of edge messages into nodes (scatter-add), "
         "a bincount of the destination ids (.at[].add of ones), mean by count, segment_max, "
         "jnp.linalg.norm per node; edges on data")
def _segment_bincount(name, rng):
    mesh = je.M_DM()
    E, N, D = 64, 12, 8

    def f(msg, dst, w):
        m = jnp.tanh(msg @ w)
        s = jax.ops.segment_sum(m, dst, num_segments=N)
        cnt = jnp.zeros((N,), jnp.int32).at[dst].add(1)
        mean = s / jnp.maximum(cnt, 1)[:, None].astype(s.dtype)
        mx = jax.ops.segment_max(m, dst, num_segments=N)
        mx = jnp.where(cnt[:, None] > 0, mx, 0.0)
        return mean, cnt, mx, jnp.linalg.norm(mean, axis=-1)

    args = [je.randn(rng, E, D, scale=1.0), rng.randint(0, N - 2, size=(E,)).astype(np.int32),
            je.randn(rng, D, D, scale=0.4)]
    return je.Program(name, None, je.named(f, name), args, mesh,
                      [P("data", None), P("data"), P(None, "model")], rtol=1e-4, atol=1e-5)


@program("switch_remat_scan",
         "lax.switch on a traced index choosing one of three activations, then a scan over "
         "stacked layers whose body is jax.checkpoint'ed, under value_and_grad, and a "
         "lax.while_loop halving until the norm is below a data-dependent bound; x on data, "
         "weights on model")
def _switch_remat_scan(name, rng):
    mesh = je.M_DM()
    L, B, D = 3, 16, 32

    def loss(ws, x, which):
        h = jax.lax.switch(which, [jnp.tanh, jax.nn.relu, jnp.sin], x)

        @jax.checkpoint
        def layer(h, w):
            return jnp.tanh(h @ w) + h, None
        h, _ = jax.lax.scan(layer, h, ws)
        return jnp.mean(h ** 2), h

    def f(which, x, ws):
        (l, h), g = jax.value_and_grad(loss, has_aux=True)(ws, x, which)
        bound = jnp.abs(x).mean()

        def cond(c):
            return jnp.sqrt(jnp.sum(c[0] ** 2)) > bound

        def body(c):
            return c[0] * 0.5, c[1] + 1
        hh, n = jax.lax.while_loop(cond, body, (h, 0))
        return l, ws - 0.1 * g, hh, n

    args = [np.int32(2), je.randn(rng, B, D, scale=1.0), je.randn(rng, L, D, D, scale=0.2)]
    return je.Program(name, None, je.named(f, name), args, mesh,
                      [P(), P("data", None), P(None, None, "model")], rtol=1e-4, atol=1e-5)


@program("shard_map_ring_attention",
         "sequence-parallel attention in shard_map over x=8: each device holds a block of the "
         "sequence, K/V blocks travel the ring by lax.ppermute, online softmax (running max and "
         "sum) accumulates; lax.axis_index picks the causal mask offset")
def _ring_attention(name, rng):
    mesh = je.M_X8()
    n, S, D = 8, 64, 8
    blk = S // n
    ring = [(j, (j + 1) % n) for j in range(n)]

    def f(q, k, v):
        def body(qb, kb, vb):
            me = jax.lax.axis_index("x")
            m = jnp.full((blk, 1), -jnp.inf, qb.dtype)
            s = jnp.zeros((blk, 1), qb.dtype)
            acc = jnp.zeros_like(qb)
            qi = me * blk + jnp.arange(blk)[:, None]
            for step in range(n):
                src = (me - step) % n
                kj = src * blk + jnp.arange(blk)[None, :]
                sc = jnp.where(kj <= qi, qb @ kb.T / np.sqrt(D), -jnp.inf)
                m_new = jnp.maximum(m, sc.max(-1, keepdims=True))
                corr = jnp.where(jnp.isinf(m_new), 0.0, jnp.exp(m - m_new))
                pexp = jnp.where(jnp.isinf(m_new), 0.0, jnp.exp(sc - m_new))
                s = s * corr + pexp.sum(-1, keepdims=True)
                acc = acc * corr + pexp @ vb
                m = m_new
                if step < n - 1:
                    kb = jax.lax.ppermute(kb, "x", ring)
                    vb = jax.lax.ppermute(vb, "x", ring)
            return acc / s
        return jax.shard_map(body, mesh=mesh, in_specs=(P("x"), P("x"), P("x")),
                             out_specs=P("x"))(q, k, v)

    def expected(q, k, v):
        q, k, v = (a.astype(np.float64) for a in (q, k, v))
        sc = q @ k.T / np.sqrt(D)
        sc = np.where(np.tril(np.ones((S, S), bool)), sc, -np.inf)
        p = np.exp(sc - sc.max(-1, keepdims=True))
        return (p / p.sum(-1, keepdims=True)) @ v

    args = [je.randn(rng, S, D, scale=1.0) for _ in range(3)]
    return jsm.shard_map_program(name, f, args, mesh, [P("x"), P("x"), P("x")], expected)


@program("shard_map_expert_all_to_all",
         "expert parallelism in shard_map over x=8: tokens bucketed per destination expert, "
         "lax.all_to_all to the experts, each device's expert (tanh matmul, weights sharded on x), "
         "all_to_all back; then all_gather (tiled) of a per-device summary and psum_scatter of "
         "the outputs")
def _expert_all_to_all(name, rng):
    mesh = je.M_X8()
    n, T, D = 8, 16, 8  # tokens per device T, each sends T // n to every expert

    def f(x, w):
        def body(xb, wb):
            buckets = xb.reshape(n, T // n, D)
            recv = jax.lax.all_to_all(buckets, "x", 0, 0, tiled=False)
            h = jnp.tanh(recv @ wb[0])
            back = jax.lax.all_to_all(h, "x", 0, 0, tiled=False).reshape(T, D)
            summary = jax.lax.all_gather(back.mean(0, keepdims=True), "x", axis=0, tiled=True)
            red = jax.lax.psum_scatter(back, "x", scatter_dimension=0, tiled=True)
            return back, summary, red
        return jax.shard_map(body, mesh=mesh, in_specs=(P("x"), P("x")),
                             out_specs=(P("x"), P(), P("x")), check_vma=False)(x, w)

    def expected(x, w):
        x64, w64 = x.astype(np.float64), w.astype(np.float64)
        xb = x64.reshape(n, n, T // n, D)  # [device, expert, tok, D]
        return np.tanh(np.einsum("aetk,ekf->aetf", xb, w64)).reshape(n * T, D)

    args = [je.randn(rng, n * T, D, scale=1.0), je.randn(rng, n, D, D, scale=0.4)]
    return jsm.shard_map_program(name, f, args, mesh, [P("x"), P("x")], expected)


@program("kv_cache_decode",
         "autoregressive decoding with a KV cache: lax.fori_loop over 6 steps, each writes the "
         "new key/value row with lax.dynamic_update_slice at the traced position, attends over "
         "the cache masked by position (iota <= t), greedy argmax feeds the next token through "
         "jnp.take; batch on data, heads on model")
def _kv_cache_decode(name, rng):
    mesh = je.M_DM()
    B, NH, hd, V, S, steps = 4, 4, 8, 32, 8, 6
    D = NH * hd

    def f(emb, wq, wk, wv, wo, tok0):
        def step(t, c):
            kc, vc, tok, out = c
            x = jnp.take(emb, tok, axis=0)  # [B, D]
            q = jnp.einsum("bd,dhk->bhk", x, wq)
            k = jnp.einsum("bd,dhk->bhk", x, wk)
            v = jnp.einsum("bd,dhk->bhk", x, wv)
            kc = jax.lax.dynamic_update_slice(kc, k[:, None], (0, t, 0, 0))
            vc = jax.lax.dynamic_update_slice(vc, v[:, None], (0, t, 0, 0))
            sc = jnp.einsum("bhk,bshk->bhs", q, kc) / np.sqrt(hd)
            sc = jnp.where(jnp.arange(S)[None, None, :] <= t, sc, -1e30)
            o = jnp.einsum("bhs,bshk->bhk", jax.nn.softmax(sc, -1), vc)
            logits = jnp.einsum("bhk,hkv->bv", o, wo)
            tok = jnp.argmax(logits, -1).astype(jnp.int32)
            out = jax.lax.dynamic_update_slice(out, tok[:, None], (0, t))
            return kc, vc, tok, out
        z = jnp.zeros((B, S, NH, hd), jnp.float32)
        kc, vc, tok, out = jax.lax.fori_loop(
            0, steps, step, (z, z, tok0, jnp.zeros((B, steps), jnp.int32)))
        return out, kc

    args = [je.randn(rng, V, D, scale=1.0), je.randn(rng, D, NH, hd, scale=0.3),
            je.randn(rng, D, NH, hd, scale=0.3), je.randn(rng, D, NH, hd, scale=0.3),
            je.randn(rng, NH, hd, V, scale=0.3), rng.randint(0, V, size=(B,)).astype(np.int32)]
    specs = [P(), P(None, "model", None), P(None, "model", None), P(None, "model", None),
             P("model", None, None), P("data")]
    return je.Program(name, None, je.named(f, name), args, mesh, specs, rtol=1e-4, atol=1e-4)


@program("init_and_stats",
         "parameter init and data statistics: jax.random.normal (erf_inv) and truncated_normal "
         "scaled by fan-in, lax.cummax and cumprod along time, jnp.median and a percentile by "
         "sort, jnp.var with ddof; x on (data, model)")
def _init_and_stats(name, rng):
    mesh = je.M_DM()

    def f(key_data, x):
        key = jax.random.wrap_key_data(key_data, impl="threefry2x32")
        k1, k2 = jax.random.split(key)
        w = jax.random.normal(k1, (16, 32)) / np.sqrt(16)
        t = jax.random.truncated_normal(k2, -2.0, 2.0, (16, 32))
        y = x @ (w + 0.1 * t)
        cm = jax.lax.cummax(y, axis=1)
        cp = jnp.cumprod(1.0 + 0.01 * y, axis=1)
        med = jnp.median(y, axis=0)
        p90 = jnp.percentile(y, 90.0, axis=1)
        return cm, cp, med, p90, jnp.var(y, axis=0, ddof=1)

    key = np.asarray(jax.random.key_data(jax.random.key(3)), dtype=np.uint32)
    return je.Program(name, None, je.named(f, name), [key, je.randn(rng, 32, 16, scale=1.0)],
                      mesh, [P(None), P("data", "model")], rtol=1e-4, atol=1e-4)


@program("shard_map_pmax_pmean",
         "shard_map over (x=4, y=2): lax.pmax and lax.pmean over x, psum over both axes, "
         "all_gather over y untiled (a new dimension), axis_index scaling, ppermute shifting "
         "along x only")
def _pmax_pmean(name, rng):
    mesh = je.M_XY()

    def f(a):
        def body(b):
            i = jax.lax.axis_index("x").astype(b.dtype)
            m = jax.lax.pmax(b, "x")
            mean = jax.lax.pmean(b * (i + 1.0), "x")
            tot = jax.lax.psum(jnp.sum(b), ("x", "y"))
            g = jax.lax.all_gather(m, "y", axis=0, tiled=False)  # [2, 8, 16]
            sh = jax.lax.ppermute(b, "x", [(j, (j + 1) % 4) for j in range(4)])
            return g.sum(0) + mean + tot, sh
        return jax.shard_map(body, mesh=mesh, in_specs=P("x", "y"),
                             out_specs=(P(None, "y"), P("x", "y")), check_vma=False)(a)

    def expected(a):
        a64 = a.astype(np.float64)
        blk = a64.reshape(4, 8, 2, 16).transpose(0, 2, 1, 3)  # [x, y, 8, 16]
        m = blk.max(0)  # [y, 8, 16]
        mean = (blk * np.arange(1, 5)[:, None, None, None]).mean(0)
        tot = a64.sum()
        return np.concatenate([m.sum(0) + mean[y] + tot for y in range(2)], axis=1)

    return jsm.shard_map_program(name, f, [je.randn(rng, 32, 32, scale=1.0)], mesh,
                                 [P("x", "y")], expected)


@program("vit_conv_patchify",
         "ViT patch embedding by a strided convolution (4x4 stride 4, NHWC/HWIO, VALID), "
         "jax.nn.dot_product_attention (causal) over the patches, silu/softplus/log_sigmoid, "
         "images on data, embedding channels on model")
def _vit_conv_patchify(name, rng):
    mesh = je.M_DM()

    def f(img, w, wqkv):
        y = jax.lax.conv_general_dilated(img, w, (4, 4), "VALID",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
        x = y.reshape(y.shape[0], -1, y.shape[-1])  # [B, 16 patches, 32]
        qkv = jnp.einsum("btd,dshk->sbthk", x, wqkv)
        o = jax.nn.dot_product_attention(qkv[0], qkv[1], qkv[2], is_causal=True)
        o = o.reshape(x.shape)
        return (jax.nn.silu(o) + jax.nn.softplus(x) + jax.nn.log_sigmoid(o)).mean(1)

    args = [je.randn(rng, 8, 16, 16, 3, scale=1.0), je.randn(rng, 4, 4, 3, 32, scale=0.2),
            je.randn(rng, 32, 3, 4, 8, scale=0.2)]
    return je.Program(name, None, je.named(f, name), args, mesh,
                      [P("data"), P(None, None, None, "model"), P(None, None, "model", None)],
                      rtol=1e-4, atol=1e-4)


# The programs below do not run on meshrun yet: runtime/tests/model_fixtures.rs
# lists each in KNOWN_FAILURES with its error.

@program("reduce_precision_bf16_sim",
         "bf16 emulated in f32 by lax.reduce_precision(exponent_bits=8, mantissa_bits=7) around "
         "a matmul, as quantization-aware code does; x on data, w on model")
def _reduce_precision(name, rng):
    mesh = je.M_DM()

    def f(x, w):
        q = lambda a: jax.lax.reduce_precision(a, exponent_bits=8, mantissa_bits=7)
        return q(q(x) @ q(w))

    return je.Program(name, None, je.named(f, name),
                      [je.randn(rng, 16, 16, scale=1.0), je.randn(rng, 16, 16, scale=1.0)],
                      mesh, [P("data", None), P(None, "model")])


@program("fft_spectrum",
         "magnitude spectrum by jnp.fft.rfft along time (stablehlo.fft, complex<f32>), "
         "rows on data")
def _fft_spectrum(name, rng):
    mesh = je.M_DM()

    def f(x):
        return jnp.abs(jnp.fft.rfft(x, axis=-1))

    return je.Program(name, None, je.named(f, name), [je.randn(rng, 8, 32, scale=1.0)], mesh,
                      [P("data", None)], rtol=1e-4, atol=1e-4)


@program("linalg_solve",
         "jnp.linalg.solve and cholesky of a small SPD matrix (JAX's CPU lowering calls LAPACK "
         "through stablehlo.custom_call @lapack_sgetrf_ffi / @lapack_spotrf_ffi); right-hand "
         "sides on model")
def _linalg_solve(name, rng):
    mesh = je.M_DM()

    def f(a, b):
        s = a @ a.T + 4.0 * jnp.eye(a.shape[0])
        return jnp.linalg.solve(s, b), jnp.linalg.cholesky(s)

    return je.Program(name, None, je.named(f, name),
                      [je.randn(rng, 16, 16, scale=1.0), je.randn(rng, 16, 8, scale=1.0)],
                      mesh, [P(), P(None, "model")], rtol=1e-4, atol=1e-4)


def main(argv=None):
    return je.export_cli(BUILDERS, __doc__, "jax_models", argv)


if __name__ == "__main__":
    sys.exit(main())
