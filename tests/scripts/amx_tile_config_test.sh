#!/usr/bin/env bash
# llama.cpp as Kotae builds and runs it must store the whole AMX tile configuration before `ldtilecfg`
# loads it (scripts/patches/llama.cpp/amx-tile-config.patch). Checked on any machine: the instructions
# just before each `ldtilecfg` must write the configuration's colsb (bytes 16-47) and rows (48-63).
# Without the patch, GCC 12 keeps only the palette byte and the CPU loads stack garbage. Two codes are
# read: ggml's AMX kernels compiled for Sapphire Rapids with the compiler the source build uses, and
# the Sapphire Rapids variant of the prebuilt libraries the binary loads (scripts/setup; GCC 11).
set -u
source "$(dirname "$0")/../../scripts/lib/common.sh"
source "$KOTAE_ROOT/scripts/lib/llama_cpp.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# check_code OBJECT: every ldtilecfg in OBJECT's code loads a configuration whose rows and colsb were written.
check_code() {
  echo "$1:"
  objdump -d --no-show-raw-insn "$1" >"$tmp/code.s"
  python3 - "$tmp/code.s" <<'PY' || fail "the tile configuration is not stored before ldtilecfg in $1 (see above)"
import re, sys
lines = [l.split('\t', 1)[-1].strip() for l in open(sys.argv[1]) if '\t' in l]
loads = [i for i, l in enumerate(lines) if l.startswith('ldtilecfg')]
if not loads:
    sys.exit('no ldtilecfg in the compiled AMX kernels: were they compiled for AMX?')
store = re.compile(r'^v?mov\S*\s+\S+,(-?0x[0-9a-f]+|-?\d+)?\((%\w+)\)$')
for i in loads:
    base = re.match(r'ldtilecfg\s+(-?0x[0-9a-f]+|-?\d+)?\((%\w+)\)', lines[i])
    start, reg = int(base.group(1) or '0', 0), base.group(2)
    written = set()
    for l in lines[max(0, i - 24):i]:
        m = store.match(l)
        if m and m.group(2) == reg:
            written.add(int(m.group(1) or '0', 0) - start)
    colsb = any(16 <= off < 48 for off in written)
    rows = any(48 <= off < 64 for off in written)
    print(f'ldtilecfg at instruction {i}: stores at config offsets {sorted(written)}')
    if not (colsb and rows):
        sys.exit(f'ldtilecfg at instruction {i} loads a configuration whose colsb/rows were never written')
PY
}

bundle=$KOTAE_CACHE/deps/llama.cpp/source/llama.cpp.bundle
[ -f "$bundle" ] || fail "no llama.cpp source bundle at $bundle: run scripts/setup"
( llama_cpp_checkout "$bundle" "$tmp/src" ) || fail "the patches do not apply"
src=$tmp/src/ggml
"${CXX:-c++}" -std=c++17 -O3 -march=sapphirerapids -fPIC -DNDEBUG -I"$src/include" -I"$src/src" -I"$src/src/ggml-cpu" \
  -c "$src/src/ggml-cpu/amx/mmq.cpp" -o "$tmp/mmq.o" || fail "ggml's AMX kernels do not compile"
check_code "$tmp/mmq.o"
prebuilt=$KOTAE_CACHE/deps/llama.cpp/lib/libggml-cpu-sapphirerapids.so
if [ -f "$prebuilt" ]; then
  check_code "$prebuilt"
else
  echo "no prebuilt AMX variant at $prebuilt (scripts/setup --cuda links the source build)"
fi
echo "ok: every ldtilecfg loads a configuration whose rows and colsb were written"
