#!/usr/bin/env python3
"""Embeds real text chunks with Kotae's own CLI for the vector-index benchmark.

Usage: python3 bench/make_chunk_vectors.py --kotae PATH --out DIR [--count 10000] [--queries 1000]

Text: the Debian Reference and the Debian FAQ (plain-text editions,
/usr/share/debian-reference/*.en.txt.gz, /usr/share/doc/debian/FAQ/*.en.txt.gz)
and, because those two hold only ~120k words, the GNU manuals in
/usr/share/info (coreutils, findutils, sed, grep, gettext, gnupg, ...; whatever
the machine has, sorted by name). Each source is cut into windows of WINDOW
words; the stride is chosen so that count + queries windows cover the text
evenly (consecutive windows overlap, as a chunker with overlap does). Every
(count + queries) / queries -th window is held out as a query; the rest are
the base vectors. Queries are therefore embeddings of held-out real texts.

Writes DIR/base.npy and DIR/queries.npy (float32, C order, shape (n, dim), unit
vectors as `kotae embed` returns them) and DIR/meta.json. Python stdlib only.
"""

import argparse
import array
import glob
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time

WINDOW = 200
SOURCES = ["/usr/share/debian-reference/debian-reference.en.txt.gz", "/usr/share/doc/debian/FAQ/debian-faq.en.txt.gz"]
INFO_GLOB = "/usr/share/info/*.info*.gz"
BATCH = 1000


def source_words():
    paths = [p for p in SOURCES if os.path.exists(p)]
    if len(paths) != len(SOURCES):
        sys.exit(
            "error: %s missing (install debian-reference-en and debian-faq: scripts/setup)"
            % ", ".join(sorted(set(SOURCES) - set(paths)))
        )
    paths += sorted(glob.glob(INFO_GLOB))
    out = []
    for p in paths:
        with gzip.open(p, "rt", encoding="utf-8", errors="replace") as f:
            text = f.read()
        text = re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", " ", text)  # info node markers
        out.append((p, text.split()))
    return out


def windows(sources, wanted):
    total = sum(len(w) for _, w in sources)
    stride = max(10, min(WINDOW, total // wanted))
    out = []
    for _, words in sources:
        for start in range(0, max(1, len(words) - WINDOW // 4), stride):
            out.append(" ".join(words[start : start + WINDOW]))
    if len(out) < wanted:
        sys.exit("error: only %d windows of text found, %d wanted" % (len(out), wanted))
    return out, stride, total


def embed(kotae, model, texts):
    rows = []
    for at in range(0, len(texts), BATCH):
        batch = texts[at : at + BATCH]
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
            f.write("\n".join(batch) + "\n")
            name = f.name
        try:
            out = subprocess.run(
                [kotae, "embed", "--json", "--model", model, "--input", name],
                check=True,
                stdout=subprocess.PIPE,
                text=True,
            ).stdout
        finally:
            os.unlink(name)
        got = [json.loads(l)["embedding"] for l in out.splitlines() if l.strip()]
        if len(got) != len(batch):
            sys.exit("error: kotae embed returned %d vectors for %d texts" % (len(got), len(batch)))
        rows += got
        print("embedded %d/%d" % (len(rows), len(texts)), file=sys.stderr)
    return rows


def write_npy(path, rows):
    assert sys.byteorder == "little"
    dim = len(rows[0])
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (len(rows), dim)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"  # total header multiple of 64
    data = array.array("f")
    for r in rows:
        assert len(r) == dim
        data.extend(r)
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
        f.write(data.tobytes())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kotae", required=True, help="the kotae binary")
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--model", default="all-minilm-l6-v2-int8")
    ap.add_argument("--count", type=int, default=10000, help="base vectors")
    ap.add_argument("--queries", type=int, default=1000, help="query vectors")
    a = ap.parse_args()

    t0 = time.time()
    sources = source_words()
    texts, stride, total = windows(sources, a.count + a.queries)
    every = (a.count + a.queries) // a.queries
    query_idx = [i for i in range(len(texts)) if i % every == every // 2][: a.queries]
    held = set(query_idx)
    base_idx = [i for i in range(len(texts)) if i not in held][: a.count]
    if len(query_idx) < a.queries or len(base_idx) < a.count:
        sys.exit("error: not enough text for %d + %d windows" % (a.count, a.queries))
    vectors = embed(a.kotae, a.model, [texts[i] for i in base_idx + query_idx])
    os.makedirs(a.out, exist_ok=True)
    write_npy(os.path.join(a.out, "base.npy"), vectors[: a.count])
    write_npy(os.path.join(a.out, "queries.npy"), vectors[a.count :])
    meta = {
        "model": a.model,
        "dimension": len(vectors[0]),
        "base": a.count,
        "queries": a.queries,
        "window_words": WINDOW,
        "stride_words": stride,
        "words": total,
        "sources": [p for p, _ in sources],
        "queries_are": "held-out real text windows (every %dth window)" % every,
        "seconds": round(time.time() - t0, 1),
    }
    with open(os.path.join(a.out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    print(json.dumps({k: v for k, v in meta.items() if k != "sources"}))


if __name__ == "__main__":
    main()
