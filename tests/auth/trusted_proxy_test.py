"""An authenticating proxy in front of a real `kotae serve` (server/trusted_proxy): its headers name
the user, their e-mail, name and groups, believed only from --trusted-proxy's addresses; groups give
roles (--group-role); a change from another site's page through the proxy is refused; the same
headers from any other address are refused (and recorded), and never stand beside an API key."""

import hashlib
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "server"))

from kotae_http import Checks, Server, data_with_faq, json_request  # noqa: E402

OPERATOR = "kt_proxy_operator"


def keys_file(work):
    path = os.path.join(work, "keys.json")
    with open(path, "w") as f:
        json.dump(
            {"keys": [{"name": "ops", "admin": True, "sha256": hashlib.sha256(OPERATOR.encode()).hexdigest()}]}, f
        )
    return path


def person(user, groups="", **extra):
    headers = {"X-Forwarded-User": user, "X-Forwarded-Email": user + "@acme.test", "X-Forwarded-Groups": groups}
    headers.update(extra)
    return headers


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="kotae-proxy-")
    checks = Checks()
    common = ["--api-keys", keys_file(work), "--proxy-tenant", "acme", "--group-role", "staff=editor"]
    trusted = Server(
        binary,
        data_with_faq(fixture, work),
        os.path.join(work, "trusted.log"),
        common + ["--trusted-proxy", "127.0.0.1/32"],
    )
    trusted.start()
    try:
        port = trusted.port
        status, me = json_request(
            port, "GET", "/v1/me", None, person("alice", "staff, hr", **{"X-Forwarded-Preferred-Username": "Alice"})
        )
        checks.check(
            "the proxy's headers name the person, their groups and role",
            status == 200
            and me["actor"] == "user:alice"
            and me["name"] == "Alice"
            and me["tenant"] == "acme"
            and me["groups"] == ["staff", "hr"]
            and me["role"] == "editor"
            and me["via"] == "proxy",
            me,
        )
        status, _ = json_request(port, "POST", "/v1/collections", {"name": "notes"}, person("alice", "staff"))
        checks.check("an editor by group creates a collection", status == 201, status)
        status, body = json_request(
            port, "POST", "/v1/collections", {"name": "other"}, person("alice", "staff", Origin="http://evil.example")
        )
        checks.check(
            "a change from another site's page is refused",
            status == 403 and body["error"]["code"] == "csrf_failed",
            body,
        )
        status, _ = json_request(
            port,
            "POST",
            "/v1/collections",
            {"name": "own-page"},
            person("alice", "staff", Origin="http://127.0.0.1:%d" % port),
        )
        checks.check("from the server's own page it is not", status == 201, status)
        checks.check(
            "a person without a group is a reader",
            json_request(port, "POST", "/v1/collections", {"name": "x"}, person("dave"))[0] == 403,
        )
        checks.check(
            "alice's collection is hers",
            json_request(port, "GET", "/v1/collections/notes", None, person("dave"))[0] == 404,
        )
        status, body = json_request(port, "GET", "/v1/me", None, person("eve", ",".join("g%d" % i for i in range(300))))
        checks.check(
            "too many groups are refused", status == 401 and body["error"]["code"] == "invalid_proxy_headers", body
        )
        checks.check("without the headers there is nobody", json_request(port, "GET", "/v1/me")[0] == 401)
    finally:
        checks.check("the first server exits cleanly", trusted.stop() == 0)

    os.makedirs(os.path.join(work, "b"))
    elsewhere = Server(
        binary, data_with_faq(fixture, os.path.join(work, "b")), os.path.join(work, "elsewhere.log"),
        common + ["--trusted-proxy", "10.0.0.0/8"],
    )  # fmt: skip
    elsewhere.start()
    try:
        port = elsewhere.port
        status, body = json_request(port, "GET", "/v1/me", None, person("alice", "staff"))
        checks.check(
            "the same headers from another address are refused",
            status == 401 and body["error"]["code"] == "untrusted_proxy_headers",
            body,
        )
        status, me = json_request(
            port, "GET", "/v1/me", None, dict(person("alice", "staff"), Authorization="Bearer " + OPERATOR)
        )
        checks.check(
            "and removed beside an API key: the key is the caller", status == 200 and me["actor"] == "key:ops", me
        )
        status, trail = json_request(
            port, "GET", "/v1/audit?unauthenticated=true", None, {"Authorization": "Bearer " + OPERATOR}
        )
        reasons = [e["detail"].get("reason", "") for e in trail.get("data", [])] if status == 200 else []
        checks.check("the forged headers are recorded", any("trusted proxy" in r for r in reasons), reasons)
    finally:
        checks.check("the second server exits cleanly", elsewhere.stop() == 0)
    return checks.finish(work)


if __name__ == "__main__":
    sys.exit(main())
