#!/usr/bin/env bash
# coverage.sh — which lines of libactx, the EP and the tools the test suite executes.
#
# Builds with gcov instrumentation (ACTX_COVERAGE: --coverage -O0) in its own build directory,
# runs the test suite there, and reports with lcov: an HTML report, a one-screen summary of line
# and branch coverage per directory, and patch coverage — the executable lines changed since a
# base revision that the tests ran, with the ones they did not run listed.
#
#   scripts/coverage.sh [--base REV] [--build DIR] [--out DIR] [--min PCT] [--report-only]
#   scripts/coverage.sh --self-test
#
#   --base REV      patch coverage against REV (default: BASE, else HEAD~1); the changed lines are
#                   those of `git diff REV` (the working tree, committed or not) plus files git
#                   does not track yet
#   --build DIR     the instrumented build (default build-coverage)
#   --out DIR       where the report goes (default results/coverage): html/index.html,
#                   summary.txt, patch-uncovered.txt, coverage.info
#   --min PCT       line coverage that the library and the EP must each reach (default 90);
#                   0 turns the check off
#   --report-only   no build, no tests: report on the counters the last run left
#
# Exit status: 0; 1 when a test failed or the library or the EP is under --min; 2 on a usage error.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

BASE_REV=${BASE:-HEAD~1}
BUILD=${COVERAGE_BUILD:-build-coverage}
OUT=${COVERAGE_OUT:-results/coverage}
MIN=${COVERAGE_MIN:-90}
JOBS=${JOBS:-$(nproc)}
REPORT_ONLY=0
# The suite as `make test` runs it, less what adds no line: the exhaustive float32 sweep and its
# CI shards repeat test_paths' comparison on more inputs (the shards alone take over 25 min at
# -O0), and the valgrind run repeats ep_cycles.
CTEST_EXCLUDE_LABELS='exhaustive|valgrind'
CTEST_EXCLUDE_TESTS='^test_exhaustive_shards$'
# Where the report's rows come from: "name:dir dir ..." — a directory's files, headers included.
GROUPS_SPEC="library:src include|EP:ep|tools:tools"
# Files listed per group under the summary: the few with the most uncovered lines.
WORST_FILES=3
# Uncovered changed lines shown on screen (all of them go to patch-uncovered.txt).
PATCH_LINES_SHOWN=20
# lcov 1.x keeps branch data only when asked, at every step.
LCOV_RC=(--rc lcov_branch_coverage=1)

usage() {
  sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'
}

die_usage() {
  echo "coverage: $1 (see --help)" >&2
  exit 2
}

# ---- per-directory summary -------------------------------------------------------------------
# Reads an lcov tracefile whose SF paths are relative to the repository; prints the table.
# $1 tracefile
summary_table() {
  awk -v groups="$GROUPS_SPEC" -v worst="$WORST_FILES" '
    function pct(h, n) { return n ? sprintf("%5.1f%%", 100 * h / n) : "    -" }
    function group_of(path,    g, i, j, nd, d) {
      for (g = 1; g <= ng; g++) {
        nd = split(dirs[g], d, " ")
        for (j = 1; j <= nd; j++)
          if (index(path, d[j] "/") == 1)
            return g
      }
      return 0
    }
    BEGIN {
      ng = split(groups, spec, "|")
      for (g = 1; g <= ng; g++) {
        split(spec[g], nv, ":")
        name[g] = nv[1]
        dirs[g] = nv[2]
      }
    }
    /^SF:/ { file = substr($0, 4); lf = lh = bf = bh = 0; next }
    /^LF:/ { lf = substr($0, 4) + 0; next }
    /^LH:/ { lh = substr($0, 4) + 0; next }
    /^BRF:/ { bf = substr($0, 5) + 0; next }
    /^BRH:/ { bh = substr($0, 5) + 0; next }
    /^end_of_record/ {
      g = group_of(file)
      if (g == 0)
        next
      LF[g] += lf; LH[g] += lh; BF[g] += bf; BH[g] += bh
      sub_dir = file
      sub(/\/[^\/]*$/, "", sub_dir)
      if (!((g, sub_dir) in seen_dir)) {
        seen_dir[g, sub_dir] = 1
        dir_list[g] = dir_list[g] (dir_list[g] == "" ? "" : " ") sub_dir
      }
      DLF[sub_dir] += lf; DLH[sub_dir] += lh; DBF[sub_dir] += bf; DBH[sub_dir] += bh
      nf[g]++
      fname[g, nf[g]] = file
      fmiss[g, nf[g]] = lf - lh
      flf[g, nf[g]] = lf
      flh[g, nf[g]] = lh
      TLF += lf; TLH += lh; TBF += bf; TBH += bh
    }
    END {
      printf "%-28s %8s %15s %8s %15s\n", "", "lines", "", "branches", ""
      for (g = 1; g <= ng; g++) {
        if (!nf[g]) {
          printf "%-28s %8s\n", name[g] " (" dirs[g] ")", "no files"
          continue
        }
        printf "%-28s %8s %15s %8s %15s\n", name[g] " (" dirs[g] ")", pct(LH[g], LF[g]),
               LH[g] "/" LF[g], pct(BH[g], BF[g]), BH[g] "/" BF[g]
        n = split(dir_list[g], dl, " ")
        if (n > 1)
          for (i = 1; i <= n; i++)
            printf "  %-26s %8s %15s %8s %15s\n", dl[i] "/", pct(DLH[dl[i]], DLF[dl[i]]),
                   DLH[dl[i]] "/" DLF[dl[i]], pct(DBH[dl[i]], DBF[dl[i]]), DBH[dl[i]] "/" DBF[dl[i]]
        # The files with the most lines the tests never run.
        for (k = 1; k <= worst; k++) {
          best = 0
          for (i = 1; i <= nf[g]; i++)
            if (!((g, i) in shown) && fmiss[g, i] > 0 && (best == 0 || fmiss[g, i] > fmiss[g, best]))
              best = i
          if (best == 0)
            break
          shown[g, best] = 1
          printf "    %-34s %5d lines not run (%s)\n", fname[g, best], fmiss[g, best],
                 pct(flh[g, best], flf[g, best])
        }
      }
      printf "%-28s %8s %15s %8s %15s\n", "all", pct(TLH, TLF), TLH "/" TLF, pct(TBH, TBF),
             TBH "/" TBF
    }' "$1"
}

# Line coverage of one group, as a number (-1: the group has no executable line).
# $1 tracefile, $2 group name
group_line_pct() {
  awk -v groups="$GROUPS_SPEC" -v want="$2" '
    BEGIN {
      ng = split(groups, spec, "|")
      for (g = 1; g <= ng; g++) {
        split(spec[g], nv, ":")
        if (nv[1] == want)
          nd = split(nv[2], d, " ")
      }
    }
    /^SF:/ {
      file = substr($0, 4)
      mine = 0
      for (j = 1; j <= nd; j++)
        if (index(file, d[j] "/") == 1)
          mine = 1
      next
    }
    mine && /^LF:/ { lf += substr($0, 4) }
    mine && /^LH:/ { lh += substr($0, 4) }
    END { if (lf) printf "%.1f\n", 100 * lh / lf; else print -1 }' "$1"
}

# ---- patch coverage --------------------------------------------------------------------------
# Prints "path<TAB>line" for every line that `git diff -U0` shows as added or changed (new-side
# numbers), from a unified diff on stdin.
changed_lines_from_diff() {
  awk '
    /^\+\+\+ / {
      path = substr($0, 5)
      if (path == "/dev/null") { path = ""; next }
      sub(/^b\//, "", path)
      next
    }
    /^@@ / && path != "" {
      # @@ -a[,b] +c[,d] @@: d lines from c (d defaults to 1; 0 is a pure deletion).
      split($3, plus, ",")
      start = substr(plus[1], 2) + 0
      count = (2 in plus) ? plus[2] + 0 : 1
      for (i = 0; i < count; i++)
        print path "\t" (start + i)
    }'
}

# Joins changed lines (file on $1: "path<TAB>line") with a tracefile ($2, repository-relative
# paths). Writes the uncovered lines to $3 as "path: ranges", prints one summary line.
patch_report() {
  awk -v uncovered_out="$3" '
    function sort_numbers(a, n,    i, j, t) {
      for (i = 2; i <= n; i++) {
        t = a[i]
        for (j = i - 1; j >= 1 && a[j] > t; j--)
          a[j + 1] = a[j]
        a[j + 1] = t
      }
    }
    FNR == NR { changed[$1, $2] = 1; changed_file[$1] = 1; next }
    /^SF:/ { file = substr($0, 4); next }
    /^DA:/ && (file in changed_file) {
      split(substr($0, 4), da, ",")
      if ((file, da[1]) in changed) {
        executable++
        if (da[2] + 0 > 0) {
          covered++
        } else {
          if (!(file in missing))
            files[++nfiles] = file
          missing[file] = missing[file] " " da[1]
        }
      }
    }
    END {
      # Files by name, lines by number, consecutive lines as ranges: a stable, short listing.
      for (i = 2; i <= nfiles; i++) {
        t = files[i]
        for (j = i - 1; j >= 1 && files[j] > t; j--)
          files[j + 1] = files[j]
        files[j + 1] = t
      }
      printf "" > uncovered_out
      for (i = 1; i <= nfiles; i++) {
        n = split(missing[files[i]], ln, " ")
        for (k = 1; k <= n; k++)
          ln[k] += 0
        sort_numbers(ln, n)
        out = ""
        for (k = 1; k <= n; k = e + 1) {
          for (e = k; e < n && ln[e + 1] == ln[e] + 1; e++)
            ;
          out = out (out == "" ? "" : ", ") (e == k ? ln[k] : ln[k] "-" ln[e])
        }
        print files[i] ": " out > uncovered_out
      }
      close(uncovered_out)
      if (executable == 0)
        print "no executable line changed"
      else
        printf "%.1f%% (%d of %d changed executable lines run by the tests)\n",
               100 * covered / executable, covered, executable
    }' "$1" "$2"
}

# ---- self-test of the report's parsing, on made-up input --------------------------------------
self_test() {
  local dir failures=0 got
  dir=$(mktemp -d -t coverage-test.XXXXXX)
  cat > "$dir/diff" <<'EOF'
diff --git a/src/a.c b/src/a.c
--- a/src/a.c
+++ b/src/a.c
@@ -10,0 +11,3 @@ int f(void) {
+  x = 1;
+  y = 2;
+  return x;
@@ -20 +23 @@ int g(void) {
-  old;
+  new;
@@ -30,2 +32,0 @@ int h(void) {
-  gone;
-  gone;
@@ -40,0 +50,2 @@ int k(void) {
+  p();
+  q();
diff --git a/src/b.c b/src/b.c
deleted file mode 100644
--- a/src/b.c
+++ /dev/null
@@ -1,2 +0,0 @@
-int b;
-int c;
EOF
  changed_lines_from_diff < "$dir/diff" > "$dir/lines"
  got=$(tr '\t\n' ':,' < "$dir/lines")
  if [ "$got" != "src/a.c:11,src/a.c:12,src/a.c:13,src/a.c:23,src/a.c:50,src/a.c:51," ]; then
    echo "coverage self-test: changed lines were '$got'" >&2
    failures=$((failures + 1))
  fi
  # Line 12 is not executable (no DA), 11 and 23 ran, 13, 50 and 51 did not; ep/x.c is unchanged.
  cat > "$dir/info" <<'EOF'
SF:src/a.c
DA:11,4
DA:13,0
DA:14,0
DA:23,1
DA:50,0
DA:51,0
LF:6
LH:2
BRF:4
BRH:1
end_of_record
SF:ep/x.c
DA:1,0
LF:1
LH:0
end_of_record
SF:tools/ort/host.c
DA:1,1
LF:1
LH:1
end_of_record
EOF
  got=$(patch_report "$dir/lines" "$dir/info" "$dir/uncovered")
  if [ "$got" != "40.0% (2 of 5 changed executable lines run by the tests)" ]; then
    echo "coverage self-test: patch coverage was '$got'" >&2
    failures=$((failures + 1))
  fi
  if [ "$(cat "$dir/uncovered")" != "src/a.c: 13, 50-51" ]; then
    echo "coverage self-test: uncovered lines were '$(cat "$dir/uncovered")'" >&2
    failures=$((failures + 1))
  fi
  got=$(group_line_pct "$dir/info" library)/$(group_line_pct "$dir/info" EP)
  if [ "$got" != "33.3/0.0" ]; then
    echo "coverage self-test: library/EP line coverage was '$got'" >&2
    failures=$((failures + 1))
  fi
  if ! summary_table "$dir/info" | grep -q '^tools (tools) *100.0% *1/1'; then
    echo "coverage self-test: summary table:" >&2
    summary_table "$dir/info" >&2
    failures=$((failures + 1))
  fi
  rm -rf "$dir"
  if [ "$failures" -ne 0 ]; then
    echo "coverage self-test: $failures failure(s)" >&2
    return 1
  fi
  echo "coverage self-test: passed"
}

# ---- options --------------------------------------------------------------------------------
while [ $# -gt 0 ]; do
  case "$1" in
    --base) [ $# -ge 2 ] || die_usage "--base needs a revision"; BASE_REV=$2; shift 2 ;;
    --build) [ $# -ge 2 ] || die_usage "--build needs a directory"; BUILD=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || die_usage "--out needs a directory"; OUT=$2; shift 2 ;;
    --min)
      [ $# -ge 2 ] || die_usage "--min needs a percentage"
      [[ "$2" =~ ^[0-9]+([.][0-9]+)?$ ]] || die_usage "--min must be a number, not '$2'"
      MIN=$2; shift 2 ;;
    --report-only) REPORT_ONLY=1; shift ;;
    --self-test) self_test; exit $? ;;
    -h|--help) usage; exit 0 ;;
    *) die_usage "unknown option '$1'" ;;
  esac
done
for tool in lcov genhtml gcov; do
  command -v "$tool" >/dev/null 2>&1 ||
    { echo "coverage: $tool not found (Debian: lcov, gcc); scripts/install-deps.sh installs it" >&2; exit 2; }
done

START=$(date +%s)
tests_status=0
mkdir -p "$OUT"
LOG="$OUT/lcov.log"
: > "$LOG"
if [ "$REPORT_ONLY" = 0 ]; then
  ort_dir=$(scripts/install-deps.sh --onednn-dir "$OUT/onednn-dir.txt")
  cmake -S . -B "$BUILD" -DACTX_ORT_LIB_DIR="$ort_dir" \
    -DACTX_DNNL_DIR="$(cat "$OUT/onednn-dir.txt")" -DACTX_COVERAGE=ON > "$OUT/build.log"
  cmake --build "$BUILD" -j "$JOBS" >> "$OUT/build.log" 2>&1 ||
    { tail -n 20 "$OUT/build.log" >&2; echo "coverage: the instrumented build failed" >&2; exit 1; }
  # Counters from an earlier run would add to this one's.
  lcov --zerocounters --directory "$BUILD" >> "$LOG" 2>&1
  echo "coverage: running the tests in $BUILD (instrumented, -O0)"
  t0=$(date +%s)
  (cd "$BUILD" && ctest --output-on-failure -j "$JOBS" -LE "$CTEST_EXCLUDE_LABELS" \
      -E "$CTEST_EXCLUDE_TESTS") > "$OUT/ctest.log" 2>&1 || tests_status=$?
  grep -E '^[0-9]+% tests passed|tests failed' "$OUT/ctest.log" | sed 's/^/coverage: /' || true
  if [ "$tests_status" -ne 0 ]; then
    grep -E '\*\*\*|Failed|Timeout' "$OUT/ctest.log" | sed 's/^/  /' | head -n 20 || true
  fi
  echo "coverage: tests took $(( $(date +%s) - t0 )) s"
fi

# Every instrumented file, run or not (an initial capture gives the never-run ones their zeros),
# then only the project's own sources: not the tests, not generated code, not system headers.
lcov "${LCOV_RC[@]}" --capture --initial --directory "$BUILD" -o "$OUT/initial.info" >> "$LOG" 2>&1
lcov "${LCOV_RC[@]}" --capture --directory "$BUILD" -o "$OUT/tests.info" >> "$LOG" 2>&1 ||
  { echo "coverage: no counters in $BUILD (run without --report-only first)" >&2; exit 1; }
lcov "${LCOV_RC[@]}" -a "$OUT/initial.info" -a "$OUT/tests.info" -o "$OUT/all.info" >> "$LOG" 2>&1
lcov "${LCOV_RC[@]}" --extract "$OUT/all.info" "$ROOT/src/*" "$ROOT/include/*" "$ROOT/ep/*" \
     "$ROOT/tools/*" -o "$OUT/project.info" >> "$LOG" 2>&1
# Repository-relative paths, for the summary, the diff and the HTML alike.
sed "s|^SF:$ROOT/|SF:|" "$OUT/project.info" > "$OUT/coverage.info"
rm -f "$OUT/initial.info" "$OUT/tests.info" "$OUT/all.info" "$OUT/project.info"
rm -rf "$OUT/html"
genhtml "${LCOV_RC[@]}" --branch-coverage --quiet --title "actx" --legend \
        --output-directory "$OUT/html" "$OUT/coverage.info" >> "$LOG" 2>&1

{
  echo "Coverage of the test suite (gcov, -O0; lcov $(lcov --version | awk '{print $NF}'))"
  echo
  summary_table "$OUT/coverage.info"
  echo
  if base_sha=$(git rev-parse --verify -q "$BASE_REV^{commit}" 2>/dev/null); then
    {
      git diff -U0 --no-color --no-ext-diff --no-renames "$base_sha" -- src include ep tools |
        changed_lines_from_diff
      # Files git does not track yet are changed in full.
      git ls-files --others --exclude-standard -- src include ep tools |
        while IFS= read -r f; do
          awk -v f="$f" '{ print f "\t" FNR }' "$f"
        done
    } > "$OUT/changed-lines.tsv"
    printf 'Patch coverage since %s (%s): %s\n' "$BASE_REV" "$(git rev-parse --short "$base_sha")" \
           "$(patch_report "$OUT/changed-lines.tsv" "$OUT/coverage.info" "$OUT/patch-uncovered.txt")"
    if [ -s "$OUT/patch-uncovered.txt" ]; then
      echo "Changed lines the tests do not run:"
      head -n "$PATCH_LINES_SHOWN" "$OUT/patch-uncovered.txt" |
        awk -v w=150 '{ print "  " (length($0) > w ? substr($0, 1, w) " ..." : $0) }'
      n=$(wc -l < "$OUT/patch-uncovered.txt")
      if [ "$n" -gt "$PATCH_LINES_SHOWN" ]; then
        echo "  ... $((n - PATCH_LINES_SHOWN)) more files in $OUT/patch-uncovered.txt"
      fi
    fi
  else
    echo "Patch coverage: base revision '$BASE_REV' does not exist here (first commit, or a" \
         "shallow clone): skipped"
    : > "$OUT/patch-uncovered.txt"
  fi
} | tee "$OUT/summary.txt"

status=$tests_status
if [ "$status" -ne 0 ]; then
  echo "coverage: a test failed (see $OUT/ctest.log)"
fi
if [ "$MIN" != 0 ]; then
  for group in library EP; do
    p=$(group_line_pct "$OUT/coverage.info" "$group")
    if [ "$p" = -1 ]; then
      continue
    fi
    if awk -v p="$p" -v min="$MIN" 'BEGIN { exit !(p < min) }'; then
      echo "coverage: $group line coverage $p% is under the required $MIN%"
      status=1
    fi
  done
fi
echo "coverage: report in $OUT/html/index.html ($(( $(date +%s) - START )) s)"
exit $status
