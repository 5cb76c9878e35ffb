#!/usr/bin/env bash
# One fuzz target as a test: fuzz_test.sh FUZZ_BUILD_DIR TARGET WORK_DIR SECONDS
# First replays every input in fuzz/regressions/TARGET (the crashes found and fixed), then fuzzes for
# SECONDS from a copy of the committed seed corpus (fuzz/corpus is never written). Fails on any crash,
# leak, undefined behaviour or timeout; skipped (77) when the fuzz preset is not built at all.
set -euo pipefail
KOTAE_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$KOTAE_ROOT/scripts/lib/fuzz.sh"
build=$1 target=$2 work=$3 seconds=$4

regressions="$KOTAE_ROOT/fuzz/regressions/$target"
seeds="$KOTAE_ROOT/fuzz/corpus/$target"
[ -d "$regressions" ] || { echo "FAIL: no regression folder $regressions (keep it, with .gitkeep when empty)" >&2; exit 1; }
[ -d "$seeds" ] || { echo "FAIL: no seed corpus $seeds" >&2; exit 1; }
if [ ! -d "$build/fuzz" ]; then
  echo "SKIP: the fuzz preset is not built ($build): scripts/build fuzz"
  exit 77
fi
binary="$build/fuzz/$target"
[ -x "$binary" ] || { echo "FAIL: $binary is missing from the fuzz build" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work/corpus" "$work/crashes"
cp "$seeds"/* "$work/corpus/"
mapfile -t options < <(fuzz_options "$target")

mapfile -t inputs < <(find "$regressions" -type f ! -name '.*' | sort)
if [ ${#inputs[@]} -gt 0 ]; then
  echo "replaying ${#inputs[@]} regression input(s) from $regressions"
  "$binary" "${options[@]}" -artifact_prefix="$work/crashes/" "${inputs[@]}" >"$work/replay.log" 2>&1 \
    || { cat "$work/replay.log"; echo "FAIL: a regression input of $target fails again" >&2; exit 1; }
fi

"$binary" "${options[@]}" -max_total_time="$seconds" -artifact_prefix="$work/crashes/" "$work/corpus" >"$work/fuzz.log" 2>&1 \
  || { tail -n 80 "$work/fuzz.log"; echo "FAIL: fuzzing $target found a crash: $(ls "$work/crashes")" >&2; exit 1; }
echo "$target: ${#inputs[@]} regression input(s) pass; ${seconds}s fuzzing: $(fuzz_summary "$work/fuzz.log"), corpus $(find "$work/corpus" -type f | wc -l) files"
