#!/bin/sh
# Configures (first time) and builds the aarch64 tree the emu_arm64 tests run: only TARGETS.
# usage: build-arm64.sh CMAKE SOURCE_DIR BUILD_DIR ORT_ARM64_LIB_DIR TARGET...
set -eu
cmake=$1 src=$2 dir=$3 ort=$4
shift 4
"$cmake" -S "$src" -B "$dir" -DCMAKE_TOOLCHAIN_FILE="$src/cmake/aarch64-linux-gnu.cmake" \
  -DACTX_ORT_LIB_DIR="$ort" >/dev/null
"$cmake" --build "$dir" -j 2 --target "$@" >/dev/null
echo "built for aarch64 in $dir: $*"
