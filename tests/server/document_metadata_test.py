"""Document metadata on a real `kotae serve` (server/upload_request, server/document_routes,
text/document_metadata): an upload's `metadata` field (for every file) and `metadata[NAME]` field (one
file's own) travel with its job to ingestion, merged with what the file says of itself (an e-mail's
Subject, From and Date as title, author, created) and `source: upload`; bad metadata is 400 naming the
problem, with nothing queued or stored; the metadata shows in the documents list, a document's GET,
search hits, and an answer's sources and citations; PATCH replaces what callers gave (a reader gets
403, an editor 200), keeping `source` and the file's keys, and searches and answers (not served from
the cache) show the change at once."""

import hashlib
import json
import os
import sys
import tempfile
import time

from kotae_http import Checks, Server, data_with_faq, error_code, json_request, request

KEYS = {"editor": "editor", "reader": "reader", "boss": None}  # boss: the tenant's admin

LEAVE = b"# Zeppelin leave\n\nThe zeppelin crew gets twelve weeks of parental leave, paid in full.\n"
MAIL = (
    b"From: Ann Keeper <ann@lighthouse.example>\r\nTo: crew@harbour.example\r\n"
    b"Subject: Zeppelin mooring drill\r\nDate: Mon, 07 Dec 2026 09:30:00 +0100\r\n"
    b"Message-ID: <drill-1@lighthouse.example>\r\n\r\nThe zeppelin mooring drill is on Friday at the north mast.\r\n"
)


def key(name):
    return "kt_metadata_" + name


def auth(name):
    return {"Authorization": "Bearer " + key(name)}


def keys_file(work):
    entries = [
        dict(
            {"role": role} if role else {},
            name=name,
            tenant="local",
            sha256=hashlib.sha256(key(name).encode()).hexdigest(),
        )
        for name, role in KEYS.items()
    ]
    path = os.path.join(work, "keys.json")
    with open(path, "w") as f:
        json.dump({"keys": entries}, f)
    return path


def form(files, fields):
    """A multipart body of files {name: bytes} and plain fields [(name, text)]."""
    body = b""
    for name, value in fields:
        body += (
            b'--kb\r\nContent-Disposition: form-data; name="' + name.encode() + b'"\r\n\r\n' + value.encode() + b"\r\n"
        )
    for name, data in files.items():
        body += (
            b'--kb\r\nContent-Disposition: form-data; name="files"; filename="'
            + name.encode()
            + b'"\r\nContent-Type: application/octet-stream\r\n\r\n'
            + data
            + b"\r\n"
        )
    return body + b"--kb--\r\n"


def post_form(port, files, fields, who="editor"):
    headers = dict({"Content-Type": "multipart/form-data; boundary=kb"}, **auth(who))
    status, body, _ = request(port, "POST", "/v1/collections/faq/documents", form(files, fields), headers)
    return status, json.loads(body) if body else None


def wait_job(port, job, timeout=180):
    deadline = time.time() + timeout
    while time.time() < deadline:
        status, answer = json_request(port, "GET", "/v1/jobs/" + job, None, auth("editor"))
        if status == 200 and answer["state"] not in ("queued", "running"):
            return answer
        time.sleep(0.1)
    return None


def documents(port):
    status, listed = json_request(port, "GET", "/v1/collections/faq/documents", None, auth("reader"))
    return {d["path"]: d for d in listed["data"]} if status == 200 else {}


def search_hits(port, query):
    status, found = json_request(
        port, "POST", "/v1/search", {"collection": "faq", "query": query, "k": 5}, auth("reader")
    )
    return found["hits"] if status == 200 else []


def ask(port, question):
    status, answer = json_request(
        port, "POST", "/v1/ask", {"collection": "faq", "question": question, "backends": ["extractive"]}, auth("reader")
    )
    return answer if status == 200 else {}


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="kotae-metadata-")
    checks = Checks()
    data = data_with_faq(fixture, work)
    server = Server(binary, data, os.path.join(work, "serve.log"), ["--api-keys", keys_file(work)])
    server.start()
    try:
        port = server.port
        before_docs = documents(port)
        _, jobs_before = json_request(port, "GET", "/v1/jobs", None, auth("editor"))

        # Bad metadata: 400 naming the problem, and nothing of the upload kept.
        bad = [
            ([("metadata", '{"source": "crawler"}')], "source"),
            ([("metadata", '{"9lives": 1}')], "is not a name"),
            ([("metadata", '{"dept": {"nested": 1}}')], "nested"),
            ([("metadata", '{"dept": "' + "x" * 1025 + '"}')], "over 1024"),
            ([("metadata", "not json")], "not valid JSON"),
            ([("metadata[other.md]", '{"dept": "hr"}')], "names no file"),
            ([("metadata", "{}"), ("metadata", "{}")], "twice"),
        ]
        for fields, words in bad:
            status, answer = post_form(port, {"zeppelin-leave.md": LEAVE}, fields)
            message = answer.get("error", {}).get("message", "") if answer else ""
            checks.check(
                "bad metadata is 400 naming it: %s" % words, status == 400 and words in message, (status, answer)
            )
        _, jobs_after = json_request(port, "GET", "/v1/jobs", None, auth("editor"))
        checks.check(
            "... and nothing was queued or stored",
            len(jobs_after["data"]) == len(jobs_before["data"]) and documents(port).keys() == before_docs.keys(),
            (len(jobs_before["data"]), len(jobs_after["data"])),
        )

        status, job = post_form(
            port,
            {"zeppelin-leave.md": LEAVE, "drill.eml": MAIL},
            [
                ("metadata", '{"dept": "hr", "year": 2024, "reviewed": "2024-05-01"}'),
                ("metadata[zeppelin-leave.md]", '{"tags": ["policy", "leave"], "year": 2025, "draft": false}'),
            ],
        )
        checks.check("an upload with metadata is accepted", status == 202, (status, job))
        checks.check(
            "its job carries the metadata",
            job.get("metadata") == {"dept": "hr", "year": 2024, "reviewed": "2024-05-01"}
            and job["files"][0].get("metadata", {}).get("tags") == ["policy", "leave"]
            and "metadata" not in job["files"][1],
            job,
        )
        status, _ = post_form(port, {"x.md": b"# X\n\ny\n"}, [("metadata", '{"dept": "hr"}')], who="reader")
        checks.check("a reader cannot upload", status == 403, status)
        done = wait_job(port, job["id"])
        checks.check("the job succeeds", done and done["state"] == "succeeded", done)

        listed = documents(port)
        leave, drill = listed.get("zeppelin-leave.md", {}), listed.get("drill.eml", {})
        leave_metadata = {
            "dept": "hr",
            "year": 2025,
            "reviewed": "2024-05-01",
            "tags": ["policy", "leave"],
            "draft": False,
            "source": "upload",
        }
        checks.check(
            "the list shows a file's metadata, its own keys winning", leave.get("metadata") == leave_metadata, leave
        )
        m = drill.get("metadata", {})
        checks.check(
            "an e-mail's metadata: the caller's, the file's properties and source",
            m.get("dept") == "hr"
            and m.get("year") == 2024
            and m.get("source") == "upload"
            and m.get("title") == "Zeppelin mooring drill"
            and m.get("author") == "Ann Keeper <ann@lighthouse.example>"
            and m.get("created") == "2026-12-07T09:30:00+01:00",
            m,
        )
        status, one = json_request(port, "GET", "/v1/collections/faq/documents/%d" % leave["id"], None, auth("reader"))
        checks.check("a document's own GET shows it", status == 200 and one.get("metadata") == leave_metadata, one)

        hits = [h for h in search_hits(port, "zeppelin parental leave weeks") if h["document"] == "zeppelin-leave.md"]
        checks.check(
            "search hits carry their document's metadata", hits and hits[0].get("metadata") == leave_metadata, hits
        )
        answer = ask(port, "How many weeks of parental leave does the zeppelin crew get?")
        sources = [s for s in answer.get("sources", []) if s["document"] == "zeppelin-leave.md"]
        citations = [c for c in answer.get("citations", []) if c["document"] == "zeppelin-leave.md"]
        checks.check(
            "an answer's sources and citations carry it",
            sources
            and citations
            and all(s.get("metadata") == leave_metadata for s in sources)
            and all(c.get("metadata") == leave_metadata for c in citations),
            answer,
        )

        path = "/v1/collections/faq/documents/%d" % leave["id"]
        status, answer = json_request(port, "PATCH", path, {"metadata": {"dept": "legal"}}, auth("reader"))
        checks.check("a reader cannot PATCH metadata", status == 403, (status, answer))
        for body, words in [
            ({"metadata": {"source": "crawler"}}, "source"),
            ({"metadata": {"tags": [1]}}, "other than strings"),
            ({"metadata": "dept=legal"}, "JSON object"),
            ({"title": "x"}, "cannot be changed"),
        ]:
            status, answer = json_request(port, "PATCH", path, body, auth("editor"))
            checks.check(
                "a bad PATCH is 400 naming it: %s" % words,
                status == 400 and words in answer["error"]["message"],
                (status, answer),
            )
        status, answer = json_request(
            port, "PATCH", "/v1/collections/faq/documents/999999", {"metadata": {}}, auth("editor")
        )
        checks.check(
            "PATCH of no document is 404", status == 404 and error_code(json.dumps(answer)) == "not_found", answer
        )

        patched = {"dept": "legal", "tags": ["policy"], "source": "upload"}
        status, answer = json_request(
            port, "PATCH", path, {"metadata": {"dept": "legal", "tags": ["policy"], "source": "upload"}}, auth("editor")
        )
        checks.check(
            "an editor's PATCH replaces the callers' metadata, keeping source",
            status == 200 and answer.get("metadata") == patched and answer.get("id") == leave["id"],
            (status, answer),
        )
        status, answer = json_request(
            port,
            "PATCH",
            "/v1/collections/faq/documents/%d" % drill["id"],
            {"metadata": {"dept": "ops"}},
            auth("editor"),
        )
        m = answer.get("metadata", {}) if status == 200 else {}
        checks.check(
            "... and the file's own properties",
            m.get("dept") == "ops"
            and "year" not in m
            and m.get("author", "").startswith("Ann")
            and m.get("source") == "upload",
            (status, answer),
        )
        checks.check(
            "the list shows the change", documents(port).get("zeppelin-leave.md", {}).get("metadata") == patched
        )
        hits = [h for h in search_hits(port, "zeppelin parental leave weeks") if h["document"] == "zeppelin-leave.md"]
        checks.check("search hits show the change at once", hits and hits[0].get("metadata") == patched, hits)
        answer = ask(port, "How many weeks of parental leave does the zeppelin crew get?")
        sources = [s for s in answer.get("sources", []) if s["document"] == "zeppelin-leave.md"]
        checks.check(
            "the same question is answered again with the new metadata, not from the cache",
            sources and all(s.get("metadata") == patched for s in sources),
            answer,
        )
        _, events = json_request(port, "GET", "/v1/audit?action=document.update", None, auth("boss"))
        checks.check(
            "the PATCH is in the audit trail",
            events is not None and any(e.get("action") == "document.update" for e in events.get("data", [])),
            events,
        )
    finally:
        server.stop()
    return checks.finish(work)


if __name__ == "__main__":
    sys.exit(main())
