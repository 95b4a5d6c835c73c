#!/usr/bin/env bash
# The test command (README.md): installs what is missing, configures, builds
# and runs the CTest suite (everything not labelled `long`).
#   bash scripts/test.sh            # Release build in build/
#   SLUICE_BUILD_TYPE=Debug bash scripts/test.sh
# Extra arguments are passed to ctest (e.g. -L codec).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

bash scripts/install-deps.sh

build_type=${SLUICE_BUILD_TYPE:-Release}
build_dir=${SLUICE_BUILD_DIR:-build}
export CCACHE_BASEDIR="$root"
export CCACHE_NOHASHDIR=true

cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" ${SLUICE_CMAKE_ARGS:-}
cmake --build "$build_dir"

# Services the tests need (etcd, MariaDB) are started and stopped by
# scripts/services.sh; the tests find them through SLUICE_TEST_* variables.
# The MySQL sink tests need MariaDB; SLUICE_SERVICES= (empty) starts nothing.
export SLUICE_SERVICES=${SLUICE_SERVICES-mariadb}
source scripts/services.sh
services_start
trap services_stop EXIT

cd "$build_dir"
ctest --output-on-failure -LE long -j "$(nproc)" "$@"
