#!/usr/bin/env bash
# Installs what the build needs when it is missing: Debian packages and ONNX Runtime 1.30.0
# (the C library inside the npm package onnxruntime-node). Idempotent and quiet when all is there.
set -euo pipefail

ORT_VERSION=1.30.0
ORT_DIR="${ACTX_ORT_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/actx/onnxruntime-$ORT_VERSION}"
ORT_LIB="$ORT_DIR/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"

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

# qemu-x86_64 (Debian's qemu-user), for the emu_x86_* tests: the AVX2 class emulated on any
# x86-64 host (tests/emu/x86.cmake). Optional: where it cannot be installed they say skipped.
if [ "$(uname -m)" = x86_64 ] && ! command -v qemu-x86_64 >/dev/null 2>&1; then
  echo "install-deps: installing qemu-user (emulated AVX2-class tests)" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
      qemu-user >/dev/null; } ||
    echo "install-deps: qemu-user not installed; the emu_x86_* tests will skip" >&2
fi

if [ ! -f "$ORT_LIB" ]; then
  echo "install-deps: installing onnxruntime-node@$ORT_VERSION into $ORT_DIR" >&2
  mkdir -p "$ORT_DIR"
  (cd "$ORT_DIR" && npm install --ignore-scripts --no-audit --no-fund --silent "onnxruntime-node@$ORT_VERSION" >/dev/null)
  [ -f "$ORT_LIB" ] || { echo "install-deps: $ORT_LIB not found after npm install" >&2; exit 1; }
fi
# The one line the Makefile reads: where libonnxruntime.so.1 lives.
dirname "$ORT_LIB"
