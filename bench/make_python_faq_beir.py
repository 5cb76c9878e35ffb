#!/usr/bin/env python3
"""Builds the Python FAQ retrieval dataset in BEIR layout for `kotae eval --dataset DIR`.

Usage: python3 bench/make_python_faq_beir.py OUT_DIR [FAQ_DIR]

A second set of real questions and answers no one here wrote, from another documentation package
than the Debian FAQ: the Python FAQ of Debian's python3.11-doc (FAQ_DIR defaults to
/usr/share/doc/python3.11/html/faq). The same layout and rules as make_debian_faq_beir.py:
  * queries: every h2/h3 heading of the FAQ pages (Sphinx HTML, the page's main body only) that
    contains a '?';
  * relevant document (one per query): that question's answer section, up to the next h2/h3
    heading, without the question line; title "" so the question's words cannot leak into it.
    Answers shorter than 40 characters are dropped;
  * distractors: every other section of the FAQ, and every section of the HOWTOs beside it
    (FAQ_DIR/../howto/*.html), titled with its heading.
Paragraphs are separated by a blank line; code blocks keep their lines. The output is deterministic.
Prints a one-line JSON summary.
"""

import glob
import html.parser
import json
import os
import re
import sys

from beir_layout import write_beir

MIN_ANSWER = 40
BLOCK = {"p", "li", "dt", "dd", "pre", "tr", "div", "br", "table", "blockquote", "ul", "ol", "dl", "section"}


def norm(text):
    return re.sub(r"[ \t\r\f\v]+", " ", text).strip()


class FaqPage(html.parser.HTMLParser):
    """Sections (heading, paragraphs) of a Sphinx page's main body, split at h1/h2/h3."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.sections = []  # [level, heading, [paragraph parts]]
        self.depth = 0  # div nesting inside the main body; 0: outside it
        self.heading = None  # level of the heading being read
        self.skip = 0  # inside a headerlink anchor (the pilcrow)
        self.pre = 0
        self.text = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "div":
            if self.depth:
                self.depth += 1
            elif attrs.get("role") == "main" or "body" in (attrs.get("class") or "").split():
                self.depth = 1
            return
        if not self.depth:
            return
        if tag == "a" and "headerlink" in (attrs.get("class") or ""):
            self.skip += 1
        elif tag in ("h1", "h2", "h3"):
            self.flush()
            self.heading = int(tag[1])
            self.sections.append([self.heading, "", []])
        elif tag == "pre":
            self.flush()
            self.pre += 1
        elif tag in BLOCK:
            self.flush()

    def handle_endtag(self, tag):
        if tag == "div" and self.depth:
            self.depth -= 1
            return
        if not self.depth:
            return
        if tag == "a" and self.skip:
            self.skip -= 1
        elif tag in ("h1", "h2", "h3") and self.heading:
            self.sections[-1][1] = norm("".join(self.text))
            self.text, self.heading = [], None
        elif tag == "pre":
            self.flush(keep_lines=True)
            self.pre -= 1
        elif tag in BLOCK:
            self.flush()

    def handle_data(self, data):
        if self.depth and not self.skip:
            self.text.append(data)

    def flush(self, keep_lines=False):
        if self.heading or not self.sections:
            if not self.sections:
                self.text = []
            return
        raw = "".join(self.text)
        self.text = []
        if keep_lines or self.pre:
            block = "\n".join(line.rstrip() for line in raw.strip("\n").splitlines())
        else:
            block = norm(raw.replace("\n", " "))
        if block.strip():
            self.sections[-1][2].append(block)


def sections(path):
    page = FaqPage()
    with open(path, encoding="utf-8") as f:
        page.feed(f.read())
    page.flush()
    return [(level, heading, "\n\n".join(paragraphs)) for level, heading, paragraphs in page.sections]


def build(faq_dir):
    queries, corpus = [], []
    for path in sorted(glob.glob(os.path.join(faq_dir, "*.html"))):
        base = os.path.basename(path).removesuffix(".html")
        if base == "index":
            continue
        for n, (level, heading, text) in enumerate(sections(path)):
            doc_id = f"{base}-{n}"
            if level >= 2 and "?" in heading and len(text) >= MIN_ANSWER:
                queries.append((f"q-{doc_id}", heading, doc_id))
                corpus.append((doc_id, "", text))
            elif text:
                corpus.append((doc_id, heading, text))
    for path in sorted(glob.glob(os.path.join(faq_dir, "..", "howto", "*.html"))):
        base = "howto-" + os.path.basename(path).removesuffix(".html")
        if base == "howto-index":
            continue
        for n, (_, heading, text) in enumerate(sections(path)):
            if text:
                corpus.append((f"{base}-{n}", heading, text))
    return queries, corpus


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    out = sys.argv[1]
    faq_dir = sys.argv[2] if len(sys.argv) == 3 else "/usr/share/doc/python3.11/html/faq"
    queries, corpus = build(faq_dir)
    if not queries:
        sys.exit(f"no questions found in {faq_dir} (the Debian package python3.11-doc installs them)")
    write_beir(
        out,
        corpus,
        [(query_id, text) for query_id, text, _ in queries],
        [(query_id, doc_id, 1) for query_id, _, doc_id in queries],
    )
    print(json.dumps({"queries": len(queries), "documents": len(corpus), "out": out}))


if __name__ == "__main__":
    main()
