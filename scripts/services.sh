# Sourced by the test scripts: starts the real services the tests talk to, on
# loopback, in a private directory, and stops them again.
#   services_start   # starts what SLUICE_SERVICES lists (default: none needed yet)
#   services_stop
# Each service exports the variables its tests read; tests that need a service
# that is not running skip with a message naming the variable.

SLUICE_SERVICES=${SLUICE_SERVICES:-}
_services_dir=""
_services_pids=()

services_start() {
  [[ -z "$SLUICE_SERVICES" ]] && return 0
  _services_dir=$(mktemp -d /tmp/sluice-services.XXXXXX)
  local s
  for s in $SLUICE_SERVICES; do
    case "$s" in
      etcd)
        etcd --data-dir "$_services_dir/etcd" \
          --listen-client-urls http://127.0.0.1:23790 \
          --advertise-client-urls http://127.0.0.1:23790 \
          --listen-peer-urls http://127.0.0.1:23800 >"$_services_dir/etcd.log" 2>&1 &
        _services_pids+=($!)
        export SLUICE_TEST_ETCD=127.0.0.1:23790
        ;;
      *)
        echo "services: unknown service $s" >&2
        return 1
        ;;
    esac
  done
}

services_stop() {
  local p
  for p in "${_services_pids[@]:-}"; do
    [[ -n "$p" ]] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
  done
  _services_pids=()
  [[ -n "$_services_dir" ]] && rm -rf "$_services_dir"
  return 0
}
