# csv-columns.awk — prints chosen columns of a CSV file (RFC 4180: quoted fields may hold commas,
# doubled quotes and newlines), tab-separated, one line per record, header skipped.
#
#   awk -v cols=op,dtype,elements,avx2_1t_median_ns_per_elem -f scripts/csv-columns.awk FILE
#
# Columns are chosen by header name, so a CSV that gains or reorders columns still reads the same.
# A named column the header lacks is an error (exit 2, message on stderr): a renamed column must
# not silently turn into empty values. Tabs and newlines inside a value become spaces.

function fail(msg) {
  print "csv-columns.awk: " FILENAME ": " msg > "/dev/stderr"
  failed = 1
  exit 2
}

# Splits one complete record into field[1..n]; returns n.
function split_record(rec, field,    n, i, c, in_quotes, value) {
  n = 0
  value = ""
  in_quotes = 0
  for (i = 1; i <= length(rec); i++) {
    c = substr(rec, i, 1)
    if (in_quotes) {
      if (c == "\"") {
        if (substr(rec, i + 1, 1) == "\"") {
          value = value "\""
          i++
        } else {
          in_quotes = 0
        }
      } else {
        value = value c
      }
    } else if (c == "\"") {
      in_quotes = 1
    } else if (c == ",") {
      field[++n] = value
      value = ""
    } else {
      value = value c
    }
  }
  field[++n] = value
  return n
}

# Whether rec has an odd number of quote characters: a quoted field continues on the next line.
function open_quote(rec,    tmp) {
  tmp = rec
  return gsub(/"/, "", tmp) % 2 == 1
}

BEGIN {
  n_wanted = split(cols, wanted, ",")
  if (n_wanted == 0) {
    print "csv-columns.awk: no columns given (-v cols=a,b,c)" > "/dev/stderr"
    failed = 1
    exit 2
  }
  pending = ""
}

{
  sub(/\r$/, "")
  pending = pending == "" ? $0 : pending "\n" $0
  if (open_quote(pending))
    next
  rec = pending
  pending = ""
  n = split_record(rec, field)
  if (!have_header) {
    have_header = 1
    for (i = 1; i <= n; i++)
      index_of[field[i]] = i
    for (k = 1; k <= n_wanted; k++) {
      if (!(wanted[k] in index_of))
        fail("no column named '" wanted[k] "'")
      pick[k] = index_of[wanted[k]]
    }
    next
  }
  line = ""
  for (k = 1; k <= n_wanted; k++) {
    v = pick[k] <= n ? field[pick[k]] : ""
    gsub(/[\t\n]/, " ", v)
    line = k == 1 ? v : line "\t" v
  }
  print line
}

END {
  if (failed)
    exit 2
  if (pending != "") {
    print "csv-columns.awk: " FILENAME ": unterminated quoted field at the end" > "/dev/stderr"
    exit 2
  }
  if (!have_header) {
    print "csv-columns.awk: " FILENAME ": empty file (no header)" > "/dev/stderr"
    exit 2
  }
}
