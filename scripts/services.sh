# Sourced by the test scripts: starts the real services the tests talk to, on
# loopback, in a private directory, and stops them again.
#   services_start   # starts what SLUICE_SERVICES lists ("mariadb", "etcd", ...)
#   services_stop
# Each service exports the variables its tests read; tests that need a service
# that is not running skip with a message naming the variable.
#
#   etcd     SLUICE_TEST_ETCD=127.0.0.1:<port>  (port 23790, or the next free
#            one; SLUICE_ETCD_PORT overrides)
#   mariadb  SLUICE_TEST_MYSQL=mysql://root@127.0.0.1:<port>/  (port 33060, or
#            the next free one; SLUICE_MARIADB_PORT overrides)

SLUICE_SERVICES=${SLUICE_SERVICES:-}
_services_dir=""
_services_pids=()
_services_mariadb_sock=""

# True if something listens on 127.0.0.1:$1.
_services_port_busy() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Starts a private mariadbd (root without password, loopback only) with its
# data directory and socket under $1, and waits until it answers. Tries the
# next port when another process takes the one it picked. The InnoDB buffer
# pool and redo log are small for tests; SLUICE_MARIADB_BUFFER_POOL and
# SLUICE_MARIADB_LOG_FILE (mariadbd sizes, e.g. 1G) override them, as the
# benchmarks do so that their data fits in memory.
services_start_mariadb() {
  local dir=$1
  local mariadbd=${SLUICE_MARIADBD:-/usr/sbin/mariadbd}
  if [[ ! -x "$mariadbd" ]] || ! command -v mariadb-install-db >/dev/null; then
    echo "services: mariadb is not installed (scripts/install-deps.sh)" >&2
    return 1
  fi
  mkdir -p "$dir/data"
  local user_args=()
  if [[ $(id -u) == 0 ]]; then user_args=(--user=root); fi
  if ! mariadb-install-db --no-defaults --auth-root-authentication-method=normal \
      --skip-test-db "${user_args[@]}" --datadir="$dir/data" >"$dir/install.log" 2>&1; then
    echo "services: mariadb-install-db failed, see $dir/install.log" >&2
    cat "$dir/install.log" >&2
    return 1
  fi
  _services_mariadb_sock="$dir/mariadb.sock"
  local port=${SLUICE_MARIADB_PORT:-33060}
  local attempt i pid
  for ((attempt = 0; attempt < 20; attempt++, port++)); do
    if _services_port_busy "$port"; then continue; fi
    "$mariadbd" --no-defaults "${user_args[@]}" --datadir="$dir/data" \
      --bind-address=127.0.0.1 --port="$port" --socket="$_services_mariadb_sock" \
      --pid-file="$dir/mariadb.pid" --log-error="$dir/mariadb.err" \
      --skip-name-resolve --innodb-buffer-pool-size="${SLUICE_MARIADB_BUFFER_POOL:-64M}" \
      --innodb-log-file-size="${SLUICE_MARIADB_LOG_FILE:-48M}" \
      --max-connections=500 --max-allowed-packet=64M >"$dir/mariadb.out" 2>&1 &
    pid=$!
    for ((i = 0; i < 300; i++)); do
      if mariadb-admin --no-defaults --protocol=socket --socket="$_services_mariadb_sock" \
          -uroot ping >/dev/null 2>&1; then
        _services_pids+=("$pid")
        export SLUICE_TEST_MYSQL="mysql://root@127.0.0.1:$port/"
        return 0
      fi
      if ! kill -0 "$pid" 2>/dev/null; then break; fi
      sleep 0.1
    done
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    # Lost the port to someone else: try the next one.
    if ! grep -q "Address already in use" "$dir/mariadb.err" 2>/dev/null; then break; fi
    : >"$dir/mariadb.err"
  done
  _services_mariadb_sock=""
  echo "services: mariadb did not start, see $dir/mariadb.err" >&2
  tail -n 30 "$dir/mariadb.err" >&2 || true
  return 1
}

# Starts a private single-member etcd (Debian's etcd-server) with its data
# under $1, on the first free client/peer port pair from 23790/23800
# (SLUICE_ETCD_PORT overrides), and waits until it answers. Short raft ticks
# keep etcd's minimum lease TTL at one second, so lease tests stay short.
services_start_etcd() {
  local dir=$1
  if ! command -v etcd >/dev/null; then
    echo "services: etcd is not installed (scripts/install-deps.sh)" >&2
    return 1
  fi
  mkdir -p "$dir"
  local port=${SLUICE_ETCD_PORT:-23790}
  local attempt i pid
  for ((attempt = 0; attempt < 20; attempt++, port += 2)); do
    if _services_port_busy "$port" || _services_port_busy $((port + 10)); then continue; fi
    etcd --name sluice-test --data-dir "$dir/data" \
      --listen-client-urls "http://127.0.0.1:$port" \
      --advertise-client-urls "http://127.0.0.1:$port" \
      --listen-peer-urls "http://127.0.0.1:$((port + 10))" \
      --initial-advertise-peer-urls "http://127.0.0.1:$((port + 10))" \
      --initial-cluster "sluice-test=http://127.0.0.1:$((port + 10))" \
      --heartbeat-interval 50 --election-timeout 500 >"$dir/etcd.log" 2>&1 &
    pid=$!
    for ((i = 0; i < 200; i++)); do
      if ETCDCTL_API=3 etcdctl --endpoints "127.0.0.1:$port" endpoint health >/dev/null 2>&1; then
        _services_pids+=("$pid")
        export SLUICE_TEST_ETCD="127.0.0.1:$port"
        return 0
      fi
      if ! kill -0 "$pid" 2>/dev/null; then break; fi
      sleep 0.1
    done
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    if ! grep -q "address already in use" "$dir/etcd.log" 2>/dev/null; then break; fi
    rm -rf "$dir/data"
  done
  echo "services: etcd did not start, see $dir/etcd.log" >&2
  tail -n 30 "$dir/etcd.log" >&2 || true
  return 1
}

# Asks mariadbd to shut down (flushes InnoDB); the caller waits for the pid.
services_stop_mariadb() {
  if [[ -z "$_services_mariadb_sock" ]]; then return 0; fi
  mariadb-admin --no-defaults --protocol=socket --socket="$_services_mariadb_sock" \
    -uroot shutdown >/dev/null 2>&1 || true
  _services_mariadb_sock=""
}

services_start() {
  if [[ -z "$SLUICE_SERVICES" ]]; then return 0; fi
  _services_dir=$(mktemp -d /tmp/sluice-services.XXXXXX)
  local s
  for s in $SLUICE_SERVICES; do
    case "$s" in
      etcd)
        services_start_etcd "$_services_dir/etcd" || return 1
        ;;
      mariadb)
        services_start_mariadb "$_services_dir/mariadb" || return 1
        ;;
      *)
        echo "services: unknown service $s" >&2
        return 1
        ;;
    esac
  done
}

# Safe under `set -e`: nothing here fails the caller.
services_stop() {
  services_stop_mariadb
  local p
  for p in "${_services_pids[@]:-}"; do
    if [[ -n "$p" ]]; then
      kill "$p" 2>/dev/null || true
      wait "$p" 2>/dev/null || true
    fi
  done
  _services_pids=()
  if [[ -n "$_services_dir" ]]; then
    rm -rf "$_services_dir"
  fi
  _services_dir=""
  return 0
}
