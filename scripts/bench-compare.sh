#!/usr/bin/env bash
# bench-compare.sh — does this change make actx slower? Builds a base revision in a git worktree
# kept beside its build, then times the base build's and the current build's `actx` on the same
# scenarios in one job, runs interleaved, with a null arm (the current build again) whose spread
# sets each scenario's noise threshold. See docs/health.md for the method.
#
#   scripts/bench-compare.sh [--base REV] [--quick] [--rounds N] [--current-build DIR]
#                            [--out DIR] [--no-confirm] [--no-fail]
#   scripts/bench-compare.sh --self-test
#
# Exit status: 0 (also when there is nothing to compare: no base revision, or a base without the
# actx tool; and a base without the EP library skips the session suite), 1 when a regression of
# at least FAIL_FACTOR x the threshold is confirmed by a re-run of those scenarios (unless
# --no-fail), 2 on a usage error or when the current build's benchmarks fail, 3 when the base's
# own build fails a suite it has (printed as "BASE FAILED <suite>"; the other suites are still
# compared).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
SCRIPTS="$ROOT/scripts"

BASE_REV=${BASE:-HEAD~1}
CURRENT_BUILD=${BUILD:-build}
OUT=${BENCH_COMPARE_OUT:-results/bench-compare}
BASE_BUILDS=${BENCH_COMPARE_BASE_BUILDS:-build-bench-base}
JOBS=${JOBS:-$(nproc)}
QUICK=0
ROUNDS=""
CONFIRM=1
FAIL_ON_REGRESSION=1
# A change under 1% is never flagged, however quiet the machine.
FLOOR=0.01
# A regression fails the run only at FAIL_FACTOR x its threshold and FAIL_MIN or more, twice
# (first pass + re-run). Below FAIL_MIN a shift can come from code placement alone.
FAIL_FACTOR=2
FAIL_MIN=0.05
# The re-run that confirms a regression never uses fewer rounds than this.
CONFIRM_ROUNDS_MIN=5

usage() {
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
}

die_usage() {
  echo "bench-compare: $1 (see --help)" >&2
  exit 2
}

# Whether a tool's `ab` has an option. Its help is read whole first: with pipefail, `grep -q`
# leaving the pipe early turned the tool's SIGPIPE into "no such option", and both arms then
# ran the creation and real-model sections (the base's failing for a tree it no longer had).
ab_has_option() {
  local help
  help=$("$1" ab --help 2>/dev/null) || true
  grep -q -- "$2" <<< "$help"
}

# ---- what is measured -----------------------------------------------------------------------
# Kernel micro-benchmarks (`actx bench kernels`): ns per element, one scenario per
# op x dtype x size x libactx arm. Session A/B (`actx ab`): ns per Run of ORT + the actx EP, one
# scenario per case x dtype x size x threads. The selection options of each suite are kept apart
# from the others so a confirming re-run can narrow the selection to the flagged scenarios.
KERNEL_OPS_ALL="erf,gelu,gelu_tanh,bias_gelu,fast_gelu(bias),quick_gelu,tanh,sigmoid"
set_scenarios() {
  if [ "$QUICK" = 1 ]; then
    # CI's: about 3 minutes on 2 cores, plus the base build.
    KERNEL_SELECT=(--ops "$KERNEL_OPS_ALL" --dtypes f32,f16 --sizes 3072,262144)
    KERNEL_COMMON=(--reps 5 --batch-ms 1 --no-ort)
    KERNEL_ARMS="avx2_1t"
    AB_SELECT=(--ops Gelu,ms.BiasGelu,ms.FastGelu,Sigmoid --dtypes f32,f16 --sizes 16384,1048576
               --threads 1,2)
    AB_COMMON=(--reps 7 --warmup 1 --batch-ms 1 --no-chart)
  else
    # Every kernel scenario and `actx ab --quick`'s subset of the sessions: about 25 minutes.
    KERNEL_SELECT=()
    KERNEL_COMMON=(--reps 7 --no-ort)
    KERNEL_ARMS="avx2_1t avx2_2t portable_1t"
    AB_SELECT=()
    AB_COMMON=(--quick --no-chart)
  fi
  # Five rounds: with three, identical code is flagged several times as often (docs/health.md).
  : "${ROUNDS:=5}"
}

# ---- self-test of the statistics (bench-compare.awk) on made-up runs ------------------------
self_test() {
  local dir out
  dir=$(mktemp -d -t bench-compare-test.XXXXXX)
  # One line per run: suite op dtype elements variant arm round value.
  {
    # 30% slower, null runs within 2%: a regression.
    for r in 1 2 3; do
      printf 'kernels\tgelu\tf32\t1024\tavx2_1t\tbase\t%d\t%s\n' $r "1.00"
      printf 'kernels\tgelu\tf32\t1024\tavx2_1t\tcurrent\t%d\t%s\n' $r "1.3$r"
      printf 'kernels\tgelu\tf32\t1024\tavx2_1t\tnull\t%d\t%s\n' $r "1.3$((r - 1))"
    done
    # 5% slower but identical code spans 20%: within noise.
    for r in 1 2 3; do
      printf 'kernels\ttanh\tf32\t1024\tavx2_1t\tbase\t%d\t%s\n' $r "1.00"
      printf 'kernels\ttanh\tf32\t1024\tavx2_1t\tcurrent\t%d\t%s\n' $r "1.0$((r * 2 + 1))"
      printf 'kernels\ttanh\tf32\t1024\tavx2_1t\tnull\t%d\t%s\n' $r "$(echo "0.95 1.05 1.14" | cut -d' ' -f$r)"
    done
    # 20% faster, null within 3%: faster.
    for r in 1 2 3; do
      printf 'ab\tGelu\tf16\t16384\t1t\tbase\t%d\t%s\n' $r "1000$r"
      printf 'ab\tGelu\tf16\t16384\t1t\tcurrent\t%d\t%s\n' $r "800$r"
      printf 'ab\tGelu\tf16\t16384\t1t\tnull\t%d\t%s\n' $r "82$r$r"
    done
    # 15% slower, noise 10%: slower but under 2x the threshold, so not a regression.
    for r in 1 2 3; do
      printf 'ab\tSigmoid\tf32\t512\t1t\tbase\t%d\t%s\n' $r "100"
      printf 'ab\tSigmoid\tf32\t512\t1t\tcurrent\t%d\t%s\n' $r "$(echo "115 110 120" | cut -d' ' -f$r)"
      printf 'ab\tSigmoid\tf32\t512\t1t\tnull\t%d\t%s\n' $r "$(echo "116 113 121" | cut -d' ' -f$r)"
    done
    # 0.5% slower with perfectly quiet runs: the 1% floor keeps it within noise.
    for r in 1 2 3; do
      printf 'kernels\terf\tf16\t3072\tavx2_1t\tbase\t%d\t%s\n' $r "2.000"
      printf 'kernels\terf\tf16\t3072\tavx2_1t\tcurrent\t%d\t%s\n' $r "2.010"
      printf 'kernels\terf\tf16\t3072\tavx2_1t\tnull\t%d\t%s\n' $r "2.010"
    done
    # 3% slower with quiet runs: past 2x the 1% floor, but under the 5% a regression needs.
    for r in 1 2 3; do
      printf 'kernels\tgelu\tf16\t1024\tavx2_1t\tbase\t%d\t%s\n' $r "1.000"
      printf 'kernels\tgelu\tf16\t1024\tavx2_1t\tcurrent\t%d\t%s\n' $r "1.030"
      printf 'kernels\tgelu\tf16\t1024\tavx2_1t\tnull\t%d\t%s\n' $r "1.031"
    done
    # Only in the current build; an empty value (arm did not run) is skipped.
    printf 'kernels\tsigmoid\tbf16\t512\tavx2_1t\tcurrent\t1\t0.5\n'
    printf 'kernels\tsigmoid\tbf16\t512\tavx2_1t\tnull\t1\t0.5\n'
    printf 'kernels\tsigmoid\tbf16\t512\tavx2_1t\tbase\t1\t\n'
  } > "$dir/runs.tsv"
  : > "$dir/candidates"
  awk -v floor="$FLOOR" -v fail_factor="$FAIL_FACTOR" -v fail_min="$FAIL_MIN" \
      -v csv="$dir/table.csv" -v candidates="$dir/candidates" -f "$SCRIPTS/bench-compare.awk" "$dir/runs.tsv" \
      > "$dir/table.txt"
  local expect=(
    "kernels,gelu,f32,1024,avx2_1t,SLOWER (>= 2x threshold and >= 5%)"
    "kernels,gelu,f16,1024,avx2_1t,slower"
    "kernels,tanh,f32,1024,avx2_1t,within noise"
    "ab,Gelu,f16,16384,1t,faster"
    "ab,Sigmoid,f32,512,1t,slower"
    "kernels,erf,f16,3072,avx2_1t,within noise"
    "kernels,sigmoid,bf16,512,avx2_1t,new (not in base)"
  )
  local failures=0 e got
  for e in "${expect[@]}"; do
    got=$(awk -F, -v k="$(echo "$e" | cut -d, -f1-5)" '$1","$2","$3","$4","$5 == k { print $1","$2","$3","$4","$5","$12 }' \
          "$dir/table.csv")
    if [ "$got" != "$e" ]; then
      echo "bench-compare self-test: expected '$e', got '${got:-nothing}'" >&2
      failures=$((failures + 1))
    fi
  done
  # Exactly the regression is a candidate for the confirming re-run.
  if [ "$(cat "$dir/candidates")" != "$(printf 'kernels\tgelu\tf32\t1024\tavx2_1t')" ]; then
    echo "bench-compare self-test: candidates were '$(cat "$dir/candidates")'" >&2
    failures=$((failures + 1))
  fi
  # The threshold is the spread of the identical-code runs: 1.33 / 1.30 - 1.
  if ! grep -q '^kernels,gelu,f32,1024,avx2_1t,ns/elem,1,1.32,0.32000,-0.00758,0.02308,' \
       "$dir/table.csv"; then
    echo "bench-compare self-test: wrong statistics for the regression:" >&2
    grep '^kernels,gelu' "$dir/table.csv" >&2 || true
    failures=$((failures + 1))
  fi
  # Malformed input is refused, not read as zeros.
  if printf 'kernels\tgelu\n' | awk -f "$SCRIPTS/bench-compare.awk" >/dev/null 2>&1; then
    echo "bench-compare self-test: a 2-field line was accepted" >&2
    failures=$((failures + 1))
  fi
  # The CSV reader: quoted commas, doubled quotes, a quoted newline; a missing column is an error.
  got=$(printf 'a,b,c\n1,"x,""y""\nz",3\n' | awk -v cols=c,b -f "$SCRIPTS/csv-columns.awk")
  if [ "$got" != "$(printf '3\tx,"y" z')" ]; then
    echo "bench-compare self-test: csv-columns.awk read '$got'" >&2
    failures=$((failures + 1))
  fi
  if printf 'a,b\n1,2\n' | awk -v cols=q -f "$SCRIPTS/csv-columns.awk" >/dev/null 2>&1; then
    echo "bench-compare self-test: csv-columns.awk accepted a missing column" >&2
    failures=$((failures + 1))
  fi
  # Option detection, with a help long enough that the reader leaves the pipe early.
  printf '#!/bin/sh\necho "  --no-creation  skip"\nyes "  --more  help" | head -n 20000\n' \
    > "$dir/tool"
  chmod +x "$dir/tool"
  if ! ab_has_option "$dir/tool" --no-creation || ab_has_option "$dir/tool" --no-models; then
    echo "bench-compare self-test: ab_has_option misread the tool's help" >&2
    failures=$((failures + 1))
  fi
  rm -rf "$dir"
  if [ "$failures" -ne 0 ]; then
    echo "bench-compare self-test: $failures failure(s)" >&2
    return 1
  fi
  echo "bench-compare self-test: passed"
}

# ---- options --------------------------------------------------------------------------------
while [ $# -gt 0 ]; do
  case "$1" in
    --base) [ $# -ge 2 ] || die_usage "--base needs a revision"; BASE_REV=$2; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --rounds)
      [ $# -ge 2 ] || die_usage "--rounds needs a number"
      [[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -ge 3 ] && [ "$2" -le 7 ] ||
        die_usage "--rounds must be 3..7, not '$2'"
      ROUNDS=$2; shift 2 ;;
    --current-build) [ $# -ge 2 ] || die_usage "--current-build needs a directory"; CURRENT_BUILD=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || die_usage "--out needs a directory"; OUT=$2; shift 2 ;;
    --no-confirm) CONFIRM=0; shift ;;
    --no-fail) FAIL_ON_REGRESSION=0; shift ;;
    --self-test) self_test; exit $? ;;
    -h|--help) usage; exit 0 ;;
    *) die_usage "unknown option '$1'" ;;
  esac
done
set_scenarios

START=$(date +%s)
CURRENT_BIN="$CURRENT_BUILD/bin/actx"
[ -x "$CURRENT_BIN" ] || die_usage "no $CURRENT_BIN: build the current tree first (make build)"
CURRENT_BIN=$(cd "$(dirname "$CURRENT_BIN")" && pwd)/actx

# ---- the base build -------------------------------------------------------------------------
if ! base_sha=$(git rev-parse --verify -q "$BASE_REV^{commit}" 2>/dev/null); then
  echo "bench-compare: base revision '$BASE_REV' does not exist here (first commit, or a shallow" \
       "clone): nothing to compare"
  exit 0
fi
base_short=$(git rev-parse --short "$base_sha")
mkdir -p "$BASE_BUILDS"
BASE_BUILDS=$(cd "$BASE_BUILDS" && pwd)
BASE_BUILD="$BASE_BUILDS/$base_sha"
# The base's sources stay beside its build for as long as the build is kept: its tool reads
# files of its own tree by the path it was built with (actx ab's model manifest, say), and a
# base whose tree had been removed failed for want of them, which is no fault of the base.
BASE_SRC="$BASE_BUILDS/$base_sha-src"
remove_base() {
  git worktree remove --force "$1-src" >/dev/null 2>&1 || true
  rm -rf "$1" "$1-src"
  git worktree prune >/dev/null 2>&1 || true
}

if [ -x "$BASE_BUILD/bin/actx" ] && [ -d "$BASE_SRC" ]; then
  echo "bench-compare: base $base_short ($BASE_REV): reusing its build in $BASE_BUILD"
else
  echo "bench-compare: base $base_short ($BASE_REV): building from a worktree in $BASE_SRC"
  if [ -f "$CURRENT_BUILD/ort-lib-dir.txt" ]; then
    ort_dir=$(cat "$CURRENT_BUILD/ort-lib-dir.txt")
  else
    ort_dir=$(scripts/install-deps.sh)
  fi
  # Older base builds (and their trees) are of no further use; keep only this one.
  for old in "$BASE_BUILDS"/*; do
    case "$old" in
      "$BASE_BUILD"|"$BASE_SRC"|*.log) ;;
      *-src) remove_base "${old%-src}" ;;
      *) [ -d "$old" ] && remove_base "$old" ;;
    esac
  done
  # A build left half-done by an interrupted run, or one whose tree is gone: from scratch.
  remove_base "$BASE_BUILD"
  git worktree add --detach -q "$BASE_SRC" "$base_sha"
  log="$BASE_BUILDS/build-$base_short.log"
  t0=$(date +%s)
  # Only the tool and the EP it loads (a base may predate the EP: then `ab` is skipped).
  if ! { cmake -S "$BASE_SRC" -B "$BASE_BUILD" -DACTX_ORT_LIB_DIR="$ort_dir" &&
         cmake --build "$BASE_BUILD" -j "$JOBS" --target actx_cli &&
         { cmake --build "$BASE_BUILD" -j "$JOBS" --target actx_ep || true; }; } > "$log" 2>&1 ||
     [ ! -x "$BASE_BUILD/bin/actx" ]; then
    echo "bench-compare: the base has no actx tool, or it does not build (last lines of $log):"
    tail -n 5 "$log" | sed 's/^/  /'
    echo "bench-compare: nothing to compare"
    remove_base "$BASE_BUILD"
    exit 0
  fi
  echo "bench-compare: base built in $(( $(date +%s) - t0 )) s"
fi
BASE_BIN=$(cd "$BASE_BUILD/bin" && pwd)/actx

# ---- measuring ------------------------------------------------------------------------------
rm -rf "$OUT"
mkdir -p "$OUT/raw"
RUNS="$OUT/raw/runs.tsv"
: > "$RUNS"
# SUITE_OFF: suites not compared; BASE_FAILED: those because the base's own build failed them.
declare -A SUITE_OFF=() BASE_FAILED=()
# A base that predates the EP has nothing for `actx ab` to load: not compared, not a failure.
if [ ! -e "$BASE_BUILD/lib/libactx_ep.so" ]; then
  echo "bench-compare: the base has no EP library ($BASE_BUILD/lib/libactx_ep.so): ab not compared"
  SUITE_OFF[ab]=1
fi


# Runs one suite with one arm's binary, appends its scenarios to the runs file (format: see
# bench-compare.awk). $1 suite, $2 arm, $3 round, $4 runs file, rest: options for the tool.
run_suite() {
  local suite=$1 arm=$2 round=$3 runs=$4
  shift 4
  local bin=$CURRENT_BIN dir rc t0
  if [ "$arm" = base ]; then
    bin=$BASE_BIN
  fi
  dir="$OUT/raw/$suite-$arm-$round"
  mkdir -p "$dir"
  t0=$(date +%s)
  rc=0
  case "$suite" in
    kernels) "$bin" bench kernels "$@" --out "$dir" > "$dir/stdout" 2> "$dir/stderr" || rc=$? ;;
    ab)
      # only ab.csv's Run() times are compared: the session-creation and real-model sections,
      # where the tool has them, would add seconds to minutes to every round
      local skip=()
      if ab_has_option "$bin" --no-creation; then
        skip=(--no-creation)
      fi
      if ab_has_option "$bin" --no-models; then
        skip+=(--no-models)
      fi
      "$bin" ab "$@" "${skip[@]}" --out "$dir" > "$dir/stdout" 2> "$dir/stderr" || rc=$? ;;
  esac
  printf '  round %s  %-8s %-7s %3d s\n' "$round" "$suite" "$arm" "$(( $(date +%s) - t0 ))"
  if [ "$rc" -ne 0 ]; then
    echo "bench-compare: $arm's actx failed on $suite (exit $rc):"
    tail -n 3 "$dir/stderr" | sed 's/^/  /'
    return 1
  fi
  case "$suite" in
    kernels)
      local a
      for a in $KERNEL_ARMS; do
        awk -v cols="op,dtype,elements,${a}_median_ns_per_elem" -f "$SCRIPTS/csv-columns.awk" \
            "$dir/kernels.csv" |
          awk -F'\t' -v OFS='\t' -v v="$a" -v arm="$arm" -v r="$round" \
              '{ print "kernels", $1, $2, $3, v, arm, r, $4 }' >> "$runs" ||
          { echo "bench-compare: cannot read $dir/kernels.csv ($arm)"; return 1; }
      done ;;
    ab)
      awk -v cols=case,dtype,elements,threads,actx_median_ns -f "$SCRIPTS/csv-columns.awk" \
          "$dir/ab.csv" |
        awk -F'\t' -v OFS='\t' -v arm="$arm" -v r="$round" \
            '{ print "ab", $1, $2, $3, $4 "t", arm, r, $5 }' >> "$runs" ||
        { echo "bench-compare: cannot read $dir/ab.csv ($arm)"; return 1; } ;;
  esac
  return 0
}

# Rounds of the three arms, the order rotating each round so no arm always runs first.
# $1 rounds, $2 runs file, $3 kernel options (an array's name), $4 ab options (an array's name);
# an empty array name skips that suite.
measure() {
  local rounds=$1 runs=$2 kname=$3 aname=$4 r i arm suite name
  local arms=(base current null) opts=()
  for ((r = 1; r <= rounds; r++)); do
    for suite in kernels ab; do
      if [ -n "${SUITE_OFF[$suite]:-}" ]; then
        continue
      fi
      name=$kname
      if [ "$suite" = ab ]; then
        name=$aname
      fi
      if [ -z "$name" ]; then
        continue
      fi
      eval 'opts=("${'"$name"'[@]}")'
      for ((i = 0; i < 3; i++)); do
        arm=${arms[$(( (i + r - 1) % 3 ))]}
        if ! run_suite "$suite" "$arm" "$r" "$runs" "${opts[@]}"; then
          if [ "$arm" = base ]; then
            echo "bench-compare: BASE FAILED $suite: the base's actx cannot run it; comparing" \
                 "the other suites, then failing (exit 3)"
            SUITE_OFF[$suite]=1
            BASE_FAILED[$suite]=1
            break
          fi
          exit 2
        fi
      done
    done
  done
}

echo "bench-compare: base $base_short vs current tree; $ROUNDS rounds of base, current and" \
     "null (current again), interleaved$([ "$QUICK" = 1 ] && echo "; quick mode")"
KERNEL_OPTS=("${KERNEL_COMMON[@]}" "${KERNEL_SELECT[@]}")
AB_OPTS=("${AB_COMMON[@]}" "${AB_SELECT[@]}")
measure "$ROUNDS" "$RUNS" KERNEL_OPTS AB_OPTS
# A suite the base could not run leaves only current and null runs behind: drop them.
for suite in "${!SUITE_OFF[@]}"; do
  awk -F'\t' -v s="$suite" '$1 != s' "$RUNS" > "$RUNS.tmp" && mv "$RUNS.tmp" "$RUNS"
done

CANDIDATES="$OUT/regressions-first-pass.tsv"
: > "$CANDIDATES"
awk -v floor="$FLOOR" -v fail_factor="$FAIL_FACTOR" -v fail_min="$FAIL_MIN" \
    -v csv="$OUT/compare.csv" -v candidates="$CANDIDATES" \
    -v title="Base $base_short vs current (median of $ROUNDS runs each; null = current vs current)" \
    -f "$SCRIPTS/bench-compare.awk" "$RUNS" | tee "$OUT/compare.txt"
for suite in "${!SUITE_OFF[@]}"; do
  if [ -n "${BASE_FAILED[$suite]:-}" ]; then
    echo "bench-compare: BASE FAILED $suite: not compared, the base's actx could not run it" \
         "(see above)"
  else
    echo "bench-compare: $suite not compared: the base has no EP library"
  fi
done | tee -a "$OUT/compare.txt"

status=0
if [ -s "$CANDIDATES" ]; then
  if [ "$CONFIRM" = 1 ]; then
    # Re-run only what was flagged: the ops, dtypes, sizes (and thread counts) of the candidates,
    # again with all three arms, and require the same verdict from the new runs alone.
    echo
    echo "bench-compare: $(wc -l < "$CANDIDATES") scenario(s) slower by >= ${FAIL_FACTOR}x their" \
         "threshold (and >= $(awk -v f="$FAIL_MIN" 'BEGIN { print 100 * f }')%); re-running them to confirm"
    list() { awk -F'\t' -v s="$1" -v c="$2" '$1 == s { print $c }' "$CANDIDATES" | sort -u | paste -sd, -; }
    K_CONFIRM=() A_CONFIRM=()
    if grep -q '^kernels' "$CANDIDATES"; then
      K_CONFIRM=("${KERNEL_COMMON[@]}" --ops "$(list kernels 2)" --dtypes "$(list kernels 3)"
                 --sizes "$(list kernels 4)")
    fi
    if grep -q '^ab' "$CANDIDATES"; then
      A_CONFIRM=("${AB_COMMON[@]}" --ops "$(list ab 2)" --dtypes "$(list ab 3)"
                 --sizes "$(list ab 4)" --threads "$(list ab 5 | tr -d t)")
    fi
    CONFIRM_RUNS="$OUT/raw/confirm-runs.tsv"
    : > "$CONFIRM_RUNS"
    OUT_FIRST=$OUT
    OUT="$OUT_FIRST/confirm"
    mkdir -p "$OUT/raw"
    confirm_rounds=$(( ROUNDS > CONFIRM_ROUNDS_MIN ? ROUNDS : CONFIRM_ROUNDS_MIN ))
    measure "$confirm_rounds" "$CONFIRM_RUNS" "$([ ${#K_CONFIRM[@]} -gt 0 ] && echo K_CONFIRM)" \
            "$([ ${#A_CONFIRM[@]} -gt 0 ] && echo A_CONFIRM)"
    OUT=$OUT_FIRST
    CONFIRMED="$OUT/regressions-confirmed.tsv"
    : > "$CONFIRMED"
    awk -v floor="$FLOOR" -v fail_factor="$FAIL_FACTOR" -v fail_min="$FAIL_MIN" \
        -v csv="$OUT/confirm.csv" -v candidates="$CONFIRMED" -v only="$CANDIDATES" \
        -v title="Re-run of the flagged scenarios ($confirm_rounds fresh rounds of base, current and null)" \
        -f "$SCRIPTS/bench-compare.awk" "$CONFIRM_RUNS" | tee "$OUT/confirm.txt"
    if [ -s "$CONFIRMED" ]; then
      echo
      echo "bench-compare: REGRESSION confirmed by the re-run (>= ${FAIL_FACTOR}x the noise" \
           "threshold and >= $(awk -v f="$FAIL_MIN" 'BEGIN { print 100 * f }')%, both times):"
      sed 's/\t/ /g; s/^/  /' "$CONFIRMED"
      if [ "$FAIL_ON_REGRESSION" = 1 ]; then
        status=1
      fi
    else
      echo "bench-compare: the re-run did not confirm it: treated as noise"
    fi
  else
    echo "bench-compare: not re-run (--no-confirm); not failing on a single pass"
  fi
fi
if [ "${#BASE_FAILED[@]}" -gt 0 ] && [ "$status" = 0 ]; then
  status=3
fi
echo
echo "bench-compare: $(( $(date +%s) - START )) s; table and CSV in $OUT/"
exit $status
