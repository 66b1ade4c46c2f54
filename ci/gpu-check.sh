#!/usr/bin/env bash
# Everything about the CUDA backend that needs a real GPU, in one command,
# on a machine with an NVIDIA driver and at least one GPU:
#
#   bash ci/gpu-check.sh
#
# 1. builds meshrun (release);
# 2. `meshrun doctor --compile-kernels` (driver, GPUs, NVRTC, cuBLAS, NCCL;
#    every kernel compiled for sm_80, sm_90 and the local GPUs);
# 3. the backend differential suite with its CUDA instances required
#    (runtime/tests/cuda_backend.rs: every op, the local instructions,
#    every collective over every route, every fixture);
# 4. every JAX fixture with `meshrun run --check --backend cuda`;
# 5. the MLP (forward and training step) on 8 mesh devices, on all GPUs and
#    again squeezed onto 2 and 1 GPU (shared GPUs: local and staged
#    collectives);
# 6. `meshrun bench-comm --backend cuda`, if that command exists;
# 7. with mpirun and at least 8 GPUs: the MLP fixtures under
#    `mpirun -np 8 meshrun run --backend cuda --check` (one GPU per rank,
#    NCCL bootstrapped over MPI; built with --features mpi);
# and prints a summary. Exit code 1 if any step failed.
#
# NVRTC and the CUDA headers come from the CUDA toolkit when CUDA_HOME or
# /usr/local/cuda has them, else from PyPI (ci/nvrtc-env.sh). cuBLAS and
# NCCL must be loadable (toolkit, or `pip install nvidia-cublas-cu12
# nvidia-nccl-cu12` with their lib directories on LD_LIBRARY_PATH).
set -uo pipefail
cd "$(dirname "$0")/.."

if [ -z "${MESHRUN_CUDA_INCLUDE:-}" ] && [ ! -e "${CUDA_HOME:-/usr/local/cuda}/include/cuda_fp16.h" ]; then
  . ci/nvrtc-env.sh || exit 1
fi
export MESHRUN_REQUIRE_GPU=1

results=()
failed=0
step() {
  local name="$1"
  shift
  echo
  echo "== $name"
  local start=$SECONDS
  if "$@"; then
    results+=("ok    $name ($((SECONDS - start)) s)")
  else
    results+=("FAIL  $name ($((SECONDS - start)) s)")
    failed=1
  fi
}

meshrun=target/release/meshrun

step "build (release)" cargo build --release --bins
step "doctor --compile-kernels" "$meshrun" doctor --compile-kernels
step "differential suite (CUDA instances)" \
  cargo test --release -p meshrun-runtime --test cuda_backend -- --nocapture cuda

fixtures() {
  local bad=0 n=0
  for dir in fixtures/jax/*/; do
    [ -e "$dir/input.mlir" ] || continue
    n=$((n + 1))
    if ! "$meshrun" run "$dir/input.mlir" --backend cuda --random-inputs 7 --check >/dev/null 2>"/tmp/meshrun-gpu-check.err"; then
      echo "FAIL $dir: $(tail -1 /tmp/meshrun-gpu-check.err)"
      bad=$((bad + 1))
    fi
  done
  echo "$((n - bad)) of $n fixtures match the unsharded reference on the GPU"
  [ "$bad" -eq 0 ] && [ "$n" -gt 0 ]
}
step "every fixture: run --check --backend cuda" fixtures

# The MLP (forward pass and training step, data=4 x model=2 mesh), on every
# GPU and squeezed onto 2 and 1 GPUs (mesh devices sharing GPUs: local and
# staged collectives).
for mlp in mlp_forward mlp_train_step; do
  for gpus in all 2 1; do
    if [ "$gpus" = all ]; then limit=(); else limit=(env "MESHRUN_CUDA_GPUS=$gpus"); fi
    step "$mlp on 8 mesh devices, $gpus GPU(s)" \
      ${limit[@]+"${limit[@]}"} "$meshrun" run "fixtures/jax/$mlp/input.mlir" --backend cuda \
      --random-inputs 1 --check --repeat 5
  done
done

if "$meshrun" --help | grep -q "bench-comm"; then
  step "bench-comm --backend cuda" "$meshrun" bench-comm --backend cuda
else
  results+=("skip  bench-comm (no such command in this build)")
fi

gpu_count=$(nvidia-smi -L 2>/dev/null | wc -l)
if command -v mpirun >/dev/null 2>&1 && [ "$gpu_count" -ge 8 ]; then
  step "build with --features mpi" cargo build --release --features mpi --bins
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  for mlp in mlp_forward mlp_train_step mlp_seed; do
    d="fixtures/jax/$mlp"
    step "$mlp under mpirun -np 8 --backend cuda" \
      mpirun --oversubscribe -np 8 "$meshrun" run "$d/input.mlir" --backend cuda \
      --inputs "$d"/in_*.npy --check
  done
else
  results+=("skip  mpirun -np 8 --backend cuda (needs mpirun and 8 GPUs; this machine: $gpu_count GPU(s))")
fi

echo
echo "== summary"
"$meshrun" doctor | sed -n '/GPUs/,/NCCL/p'
printf '%s\n' "${results[@]}"
exit "$failed"
