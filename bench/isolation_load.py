#!/usr/bin/env python3
"""Do long generations slow down the quick requests beside them? (bench/isolation)

usage: isolation_load.py URL COLLECTION SECONDS CLIENTS GENERATIONS MAX_TOKENS

Measures POST /v1/embeddings and POST /v1/search latency with CLIENTS clients in closed loops for
SECONDS each, first on an idle server, then while GENERATIONS streamed chat completions of up to
MAX_TOKENS run without pause (each one asked again as soon as it ends). Prints one JSON line per
endpoint and state, then the summary: loaded p50 and p95 over idle.
"""

import http.client
import json
import sys
import threading
import time
import urllib.parse

from latency_stats import percentile

QUESTIONS = [
    "How do I upgrade Debian to the next release?",
    "What is a Debian package?",
    "How do I install a package with apt?",
    "Where are the Debian mailing lists?",
]


def connect(url):
    where = urllib.parse.urlparse(url)
    return http.client.HTTPConnection(where.hostname, where.port, timeout=300)


def post(connection, path, body):
    connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    data = response.read()
    if response.status != 200:
        raise RuntimeError(f"{path}: {response.status} {data[:200]!r}")


def closed_loop(url, path, body_of, seconds, clients):
    latencies, failures = [], []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def client(index):
        connection = connect(url)
        n = index
        while time.monotonic() < deadline:
            started = time.perf_counter()
            try:
                post(connection, path, body_of(n))
            except Exception as e:  # noqa: BLE001 -- counted and shown
                with lock:
                    failures.append(str(e))
                connection = connect(url)
                continue
            with lock:
                latencies.append(1000 * (time.perf_counter() - started))  # ms
            n += clients

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, failures


class Generations:
    """GENERATIONS streamed chat completions, each asked again as soon as it ends."""

    def __init__(self, url, count, max_tokens):
        self.url, self.max_tokens = url, max_tokens
        self.stop = False
        self.tokens = 0
        self.streaming = 0
        self.failures = []
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.run, args=(i,)) for i in range(count)]

    def run(self, index):
        body = {
            "stream": True,
            "max_tokens": self.max_tokens,
            "temperature": 0.8,
            "seed": index,
            "messages": [{"role": "user", "content": f"Write a long story about Debian number {index}."}],
        }
        counted = False
        while not self.stop:
            connection = connect(self.url)
            try:
                connection.request(
                    "POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"}
                )
                response = connection.getresponse()
                if response.status != 200:
                    raise RuntimeError(f"chat: {response.status} {response.read()[:200]!r}")
                for raw in response:
                    if self.stop:
                        break
                    if raw.startswith(b"data: {"):
                        with self.lock:
                            self.tokens += 1
                            if not counted:
                                self.streaming += 1
                                counted = True
            except Exception as e:  # noqa: BLE001 -- counted and shown
                with self.lock:
                    self.failures.append(str(e))
                time.sleep(0.5)
            finally:
                connection.close()

    def start(self):
        for t in self.threads:
            t.start()

    def finish(self):
        self.stop = True
        for t in self.threads:
            t.join()


def main():
    url, collection, seconds, clients, generations, max_tokens = (
        sys.argv[1],
        sys.argv[2],
        float(sys.argv[3]),
        int(sys.argv[4]),
        int(sys.argv[5]),
        int(sys.argv[6]),
    )
    endpoints = {
        "embeddings": ("/v1/embeddings", lambda n: {"input": QUESTIONS[n % len(QUESTIONS)]}),
        "search": ("/v1/search", lambda n: {"collection": collection, "query": QUESTIONS[n % len(QUESTIONS)], "k": 10}),
    }
    results = {}

    def measure(state):
        for name, (path, body_of) in endpoints.items():
            closed_loop(url, path, body_of, min(2.0, seconds), clients)  # warm-up
            latencies, failures = closed_loop(url, path, body_of, seconds, clients)
            line = {
                "name": "quick_request_latency",
                "endpoint": name,
                "state": state,
                "clients": clients,
                "requests": len(latencies),
                "failures": len(failures),
                "p50_ms": percentile(latencies, 50),
                "p95_ms": percentile(latencies, 95),
                "p99_ms": percentile(latencies, 99),
            }
            if failures:
                line["first_failure"] = failures[0]
            results[(name, state)] = line
            print(json.dumps(line), flush=True)

    measure("idle")
    load = Generations(url, generations, max_tokens)
    load.start()
    waited = time.monotonic()
    while load.streaming < generations and time.monotonic() - waited < 300:
        time.sleep(0.2)
    tokens_before, started = load.tokens, time.monotonic()
    measure(f"{generations}_generations")
    generated_per_s = (load.tokens - tokens_before) / (time.monotonic() - started)
    streaming = load.streaming
    load.finish()

    summary = {
        "name": "summary",
        "clients": clients,
        "generations": generations,
        "generations_streaming": streaming,
        "generated_tokens_per_s": generated_per_s,
        "generation_failures": len(load.failures),
    }
    met = streaming == generations
    for name in endpoints:
        idle, loaded = results[(name, "idle")], results[(name, f"{generations}_generations")]
        for p in ("p50", "p95"):
            ratio = loaded[p + "_ms"] / idle[p + "_ms"]
            summary[f"{name}_{p}_loaded_vs_idle"] = ratio
            met = met and ratio <= 1.5 and loaded["failures"] == 0
    summary["target"] = "embeddings and search p50 and p95 with the generations streaming <= 1.5x idle"
    summary["targets_met"] = met
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
