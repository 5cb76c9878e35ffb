#!/usr/bin/env python3
"""Retrieval-quality check of Kotae's fp32 vs int8 embedding models.

Dataset (deterministic, built from files shipped by Debian packages):
  * queries: every Debian FAQ heading (h2/h3 in /usr/share/doc/debian/FAQ/*.en.html)
    whose text contains a '?'; the section number ("3.1.2.") is stripped.
  * relevant document: the text of that heading's own section, up to the next
    h2/h3 heading, WITHOUT the heading line itself. Exactly one relevant
    document per query. Questions whose answer has < MIN_ANSWER characters
    (e.g. an h2 whose whole answer lies in h3 sub-questions) are dropped.
  * distractors: every other FAQ section (non-question sections and chapter
    intros included) plus the sections of the Debian Reference
    (/usr/share/debian-reference/ch*.en.html, split at h2/h3/h4 headings,
    heading text kept, each capped at REF_CAP characters).
  * FAQ documents longer than PIECE characters are split into several pieces
    with the same document id; a document ranks where its best piece ranks.
    Pieces longer than the model's 256-token window are truncated by the model.
Navigation headers/footers and tables of contents are excluded.

Metrics per model (dense retrieval, cosine = dot product of unit vectors),
document level: MRR@10, nDCG@10 (binary relevance), Recall@10, Recall@100.
Also the distribution of cosine(fp32 vector, int8 vector) over all texts.

Usage: python bench/faq_retrieval.py [--kotae PATH] [--out FILE]
"""

import argparse
import glob
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from debian_docs import FAQ_GLOB, MIN_ANSWER, REF_GLOB, norm, sections, strip_number

MODELS = ["all-minilm-l6-v2", "all-minilm-l6-v2-int8"]
PIECE = 1200  # FAQ pieces: ~ fits the 256-token window
REF_CAP = 1500  # Debian Reference documents: capped, not split


def pieces(text, size):
    """Split at word boundaries into pieces of at most ~size characters."""
    out, cur = [], ""
    for w in text.split(" "):
        if cur and len(cur) + 1 + len(w) > size:
            out.append(cur)
            cur = w
        else:
            cur = (cur + " " + w) if cur else w
    if cur:
        out.append(cur)
    return out


def build_dataset():
    queries = []  # (query text, relevant doc id)
    docs = []  # (doc id, text) pieces
    n_docs = 0
    dropped = 0
    for path in sorted(glob.glob(FAQ_GLOB)):
        base = os.path.basename(path)
        for i, sec in enumerate(sections(path, {2, 3})):
            body = sec.body
            q = strip_number(sec.heading)
            is_q = "?" in q
            if len(body) < MIN_ANSWER:
                dropped += is_q
                continue
            did = "faq:%s#%d" % (base, i)
            n_docs += 1
            for piece in pieces(body, PIECE):
                docs.append((did, piece))
            if is_q:
                queries.append((q, did))
    faq_docs = n_docs
    for path in sorted(glob.glob(REF_GLOB)):
        base = os.path.basename(path)
        for i, sec in enumerate(sections(path, {2, 3, 4})):
            body = sec.body
            text = norm(strip_number(sec.heading) + " " + body)
            if len(body) < MIN_ANSWER:
                continue
            did = "ref:%s#%d" % (base, i)
            n_docs += 1
            docs.append((did, pieces(text, REF_CAP)[0]))
    info = {
        "faq_documents": faq_docs,
        "reference_documents": n_docs - faq_docs,
        "documents": n_docs,
        "pieces": len(docs),
        "queries": len(queries),
        "questions_dropped_empty_answer": dropped,
    }
    return queries, docs, info


def embed(kotae, model, texts):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        for t in texts:
            t = norm(t)
            assert t
            f.write(t + "\n")
        name = f.name
    try:
        out = subprocess.run(
            [kotae, "embed", "--json", "--model", model, "--input", name], check=True, stdout=subprocess.PIPE, text=True
        ).stdout
    finally:
        os.unlink(name)
    rows = [json.loads(l)["embedding"] for l in out.splitlines() if l.strip()]
    assert len(rows) == len(texts), (len(rows), len(texts))
    m = np.asarray(rows, dtype=np.float64)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def evaluate(qv, dv, queries, doc_ids):
    ids = np.array(sorted(set(doc_ids)))
    col = {d: i for i, d in enumerate(ids)}
    piece_doc = np.array([col[d] for d in doc_ids])
    sims = qv @ dv.T  # queries x pieces
    best = np.full((len(queries), len(ids)), -np.inf)  # max over pieces
    np.maximum.at(best.T, piece_doc, sims.T)
    mrr = ndcg = r10 = r100 = 0.0
    ranks = []
    for qi, (_, rel) in enumerate(queries):
        s = best[qi]
        rank = int((s > s[col[rel]]).sum()) + 1  # 1-based, ties favourable
        ranks.append(rank)
        if rank <= 10:
            mrr += 1.0 / rank
            ndcg += 1.0 / math.log2(rank + 1)  # ideal DCG = 1
            r10 += 1
        r100 += rank <= 100
    n = len(queries)
    return {
        "mrr@10": mrr / n,
        "ndcg@10": ndcg / n,
        "recall@10": r10 / n,
        "recall@100": r100 / n,
        "queries": n,
        "documents": len(ids),
    }, ranks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--kotae", default=os.path.join(here, "..", "build", "release", "kotae"))
    ap.add_argument("--out", help="also write the JSON lines here")
    a = ap.parse_args()

    t0 = time.time()
    queries, docs, info = build_dataset()
    print(
        "dataset: %d queries, %d documents (%d FAQ answer/other sections, "
        "%d Debian Reference sections), %d pieces embedded"
        % (info["queries"], info["documents"], info["faq_documents"], info["reference_documents"], info["pieces"]),
        file=sys.stderr,
    )
    texts = [q for q, _ in queries] + [t for _, t in docs]
    doc_ids = [d for d, _ in docs]
    vecs, lines, secs, ranks = {}, [], {}, {}
    for model in MODELS:
        t = time.time()
        vecs[model] = embed(a.kotae, model, texts)
        secs[model] = round(time.time() - t, 1)
        print("%s: embedded %d texts in %.1fs" % (model, len(texts), secs[model]), file=sys.stderr)
        res = {"model": model}
        m, ranks[model] = evaluate(vecs[model][: len(queries)], vecs[model][len(queries) :], queries, doc_ids)
        res.update(m)
        res["pieces"] = info["pieces"]
        res["embed_seconds"] = secs[model]
        lines.append(res)
    fp, q8 = vecs[MODELS[0]], vecs[MODELS[1]]
    cos = np.sum(fp * q8, axis=1)
    cmp = {
        "comparison": "%s vs %s" % (MODELS[0], MODELS[1]),
        "texts": int(len(cos)),
        "cosine": {
            "min": float(cos.min()),
            "p01": float(np.percentile(cos, 1)),
            "p05": float(np.percentile(cos, 5)),
            "median": float(np.median(cos)),
            "mean": float(cos.mean()),
        },
        "delta_int8_minus_fp32": {
            k: lines[1][k] - lines[0][k] for k in ("mrr@10", "ndcg@10", "recall@10", "recall@100")
        },
        "queries_rank_changed": sum(x != y for x, y in zip(ranks[MODELS[0]], ranks[MODELS[1]])),
        "queries_rank_better_worse": [
            sum(y < x for x, y in zip(ranks[MODELS[0]], ranks[MODELS[1]])),
            sum(y > x for x, y in zip(ranks[MODELS[0]], ranks[MODELS[1]])),
        ],
        "dataset": info,
        "seconds": round(time.time() - t0, 1),
    }
    lines.append(cmp)
    text = "\n".join(json.dumps(l, sort_keys=False) for l in lines) + "\n"
    sys.stdout.write(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
