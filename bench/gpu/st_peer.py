"""The GPU benchmark's peer: the default embedding model's weights through sentence-transformers in
FP16 on the GPU. Encoder latency at batch 1 and throughput at batch 64 (short sentences from the
example documents), and the FP16 vectors' cosine to FP32. JSON lines.

Usage: st_peer.py MODEL_DIR TEXT_FILE [--check] [--seconds S] [--texts-out FILE] [--tokens-out FILE]
       st_peer.py CROSS_ENCODER_DIR PASSAGES_FILE --rerank-pairs N --queries FILE [--seconds S]
  --check: only read the inputs (what the dry run can do without a GPU or torch)
  --rerank-pairs: sentence-transformers' CrossEncoder in FP16 scoring N (query, passage) pairs per
    call (max length 256, as Kotae's bench), each query against the passages after it
"""

import argparse
import json
import re
import statistics
import struct
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: latency_stats
from latency_stats import percentile  # noqa: E402


def sentences(path, limit=4096):
    text = open(path, encoding="utf-8").read()
    found = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if 20 <= len(s.strip()) <= 300]
    out = []
    while len(out) < limit:
        out.extend(found)
    return out[:limit]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model_dir")
    parser.add_argument("text_file")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--texts-out", help="also write the texts, one per line (what the llama.cpp bench encodes)")
    parser.add_argument(
        "--tokens-out", help="also write their token ids by the model's tokenizer (the CUDA bench's input)"
    )
    parser.add_argument("--rerank-pairs", type=int)
    parser.add_argument("--queries")
    args = parser.parse_args()
    if args.rerank_pairs:
        rerank(args)
        return
    texts = sentences(args.text_file)
    if args.texts_out:
        with open(args.texts_out, "w", encoding="utf-8") as out:
            out.write("\n".join(t.replace("\n", " ") for t in texts) + "\n")
    if args.check:
        print(json.dumps({"name": "sentence_transformers_fp16", "check": True, "sentences": len(set(texts))}))
        return

    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(args.model_dir, device="cuda")
    model.half()
    if args.tokens_out:
        ids = model.tokenizer(texts, truncation=True, max_length=256)["input_ids"]
        with open(args.tokens_out, "wb") as out:
            out.write(struct.pack("<i", len(ids)))
            for row in ids:
                out.write(struct.pack("<i%di" % len(row), len(row), *row))
    sync = torch.cuda.synchronize

    def encode(batch):
        vectors = model.encode(batch, batch_size=len(batch), convert_to_tensor=True, normalize_embeddings=True)
        sync()
        return vectors

    for _ in range(20):
        encode(texts[:64])
    latencies = []
    deadline = time.perf_counter() + args.seconds
    i = 0
    while time.perf_counter() < deadline:
        start = time.perf_counter()
        encode([texts[i % len(texts)]])
        latencies.append((time.perf_counter() - start) * 1e3)
        i += 1
    print(
        json.dumps(
            {
                "name": "encoder",
                "engine": "sentence-transformers-fp16",
                "batch": 1,
                "calls": len(latencies),
                "p50_ms": percentile(latencies, 50),
                "p95_ms": percentile(latencies, 95),
                "p99_ms": percentile(latencies, 99),
                "texts_per_s": 1e3 / statistics.mean(latencies),
            }
        )
    )

    batches, texts_done, start = [], 0, time.perf_counter()
    deadline = start + args.seconds
    while time.perf_counter() < deadline:
        offset = (len(batches) * 64) % (len(texts) - 64)
        t0 = time.perf_counter()
        encode(texts[offset : offset + 64])
        batches.append((time.perf_counter() - t0) * 1e3)
        texts_done += 64
    elapsed = time.perf_counter() - start
    print(
        json.dumps(
            {
                "name": "encoder",
                "engine": "sentence-transformers-fp16",
                "batch": 64,
                "calls": len(batches),
                "p50_ms": percentile(batches, 50),
                "p95_ms": percentile(batches, 95),
                "texts_per_s": texts_done / elapsed,
            }
        )
    )

    half = encode(texts[:256]).float()
    model.float()
    full = encode(texts[:256]).float()
    cosine = torch.nn.functional.cosine_similarity(half, full).min().item()
    print(
        json.dumps(
            {
                "name": "fp16_vs_fp32",
                "engine": "sentence-transformers",
                "texts": 256,
                "min_cosine": cosine,
                "torch": torch.__version__,
                "device": torch.cuda.get_device_name(0),
            }
        )
    )


def rerank(args):
    import torch
    from sentence_transformers import CrossEncoder

    passages = [line.strip() for line in open(args.text_file, encoding="utf-8") if line.strip()]
    queries = [line.strip() for line in open(args.queries, encoding="utf-8") if line.strip()]
    model = CrossEncoder(args.model_dir, device="cuda", max_length=256)
    model.model.half()
    n = args.rerank_pairs

    def pairs(round_):
        query = queries[round_ % len(queries)]
        return [(query, passages[(round_ + i) % len(passages)]) for i in range(n)]

    def score(batch):
        scores = model.predict(batch, batch_size=n, convert_to_tensor=True, show_progress_bar=False)
        torch.cuda.synchronize()
        return scores

    for r in range(5):
        score(pairs(r))
    latencies, round_ = [], 0
    deadline = time.perf_counter() + args.seconds
    while time.perf_counter() < deadline:
        batch = pairs(round_)
        start = time.perf_counter()
        score(batch)
        latencies.append((time.perf_counter() - start) * 1e3)
        round_ += 1
    print(
        json.dumps(
            {
                "name": "rerank",
                "engine": "sentence-transformers-fp16",
                "from": "text",
                "pairs": n,
                "max_tokens": 256,
                "calls": len(latencies),
                "p50_ms": percentile(latencies, 50),
                "p95_ms": percentile(latencies, 95),
                "pairs_per_s": n * 1e3 / statistics.mean(latencies),
            }
        )
    )


if __name__ == "__main__":
    main()
