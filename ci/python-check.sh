#!/usr/bin/env bash
# The Python package (python/): build the abi3 wheel with maturin, install
# it into a fresh virtual environment with jax, and run its pytest tests
# against the CLI built by the tests (target/release/meshrun). The wheel's
# build compiles the dependencies again: it resolves features for the
# python crate alone (about 4 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
VENV=${MESHRUN_PY_VENV:-target/py-venv}
"$PY" --version
rm -rf "$VENV"
"$PY" -m venv "$VENV"
"$VENV/bin/pip" install --quiet --upgrade pip
# jax 0.10.2 is the newest for Python 3.11 (0.11+ needs 3.12).
"$VENV/bin/pip" install --quiet "maturin>=1.5,<2" pytest numpy "jax<0.13"
"$VENV/bin/python" -c "import jax; print('jax', jax.__version__)"
rm -rf target/wheels
(cd python && "../$VENV/bin/maturin" build --release --out ../target/wheels)
"$VENV/bin/pip" install --quiet target/wheels/meshrun-*.whl
# The tests compare with the CLI; `cargo test --release` has built it.
[ -x target/release/meshrun ] || cargo build --release --bin meshrun
MESHRUN_BIN="$PWD/target/release/meshrun" "$VENV/bin/python" -m pytest -q python/tests
