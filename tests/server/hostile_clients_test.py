"""Hostile clients against a real `kotae serve`, over sockets: no request may take the server down,
read another tenant's data or pin its work. Each check is one attack with the clear answer it must
get, and the server must be alive and serving after it.

Usage: hostile_clients_test.py KOTAE_BINARY FIXTURE_DATA_DIR GROUP
GROUP: bodies | before_body | connections | metrics | open_mode | sizes | lifecycle | uploads
Python standard library only. Prints a line per check and "N passed, N failed"; exit 1 on a failure.
"""

import json
import os
import resource
import socket
import sys
import tempfile
import threading
import time

from kotae_http import (
    Checks,
    Server,
    data_with_faq,
    error_code,
    json_request,
    multipart,
    parse_raw_response,
    raw_exchange,
    request,
    upload,
    wait_job,
)

JSON = {"Content-Type": "application/json"}
JSON_ROUTES = [
    ("POST", path)
    for path in [
        "/v1/search",
        "/v1/ask",
        "/v1/chat/completions",
        "/v1/embeddings",
        "/v1/rerank",
        "/rerank",
        "/v2/rerank",
        "/v1/collections",
    ]
]
JSON_ROUTES.append(("PATCH", "/v1/conversations/conv_" + "0" * 32))  # read before the conversation is looked up
TEI_ROUTES = ["/embed", "/tokenize"]  # TEI's error shape: {"error": MESSAGE, "error_type": KIND}
ADMIN_KEY, TENANT_KEY = "kt_admin_test_key", "kt_tenant_test_key"


QUOTA_KEY = "kt_quota_test_key"


def keys_file(work):
    import hashlib

    path = os.path.join(work, "keys.json")
    digest = lambda key: hashlib.sha256(key.encode()).hexdigest()
    with open(path, "w") as f:
        json.dump(
            {
                "keys": [
                    {"name": "ops", "admin": True, "sha256": digest(ADMIN_KEY)},
                    {"name": "alice", "tenant": "alice", "sha256": digest(TENANT_KEY)},
                    {
                        "name": "small",
                        "tenant": "small",
                        "sha256": digest(QUOTA_KEY),
                        "quota": {"queued_jobs": 1, "stored_bytes": 3000000, "documents": 3},
                    },
                ]
            },
            f,
        )
    return path


def head_only(port, head, wait=5.0):
    """Sends a request's line and headers, no body, and keeps the connection open: what comes back
    within `wait` seconds (the server must answer without waiting for the body it was promised)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=wait)
    sock.sendall(head)
    received = bytearray()
    deadline = time.time() + wait
    try:
        while time.time() < deadline:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    except socket.timeout:
        pass
    except ConnectionResetError:
        pass
    sock.close()
    return bytes(received)


def alive(checks, server, name):
    ok = server.alive() and request(server.port, "GET", "/healthz")[0] == 200
    checks.check("alive after " + name, ok, "" if ok else "exit %s" % server.process.poll())
    return ok


def bodies(checks, server, work):
    """1. No body can crash or stall the process."""
    port = server.port
    deep = [
        (
            "the issue's chat body: 200,000 nested arrays in an extra field",
            b'{"model":"m","messages":[{"role":"user","content":"hi"}],"extra":' + b"[" * 200000 + b"]" * 200000 + b"}",
        ),
        ("10^6 unclosed arrays", b'{"a":' + b"[" * 1000000),
        ("10^5 nested objects", b'{"a":' * 100000 + b"1" + b"}" * 100000),
        (
            "10^5 arrays inside messages",
            b'{"messages":[{"role":"user","content":' + b"[" * 100000 + b"]" * 100000 + b"}]}",
        ),
        ("10^5 arrays inside rerank documents", b'{"query":"q","documents":' + b"[" * 100000 + b"]" * 100000 + b"}"),
        ("10^5 arrays inside embeddings input", b'{"input":' + b"[" * 100000 + b"]" * 100000 + b"}"),
    ]
    for label, body in deep:
        for method, path in JSON_ROUTES:
            status, answer, _ = request(port, method, path, body, JSON)
            checks.check(
                "%s -> %s %s" % (label[:40], method, path),
                status == 400 and error_code(answer) == "invalid_request" and b"nested deeper" in answer,
                "%s %r" % (status, answer[:120]),
            )
        for path in TEI_ROUTES:
            status, answer, _ = request(port, "POST", path, body, JSON)
            checks.check(
                "%s -> %s" % (label[:40], path),
                status == 422 and b'"error_type":"Validation"' in answer and b"nested deeper" in answer,
                "%s %r" % (status, answer[:120]),
            )
        alive(checks, server, label)
    for method, path in JSON_ROUTES:
        status, answer, _ = request(
            port, method, path, b'{"collection":"faq","query":"virtual package"}', {"Content-Type": "text/plain"}
        )
        checks.check(
            "text/plain JSON refused -> %s %s" % (method, path),
            status == 415 and error_code(answer) == "unsupported_media_type",
            "%s %r" % (status, answer[:120]),
        )
    for path in TEI_ROUTES:
        status, answer, _ = request(port, "POST", path, b'{"inputs":"x"}', {"Content-Type": "text/plain"})
        checks.check(
            "text/plain JSON refused -> " + path,
            status == 415 and b'"error_type":"Validation"' in answer,
            "%s %r" % (status, answer[:120]),
        )
    status, answer, _ = request(port, "POST", "/v1/search", b'{"collection":"faq","query":"virtual package"}')
    checks.check("a JSON body without Content-Type is refused", status == 415, status)
    status, answer = json_request(port, "POST", "/v1/search", {"collection": "faq", "query": "virtual package", "k": 3})
    checks.check("a declared JSON body is answered", status == 200 and answer["hits"], status)
    big = json.dumps({"collection": "faq", "query": "q", "pad": "x" * (2 << 20)}).encode()
    head = (
        "POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
        % len(big)
    ).encode()
    status, answer, _ = parse_raw_response(raw_exchange(port, head + big))  # answered before the body is read
    checks.check("a 2 MiB JSON body -> 413", status == 413 and error_code(answer) == "payload_too_large", status)
    big = json.dumps({"title": "x" * (2 << 20)}).encode()
    method, path = JSON_ROUTES[-1]
    head = (
        "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
        % (method, path, len(big))
    ).encode()
    status, answer, _ = parse_raw_response(raw_exchange(port, head + big))
    checks.check("a 2 MiB title -> 413 (PATCH)", status == 413 and error_code(answer) == "payload_too_large", status)
    for label, value in [
        ("a title of 300 characters", {"title": "t" * 300}),
        ("a title that is a list", {"title": ["t"]}),
        ("a title that is an object", {"title": {"a": 1}}),
        ("a body that is a list", ["title"]),
    ]:
        status, answer, _ = request(port, method, path, json.dumps(value).encode(), JSON)
        checks.check(
            "%s -> 400 (PATCH)" % label,
            status == 400 and error_code(answer) == "invalid_request",
            "%s %r" % (status, answer[:120]),
        )
    alive(checks, server, "bodies")


def before_body(checks, server, work):
    """2. Nothing is buffered before the caller is known (server started with API keys)."""
    port = server.port
    upload_head = (
        "POST /v1/collections/x/documents HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 60000000\r\n"
        "Content-Type: multipart/form-data; boundary=b\r\nExpect: 100-continue\r\n%s\r\n"
    )
    answer = head_only(port, (upload_head % "").encode())
    status, _, _ = parse_raw_response(answer)
    checks.check(
        "no key, 60 MB promised, Expect: 100-continue -> 401 at once",
        status == 401 and b"100 Continue" not in answer,
        answer[:80],
    )
    answer = head_only(port, (upload_head % "Authorization: Bearer wrong\r\n").encode())
    checks.check("a wrong key -> 401 at once", parse_raw_response(answer)[0] == 401, answer[:80])
    answer = head_only(port, (upload_head % ("Authorization: Bearer %s\r\n" % TENANT_KEY)).encode(), wait=2)
    checks.check("a known key gets 100 Continue", answer.startswith(b"HTTP/1.1 100 Continue"), answer[:80])
    json_head = (
        "POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10000000\r\nContent-Type: application/json\r\n"
        "Authorization: Bearer %s\r\n\r\n" % TENANT_KEY
    )
    answer = head_only(port, json_head.encode())
    checks.check(
        "a known key promising a 10 MB JSON body -> 413 at once", parse_raw_response(answer)[0] == 413, answer[:80]
    )
    answer = raw_exchange(port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"a" * 100000 + b"\r\n\r\n")
    checks.check("a 100 kB header -> 431", parse_raw_response(answer)[0] == 431, answer[:80])
    chunked = (
        "POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n"
        "Authorization: Bearer %s\r\n\r\n" % TENANT_KEY
    ).encode()
    attacks = [
        ("a 300 kB chunk-size line", chunked + b"0" * 300000 + b"1\r\nx\r\n0\r\n\r\n"),
        ("a 100 kB chunk extension", chunked + b"1;" + b"a=b;" * 25000 + b"\r\nx\r\n0\r\n\r\n"),
        ("300 kB of trailers", chunked + b"1\r\n{\r\n0\r\n" + b"X-T: v\r\n" * 40000 + b"\r\n"),
        ("200,000 one-byte chunks", chunked + b"1\r\n \r\n" * 200000 + b"0\r\n\r\n"),
        ("a chunked body over the JSON limit", chunked + (b"10000\r\n" + b" " * 0x10000 + b"\r\n") * 20 + b"0\r\n\r\n"),
    ]
    for label, data in attacks:
        start = time.time()
        status, body, whole = parse_raw_response(raw_exchange(port, data, timeout=30))
        checks.check(
            label + " -> 400/413 and closed",
            status in (400, 413) and time.time() - start < 20,
            "%s in %.1fs %r" % (status, time.time() - start, whole[:80]),
        )
    alive(checks, server, "before_body")


def connections(checks, binary, data, work):
    """2. Caps on open connections, and accept errors (EMFILE) back off instead of spinning."""
    server = Server(binary, data, os.path.join(work, "caps.log"), ["--max-connections-per-client", "8"])
    server.start()
    socks = [socket.create_connection(("127.0.0.1", server.port), timeout=5) for _ in range(20)]
    answered = 0
    for s in socks:
        try:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            answered += s.recv(1024).startswith(b"HTTP/1.1 200")
        except OSError:
            pass
    checks.check("20 connections from one client, cap 8: 8 answered", answered == 8, answered)
    for s in socks:
        s.close()
    served = False
    deadline = time.time() + 10  # the server frees their slots as it hears them close
    while not served and time.time() < deadline:
        try:
            served = request(server.port, "GET", "/healthz")[0] == 200
        except OSError:
            pass
        time.sleep(0 if served else 0.05)
    checks.check("after they close, the client is served again", served)
    server.stop()

    # Few file descriptors: the listener keeps failing with EMFILE while the connections stay open.
    def few_files():
        resource.setrlimit(resource.RLIMIT_NOFILE, (160, 160))

    server = Server(binary, data, os.path.join(work, "emfile.log"), ["--max-connections-per-client", "1000"])
    server.preexec = few_files
    server.start()
    socks = []
    for _ in range(300):
        try:
            socks.append(socket.create_connection(("127.0.0.1", server.port), timeout=5))
        except OSError:
            break
    time.sleep(0.5)

    def cpu_seconds():
        with open("/proc/%d/stat" % server.process.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    before = cpu_seconds()
    time.sleep(3)
    used = cpu_seconds() - before
    checks.check("out of file descriptors, the accept loop backs off (CPU in 3 s)", used < 0.5, "%.2f s" % used)
    for s in socks:
        s.close()
    time.sleep(1.5)
    status = request(server.port, "GET", "/healthz", timeout=10)[0]
    checks.check("with descriptors free again, the server answers", status == 200, status)
    server.stop()


def metrics(checks, server, work):
    """3. Metrics cannot be grown by strangers."""
    port = server.port
    admin = {"Authorization": "Bearer " + ADMIN_KEY}
    _, before, _ = request(port, "GET", "/metrics", headers=admin)
    for i in range(200):
        raw_exchange(port, ("M%dX /random/%d HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % (i, i)).encode(), timeout=10)
        request(port, "GET", "/v1/collections/c%d/documents/%d" % (i, i))
        request(port, "POST", "/nope/%d" % i, b"{}", JSON)
    _, after, _ = request(port, "GET", "/metrics", headers=admin)
    text = after.decode()
    series = lambda t: sorted(l.split(" ")[0] for l in t.splitlines() if l.startswith("kotae_http_requests_total"))
    checks.check(
        "no raw path or method in the metrics",
        "random" not in text and "M17X" not in text and "c17" not in text and "/nope" not in text,
        [l for l in text.splitlines() if "random" in l or "M17X" in l][:3],
    )
    checks.check(
        "600 strange requests add at most a few series",
        len(series(after.decode())) - len(series(before.decode())) <= 6,
        series(text),
    )
    alive(checks, server, "metrics")


def open_mode(checks, binary, data, work):
    """5. Open mode is safe on a developer's laptop."""
    server = Server(binary, data, os.path.join(work, "open.log"))
    server.start()
    port = server.port
    for host in ["127.0.0.1:%d" % port, "localhost:%d" % port, "[::1]:%d" % port, "LOCALHOST"]:
        status = request(port, "GET", "/v1/collections", headers={"Host": host})[0]
        checks.check("Host %s is served" % host, status == 200, status)
    for host in ["evil.example", "evil.example:%d" % port, "127.0.0.1.evil.example", "[::2]:%d" % port]:
        status, body, _ = request(port, "GET", "/v1/collections", headers={"Host": host})
        checks.check(
            "Host %s (DNS rebinding) -> 403" % host, status == 403 and error_code(body) == "forbidden_host", status
        )
    query = json.dumps({"collection": "faq", "query": "virtual package"}).encode()
    status, body, _ = request(port, "POST", "/v1/search", query, dict(JSON, Origin="http://evil.example"))
    checks.check("a foreign Origin -> 403", status == 403 and error_code(body) == "forbidden_origin", status)
    status, body, _ = request(port, "POST", "/v1/search", query, dict(JSON, Origin="null"))
    checks.check("Origin: null -> 403", status == 403, status)
    status, _, headers = request(port, "POST", "/v1/search", query, dict(JSON, Origin="http://127.0.0.1:%d" % port))
    checks.check(
        "the page's own Origin is served, without CORS headers",
        status == 200 and "access-control-allow-origin" not in headers,
        status,
    )
    form = b'--b\r\nContent-Disposition: form-data; name="files"; filename="a.txt"\r\n\r\nhello\r\n--b--\r\n'
    status, body, _ = request(
        port,
        "POST",
        "/v1/collections/faq/documents",
        form,
        {"Content-Type": "multipart/form-data; boundary=b", "Origin": "http://evil.example"},
    )
    checks.check("a form upload from a foreign page -> 403", status == 403, status)
    status, body, headers = request(
        port, "OPTIONS", "/v1/search", None, {"Origin": "http://app.example", "Access-Control-Request-Method": "POST"}
    )
    checks.check(
        "CORS closed by default: preflight refused",
        status == 403 and "access-control-allow-origin" not in headers,
        status,
    )
    server.stop()

    server = Server(binary, data, os.path.join(work, "cors.log"), ["--cors-origin", "http://app.example"])
    server.start()
    port = server.port
    status, body, headers = request(
        port, "OPTIONS", "/v1/search", None, {"Origin": "http://app.example", "Access-Control-Request-Method": "POST"}
    )
    checks.check(
        "--cors-origin: its preflight is answered",
        status == 204 and headers.get("access-control-allow-origin") == "http://app.example",
        (status, headers),
    )
    status, body, headers = request(port, "POST", "/v1/search", query, dict(JSON, Origin="http://app.example"))
    checks.check(
        "--cors-origin: its requests carry Access-Control-Allow-Origin",
        status == 200 and headers.get("access-control-allow-origin") == "http://app.example",
        status,
    )
    status, body, _ = request(port, "POST", "/v1/search", query, dict(JSON, Origin="http://other.example"))
    checks.check("--cors-origin: another origin still -> 403", status == 403, status)
    server.stop()

    def starts(keys):
        server = Server(binary, data, os.path.join(work, "keys.log"), ["--api-keys", keys])
        try:
            server.start()
        except RuntimeError:
            return False
        server.stop()
        return True

    for label, content in [("an empty keys file", ""), ("an empty key list", '{"keys": []}')]:
        path = os.path.join(work, "keys-%d.json" % len(content))
        with open(path, "w") as f:
            f.write(content)
        checks.check("%s is an error at start, not an open server" % label, not starts(path))
    checks.check("an unreadable keys file (a folder) is an error at start", not starts(work))


def sizes(checks, server, work):
    """7. Input sizes are bounded everywhere."""
    port = server.port
    big = "word " * 4000  # 20 kB, over the 16 kB question limit
    cases = [
        (
            "grounded chat: a 20 kB user message",
            "/v1/chat/completions",
            {"collection": "faq", "messages": [{"role": "user", "content": big}]},
            "longer than",
        ),
        ("/v1/ask: a 20 kB question", "/v1/ask", {"collection": "faq", "question": big}, "longer than"),
        (
            "chat: 300 messages",
            "/v1/chat/completions",
            {"messages": [{"role": "user", "content": "hi"}] * 300},
            "more than",
        ),
        (
            "chat: a 70 kB message",
            "/v1/chat/completions",
            {"messages": [{"role": "user", "content": "x" * 70000}]},
            "longer than",
        ),
        ("embeddings: 3,000 inputs", "/v1/embeddings", {"input": ["a"] * 3000}, "more than"),
        ("embeddings: a 70 kB input", "/v1/embeddings", {"input": ["x" * 70000]}, "longer than"),
        ("rerank: 1,001 documents", "/v1/rerank", {"query": "q", "documents": ["d"] * 1001}, "more than"),
        ("rerank: a 70 kB text", "/rerank", {"query": "q", "documents": ["x" * 70000]}, "longer than"),
        ("Cohere rerank: 1,001 documents", "/v2/rerank", {"query": "q", "documents": ["d"] * 1001}, "more than"),
    ]
    for label, path, value, words in cases:
        status, answer = json_request(port, "POST", path, value)
        message = answer.get("error", {}).get("message", "") if isinstance(answer, dict) else ""
        checks.check(label + " -> 400", status == 400 and words in message, "%s %s" % (status, message))
    for label, path, value, words in [
        ("TEI embed: 3,000 inputs", "/embed", {"inputs": ["a"] * 3000}, "more than"),
        ("TEI embed: a 70 kB input", "/embed", {"inputs": ["x" * 70000]}, "longer than"),
        ("TEI tokenize: a 70 kB input", "/tokenize", {"inputs": "x" * 70000}, "longer than"),
        ("TEI rerank: 1,001 texts", "/rerank", {"query": "q", "texts": ["d"] * 1001}, "more than"),
    ]:
        status, answer = json_request(port, "POST", path, value)
        message = answer.get("error", "") if isinstance(answer, dict) else ""
        checks.check(label + " -> 422", status == 422 and words in str(message), "%s %s" % (status, message))
    status, answer = json_request(port, "POST", "/v1/embeddings", {"input": ["y" * 60000]})
    checks.check("embeddings: a 60 kB input is embedded (cut to the model's tokens)", status == 200, status)
    alive(checks, server, "sizes")


def uploads(checks, server, work):
    """4. Uploads are linear and bounded (server started with API keys, one with a quota)."""
    port = server.port
    small = {"Authorization": "Bearer " + QUOTA_KEY}
    form = {"Content-Type": "multipart/form-data; boundary=kb"}
    assert json_request(port, "POST", "/v1/collections", {"name": "q"}, small)[0] == 201

    def send(files, headers=small):
        status, body, _ = request(port, "POST", "/v1/collections/q/documents", multipart(files), dict(form, **headers))
        return status, body

    start = time.time()
    status, body = send([("same.md", b"x")] * 1000)
    checks.check(
        "1,000 parts of one name: 400 at once",
        status == 400 and b"twice" in body and time.time() - start < 5,
        (status, body[:100]),
    )
    status, body = send([("f%d.md" % i, b"x") for i in range(300)])
    checks.check("300 files in one upload -> 400", status == 400 and b"at most 256" in body, (status, body[:100]))
    status, body = send([("f%d.md" % i, b"x") for i in range(1100)])
    checks.check("1,100 parts -> 400", status == 400 and b"parts" in body, (status, body[:100]))
    status, body = send([("big.md", b"word " * 700000)])
    checks.check(
        "over the tenant's stored bytes -> 413 quota_exceeded",
        status == 413 and error_code(body) == "quota_exceeded",
        (status, body[:120]),
    )
    heavy = [("part%d.md" % i, ("Fog horns sound every thirty seconds. " * 600).encode()) for i in range(3)]
    status, body = send(heavy)
    checks.check("an upload within the quota -> 202", status == 202, (status, body[:120]))
    status, body = send([("later.md", b"Beacons.")])
    checks.check(
        "a second job while one is queued or running -> 429 quota_exceeded",
        status == 429 and error_code(body) == "quota_exceeded",
        (status, body[:120]),
    )
    deadline = time.time() + 120
    while time.time() < deadline:
        status, jobs = json_request(port, "GET", "/v1/jobs", None, small)
        if all(j["state"] not in ("queued", "running") for j in jobs["data"]):
            break
        time.sleep(0.1)
    status, body = send([("fourth.md", b"Lighthouses."), ("fifth.md", b"Keepers.")])
    checks.check(
        "past the tenant's documents (3) -> 413 quota_exceeded",
        status == 413 and error_code(body) == "quota_exceeded" and b"documents" in body,
        (status, body[:120]),
    )
    status, body = send([("fourth.md", b"Lighthouses.")], {"Authorization": "Bearer " + TENANT_KEY})
    checks.check("another tenant is not held to it (404: no collection q of its own)", status == 404, status)
    alive(checks, server, "uploads")


def lifecycle(checks, server, work):
    """10. Deleting a collection is final. 11. The I/O threads never wait on a model load."""
    port = server.port
    # A job of many files is running when its collection is deleted: no ghost is opened meanwhile.
    assert json_request(port, "POST", "/v1/collections", {"name": "gone"})[0] == 201
    files = {
        "part-%02d.md" % i: ("# Part %d\n\n" % i) + "Lighthouse keepers log the weather every hour. " * 400
        for i in range(40)
    }
    job = upload(port, "gone", files)
    while json_request(port, "GET", "/v1/jobs/" + job)[1]["progress"]["files_done"] < 1:
        time.sleep(0.02)
    deleting = {}
    deleter = threading.Thread(
        target=lambda: deleting.update(zip(("status", "body"), json_request(port, "DELETE", "/v1/collections/gone")))
    )
    deleter.start()
    # Requests sent before the DELETE reaches the server still find the collection; once one is told
    # 404, none after it may find it again (a ghost opened from the files still on disk).
    ghosts, gone_seen = [], False
    while deleter.is_alive():
        for method, path, value in [
            ("GET", "/v1/collections/gone", None),
            ("POST", "/v1/search", {"collection": "gone", "query": "weather"}),
        ]:
            status, _ = json_request(port, method, path, value)
            gone_seen = gone_seen or status == 404
            if gone_seen and status != 404:
                ghosts.append("%s %s -> %s" % (method, path, status))
        time.sleep(0.01)
    deleter.join()
    checks.check("delete during a job: 200", deleting.get("status") == 200, deleting)
    checks.check("no request reaches the collection while it is deleted", not ghosts, ghosts[:3])
    finished = wait_job(port, job)
    checks.check(
        "the job stops (cancelled) instead of indexing into a deleted collection",
        finished and finished["state"] == "cancelled",
        finished and finished["state"],
    )
    checks.check(
        "after the delete: 404, not listed, no folder",
        json_request(port, "GET", "/v1/collections/gone")[0] == 404
        and not os.path.exists(os.path.join(server.data, "collections", "gone")),
    )

    # An answer cached before a delete is never served after the name is created again.
    ask = {"collection": "reborn", "question": "What colour is the lighthouse door?", "backends": ["extractive"]}
    for colour in ("blue", "red"):
        assert json_request(port, "POST", "/v1/collections", {"name": "reborn"})[0] == 201
        wait_job(port, upload(port, "reborn", {"door.md": "The lighthouse door is painted %s every spring." % colour}))
        status, answer = json_request(port, "POST", "/v1/ask", ask)
        if colour == "blue":
            json_request(port, "POST", "/v1/ask", ask)  # now cached
            assert json_request(port, "DELETE", "/v1/collections/reborn")[0] == 200
    checks.check(
        "re-created collection: its own answer, not the deleted one's cached answer",
        status == 200 and "red" in answer["answer"] and answer["cache"] == "miss",
        (answer.get("answer"), answer.get("cache")),
    )

    # A collection created with an embedder that is not loaded yet: the model loads (seconds) while
    # /readyz and /metrics keep answering on the I/O threads.
    created = {}
    creator = threading.Thread(
        target=lambda: created.update(
            status=json_request(port, "POST", "/v1/collections", {"name": "int8", "embedder": "all-minilm-l6-v2-int8"})[
                0
            ]
        )
    )
    start = time.time()
    creator.start()
    answered, slowest = 0, 0.0
    while creator.is_alive():
        t = time.time()
        ready = request(port, "GET", "/readyz")[0]
        slowest = max(slowest, time.time() - t)
        answered += ready == 200 and creator.is_alive()
        time.sleep(0.01)
    load_seconds = time.time() - start
    checks.check("collection with a new embedder: 201", created.get("status") == 201, created)
    # Not a timing target: a blocked /readyz is held for the whole load (before the fix: 2 answers, one
    # held 0.24 s of a 0.26 s load); a load is never so short that two 10 ms polls do not fit in it.
    checks.check(
        "/readyz answers while the embedder loads",
        answered >= 2 and slowest < load_seconds / 2,
        "%d answers during a %.2f s load, slowest %.3f s" % (answered, load_seconds, slowest),
    )
    alive(checks, server, "lifecycle")


def main():
    binary, fixture, group = sys.argv[1], sys.argv[2], sys.argv[3]
    work = tempfile.mkdtemp(prefix="kotae-hostile-")
    checks = Checks()
    server = None
    try:
        data = data_with_faq(fixture, work)
        if group in ("bodies", "sizes", "lifecycle"):
            server = Server(binary, data, os.path.join(work, "serve.log"))
        elif group in ("before_body", "metrics", "uploads"):
            server = Server(binary, data, os.path.join(work, "serve.log"), ["--api-keys", keys_file(work)])
        if server:
            server.start()
            {
                "bodies": bodies,
                "sizes": sizes,
                "before_body": before_body,
                "metrics": metrics,
                "lifecycle": lifecycle,
                "uploads": uploads,
            }[group](checks, server, work)
            code = server.stop()
            checks.check("SIGTERM: exit 0", code == 0, code)
        elif group == "connections":
            connections(checks, binary, data, work)
        elif group == "open_mode":
            open_mode(checks, binary, data, work)
        else:
            raise SystemExit("unknown group " + group)
    finally:
        if server and server.process and server.alive():
            server.process.kill()
        code = checks.finish(work)
    return code


if __name__ == "__main__":
    sys.exit(main())
