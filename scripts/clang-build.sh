#!/usr/bin/env bash
# The clang build: compiles every library and test with clang and
# -Wthread-safety -Werror (lock annotations are checked), builds the
# libFuzzer targets with coverage, and runs each fuzzer for a bounded time.
#   bash scripts/clang-build.sh              # build + fuzz 20 s per target
#   SLUICE_FUZZ_SECONDS=300 bash scripts/clang-build.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export CCACHE_BASEDIR="$root"
export CCACHE_NOHASHDIR=true
dir=build-clang
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" -DCMAKE_C_FLAGS_DEBUG="-g -O1" \
  -DSLUICE_FUZZ=ON -DSLUICE_BENCH=OFF
cmake --build "$dir"

seconds=${SLUICE_FUZZ_SECONDS:-20}
export ASAN_OPTIONS=detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for fuzzer in "$dir"/fuzz/fuzz_*; do
  [[ -x "$fuzzer" ]] || continue
  name=$(basename "$fuzzer")
  corpus="$dir/fuzz/corpus-$name"
  mkdir -p "$corpus"
  seeds="fuzz/seeds/$name"
  echo "fuzz: $name for ${seconds}s"
  args=("$corpus")
  [[ -d "$seeds" ]] && args+=("$seeds")
  "$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$dir/fuzz/$name-" "${args[@]}" 2>&1 | tail -n 12
done
