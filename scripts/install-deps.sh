#!/usr/bin/env bash
# Installs every Debian package Sluice needs to build, test and run.
# Idempotent: packages already present are skipped, and apt-get runs only when
# something is missing. Must run as root (or with sudo available).
set -euo pipefail

# Build toolchain.
BUILD_PKGS=(build-essential cmake ninja-build pkg-config ccache git python3
  clang clang-format clang-tidy libclang-rt-14-dev)
# Libraries (docs/architecture.md, "Libraries").
LIB_PKGS=(libgrpc++-dev libabsl-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  librocksdb-dev libspdlog-dev libfmt-dev nlohmann-json3-dev
  libtomlplusplus-dev libcli11-dev libcpp-httplib-dev libmariadb-dev
  librdkafka-dev libgtest-dev libgmock-dev libbenchmark-dev
  libzstd-dev liblz4-dev libsnappy-dev zlib1g-dev libbz2-dev libjemalloc-dev)
# Real services the tests start on loopback.
SERVICE_PKGS=(etcd-server etcd-client mariadb-server mariadb-client)

want=("${BUILD_PKGS[@]}" "${LIB_PKGS[@]}")
if [[ "${SLUICE_SKIP_SERVICES:-0}" != 1 ]]; then
  want+=("${SERVICE_PKGS[@]}")
fi

missing=()
for p in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#want[@]} packages present"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# Services must not be started by the package scripts; tests start their own.
$SUDO sh -c 'printf "#!/bin/sh\nexit 101\n" > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d'
trap '$SUDO rm -f /usr/sbin/policy-rc.d' EXIT
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
