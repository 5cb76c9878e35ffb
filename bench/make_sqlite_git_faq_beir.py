#!/usr/bin/env python3
"""Builds a third retrieval set in BEIR layout for `kotae eval --dataset DIR`: the SQLite and Git FAQs.

Usage: python3 bench/make_sqlite_git_faq_beir.py OUT_DIR [SQLITE_DOC_DIR] [GIT_DOC_DIR]

Real questions and answers no one here wrote, from two more documentation packages than the other
sets (Debian's sqlite3-doc, /usr/share/doc/sqlite3, and git-doc, /usr/share/doc/git-doc), kept out
of every choice of defaults so far: a check of those choices on questions they were not tuned on.
The same rules as make_debian_faq_beir.py and make_python_faq_beir.py:
  * queries: every question of SQLite's faq.html ("(N) question" paragraphs) and every entry of
    gitfaq(7) ("question::" items) that contains a '?';
  * relevant documents: its answer, without the question (grade 2; title "" so the question's words
    cannot leak into it; answers shorter than 40 characters are dropped), and, for SQLite, the
    sections its answer links to (grade 1: the FAQ's authors' own pointers to where it is answered
    at length; the section holding a linked anchor, or every section of a page linked whole). These
    manuals answer their FAQs again elsewhere, so judging the FAQ's answer alone would count those
    pages as wrong;
  * distractors: every h1/h2 section of the other SQLite pages (not the C API reference) and every
    section of Git's user manual and tutorials, titled with their headings.
The output is deterministic. Prints a one-line JSON summary.
"""

import glob
import html
import json
import os
import re
import sys

from beir_layout import write_beir

MIN_ANSWER = 40


def plain(markup):
    """Text of an HTML fragment: tags dropped, block ends as line breaks, entities decoded."""
    markup = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", markup)
    markup = re.sub(r"(?i)</?(p|li|dt|dd|pre|tr|div|br|table|blockquote|ul|ol|dl|h[1-6])\b[^>]*>", "\n", markup)
    text = html.unescape(re.sub(r"<[^>]+>", "", markup))
    lines = [re.sub(r"[ \t\r\f\v]+", " ", line).strip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def sqlite_faq(doc_dir):
    """(id, question, answer, [(page, anchor or "")] the answer links to)."""
    page = open(os.path.join(doc_dir, "faq.html"), encoding="utf-8").read()
    parts = re.split(r'<a name="q(\d+)"></a>', page)
    for number, body in zip(parts[1::2], parts[2::2]):
        m = re.match(r"\s*<p><b>\(\d+\)\s*(.*?)</b></p>(.*)", body, re.S)
        if m:
            links = [
                (target[:-5], anchor.lstrip("#"))
                for target, anchor in re.findall(r'href="([a-z0-9_]+\.html)(#[^"]*)?"', m.group(2))
            ]
            yield "sqlite-q" + number, " ".join(plain(m.group(1)).split()), plain(m.group(2)), links


def git_faq(doc_dir):
    text = open(os.path.join(doc_dir, "gitfaq.txt"), encoding="utf-8").read()
    for m in re.finditer(r"^\[\[([a-z0-9-]+)\]\]\n(.+?)::\n(.*?)(?=^\[\[|^\S.*\n-{3,}$|\Z)", text, re.S | re.M):
        answer = re.sub(r"^\t", "", m.group(3), flags=re.M).strip()
        yield "git-" + m.group(1), " ".join(m.group(2).split()), answer, []


def sqlite_sections(doc_dir):
    for path in sorted(glob.glob(os.path.join(doc_dir, "*.html"))):
        name = os.path.basename(path)[:-5]
        if name in ("faq", "capi3ref") or name.startswith("c3ref"):
            continue
        page = open(path, encoding="utf-8", errors="replace").read()
        page = re.sub(r"(?is)^.*?<div class=.fancy.>|^.*?</div><!-- menu -->", "", page, count=1)
        pieces = re.split(r"(?i)<h[12][^>]*>(.*?)</h[12]>", page)
        for i in range(1, len(pieces) - 1, 2):
            title, body = plain(pieces[i]), plain(pieces[i + 1])
            # anchors inside the section (and on its heading, which sits just before the split)
            anchors = set(re.findall(r'(?:name|id)="([^"]+)"', pieces[i - 1][-300:] + pieces[i] + pieces[i + 1]))
            if title and len(body) >= MIN_ANSWER:
                yield "sqlite-%s-%d" % (name, i // 2), title, body, name, anchors


def git_sections(doc_dir):
    for name in ("user-manual", "gittutorial", "gittutorial-2", "gitcore-tutorial", "everyday"):
        path = os.path.join(doc_dir, name + ".txt")
        if not os.path.exists(path):
            continue
        text = open(path, encoding="utf-8", errors="replace").read()
        pieces = re.split(r"(?m)^(?:={2,4} (.+)|(\S.*)\n[-~=^]{3,})$", text)
        # re.split with two groups: text, title_a, title_b, text, ...
        for i in range(1, len(pieces) - 2, 3):
            title = (pieces[i] or pieces[i + 1] or "").strip()
            body = pieces[i + 2].strip()
            if title and len(body) >= MIN_ANSWER:
                yield "git-%s-%d" % (name, i // 3), title, body, name, set()


def main():
    out = sys.argv[1]
    sqlite_dir = sys.argv[2] if len(sys.argv) > 2 else "/usr/share/doc/sqlite3"
    git_dir = sys.argv[3] if len(sys.argv) > 3 else "/usr/share/doc/git-doc"
    queries, corpus, qrels = [], [], []
    sections = list(sqlite_sections(sqlite_dir)) + list(git_sections(git_dir))
    for source in (sqlite_faq(sqlite_dir), git_faq(git_dir)):
        for doc_id, question, answer, links in source:
            if "?" not in question or len(answer) < MIN_ANSWER:
                continue
            queries.append(("q-" + doc_id, question))
            corpus.append((doc_id, "", answer))
            qrels.append(("q-" + doc_id, doc_id, 2))
            linked = set()
            for page, anchor in links:
                linked.update(
                    s_id
                    for s_id, _, _, s_page, anchors in sections
                    if s_page == page and (not anchor or anchor in anchors)
                )
            qrels.extend(("q-" + doc_id, s_id, 1) for s_id in sorted(linked))
    for doc_id, title, body, _, _ in sections:
        corpus.append((doc_id, title, body))
    write_beir(out, corpus, queries, qrels)
    print(json.dumps({"queries": len(queries), "documents": len(corpus), "judgements": len(qrels), "out": out}))


if __name__ == "__main__":
    main()
