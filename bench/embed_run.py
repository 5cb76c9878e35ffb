#!/usr/bin/env python3
"""Orchestrates bench/embed: builds the shared inputs from real Debian documentation, runs Kotae's
benchmark binary and every peer one after the other (never two at once), prints their JSON lines and
ends with a summary of the ratios the Inference core issue sets as targets.

Run through bench/embed, which prepares the Python environments and the Transformers.js packages.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts/python"))
import kotae_paths  # noqa: E402

MODELS = kotae_paths.models_dir()
REFERENCE = pathlib.Path("/usr/share/debian-reference/debian-reference.en.txt.gz")
FAQ = pathlib.Path("/usr/share/doc/debian/FAQ/debian-faq.en.txt.gz")
QUERY = "How do I install a package that is not in the Debian archive?"
# all-MiniLM-L6-v2: 6 layers, hidden 384, feed-forward 1536.
LAYERS, HIDDEN, FFN = 6, 384, 1536


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def real_lines(path: pathlib.Path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
        return [re.sub(r"\s+", " ", line).strip() for line in f]


def make_inputs(work: pathlib.Path, quick: bool, threads: int) -> dict:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(MODELS / "all-minilm-l6-v2" / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    count = lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)  # noqa: E731

    # Chunks of about 200 tokens: consecutive prose lines of the Debian Reference, then the FAQ; if that
    # is not enough, the Reference again with chunk boundaries shifted (still real, different chunks).
    reference, faq = real_lines(REFERENCE), real_lines(FAQ)
    n_chunks = 200 if quick else 2000
    chunks, seen = [], set()
    sources = [reference, faq] + [text[shift:] for shift in range(1, 60, 2) for text in (reference, faq)]
    for lines in sources:
        current = []
        for line in lines:
            if len(line) < 20:
                continue
            current.append(line)
            text = " ".join(current)
            if count(text) >= 190:
                if text not in seen:
                    seen.add(text)
                    chunks.append(text)
                current = []
                if len(chunks) == n_chunks:
                    break
        if len(chunks) == n_chunks:
            break
    # Queries: the Debian FAQ's questions (real, short).
    queries = sorted({l for l in faq if l.endswith("?") and 15 < len(l) < 90 and not l[0].isdigit()})
    cross_encoder = work / "cross-encoder"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts/python/make_test_cross_encoder.py"),
            str(cross_encoder),
            "--size",
            "minilm-l6",
        ],
        check=True,
        stdout=sys.stderr,
    )
    return {
        "models": {
            "fp32": str(MODELS / "all-minilm-l6-v2"),
            "int8": str(MODELS / "all-minilm-l6-v2-int8"),
            "cross_encoder": str(cross_encoder),
        },
        "query": QUERY,
        "queries": queries,
        "chunks": chunks,
        "rerank": {"query": QUERY, "passages": chunks[:50]},
        "settings": {
            "single_runs": 100 if quick else 300,
            "warmup": 10,
            "bulk_repeats": 1,
            "rerank_runs": 10 if quick else 30,
            "threads": threads,
            "batch_size": 32,
        },
        "token_stats": {"chunk_tokens_mean": sum(count(c) for c in chunks) / len(chunks), "query_tokens": count(QUERY)},
    }


def run(label: str, command: list[str], timeout: int) -> list[dict]:
    log(f"--- {label}: {' '.join(command)}")
    start = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return [{"case": "skipped", "impl": label, "reason": f"timed out after {timeout} s"}]
    lines = []
    for raw in done.stdout.splitlines():
        raw = raw.strip()
        if raw.startswith("{"):
            lines.append(json.loads(raw))
    if done.returncode != 0:
        log(done.stderr[-3000:])
        lines.append(
            {"case": "skipped", "impl": label, "reason": f"exit code {done.returncode}: {done.stderr.strip()[-300:]}"}
        )
    log(f"    {len(lines)} lines in {time.monotonic() - start:.0f} s")
    return lines


def flops_per_token(mean_length: float) -> float:
    """Multiply-adds x 2 of one token through the encoder: projections, feed-forward and attention."""
    dense = 4 * HIDDEN * HIDDEN + 2 * HIDDEN * FFN
    attention = 2 * mean_length * HIDDEN
    return 2.0 * LAYERS * (dense + attention)


def summarise(lines: list[dict], inputs: dict) -> dict:
    def pick(case, impl=None, precision="fp32", **match):
        return [
            l
            for l in lines
            if l.get("case") == case
            and (impl is None or l.get("impl") == impl)
            and l.get("precision", precision) == precision
            and all(l.get(k) == v for k, v in match.items())
        ]

    ours_single = pick("single_query", "kotae")
    ours_bulk = pick("bulk", "kotae")
    ours_bulk8 = pick("bulk", "kotae", "int8")
    peer_single = [l for l in pick("single_query") if l["impl"] != "kotae"]
    peer_bulk = [l for l in pick("bulk") if l["impl"] != "kotae"]
    best_single = min(peer_single, key=lambda l: l["p50_ms"], default=None)
    best_bulk = max(peer_bulk, key=lambda l: l["chunks_per_s"], default=None)
    c1 = pick("concurrency", "kotae", callers=1)
    c32 = pick("concurrency", "kotae", callers=32)
    gemm = [l for l in lines if l.get("case") == "gemm_peak"]
    summary = {
        "case": "summary",
        "targets": {
            "single_p50_vs_best_peer": "<= 0.5",
            "bulk_vs_best_peer": ">= 1.3",
            "int8_vs_fp32": ">= 1.7",
            "int8_static_vs_fp32": ">= 1.8",
            "int8_static_min_cosine": "> int8_min_cosine",
            "int8_static_p01_cosine": "> int8_p01_cosine",
            "c32_vs_c1_throughput": ">= 3",
            "c32_p99_vs_c1_p50": "< 4",
        },
    }
    if ours_single and best_single:
        summary["single_p50_vs_best_peer"] = ours_single[0]["p50_ms"] / best_single["p50_ms"]
        summary["best_single_peer"] = best_single["impl"]
    if ours_bulk and best_bulk:
        summary["bulk_vs_best_peer"] = ours_bulk[0]["chunks_per_s"] / best_bulk["chunks_per_s"]
        summary["best_bulk_peer"] = best_bulk["impl"]
    if ours_bulk and ours_bulk8:
        summary["int8_vs_fp32"] = ours_bulk8[0]["chunks_per_s"] / ours_bulk[0]["chunks_per_s"]
    ours_static = pick("bulk", "kotae", "int8-static")
    if ours_bulk and ours_static:
        summary["int8_static_vs_fp32"] = ours_static[0]["chunks_per_s"] / ours_bulk[0]["chunks_per_s"]
    if ours_bulk8 and ours_static:
        summary["int8_static_vs_int8"] = ours_static[0]["chunks_per_s"] / ours_bulk8[0]["chunks_per_s"]
    for precision in ("int8", "int8-static"):
        for fidelity in pick("fidelity", "kotae", precision):
            key = precision.replace("-", "_")
            summary[f"{key}_min_cosine"] = fidelity["min_cosine"]
            summary[f"{key}_p01_cosine"] = fidelity["p01_cosine"]
    if c1 and c32:
        summary["c32_vs_c1_throughput"] = c32[0]["throughput_per_s"] / c1[0]["throughput_per_s"]
        summary["c32_p99_vs_c1_p50"] = c32[0]["p99_ms"] / c1[0]["p50_ms"]
    if ours_bulk and gemm:
        mean_len = inputs["token_stats"]["chunk_tokens_mean"] + 2
        achieved = ours_bulk[0]["tokens_per_s"] * flops_per_token(mean_len) / 1e9
        summary["bulk_gflops"] = achieved
        summary["gemm_peak_gflops"] = max(g["gflops"] for g in gemm)
        summary["fraction_of_gemm_peak"] = achieved / summary["gemm_peak_gflops"]
    # The same ratios for the int8 model against the peers' int8 runs, for reading alongside.
    ours8, peers8 = (
        pick("single_query", "kotae", "int8"),
        [l for l in pick("single_query", None, "int8") if l["impl"] != "kotae"],
    )
    if ours8 and peers8:
        summary["int8_single_p50_vs_best_peer"] = ours8[0]["p50_ms"] / min(l["p50_ms"] for l in peers8)
    bulk8 = [l for l in pick("bulk", None, "int8") if l["impl"] != "kotae"]
    if ours_bulk8 and bulk8:
        summary["int8_bulk_vs_best_peer"] = ours_bulk8[0]["chunks_per_s"] / max(l["chunks_per_s"] for l in bulk8)
    c1_8, c32_8 = pick("concurrency", "kotae", "int8", callers=1), pick("concurrency", "kotae", "int8", callers=32)
    if c1_8 and c32_8:
        summary["int8_c32_vs_c1_throughput"] = c32_8[0]["throughput_per_s"] / c1_8[0]["throughput_per_s"]
        summary["int8_c32_p99_vs_c1_p50"] = c32_8[0]["p99_ms"] / c1_8[0]["p50_ms"]
    ran = sorted({l["impl"] for l in lines if l.get("case") not in ("skipped", "gemm_peak", "summary")})
    summary["peers_ran"] = [i for i in ran if i != "kotae"]
    summary["peers_skipped"] = [
        {"impl": l["impl"], "reason": l.get("reason")} for l in lines if l.get("case") == "skipped"
    ]
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller inputs; finishes in under 3 minutes")
    parser.add_argument("--out", help="also write every JSON line to this file")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--bench-python", required=True)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="kotae-bench-") as tmp:
        work = pathlib.Path(tmp)
        inputs = make_inputs(work, args.quick, args.threads)
        inputs_path = work / "inputs.json"
        inputs_path.write_text(json.dumps(inputs))
        log(
            f"inputs: {len(inputs['chunks'])} chunks of ~{inputs['token_stats']['chunk_tokens_mean']:.0f} tokens, "
            f"query of {inputs['token_stats']['query_tokens']} tokens, {len(inputs['queries'])} queries"
        )
        timeout = 600 if args.quick else 3600
        bench = str(ROOT / "build/release/bench/kotae-bench-embed")
        py = args.bench_python
        peers = ROOT / "bench/peers"
        runs = [
            ("kotae", [bench, "--inputs", str(inputs_path), "--seconds", "2" if args.quick else "10"]),
            ("gemm-probe", [py, str(peers / "gemm_probe.py"), "--inputs", str(inputs_path)]),
            ("onnxruntime-python", [py, str(peers / "ort_python.py"), "--inputs", str(inputs_path)]),
            # PyTorch is the slowest peer and does not use the same files; --quick keeps to its ONNX backend.
            (
                "sentence-transformers",
                [
                    py,
                    str(peers / "sentence_transformers_peer.py"),
                    "--inputs",
                    str(inputs_path),
                    "--impl",
                    "onnx" if args.quick else "onnx,torch",
                ],
            ),
            ("fastembed", [py, str(peers / "fastembed_peer.py"), "--inputs", str(inputs_path)]),
            ("transformers.js", ["node", str(peers / "transformersjs/peer.mjs"), "--inputs", str(inputs_path)]),
        ]
        lines = []
        for label, command in runs:
            if not pathlib.Path(command[1] if command[0] != bench else bench).exists():
                lines.append({"case": "skipped", "impl": label, "reason": f"{command[1]} is missing"})
                continue
            for line in run(label, command, timeout):
                print(json.dumps(line), flush=True)
                lines.append(line)
        summary = summarise(lines, inputs)
        print(json.dumps(summary), flush=True)
        if args.out:
            pathlib.Path(args.out).write_text("".join(json.dumps(l) + "\n" for l in lines + [summary]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
