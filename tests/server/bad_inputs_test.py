"""Every input of the bad-input corpus (tests/bad_inputs/cases.json) sent to a real `kotae serve`,
while a second client keeps searching and embedding: each case must get its expected clear outcome
(a JSON error with a stable code and a message, a job whose file failed with a reason, or, for inputs
that are only odd, a correct answer), the server must stay up, the other client's requests must all
succeed, and the documents indexed before must still be there and searchable.

Usage: bad_inputs_test.py KOTAE_BINARY FIXTURE_DATA_DIR [CASE_NAME_SUBSTRING ...]
The fixture's "faq" collection is copied into a temporary data folder (the fixture is shared with
other tests). Python standard library only. Prints one line per case and a JSON summary; exit 1 on
any failure.
"""

import gzip
import http.client
import json
import os
import shutil
import sys
import tempfile
import threading
import time

from kotae_http import Server, data_with_faq, json_request, parse_raw_response, raw_exchange, request

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "bad_inputs")
BOUNDARY = "kotae-bad-input-test-boundary"
ESCAPE_PROBE = "/tmp/kotae-bad-input-absolute.txt"  # an upload named like this must not be written there


def multipart_upload(filename, data, content_type):
    # The file name goes raw into the header, as browsers send it (no escaping of backslashes).
    head = ('--%s\r\nContent-Disposition: form-data; name="files"; filename="' % BOUNDARY).encode()
    head += filename.encode("utf-8", "surrogatepass") + b'"\r\nContent-Type: ' + content_type.encode() + b"\r\n\r\n"
    return head + data + ("\r\n--%s--\r\n" % BOUNDARY).encode()


def check_error(expect, status, body):
    """'' when status and body are the expected JSON error, else why not."""
    if status != expect["status"]:
        return "status %s, expected %s: %r" % (status, expect["status"], body[:300])
    if "code" not in expect:
        return ""
    try:
        error = json.loads(body)["error"]
    except (ValueError, KeyError, TypeError):
        return "not a JSON error body: %r" % body[:300]
    if error.get("code") != expect["code"]:
        return "code %r, expected %r (%s)" % (error.get("code"), expect["code"], error.get("message"))
    message = error.get("message") or ""
    if not message:
        return "an empty error message"
    missing = [w for w in expect.get("message_contains", []) if w.lower() not in message.lower()]
    return "message %r lacks %s" % (message, missing) if missing else ""


def wait_for_job(port, job_id, timeout=180):  # one bad file must not hold the ingest thread for minutes
    deadline = time.time() + timeout
    while time.time() < deadline:
        status, job = json_request(port, "GET", "/v1/jobs/" + job_id)
        if status != 200:
            return None, "GET /v1/jobs/%s: %s %s" % (job_id, status, job)
        if job["state"] in ("succeeded", "failed", "partial", "cancelled"):
            return job, ""
        time.sleep(0.05)
    return None, "job %s did not finish in %d s" % (job_id, timeout)


def run_case(case, port):
    """Sends one case; returns (ok, detail)."""
    with open(os.path.join(CORPUS, case["file"]), "rb") as f:
        data = f.read()
    if case.get("gzip"):
        data = gzip.decompress(data)
    send, expect = case["send"], case["expect"]
    if send["kind"] == "raw":
        status, body, whole = parse_raw_response(raw_exchange(port, data))
        if expect.get("closed"):
            return (
                status is None and whole == b""
            ), "closed without an answer" if status is None else "answered %s" % status
        if status is None:
            return False, "no answer (%r)" % whole[:100]
        why = check_error(expect, status, body)
        return not why, why or "%d %s" % (status, json.loads(body)["error"]["code"])
    if send["kind"] == "http":
        headers = dict(send.get("headers", {}))
        if "content_type" in send:
            headers["Content-Type"] = send["content_type"]
        try:
            status, body, _ = request(port, send["method"], send["path"], data, headers)
        except (BrokenPipeError, ConnectionResetError):  # refused before its body was read: see the answer
            head = "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n%s\r\n" % (
                send["method"],
                send["path"],
                len(data),
                "".join("%s: %s\r\n" % h for h in headers.items()),
            )
            status, body, _ = parse_raw_response(raw_exchange(port, head.encode() + data))
        why = check_error(expect, status, body)
        detail = "%d" % status
        if status >= 400 and not why:
            detail += " " + json.loads(body)["error"]["code"]
        return not why, why or detail
    # upload
    body = multipart_upload(send["filename"], data, send["content_type"])
    status, answer, _ = request(
        port,
        "POST",
        "/v1/collections/bad/documents",
        body,
        {"Content-Type": "multipart/form-data; boundary=" + BOUNDARY},
    )
    if expect["status"] != 202 or status != 202:
        why = check_error(expect, status, answer)
        return not why, why or "%d %s" % (status, json.loads(answer)["error"]["code"])
    job, why = wait_for_job(port, json.loads(answer)["id"])
    if not job:
        return False, why
    file = job["files"][0]
    if file["status"] != expect["job_file"]:
        return False, "job file %s (%s), expected %s" % (file["status"], file.get("error", ""), expect["job_file"])
    if file["status"] == "failed":
        error = file.get("error", "")
        missing = [w for w in expect.get("error_contains", []) if w.lower() not in error.lower()]
        if not error or missing:
            return False, "job error %r lacks %s" % (error, missing or "a reason")
        return True, "job file failed: " + error
    if expect.get("stored_as") and file["name"] != expect["stored_as"]:
        return False, "stored as %r, expected %r" % (file["name"], expect["stored_as"])
    return True, "job file %s (%d chunks) as %s" % (file["status"], file["chunks"], file["name"])


class Bystander(threading.Thread):
    """Another client: searches and embeds in turn over one keep-alive connection, all the while."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port, self.stop, self.ok, self.failures, self.latencies = port, threading.Event(), 0, [], []

    def run(self):
        bodies = [
            ("/v1/search", {"collection": "faq", "query": "How do I keep my Debian system up to date?", "k": 5}),
            ("/v1/embeddings", {"input": ["What is a Debian package?"]}),
        ]
        connection, i = None, 0
        while not self.stop.is_set():
            path, value = bodies[i % 2]
            i += 1
            start = time.time()
            try:
                connection = connection or http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                connection.request("POST", path, json.dumps(value), {"Content-Type": "application/json"})
                response = connection.getresponse()
                answer = response.read()
                if response.status == 200 and (b'"hits"' in answer or b'"embedding"' in answer):
                    self.ok += 1
                    self.latencies.append(time.time() - start)
                else:
                    self.failures.append("%s %d %r" % (path, response.status, answer[:200]))
            except (OSError, http.client.HTTPException) as e:
                self.failures.append("%s %r" % (path, e))
                connection = None
            time.sleep(0.02)


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    only = sys.argv[3:]
    with open(os.path.join(CORPUS, "cases.json")) as f:
        manifest = json.load(f)
    cases = [c for c in manifest["cases"] if not only or any(o in c["name"] for o in only)]
    work = tempfile.mkdtemp(prefix="kotae-bad-inputs-")
    failures, results = [], []
    server = None
    try:
        data = data_with_faq(fixture, work)
        server = Server(binary, data, os.path.join(work, "serve.log"))
        server.start()
        port = server.port
        assert json_request(port, "POST", "/v1/collections", {"name": "bad"})[0] == 201
        seed = multipart_upload("seed.txt", manifest["good_text"].encode(), "text/plain")
        status, answer, _ = request(
            port,
            "POST",
            "/v1/collections/bad/documents",
            seed,
            {"Content-Type": "multipart/form-data; boundary=" + BOUNDARY},
        )
        assert status == 202, answer
        job, why = wait_for_job(port, json.loads(answer)["id"])
        assert job and job["state"] == "succeeded", (job, why)

        bystander = Bystander(port)
        bystander.start()
        started = time.time()
        for case in cases:
            t = time.time()
            try:
                ok, detail = run_case(case, port)
            except Exception as e:  # noqa: BLE001 - any client-side surprise is a failed case, reported
                ok, detail = False, "client error: %r" % e
            alive = server.alive()
            if not alive:
                ok, detail = False, "THE SERVER DIED (exit %s) on this case; %s" % (server.process.returncode, detail)
            results.append(
                {
                    "name": case["name"],
                    "category": case["category"],
                    "ok": ok,
                    "survived": alive,
                    "seconds": round(time.time() - t, 2),
                    "detail": detail,
                }
            )
            print(
                "%-4s %-38s %5.1fs  %s" % ("ok" if ok else "FAIL", case["name"], time.time() - t, detail[:160]),
                flush=True,
            )
            if not ok:
                failures.append("%s: %s" % (case["name"], detail))
            if not alive:
                print(open(server.log_path).read()[-3000:], file=sys.stderr)
                server.start()  # go on with the others; the crash is already a failure
                port = server.port
                bystander.stop.set()
                bystander = Bystander(port)
                bystander.start()
        bystander.stop.set()
        bystander.join()

        # After all of it: alive, healthy, nothing lost, nothing escaped.
        if request(port, "GET", "/healthz")[0] != 200:
            failures.append("/healthz is not 200 at the end")
        status, listing = json_request(port, "GET", "/v1/collections/bad/documents")
        paths = [d["path"] for d in listing["data"]] if status == 200 else []
        if "seed.txt" not in paths:
            failures.append("the document indexed before the bad inputs is gone: %s" % paths)
        status, found = json_request(
            port,
            "POST",
            "/v1/search",
            {"collection": "bad", "query": "quokkas lighthouse keeper blue notebook", "k": 20},
        )
        if status != 200 or "seed.txt" not in [h.get("document", h.get("path")) for h in found["hits"]]:
            failures.append("the seed document is not found by search any more: %s %s" % (status, found))
        status, found = json_request(
            port, "POST", "/v1/search", {"collection": "bad", "query": "root:x:0:0 /bin/bash", "k": 10, "mode": "bm25"}
        )
        if status == 200 and any("root:x:0" in json.dumps(h) for h in found["hits"]):
            failures.append("/etc/passwd reached the index (an external XML entity was expanded)")
        status, found = json_request(
            port, "POST", "/v1/search", {"collection": "faq", "query": "virtual package", "k": 3}
        )
        if status != 200 or not found["hits"]:
            failures.append("the faq collection does not answer a search: %s" % status)
        if os.path.exists(ESCAPE_PROBE):
            failures.append("an upload was written outside the collection: %s" % ESCAPE_PROBE)
        if bystander.failures:
            failures.append(
                "the other client's requests failed %d times: %s" % (len(bystander.failures), bystander.failures[:5])
            )
        if bystander.ok == 0:
            failures.append("the other client got no answer at all")
        exit_code = server.stop()
        if exit_code != 0:
            failures.append("kotae serve exited with %d after SIGTERM" % exit_code)
        latencies = sorted(bystander.latencies) or [0]
        by_category = {}
        for r in results:
            entry = by_category.setdefault(r["category"], {"tried": 0, "ok": 0, "survived": 0})
            entry["tried"] += 1
            entry["ok"] += r["ok"]
            entry["survived"] += r["survived"]
        print(
            json.dumps(
                {
                    "name": "bad_inputs",
                    "tried": len(results),
                    "ok": sum(r["ok"] for r in results),
                    "survived": sum(r["survived"] for r in results),
                    "by_category": by_category,
                    "other_client": {
                        "ok": bystander.ok,
                        "failed": len(bystander.failures),
                        "p99_ms": round(latencies[int(0.99 * (len(latencies) - 1))] * 1000, 1),
                    },
                    "seconds": round(time.time() - started, 1),
                    "failures": failures,
                }
            )
        )
    finally:
        if server and server.process and server.alive():
            server.process.kill()
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
