"""Shared setup: 8 CPU devices for jax (set before jax is imported), the
repository's fixtures, and the meshrun CLI the package is compared with."""

import os
import pathlib
import subprocess

import pytest

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

ROOT = pathlib.Path(__file__).resolve().parents[2]


def fixture_dirs():
    """Every exported JAX program with its inputs and JAX's outputs."""
    dirs = []
    for folder in sorted((ROOT / "fixtures").iterdir()):
        if not folder.is_dir():
            continue
        for d in sorted(folder.iterdir()):
            if (d / "input.mlir").is_file() and (d / "in_0.npy").is_file():
                dirs.append(d)
    return dirs


@pytest.fixture(scope="session")
def cli():
    """The meshrun CLI of this checkout (MESHRUN_BIN, else target/release,
    built if missing)."""
    path = pathlib.Path(os.environ.get("MESHRUN_BIN", ROOT / "target" / "release" / "meshrun"))
    if not path.is_file():
        subprocess.run(["cargo", "build", "--release", "--bin", "meshrun"], cwd=ROOT, check=True)
    return path
