#!/usr/bin/env bash
# Builds the unit tests under a sanitizer and runs them.
#   bash scripts/sanitize.sh asan   # AddressSanitizer + UndefinedBehaviorSanitizer
#   bash scripts/sanitize.sh tsan   # ThreadSanitizer
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?usage: sanitize.sh asan|tsan}
case "$kind" in asan|tsan) ;; *) echo "unknown sanitizer $kind" >&2; exit 2 ;; esac
export CCACHE_BASEDIR="$(pwd)"
export CCACHE_NOHASHDIR=true
dir=build-$kind
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$kind" -DSLUICE_BENCH=OFF
cmake --build "$dir"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$(pwd)/scripts/tsan.supp"
# The sink tests write to a real MariaDB (scripts/services.sh).
export SLUICE_SERVICES=${SLUICE_SERVICES-mariadb}
source scripts/services.sh
services_start
trap services_stop EXIT
cd "$dir"
ctest --output-on-failure -LE 'long|scenario' -j "$(nproc)"
