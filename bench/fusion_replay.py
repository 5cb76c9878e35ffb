#!/usr/bin/env python3
"""Replays hybrid search's fusion offline from the lists `kotae eval --runs FILE` wrote.

usage: fusion_replay.py check DATASET RUNS
       fusion_replay.py grid DATASET RUNS [DATASET RUNS ...]

A fusion setting costs a full `kotae eval` per set and precision; replayed from the BM25 and vector
lists of one run it costs a second. The replay is search/rank_fusion.cpp's arithmetic, in the same
order, with the same ties, so it ranks exactly as Kotae does (`check` proves it on a run: it replays the
run's own settings and compares with its hybrid rows; the quality gate runs it).

  check  the run's own fusion setting replayed against its hybrid lists: the same documents in the
         same order for every query, and the same metrics. Exit 1 on any difference.
  grid   linear fusion over BM25 weights x agreement bonuses, and weighted RRF, on every set and
         precision given: one JSON line per setting with each cell's nDCG@10 and its margin over the
         better single mode (and their worst, their mean, and their mean weighted by questions), then, for each set, the setting chosen on the other sets (the best worst
         cell) and its margin on the set left out: how a default chosen on some sets does on a new one.
"""

import json
import math
import os
import sys
from collections import defaultdict


def load_qrels(dataset):
    judgements = defaultdict(dict)
    with open(os.path.join(dataset, "qrels", "test.tsv")) as f:
        for line in f:
            query, document, grade = line.rstrip("\n").split("\t")[:3]
            if query != "query-id":
                judgements[query][document] = int(grade)
    return judgements


def load_runs(path):
    """{(model, precision): {mode: {query: [(chunk, document, score), ...]}, "setting": hybrid's fusion}}"""
    runs = defaultdict(lambda: defaultdict(dict))
    with open(path) as f:
        for line in f:
            row = json.loads(line)
            hits = [(h["chunk"], h["document"], h["score"]) for h in row["hits"]]
            runs[(row["model"], row["precision"])][row["mode"]][row["query"]] = hits
            if "fusion" in row:
                runs[(row["model"], row["precision"])]["setting"] = row["fusion"]
    return runs


def documents_of(chunks):
    """Each document once, at its best chunk's place (search/retrieval_metrics.cpp rank_documents)."""
    seen, ranked = set(), []
    for document in chunks:
        if document not in seen:
            seen.add(document)
            ranked.append(document)
    return ranked


def metrics(ranked, judgements):
    """nDCG@10, MRR@10, recall@10, recall@100 of one ranking, as search/retrieval_metrics.cpp."""
    ideal = sorted((g for g in judgements.values() if g > 0), reverse=True)
    if not ideal:
        return None
    dcg = rr = found10 = found100 = 0
    for i, document in enumerate(ranked[:100]):
        grade = max(judgements.get(document, 0), 0)
        if grade == 0:
            continue
        if i < 10:
            rr = rr or 1 / (i + 1)
            dcg += grade / math.log2(i + 2)
            found10 += 1
        found100 += 1
    ideal_dcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal[:10]))
    return (dcg / ideal_dcg, rr, found10 / len(ideal), found100 / len(ideal))


def fuse(lists, setting):
    """search/rank_fusion.cpp: lists best first; returns the fused chunks as (chunk, document)."""
    weights = [setting["bm25_weight"], setting["vector_weight"]]
    fused, order = {}, []  # chunk -> [document, score, ranks]
    linear = setting["fusion"] == "linear"
    bounds = []
    for hits in lists:
        top = [score for _, _, score in hits[: max(setting["range"], 1)]]
        bounds.append((min(top), max(top)) if top else (0.0, 0.0))

    def normalised(list_index, score):
        low, high = bounds[list_index]
        return min(max((score - low) / (high - low), 0.0), 1.0) if high > low else 1.0

    for list_index, hits in enumerate(lists):
        for i, (chunk, document, score) in enumerate(hits):
            if chunk not in fused:
                fused[chunk] = [document, 0.0, [0] * len(lists), [0.0] * len(lists)]
                order.append(chunk)
            candidate = fused[chunk]
            if candidate[2][list_index]:
                continue
            candidate[2][list_index] = i + 1
            if linear:
                candidate[3][list_index] = normalised(list_index, score)
                candidate[1] += weights[list_index] * candidate[3][list_index]
            else:
                candidate[1] += weights[list_index] / (setting["rrf_k"] + (i + 1))
    if linear:
        for candidate in fused.values():
            agreeing = sum(1 for r, n in zip(candidate[2], candidate[3]) if r and n > 0)
            if agreeing > 1:
                candidate[1] *= 1 + setting["agreement_bonus"] * (agreeing - 1)

    def key(chunk):
        _, score, ranks, _ = fused[chunk]
        return (-score, min(r for r in ranks if r), chunk)

    return [(chunk, fused[chunk][0]) for chunk in sorted(order, key=key)]


def replay(run, qrels, setting, depth):
    """Mean metrics of the setting's fusion of the run's bm25 and vector lists, and the rankings."""
    sums, count, rankings = [0.0] * 4, 0, {}
    for query, bm25 in run["bm25"].items():
        fused = fuse([bm25, run["vector"][query]], setting)[:depth]
        rankings[query] = documents_of([document for _, document in fused])
        m = metrics(rankings[query], qrels.get(query, {}))
        if m:
            sums = [s + x for s, x in zip(sums, m)]
            count += 1
    return [s / count for s in sums], rankings


def mode_metrics(run, mode, qrels):
    per_query = [metrics(documents_of([d for _, d, _ in hits]), qrels.get(q, {})) for q, hits in run[mode].items()]
    per_query = [m for m in per_query if m]
    return [sum(column) / len(per_query) for column in zip(*per_query)]


def check(dataset, runs_file):
    qrels, failures = load_qrels(dataset), []
    for (model, precision), run in load_runs(runs_file).items():
        depth = max(len(hits) for hits in run["hybrid"].values())
        got, rankings = replay(run, qrels, run["setting"], depth)
        want = mode_metrics(run, "hybrid", qrels)
        differing = [q for q, hits in run["hybrid"].items() if documents_of([d for _, d, _ in hits]) != rankings[q]]
        print(
            json.dumps(
                {
                    "model": model,
                    "precision": precision,
                    "replayed_ndcg@10": got[0],
                    "kotae_ndcg@10": want[0],
                    "queries_ranked_differently": len(differing),
                }
            )
        )
        if differing or any(abs(a - b) > 1e-9 for a, b in zip(got, want)):
            failures.append(f"{model} {precision}: {len(differing)} queries ranked differently, e.g. {differing[:3]}")
    if failures:
        sys.exit("the replay does not rank as kotae does: " + "; ".join(failures))


def grid(pairs):
    cells = []  # (set name, model, precision, run, qrels, best single mode's nDCG@10)
    for dataset, runs_file in pairs:
        qrels = load_qrels(dataset)
        for (model, precision), run in sorted(load_runs(runs_file).items()):
            best = max(mode_metrics(run, mode, qrels)[0] for mode in ("bm25", "vector"))
            cells.append((os.path.basename(os.path.normpath(dataset)), model, precision, run, qrels, best))
    base = dict(cells[0][3]["setting"], fusion="linear", vector_weight=1.0)  # the range and RRF k the runs used
    settings = [
        dict(base, bm25_weight=w, agreement_bonus=b)
        for w in (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.5)
        for b in (0.0, 0.1, 0.2, 0.3, 0.5)
    ]
    settings += [dict(base, fusion="rrf", rrf_k=k, bm25_weight=w) for k in (20, 60) for w in (0.3, 0.5, 1.0)]
    margins = []  # per setting: {set name: [margin per cell]}
    for setting in settings:
        per_set = defaultdict(list)
        row = {"setting": setting, "cells": []}
        for name, model, precision, run, qrels, best in cells:
            ndcg = replay(run, qrels, setting, 300)[0][0]
            per_set[name].append(ndcg - best)
            row["cells"].append(
                {
                    "set": name,
                    "model": model,
                    "precision": precision,
                    "questions": len(run["bm25"]),
                    "ndcg@10": round(ndcg, 4),
                    "margin": round(ndcg - best, 4),
                }
            )
        row["worst_margin"] = round(min(min(m) for m in per_set.values()), 4)
        row["mean_margin"] = round(sum(c["margin"] for c in row["cells"]) / len(row["cells"]), 4)
        row["mean_margin_per_question"] = round(
            sum(c["margin"] * c["questions"] for c in row["cells"]) / sum(c["questions"] for c in row["cells"]), 4
        )
        margins.append(per_set)
        print(json.dumps(row))
    names = list(margins[0])
    for held_out in names if len(names) > 1 else []:
        others = [n for n in names if n != held_out]
        chosen = max(range(len(settings)), key=lambda i: min(min(margins[i][n]) for n in others))
        print(
            json.dumps(
                {
                    "held_out": held_out,
                    "chosen_on_the_others": settings[chosen],
                    "worst_margin_on_the_others": round(min(min(margins[chosen][n]) for n in others), 4),
                    "margin_on_held_out": [round(m, 4) for m in margins[chosen][held_out]],
                }
            )
        )


def main():
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "check" and len(sys.argv) == 4:
        check(sys.argv[2], sys.argv[3])
    elif command == "grid" and len(sys.argv) >= 4 and len(sys.argv) % 2 == 0:
        grid(list(zip(sys.argv[2::2], sys.argv[3::2])))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
