#!/bin/sh
# Runs an aarch64 test program under qemu-aarch64 as one CPU model, with ORT's arm64 library
# seeing an ARM /proc/cpuinfo (cpuinfo_shim.c). LD_LIBRARY_PATH keeps the C library the cross
# sysroot's, the loader's own: a host with Debian's multiarch libc6:arm64 (which arm64 -dev
# packages bring) would otherwise hand the sysroot's ld.so another libc build, and ORT then
# hangs in its start-up.
#
# usage: run-arm64.sh QEMU SYSROOT SHIM MODEL PROGRAM [ARGS...]
#   MODEL: cortex-a72 (no FP16 arithmetic), neoverse-n1 (FP16), max-sve128 / max-sve256 (qemu's
#   every feature, SVE at that vector length)
set -eu
qemu=$1 sysroot=$2 shim=$3 model=$4
shift 4
base="fp asimd evtstrm aes pmull sha1 sha2 crc32"
fp16="$base atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp"
case $model in
  cortex-a72) cpu=cortex-a72 part="0x41 0xd08" features="$base cpuid" ;;
  neoverse-n1) cpu=neoverse-n1 part="0x41 0xd0c" features=$fp16 ;;
  max-sve128|max-sve256) cpu="max,sve${model#max-sve}=on" part="0x41 0xd40"
    features="$fp16 sve" ;;
  *) echo "run-arm64.sh: unknown CPU model $model" >&2; exit 2 ;;
esac
echo "qemu-aarch64 -cpu $cpu: $*"
QEMU_LD_PREFIX=$sysroot QEMU_CPU=$cpu \
QEMU_SET_ENV="LD_PRELOAD=$shim,LD_LIBRARY_PATH=$sysroot/lib,ACTX_EMU_CPU_PART=$part,\
ACTX_EMU_CPU_FEATURES=$features" \
  exec "$qemu" "$@"
