#!/usr/bin/env python3
"""Writes what Hugging Face `tokenizers` makes of the parity corpus, for tests/text/tokenizer_parity_test.

    make_tokenizer_reference.py OUT.jsonl [--tokenizer PATH]

PATH defaults to the installed default model's tokenizer.json, found as the kotae binary finds it
($KOTAE_DATA, else $XDG_DATA_HOME/kotae, else ~/.local/share/kotae). Its padding is switched off and
truncation set per case. One JSON object a line:

  header     tokenizers version, the tokenizer file and its SHA-256, counts
  single     text, source (doc/edge/sweep), max_lengths, ids, type_ids, offsets
  pair       text, text_pair, source, max_lengths, ids, type_ids, offsets (longest_first)
  normalize  text, normalized (the BertNormalizer's output)

Offsets are in code points of the text the token came from, as Python gives them. max_length 0
means no truncation; the max_lengths of a record are those that all give exactly its output.
"""

import argparse
import hashlib
import json
import os
import pathlib
import sys

import tokenizers
from tokenizers import Tokenizer

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import corpus  # noqa: E402

SINGLE_MAX_LENGTHS = [0, 256]
PAIR_MAX_LENGTHS = [0, 8, 16, 32, 128, 256]


def default_tokenizer():
    if os.environ.get("KOTAE_DATA"):
        data = pathlib.Path(os.environ["KOTAE_DATA"])
    elif os.environ.get("XDG_DATA_HOME"):
        data = pathlib.Path(os.environ["XDG_DATA_HOME"]) / "kotae"
    else:
        data = pathlib.Path.home() / ".local/share/kotae"
    return data / "models/all-minilm-l6-v2/tokenizer.json"


def encode_all(tokenizer, inputs, max_length):
    if max_length:
        tokenizer.enable_truncation(max_length, strategy="longest_first")
    else:
        tokenizer.no_truncation()
    return [(e.ids, e.type_ids, [list(o) for o in e.offsets]) for e in tokenizer.encode_batch(inputs)]


def grouped(tokenizer, inputs, max_lengths):
    """For each input, its distinct outputs, each with the max_lengths that give it."""
    by_length = {m: encode_all(tokenizer, inputs, m) for m in max_lengths}
    for i in range(len(inputs)):
        groups = {}
        for m in max_lengths:
            key = json.dumps(by_length[m][i])
            groups.setdefault(key, (by_length[m][i], []))[1].append(m)
        yield list(groups.values())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--tokenizer", type=pathlib.Path, default=default_tokenizer())
    args = parser.parse_args()

    tokenizer = Tokenizer.from_file(str(args.tokenizer))
    tokenizer.no_padding()

    docs = corpus.documentation_texts()
    edges = corpus.edge_cases()
    sweep = corpus.sweep_texts()
    singles = [(t, "doc") for t in docs] + [(t, "edge") for t in edges] + [(t, "sweep") for t in sweep]
    # Consecutive documentation texts (every third), consecutive edge cases, and edge cases against
    # documentation, so that truncation meets short, long and odd texts on either side.
    pairs = [((docs[i], docs[i + 1]), "doc") for i in range(0, len(docs) - 1, 3)]
    pairs += [((edges[i], edges[i + 1]), "edge") for i in range(len(edges) - 1)]
    pairs += [((edges[i], docs[(i * 67) % len(docs)]), "edge") for i in range(len(edges))]
    pairs += [((docs[-1 - i], edges[i]), "edge") for i in range(len(edges))]

    counts = {"single_texts": len(singles), "pair_texts": len(pairs), "doc_texts": len(docs),
              "edge_texts": len(edges), "sweep_texts": len(sweep)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as out:
        def write(record):
            out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")

        write({"kind": "header", "tokenizers": tokenizers.__version__, "tokenizer_json": str(args.tokenizer),
               "tokenizer_sha256": hashlib.sha256(args.tokenizer.read_bytes()).hexdigest(),
               "single_max_lengths": SINGLE_MAX_LENGTHS, "pair_max_lengths": PAIR_MAX_LENGTHS, "counts": counts})
        texts = [t for t, _ in singles]
        for (text, source), groups in zip(singles, grouped(tokenizer, texts, SINGLE_MAX_LENGTHS)):
            for (ids, type_ids, offsets), lengths in groups:
                write({"kind": "single", "source": source, "text": text, "max_lengths": lengths, "ids": ids,
                       "type_ids": type_ids, "offsets": offsets})
        inputs = [p for p, _ in pairs]
        for ((a, b), source), groups in zip(pairs, grouped(tokenizer, inputs, PAIR_MAX_LENGTHS)):
            for (ids, type_ids, offsets), lengths in groups:
                write({"kind": "pair", "source": source, "text": a, "text_pair": b, "max_lengths": lengths,
                       "ids": ids, "type_ids": type_ids, "offsets": offsets})
        for text in edges + sweep:
            write({"kind": "normalize", "text": text, "normalized": tokenizer.normalizer.normalize_str(text)})
    tmp.replace(args.out)
    print(f"{args.out}: {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
