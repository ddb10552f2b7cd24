#!/usr/bin/env bash
# Runs one libFuzzer harness for a set time over the committed seed corpus and reports how many
# inputs it executed. New interesting inputs go to the scratch directory, never to the corpus;
# a crash leaves its input there too (crash-<sha1>), to reproduce with `<fuzzer> <that file>`.
#
# usage: run-fuzzer.sh <fuzzer> <seed corpus dir> <scratch dir> <seconds> [libFuzzer flags...]
set -euo pipefail
fuzzer=$1 corpus=$2 scratch=$3 seconds=$4
shift 4
name=$(basename "$fuzzer")
# fuzz_ep, fuzz_ep_bf16(_real): LeakSanitizer at exit rather than after every input. ORT fills caches
# lazily, so libFuzzer would scan ORT's whole heap after most inputs (10x slower); a leak per
# input still piles up and is reported at exit, with its stack.
per_fuzzer=""
case "$name" in fuzz_ep | fuzz_ep_bf16 | fuzz_ep_bf16_real) per_fuzzer="-detect_leaks=0" ;; esac
mkdir -p "$scratch" "$corpus"
log="$scratch.log"
start=$(date +%s)
set +e
"$fuzzer" -max_total_time="$seconds" -timeout=60 -print_final_stats=1 -artifact_prefix="$scratch/" \
  $per_fuzzer "$@" "$scratch" "$corpus" >"$log" 2>&1
rc=$?
set -e
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
peak=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
echo "$name: ${runs:-?} executions in $(( $(date +%s) - start )) s, peak RSS ${peak:-?} MB," \
  "corpus $(ls "$corpus" | wc -l) seeds + $(ls "$scratch" | grep -cv '^crash-\|^leak-\|^timeout-\|^oom-') new (exit $rc)"
if [ "$rc" -ne 0 ]; then
  tail -60 "$log"
  exit "$rc"
fi
