"""The package as a JAX user calls it: Lowered objects, pytrees,
NamedShardings, errors, threads, and text without jax."""

import json
import pathlib
import subprocess
import sys
import threading

import numpy as np
import pytest

import meshrun
from conftest import ROOT

jax = pytest.importorskip("jax")
jnp = jax.numpy
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

MLP = ROOT / "fixtures" / "jax" / "mlp_forward" / "input.mlir"


def mlp_step(params, x):
    h = jnp.tanh(x @ params["w1"])
    return {"y": h @ params["w2"], "s": jnp.sum(h)}


@pytest.fixture(scope="module")
def lowered():
    mesh = jax.make_mesh((4, 2), ("data", "model"))
    ns = lambda *s: NamedSharding(mesh, P(*s))  # noqa: E731
    rng = np.random.default_rng(0)
    params = {
        "w1": rng.standard_normal((32, 64), dtype=np.float32),
        "w2": rng.standard_normal((64, 16), dtype=np.float32),
    }
    x = rng.standard_normal((16, 32), dtype=np.float32)
    f = jax.jit(mlp_step, in_shardings=({"w1": ns(None, "model"), "w2": ns("model", None)}, ns("data", None)))
    return f, f.lower(params, x), params, x


def test_plan_of_a_lowered_function(lowered):
    _, low, _, _ = lowered
    plan = meshrun.compile(low)
    assert plan.mesh == {"data": 4, "model": 2}
    # Megatron: the row-parallel matmul's partial sums over "model".
    kinds = [(c.kind, c.axes) for c in plan.collectives]
    assert ("all-reduce", ("model",)) in kinds, kinds
    assert plan.bytes_per_device == sum(c.bytes_per_device for c in plan.collectives)
    shardings = plan.argument_shardings
    assert all(isinstance(s, NamedSharding) for s in shardings)
    assert [s.spec for s in shardings] == [P(None, "model"), P("model"), P("data")]
    assert plan.memory_per_device.total == plan.memory_per_device.arguments + plan.memory_per_device.peak_live
    text = str(plan)
    assert "all-reduce" in text and "memory" in text
    assert "<pre>" in plan._repr_html_()
    assert "Plan(mesh={'data': 4, 'model': 2}" in repr(plan)


def test_run_takes_and_gives_pytrees_with_jax_numbers(lowered):
    f, low, params, x = lowered
    outs = meshrun.run(low, params, x, check=True)
    ref = f(params, x)
    assert set(outs) == {"y", "s"}
    for k in ("y", "s"):
        assert isinstance(outs[k], np.ndarray)
        np.testing.assert_allclose(outs[k], np.asarray(ref[k]), rtol=1e-5, atol=1e-5)
    # jax arrays in work as numpy arrays do.
    outs2 = meshrun.run(low, jax.tree_util.tree_map(jnp.asarray, params), jnp.asarray(x))
    np.testing.assert_array_equal(outs2["y"], outs["y"])
    with pytest.raises(meshrun.Error, match="structure"):
        meshrun.run(low, params)


def test_suggest_gives_shardings_jax_takes(lowered):
    f, low, params, x = lowered
    s = meshrun.suggest(low, mesh={"data": 4, "model": 2}, memory_per_device="1G")
    params_sh, x_sh = s.in_shardings
    assert set(params_sh) == {"w1", "w2"}
    assert isinstance(x_sh, NamedSharding)
    g = jax.jit(mlp_step, in_shardings=s.in_shardings)
    got = g(params, x)
    want = f(params, x)
    np.testing.assert_allclose(np.asarray(got["y"]), np.asarray(want["y"]), rtol=1e-5, atol=1e-5)
    # The suggested program runs on meshrun too, and costs what suggest said.
    low2 = g.lower(params, x)
    np.testing.assert_allclose(meshrun.run(low2, params, x, check=True)["y"], np.asarray(want["y"]), rtol=1e-5, atol=1e-5)
    assert meshrun.cost(low2).step_s == pytest.approx(s.step_s, rel=1e-6)
    assert s.step_s <= s.baseline_step_s
    assert s.to_dict()["arguments"][0]["partition_spec"] == s.specs[0]
    assert "suggest" in str(s) or "P(" in str(s)


def test_cost_on_topologies(lowered):
    _, low, _, _ = lowered
    h100 = meshrun.cost(low, topology="h100-nvlink-8")
    pcie = meshrun.cost(low, topology="pcie4-8")
    assert pcie.communication_s > h100.communication_s > 0
    assert h100.step_s == pytest.approx(h100.compute_s + h100.communication_s)
    assert h100.overlapped_step_s == pytest.approx(h100.step_s - h100.hidden_s)
    assert 0 <= h100.hidden_s <= min(h100.compute_s, h100.communication_s) + 1e-15
    topo = json.loads((ROOT / "topologies" / "h100-nvlink-8.json").read_text())
    topo["intra_node"]["bandwidth_gbytes_per_s"] /= 2
    topo["intra_node"]["latency_us"] *= 2
    slow = meshrun.cost(low, topology=topo)
    assert slow.communication_s > h100.communication_s
    assert set(meshrun.topologies()) >= {"h100-nvlink-8", "a100-nvlink-8", "pcie4-8"}


def test_show_draws_the_blocks(lowered):
    _, low, _, _ = lowered
    pictures = meshrun.show(low)
    assert "rows [0:4)" in pictures and "D0" in pictures
    assert repr(pictures) == str(pictures)
    assert pictures._repr_html_().startswith("<pre>")


def cli_error(cli, *args):
    r = subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 1
    line = r.stderr.strip()
    assert line.startswith("error: ") and "\n" not in line, line
    return line[len("error: "):]


def test_bad_input_raises_the_clis_one_line(tmp_path, cli):
    bad = tmp_path / "bad.mlir"
    bad.write_text("module {\n  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n    return %b : tensor<4xf32>\n  }\n}\n")
    with pytest.raises(meshrun.Error) as e:
        meshrun.compile(bad)
    assert str(e.value) == cli_error(cli, "partition", bad, "--json")
    assert isinstance(e.value, ValueError) and "\n" not in str(e.value)

    with pytest.raises(meshrun.Error) as e:
        meshrun.cost(MLP, topology="tpu-v5")
    assert str(e.value) == cli_error(cli, "cost", MLP, "--topology", "tpu-v5")

    missing = tmp_path / "missing.mlir"
    with pytest.raises(meshrun.Error, match="missing.mlir: cannot read"):
        meshrun.compile(missing)
    with pytest.raises(meshrun.Error, match="@main takes 7 inputs, got 1"):
        meshrun.run(MLP, np.zeros((16, 32), np.float32))
    ins = [np.load(p) for p in sorted(MLP.parent.glob("in_*.npy"))]
    ins[1] = ins[1].T.copy()
    with pytest.raises(meshrun.Error, match="input 1: @main takes tensor<32x64xf32>"):
        meshrun.run(MLP, *ins)
    with pytest.raises(meshrun.Error, match="memory_per_device"):
        meshrun.suggest(MLP, memory_per_device="lots")
    with pytest.raises(meshrun.Error, match="'oops' is not AXIS=SIZE|axis"):
        meshrun.suggest(MLP, mesh={"a b": 2})
    with pytest.raises(TypeError):
        meshrun.compile(42)


def test_two_threads_call_meshrun_at_once():
    ins = [np.load(p) for p in sorted(MLP.parent.glob("in_*.npy"))]
    want = meshrun.run(MLP, *ins)
    results = [None, None]
    started = threading.Barrier(2)

    def work(k):
        started.wait()
        results[k] = [meshrun.run(MLP, *ins)[0] for _ in range(3)]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        for out in r:
            np.testing.assert_array_equal(out, want[0])


def test_text_without_jax():
    code = (
        "import sys; sys.modules['jax'] = None\n"
        "import meshrun, numpy as np, pathlib\n"
        f"p = pathlib.Path({str(MLP)!r})\n"
        "plan = meshrun.compile(p.read_text())\n"
        "assert all(isinstance(s, str) for s in plan.argument_shardings), plan.argument_shardings\n"
        "ins = [np.load(x) for x in sorted(p.parent.glob('in_*.npy'))]\n"
        "out = meshrun.run(p, *ins, check=True)\n"
        "assert isinstance(out, list) and out[0].shape == (16, 16)\n"
        "print(plan.bytes_per_device)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert float(r.stdout) == 768.0


def test_host_memory_is_reported_apart():
    plan = meshrun.compile(ROOT / "fixtures" / "jax_0_12" / "host_offload" / "input.mlir")
    assert plan.memory_per_device.host == 1280.0
    c = meshrun.cost(ROOT / "fixtures" / "jax_0_12" / "host_offload" / "input.mlir")
    assert c.host_copy_s > 0


def test_progress_is_drawn_when_asked(capsys):
    s = meshrun.suggest(MLP, progress=True)
    err = capsys.readouterr().err
    assert "meshrun.suggest [" in err and "shardings priced" in err, err
    # The last line is the finished bar.
    last = err.rstrip("\n").split("\r")[-1]
    assert "[" + "#" * 24 + "]" in last, last
    assert s.step_s <= s.baseline_step_s
    meshrun.suggest(MLP, progress=False)
    assert capsys.readouterr().err == ""


def test_cost_says_whether_it_fits():
    donated = ROOT / "tests" / "cost_data" / "donated_step.mlir"
    fits = meshrun.cost(donated, memory_per_device="32K")
    assert fits.fits is True
    assert fits.memory_per_device.aliased == 8192.0
    assert fits.memory_per_device.peak_at.startswith("stablehlo.")
    assert meshrun.cost(donated, memory_per_device=24 * 1024).fits is False
    assert "DOES NOT FIT" in str(meshrun.cost(donated, memory_per_device="24K"))
    assert meshrun.cost(donated).fits is None
