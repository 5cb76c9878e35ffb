"""How long a document committed through one replica takes to be found on another: uploads N small
documents, each with a word of its own, to replica A and, from the moment A finds it (A applies its own
commit right after committing it), polls replica B until B finds it too. Prints one JSON line:
name=propagation, p50_ms, p95_ms, p99_ms, max_ms, documents, missed (never found within 10 s).

With a fifth argument "ack" (replicas with a work queue, where a worker indexes the upload), each
latency runs from the upload's 202 until B finds it, and the line is named queue_propagation.

Usage: cluster_propagation.py URL_A URL_B COLLECTION N [ack]. Python standard library only."""

import json
import sys
import time
import urllib.request

from latency_stats import percentile


def post(url, path, body, content_type="application/json"):
    request = urllib.request.Request(url + path, data=body, headers={"Content-Type": content_type})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def finds(url, collection, word):
    hits = post(
        url, "/v1/search", json.dumps({"collection": collection, "query": word, "mode": "bm25", "k": 1}).encode()
    )["hits"]
    return bool(hits) and word in hits[0]["text"]


def wait(predicate, timeout=10.0, pause=0.002):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return time.monotonic()
        time.sleep(pause)
    return None


def main():
    a, b, collection, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    from_ack = sys.argv[5:] == ["ack"]
    latencies, missed = [], 0
    for i in range(count):
        word = "propagx%dq%d" % (int(time.time()), i)
        text = ("# Note %d\n\nThe %s note is number %d.\n" % (i, word, i)).encode()
        body = (
            b'--kb\r\nContent-Disposition: form-data; name="files"; filename="note-%d.md"\r\n'
            b"Content-Type: text/markdown\r\n\r\n" % i + text + b"\r\n--kb--\r\n"
        )
        post(a, "/v1/collections/%s/documents" % collection, body, "multipart/form-data; boundary=kb")
        if from_ack:
            acknowledged = time.monotonic()
            on_b = wait(lambda: finds(b, collection, word), timeout=60)
            if not on_b:
                missed += 1
                continue
            latencies.append(1000 * (on_b - acknowledged))
            continue
        on_a = wait(lambda: finds(a, collection, word), timeout=60)
        on_b = on_a and wait(lambda: finds(b, collection, word))
        if not on_b:
            missed += 1
            continue
        latencies.append(1000 * max(0.0, on_b - on_a))
    print(
        json.dumps(
            {
                "name": "queue_propagation" if from_ack else "propagation",
                "documents": count,
                "missed": missed,
                "p50_ms": percentile(latencies, 50),
                "p95_ms": percentile(latencies, 95),
                "p99_ms": percentile(latencies, 99),
                "max_ms": max(latencies, default=None),
            }
        )
    )


if __name__ == "__main__":
    main()
