#!/usr/bin/env bash
# What only clang gives, in two parts:
#  1. Lock annotations: every source of the libraries, binaries and
#     benchmarks (the code that ships or measures it; tests and their fakes
#     are left out) is compiled by clang with -Wthread-safety -Werror and the
#     project's warnings, front end only (-fsyntax-only): the analysis needs
#     no code generation, so this costs a fraction of a build.
#  2. Fuzzing: the libFuzzer targets are built (with the libraries they link,
#     instrumented for coverage and ASan+UBSan) and each runs for a bounded
#     time.
#   bash scripts/clang-build.sh              # both; fuzz 20 s per target
#   SLUICE_FUZZ_SECONDS=300 bash scripts/clang-build.sh
#   bash scripts/clang-build.sh --analysis   # part 1 only
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export CCACHE_BASEDIR="$root"
export CCACHE_NOHASHDIR=true
clang_args=(-G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)

# 1. Front end only. Objects are not written, so only object steps (and the
# code generation they wait for) are asked of ninja; nothing links.
dir=build-clang
cmake -S . -B "$dir" "${clang_args[@]}" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="" \
  -DSLUICE_SYNTAX_ONLY=ON >/dev/null
mapfile -t objects < <(ninja -C "$dir" -t targets all | sed -nE 's/^([^:]+\.o): .*/\1/p' |
  grep -vE '(_test|_testing)\.dir/|^tests/')
if [[ ${#objects[@]} -eq 0 ]]; then
  echo "clang: no translation units found in $dir" >&2
  exit 1
fi
echo "clang: thread-safety analysis of ${#objects[@]} translation units"
# -k 0: every unit is analysed and every finding reported before failing.
ninja -C "$dir" -k 0 "${objects[@]}"
echo "clang: thread-safety analysis clean"
[[ "${1:-}" == --analysis ]] && exit 0

# 2. The fuzz targets and what they link.
dir=build-fuzz
cmake -S . -B "$dir" "${clang_args[@]}" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1" -DCMAKE_C_FLAGS_DEBUG="-O1" \
  -DSLUICE_FUZZ=ON -DSLUICE_BENCH=OFF >/dev/null
mapfile -t fuzzers < <(ninja -C "$dir" -t targets all | sed -nE 's/^(fuzz\/fuzz_[a-z_]+): .*/\1/p' | sort -u)
if [[ ${#fuzzers[@]} -eq 0 ]]; then
  echo "clang: no fuzz targets found in $dir" >&2
  exit 1
fi
ninja -C "$dir" "${fuzzers[@]}"

seconds=${SLUICE_FUZZ_SECONDS:-20}
export ASAN_OPTIONS=detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for fuzzer in "${fuzzers[@]}"; do
  fuzzer="$dir/$fuzzer"
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
