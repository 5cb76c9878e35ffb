"""The documents a citation opens (GET /v1/collections/{name}/documents/{id}/file and /text) on a real
`kotae serve`: an upload's file is kept and served to its tenant only, byte for byte, with headers that
keep a browser from running it; a file indexed from disk by the CLI is served while it is unchanged;
every citation's span is found in the document's text; a deleted document takes its file with it."""

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

from kotae_http import Checks, Server, json_request, request

ALICE, BOB = "kt_alice_view_key", "kt_bob_view_key"


def keys_file(work):
    digest = lambda key: hashlib.sha256(key.encode()).hexdigest()
    path = os.path.join(work, "keys.json")
    with open(path, "w") as f:
        json.dump(
            {
                "keys": [
                    {"name": "alice", "tenant": "alice", "sha256": digest(ALICE)},
                    {"name": "bob", "tenant": "bob", "sha256": digest(BOB)},
                ]
            },
            f,
        )
    return path


def upload_files(port, collection, files, key):
    body = b""
    for name, data in files.items():
        body += (
            b'--kb\r\nContent-Disposition: form-data; name="files"; filename="'
            + name.encode()
            + b'"\r\nContent-Type: application/octet-stream\r\n\r\n'
            + data
            + b"\r\n"
        )
    status, answer, _ = request(
        port,
        "POST",
        "/v1/collections/%s/documents" % collection,
        body + b"--kb--\r\n",
        {"Content-Type": "multipart/form-data; boundary=kb", "Authorization": "Bearer " + key},
    )
    assert status == 202, (status, answer)
    return json.loads(answer)["id"]


def main():
    binary, fixture, examples = sys.argv[1], sys.argv[2], sys.argv[3]
    work = tempfile.mkdtemp(prefix="kotae-view-")
    checks = Checks()
    data = os.path.join(work, "data")
    os.makedirs(data)
    os.symlink(os.path.realpath(os.path.join(fixture, "models")), os.path.join(data, "models"))
    # A file the CLI indexes from disk (the local tenant's collection, shown in open mode below).
    on_disk = os.path.join(work, "notes.md")
    with open(on_disk, "w") as f:
        f.write("# Notes\n\nThe kettle boils water in ninety seconds.\n")
    subprocess.run(
        [binary, "index", on_disk, "--collection", "notes", "--data", data], check=True, stdout=subprocess.DEVNULL
    )

    pdf = open(os.path.join(examples, "sqlite-when-to-use.pdf"), "rb").read()
    html = b"<html><body><h1>Hostile</h1><script>alert(1)</script><p>The kettle is red.</p></body></html>"
    server = Server(binary, data, os.path.join(work, "serve.log"), ["--api-keys", keys_file(work)])
    server.start()
    alice = {"Authorization": "Bearer " + ALICE}
    bob = {"Authorization": "Bearer " + BOB}
    try:
        port = server.port
        json_request(port, "POST", "/v1/collections", {"name": "docs"}, alice)
        job = upload_files(port, "docs", {"when-to-use.pdf": pdf, "page.html": html}, ALICE)
        deadline = time.time() + 300
        while time.time() < deadline:
            status, state = json_request(port, "GET", "/v1/jobs/" + job, None, alice)
            if status == 200 and state["state"] not in ("queued", "running"):
                break
            time.sleep(0.1)
        checks.check("the uploads are indexed", state and state["state"] == "succeeded", state)
        _, listed = json_request(port, "GET", "/v1/collections/docs/documents", None, alice)
        ids = {d["path"]: d["id"] for d in listed["data"]}
        base = "/v1/collections/docs/documents/%d" % ids["when-to-use.pdf"]

        status, body, headers = request(port, "GET", base + "/file", None, alice)
        checks.check("the kept PDF is served byte for byte", status == 200 and body == pdf, (status, len(body)))
        checks.check(
            "... as an inline application/pdf",
            headers.get("content-type") == "application/pdf"
            and headers.get("content-disposition", "").startswith("inline"),
            headers,
        )
        checks.check(
            "... that no browser runs or sniffs",
            "sandbox" in headers.get("content-security-policy", "")
            and headers.get("x-content-type-options") == "nosniff",
            headers,
        )
        status, body, _ = request(
            port, "GET", base + "/file", None, dict(alice, **{"If-None-Match": headers.get("etag", "")})
        )
        checks.check("its ETag answers a revalidation with 304 and no body", status == 304 and body == b"", status)

        status, body, headers = request(
            port, "GET", "/v1/collections/docs/documents/%d/file" % ids["page.html"], None, alice
        )
        checks.check(
            "an HTML upload is an attachment, never HTML from this origin",
            status == 200
            and body == html
            and headers.get("content-type") == "application/octet-stream"
            and headers.get("content-disposition", "").startswith("attachment"),
            headers,
        )

        status, asked = json_request(
            port,
            "POST",
            "/v1/ask",
            {
                "collection": "docs",
                "backends": ["extractive"],
                "question": "When is SQLite a good choice for a website?",
            },
            alice,
        )
        citations = asked.get("citations", []) if status == 200 else []
        checks.check(
            "an answer cites the PDF with its id, format and pages",
            any(
                c["document_id"] == ids["when-to-use.pdf"]
                and c["format"] == "pdf"
                and c["page"]
                and c["page_last"] >= c["page"]
                for c in citations
            ),
            citations[:1],
        )
        texts = {}
        for c in citations:
            if c["document_id"] not in texts:
                texts[c["document_id"]] = json_request(
                    port, "GET", "/v1/collections/docs/documents/%d/text" % c["document_id"], None, alice
                )[1]["text"].encode()
        checks.check(
            "every citation's span is its text in the document's text",
            citations and all(texts[c["document_id"]][c["start"] : c["end"]] == c["text"].encode() for c in citations),
        )
        status, searched = json_request(
            port, "POST", "/v1/search", {"collection": "docs", "query": "website traffic"}, alice
        )
        checks.check(
            "search hits carry their document's id",
            status == 200 and all(h["document_id"] in ids.values() for h in searched["hits"]),
            searched.get("hits", [])[:1],
        )

        json_request(port, "POST", "/v1/collections", {"name": "docs"}, bob)  # a "docs" of his own
        for path in [base + "/file", base + "/text"]:
            status, body, _ = request(port, "GET", path, None, bob)
            checks.check("another tenant gets 404 for " + path.rsplit("/", 1)[1], status == 404, (status, body[:120]))
        for bad, expected in [("abc", 400), ("-1", 400), ("99999999999999999999999", 400), ("424242", 404)]:
            status, _, _ = request(port, "GET", "/v1/collections/docs/documents/%s/text" % bad, None, alice)
            checks.check("document id %r -> %d" % (bad[:12], expected), status == expected, status)

        kept = os.path.join(data, "tenants", "alice", "collections", "docs", "uploads", "when-to-use.pdf")
        _, described = json_request(port, "GET", "/v1/collections/docs", None, alice)
        checks.check(
            "the kept file counts in the collection's size",
            os.path.exists(kept) and described["size_bytes"] >= len(pdf),
            described.get("size_bytes"),
        )
        status, _ = json_request(port, "DELETE", base, None, alice)
        checks.check("deleting the document removes its kept file", status == 200 and not os.path.exists(kept), status)
        status, _, _ = request(port, "GET", base + "/file", None, alice)
        checks.check("... and its file is then 404", status == 404, status)
    finally:
        server.stop()

    # Open mode: the local tenant's collection indexed by the CLI from disk.
    server = Server(binary, data, os.path.join(work, "open.log"))
    server.start()
    try:
        port = server.port
        _, listed = json_request(port, "GET", "/v1/collections/notes/documents")
        path = "/v1/collections/notes/documents/%d" % listed["data"][0]["id"]
        status, body, headers = request(port, "GET", path + "/file")
        checks.check(
            "a file indexed from disk is served while unchanged",
            status == 200
            and body == open(on_disk, "rb").read()
            and headers.get("content-type", "").startswith("text/plain"),
            (status, headers.get("content-type")),
        )
        with open(on_disk, "a") as f:
            f.write("A change after indexing.\n")
        status, body, _ = request(port, "GET", path + "/file")
        checks.check(
            "... and not once it changed (404 no_file, the reason given)",
            status == 404 and b"changed since it was indexed" in body,
            body[:200],
        )
        status, answer = json_request(port, "GET", path + "/text")
        checks.check(
            "... while its stored text is still served", status == 200 and "ninety seconds" in answer["text"], status
        )
    finally:
        server.stop()
    return checks.finish(work)


if __name__ == "__main__":
    sys.exit(main())
