#!/usr/bin/env bash
# The parts include only the parts below them (README.md's picture; each part's README), and the
# libraries that one part owns stay in it: SQLite and libpq in store/, ONNX Runtime and llama.cpp in
# model/, hiredis in queue/, Beast in server/. A finding names the file and the include.
set -euo pipefail
source "$(dirname "$0")/../../scripts/lib/common.sh"
cd "$KOTAE_ROOT"
declare -A may=(
  [core]=""
  [platform]="core"
  [text]="core"
  [model]="core platform text"
  [batch]="core model"
  [store]="core text"
  [queue]="core model"
  [search]="core model store"
  [rag]="core model search store text"
  [assembly]="core platform batch model rag search store text"
  [jobs]="core assembly queue rag store text"
  [worker]="core assembly jobs queue rag text"
  [server]="core platform text model batch store queue search rag assembly jobs"
  [cli]="core platform store queue search rag assembly jobs"
  [app]="core platform store queue search rag assembly jobs server worker cli"
)
declare -A owner=([sqlite3.h]=store [libpq-fe.h]=store [onnxruntime_cxx_api.h]=model [onnxruntime_c_api.h]=model
                  [llama.h]=model [ggml.h]=model [hiredis/hiredis.h]=queue [boost/beast]=server [boost/asio]=server)
findings=()
for part in "${!may[@]}"; do
  while IFS= read -r hit; do
    file=${hit%%:*}; target=$(sed -E 's/.*#include "([a-z_]+)\/.*/\1/' <<<"$hit")
    [ "$target" = "$part" ] && continue
    [[ " ${may[$part]} " == *" $target "* ]] && continue
    [ -d "$target" ] || continue  # not a part (a generated file, a test support folder)
    findings+=("$hit  ($part/ may include: ${may[$part]:-nothing})")
  done < <(grep -rnoE '#include "[a-z_]+/[^"]+"' "$part" --include=*.cpp --include=*.h --include=*.cu | sed -E 's/:[0-9]+:/:/')
  for header in "${!owner[@]}"; do
    [ "${owner[$header]}" = "$part" ] && continue
    while IFS= read -r hit; do findings+=("$hit  (only ${owner[$header]}/ includes <$header>)"); done \
      < <(grep -rnF "#include <$header" "$part" --include=*.cpp --include=*.h || true)
  done
done
if [ ${#findings[@]} -gt 0 ]; then
  printf '%s\n' "${findings[@]}" | sort
  echo "FAIL: ${#findings[@]} includes cross the parts' layering"
  exit 1
fi
echo "ok: ${#may[@]} parts include only what is below them"
