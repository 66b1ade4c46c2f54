#!/usr/bin/env python3
"""A Llama-style block (RMSNorm, grouped-query attention with RoPE, SwiGLU
MLP) in plain JAX, sharded Megatron-style over "model" and data-parallel
over "data" on 8 devices: meshrun's plan, its cost on two machines, the
sharding meshrun suggests, and both shardings run on 8 simulated CPU
devices and checked against JAX.

    pip install ./python jax
    python examples/python/plan_llama.py
"""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

import meshrun  # noqa: E402

B, T, D, H, KV, F = 4, 16, 64, 8, 2, 128  # batch, tokens, width, heads, kv heads, ffn
HD = D // H


def rms_norm(x, g):
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * g


def rope(x):
    pos = jnp.arange(x.shape[1])[:, None]
    freq = 1.0 / (10000 ** (jnp.arange(0, HD, 2) / HD))
    ang = pos * freq[None, :]
    cos, sin = jnp.cos(ang)[None, :, None, :], jnp.sin(ang)[None, :, None, :]
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return jnp.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)


def block(p, x):
    h = rms_norm(x, p["g1"])
    q = rope((h @ p["wq"]).reshape(B, T, H, HD))
    k = rope((h @ p["wk"]).reshape(B, T, KV, HD))
    v = (h @ p["wv"]).reshape(B, T, KV, HD)
    k = jnp.repeat(k, H // KV, axis=2)
    v = jnp.repeat(v, H // KV, axis=2)
    s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(HD)
    s = jnp.where(jnp.tril(jnp.ones((T, T), bool)), s, -1e9)
    a = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, axis=-1), v).reshape(B, T, D)
    x = x + a @ p["wo"]
    h = rms_norm(x, p["g2"])
    return x + (jax.nn.silu(h @ p["w1"]) * (h @ p["w3"])) @ p["w2"]


def params(rng):
    w = lambda *s: (rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32)  # noqa: E731
    return {
        "g1": np.ones(D, np.float32), "g2": np.ones(D, np.float32),
        "wq": w(D, D), "wk": w(D, KV * HD), "wv": w(D, KV * HD), "wo": w(D, D),
        "w1": w(D, F), "w3": w(D, F), "w2": w(F, D),
    }


def main():
    mesh = jax.make_mesh((4, 2), ("data", "model"))
    ns = lambda *s: NamedSharding(mesh, P(*s))  # noqa: E731
    col, row = ns(None, "model"), ns("model", None)
    megatron = {"g1": ns(), "g2": ns(), "wq": col, "wk": col, "wv": col, "wo": row,
                "w1": col, "w3": col, "w2": row}
    rng = np.random.default_rng(0)
    p, x = params(rng), rng.standard_normal((B, T, D)).astype(np.float32)
    f = jax.jit(block, in_shardings=(megatron, ns("data", None, None)))
    lowered = f.lower(p, x)

    plan = meshrun.compile(lowered)
    print("== plan (Megatron + data parallel)\n" + str(plan))
    for topo in ("h100-nvlink-8", "pcie4-8"):
        c = meshrun.cost(lowered, topology=topo)
        print(f"== cost on {topo}: step {c.step_s * 1e6:.1f} µs "
              f"(compute {c.compute_s * 1e6:.3f} µs, communication {c.communication_s * 1e6:.1f} µs)")

    s = meshrun.suggest(lowered, mesh={"data": 4, "model": 2}, memory_per_device="1G")
    print("== suggestion\n" + str(s))

    want = np.asarray(f(p, x))
    for name, low in (("Megatron", lowered), ("suggested", jax.jit(block, in_shardings=s.in_shardings).lower(p, x))):
        got = meshrun.run(low, p, x, check=True)
        err = float(np.abs(got - want).max())
        print(f"== {name}: 8 simulated devices vs JAX: max abs diff {err:.2e}")
        assert err < 1e-4, err
    jax_suggested = np.asarray(jax.jit(block, in_shardings=s.in_shardings)(p, x))
    assert np.allclose(jax_suggested, want, rtol=1e-5, atol=1e-5)


if __name__ == "__main__":
    main()
