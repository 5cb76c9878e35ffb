#!/usr/bin/env bash
# Every C++ and CUDA file in the tree is as .clang-format writes it (Debian 12's clang-format 16, so
# every machine formats alike). Fix with: scripts/format
set -euo pipefail
source "$(dirname "$0")/../../scripts/lib/common.sh"
cd "$KOTAE_ROOT"
command -v clang-format-16 >/dev/null || die "clang-format-16 is missing (scripts/setup installs it)"
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cpp' '*.h' '*.cu' '*.cuh' |
  while read -r f; do [ -f "$f" ] && echo "$f"; done)  # new files too; not those deleted since
[ ${#files[@]} -gt 0 ] || die "no C++ files found (is this a git checkout?)"
if ! out=$(clang-format-16 --dry-run --Werror "${files[@]}" 2>&1); then
  { grep -o '^[^:]*:[0-9]*' <<<"$out" || echo "$out"; } | sort -u | head -40
  echo "FAIL: $(grep -c 'error:' <<<"$out" || true) lines are not formatted as .clang-format says (scripts/format fixes them)"
  exit 1
fi
echo "ok: ${#files[@]} C++ files formatted"
