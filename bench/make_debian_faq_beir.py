#!/usr/bin/env python3
"""Builds the Debian FAQ retrieval dataset in BEIR layout for `kotae eval --dataset DIR`.

Usage: python3 bench/make_debian_faq_beir.py OUT_DIR

Writes OUT_DIR/corpus.jsonl ({"_id", "title", "text"}), OUT_DIR/queries.jsonl
({"_id", "text"}) and OUT_DIR/qrels/test.tsv ("query-id corpus-id score",
tab-separated, score 1), from files shipped by Debian packages:
  * queries: every Debian FAQ heading (h2/h3 of /usr/share/doc/debian/FAQ/*.en.html,
    package debian-faq) containing a '?', section number stripped;
  * relevant document (one per query): that question's answer section, up to
    the next h2/h3 heading, WITHOUT the question line; title "" so the
    question's words cannot leak into the document. Questions whose answer
    is shorter than debian_docs.MIN_ANSWER characters
    (the threshold faq_retrieval.py uses) are dropped;
  * distractors: every other FAQ section (title = its heading; a chapter's
    intro has the chapter title), and every page of the Debian Reference
    (/usr/share/debian-reference/*.en.html but the index, package
    debian-reference-en) as one whole document titled with its chapter title.
Documents are whole sections / pages, not split (the engine chunks them);
paragraphs are separated by a blank line. Navigation headers/footers and
tables of contents are left out. The output is deterministic (same installed
packages, same bytes). Prints a one-line JSON summary.
"""

import glob
import json
import os
import sys

from debian_docs import FAQ_GLOB, MIN_ANSWER, parse, strip_number

REF_PAGES = "/usr/share/debian-reference/*.en.html"


def build():
    queries = []  # (query id, text, relevant doc id)
    corpus = []  # (doc id, title, text)
    for path in sorted(glob.glob(FAQ_GLOB)):
        base = os.path.basename(path).removesuffix(".en.html")
        page_title, secs = parse(path, {2, 3})
        for i, sec in enumerate(secs):
            question = strip_number(sec.title)
            if len(sec.body) < MIN_ANSWER:
                continue
            doc_id = "faq:%s#%d" % (base, i)
            text = "\n\n".join(sec.paragraphs)
            if "?" in question:
                assert text, doc_id
                queries.append(("q:%s#%d" % (base, i), question, doc_id))
                corpus.append((doc_id, "", text))
            elif text:  # not a chapter intro that is only its title
                corpus.append((doc_id, question or page_title, text))
    for path in sorted(glob.glob(REF_PAGES)):
        base = os.path.basename(path).removesuffix(".en.html")
        if base == "index":
            continue  # the table of contents
        page_title, secs = parse(path, set())
        text = "\n\n".join(p for sec in secs for p in sec.paragraphs)
        corpus.append(("ref:" + base, page_title, text))
    return queries, corpus


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return os.path.getsize(path)


def main():
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.exit("usage: %s OUT_DIR\n\n%s" % (sys.argv[0], __doc__.split("\n")[0]))
    out = sys.argv[1]
    if not glob.glob(FAQ_GLOB) or not glob.glob(REF_PAGES):
        sys.exit(
            "error: %s or %s not found (install the Debian packages debian-faq "
            "and debian-reference-en: scripts/setup)" % (FAQ_GLOB, REF_PAGES)
        )
    queries, corpus = build()
    ids = [d for d, _, _ in corpus]
    assert len(set(ids)) == len(ids), "duplicate document ids"
    assert all(t for _, _, t in corpus), "empty document"
    os.makedirs(os.path.join(out, "qrels"), exist_ok=True)
    size = write_jsonl(os.path.join(out, "corpus.jsonl"), ({"_id": d, "title": ti, "text": te} for d, ti, te in corpus))
    size += write_jsonl(os.path.join(out, "queries.jsonl"), ({"_id": q, "text": t} for q, t, _ in queries))
    qrels = os.path.join(out, "qrels", "test.tsv")
    with open(qrels, "w", encoding="utf-8", newline="\n") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for q, _, d in queries:
            f.write("%s\t%s\t1\n" % (q, d))
    size += os.path.getsize(qrels)
    print(
        json.dumps(
            {
                "dataset": "debian-faq",
                "out": out,
                "queries": len(queries),
                "documents": len(corpus),
                "relevant_pairs": len(queries),
                "faq_documents": sum(d.startswith("faq:") for d in ids),
                "reference_documents": sum(d.startswith("ref:") for d in ids),
                "bytes": size,
            }
        )
    )


if __name__ == "__main__":
    main()
