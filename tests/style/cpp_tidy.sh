#!/usr/bin/env bash
# clang-tidy (Debian 12's clang-tidy 16, the checks in .clang-tidy) on the C++ files changed since the
# commit in tests/style/tidy-base, committed or not: a new finding fails. A changed header brings in the
# source file of the same name. Each file takes 3 to 10 CPU-seconds (the whole tree, tests included,
# about 40 CPU-minutes: too long for every run), so the base moves forward once a change is checked
# clean: a commit may name its parent there. `cpp_tidy.sh BUILD_DIR --all` checks everything.
set -euo pipefail
source "$(dirname "$0")/../../scripts/lib/common.sh"
build=${1:?usage: cpp_tidy.sh BUILD_DIR [--all]}
cd "$KOTAE_ROOT"
command -v clang-tidy-16 >/dev/null || die "clang-tidy-16 is missing (scripts/setup installs it)"
[ -f "$build/CMakeCache.txt" ] || die "no $build/CMakeCache.txt (configure the build first)"
# The parts build as unity units (CMakeLists.txt), so the build's compile_commands.json names units:
# clang-tidy takes each file's own command from the same tree configured with units off (configured
# only, never built: seconds), with the build's compilers and type.
commands="$build/tidy-commands"
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
cmake -S "$KOTAE_ROOT" -B "$commands" -G Ninja -DKOTAE_UNITY_BUILD=OFF -DKOTAE_BUILD_TESTS=OFF \
  -DCMAKE_BUILD_TYPE="$(cache CMAKE_BUILD_TYPE)" -DCMAKE_CXX_COMPILER="$(cache CMAKE_CXX_COMPILER)" \
  -DCMAKE_C_COMPILER="$(cache CMAKE_C_COMPILER)" >"$commands.log" 2>&1 || { cat "$commands.log"; die "configuring $commands failed"; }
base=$(cat tests/style/tidy-base)
if [ "${2:-}" = --all ]; then
  mapfile -t changed < <(git ls-files '*.cpp' '*.h')
elif git cat-file -e "$base^{commit}" 2>/dev/null; then
  mapfile -t changed < <({ git diff --name-only "$base" -- '*.cpp' '*.h'; git ls-files --others --exclude-standard '*.cpp' '*.h'; } | sort -u)
else
  die "tidy-base $base is not in this clone's history (a shallow clone?): run with --all"
fi
# The source files to check: changed ones of the parts (not tests/, bench/ or fuzz/) that the build
# compiles, and the .cpp beside each changed header.
mapfile -t compiled < <(jq -r '.[].file' "$commands/compile_commands.json" | sed "s|^$KOTAE_ROOT/||" | sort -u)
declare -A in_build=()
for f in "${compiled[@]}"; do in_build[$f]=1; done
sources=()
for f in "${changed[@]}"; do
  [ -f "$f" ] || continue  # deleted since
  case "$f" in tests/* | bench/* | fuzz/*) continue ;; esac
  case "$f" in *.h) f="${f%.h}.cpp" ;; esac
  [ -n "${in_build[$f]:-}" ] && sources+=("$f")
done
mapfile -t sources < <(printf '%s\n' "${sources[@]}" | sort -u | sed '/^$/d')
if [ ${#sources[@]} -eq 0 ]; then
  echo "ok: no C++ file changed since $base"
  exit 0
fi
out="$build/clang-tidy.txt"  # kept: every finding with its context
echo "clang-tidy on ${#sources[@]} files changed since $base (findings in $out)"
if ! printf '%s\n' "${sources[@]}" | xargs -P "$(nproc)" -n 4 clang-tidy-16 -p "$commands" --quiet >"$out" 2>&1; then
  grep -E 'warning:|error:' "$out" | sort -u | head -60
  echo "FAIL: clang-tidy found the above in ${#sources[@]} changed files (.clang-tidy says which checks)"
  exit 1
fi
echo "ok: ${#sources[@]} C++ files changed since $base are clean"
