"""Parsing of the Debian FAQ and Debian Reference HTML pages shipped by Debian packages.

Shared by the benchmark scripts that build retrieval datasets from them
(faq_retrieval.py, make_debian_faq_beir.py). Python standard library only.

A page is split into sections at the chosen heading levels. Each section keeps:
  * heading / body: whitespace-normalised text with every piece of markup read
    as a space (the form faq_retrieval.py has always used, kept bit-for-bit);
  * title / paragraphs: the same text read as a person sees it (inline markup
    joins without a space), split into paragraphs at block elements, code
    blocks keeping their line breaks, table rows one paragraph each, and the
    page's h1 title left out (it is the page's title, not body text).
Navigation headers/footers and tables of contents are left out of both.
"""

import collections
import html.parser
import re

FAQ_GLOB = "/usr/share/doc/debian/FAQ/*.en.html"
REF_GLOB = "/usr/share/debian-reference/ch*.en.html"
SKIP_DIV = {"navheader", "navfooter", "toc", "list-of-tables", "list-of-figures"}
BLOCK = {"p", "li", "dt", "dd", "pre", "tr", "td", "th", "div", "br", "table", "blockquote", "ul", "ol", "dl"}
CELL = {"td", "th"}  # separate cells of a row, not paragraphs
# Questions whose answer (flat body) is shorter are dropped, e.g. an h2 whose
# whole answer lies in h3 sub-questions.
MIN_ANSWER = 40

Section = collections.namedtuple("Section", "level heading body title paragraphs")

# Body tokens: (kind, text). "text" / "pre" (inside <pre>) / "title" (the
# page's h1 when h1 is not a split level) / "head" (<head><title>) carry data; "break" ends a
# paragraph; "cell" separates table cells inside one paragraph.
_BREAK = ("break", "\n")
_CELL = ("cell", " ")


def norm(s):
    return re.sub(r"\s+", " ", s).strip()


def strip_number(heading):
    """'3.1.2. What is X?' -> 'What is X?'"""
    return re.sub(r"^(\d+\.)+\s*", "", heading)


class Sectioner(html.parser.HTMLParser):
    """Splits a DocBook HTML page into sections at the given heading levels."""

    def __init__(self, split_levels):
        super().__init__(convert_charrefs=True)
        self.split_levels = split_levels
        self.sections = []  # [level, [heading parts], [body tokens]]
        self.div_stack = []  # True where the div is skipped
        self.skip_depth = 0
        self.in_heading = None
        self.in_title = False  # inside the page's h1 (not a split level)
        self.in_head_title = False  # inside <head><title>
        self.pre_depth = 0
        self.ignore = 0  # script/style
        self.page_title = ""
        self.cur = [0, [], []]  # text before the first split heading

    def handle_starttag(self, tag, attrs):
        if tag == "div":
            cls = set((dict(attrs).get("class") or "").split())
            skip = bool(cls & SKIP_DIV)
            self.div_stack.append(skip)
            self.skip_depth += skip
        if tag in ("script", "style"):
            self.ignore += 1
        if self.skip_depth or self.ignore:
            return
        if re.fullmatch(r"h[1-6]", tag):
            lvl = int(tag[1])
            if lvl in self.split_levels:
                self.sections.append(self.cur)
                self.cur = [lvl, [], []]
                self.in_heading = tag
            else:
                self.cur[2].append(_BREAK)
                self.in_title = lvl == 1 and not self.page_title
        elif tag in CELL:
            self.cur[2].append(_CELL)
        elif tag in BLOCK:
            self.cur[2].append(_BREAK)
        if tag == "pre":
            self.pre_depth += 1
        if tag == "title":
            self.in_head_title = True

    def handle_endtag(self, tag):
        if tag == "div" and self.div_stack:
            self.skip_depth -= self.div_stack.pop()
        if tag in ("script", "style") and self.ignore:
            self.ignore -= 1
        if tag == "pre" and self.pre_depth and not self.skip_depth:
            self.pre_depth -= 1
        if tag == "title":
            self.in_head_title = False
        if tag == self.in_heading:
            self.in_heading = None
        elif self.skip_depth:
            return
        elif re.fullmatch(r"h[1-6]", tag):
            self.cur[2].append(_BREAK)
            if self.in_title:
                self.page_title = norm("".join(t for k, t in self.cur[2] if k == "title"))
                self.in_title = False
        elif tag in CELL:
            self.cur[2].append(_CELL)
        elif tag in BLOCK:
            self.cur[2].append(_BREAK)

    def handle_data(self, data):
        if self.skip_depth or self.ignore:
            return
        if self.in_heading:
            self.cur[1].append(data)
        elif self.in_title:
            self.cur[2].append(("title", data))
        elif self.in_head_title:
            self.cur[2].append(("head", data))
        else:
            self.cur[2].append(("pre" if self.pre_depth else "text", data))

    def result(self):
        self.close()
        out = []
        for lvl, heading, tokens in self.sections + [self.cur]:
            body = norm(" ".join(t for _, t in tokens))
            out.append(Section(lvl, norm(" ".join(heading)), body, norm("".join(heading)), paragraphs(tokens)))
        return out


def paragraphs(tokens):
    """Body tokens -> paragraphs; code blocks keep their lines."""
    out, cur = [], []

    def flush():
        if all(k == "pre" for k, _ in cur):
            lines = [l.rstrip() for l in "".join(t for _, t in cur).split("\n")]
            text = "\n".join(lines).strip("\n")
        else:
            text = norm("".join(t for _, t in cur))
        if text.strip():
            out.append(text)
        cur.clear()

    for kind, text in tokens:
        if kind == "break":
            flush()
        elif kind not in ("title", "head"):
            cur.append((kind, text))
    flush()
    return out


def parse(path, levels):
    """(page title, [Section]) of one HTML page split at heading levels."""
    p = Sectioner(levels)
    with open(path, encoding="utf-8") as f:
        p.feed(f.read())
    secs = p.result()
    return p.page_title, secs


def sections(path, levels):
    return parse(path, levels)[1]
