"""Shared plumbing of the embedding benchmark's Python peers: the input file, the command line,
timing, percentiles and the JSON lines they print (one object per line on stdout; diagnostics go to
stderr).

Percentiles are the one definition of every benchmark, bench/latency_stats.py (bench/README.md,
"Latency figures"): linear interpolation between the closest ranks.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import traceback
from typing import Callable, Iterable, Sequence

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: latency_stats
from latency_stats import latency  # noqa: E402

# all-MiniLM-L6-v2: sentence-transformers' max_seq_length (the tokenizer.json ships 128).
MAX_LENGTH = 256
# Cross-encoders (ms-marco MiniLM and the like) are trained on pairs up to 512 tokens.
RERANK_MAX_LENGTH = 512
RERANK_WARMUP = 2
PRECISIONS = ("fp32", "int8")
CASES = ("single_query", "bulk", "rerank50")


def log(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


def parse_args(description: str, extra: Callable[[argparse.ArgumentParser], None] | None = None):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--inputs", required=True, help="the benchmark's shared input file (JSON)")
    parser.add_argument("--precision", default="fp32,int8", help="comma-separated subset of fp32,int8 (default: both)")
    parser.add_argument(
        "--cases", default=",".join(CASES), help="comma-separated subset of " + ",".join(CASES) + " (default: all)"
    )
    parser.add_argument(
        "--dump",
        metavar="FILE",
        help="also write the embeddings of the query and the first 16 chunks per precision "
        "(JSON, untimed) to FILE, to check that the peers agree",
    )
    if extra:
        extra(parser)
    args = parser.parse_args()
    args.precisions = [p for p in args.precision.split(",") if p]
    args.case_list = [c for c in args.cases.split(",") if c]
    for p in args.precisions:
        if p not in PRECISIONS:
            parser.error(f"unknown precision {p!r}")
    for c in args.case_list:
        if c not in CASES:
            parser.error(f"unknown case {c!r}")
    return args


def load_inputs(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    settings = {"single_runs": 200, "warmup": 10, "bulk_repeats": 1, "rerank_runs": 20, "threads": 2, "batch_size": 32}
    settings.update(data.get("settings") or {})
    data["settings"] = settings
    data.setdefault("rerank", None)
    return data


def set_thread_env(threads: int) -> None:
    """Thread pools read these when they start: call before importing numpy, torch or onnxruntime."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)
    # Never reach a model hub: every peer loads local files only.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
    # The `tokenizers` library batches over a Rayon pool (its default: one thread per core); cap
    # it at the same thread count.
    os.environ["RAYON_NUM_THREADS"] = str(threads)


def emit(obj: dict) -> None:
    print(json.dumps(obj, separators=(",", ":")), flush=True)


def time_single(fn: Callable[[], object], warmup: int, runs: int) -> dict:
    """warmup untimed calls, then runs timed ones; latencies in ms."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - t0) / 1e6)
    figures = {k: round(v, 4) for k, v in latency(samples).items() if k != "runs"}
    return {
        **figures,
        "mean_ms": round(sum(samples) / len(samples), 4),
        "min_ms": round(min(samples), 4),
        "runs": runs,
    }


def time_bulk(fn: Callable[[Sequence[str]], object], chunks: Sequence[str], batch_size: int, repeats: int) -> float:
    """Wall seconds to embed every chunk in batches of batch_size (best of repeats)."""
    best = math.inf
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter_ns()
        for i in range(0, len(chunks), batch_size):
            fn(chunks[i : i + batch_size])
        best = min(best, (time.perf_counter_ns() - t0) / 1e9)
    return best


def bulk_record(impl: str, precision: str, chunks: Sequence[str], seconds: float, tokens: int, **extra) -> dict:
    return {
        "case": "bulk",
        "impl": impl,
        "precision": precision,
        "chunks": len(chunks),
        "seconds": round(seconds, 4),
        "chunks_per_s": round(len(chunks) / seconds, 3),
        "tokens_per_s": round(tokens / seconds, 1),
        "tokens": tokens,
        **extra,
    }


def count_tokens(tokenizer_json: str, texts: Iterable[str], max_length: int = MAX_LENGTH) -> int:
    """Tokens the model sees ([CLS] and [SEP] included, padding excluded) at max_length: the
    throughput denominator, counted with the `tokenizers` library on the same tokenizer.json, untimed."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(tokenizer_json)
    tok.no_padding()
    tok.enable_truncation(max_length)
    return sum(len(e.ids) for e in tok.encode_batch(list(texts)))


def skipped(impl: str, what: str, reason: str, version: str | None = None) -> None:
    obj = {"case": "skipped", "impl": impl, "what": what, "reason": reason}
    if version:
        obj["version"] = version
    emit(obj)


def guarded(impl: str, what: str, fn: Callable[[], None], version: str | None = None) -> bool:
    """Runs one case; an exception becomes a `skipped` line (traceback on stderr) so the other
    cases still run."""
    try:
        fn()
        return True
    except Exception as exc:  # noqa: BLE001 - a peer reports, it does not crash the run
        traceback.print_exc(file=sys.stderr)
        skipped(impl, what, f"error: {type(exc).__name__}: {exc}"[:500], version)
        return False


DUMP_CHUNKS = 16


class Dump:
    """Collects {precision: {"query": [...], "chunks": [[...], ...]}} for --dump."""

    def __init__(self, path: str | None, impl: str):
        self.path = path
        self.data: dict = {"impl": impl}

    def add(self, precision: str, embed: Callable[[Sequence[str]], object], query: str, chunks: Sequence[str]) -> None:
        if not self.path:
            return
        import numpy as np

        q = np.asarray(embed([query]), dtype=np.float32)[0]
        c = np.asarray(embed(list(chunks[:DUMP_CHUNKS])), dtype=np.float32)
        self.data[precision] = {"query": q.tolist(), "chunks": c.tolist()}

    def write(self) -> None:
        if self.path:
            with open(self.path, "w", encoding="utf-8") as f:
                json.dump(self.data, f)


def cosine_check(a, b) -> float:
    """Smallest row-wise cosine of two (n, d) arrays (used for sanity checks between peers)."""
    import numpy as np

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    num = (a * b).sum(axis=1)
    den = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return float((num / den).min())
