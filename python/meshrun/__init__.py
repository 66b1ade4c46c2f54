"""meshrun from Python: plan, cost, suggest and run a sharded JAX program.

    import jax, meshrun
    lowered = jax.jit(step, in_shardings=...).lower(params, batch)
    plan = meshrun.compile(lowered)        # collectives, bytes, memory, shardings
    c = meshrun.cost(lowered, topology="h100-nvlink-8")
    outs = meshrun.run(lowered, params, batch, check=True)
    s = meshrun.suggest(lowered, mesh={"data": 4, "model": 2})
    jax.jit(step, in_shardings=s.in_shardings)

Every function takes a ``jax.stages.Lowered``, StableHLO text as a ``str``,
or a ``pathlib.Path`` to such text. The work is done by the same Rust code
as the ``meshrun`` CLI (``_meshrun``), with the GIL released; results are
frozen dataclasses whose ``to_dict()`` is the CLI's ``--json`` document.
``jax`` is optional: without it, text goes in and numpy arrays come out.
"""

from __future__ import annotations

import dataclasses
import html
import io
import json
import os
import pathlib
import sys
import threading
import time
from typing import Any, Optional, Sequence, Union

import numpy as np

from . import _meshrun
from ._meshrun import Error, __version__

__all__ = [
    "Error",
    "Collective",
    "CollectiveCost",
    "Memory",
    "Plan",
    "Cost",
    "Suggestion",
    "Pictures",
    "compile",
    "cost",
    "run",
    "suggest",
    "show",
    "topologies",
    "__version__",
]

DEFAULT_TOPOLOGY = "h100-nvlink-8"

Program = Union[str, "os.PathLike[str]", Any]


# --------------------------------------------------------------------------
# Inputs: what a program is, and the optional jax.


def _jax():
    """The jax module, or None when it is not installed."""
    try:
        import jax  # noqa: F401
    except ImportError:
        return None
    return jax


def _source(program: Program) -> tuple[str, str, Any]:
    """(text, the name errors call it by, the Lowered object or None)."""
    if isinstance(program, (pathlib.PurePath, os.PathLike)):
        path = pathlib.Path(program)
        try:
            return path.read_text(), str(path), None
        except OSError as e:
            raise Error(f"{path}: cannot read: {e.strerror or e}") from None
    if isinstance(program, str):
        return program, "<text>", None
    if isinstance(program, bytes):
        return program.decode(), "<text>", None
    as_text = getattr(program, "as_text", None)
    if callable(as_text):
        name = getattr(getattr(program, "_lowering", None), "_name", None) or "lowered"
        return as_text(), f"<{name}>", program
    raise TypeError(
        "meshrun takes a jax Lowered object (jax.jit(f).lower(...)), StableHLO text (str) "
        f"or a pathlib.Path, not {type(program).__name__}"
    )


def _kept_leaves(lowered: Any, n_leaves: int, n_params: int) -> Optional[list[int]]:
    """Which flattened arguments @main takes: jit drops unused ones unless
    lowered with keep_unused=True. None when all are kept."""
    if n_leaves == n_params:
        return None
    kept = None
    lowering = getattr(lowered, "_lowering", None)
    compile_args = getattr(lowering, "compile_args", None)
    if isinstance(compile_args, dict):
        kept = compile_args.get("kept_var_idx")
    if kept is None or len(kept) != n_params:
        raise Error(
            f"the lowered function takes {n_leaves} array arguments but its program has "
            f"{n_params} parameters: lower with jax.jit(f, keep_unused=True)"
        )
    return sorted(kept)


# --------------------------------------------------------------------------
# Progress for long calls.


def _show_progress(progress: Optional[bool]) -> bool:
    """Whether to draw progress: as asked, else when stderr is a terminal
    or the caller is a notebook."""
    if progress is not None:
        return bool(progress)
    try:
        tty = sys.stderr.isatty()
    except (AttributeError, ValueError):
        tty = False
    return tty or "ipykernel" in sys.modules


class _Bar:
    """One line on stderr, rewritten in place: `what [#####-----] detail`."""

    WIDTH = 24

    def __init__(self, what: str, enabled: bool):
        self.what = what
        self.enabled = enabled
        self.start = time.perf_counter()
        self.drawn = False
        self.lock = threading.Lock()

    def draw(self, fraction: Optional[float], detail: str) -> None:
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self.start
        if fraction is None:
            bar = ""
        else:
            n = int(round(max(0.0, min(1.0, fraction)) * self.WIDTH))
            bar = "[" + "#" * n + "-" * (self.WIDTH - n) + "] "
        with self.lock:
            sys.stderr.write(f"\r{self.what} {bar}{detail} · {elapsed:.1f} s\x1b[K")
            sys.stderr.flush()
            self.drawn = True

    def close(self) -> None:
        with self.lock:
            if self.enabled and self.drawn:
                sys.stderr.write("\n")
                sys.stderr.flush()


class _Ticker:
    """Redraw a bar without a known fraction every half second while a
    call runs (shown only once it has taken a second)."""

    def __init__(self, bar: _Bar, detail: str):
        self.bar, self.detail = bar, detail
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        if self.done.wait(1.0):
            return
        while not self.done.is_set():
            self.bar.draw(None, self.detail)
            self.done.wait(0.5)

    def __enter__(self):
        if self.bar.enabled:
            self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        if self.bar.enabled:
            self.thread.join()
        self.bar.close()
        return False


# --------------------------------------------------------------------------
# Results.


def _split_op(op: str) -> tuple[str, str]:
    """'stablehlo.dot_general at 9:10' -> ('stablehlo.dot_general', '9:10')."""
    head, sep, at = op.rpartition(" at ")
    return (head, at) if sep else (op, "")


@dataclasses.dataclass(frozen=True)
class Collective:
    """One communicating collective the partitioner inserted."""

    kind: str
    axes: tuple[str, ...]
    group_size: int
    bytes_per_device: float
    op: str
    location: str
    reason: str
    runs: float = 1.0

    @classmethod
    def _from(cls, d: dict) -> "Collective":
        op, at = _split_op(d["op"])
        groups = d.get("groups") or [[]]
        size = d.get("group_size") or (2 if d["kind"] == "collective-permute" else len(groups[0]))
        return cls(
            kind=d["kind"],
            axes=tuple(a.replace("\"", "") for a in d.get("axes", ())),
            group_size=int(size),
            bytes_per_device=float(d["bytes_per_device"]),
            op=op,
            location=at,
            reason=d.get("reason", ""),
            runs=float(d.get("runs", 1.0)),
        )


@dataclasses.dataclass(frozen=True)
class CollectiveCost(Collective):
    """A collective with its predicted time on a topology."""

    time_s: float = 0.0
    link: str = ""

    @classmethod
    def _from(cls, d: dict) -> "CollectiveCost":
        base = Collective._from(d)
        return cls(
            **dataclasses.asdict(base),
            time_s=float(d.get("time_us", 0.0)) * 1e-6,
            link=d.get("link", ""),
        )


@dataclasses.dataclass(frozen=True)
class Memory:
    """Bytes one device needs: its blocks of the arguments, the peak of the
    values the step holds at once, their total; host memory apart."""

    arguments: float
    peak_live: float
    total: float
    host: float = 0.0
    outputs: float = 0.0
    aliased: float = 0.0
    peak_at: str = ""

    @classmethod
    def _from(cls, d: dict) -> "Memory":
        return cls(
            arguments=float(d["arguments_bytes"]),
            peak_live=float(d["peak_live_bytes"]),
            total=float(d["total_bytes"]),
            host=float(d.get("host_bytes", 0.0)),
            outputs=float(d.get("outputs_bytes", 0.0)),
            aliased=float(d.get("aliased_bytes", 0.0)),
            peak_at=d.get("peak_at") or "",
        )


class Pictures(str):
    """Text for people that a notebook shows as HTML and a REPL as is."""

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(str(self))}</pre>"


class _Document:
    """What every result shares: the JSON document and the table."""

    _doc: dict
    _table: str

    def to_dict(self) -> dict:
        """The CLI's --json document for the same call."""
        return json.loads(json.dumps(self._doc))

    def __str__(self) -> str:
        return self._table

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(self._table)}</pre>"


def _mesh_dict(m: dict) -> dict[str, int]:
    return {a["name"]: int(a["size"]) for a in m["axes"]}


def _named_sharding(sharding: dict, meshes: dict[str, dict], jax, strict: bool = True):
    """A NamedSharding for a sharding of `sharding_json`'s form, or its
    Shardy text when jax is absent or a PartitionSpec cannot say it (and,
    unless `strict`, when jax sees fewer devices than the mesh has)."""
    spec = sharding.get("spec")
    mesh = meshes.get(sharding.get("mesh") or "")
    if jax is None or spec is None or mesh is None:
        return sharding["text"]
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    try:
        jmesh = _jax_mesh(mesh, jax, Mesh)
    except Error:
        if strict:
            raise
        return sharding["text"]
    dims = [None if not d else (d[0] if len(d) == 1 else tuple(d)) for d in spec]
    while dims and dims[-1] is None:
        dims.pop()
    return NamedSharding(jmesh, PartitionSpec(*dims))


def _jax_mesh(mesh: dict, jax, Mesh):
    names = tuple(a["name"] for a in mesh["axes"])
    sizes = tuple(int(a["size"]) for a in mesh["axes"])
    n = int(np.prod(sizes)) if sizes else 1
    devices = jax.devices()
    if len(devices) < n:
        raise Error(
            f"the mesh has {n} devices but jax sees {len(devices)} "
            "(on CPU: XLA_FLAGS=--xla_force_host_platform_device_count=N before importing jax)"
        )
    ids = mesh.get("device_ids") or list(range(n))
    by_id = {d.id: d for d in devices}
    try:
        picked = [by_id[i] for i in ids]
    except KeyError:
        picked = [devices[i] for i in ids]
    return Mesh(np.array(picked, dtype=object).reshape(sizes), names)


@dataclasses.dataclass(frozen=True, repr=False)
class Plan(_Document):
    """What the partitioner makes of a program: its collectives and bytes,
    the memory per device and the shardings propagation chose."""

    mesh: dict
    collectives: tuple
    bytes_per_device: float
    memory_per_device: Memory
    argument_shardings: tuple
    result_shardings: tuple
    num_devices: int
    _doc: dict = dataclasses.field(compare=False)
    _table: str = dataclasses.field(compare=False)

    def __repr__(self) -> str:
        return (
            f"Plan(mesh={self.mesh}, collectives={len(self.collectives)}, "
            f"bytes_per_device={self.bytes_per_device:g}, memory_per_device={self.memory_per_device})"
        )


def _plan_from(doc: dict, lowered: Any) -> Plan:
    table = doc.pop("table")
    jax = _jax()
    meshes = {m["name"]: m for m in doc.get("meshes", [])}
    first = doc["meshes"][0] if doc.get("meshes") else {"axes": []}
    shard = lambda io: _named_sharding(io["sharding"], meshes, jax, strict=False)  # noqa: E731
    return Plan(
        mesh=_mesh_dict(first),
        collectives=tuple(Collective._from(c) for c in doc["collectives"]),
        bytes_per_device=float(doc["total_bytes_per_device"]),
        memory_per_device=Memory._from(doc["memory"]),
        argument_shardings=tuple(shard(a) for a in doc["arguments"]),
        result_shardings=tuple(shard(r) for r in doc["results"]),
        num_devices=int(doc["num_devices"]),
        _doc=doc,
        _table=table,
    )


@dataclasses.dataclass(frozen=True, repr=False)
class Cost(_Document):
    """A program's predicted step on a topology (α-β per collective,
    compute at the topology's peak, host copies on its host link; no
    overlap)."""

    topology: str
    step_s: float
    compute_s: float
    communication_s: float
    host_copy_s: float
    overlapped_step_s: float
    hidden_s: float
    collectives: tuple
    bytes_per_device: float
    memory_per_device: Memory
    fits: Optional[bool]
    _doc: dict = dataclasses.field(compare=False)
    _table: str = dataclasses.field(compare=False)

    def __repr__(self) -> str:
        return (
            f"Cost(topology={self.topology!r}, step_s={self.step_s:.3g}, compute_s={self.compute_s:.3g}, "
            f"communication_s={self.communication_s:.3g}, collectives={len(self.collectives)})"
        )


@dataclasses.dataclass(frozen=True, repr=False)
class Suggestion(_Document):
    """The argument shardings the cost model predicts fastest within the
    memory cap, with why, next to the given ones and the runners-up."""

    in_shardings: Any
    specs: tuple
    mesh: dict
    step_s: float
    memory_per_device: float
    baseline_step_s: float
    reasons: tuple
    alternatives: tuple
    module_text: str
    _doc: dict = dataclasses.field(compare=False)
    _table: str = dataclasses.field(compare=False)

    def __repr__(self) -> str:
        return (
            f"Suggestion(mesh={self.mesh}, specs={list(self.specs)}, step_s={self.step_s:.3g}, "
            f"baseline_step_s={self.baseline_step_s:.3g}, memory_per_device={self.memory_per_device:g})"
        )


# --------------------------------------------------------------------------
# The calls.


def compile(program: Program, *, propagate: bool = True, conservative: bool = False) -> Plan:
    """Propagate shardings and partition: the collectives (kind, axes, bytes
    per device, the op that needs each and why), memory per device, and the
    sharding of every argument and result."""
    text, name, lowered = _source(program)
    doc = json.loads(_meshrun.compile(text, name, propagate, conservative))
    return _plan_from(doc, lowered)


def _topology_args(topology: Any) -> tuple[str, Optional[str]]:
    if isinstance(topology, dict):
        return "<dict>", json.dumps(topology)
    if isinstance(topology, os.PathLike):
        return os.fspath(topology), None
    if isinstance(topology, str):
        return topology, None
    raise TypeError("topology: a built-in name, a JSON path or a dict")


def cost(
    program: Program,
    topology: Any = DEFAULT_TOPOLOGY,
    *,
    peak_tflops: Optional[float] = None,
    memory_per_device: Any = None,
) -> Cost:
    """Predict the step on `topology` (a built-in name, see `topologies()`,
    a topology JSON path, or a dict of that JSON). With `memory_per_device`
    (bytes, or '80G'), `fits` says whether the step fits in it."""
    text, name, _ = _source(program)
    topo, topo_json = _topology_args(topology)
    doc = json.loads(
        _meshrun.cost(text, name, topo, peak_tflops, topo_json, _memory_arg(memory_per_device))
    )
    table = doc.pop("table")
    return Cost(
        topology=doc["topology"],
        step_s=doc["step_us"] * 1e-6,
        compute_s=doc["compute"]["time_us"] * 1e-6,
        communication_s=doc["communication_us"] * 1e-6,
        host_copy_s=doc.get("host_copies", {}).get("time_us", 0.0) * 1e-6,
        overlapped_step_s=doc["overlap"]["step_us"] * 1e-6,
        hidden_s=doc["overlap"]["hidden_us"] * 1e-6,
        collectives=tuple(CollectiveCost._from(c) for c in doc["collectives"]),
        bytes_per_device=float(doc["total_bytes_per_device"]),
        memory_per_device=Memory._from(doc["memory"]),
        fits=doc["memory_cap"]["fits"] if "memory_cap" in doc else None,
        _doc=doc,
        _table=table,
    )


def _to_npy(x: Any, k: int) -> bytes:
    a = np.asarray(x)
    if a.dtype == object:
        raise Error(f"input {k}: not an array of numbers")
    buf = io.BytesIO()
    # (np.ascontiguousarray would make a 0-d array 1-d.)
    np.save(buf, np.require(a, requirements="C"), allow_pickle=False)
    return buf.getvalue()


def _from_npy(b: bytes) -> np.ndarray:
    a = np.load(io.BytesIO(b), allow_pickle=False)
    if a.dtype == np.dtype("V2"):
        # meshrun writes bf16 as 2-byte void, as numpy saves ml_dtypes.bfloat16.
        try:
            import ml_dtypes

            a = a.view(ml_dtypes.bfloat16)
        except ImportError:
            pass
    return a


def run(
    program: Program,
    *args: Any,
    check: bool = False,
    rtol: Optional[float] = None,
    repeat: int = 1,
    conservative: bool = False,
    progress: Optional[bool] = None,
    **kwargs: Any,
):
    """Run on simulated CPU devices, one per mesh device.

    Arguments are given as jit took them (numpy or jax arrays, pytrees);
    outputs come back as numpy arrays in jit's output structure (a list for
    text programs). `check=True` also runs the program unsharded and raises
    `meshrun.Error` when an output differs beyond tolerance. `progress`:
    show the time spent on stderr (default: when it is a terminal, or in a
    notebook).
    """
    text, name, lowered = _source(program)
    jax = _jax()
    if lowered is not None and jax is not None:
        leaves, tree = jax.tree_util.tree_flatten((args, kwargs))
        in_tree = getattr(lowered, "in_tree", None)
        if in_tree is not None and tree != in_tree:
            raise Error(
                f"the arguments do not have the structure the function was lowered with: "
                f"{tree} vs {in_tree}"
            )
        n_params = len(json.loads(_meshrun.signature(text, name))["arguments"])
        kept = _kept_leaves(lowered, len(leaves), n_params)
        if kept is not None:
            leaves = [leaves[i] for i in kept]
    else:
        if kwargs:
            raise TypeError("keyword arguments need a jax Lowered program")
        leaves = list(args)
    inputs = [_to_npy(x, k) for k, x in enumerate(leaves)]
    bar = _Bar("meshrun.run", _show_progress(progress))
    with _Ticker(bar, "running" + (" and checking" if check else "")):
        outs, report = _meshrun.run(text, name, inputs, check, rtol, repeat, conservative)
    arrays = [_from_npy(b) for b in outs]
    out_tree = getattr(lowered, "out_tree", None) if lowered is not None else None
    if out_tree is not None and jax is not None:
        return jax.tree_util.tree_unflatten(out_tree, arrays)
    return arrays


def _memory_arg(memory: Any) -> Optional[str]:
    if memory is None:
        return None
    if isinstance(memory, (int, float)) and not isinstance(memory, bool):
        return str(int(memory))
    if isinstance(memory, str):
        return memory
    raise TypeError("memory_per_device: bytes as a number, or a string like '80G'")


def suggest(
    program: Program,
    mesh: Optional[dict] = None,
    memory_per_device: Any = None,
    topology: Any = DEFAULT_TOPOLOGY,
    *,
    keep_given: bool = False,
    top: int = 3,
    progress: Optional[bool] = None,
) -> Suggestion:
    """The argument shardings the cost model predicts fastest on `topology`
    within `memory_per_device` (bytes, or '80G'), over `mesh` (axes major to
    minor, e.g. {"data": 4, "model": 2}; default the program's mesh).
    `progress`: draw the search's rounds on stderr (default: when it is a
    terminal, or in a notebook)."""
    text, name, lowered = _source(program)
    topo, topo_json = _topology_args(topology)
    mesh_arg = None
    if mesh is not None:
        mesh_arg = ",".join(f"{k}={int(v)}" for k, v in mesh.items())
    bar = _Bar("meshrun.suggest", _show_progress(progress))

    def tell(step: int, steps: int, evaluated: int) -> None:
        bar.draw(step / steps if steps else 1.0, f"round {step}/{steps}, {evaluated} shardings priced")

    try:
        doc = json.loads(
            _meshrun.suggest(
                text,
                name,
                topo,
                mesh_arg,
                _memory_arg(memory_per_device),
                keep_given,
                top,
                topo_json,
                tell if bar.enabled else None,
            )
        )
    finally:
        bar.close()
    table = doc.pop("table")
    module_text = doc.pop("module")
    jax = _jax()
    meshes = {doc["mesh"]["name"]: doc["mesh"]}
    shardings = [
        _named_sharding(
            {"spec": a.get("spec"), "mesh": doc["mesh"]["name"], "text": a["sharding"]}, meshes, jax
        )
        for a in doc["arguments"]
    ]
    in_shardings: Any = tuple(shardings)
    if lowered is not None and jax is not None and getattr(lowered, "in_tree", None) is not None:
        n_leaves = lowered.in_tree.num_leaves
        kept = _kept_leaves(lowered, n_leaves, len(shardings))
        if kept is not None:
            from jax.sharding import Mesh, NamedSharding, PartitionSpec

            replicated = NamedSharding(_jax_mesh(doc["mesh"], jax, Mesh), PartitionSpec())
            full = [replicated] * n_leaves
            for i, s in zip(kept, shardings):
                full[i] = s
            shardings = full
        args_tree, _kwargs = jax.tree_util.tree_unflatten(lowered.in_tree, shardings)
        in_shardings = args_tree
    return Suggestion(
        in_shardings=in_shardings,
        specs=tuple(a["partition_spec"] for a in doc["arguments"]),
        mesh=_mesh_dict(doc["mesh"]),
        step_s=doc["predicted_step_us"] * 1e-6,
        memory_per_device=float(doc["memory_per_device_bytes"]),
        baseline_step_s=doc["baseline"]["predicted_step_us"] * 1e-6,
        reasons=tuple(a.get("why", "") for a in doc["arguments"]),
        alternatives=tuple(doc.get("alternatives", ())),
        module_text=module_text,
        _doc=doc,
        _table=table,
    )


def show(program: Program, *, all: bool = False, propagated: bool = True) -> Pictures:
    """The sharding of every argument and result (every op result with
    all=True) drawn as the blocks each device holds."""
    text, name, _ = _source(program)
    return Pictures(_meshrun.show(text, name, all, propagated))


def topologies() -> list[str]:
    """The built-in topologies `cost` and `suggest` know by name."""
    return list(_meshrun.topologies())
