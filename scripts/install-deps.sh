#!/usr/bin/env bash
# Installs what the build needs when it is missing: Debian packages, ONNX Runtime 1.30.0
# (the C library inside the npm package onnxruntime-node) and, on x86-64, oneDNN 3.2 for the
# bfloat16 service's MatMul / Gemm / Conv (PyPI onednn-cpu-gomp + onednn-devel-cpu-gomp
# 2023.2.0, unpacked, not installed into any Python). Idempotent and quiet when all is there.
#   --onednn-dir FILE   also write oneDNN's directory (lib/, include/) to FILE; an empty file
#                       when there is none (not x86-64): the service then runs without oneDNN
set -euo pipefail

ONEDNN_DIR_FILE=""
while [ $# -gt 0 ]; do
  case "$1" in
    --onednn-dir) ONEDNN_DIR_FILE="$2"; shift 2 ;;
    *) echo "install-deps: unknown option '$1'" >&2; exit 2 ;;
  esac
done

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
# oneDNN from its PyPI wheels (zips: .data/data/lib, .data/data/include), pinned by sha256.
# pip only downloads them, from a throwaway venv (Debian's python3 has no pip of its own); the
# three identical copies of the library in the wheel become one file and two links.
ONEDNN_VERSION=2023.2.0
ONEDNN_DIR="${ACTX_ONEDNN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/actx/onednn-$ONEDNN_VERSION}"
ONEDNN_WHEELS="onednn-cpu-gomp==$ONEDNN_VERSION \
  --hash=sha256:2f22a54d6a890ed14bfa185d42a4be65d8b5b1df85dc1f0f3a9abe31620416fb
onednn-devel-cpu-gomp==$ONEDNN_VERSION \
  --hash=sha256:9763c69e8c907e119056bd52ad918ca84ac9ba939d130a99dfa95ccca3e5e284"
onednn_dir=""
if [ "$(uname -m)" = x86_64 ]; then
  if [ ! -f "$ONEDNN_DIR/lib/libdnnl.so.3" ] || [ ! -f "$ONEDNN_DIR/include/oneapi/dnnl/dnnl.h" ]
  then
    echo "install-deps: installing oneDNN (onednn-cpu-gomp $ONEDNN_VERSION) into $ONEDNN_DIR" >&2
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    python3 -m venv "$tmp/venv"
    echo "$ONEDNN_WHEELS" > "$tmp/requirements.txt"
    "$tmp/venv/bin/python" -m pip download --disable-pip-version-check -q --no-deps \
      --only-binary=:all: --require-hashes -r "$tmp/requirements.txt" -d "$tmp/wheels" >&2
    rm -rf "$ONEDNN_DIR" && mkdir -p "$ONEDNN_DIR/lib"
    "$tmp/venv/bin/python" - "$tmp/wheels" "$ONEDNN_DIR" <<'PY'
import pathlib, shutil, sys, zipfile
wheels, dest = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for wheel in sorted(wheels.glob("*.whl")):
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            parts = name.split("/")
            if len(parts) < 3 or not parts[0].endswith(".data") or parts[1] != "data":
                continue
            rel = "/".join(parts[2:])
            if name.endswith("/") or (rel.startswith("lib/libdnnl.so") and
                                      rel != "lib/libdnnl.so.3"):
                continue
            out = dest / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            with z.open(name) as src, open(out, "wb") as dst:
                shutil.copyfileobj(src, dst)
PY
    ln -sf libdnnl.so.3 "$ONEDNN_DIR/lib/libdnnl.so"
    ln -sf libdnnl.so.3 "$ONEDNN_DIR/lib/libdnnl.so.3.2"
    [ -f "$ONEDNN_DIR/lib/libdnnl.so.3" ] && [ -f "$ONEDNN_DIR/include/oneapi/dnnl/dnnl.h" ] ||
      { echo "install-deps: oneDNN not found in $ONEDNN_DIR after unpacking" >&2; exit 1; }
  fi
  onednn_dir="$ONEDNN_DIR"
fi
[ -z "$ONEDNN_DIR_FILE" ] || echo "$onednn_dir" > "$ONEDNN_DIR_FILE"
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
