#!/usr/bin/env bash
# The README's test command: every test of the workspace, in release mode
# (the runtime tests execute real sharded programs; debug builds are ~20x
# slower at that).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --release "$@"
