# bench-compare.awk — the statistics of `make bench-compare`: base vs current, flagged against the
# noise that a null comparison (current vs current) measured in the same job.
#
# Input, tab-separated, one measurement per line (what one actx run reported for one scenario):
#   suite  op  dtype  elements  variant  arm  round  value
# suite is "kernels" (value: ns per element) or "ab" (value: ns per session Run); arm is "base",
# "current" or "null" (the current build run again as if it were another build); round numbers
# the interleaved rounds. Lower values are better.
#
# Per scenario, with B, C, N the runs of the three arms:
#   base, current   medians of B and C;   change = current / base - 1
#   null            median(N) / median(C) - 1: what identical code showed in this job
#   threshold       max(floor, max(C u N) / min(C u N) - 1): the whole spread of the 2R runs of
#                   identical code. A change inside it is "within noise".
#   flag            "slower" when current / base - 1 > threshold, "faster" when
#                   base / current - 1 > threshold (the same bound, read the other way).
#   regression      slower by at least fail_factor x threshold and by at least fail_min (smaller
#                   shifts can come from code placement alone, which the null arm, reusing the
#                   current binary, cannot see): listed in `candidates`.
#
# Variables (-v): floor (fraction, default 0.01), fail_factor (default 2), fail_min (fraction,
# default 0.05), csv (a file to write the table to as CSV), candidates (a file to write regression
# scenarios to, one per line as "suite<TAB>op<TAB>dtype<TAB>elements<TAB>variant"), only (a file
# in that format: report only those scenarios), title (a line printed above the table).
# Exit status: 0, or 2 on malformed input.

function fail(msg) {
  print "bench-compare.awk: line " NR ": " msg > "/dev/stderr"
  bad = 1
  exit 2
}

# Sorts a[1..n] in place (n is small: a few rounds).
function sort_values(a, n,    i, j, t) {
  for (i = 2; i <= n; i++) {
    t = a[i]
    for (j = i - 1; j >= 1 && a[j] > t; j--)
      a[j + 1] = a[j]
    a[j + 1] = t
  }
}

function median(a, n,    s, i) {
  for (i = 1; i <= n; i++)
    s[i] = a[i]
  sort_values(s, n)
  return n % 2 ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2
}

# Copies the values of arm for scenario key into out[1..]; returns how many.
function arm_values(key, arm, out,    i, n) {
  n = count[key, arm]
  for (i = 1; i <= n; i++)
    out[i] = value[key, arm, i]
  return n
}

function pct(x) {
  return sprintf("%+.1f%%", 100 * x)
}

function show(x, suite) {
  # ns per Run reads better in microseconds; ns per element as it is.
  return suite == "ab" ? sprintf("%.2f", x / 1000) : sprintf("%.3f", x)
}

BEGIN {
  FS = "\t"
  if (floor == "")
    floor = 0.01
  if (fail_factor == "")
    fail_factor = 2
  if (fail_min == "")
    fail_min = 0.05
  if (only != "") {
    while ((getline line < only) > 0)
      if (line != "")
        wanted[line] = 1
    close(only)
  }
}

NF == 0 { next }

{
  if (NF != 8)
    fail("expected 8 tab-separated fields, got " NF)
  if ($6 != "base" && $6 != "current" && $6 != "null")
    fail("unknown arm '" $6 "'")
  if ($8 !~ /^[0-9]+([.][0-9]*)?([eE][-+]?[0-9]+)?$/ || $8 + 0 <= 0)
    next # an arm that did not run this cell (empty, or not implemented)
  key = $1 "\t" $2 "\t" $3 "\t" $4 "\t" $5
  if (only != "" && !(key in wanted))
    next
  if (!(key in seen)) {
    seen[key] = 1
    order[++n_keys] = key
  }
  n = ++count[key, $6]
  value[key, $6, n] = $8 + 0
}

END {
  if (bad)
    exit 2
  if (title != "")
    print title
  if (csv != "")
    print "suite,op,dtype,elements,variant,unit,base,current,change,null,threshold,flag,runs" > csv
  last_suite = ""
  n_slower = n_faster = n_noise = n_missing = n_regress = 0
  for (k = 1; k <= n_keys; k++) {
    key = order[k]
    split(key, f, "\t")
    suite = f[1]
    if (suite != last_suite) {
      unit = suite == "ab" ? "us per Run" : "ns per element"
      printf "\n%-44s %10s %10s %8s %8s %9s  %s\n", suite " (" unit ")", "base", "current",
             "change", "null", "threshold", "flag"
      last_suite = suite
    }
    label = f[2] " " f[3] " " f[4] " " f[5]
    nb = arm_values(key, "base", vb)
    nc = arm_values(key, "current", vc)
    nn = arm_values(key, "null", vn)
    if (nb == 0 || nc == 0 || nn == 0) {
      flag = nb == 0 ? "new (not in base)" : nc == 0 ? "gone (not in current)" : "no null runs"
      printf "  %-42s %10s %10s %8s %8s %9s  %s\n", label,
             nb ? show(median(vb, nb), suite) : "-", nc ? show(median(vc, nc), suite) : "-",
             "-", "-", "-", flag
      if (csv != "")
        printf "%s,%s,%s,%s,%s,%s,,,,,,%s,%d/%d/%d\n", f[1], f[2], f[3], f[4], f[5],
               suite == "ab" ? "ns" : "ns/elem", flag, nb, nc, nn > csv
      n_missing++
      continue
    }
    mb = median(vb, nb)
    mc = median(vc, nc)
    mn = median(vn, nn)
    change = mc / mb - 1
    null_change = mn / mc - 1
    lo = hi = vc[1]
    for (i = 1; i <= nc; i++) { if (vc[i] < lo) lo = vc[i]; if (vc[i] > hi) hi = vc[i] }
    for (i = 1; i <= nn; i++) { if (vn[i] < lo) lo = vn[i]; if (vn[i] > hi) hi = vn[i] }
    threshold = hi / lo - 1
    if (threshold < floor)
      threshold = floor
    if (change > threshold) {
      flag = "slower"
      n_slower++
      if (change >= fail_factor * threshold && change >= fail_min) {
        flag = sprintf("SLOWER (>= %sx threshold and >= %g%%)", fail_factor, 100 * fail_min)
        n_regress++
        if (candidates != "")
          print key > candidates
      }
    } else if (mb / mc - 1 > threshold) {
      flag = "faster"
      n_faster++
    } else {
      flag = "within noise"
      n_noise++
    }
    printf "  %-42s %10s %10s %8s %8s %9s  %s\n", label, show(mb, suite), show(mc, suite),
           pct(change), pct(null_change), sprintf("+-%.1f%%", 100 * threshold), flag
    if (csv != "")
      printf "%s,%s,%s,%s,%s,%s,%.6g,%.6g,%.5f,%.5f,%.5f,%s,%d/%d/%d\n", f[1], f[2], f[3], f[4],
             f[5], suite == "ab" ? "ns" : "ns/elem", mb, mc, change, null_change, threshold,
             flag, nb, nc, nn > csv
  }
  printf "\n%d scenarios: %d slower (%d by >= %sx the threshold and >= %g%%), %d faster, %d within noise",
         n_keys, n_slower, n_regress, fail_factor, 100 * fail_min, n_faster, n_noise
  if (n_missing)
    printf ", %d not in both builds", n_missing
  printf "\n"
  if (csv != "")
    close(csv)
  if (candidates != "")
    close(candidates)
}
