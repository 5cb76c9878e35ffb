"""The answer queue's cost: the same questions streamed from a replica that generates with its own
llama.cpp model (LOCAL) and from one whose answer workers generate with the same model through Redis
(WORKERS), taking turns question by question, so both see the machine in the same state. Measures the
time to the first token and to the whole answer, as the client sees them. A question the collection does
not cover (no back-end runs) is counted apart. Prints one JSON line per mode: name=answer, mode, questions,
not_covered, failed, first_token_p50_ms, first_token_p95_ms, total_p50_ms, total_p95_ms.

Usage: cluster_answers.py LOCAL_URL WORKERS_URL COLLECTION ROUNDS QUESTION... Python standard library only."""

import http.client
import json
import sys
import time
import urllib.parse

from latency_stats import percentile


def streamed(url, body):
    """(seconds to the first token, seconds to the end, the answering back-end) of one streamed answer."""
    where = urllib.parse.urlparse(url)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=120)
    started = time.perf_counter()
    connection.request("POST", "/v1/ask", json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    first, name, backend = None, None, None
    for raw in response:
        line = raw.decode().rstrip("\n")
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            if name == "token" and first is None:
                first = time.perf_counter() - started
            if name == "done":
                backend = json.loads(line[6:])["backend"]
    total = time.perf_counter() - started
    connection.close()
    return first, total, backend


def main():
    local, workers, collection, rounds, questions = (
        sys.argv[1],
        sys.argv[2],
        sys.argv[3],
        int(sys.argv[4]),
        sys.argv[5:],
    )
    expected = {"local": "llama.cpp", "workers": "workers"}
    figures = {"local": ([], [], 0), "workers": ([], [], 0)}
    not_covered = {"local": 0, "workers": 0}
    for i in range(rounds):
        body = {
            "collection": collection,
            "question": questions[i % len(questions)],
            "stream": True,
            "cache": False,
            "k": 1,
            "max_tokens": 32,
            "temperature": 0,
            "seed": 1,
        }
        for mode, url in (("local", local), ("workers", workers)):
            first, total, backend = streamed(url, body)
            firsts, totals, failed = figures[mode]
            if backend == "none":
                not_covered[mode] += 1
                continue
            if first is None or backend != expected[mode]:
                figures[mode] = (firsts, totals, failed + 1)
                continue
            firsts.append(1000 * first)  # ms
            totals.append(1000 * total)
    for mode, (firsts, totals, failed) in figures.items():
        print(
            json.dumps(
                {
                    "name": "answer",
                    "mode": mode,
                    "questions": len(firsts),
                    "not_covered": not_covered[mode],
                    "failed": failed,
                    "first_token_p50_ms": percentile(firsts, 50),
                    "first_token_p95_ms": percentile(firsts, 95),
                    "total_p50_ms": percentile(totals, 50),
                    "total_p95_ms": percentile(totals, 95),
                }
            )
        )


if __name__ == "__main__":
    main()
