"""JAX programs with private functions that XLA keeps as calls, whose Shardy
propagation meshrun must reproduce op for op (every function, its argument
and result shardings, and the ops in it).

    python3 compiler/tests/propagation_data/jax_extra/call_programs.py [NAME ...]

Same output as extra_programs.py (NAME.before.mlir / NAME.after.mlir, XLA's
dumps around Shardy's propagation, JAX 0.10.2 on 8 host CPU devices). XLA's
call inliner inlines every call before Shardy runs unless the call says
`inlineable = "false"`; JAX's `compute_on2(compute_type="device")` lowers a
function to such a call, so Shardy sees `func.call`s. XLA gives every call
site its own copy of the callee first (`@f`, `@f.clone`, ...).
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import extra_programs as ex
from extra_programs import M_DM, M_XYZ, r, wsc, ns
import jax, jax.numpy as jnp
from jax.sharding import PartitionSpec as P
from jax.experimental.compute_on import compute_on2
from jax._src import core

ex.PROGRAMS.clear()
prog = ex.prog


def kept(f):
    """`f` as a function XLA does not inline."""
    return compute_on2(f, compute_type="device", out_memory_spaces=core.MemorySpace.Device)


@kept
def dense_tanh(x, w):
    return jnp.tanh(x @ w)


@prog("call_twice_kept", M_DM, [("data", None), (None, "model"), (None, "data"), ("model", None)],
      [r(16, 32), r(32, 32), r(16, 32), r(32, 32)])
def call_twice_kept(a, w1, b, w2):
    # One function, two call sites with different shardings.
    return dense_tanh(a, w1), dense_tanh(b, w2)


@prog("call_chain_kept", M_XYZ, [(("x", "y"), None), (None, "z")], [r(16, 16), r(16, 16)])
def call_chain_kept(x, w):
    # The second call's operand comes from the first call's result; its
    # result feeds a constraint the callee must not see.
    h = dense_tanh(x, w)
    h = dense_tanh(h, w)
    return wsc(h * 2.0, ns(M_XYZ, "x", None))


@kept
def scale_add(h, b):
    return h * 0.5 + b


@prog("call_in_scan", M_DM, [("data", None), (None, None, "model"), (None,)],
      [r(16, 32), r(4, 32, 32), r(32)])
def call_in_scan(x, ws, b):
    def layer(h, w):
        return scale_add(dense_tanh(h, w), b), None
    h, _ = jax.lax.scan(layer, x, ws)
    return h


@prog("call_unsharded_args", M_DM, [None, None, ("data", "model")], [r(8, 16), r(8, 16), r(8, 16)])
def call_unsharded_args(a, b, c):
    # The callee's arguments get their shardings from what the caller does
    # with its results.
    u = scale_add(a, 1.0)
    return u + c, scale_add(b, 2.0)


@kept
def constrained(x):
    # A constraint inside the callee decides its result's sharding.
    return wsc(jnp.sin(x) * 2.0, ns(M_DM, "data", None))


@prog("call_constraint_inside", M_DM, [(None, "model"), (None, None)], [r(16, 32), r(16, 32)])
def call_constraint_inside(a, b):
    # The caller wants the result otherwise: Shardy reshards after the call.
    c = wsc(constrained(a), ns(M_DM, None, "model"))
    return c + b, constrained(b)


@kept
def two_results(x, y):
    return x @ y, jnp.exp(y)


@prog("call_two_results", M_XYZ, [("x", None), (None, ("y", "z"))], [r(16, 16), r(16, 16)],
      out_specs=(P(None, "y"), P("z", None)))
def call_two_results(x, y):
    u, e = two_results(x, y)
    return u, e


@prog("call_in_cond", M_DM, [(), ("data", None), (None, "model")], [r(), r(16, 32), r(32, 32)])
def call_in_cond(p, x, w):
    return jax.lax.cond(p > 0, lambda x: dense_tanh(x, w), lambda x: jnp.cos(x @ w), x)


if __name__ == "__main__":
    out = os.path.dirname(os.path.abspath(__file__))
    for name in (sys.argv[1:] or list(ex.PROGRAMS)):
        try:
            ex.dump(name, out)
        except Exception as e:
            print("FAILED", name, type(e).__name__, str(e)[:300])
