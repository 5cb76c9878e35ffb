"""Collections shared by role on a real `kotae serve` (server/member_routes, server/collection_roles,
the check in KotaeServer before every handler): a collection created through the API is private to
its creator; its owner shares it with a key, a group or the whole tenant, each with a role, and takes
it back (effective at the next request); a reader there cannot upload or share; the last owner stays;
another tenant's caller gets 404 for the collection, its members and its jobs; a collection without
members (indexed before members existed) stays open to the tenant. Its owner renames it (PATCH
/v1/collections/{name}): its members keep their roles under the new name, a stranger still gets 404,
the old name is gone, its conversations and jobs follow; readers and editors cannot, a taken or
invalid name is refused, and not while an ingestion job runs on it."""

import hashlib
import json
import os
import sys
import tempfile
import time

from kotae_http import Checks, Server, data_with_faq, json_request, request, upload

KEYS = {
    "alice": {"tenant": "local", "role": "editor"},
    "bob": {"tenant": "local", "role": "editor"},
    "carol": {"tenant": "local", "role": "reader"},
    "dave": {"tenant": "local", "role": "editor"},
    "boss": {"tenant": "local"},
    "rival": {"tenant": "globex", "role": "editor"},
}


def key(name):
    return "kt_sharing_" + name


def auth(name):
    return {"Authorization": "Bearer " + key(name)}


def keys_file(work):
    entries = [
        dict(fields, name=name, sha256=hashlib.sha256(key(name).encode()).hexdigest()) for name, fields in KEYS.items()
    ]
    path = os.path.join(work, "keys.json")
    with open(path, "w") as f:
        json.dump({"keys": entries}, f)
    return path


def names(port, who):
    status, listed = json_request(port, "GET", "/v1/collections", None, auth(who))
    return sorted(c["name"] for c in listed["data"]) if status == 200 else status


def search(port, who, collection):
    return json_request(port, "POST", "/v1/search", {"collection": collection, "query": "leave"}, auth(who))[0]


def upload_status(port, who, collection):
    body = b'--kb\r\nContent-Disposition: form-data; name="files"; filename="x.md"\r\n\r\n# X\n\ny\r\n--kb--\r\n'
    headers = dict({"Content-Type": "multipart/form-data; boundary=kb"}, **auth(who))
    return request(port, "POST", "/v1/collections/%s/documents" % collection, body, headers)[0]


def share(port, who, kind, ident, role):
    return json_request(port, "PUT", "/v1/collections/hr/members", {"kind": kind, "id": ident, "role": role}, auth(who))


def rename(port, who, collection, to):
    body = to if isinstance(to, dict) else {"name": to}
    return json_request(port, "PATCH", "/v1/collections/" + collection, body, auth(who))


def members_of(port, who, collection):
    status, members = json_request(port, "GET", "/v1/collections/%s/members" % collection, None, auth(who))
    return sorted((m["kind"], m["id"], m["role"]) for m in members["data"]) if status == 200 else status


def wait_jobs(port, who, timeout=120):
    """Until none of the caller's jobs is queued or running; their list."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        status, jobs = json_request(port, "GET", "/v1/jobs", None, auth(who))
        if status == 200 and all(j["state"] not in ("queued", "running") for j in jobs["data"]):
            return jobs["data"]
        time.sleep(0.05)
    return None


def ask(port, who, collection, conversation=None):
    body = {"collection": collection, "question": "How many days of paid leave?", "backends": ["extractive"]}
    if conversation:
        body["conversation_id"] = conversation
    return json_request(port, "POST", "/v1/ask", body, auth(who))


def conversations(port, who, collection):
    status, listed = json_request(port, "GET", "/v1/conversations?collection=" + collection, None, auth(who))
    return [c["id"] for c in listed["data"]] if status == 200 else status


def detail(event):
    value = event.get("detail")
    return value if isinstance(value, dict) else json.loads(value or "{}")


def check_rename(checks, port, data):
    """hr (alice owner, bob editor) renamed to people and back."""
    checks.check("carol is made a reader of hr", share(port, "alice", "key", "carol", "reader")[0] == 200)
    before = members_of(port, "alice", "hr")
    checks.check("hr's jobs are done", wait_jobs(port, "alice") is not None)
    status, asked = ask(port, "alice", "hr")
    conversation = asked.get("conversation_id") if status == 200 else None
    checks.check("alice asks hr in a conversation", conversation is not None, asked)

    for who in ("carol", "bob"):
        status, body = rename(port, who, "hr", "people")
        checks.check("a %s of hr cannot rename it (403)" % who, status == 403, body)
    checks.check("a stranger gets 404 for it", rename(port, "dave", "hr", "people")[0] == 404)
    # Another tenant has no hr: an editor there is refused as for any name without members (403), and
    # this tenant's hr is untouched.
    checks.check("another tenant's caller cannot", rename(port, "rival", "hr", "people")[0] in (403, 404))
    status, body = rename(port, "alice", "hr", "faq")
    checks.check("a taken name is 409", status == 409 and body["error"]["code"] == "already_exists", body)
    checks.check(
        "an invalid name is 400",
        all(
            rename(port, "alice", "hr", bad)[0] == 400
            for bad in (".hidden", "../x", "a/b", "", "x" * 101, {"name": 5}, {"name": "ok", "embedder": "x"}, {})
        ),
    )
    status, body = rename(port, "boss", "nothing", "people")
    checks.check("an unknown collection is 404", status == 404, body)
    # A move that fails midway (a folder that is no collection holds the new name) leaves hr as it was,
    # members and all: they were copied first, and the copy is undone.
    blocked = os.path.join(data, "collections", "blocked")
    os.makedirs(blocked)
    status, body = rename(port, "alice", "hr", "blocked")
    os.rmdir(blocked)
    checks.check("a move that fails is refused", status == 409, body)
    checks.check(
        "... and hr keeps its members: a reader reads it, a stranger still gets 404",
        members_of(port, "alice", "hr") == before
        and search(port, "carol", "hr") == 200
        and search(port, "dave", "hr") == 404
        and search(port, "alice", "blocked") == 404,
        members_of(port, "alice", "hr"),
    )
    status, same = rename(port, "alice", "hr", "hr")
    checks.check("the same name is a 200 no-op", status == 200 and same["name"] == "hr", same)

    # A job running on it refuses the rename, saying why.
    big = {"long-%d.md" % i: "# Part %d\n\n" % i + "Paid leave rules, paragraph. " * 4000 for i in range(6)}
    upload(port, "hr", big, auth("alice"))
    status, body = rename(port, "alice", "hr", "people")
    checks.check(
        "not while an ingestion job is queued or running (409)",
        status == 409 and body["error"]["code"] == "ingestion_running" and "job" in body["error"]["message"],
        body,
    )
    checks.check("the job finishes", wait_jobs(port, "alice") is not None)

    status, renamed = rename(port, "alice", "hr", "people")
    checks.check(
        "alice renames hr to people",
        status == 200
        and renamed["name"] == "people"
        and renamed["object"] == "collection"
        and renamed["documents"] >= 1,
        renamed,
    )
    checks.check(
        "its members keep their roles",
        members_of(port, "alice", "people") == before,
        members_of(port, "alice", "people"),
    )
    checks.check(
        "the old name is 404 for everyone",
        json_request(port, "GET", "/v1/collections/hr", None, auth("alice"))[0] == 404
        and search(port, "alice", "hr") == 404
        and search(port, "boss", "hr") == 404
        and members_of(port, "alice", "hr") == 404,
    )
    checks.check("the list says people", "people" in names(port, "alice") and "hr" not in names(port, "alice"))
    checks.check(
        "a reader still reads it, a stranger and another tenant still get 404",
        search(port, "carol", "people") == 200
        and search(port, "dave", "people") == 404
        and "people" not in names(port, "dave")
        and search(port, "rival", "people") == 404,
    )
    checks.check("an editor still uploads to it", upload_status(port, "bob", "people") == 202)
    checks.check("and still cannot rename it", rename(port, "bob", "people", "staff")[0] == 403)
    status, answer = ask(port, "alice", "people", conversation)
    checks.check(
        "ask on the new name goes on in the conversation",
        status == 200 and answer["conversation_id"] == conversation and answer["sources"],
        answer,
    )
    checks.check(
        "the conversation list follows",
        conversations(port, "alice", "people") == [conversation] and conversations(port, "alice", "hr") == [],
    )
    jobs = wait_jobs(port, "alice")
    checks.check(
        "its jobs follow it",
        jobs is not None and jobs and all(j["collection"] == "people" for j in jobs if j["collection"] != "faq"),
        jobs,
    )
    status, trail = json_request(port, "GET", "/v1/audit?action=collection.rename", None, auth("boss"))
    checks.check(
        "the rename is in the audit trail, old and new name",
        status == 200
        and any(
            e["actor"] == "key:alice"
            and e["outcome"] == "ok"
            and e["target"] == "hr"
            and detail(e).get("to") == "people"
            for e in trail["data"]
        )
        and any(e["actor"] == "key:bob" and e["status"] == 403 for e in trail["data"]),
        trail,
    )
    status, back = rename(port, "alice", "people", "hr")
    checks.check("and renames it back", status == 200 and back["name"] == "hr", back)
    checks.check("its members still the same", members_of(port, "alice", "hr") == before)


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="kotae-sharing-")
    checks = Checks()
    data = data_with_faq(fixture, work)
    server = Server(binary, data, os.path.join(work, "serve.log"), ["--api-keys", keys_file(work)])
    server.start()
    try:
        port = server.port
        status, _ = json_request(port, "POST", "/v1/collections", {"name": "hr"}, auth("alice"))
        checks.check("alice creates hr", status == 201, status)
        job = upload(port, "hr", {"leave.md": "# Leave\n\nThirty days of paid leave.\n"}, auth("alice"))
        checks.check("it is private to alice", names(port, "bob") == ["faq"] and "hr" in names(port, "alice"))
        checks.check("a tenant admin sees it", names(port, "boss") == ["faq", "hr"], names(port, "boss"))
        checks.check(
            "bob gets 404 for it everywhere",
            json_request(port, "GET", "/v1/collections/hr", None, auth("bob"))[0] == 404
            and search(port, "bob", "hr") == 404
            and upload_status(port, "bob", "hr") == 404
            and json_request(port, "GET", "/v1/collections/hr/members", None, auth("bob"))[0] == 404
            and share(port, "bob", "key", "bob", "owner")[0] == 404
            and json_request(port, "GET", "/v1/jobs/" + job, None, auth("bob"))[0] == 404,
        )
        status, jobs = json_request(port, "GET", "/v1/jobs", None, auth("bob"))
        checks.check("and its jobs are not in bob's list", status == 200 and all(j["id"] != job for j in jobs["data"]))
        status, members = json_request(port, "GET", "/v1/collections/hr/members", None, auth("alice"))
        checks.check(
            "its creator is its owner",
            status == 200 and [(m["kind"], m["id"], m["role"]) for m in members["data"]] == [("key", "alice", "owner")],
            members,
        )

        status, shared = share(port, "alice", "key", "bob", "reader")
        checks.check("alice shares it with bob as reader", status == 200 and shared["role"] == "reader", shared)
        checks.check("bob now sees it and searches it", "hr" in names(port, "bob") and search(port, "bob", "hr") == 200)
        checks.check("a reader there cannot upload", upload_status(port, "bob", "hr") == 403)
        checks.check("or share it", share(port, "bob", "key", "bob", "owner")[0] == 403)
        checks.check("carol still cannot see it", search(port, "carol", "hr") == 404)
        checks.check("shared with the tenant", share(port, "alice", "tenant", "*", "reader")[0] == 200)
        checks.check("carol reads it", search(port, "carol", "hr") == 200)
        checks.check(
            "taken back from the tenant and bob",
            json_request(port, "DELETE", "/v1/collections/hr/members/tenant/*", None, auth("alice"))[0] == 200
            and json_request(port, "DELETE", "/v1/collections/hr/members/key/bob", None, auth("alice"))[0] == 200,
        )
        checks.check(
            "both lose it at the next request", search(port, "bob", "hr") == 404 and search(port, "carol", "hr") == 404
        )
        status, body = share(port, "alice", "key", "alice", "reader")
        checks.check("the last owner cannot step down", status == 409 and body["error"]["code"] == "last_owner", body)
        checks.check(
            "bad members are 400",
            share(port, "alice", "robot", "x", "reader")[0] == 400
            and share(port, "alice", "key", "x", "god")[0] == 400
            and share(port, "alice", "tenant", "acme", "reader")[0] == 400,
        )
        checks.check(
            "a bob editor there may upload, not delete (owner)",
            share(port, "alice", "key", "bob", "editor")[0] == 200
            and upload_status(port, "bob", "hr") == 202
            and json_request(port, "DELETE", "/v1/collections/hr", None, auth("bob"))[0] == 403,
        )
        checks.check(
            "another tenant's caller gets 404",
            json_request(port, "GET", "/v1/collections/hr", None, auth("rival"))[0] == 404
            and json_request(port, "GET", "/v1/collections/hr/members", None, auth("rival"))[0] == 404
            and json_request(port, "GET", "/v1/jobs/" + job, None, auth("rival"))[0] == 404
            and search(port, "rival", "hr") == 404,
        )
        checks.check(
            "a collection without members stays open to the tenant",
            search(port, "bob", "faq") == 200 and search(port, "carol", "faq") == 200,
        )
        check_rename(checks, port, data)
        status, trail = json_request(port, "GET", "/v1/audit?action=member.put", None, auth("boss"))
        checks.check(
            "shares are in the audit trail",
            status == 200
            and any(e["actor"] == "key:alice" and e["outcome"] == "ok" for e in trail["data"])
            and any(e["actor"] == "key:bob" and e["status"] == 403 for e in trail["data"]),
            trail,
        )
        checks.check(
            "the owner deletes it, and its members go with it",
            json_request(port, "DELETE", "/v1/collections/hr", None, auth("alice"))[0] == 200
            and json_request(port, "POST", "/v1/collections", {"name": "hr"}, auth("bob"))[0] == 201
            and search(port, "alice", "hr") == 404,
        )
    finally:
        checks.check("the server exits cleanly", server.stop() == 0)
    return checks.finish(work)


if __name__ == "__main__":
    sys.exit(main())
