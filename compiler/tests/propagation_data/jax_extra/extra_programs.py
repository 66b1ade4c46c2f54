"""Extra JAX programs whose Shardy propagation meshrun must reproduce op for op.

    python3 compiler/tests/propagation_data/jax_extra/extra_programs.py [NAME ...]

Writes NAME.before.mlir (XLA's 01.before_propagation.mlir: the module as
Shardy receives it) and NAME.after.mlir (02.after_propagation.mlir: what
Shardy made of it) next to this script, with JAX 0.10.2 on 8 host CPU
devices. The programs stress conflict resolution and visiting order beyond
fixtures/jax; compiler/tests/propagation_jax.rs compares them.
"""
import os, sys, glob, shutil, tempfile
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import numpy as np
import jax, jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
jax.config.update("jax_use_shardy_partitioner", True)

devs = np.array(jax.devices("cpu"))
M_DM = Mesh(devs.reshape(4, 2), ("data", "model"))
M_XYZ = Mesh(devs.reshape(2, 2, 2), ("x", "y", "z"))
M_X8 = Mesh(devs.reshape(8), ("x",))
wsc = jax.lax.with_sharding_constraint
rng = np.random.RandomState(0)
def r(*s): return rng.standard_normal(s).astype(np.float32)
def ns(m, *spec): return NamedSharding(m, P(*spec))

PROGRAMS = {}
def prog(name, mesh, in_specs, args, out_specs=None):
    def deco(f):
        PROGRAMS[name] = (f, mesh, in_specs, args, out_specs)
        return f
    return deco

@prog("transformer_block", M_DM, [("data", None, None), (None, "model"), (None, "model"), (None, "model"), ("model", None), (None, "model"), ("model", None), (None,), (None,)],
      [r(4, 16, 32), r(32, 32), r(32, 32), r(32, 32), r(32, 32), r(32, 64), r(64, 32), r(32), r(32)])
def transformer_block(x, wq, wk, wv, wo, w1, w2, g, b):
    def ln(h):
        m = h.mean(-1, keepdims=True)
        v = ((h - m) ** 2).mean(-1, keepdims=True)
        return (h - m) * jax.lax.rsqrt(v + 1e-5) * g + b
    h = ln(x)
    q = (h @ wq).reshape(4, 16, 4, 8)
    k = (h @ wk).reshape(4, 16, 4, 8)
    v = (h @ wv).reshape(4, 16, 4, 8)
    s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / 8.0
    p = jax.nn.softmax(s, axis=-1)
    o = jnp.einsum("bhqk,bkhd->bqhd", p, v).reshape(4, 16, 32)
    x = x + o @ wo
    return x + jax.nn.gelu(ln(x) @ w1) @ w2

@prog("conflicting_consumers", M_DM, [("data", "model"), ("model", "data"), (None, "data")], [r(16, 16), r(16, 16), r(16, 16)])
def conflicting_consumers(a, b, c):
    t = jnp.tanh(a)
    u = t @ b
    w = t @ c
    return u + w, t * 2.0

@prog("reshape_chain", M_DM, [(("data", "model"), None)], [r(64, 12)])
def reshape_chain(x):
    y = x.reshape(8, 8, 12)
    z = jnp.transpose(y, (1, 0, 2)).reshape(8, 96)
    w = jnp.sin(z).reshape(4, 2, 96).sum(1)
    return w, y * 3.0

@prog("constraint_in_the_middle", M_XYZ, [("x", None), (None, "y")], [r(16, 32), r(32, 16)])
def constraint_in_the_middle(a, b):
    h = jnp.exp(a @ b)
    h = wsc(h, ns(M_XYZ, P.UNCONSTRAINED, "z"))
    h2 = h @ b.T
    h2 = wsc(h2, ns(M_XYZ, ("y", "z"), P.UNCONSTRAINED))
    return jnp.cos(h2).sum(0), h

@prog("broadcast_and_reduce", M_DM, [("data",), (None, "model"), ("data", "model")], [r(32), r(8, 16), r(32, 16)])
def broadcast_and_reduce(v, m, t):
    a = v[:, None] * t
    b = jnp.max(a, axis=0) + m.sum(0)
    c = jnp.broadcast_to(b, (32, 16)) - t
    return c, b, a.mean()

@prog("elementwise_diamond", M_XYZ, [(("x", "y"), None), (None, ("z", "x")), ("z", "y")], [r(16, 16), r(16, 16), r(16, 16)])
def elementwise_diamond(a, b, c):
    s = a + b
    d = jnp.maximum(s, c)
    e = jnp.where(d > 0, s, c)
    return e * d, s - c

@prog("non_divisible_mix", M_X8, [(None, "x"), (None,)], [r(6, 16), r(10)])
def non_divisible_mix(a, v):
    h = wsc(jnp.tanh(a), ns(M_X8, "x", None))
    return h.sum(1), jnp.outer(v, h[:, 0]), h

@prog("mlp_three_axes", M_XYZ, [(("x", "y"), None), (None, "z"), ("z", None), (None,)], [r(16, 32), r(32, 64), r(64, 32), r(64)],
      out_specs=(P("x", None),))
def mlp_three_axes(x, w1, w2, b1):
    h = jax.nn.relu(x @ w1 + b1)
    return (h @ w2,)

@prog("pad_slice_concat", M_DM, [("data", "model"), (None, "model")], [r(16, 8), r(4, 8)])
def pad_slice_concat(a, b):
    p = jnp.pad(a, ((1, 3), (0, 0)))
    s = p[2:18:2]
    c = jnp.concatenate([s, b], axis=0)
    return c * 2.0, jax.lax.slice(a, (0, 0), (8, 8))

def dump(name, out):
    f, mesh, in_specs, args, out_specs = PROGRAMS[name]
    in_sh = tuple(None if s is None else ns(mesh, *s) for s in in_specs)
    kw = {"in_shardings": in_sh}
    if out_specs is not None:
        kw["out_shardings"] = tuple(NamedSharding(mesh, s) for s in out_specs)
    lowered = jax.jit(f, **kw).lower(*args)
    d = tempfile.mkdtemp()
    lowered.compile(compiler_options={"xla_dump_to": d, "xla_dump_hlo_pass_re": "shardy-xla"})
    files = glob.glob(os.path.join(d, "**", "*.mlir"), recursive=True)
    def find(tag):
        hits = [p for p in files if "shardy" in p and tag in os.path.basename(p)]
        assert len(hits) == 1, (name, tag, files)
        return hits[0]
    shutil.copyfile(find("01.before_propagation"), os.path.join(out, f"{name}.before.mlir"))
    shutil.copyfile(find("02.after_propagation"), os.path.join(out, f"{name}.after.mlir"))
    shutil.rmtree(d)
    print("wrote", name)

if __name__ == "__main__":
    out = os.path.dirname(os.path.abspath(__file__))
    for name in (sys.argv[1:] or PROGRAMS):
        try:
            dump(name, out)
        except Exception as e:
            print("FAILED", name, type(e).__name__, str(e)[:300])
