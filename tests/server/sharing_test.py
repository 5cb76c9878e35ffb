"""Collections shared by role on a real `kotae serve` (server/member_routes, server/collection_roles,
the check in KotaeServer before every handler): a collection created through the API is private to
its creator; its owner shares it with a key, a group or the whole tenant, each with a role, and takes
it back (effective at the next request); a reader there cannot upload or share; the last owner stays;
another tenant's caller gets 404 for the collection, its members and its jobs; a collection without
members (indexed before members existed) stays open to the tenant."""

import hashlib
import json
import os
import sys
import tempfile

from kotae_http import Checks, Server, data_with_faq, json_request, request, upload

KEYS = {
    "alice": {"tenant": "local", "role": "editor"},
    "bob": {"tenant": "local", "role": "editor"},
    "carol": {"tenant": "local", "role": "reader"},
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


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="kotae-sharing-")
    checks = Checks()
    server = Server(
        binary, data_with_faq(fixture, work), os.path.join(work, "serve.log"), ["--api-keys", keys_file(work)]
    )
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
