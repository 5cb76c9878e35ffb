#!/usr/bin/env bash
# bench/gpu/pack then bench/gpu/run --dry-run, as a machine without a GPU runs them: the pack stays
# under 60 MiB and holds the checked weights and llama.cpp's sources; the dry run builds the device
# report, says there is no GPU, reads the peer's inputs, compiles and links the native CUDA encoder
# with nvcc from PyPI for sm_75 (the oldest GPUs the plugin supports), runs the retrieval + rerank path from text on the CPU reference and links its GPU
# program, configures llama.cpp and compiles the llama.cpp encoder bench; its summary is the last line.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
pack=$1
"$root/bench/gpu/pack" "$pack" >"$pack.json"
jq -e '.bytes <= 62914560 and .weights.matches_onnx_initializer == "embeddings.word_embeddings.weight"' "$pack.json" >/dev/null \
  || { cat "$pack.json"; echo "bad pack"; exit 1; }
out=$("$root/bench/gpu/run" --dry-run --pack "$pack")
echo "$out"
echo "$out" | tail -1 | jq -e '.name == "summary" and .dry_run == true and (.gpu.present | type) == "boolean"' >/dev/null
grep -q '"configured": true, "cuda": true, "bench_compiles": true' <<<"$out"  # llama.cpp's CUDA build configures
grep -q '"name": "cuda_encoder_build", "compiled": true, "linked": true, "architecture": "sm_75"' <<<"$out"  # Turing
# Retrieval + rerank from text ran end to end on the CPU reference; its GPU program linked.
echo "$out" | grep '"name": "retrieval_rerank"' | jq -e '.errors == 0 and .requests >= 1 and .p95_ms > 0' >/dev/null
grep -q '"name": "retrieval_bench_build", "gpu": true, "linked": true' <<<"$out"
echo "$out" | tail -1 | jq -e '.dry_run_path_checked == true' >/dev/null
# The generator's skeleton loads in llama.cpp and generates.
echo "$out" | grep '"name": "generation"' | jq -e '.model | startswith("gemma3 270M")' >/dev/null
if ! ls /dev/nvidia0 >/dev/null 2>&1; then
  echo "$out" | tail -1 | jq -e '.gpu.present == false' >/dev/null
fi
