#!/usr/bin/env bash
# Every Python file in the tree is as `ruff format` writes it and passes `ruff check` (ruff.toml:
# pyflakes, pycodestyle, bugbear). Fix with: scripts/format
set -euo pipefail
source "$(dirname "$0")/../../scripts/lib/common.sh"
cd "$KOTAE_ROOT"
ruff="$(python_env lint)/bin/ruff"
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.py' | while read -r f; do [ -f "$f" ] && echo "$f"; done)
[ ${#files[@]} -gt 0 ] || die "no Python files found (is this a git checkout?)"
status=0
"$ruff" format --check --quiet "${files[@]}" || { echo "FAIL: not formatted as ruff formats (scripts/format fixes them)"; status=1; }
"$ruff" check --quiet --output-format concise "${files[@]}" || { echo "FAIL: ruff check found the above"; status=1; }
[ $status -eq 0 ] && echo "ok: ${#files[@]} Python files formatted and clean"
exit $status
