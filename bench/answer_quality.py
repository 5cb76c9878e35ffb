#!/usr/bin/env python3
"""Are the answers grounded? Each back-end answers the same Debian FAQ questions (bench/answer_quality).

usage: answer_quality.py URL COLLECTION QUERIES.jsonl QUESTIONS BACKEND...

Asks POST /v1/ask (cache off, one question at a time) with each back-end alone and measures:

  supported   an answer is supported when every claim in it is: a claim is a sentence of the answer
              with at least 3 content words (lower-cased words of 3+ letters or digits, stop words
              left out); it is supported when it carries a valid citation (a [n] marker on it, or
              right after it, that names a source the answer was given) and at least 70% of its
              content words occur in the text of the sources it cites. A lexical measure: it checks
              that the words come from the cited text, not that the sentence means what the source
              says; it cannot be fooled by an uncited claim, and a copied sentence passes.
  cited       an answer with at least one valid citation.
  latency     the whole answer and its first token, p50 and p95 (ms), as the client sees them.

Shares are of the answered questions (those the collection covers by the relevance check; the
same for every back-end). Prints one JSON line per back-end, then the summary with the winner.
"""

import http.client
import json
import re
import sys
import time
import urllib.parse

from latency_stats import percentile

STOP = set(
    """the and for are but not you all any can had her was one our out has him his how its may new now
old see two way who did get let put say she too use that with have this will your from they know want been good
much some time very when come here just like long make many more only over such take than them well were what
into also each which their there would about could other these then those after where while should because does
being both same through before under during without within between again further once most own off few nor
answer question source sources cited cite""".split()
)


def content_words(text):
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 3 and w not in STOP]


def claims(answer):
    """(content words, cited source numbers) for each sentence of the answer that makes a claim. A
    sentence runs to its full stop (or line end) and takes the markers right after it."""
    text = answer["answer"]
    numbers = [(c["answer_start"], c["number"]) for c in answer["citations"]]
    out = []
    for m in re.finditer(r"[^.!?\n]+(?:[.!?]+|\n|$)(?:\s*\[\d+\])*", text):
        cited = {n for at, n in numbers if m.start() <= at < m.end()}
        words = content_words(re.sub(r"\[\d+\]", " ", m.group(0)))
        if len(words) >= 3:
            out.append((words, cited))
    return out


def judge(answer):
    sources = {s["number"]: set(content_words(s["text"])) for s in answer["sources"]}
    valid = [c for c in answer["citations"] if c["number"] in sources]
    made = claims(answer)
    supported = bool(made)
    for words, cited in made:
        cited = [n for n in cited if n in sources]
        known = set().union(*(sources[n] for n in cited)) if cited else set()
        if not cited or sum(w in known for w in words) < 0.7 * len(words):
            supported = False
    return supported, bool(valid), len(made)


def ask(url, body):
    where = urllib.parse.urlparse(url)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=600)
    started = time.perf_counter()
    connection.request("POST", "/v1/ask", json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    data = response.read()
    seconds = time.perf_counter() - started
    connection.close()
    if response.status != 200:
        raise RuntimeError(f"/v1/ask: {response.status} {data[:300]!r}")
    return json.loads(data), seconds


def main():
    url, collection, queries, count, backends = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:]
    with open(queries) as f:
        questions = [json.loads(line)["text"] for line in f][:count]
    summary = {
        "name": "summary",
        "questions": len(questions),
        "measure": "supported: every claim (a sentence of 3+ "
        "content words) carries a valid citation and 70% of its content words occur in the cited sources",
    }
    shares = {}
    for backend in backends:
        supported = cited = answered = claims_made = 0
        totals, first_tokens, failures = [], [], []
        for q in questions:
            body = {"collection": collection, "question": q, "backends": [backend], "cache": False, "max_tokens": 256}
            try:
                answer, seconds = ask(url, body)
            except Exception as e:  # noqa: BLE001 -- counted and shown
                failures.append(str(e))
                continue
            if not answer["covered"]:
                continue
            answered += 1
            ok, has_citation, n = judge(answer)
            supported += ok
            cited += has_citation
            claims_made += n
            totals.append(seconds * 1000)
            first_tokens.append(answer["timings_ms"]["first_token"])
        line = {
            "name": "answer_quality",
            "backend": backend,
            "questions": len(questions),
            "answered": answered,
            "supported_share": supported / answered if answered else 0.0,
            "cited_share": cited / answered if answered else 0.0,
            "claims_per_answer": claims_made / answered if answered else 0.0,
            "latency_p50_ms": percentile(totals, 50),
            "latency_p95_ms": percentile(totals, 95),
            "first_token_p50_ms": percentile(first_tokens, 50),
            "failures": len(failures),
        }
        if failures:
            line["first_failure"] = failures[0]
        shares[backend] = line["supported_share"]
        print(json.dumps(line), flush=True)
    best = max(shares, key=shares.get)
    summary["supported_share"] = shares
    summary["winner"] = best
    summary["margin"] = shares[best] - min(shares.values())
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
