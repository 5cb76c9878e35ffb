"""Writes a retrieval set in BEIR layout, as `kotae eval --dataset DIR` reads it: DIR/corpus.jsonl
({"_id", "title", "text"}), DIR/queries.jsonl ({"_id", "text"}) and DIR/qrels/test.tsv
("query-id corpus-id score"). Shared by the bench/make_*_beir.py builders."""

import json
import os


def write_beir(out, corpus, queries, qrels):
    """corpus: (id, title, text); queries: (id, text); qrels: (query id, document id, grade)."""
    os.makedirs(os.path.join(out, "qrels"), exist_ok=True)
    with open(os.path.join(out, "corpus.jsonl"), "w") as f:
        for doc_id, title, text in corpus:
            f.write(json.dumps({"_id": doc_id, "title": title, "text": text}, ensure_ascii=False) + "\n")
    with open(os.path.join(out, "queries.jsonl"), "w") as f:
        for query_id, text in queries:
            f.write(json.dumps({"_id": query_id, "text": text}, ensure_ascii=False) + "\n")
    with open(os.path.join(out, "qrels", "test.tsv"), "w") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for query_id, doc_id, grade in qrels:
            f.write("%s\t%s\t%d\n" % (query_id, doc_id, grade))
