"""Roles of API keys and the audit trail on a real `kotae serve`: a reader key searches but cannot
upload, delete or read the trail; an editor creates, shares and uploads; the tenant's
admin reads its own tenant's trail only (uploads, deletions, questions with their text under
--audit-questions, key use, and the calls refused for the caller's role), filtered and paged; refused
keys are recorded without a tenant for the operator; every event is also a JSON log line; the trail
survives a restart."""

import hashlib
import json
import os
import sys
import tempfile
import time

from kotae_http import Checks, Server, data_with_faq, json_request, request, upload

KEYS = {
    "admin-a": ({"tenant": "acme"}, "kt_audit_admin_a"),
    "editor-a": ({"tenant": "acme", "role": "editor"}, "kt_audit_editor_a"),
    "reader-a": ({"tenant": "acme", "role": "reader"}, "kt_audit_reader_a"),
    "admin-b": ({"tenant": "globex"}, "kt_audit_admin_b"),
    "operator": ({"admin": True}, "kt_audit_operator"),
}


def auth(name):
    return {"Authorization": "Bearer " + KEYS[name][1]}


def keys_file(work):
    entries = []
    for name, (fields, key) in KEYS.items():
        entries.append(dict(fields, name=name, sha256=hashlib.sha256(key.encode()).hexdigest()))
    path = os.path.join(work, "keys.json")
    with open(path, "w") as f:
        json.dump({"keys": entries}, f)
    return path


def status_of_upload(port, collection, name):
    body = b'--kb\r\nContent-Disposition: form-data; name="files"; filename="x.md"\r\n\r\n# X\n\ny\r\n--kb--\r\n'
    headers = dict({"Content-Type": "multipart/form-data; boundary=kb"}, **auth(name))
    return request(port, "POST", "/v1/collections/%s/documents" % collection, body, headers)[0]


def wait_job(port, job, headers):
    deadline = time.time() + 120
    while time.time() < deadline:
        status, answer = json_request(port, "GET", "/v1/jobs/" + job, None, headers)
        if status == 200 and answer["state"] not in ("queued", "running"):
            return answer
        time.sleep(0.05)
    return None


def trail(port, name, query=""):
    return json_request(port, "GET", "/v1/audit" + query, None, auth(name))


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="kotae-audit-")
    checks = Checks()
    data = data_with_faq(fixture, work)
    log = os.path.join(work, "serve.log")
    args = ["--api-keys", keys_file(work), "--audit-questions"]
    server = Server(binary, data, log, args)
    server.start()
    try:
        port = server.port
        # Roles, checked before any handler runs.
        checks.check(
            "a reader cannot create a collection",
            json_request(port, "POST", "/v1/collections", {"name": "handbook"}, auth("reader-a"))[0] == 403,
        )
        status, _ = json_request(port, "POST", "/v1/collections", {"name": "handbook"}, auth("editor-a"))
        checks.check("an editor creates a collection", status == 201, status)
        shared = {"kind": "tenant", "id": "*", "role": "reader"}
        status, _ = json_request(port, "PUT", "/v1/collections/handbook/members", shared, auth("editor-a"))
        checks.check("and shares it with the tenant as readers", status == 200, status)
        checks.check("a reader cannot upload", status_of_upload(port, "handbook", "reader-a") == 403)
        job = upload(
            port, "handbook", {"leave.md": "# Leave\n\nStaff get thirty days of paid leave a year.\n"}, auth("editor-a")
        )
        finished = wait_job(port, job, auth("editor-a"))
        checks.check("an editor uploads", finished and finished["state"] == "succeeded", finished)
        status, found = json_request(
            port, "POST", "/v1/search", {"collection": "handbook", "query": "paid leave days"}, auth("reader-a")
        )
        checks.check("a reader searches", status == 200 and found["hits"], status)
        checks.check(
            "a reader cannot delete the collection (owner)",
            json_request(port, "DELETE", "/v1/collections/handbook", None, auth("reader-a"))[0] == 403,
        )
        checks.check("a reader cannot read the audit trail", trail(port, "reader-a")[0] == 403)
        checks.check(
            "a bad key is refused",
            json_request(port, "GET", "/v1/collections", None, {"Authorization": "Bearer kt_wrong"})[0] == 401,
        )
        status, _ = json_request(port, "POST", "/v1/collections", {"name": "plans"}, auth("admin-b"))
        checks.check("another tenant creates its own collection", status == 201, status)

        status, listed = trail(port, "admin-a")
        events = listed["data"] if status == 200 else []
        seen = [(e["action"], e["actor"], e["outcome"]) for e in events]
        checks.check(
            "the admin reads the trail, newest first",
            status == 200 and [e["seq"] for e in events] == sorted((e["seq"] for e in events), reverse=True),
            seen,
        )
        for action, actor, outcome in [
            ("collection.create", "key:editor-a", "ok"),
            ("collection.create", "key:reader-a", "denied"),
            ("document.upload", "key:editor-a", "ok"),
            ("document.upload", "key:reader-a", "denied"),
            ("search", "key:reader-a", "ok"),
            ("collection.delete", "key:reader-a", "denied"),
            ("member.put", "key:editor-a", "ok"),
            ("key.use", "key:reader-a", "ok"),
        ]:
            checks.check("recorded: %s by %s, %s" % (action, actor, outcome), (action, actor, outcome) in seen)
        search = next((e for e in events if e["action"] == "search"), {})
        checks.check(
            "a question's text and target are kept (--audit-questions)",
            search.get("detail", {}).get("question") == "paid leave days"
            and search.get("target") == "handbook"
            and search.get("address") == "127.0.0.1",
            search,
        )
        upload_event = next((e for e in events if e["action"] == "document.upload" and e["outcome"] == "ok"), {})
        checks.check(
            "an upload names its collection and status",
            upload_event.get("target") == "handbook" and upload_event.get("status") == 202,
            upload_event,
        )
        checks.check(
            "no other tenant's events",
            all(e["tenant"] == "acme" for e in events) and not any(e["target"] == "plans" for e in events),
        )
        status, other = trail(port, "admin-b")
        checks.check(
            "the other tenant sees only its own",
            status == 200 and other["data"] and all(e["tenant"] == "globex" for e in other["data"]),
            other,
        )

        status, denied = trail(port, "admin-a", "?outcome=denied&action=document.upload")
        checks.check(
            "filtered by action and outcome",
            status == 200 and len(denied["data"]) == 1 and denied["data"][0]["actor"] == "key:reader-a",
            denied,
        )
        status, first = trail(port, "admin-a", "?limit=2")
        page = first["data"] if status == 200 else []
        status2, second = trail(port, "admin-a", "?limit=2&before=%s" % first.get("next_before"))
        checks.check(
            "paged with next_before",
            len(page) == 2 and status2 == 200 and second["data"] and second["data"][0]["seq"] < page[-1]["seq"],
            (first, second),
        )
        checks.check(
            "a bad filter is a 400",
            trail(port, "admin-a", "?limit=0")[0] == 400 and trail(port, "admin-a", "?outcome=maybe")[0] == 400,
        )
        status, refused = trail(port, "operator", "?unauthenticated=true")
        checks.check(
            "the refused key is recorded without a tenant, for the operator",
            status == 200
            and any(
                e["action"] == "auth.refused" and e["status"] == 401 and e["detail"].get("reason")
                for e in refused["data"]
            ),
            refused,
        )
        checks.check(
            "only an operator reads the unauthenticated events",
            trail(port, "admin-a", "?unauthenticated=true")[0] == 403,
        )
    finally:
        checks.check("the server exits cleanly", server.stop() == 0)

    lines = [json.loads(line) for line in open(log) if line.startswith("{")]
    audit_lines = [line for line in lines if line.get("event") == "audit"]
    checks.check(
        "each event is a JSON log line",
        any(line.get("action") == "document.upload" and line.get("outcome") == "denied" for line in audit_lines),
        len(audit_lines),
    )

    server = Server(binary, data, log, args)
    server.start()
    try:
        status, listed = trail(server.port, "admin-a", "?action=document.upload")
        checks.check("the trail survives a restart", status == 200 and len(listed["data"]) == 2, listed)
    finally:
        server.stop()
    return checks.finish(work)


if __name__ == "__main__":
    sys.exit(main())
