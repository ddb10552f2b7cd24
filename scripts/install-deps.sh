#!/usr/bin/env bash
# Installs what the build needs when it is missing: Debian packages and ONNX Runtime 1.30.0
# (the C library inside the npm package onnxruntime-node). Idempotent and quiet when all is there.
set -euo pipefail

ORT_VERSION=1.30.0
ORT_DIR="${ACTX_ORT_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/actx/onnxruntime-$ORT_VERSION}"
# The package holds both Linux builds; an ARM host takes the arm64 one.
ORT_ARCH=x64
[ "$(uname -m)" = aarch64 ] && ORT_ARCH=arm64
ORT_LIB="$ORT_DIR/node_modules/onnxruntime-node/bin/napi-v6/linux/$ORT_ARCH/libonnxruntime.so.1"

PACKAGES="cmake make gcc clang libclang-rt-14-dev pkg-config libonnx-dev libonnx-testdata
  protobuf-c-compiler libprotobuf-c-dev libsleef-dev lcov gnuplot-nox valgrind
  python3 python3-venv"

missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
command -v npm >/dev/null 2>&1 || missing="$missing npm"
if [ -n "$missing" ]; then
  echo "install-deps: installing Debian packages:$missing" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

if [ ! -f "$ORT_LIB" ]; then
  echo "install-deps: installing onnxruntime-node@$ORT_VERSION into $ORT_DIR" >&2
  mkdir -p "$ORT_DIR"
  (cd "$ORT_DIR" && npm install --ignore-scripts --no-audit --no-fund --silent "onnxruntime-node@$ORT_VERSION" >/dev/null)
  [ -f "$ORT_LIB" ] || { echo "install-deps: $ORT_LIB not found after npm install" >&2; exit 1; }
fi
# Emulation / cross: the arm64 build and its tests under qemu-aarch64 (tests/emu). Optional: where
# a package cannot be had the step says so and the emu_arm64 tests skip. protobuf-c's arm64
# library comes from Debian's multiarch archive (the model builder links it statically).
ARM64_PACKAGES="qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross"
host_arch=$(dpkg --print-architecture 2>/dev/null || true)
if [ "$host_arch" = amd64 ] && [ "${ACTX_NO_EMULATION:-0}" != 1 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  arm64_missing=""
  for p in $ARM64_PACKAGES libprotobuf-c-dev:arm64; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      arm64_missing="$arm64_missing $p"
  done
  if [ -n "$arm64_missing" ]; then
    echo "install-deps: installing emulation / cross packages:$arm64_missing" >&2
    if ! { dpkg --print-foreign-architectures | grep -qx arm64 ||
           $SUDO dpkg --add-architecture arm64; } ||
       ! $SUDO apt-get update -qq ||
       ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
           $arm64_missing >/dev/null; then
      echo "install-deps: emulation / cross packages unavailable; the emu_arm64 tests will skip" >&2
    fi
  fi
fi

# The one line the Makefile reads: where libonnxruntime.so.1 lives.
dirname "$ORT_LIB"
