#!/usr/bin/env bash
# The test command (README.md): installs what is missing, configures, builds
# the libraries, binaries and tests under ASan+UBSan, starts the services the
# tests need and runs the CTest suite (everything not labelled `long`),
# scenarios included. Benchmarks are left out (SLUICE_BENCH=ON adds them):
# their sources are checked by scripts/clang-build.sh, and their figures
# come from Release builds.
#   bash scripts/test.sh                              # ASan+UBSan in build-asan/
#   SLUICE_BUILD_TYPE=Release bash scripts/test.sh    # Release in build/
# Extra arguments are passed to ctest (e.g. -L codec).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

bash scripts/install-deps.sh

build_type=${SLUICE_BUILD_TYPE:-asan}
if [[ "$build_type" == Release ]]; then default_dir=build; else default_dir=build-$build_type; fi
build_dir=${SLUICE_BUILD_DIR:-$default_dir}
export CCACHE_BASEDIR="$root"
export CCACHE_NOHASHDIR=true

cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" \
  -DSLUICE_BENCH="${SLUICE_BENCH:-OFF}" ${SLUICE_CMAKE_ARGS:-}
cmake --build "$build_dir"

source scripts/sanitizer-env.sh

# Services the tests need (etcd, MariaDB) are started and stopped by
# scripts/services.sh; the tests find them through SLUICE_TEST_* variables.
# The MySQL sink tests need MariaDB; SLUICE_SERVICES= (empty) starts nothing.
export SLUICE_SERVICES=${SLUICE_SERVICES-mariadb etcd}
source scripts/services.sh
services_start
trap services_stop EXIT

cd "$build_dir"
ctest --output-on-failure -LE long -j "$(nproc)" "$@"
