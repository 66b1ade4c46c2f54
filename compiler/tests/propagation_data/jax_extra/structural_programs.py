"""JAX programs with loops and conditionals whose Shardy propagation meshrun
must reproduce op for op (ops inside while bodies and case branches too).

    python3 compiler/tests/propagation_data/jax_extra/structural_programs.py [NAME ...]

Same output as extra_programs.py (NAME.before.mlir / NAME.after.mlir, XLA's
dumps around Shardy's propagation, JAX 0.10.2 on 8 host CPU devices), for
lax.fori_loop, lax.scan, lax.while_loop and lax.cond. XLA inlines calls
before Shardy runs, so these dumps have none.
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import extra_programs as ex
from extra_programs import M_DM, M_XYZ, r, wsc, ns
import jax, jax.numpy as jnp
from jax.sharding import PartitionSpec as P

ex.PROGRAMS.clear()
prog = ex.prog

@prog("fori_matmul", M_DM, [("data", None), (None, "model")], [r(16, 32), r(32, 32)])
def fori_matmul(x, w):
    return jax.lax.fori_loop(0, 3, lambda i, c: jnp.tanh(c @ w), x)

@prog("scan_mlp", M_DM, [("data", None), (None, None, "model"), (None, "model", None)],
      [r(16, 32), r(4, 32, 64), r(4, 64, 32)])
def scan_mlp(x, w1s, w2s):
    def layer(h, ws):
        w1, w2 = ws
        return h + jax.nn.relu(h @ w1) @ w2, None
    h, _ = jax.lax.scan(layer, x, (w1s, w2s))
    return h

@prog("scan_stack_sharded", M_DM, [("data", None), ("model", None, None)], [r(16, 32), r(4, 32, 32)])
def scan_stack_sharded(x, ws):
    def layer(h, w):
        return jnp.tanh(h @ w), h.sum()
    h, sums = jax.lax.scan(layer, x, ws)
    return h, sums

@prog("while_data_dependent", M_XYZ, [("x", "y"), (None,)], [r(16, 16), r(16)])
def while_data_dependent(x, v):
    def cond(c):
        h, i = c
        return (jnp.abs(h).sum() > 1.0) & (i < 20)
    def body(c):
        h, i = c
        return (h * 0.5 + v, i + 1)
    h, n = jax.lax.while_loop(cond, body, (x, 0))
    return h, n

@prog("cond_sharded", M_DM, [(), ("data", None), (None, "model")], [r(), r(16, 32), r(32, 32)])
def cond_sharded(p, x, w):
    return jax.lax.cond(p > 0, lambda x: jnp.sin(x) @ w, lambda x: x @ w.T, x)

@prog("cond_in_loop", M_XYZ, [(("x", "y"), None), (None, "z")], [r(16, 16), r(16, 16)])
def cond_in_loop(x, w):
    def body(i, c):
        return jax.lax.cond(i % 2 == 0, lambda c: jnp.tanh(c @ w), lambda c: wsc(c * 2.0, ns(M_XYZ, "x", None)), c)
    return jax.lax.fori_loop(0, 4, body, x)

if __name__ == "__main__":
    out = os.path.dirname(os.path.abspath(__file__))
    for name in (sys.argv[1:] or list(ex.PROGRAMS)):
        try:
            ex.dump(name, out)
        except Exception as e:
            print("FAILED", name, type(e).__name__, str(e)[:300])
