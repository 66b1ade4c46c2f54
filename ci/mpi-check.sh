#!/usr/bin/env bash
# The MPI part of CI: the MPI backend (cargo feature `mpi`) built, linted
# and run under a real mpirun, 8 ranks on CI's 2 cores (oversubscribed).
#
# 1. installs Open MPI and libclang (for the bindings) when missing;
# 2. lints the MPI code (clippy, -D warnings);
# 3. runs the MPI tests: runtime/tests/mpi_backend.rs (every JAX fixture
#    and 60 generated differential programs through the MPI backend,
#    bitwise equal to the CPU backend; a failing rank ends the job with its
#    message), runtime/tests/mpi_local_inputs.rs, tests/mpi_cli.rs and the
#    MPI unit tests;
# 4. runs `meshrun run --backend mpi --check` on the MLP fixtures and two
#    loop fixtures (fori_loop, a data-dependent while), the command line
#    users type (see README, "Running on several machines");
# 5. runs `meshrun bench-comm --backend mpi` under mpirun -np 8: rank 0
#    prints one table with every op, every result checked (a wrong one
#    fails the command). On CI's oversubscribed cores the times are
#    latency-bound: this checks the path, not the network.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== MPI: install (only what is missing)"
need=()
command -v mpirun >/dev/null 2>&1 || need+=(openmpi-bin)
dpkg -s libopenmpi-dev >/dev/null 2>&1 || need+=(libopenmpi-dev)
dpkg -s libclang-dev >/dev/null 2>&1 || need+=(libclang-dev)
if ((${#need[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
mpirun --version | head -1

# CI runs as root; Open MPI refuses that unless told, and containers forbid
# the cross-memory-attach copy it tries first.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none

echo "== MPI: lint"
cargo clippy -p meshrun-runtime -p meshrun --all-targets --release --features mpi -- -D warnings

echo "== MPI: tests"
cargo test -p meshrun-runtime --release --features mpi --lib mpi::
cargo test -p meshrun-runtime --release --features mpi --test mpi_backend --test mpi_local_inputs
cargo test -p meshrun --release --features mpi --test mpi_cli

echo "== MPI: meshrun run --backend mpi --check on the MLP and loop fixtures (mpirun -np 8)"
# The binary with the feature, as the mpi_cli test just built it (a plain
# `cargo build` would rebuild dependencies with other features).
for d in fixtures/jax/mlp_forward fixtures/jax/mlp_train_step fixtures/jax/mlp_seed \
  fixtures/jax_regions/fori_matmul fixtures/jax_regions/while_data_dependent; do
  mpirun --oversubscribe -np 8 "${CARGO_TARGET_DIR:-target}/release/meshrun" run "$d/input.mlir" \
    --backend mpi --inputs "$d"/in_*.npy --check
done

echo "== MPI: meshrun bench-comm --backend mpi (mpirun -np 8)"
out=$(mpirun --oversubscribe -np 8 "${CARGO_TARGET_DIR:-target}/release/meshrun" bench-comm \
  --backend mpi --devices 8 --min-bytes 1K --max-bytes 64K --iters 5 --warmup 2)
echo "$out"
# One table (rank 0 prints), all five ops, no wrong result.
[ "$(grep -c '^# meshrun bench-comm' <<<"$out")" -eq 1 ]
for op in all-gather all-reduce reduce-scatter all-to-all collective-permute; do
  grep -q " $op " <<<"$out"
done
! grep -q WRONG <<<"$out"
