#!/usr/bin/env python3
"""The Python binding's overhead: `meshrun.compile(path)` against the CLI's
`meshrun partition --json` on the same program, side by side in one run.

Usage (after `pip install ./python` and `cargo build --release`):
    python tools/bench_python_binding.py [--runs 15] [PROGRAM.mlir ...]

Both sides parse, propagate, partition and write the same JSON document;
the CLI's time includes starting its process (what a user waits for when
they shell out to it), the package's includes turning the document into
dataclasses. Prints the median of each and their ratio.
"""

import argparse
import pathlib
import statistics
import subprocess
import sys
import time

import meshrun

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT = [
    ROOT / "fixtures/jax/gpt2_train_step/input.mlir",
    ROOT / "fixtures/jax_regions/gpt2_scan_train_step/input.mlir",
    ROOT / "fixtures/jax/mlp_train_step/input.mlir",
]


def median_s(fn, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("programs", nargs="*", type=pathlib.Path, default=DEFAULT)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--cli", type=pathlib.Path, default=ROOT / "target/release/meshrun")
    args = ap.parse_args(argv)
    print(f"{'program':<50} {'CLI partition --json':>22} {'meshrun.compile':>16} {'ratio':>7}")
    for p in args.programs:
        cli = median_s(
            lambda: subprocess.run([str(args.cli), "partition", str(p), "--json"], check=True, capture_output=True),
            args.runs,
        )
        py = median_s(lambda: meshrun.compile(p), args.runs)
        name = str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)
        print(f"{name:<50} {cli * 1e3:>19.2f} ms {py * 1e3:>13.2f} ms {py / cli:>7.2f}")


if __name__ == "__main__":
    sys.exit(main())
