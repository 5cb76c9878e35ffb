#!/usr/bin/env bash
# llama.cpp as Kotae builds it must store the whole AMX tile configuration before `ldtilecfg` loads it
# (scripts/patches/llama.cpp/amx-tile-config.patch). Checked on any machine: ggml's AMX kernels are
# compiled for Sapphire Rapids with the compiler the build uses, and the instructions just before each
# `ldtilecfg` must write the configuration's colsb (bytes 16-47) and rows (48-63). Without the patch,
# GCC 12 keeps only the palette byte and the CPU loads stack garbage.
set -u
source "$(dirname "$0")/../../scripts/lib/common.sh"
source "$KOTAE_ROOT/scripts/lib/llama_cpp.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

bundle=$KOTAE_CACHE/deps/llama.cpp/source/llama.cpp.bundle
[ -f "$bundle" ] || fail "no llama.cpp source bundle at $bundle: run scripts/setup"
( llama_cpp_checkout "$bundle" "$tmp/src" ) || fail "the patches do not apply"
src=$tmp/src/ggml
"${CXX:-c++}" -std=c++17 -O3 -march=sapphirerapids -fPIC -DNDEBUG -I"$src/include" -I"$src/src" -I"$src/src/ggml-cpu" \
  -c "$src/src/ggml-cpu/amx/mmq.cpp" -o "$tmp/mmq.o" || fail "ggml's AMX kernels do not compile"
objdump -d --no-show-raw-insn "$tmp/mmq.o" >"$tmp/mmq.s"

python3 - "$tmp/mmq.s" <<'PY' || fail "the tile configuration is not stored before ldtilecfg (see above)"
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
echo "ok: every ldtilecfg loads a configuration whose rows and colsb were written"
