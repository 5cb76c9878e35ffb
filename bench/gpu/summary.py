"""The GPU benchmark's last JSON line, from its results on stdin. Usage: summary.py DRY_RUN(true|false)"""

import json
import sys

results = [json.loads(line) for line in sys.stdin if line.strip()]


def first(name, **match):
    return next((r for r in results if r.get("name") == name and all(r.get(k) == v for k, v in match.items())), {})


def targets():
    """Issue #9's targets on an H200, each true, false, or null when not measured in this run."""
    kotae_b64 = first("encoder", engine="kotae-cuda-fp16", batch=64).get("texts_per_s")
    st_b64 = first("encoder", engine="sentence-transformers-fp16", batch=64).get("texts_per_s")
    batch1 = first("encoder", engine="kotae-cuda-fp16", batch=1).get("p50_ms")
    p95 = first("retrieval_rerank", rate=200, engine="kotae-cuda-fp16").get("p95_ms")
    return {
        "encoder_throughput_at_least_2x_st_fp16": kotae_b64 / st_b64 >= 2 if kotae_b64 and st_b64 else None,
        "encoder_batch1_at_most_1ms": batch1 <= 1.0 if batch1 is not None else None,
        "retrieval_rerank_p95_at_most_10ms_at_200_rps": p95 <= 10.0 if p95 is not None else None,
    }


gpu = first("gpu")
device = (gpu.get("devices") or [{}])[0]
st = first("encoder", engine="sentence-transformers-fp16", batch=64).get("texts_per_s")
kotae = first("encoder", engine="kotae-cuda-fp16", batch=64).get("texts_per_s")
print(
    json.dumps(
        {
            "name": "summary",
            "dry_run": sys.argv[1] == "true",
            "gpu": {
                "present": gpu.get("present"),
                "name": device.get("name"),
                "compute_capability": device.get("compute_capability"),
                "precision": device.get("precision"),
            },
            "st_fp16_batch1_p50_ms": first("encoder", engine="sentence-transformers-fp16", batch=1).get("p50_ms"),
            "st_fp16_batch64_texts_per_s": first("encoder", engine="sentence-transformers-fp16", batch=64).get(
                "texts_per_s"
            ),
            "st_fp16_vs_fp32_min_cosine": first("fp16_vs_fp32").get("min_cosine"),
            "build_s": (first("build").get("milliseconds") or 0) / 1e3 or None,  # everything, target <= 240 on 16 cores
            "llama_cuda_build_s": (first("llama_cpp_build").get("milliseconds") or 0) / 1e3 or None,
            "llama_cuda_batch1_p50_ms": first("encoder", engine="llama.cpp-cuda-f16", batch=1).get("p50_ms"),
            "llama_cuda_batch64_texts_per_s": first("encoder", engine="llama.cpp-cuda-f16", batch=64).get(
                "texts_per_s"
            ),
            "llama_cuda_parity_min_cosine": first("parity", engine="llama.cpp-cuda-f16").get("min_cosine"),
            "kotae_cuda_batch1_p50_ms": first("encoder", engine="kotae-cuda-fp16", batch=1).get("p50_ms"),
            "kotae_cuda_batch64_texts_per_s": first("encoder", engine="kotae-cuda-fp16", batch=64).get("texts_per_s"),
            "kotae_cuda_parity_min_cosine": first("parity", engine="kotae-cuda-fp16").get("min_cosine"),
            "kotae_cuda_vs_cpu_reference_min_cosine": first("cpu_reference").get("min_cosine"),
            "kotae_cuda_plugin_ok": first("cuda_plugin_check").get("ok"),
            "kotae_cuda_throughput_vs_st_fp16": kotae / st if kotae and st else None,
            # From text, through Kotae's tokenizer (retrieval_bench): directly and through the dynamic batcher.
            "kotae_encoder_from_text_batch1_p50_ms": first(
                "encoder", **{"from": "text", "batcher": False, "batch": 1}
            ).get("p50_ms"),
            "kotae_encoder_from_text_batcher_1_caller_p50_ms": first(
                "encoder", **{"from": "text", "batcher": True, "batch": 1}
            ).get("p50_ms"),
            "kotae_encoder_from_text_batcher_64_callers_texts_per_s": first(
                "encoder", **{"from": "text", "batcher": True, "batch": 64}
            ).get("texts_per_s"),
            "kotae_rerank_100_pairs_p50_ms": first("rerank", pairs=100, engine="kotae-cuda-fp16").get("p50_ms"),
            "st_cross_encoder_fp16_100_pairs_p50_ms": first("rerank", engine="sentence-transformers-fp16").get(
                "p50_ms"
            ),
            "kotae_cross_encoder_vs_cpu_reference_max_abs_diff": first("cross_encoder_reference").get(
                "max_abs_score_diff"
            ),
            "retrieval_rerank_at_50_rps": {
                k: first("retrieval_rerank", rate=50).get(k) for k in ("p50_ms", "p95_ms", "errors")
            },
            "retrieval_rerank_at_200_rps": {
                k: first("retrieval_rerank", rate=200).get(k) for k in ("p50_ms", "p95_ms", "errors")
            },
            "dry_run_path_checked": bool(first("retrieval_rerank", engine="kotae-cpu-reference-fp32")),
            "generation_gpu_tokens_per_s": first("generation", engine="llama.cpp-gpu").get("tokens_per_s"),
            "generation_gpu_prompt_tokens_per_s": first("generation", engine="llama.cpp-gpu").get(
                "prompt_tokens_per_s"
            ),
            "generation_cpu_tokens_per_s": first("generation", engine="llama.cpp-cpu").get("tokens_per_s"),
            # What bench/gpu/run does not measure: Kotae's server itself cannot travel to the GPU machine.
            "not_measured": ["kotae_serve_on_gpu"],
            "targets": targets(),
        }
    )
)
