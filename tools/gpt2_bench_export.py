#!/usr/bin/env python3
"""Writes benches/data/gpt2_train_step.mlir, the program of the `gpt2`
bench: the GPT-2 training step of tools/jax_export.py (the same model
code, SGD update and shardings as fixtures/jax/gpt2_train_step: batch on
`data`=4, heads / MLP columns / vocabulary on `model`=2) at a size where
the 8 devices have work to split: vocabulary 2048, width 128, 4 heads, 64
tokens, batch 16, 2 layers. Only the lowered text
(`jax.jit(step, in_shardings=...).lower(...).as_text()`); the bench
draws its own inputs.

    python3 tools/gpt2_bench_export.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax_export as je  # sets XLA_FLAGS for 8 host devices first

import jax
import numpy as np

SIZE = dict(v=2048, d=128, h=4, t=64, b=16, l=2)


def main():
    je.set_gpt2_size(**SIZE)
    prog = je.gpt2_programs("gpt2_train_step", np.random.RandomState(0),
                            train=True, scan=False)
    shardings = tuple(je.resolve(prog, s)[0] for s in prog.in_specs)
    text = jax.jit(prog.fn, in_shardings=shardings).lower(*prog.args).as_text()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = os.path.join(root, "benches", "data", "gpt2_train_step.mlir")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        f.write(text)
    print(f"wrote {out} ({len(text)} bytes)")


if __name__ == "__main__":
    main()
