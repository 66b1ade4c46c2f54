"""Every exported fixture through the package: the same numbers as JAX,
the same documents as the CLI."""

import json
import subprocess

import numpy as np
import pytest

import meshrun
from conftest import fixture_dirs

FIXTURES = fixture_dirs()

# What meshrun cannot run, as runtime/tests/model_fixtures.rs lists it:
# `run` raises meshrun.Error saying so.
KNOWN_FAILURES = {
    "fft_spectrum": "complex element type 'complex<f32>' is not supported",
    "linalg_solve": "custom_call target '@lapack_sgetrf_ffi' cannot run",
}


def rtol_for(dtype):
    """The tolerance meshrun's --check uses for an element type."""
    name = str(dtype)
    if "bfloat16" in name or dtype == np.dtype("V2"):
        return 1.6e-2
    if dtype == np.float16:
        return 2e-3
    return 1e-5


def assert_close(got, want, where):
    got = np.asarray(got)
    want = np.asarray(want)
    if want.dtype == np.dtype("V2"):
        got = got.view(np.uint16)
        want = want.view(np.uint16)
    assert got.shape == want.shape, where
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=where)
        return
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    finite = np.isfinite(w)
    np.testing.assert_array_equal(np.isfinite(g), finite, err_msg=where)
    # Infinities and NaNs where JAX has them (NaNs compare equal here).
    np.testing.assert_array_equal(g[~finite], w[~finite], err_msg=where)
    scale = np.abs(w[finite]).max(initial=0.0)
    err = np.abs(g[finite] - w[finite]) / (np.abs(w[finite]) + scale + 1e-30)
    # Inputs ride through bf16 when the program is bf16 inside.
    tol = max(rtol_for(got.dtype), 1.6e-2 if "bf16" in where else 1e-5)
    assert err.max(initial=0.0) <= tol * 4, f"{where}: relative error {err.max()}"


def numbered(d, prefix):
    out = []
    k = 0
    while (d / f"{prefix}_{k}.npy").is_file():
        out.append(np.load(d / f"{prefix}_{k}.npy"))
        k += 1
    return out


@pytest.mark.parametrize("d", FIXTURES, ids=lambda d: f"{d.parent.name}/{d.name}")
def test_run_gives_jax_outputs(d):
    program = d / "input.mlir"
    text = program.read_text()
    tag = "bf16" if "bf16" in text else ""
    if d.name in KNOWN_FAILURES:
        with pytest.raises(meshrun.Error, match=KNOWN_FAILURES[d.name]):
            meshrun.run(program, *numbered(d, "in"), check=True)
        return
    outs = meshrun.run(program, *numbered(d, "in"), check=True)
    want = numbered(d, "out")
    assert len(outs) == len(want)
    for k, (g, w) in enumerate(zip(outs, want)):
        assert_close(g, w, f"{d.name} output {k} {tag}")


@pytest.mark.parametrize("d", FIXTURES, ids=lambda d: f"{d.parent.name}/{d.name}")
def test_compile_is_the_clis_partition_json(d, cli):
    program = d / "input.mlir"
    if d.name == "fft_spectrum":
        pytest.skip("complex element types do not load (checked in test_run_gives_jax_outputs)")
    doc = json.loads(
        subprocess.run(
            [str(cli), "partition", str(program), "--json"], capture_output=True, check=True, text=True
        ).stdout
    )
    plan = meshrun.compile(program)
    assert plan.to_dict() == doc
    assert plan.bytes_per_device == doc["total_bytes_per_device"]
    assert plan.num_devices == 8
    assert len(plan.collectives) == len(doc["collectives"])
    assert plan.memory_per_device.total == doc["memory"]["total_bytes"]
    assert sum(c.bytes_per_device for c in plan.collectives) == pytest.approx(plan.bytes_per_device)


def test_cost_is_the_clis_cost_json(cli):
    for d in FIXTURES[:: max(1, len(FIXTURES) // 12)]:
        program = d / "input.mlir"
        for topology in ("h100-nvlink-8", "pcie4-8"):
            doc = json.loads(
                subprocess.run(
                    [str(cli), "cost", str(program), "--json", "--topology", topology],
                    capture_output=True,
                    check=True,
                    text=True,
                ).stdout
            )
            c = meshrun.cost(program, topology=topology)
            assert c.to_dict() == doc, d.name
            assert c.step_s == pytest.approx(doc["step_us"] * 1e-6)
            assert c.step_s == pytest.approx(c.compute_s + c.communication_s + c.host_copy_s)
            assert [x.time_s for x in c.collectives] == pytest.approx(
                [x["time_us"] * 1e-6 for x in doc["collectives"]]
            )
