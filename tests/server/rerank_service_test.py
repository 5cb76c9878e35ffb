"""A reranking service as Kotae's rerank stage (--rerank-url), against real servers.

The service is a second, real `kotae serve` with the fixture's cross-encoder (--rerank): the server under
test points --rerank-url at its /rerank (TEI's shape), /v1/rerank (Cohere v1 and Jina's) and /v2/rerank
(Cohere v2's), and must rank exactly as the service's own local cross-encoder does, in several requests
when --rerank-batch is smaller than the candidates. A tiny Python HTTP server then plays a service
that is slow, answers garbage (malformed JSON, wrong or repeated indices, NaN, an HTTP 500, an answer
too large) or is stopped: searches and answers still succeed (200) in the fused order, with
`fallbacks` naming the rerank, within the timeout; after failures the circuit opens and later calls do
not wait for the service at all; a degraded answer is not cached; the API key is sent, never logged.

Usage: rerank_service_test.py KOTAE_BINARY DATA_DIR CROSS_ENCODER_DIR
"""

import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from kotae_http import Checks, Server, data_with_faq, json_request

KOTAE, DATA, CROSS_ENCODER = sys.argv[1], sys.argv[2], sys.argv[3]
QUERIES = ["How do I install software?", "What is Debian?", "How can I upgrade my system to a new release?"]
TIMEOUT_MS = 1000
COOL_DOWN_MS = 1000
KEY = "rerank-secret-4f1d2c"


def link_or_copy(source, target):
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def data_with_reranker(work):
    """The fixture's embedder and "faq" collection with the test cross-encoder beside them (copied: the
    server refuses a model folder that resolves outside its models folder)."""
    data = os.path.join(work, "service-data")
    models = os.path.join(data, "models")
    os.makedirs(models)
    embedder = os.path.realpath(os.path.join(DATA, "models", "all-minilm-l6-v2"))
    shutil.copytree(embedder, os.path.join(models, "all-minilm-l6-v2"), copy_function=link_or_copy)
    shutil.copytree(CROSS_ENCODER, os.path.join(models, "test-reranker"))
    shutil.copytree(os.path.join(DATA, "collections", "faq"), os.path.join(data, "collections", "faq"))
    return data


def served_requests(log_path, path):
    """Requests the service's log shows for `path`."""
    count = 0
    with open(log_path) as log:
        for line in log:
            if line.startswith("{"):
                event = json.loads(line)
                count += event.get("event") == "request" and event.get("path") == path
    return count


def search(port, query, **extra):
    start = time.time()
    status, body = json_request(
        port, "POST", "/v1/search", dict({"collection": "faq", "query": query, "k": 5}, **extra)
    )
    return status, body, time.time() - start


def chunk_ids(body):
    return [hit["chunk_id"] for hit in body["hits"]]


class Hostile:
    """A reranking service that misbehaves as told (`mode`), speaking Cohere v1's shape when it answers.
    Logs each request's body and Authorization header."""

    def __init__(self):
        self.mode, self.requests = "garbage", []
        hostile = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                hostile.requests.append({"body": body, "authorization": self.headers.get("Authorization")})
                n, mode = len(body["documents"]), hostile.mode
                good = [{"index": i, "relevance_score": 1.0 / (i + 1)} for i in range(n)]
                status, text = 200, json.dumps({"results": good})
                if mode == "slow":
                    time.sleep(5)
                elif mode == "malformed":
                    text = '{"results": [{"index": 0, "relevance_score": 1'
                elif mode == "wrong-index":
                    text = json.dumps({"results": [dict(r, index=r["index"] + 1) for r in good]})
                elif mode == "repeated-index":
                    text = json.dumps({"results": [dict(r, index=0) for r in good]})
                elif mode == "nan":
                    text = json.dumps({"results": [dict(r, relevance_score=float("nan")) for r in good]})
                elif mode == "too-large":
                    text = json.dumps({"results": good, "padding": "x" * (2 << 20)})
                elif mode == "http-500":
                    status, text = 500, '{"error": "CUDA out of memory"}'
                data = text.encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (timed out, or refused a body too large)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def check_remote_ranks_as_local(checks, service, work, path, api_flags, name):
    """A server whose rerank stage is the service at `path`: the same ranking as the service's own."""
    server = Server(
        KOTAE,
        data_with_faq(DATA, os.path.join(work, name)),
        os.path.join(work, name + ".log"),
        ["--rerank-url", "http://127.0.0.1:%d%s" % (service.port, path), "--rerank-batch", "4"] + api_flags,
    )
    server.start()
    changed = []
    try:
        for query in QUERIES:
            before = served_requests(service.log_path, path)
            status, remote, _ = search(server.port, query)
            time.sleep(0.3)  # the service's log lines are copied to its file by a thread
            sent = served_requests(service.log_path, path) - before
            _, local, _ = search(service.port, query)
            _, fused, _ = search(server.port, query, rerank=False)
            checks.check(
                "%s: reranked as the local cross-encoder ranks: %s" % (name, query),
                status == 200 and remote["fallbacks"] == [] and chunk_ids(remote) == chunk_ids(local),
                (status, remote.get("fallbacks"), chunk_ids(remote), chunk_ids(local)),
            )
            checks.check("%s: the candidates went as several requests of 4" % name, sent >= 2, sent)
            changed.append(chunk_ids(fused) != chunk_ids(remote))
        # Else the comparison above could not tell a rerank from none.
        checks.check("%s: the rerank reordered the fused hits of some query" % name, any(changed), changed)
        return server
    except Exception:
        server.stop()
        raise


def main():
    work = tempfile.mkdtemp(prefix="kotae-rerank-service-")
    checks = Checks()
    servers = []
    hostile = None
    try:
        service = Server(
            KOTAE, data_with_reranker(work), os.path.join(work, "service.log"), ["--rerank", "test-reranker"]
        )
        service.start()
        servers.append(service)

        # Both a local cross-encoder and a service: refused before anything starts.
        both = subprocess.run(
            [KOTAE, "serve", "--data", service.data, "--port", "0", "--rerank", "test-reranker"]
            + ["--rerank-url", "http://127.0.0.1:1/rerank"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        checks.check(
            "--rerank and --rerank-url together are refused",
            both.returncode != 0 and "not both" in both.stderr,
            (both.returncode, both.stderr[-300:]),
        )

        tei = check_remote_ranks_as_local(checks, service, work, "/rerank", [], "tei")
        servers.append(tei)
        servers.append(check_remote_ranks_as_local(checks, service, work, "/v1/rerank", [], "cohere-v1"))
        servers.append(
            check_remote_ranks_as_local(
                checks, service, work, "/v2/rerank", ["--rerank-model", "test-reranker"], "cohere-v2"
            )
        )

        # With a working service an answer is cached (so the uncached degraded answer below means something).
        ask = {"collection": "faq", "question": QUERIES[0], "backends": ["extractive"]}
        _, first = json_request(tei.port, "POST", "/v1/ask", ask)
        _, again = json_request(tei.port, "POST", "/v1/ask", ask)
        checks.check(
            "a reranked answer has no fallbacks and is cached",
            first["fallbacks"] == [] and again.get("cache") == "hit",
            (first["fallbacks"], again.get("cache")),
        )

        # A misbehaving service.
        hostile = Hostile()
        os.environ["KOTAE_TEST_RERANK_KEY"] = KEY
        degraded_log = os.path.join(work, "degraded.log")
        degraded = Server(
            KOTAE,
            data_with_faq(DATA, os.path.join(work, "degraded")),
            degraded_log,
            ["--rerank-url", "http://127.0.0.1:%d/v1/rerank" % hostile.port]
            + ["--rerank-timeout-ms", str(TIMEOUT_MS), "--rerank-cool-down-ms", str(COOL_DOWN_MS)]
            + ["--rerank-key-env", "KOTAE_TEST_RERANK_KEY", "--rerank-batch", "100"],
        )
        degraded.start()
        servers.append(degraded)
        query = QUERIES[0]
        _, fused, _ = search(degraded.port, query, rerank=False)

        def after_cool_down():
            time.sleep(COOL_DOWN_MS / 1000 + 0.2)  # the circuit lets the next call through

        for mode, says in [
            ("malformed", "not JSON"),
            ("wrong-index", "out of range"),
            ("repeated-index", "twice"),
            ("nan", "not JSON"),  # Python writes NaN, which JSON has not
            ("too-large", "larger than"),
            ("http-500", "HTTP 500"),
        ]:
            after_cool_down()
            hostile.mode = mode
            sent = len(hostile.requests)
            status, body, took = search(degraded.port, query)
            fallbacks = body.get("fallbacks", []) if status == 200 else []
            checks.check(
                "%s: the search answers in the fused order and names the failed rerank" % mode,
                status == 200
                and len(hostile.requests) == sent + 1
                and len(fallbacks) == 1
                and fallbacks[0]["backend"] == "rerank"
                and says in fallbacks[0]["error"]
                and chunk_ids(body) == chunk_ids(fused),
                (status, fallbacks, took),
            )
        checks.check("the server is still up", degraded.alive())

        # The circuit is open now (the last call was the probe after the cool-down, and it failed).
        sent = len(hostile.requests)
        status, body, took = search(degraded.port, query)
        checks.check(
            "the open circuit skips the service: no request, no wait",
            status == 200
            and len(hostile.requests) == sent
            and took < 0.5
            and "skipped" in body["fallbacks"][0]["error"],
            (status, body.get("fallbacks"), took),
        )

        # An answer goes on without the rerank, says so, and is not cached.
        after_cool_down()
        hostile.mode = "malformed"
        ask = {"collection": "faq", "question": QUERIES[1], "backends": ["extractive"]}
        status, answer = json_request(degraded.port, "POST", "/v1/ask", ask)
        checks.check(
            "a degraded answer is 200 and names the rerank in its fallbacks",
            status == 200 and [f["backend"] for f in answer["fallbacks"]] == ["rerank"] and answer["answer"],
            (status, answer),
        )
        status, again = json_request(degraded.port, "POST", "/v1/ask", ask)
        checks.check(
            "a degraded answer is not kept in the answer cache",
            status == 200 and again.get("cache") != "hit" and again["fallbacks"][0]["backend"] == "rerank",
            (status, again.get("cache"), again.get("fallbacks")),
        )

        # Slow: past the timeout the search goes on without the rerank.
        after_cool_down()
        hostile.mode = "slow"
        status, body, took = search(degraded.port, query)
        checks.check(
            "a slow service: the fallback comes within the timeout and a small margin",
            status == 200
            and TIMEOUT_MS / 1000 * 0.9 <= took < TIMEOUT_MS / 1000 + 1.0
            and "within %d ms" % TIMEOUT_MS in body["fallbacks"][0]["error"],
            (status, took, body.get("fallbacks")),
        )
        status, body, took = search(degraded.port, query)
        checks.check("after the slow probe the circuit is open again: no wait", status == 200 and took < 0.5, took)

        # The key went as a bearer token and is in no log line.
        auth = {r["authorization"] for r in hostile.requests}
        checks.check("the API key is sent as a bearer token", auth == {"Bearer " + KEY}, auth)
        body_models = {r["body"].get("model") for r in hostile.requests}
        checks.check("no model sent when none is named", body_models == {None}, body_models)

        # Stopped: connection refused, quickly.
        hostile.stop()
        hostile = None
        after_cool_down()
        status, body, took = search(degraded.port, query)
        checks.check(
            "a stopped service: 200 in the fused order with the fallback, quickly",
            status == 200
            and took < 0.8
            and "cannot be reached" in body["fallbacks"][0]["error"]
            and chunk_ids(body) == chunk_ids(fused),
            (status, took, body.get("fallbacks")),
        )
        timings = []
        for _ in range(5):
            status, body, took = search(degraded.port, query)
            timings.append(took)
        checks.check("later calls do not wait for it", max(timings) < 0.5, timings)
        connection = http.client.HTTPConnection("127.0.0.1", degraded.port, timeout=30)
        connection.request("GET", "/metrics")
        response = connection.getresponse()
        metrics = response.read().decode()
        connection.close()
        checks.check(
            "/metrics counts the fallbacks and shows the open circuit",
            'kotae_fallbacks_total{backend="rerank"}' in metrics
            and any(
                line.startswith("kotae_rerank_service_circuit_open ") and float(line.split()[1]) == 1
                for line in metrics.splitlines()
            )
            and 'kotae_rerank_service_calls_total{outcome="skipped"}' in metrics,
            [line for line in metrics.splitlines() if "rerank" in line or "fallbacks" in line],
        )
        for server in servers[1:]:
            server.stop()
        servers = servers[:1]
        logged = open(degraded_log).read()
        checks.check("the API key is in no log line", KEY not in logged)
    finally:
        if hostile:
            hostile.stop()
        for server in servers:
            if server.alive():
                server.stop()
    return checks.finish(work)


if __name__ == "__main__":
    sys.exit(main())
