"""Regenerate the files of this directory: for every program of
tools/jax_export.py, the module exactly as Shardy receives it inside XLA
(`01.before_propagation.mlir` of XLA's shardy dump), as NAME.mlir.

    python3 compiler/tests/propagation_data/jax_before/dump_stages.py [NAME ...]

Its `02.after_propagation.mlir` is the fixture's `propagated.mlir`
(tools/jax_export.py copies it from the same dump), so the pair lets
compiler/tests/propagation_jax.rs compare meshrun's propagation with
Shardy's op for op. Run it whenever fixtures/jax is regenerated.
"""
import contextlib
import glob
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tools"))
import jax_export as je  # noqa: E402  (sets XLA_FLAGS before importing jax)
import jax  # noqa: E402


def dump(name, builder):
    prog = builder(name, je.rng_for(name))
    in_sh = [je.resolve(prog, s)[0] for s in prog.in_specs]
    kw = {"in_shardings": tuple(in_sh)}
    if prog.out_specs is not None:
        if isinstance(prog.out_specs, (list, tuple)) and not isinstance(prog.out_specs, je.P):
            kw["out_shardings"] = tuple(je.resolve(prog, s)[0] for s in prog.out_specs)
        else:
            kw["out_shardings"] = je.resolve(prog, prog.out_specs)[0]
    ctx = prog.context() if prog.context else contextlib.nullcontext()
    with ctx:
        args = prog.args
        if prog.place_args:
            args = [a if s is None else jax.device_put(a, s) for a, s in zip(prog.args, in_sh)]
        lowered = jax.jit(prog.fn, **kw).lower(*args)
        d = tempfile.mkdtemp()
        try:
            lowered.compile(compiler_options={"xla_dump_to": d, "xla_dump_hlo_pass_re": "shardy-xla"})
            hits = [p for p in glob.glob(os.path.join(d, "**", "*.mlir"), recursive=True)
                    if "shardy" in p and "01.before_propagation" in os.path.basename(p)]
            if len(hits) != 1:
                raise RuntimeError(f"{name}: expected one 01.before_propagation dump, got {hits}")
            shutil.copyfile(hits[0], os.path.join(HERE, f"{name}.mlir"))
        finally:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    only = set(sys.argv[1:])
    for name, _desc, builder in je.BUILDERS:
        if not only or name in only:
            dump(name, builder)
            print("wrote", name)
