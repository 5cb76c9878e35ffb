#!/usr/bin/env python3
"""Builds the Perl FAQ retrieval set in BEIR layout for `kotae eval --dataset DIR`.

Usage: python3 bench/make_perl_faq_beir.py OUT_DIR [POD_DIR]

Real questions and answers no one here wrote, from Debian's perl-doc (POD_DIR defaults to
/usr/share/perl/5.*/pod): perlfaq1 to perlfaq9, about 300 questions, built after the fusion defaults
were chosen, to see them on questions they were not tuned on. The same rules as the other builders:
  * queries: every =head2 of perlfaq1-9 that contains a '?';
  * relevant documents: its answer up to the next heading, without the question (grade 2; title "",
    so the question's words cannot leak into it; answers shorter than 40 characters are dropped),
    and the sections its answer links to with L<page/section> (grade 1: the FAQ authors' own
    pointers; links to a whole page or to a module outside the set are not judgements);
  * distractors: every other section of the FAQ (perlfaq.pod, the =head1 parts) and every =head1 /
    =head2 section of the other pods, and every =item of perlfunc and perlvar (one function or
    variable each), titled with their heading.
POD markup is reduced to text (C<x> to x, L<text|target> to text, E<gt> to >). The output is
deterministic. Prints a one-line JSON summary.
"""

import glob
import json
import os
import re
import sys

from beir_layout import write_beir

MIN_ANSWER = 40
ESCAPES = {"gt": ">", "lt": "<", "verbar": "|", "sol": "/"}


def plain(pod):
    """POD paragraphs to text: commands other than headings dropped, formatting codes unwrapped."""
    pod = re.sub(r"^=(?:over|back|pod|cut|begin|end|for|encoding)\b.*$", "", pod, flags=re.M)
    pod = re.sub(r"^=item\s*", "", pod, flags=re.M)
    for _ in range(4):  # codes nest: C<L<x>>
        pod = re.sub(r"E<(\w+)>", lambda m: ESCAPES.get(m.group(1), ""), pod)
        pod = re.sub(r"L<([^<>|]*)\|[^<>]*>", r"\1", pod)
        pod = re.sub(r"L<\"?([^<>\"]*)\"?>", r"\1", pod)
        pod = re.sub(r"[BCIFSXZ]<<+\s(.*?)\s>>+", r"\1", pod)
        pod = re.sub(r"[BCIFSXZ]<([^<>]*)>", r"\1", pod)
    return re.sub(r"\n{3,}", "\n\n", pod).strip()


def link_targets(pod):
    """(page, section) of each L<page/section> or L<text|page/section>."""
    for target in re.findall(r"L<(?:[^<>|]*\|)?([A-Za-z0-9:]+)/\"?([^<>\"]+)\"?>", pod):
        yield target[0], target[1].strip()


def sections(page_name, pod, by_item=False):
    """(title, body, kind) per =head1/=head2 (and, with by_item, per =item) of one pod."""
    pattern = r"^=(head[12]|item)\s+(.*)$" if by_item else r"^=(head[12])\s+(.*)$"
    parts = re.split(pattern, pod, flags=re.M)
    for i in range(1, len(parts) - 2, 3):
        yield parts[i + 1].strip(), parts[i + 2], parts[i]


def key(title):
    """What a link's section is matched on: its words, lower-cased, without sigils or brackets."""
    return re.sub(r"[^a-z0-9_]+", " ", plain(title).lower()).split()[:1]


def main():
    out = sys.argv[1]
    pod_dir = sys.argv[2] if len(sys.argv) > 2 else sorted(glob.glob("/usr/share/perl/5.*/pod"))[-1]
    queries, corpus, qrels, faqs, others = [], [], [], [], []
    for path in sorted(glob.glob(os.path.join(pod_dir, "*.pod"))):
        name = os.path.basename(path)[:-4]
        pod = open(path, encoding="utf-8", errors="replace").read()
        is_faq = re.fullmatch(r"perlfaq[1-9]", name) is not None
        for n, (title, body, kind) in enumerate(sections(name, pod, by_item=name in ("perlfunc", "perlvar"))):
            text = plain(body)
            doc_id = "%s-%d" % (name, n)
            if is_faq and kind == "head2" and "?" in title and len(text) >= MIN_ANSWER:
                faqs.append((doc_id, " ".join(plain(title).split()), text, list(link_targets(body))))
            elif len(text) >= MIN_ANSWER:
                others.append((doc_id, " ".join(plain(title).split()), text, name, key(title)))
    for doc_id, question, answer, links in faqs:
        queries.append(("q-" + doc_id, question))
        corpus.append((doc_id, "", answer))
        qrels.append(("q-" + doc_id, doc_id, 2))
        linked = set()
        for page, section in links:
            wanted = key(section)
            linked.update(o[0] for o in others if o[3] == page and wanted and o[4] == wanted)
        qrels.extend(("q-" + doc_id, d, 1) for d in sorted(linked))
    for doc_id, title, text, _, _ in others:
        corpus.append((doc_id, title, text))
    write_beir(out, corpus, queries, qrels)
    print(json.dumps({"queries": len(queries), "documents": len(corpus), "judgements": len(qrels), "out": out}))


if __name__ == "__main__":
    main()
