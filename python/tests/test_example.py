"""examples/python/plan_llama.py runs: plan, cost, suggestion, and both
shardings checked against JAX on 8 simulated devices."""

import subprocess
import sys

import pytest

from conftest import ROOT


def test_plan_llama_example_runs_and_checks_against_jax():
    pytest.importorskip("jax")
    r = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "python" / "plan_llama.py")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    for want in ("== plan", "all-reduce", "== cost on pcie4-8", "== suggestion", "== Megatron: 8 simulated devices vs JAX", "== suggested: 8 simulated devices vs JAX"):
        assert want in r.stdout, want
