#!/usr/bin/env bash
# The main job (README.md). Installs what is missing, builds, and runs the most
# complete end-to-end demo that exists today (`sluice-demo`: simkv's workload
# through one changefeed's data path into files, checked against the ground
# truth; the full playground — simulated upstream → sluice server → local
# output — replaces it once the server exists).
#   bash scripts/playground.sh [output-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
SLUICE_SKIP_SERVICES=1 bash scripts/install-deps.sh
export CCACHE_BASEDIR="$root"
export CCACHE_NOHASHDIR=true
build_dir=${SLUICE_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build_dir" --target sluice-demo
out=${1:-$(mktemp -d /tmp/sluice-demo.XXXXXX)}
"$build_dir/apps/sluice-demo" --output "$out"
