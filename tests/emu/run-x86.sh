#!/usr/bin/env bash
# Runs one test program under qemu-x86_64 with an AVX2-class CPU (AVX2 + FMA3 + F16C, no
# AVX-512), so that ORT 1.30's MLAS takes its FMA3 kernels and libactx its AVX2 path on any
# x86-64 host, AVX-512 hosts included: ORT's own AVX2-class results are then the oracle.
#
# usage: run-x86.sh QEMU CPU ACTX_CLI PROGRAM [ARGS...]
#   QEMU: the qemu-x86_64 binary ("" or missing: the test prints that it skipped and passes);
#   CPU: qemu's -cpu value; ACTX_CLI: the `actx` tool, run first under the same CPU to check
#   that libactx sees the AVX2 class (ISA avx2, ORT rule avx2) before anything is compared.
set -uo pipefail

if [ $# -lt 4 ] || [ -z "$2" ]; then
  echo "usage: $0 QEMU CPU ACTX_CLI PROGRAM [ARGS...]" >&2
  exit 2
fi
qemu=$1 cpu=$2 actx_cli=$3
shift 3

if [ "$(uname -m)" != x86_64 ]; then
  echo "skipped: not an x86-64 host ($(uname -m)); the AVX2 class is proved on x86-64"
  exit 0
fi
if [ -z "$qemu" ] || [ ! -x "$qemu" ]; then
  echo "skipped: qemu-x86_64 is not installed (Debian: qemu-user; scripts/install-deps.sh)"
  exit 0
fi
if ! "$qemu" /bin/true >/dev/null 2>&1; then
  echo "skipped: $qemu cannot run a program on this machine"
  exit 0
fi
if ! err=$("$qemu" -cpu "$cpu" /bin/true 2>&1); then
  echo "FAIL: $qemu does not run -cpu $cpu: $err"
  exit 1
fi

# What libactx detects from the emulated CPU's cpuid, without a forced ISA or rule.
seen=$(env -u ACTX_ISA -u ACTX_ORT_RULE "$qemu" -cpu "$cpu" "$actx_cli" version 2>&1)
case "$seen" in
  *"ISA avx2, ORT rule avx2"*) ;;
  *)
    echo "FAIL: under qemu -cpu $cpu, libactx does not see the AVX2 class: $seen"
    exit 1
    ;;
esac
echo "qemu-x86_64 -cpu $cpu: $seen"
exec "$qemu" -cpu "$cpu" "$@"
