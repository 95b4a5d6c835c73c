#!/usr/bin/env bash
# Builds unit tests under a sanitizer and runs them.
#   bash scripts/sanitize.sh tsan   # ThreadSanitizer: the tests of the libraries that own threads
#   bash scripts/sanitize.sh asan   # AddressSanitizer + UndefinedBehaviorSanitizer: every unit test
# The test command (scripts/test.sh) already builds everything under
# ASan+UBSan and runs every test, scenarios included; `asan` here reruns only
# the unit tests in the same build.
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?usage: sanitize.sh asan|tsan}
export CCACHE_BASEDIR="$(pwd)"
export CCACHE_NOHASHDIR=true
dir=build-$kind

# TSan finds races, so it runs the tests of the data path's libraries that
# start threads and hand work between them: queues and thread groups, the
# message center and its gRPC transport, the puller's pipeline and workers,
# the event store's writers, the event service, the dispatchers and their
# managers, the metastore (etcd watch readers, the embedded lease thread),
# the MySQL sink's workers and the maintainer. Libraries of pure functions (codecs,
# config, filter, checker, CLI, API routing) are left to ASan+UBSan, and so,
# to keep a cold CI run within its time, are the storage sink, the
# coordinator, the PD client, simkv and the whole-node server
# test (run them here by adding their tests to the list).
TSAN_TESTS=(common_test messaging_test grpc_transport_test
  logpuller_core_test logpuller_test logpuller_bad_input_test logpuller_scan_yield_test
  logpuller_persist_failure_test eventstore_test eventservice_test dispatcher_test
  dispatchermanager_test mysql_sink_unit_test maintainer_test meta_test etcd_store_test)

case "$kind" in
  asan)
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=asan
    cmake --build "$dir"
    filter=(-LE 'long|scenario')
    ;;
  tsan)
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=tsan -DSLUICE_BENCH=OFF
    cmake --build "$dir" --target "${TSAN_TESTS[@]}"
    filter=(-R "^($(IFS='|'; echo "${TSAN_TESTS[*]}"))\$" -LE 'long|scenario')
    ;;
  *) echo "unknown sanitizer $kind" >&2; exit 2 ;;
esac

source scripts/sanitizer-env.sh
# The sink tests write to a real MariaDB (scripts/services.sh).
export SLUICE_SERVICES=${SLUICE_SERVICES-mariadb etcd}
source scripts/services.sh
services_start
trap services_stop EXIT
cd "$dir"
ctest --output-on-failure "${filter[@]}" -j "$(nproc)"
