#!/usr/bin/env python3
"""Writes what Hugging Face `tokenizers` makes of the parity corpus, for tests/text/tokenizer_parity_test.

    make_tokenizer_reference.py OUT.jsonl [--tokenizer PATH]

PATH defaults to the installed default model's tokenizer.json, found as the kotae binary finds it
($KOTAE_DATA, else $XDG_DATA_HOME/kotae, else ~/.local/share/kotae). Its padding is switched off and
truncation set per case. One JSON object a line:

  header     tokenizers version, the tokenizer file and its SHA-256, counts
  single     text, source (doc/edge/sweep), encodings
  pair       text, text_pair, source, encodings (truncation longest_first)
  normalize  text, normalized (the BertNormalizer's output)

Each encoding has ids, type_ids, offsets and max_lengths: those of SINGLE_MAX_LENGTHS or
PAIR_MAX_LENGTHS that all give exactly this output (0: no truncation). Offsets are in code points of
the text the token came from, as Python gives them.
"""

import argparse
import hashlib
import json
import pathlib
import sys

import tokenizers
from tokenizers import Tokenizer

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import corpus  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts/python"))
import kotae_paths  # noqa: E402

SINGLE_MAX_LENGTHS = [0, 256]
PAIR_MAX_LENGTHS = [0, 16, 32, 128, 256]
MAX_OVERFLOWS = 2000  # pairs that would make more are left out at that max_length (see overflow_count)


def default_tokenizer():
    return kotae_paths.data_dir() / "models/all-minilm-l6-v2/tokenizer.json"


def encode_all(tokenizer, inputs, max_length):
    if max_length:
        tokenizer.enable_truncation(max_length, strategy="longest_first")
    else:
        tokenizer.no_truncation()
    out = []
    for start in range(0, len(inputs), 512):  # bounded batches: truncation also builds the overflows
        out += [
            (e.ids, e.type_ids, [list(o) for o in e.offsets])
            for e in tokenizer.encode_batch(inputs[start : start + 512])
        ]
    return out


def overflow_count(n1, n2, max_length):
    """About how many overflowing pieces `tokenizers` builds when it truncates this pair: it pairs every
    piece of one text with every piece of the other, which runs to gigabytes for two long texts and a
    small max_length."""
    half = max(1, (max_length - 3) // 2)
    return -(-n1 // half) * -(-n2 // half)


def grouped(tokenizer, inputs, max_lengths, specials, affordable=lambda encoding, m: True):
    """For each input, its distinct encodings, each with the max_lengths that give it.

    `tokenizers` leaves an input alone when its tokens fit in max_length less the special tokens
    (truncate_encodings returns early), so such an input is encoded once, without truncation; the
    others are encoded at each max_length where `affordable` (given the untruncated encoding) allows."""
    full = encode_all(tokenizer, inputs, 0)
    size = [len(ids) - specials for ids, _, _ in full]
    by_length = {}
    for m in max_lengths:
        if m:
            chosen = [i for i in range(len(inputs)) if size[i] > m - specials and affordable(full[i], m)]
            by_length[m] = dict(zip(chosen, encode_all(tokenizer, [inputs[i] for i in chosen], m)))
    for i in range(len(inputs)):
        groups = []
        for m in max_lengths:
            if m == 0 or size[i] <= m - specials:
                encoding = full[i]
            elif i in by_length[m]:
                encoding = by_length[m][i]
            else:
                continue
            same = next((g for g in groups if g[0] == encoding), None)
            if same:
                same[1].append(m)
            else:
                groups.append((encoding, [m]))
        yield [
            {"max_lengths": lengths, "ids": ids, "type_ids": type_ids, "offsets": offsets}
            for (ids, type_ids, offsets), lengths in groups
        ]


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
    # Consecutive documentation texts (every fifth), consecutive edge cases, and edge cases against
    # documentation, so that truncation meets short, long and odd texts on either side.
    pairs = [((docs[i], docs[i + 1]), "doc") for i in range(0, len(docs) - 1, 5)]
    pairs += [((edges[i], edges[i + 1]), "edge") for i in range(len(edges) - 1)]
    pairs += [((edges[i], docs[(i * 67) % len(docs)]), "edge") for i in range(len(edges))]
    pairs += [((docs[-1 - i], edges[i]), "edge") for i in range(len(edges))]

    counts = {
        "single_texts": len(singles),
        "pair_texts": len(pairs),
        "doc_texts": len(docs),
        "edge_texts": len(edges),
        "sweep_texts": len(sweep),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as out:

        def write(record):
            out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")

        write(
            {
                "kind": "header",
                "tokenizers": tokenizers.__version__,
                "tokenizer_json": str(args.tokenizer),
                "tokenizer_sha256": hashlib.sha256(args.tokenizer.read_bytes()).hexdigest(),
                "single_max_lengths": SINGLE_MAX_LENGTHS,
                "pair_max_lengths": PAIR_MAX_LENGTHS,
                "counts": counts,
            }
        )
        texts = [t for t, _ in singles]
        for (text, source), encodings in zip(singles, grouped(tokenizer, texts, SINGLE_MAX_LENGTHS, 2)):
            write({"kind": "single", "source": source, "text": text, "encodings": encodings})
        inputs = [p for p, _ in pairs]

        def affordable(encoding, m):
            type_ids = encoding[1]
            return overflow_count(type_ids.count(0) - 2, type_ids.count(1) - 1, m) <= MAX_OVERFLOWS

        for ((a, b), source), encodings in zip(pairs, grouped(tokenizer, inputs, PAIR_MAX_LENGTHS, 3, affordable)):
            write({"kind": "pair", "source": source, "text": a, "text_pair": b, "encodings": encodings})
        for text in edges + sweep:
            write({"kind": "normalize", "text": text, "normalized": tokenizer.normalizer.normalize_str(text)})
    tmp.replace(args.out)
    print(f"{args.out}: {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
