#!/usr/bin/env python3
"""Do extractive answers read well? The Debian FAQ questions, answered by one back-end (bench/answer_quality).

usage: answer_fluency.py URL COLLECTION DATASET_DIR [QUESTIONS] [BACKEND]

DATASET_DIR is bench/make_debian_faq_beir.py's output (queries.jsonl, corpus.jsonl, qrels/test.tsv);
each question's relevant document is its FAQ answer section. Asks POST /v1/ask (cache off, one
question at a time; all questions unless QUESTIONS is given; BACKEND defaults to extractive) and
measures, over the answered questions:

  complete   an answer whose every sentence is complete. The answer's sentences are its citations'
             texts (an extractive answer is exactly its cited sentences); for a generated answer, its
             text split after . ! ? and line breaks. A sentence is complete when
               * it starts with an upper-case letter, a digit, or an opening quote or bracket followed
                 by one of those, or with a word of code (a lower-case word holding a digit, / - _ . or
                 in backticks, such as apt-get or /etc/fstab);
               * its first word is not a conjunction or relative pronoun that needs a head (and, or,
                 but, nor, which, whom, whose, whereas);
               * it ends with . ! or ? (perhaps followed by closing quotes or brackets);
               * its brackets balance and no word is broken by hyphenation (a letter, "- " and a
                 lower-case letter, which is what a line break inside "hyphen-ated" leaves).
             A plain lower-case first word ("dpkg is ...") counts as incomplete: the test cannot tell
             a lower-case name from a clause cut from its head.
  quotable   an answer that quotes a sentence a person would quote: one of the relevant section's
             substantive sentences. The section's sentences are split like the engine's text (after
             . ! ? followed by a space, not after e.g./i.e.; and at line breaks); substantive ones
             are complete (above), have at least 5 words, do not only point elsewhere (they do not
             start with "see", "refer to", "for more (information|details)", "more information",
             "please read/see/refer", nor are they an "If ..., please read/see ..." instruction to
             read something else) and do not restate the question (under 80% of their content
             words are the question's). The answer quotes one when the sentence, lower-cased with
             every run of non-alphanumerics read as one space, occurs in the answer's text read
             the same way.
  quotable_lead  the same for the section's first substantive sentence only: FAQ answers lead
             with the answer, so this is the sentence a person would quote first.
  leading_crossref  an answer whose first sentence only points elsewhere (the test above).

Prints one JSON line per question with a failure (its question, the failing sentence), then the
summary line.
"""

import json
import re
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from answer_quality import STOP, ask  # noqa: E402

CONNECTIVES = {"and", "or", "but", "nor", "which", "whom", "whose", "whereas"}
OPENERS = "\"'([\u201c\u2018\u00ab`"
CLOSERS = "\"')]\u201d\u2019\u00bb`"
ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.", "dr.", "mr.", "no.")
POINTER = re.compile(
    r"^(?:if [^,]*, )?(?:please )?(?:see\b|refer to\b|read\b|consult\b|check out\b|look at\b)"
    r"|^for (?:more|further|additional|detailed) (?:information|details|info)\b"
    r"|^for details\b|^more (?:information|details)\b|^details (?:are|can be)\b",
    re.I,
)


def first_word(sentence):
    return re.match(r"\S*", sentence.lstrip(OPENERS)).group(0)


def incomplete(sentence):
    """Why `sentence` is not a complete sentence, or None when it is."""
    s = sentence.strip()
    if not s:
        return "empty"
    body = s.lstrip(OPENERS)
    if not body:
        return "no words"
    c = body[0]
    word = first_word(s)
    if s[0] in CLOSERS and s[0] not in OPENERS or c in ")]}.,;:!?":
        return "starts with closing punctuation"
    if re.sub(r"\W+$", "", word).lower() in CONNECTIVES:
        return "starts with a conjunction or relative pronoun"
    code = s[0] == "`" or re.search(r"[0-9/_.\-]", word.rstrip(".,;:")) is not None
    if not (c.isupper() or c.isdigit() or code):
        return "starts with a lower-case word"
    if not re.search(r"[.!?][" + re.escape(CLOSERS) + r"]*$", s):
        return "no sentence-final mark"
    if s.count("(") != s.count(")") or s.count("[") != s.count("]"):
        return "unbalanced brackets"
    if re.search(r"[a-z]- [a-z]", s):
        return "hyphenation break inside a word"
    return None


def split_sentences(text):
    out = []
    for line in text.split("\n"):
        start = 0
        for m in re.finditer(r"[.!?][" + re.escape(CLOSERS) + r"]*(?=\s)", line):
            before = line[start : m.end()].split()
            if before and before[-1].lower() in ABBREVIATIONS:
                continue
            out.append(line[start : m.end()].strip())
            start = m.end()
        out.append(line[start:].strip())
    return [s for s in out if s]


def words(text):
    return re.findall(r"[a-z0-9]+", text.lower())


def content(text):
    return {w for w in words(text) if len(w) >= 3 and w not in STOP}


def points_elsewhere(sentence):
    return POINTER.search(sentence.lstrip(OPENERS)) is not None


def restates(sentence, question):
    mine = content(sentence)
    return bool(mine) and len(mine & content(question)) >= 0.8 * len(mine)


def substantive(sentence, question):
    return (
        incomplete(sentence) is None
        and len(sentence.split()) >= 5
        and not points_elsewhere(sentence)
        and not restates(sentence, question)
    )


def flat(text):
    return " " + " ".join(words(text)) + " "


def answer_sentences(answer):
    if answer["citations"]:
        return [c["text"] for c in sorted(answer["citations"], key=lambda c: c["answer_start"])]
    return split_sentences(re.sub(r"\s*\[\d+\]", "", answer["answer"]))


def load(dataset):
    with open(f"{dataset}/queries.jsonl") as f:
        queries = [json.loads(line) for line in f]
    with open(f"{dataset}/corpus.jsonl") as f:
        corpus = {d["_id"]: d["text"] for d in map(json.loads, f)}
    relevant = {}
    with open(f"{dataset}/qrels/test.tsv") as f:
        next(f)
        for line in f:
            q, d, score = line.rstrip("\n").split("\t")
            if int(score) > 0:
                relevant.setdefault(q, []).append(d)
    return [(q["text"], [corpus[d] for d in relevant.get(q["_id"], []) if d in corpus]) for q in queries]


def judge(question, sections, answer):
    """(complete, quotable, quotable_lead, leading_crossref, first failing sentence and why)."""
    sentences = answer_sentences(answer)
    failures = [(s, incomplete(s)) for s in sentences if incomplete(s)]
    said = flat(" ".join(sentences))
    quotable = lead = False
    for section in sections:
        good = [s for s in split_sentences(section) if substantive(s, question)]
        quotable |= any(flat(s) in said for s in good)
        lead |= bool(good) and flat(good[0]) in said
    crossref = bool(sentences) and points_elsewhere(sentences[0])
    return not failures, quotable, lead, crossref, failures[0] if failures else None


def main():
    url, collection, dataset = sys.argv[1], sys.argv[2], sys.argv[3]
    count = int(sys.argv[4]) if len(sys.argv) > 4 else None
    backend = sys.argv[5] if len(sys.argv) > 5 else "extractive"
    questions = load(dataset)[:count]
    totals = {"complete": 0, "quotable": 0, "quotable_lead": 0, "leading_crossref": 0}
    answered = failed = 0
    for question, sections in questions:
        body = {
            "collection": collection,
            "question": question,
            "backends": [backend],
            "cache": False,
            "max_tokens": 256,
        }
        try:
            answer, _ = ask(url, body)
        except Exception:  # noqa: BLE001 -- counted
            failed += 1
            continue
        if not answer["covered"]:
            continue
        answered += 1
        complete, quotable, lead, crossref, failure = judge(question, sections, answer)
        for name, value in zip(totals, (complete, quotable, lead, crossref)):
            totals[name] += value
        if failure or not quotable or crossref:
            print(
                json.dumps(
                    {
                        "name": "answer_fluency_case",
                        "question": question,
                        "complete": complete,
                        "quotable": quotable,
                        "leading_crossref": crossref,
                        "incomplete": failure and {"sentence": failure[0], "why": failure[1]},
                        "answer": answer["answer"],
                    }
                ),
                flush=True,
            )
    summary = {
        "name": "answer_fluency",
        "backend": backend,
        "questions": len(questions),
        "answered": answered,
        "failures": failed,
    }
    for name, value in totals.items():
        summary[f"{name}_share"] = round(value / answered, 3) if answered else 0.0
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
