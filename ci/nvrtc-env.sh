# Source this file (`. ci/nvrtc-env.sh`): installs NVRTC and the CUDA
# headers from PyPI, once, into $MESHRUN_NVRTC_DIR (default
# ~/.cache/meshrun/nvrtc-<version>), and exports what the CUDA kernel
# tests need: LD_LIBRARY_PATH (cudarc loads libnvrtc.so.12 at run time),
# MESHRUN_CUDA_INCLUDE (cuda_fp16.h / cuda_bf16.h, from the
# nvidia-cuda-runtime wheel) and MESHRUN_NVRTC_REQUIRED=1 (a missing NVRTC
# fails the tests instead of skipping them). No GPU or driver is needed.
#
# The version is pinned: 12.4 compiles cubins for sm_80 and sm_90 and its
# wheel is the smallest of 12.x (~25 MB; 12.8 is ~90 MB). The runtime
# compiles to cubin (SASS) for the GPU it finds, so the driver never
# JIT-compiles PTX newer than itself; any 12.x driver (>= 525) loads them.

MESHRUN_NVRTC_VERSION="${MESHRUN_NVRTC_VERSION:-12.4.127}"
MESHRUN_NVRTC_DIR="${MESHRUN_NVRTC_DIR:-$HOME/.cache/meshrun/nvrtc-$MESHRUN_NVRTC_VERSION}"

if [ ! -e "$MESHRUN_NVRTC_DIR/nvidia/cuda_nvrtc/lib/libnvrtc.so.12" ] ||
   [ ! -e "$MESHRUN_NVRTC_DIR/nvidia/cuda_runtime/include/cuda_fp16.h" ]; then
  echo "installing NVRTC $MESHRUN_NVRTC_VERSION and the CUDA headers into $MESHRUN_NVRTC_DIR"
  if python3 -m pip --version >/dev/null 2>&1; then
    _meshrun_pip="python3 -m pip"
  elif command -v pip3 >/dev/null 2>&1; then
    _meshrun_pip="pip3"
  else
    echo "error: pip is needed to install NVRTC (apt-get install python3-pip)" >&2
    return 1 2>/dev/null || exit 1
  fi
  $_meshrun_pip install --quiet --disable-pip-version-check --no-deps \
    --target "$MESHRUN_NVRTC_DIR" \
    "nvidia-cuda-nvrtc-cu12==$MESHRUN_NVRTC_VERSION" \
    "nvidia-cuda-runtime-cu12==$MESHRUN_NVRTC_VERSION" || {
    echo "error: could not install NVRTC from PyPI" >&2
    return 1 2>/dev/null || exit 1
  }
  unset _meshrun_pip
fi

export LD_LIBRARY_PATH="$MESHRUN_NVRTC_DIR/nvidia/cuda_nvrtc/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MESHRUN_CUDA_INCLUDE="${MESHRUN_CUDA_INCLUDE:-$MESHRUN_NVRTC_DIR/nvidia/cuda_runtime/include}"
export MESHRUN_NVRTC_REQUIRED=1
