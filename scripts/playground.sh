#!/usr/bin/env bash
# The main job (README.md). Installs what is missing, builds, and runs
# `sluice playground`: simkv's TiDB-like workload (in-process, three stores,
# DDLs and faults) -> a sluice node -> a changefeed created through
# `sluice cli` into canal-json files (or the MySQL URI given), with live
# progress, then the checker's verdict against simkv's ground truth.
#   bash scripts/playground.sh [output-dir] [sink-uri]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
SLUICE_SKIP_SERVICES=1 bash scripts/install-deps.sh
export CCACHE_BASEDIR="$root"
export CCACHE_NOHASHDIR=true
build_dir=${SLUICE_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build_dir" --target sluice
out=${1:-$(mktemp -d /tmp/sluice-playground.XXXXXX)}
args=(--output "$out")
if [[ $# -ge 2 ]]; then args+=(--sink-uri "$2"); fi
"$build_dir/apps/sluice" playground "${args[@]}"
