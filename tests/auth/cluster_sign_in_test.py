"""Signed-in people on the two-replica cluster (scripts/cluster up with a real OpenID provider): the
sessions live in PostgreSQL, so either replica serves them. alice signs in through HAProxy (the sign-in
begun on one replica is finished on the other), then her session cookie is used directly on each
replica's port: /v1/me, a collection she creates through replica 1 listed for her on replica 2 and 404
for anna (her tenant) on both until shared, the CSRF token required on both; a sign-out through one
replica ends the session on the other (at the next request once its 5 s session cache has lapsed, and
within those 5 s when it had just read it); bob of another tenant sees nothing of acme's on either
replica. The provider's flags are remembered in the cluster dir: a replica restarted by a later
`scripts/cluster up` without arguments signs people in too, and still knows alice's session.

Usage: cluster_sign_in_test.py KOTAE_BINARY FIXTURE_DATA_DIR
"""

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "server"))

from kotae_http import Checks, data_with_faq  # noqa: E402
from oidc_provider import Browser, Provider, WebClient, make_key  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CLUSTER = os.path.join(ROOT, "scripts", "cluster")
SECRET = "kotae-cluster-secret-0123456789abcdef"
ACCOUNTS = {
    "alice": {"name": "Alice Adams", "email": "alice@acme.test", "tenant": "acme", "groups": ["staff"]},
    "anna": {"name": "Anna Berg", "email": "anna@acme.test", "tenant": "acme", "groups": ["hr"]},
    "bob": {"name": "Bob Cole", "email": "bob@globex.test", "tenant": "globex", "groups": ["staff"]},
}


def free_block(count):
    """The first of `count` consecutive free loopback ports (HAProxy, two replicas, two workers)."""
    for base in range(20000 + os.getpid() % 20000, 65000, 7):
        try:
            held = []
            for port in range(base, base + count):
                s = socket.socket()
                held.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in held:
                s.close()
    raise RuntimeError("no free block of ports")


def call(port, method, path, cookie=None, csrf=None, value=None):
    """One request straight to `port`, with a session cookie (and CSRF token) as a browser sends them."""
    headers = {"Content-Type": "application/json"}
    if cookie:
        headers["Cookie"] = "kotae_session=" + cookie
    if csrf:
        headers["X-CSRF-Token"] = csrf
    body = None if value is None and method == "GET" else json.dumps(value or {}).encode()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        data = response.read()
        return response.status, json.loads(data) if data else None
    finally:
        connection.close()


def names(answer):
    return {c["name"] for c in (answer or {}).get("data", [])}


def main():
    binary, fixture = os.path.realpath(sys.argv[1]), sys.argv[2]
    work = tempfile.mkdtemp(prefix="kotae-cluster-sign-in-")
    os.chmod(work, 0o755)  # PostgreSQL runs as `postgres` when the test runs as root
    checks = Checks()
    port = free_block(5)
    base = "http://127.0.0.1:%d" % port
    replicas = (port + 1, port + 2)
    cluster_dir = os.path.join(work, "cluster")
    env = dict(
        os.environ,
        KOTAE_BINARY=binary,
        KOTAE_DATA=data_with_faq(fixture, work),  # the fixture's models linked, its faq copied
        KOTAE_CLUSTER_DIR=cluster_dir,
        KOTAE_CLUSTER_PORT=str(port),
    )
    web = WebClient(work, base, SECRET)  # HAProxy's address: either replica finishes a sign-in
    provider = Provider(work, "provider", [make_key("ES256", "k1")], [web.client], accounts=ACCOUNTS).start()
    serve_args = web.serve_flags(provider.issuer)

    def cluster(*args):
        return subprocess.run([CLUSTER] + list(args), env=env, capture_output=True, text=True, timeout=600)

    def sign_in(login):
        """A browser signed in as `login` through HAProxy; its session cookie's value."""
        browser = Browser()
        status, headers, body, _ = browser.sign_in(base, login)
        checks.check(
            "%s signs in through HAProxy" % login, status == 302 and headers.get("location") == "/", body[:200]
        )
        return next((c.value for c in browser.jar if c.name == "kotae_session"), "")

    def until(predicate, seconds):
        """Polls `predicate` for up to `seconds`; the seconds it took, or None."""
        started = time.time()
        while time.time() - started < seconds:
            if predicate():
                return time.time() - started
            time.sleep(0.05)
        return None

    try:
        up = cluster("up", *serve_args)
        checks.check(
            "scripts/cluster up with the provider's flags prints HAProxy's URL",
            up.returncode == 0 and up.stdout.strip().splitlines()[-1:] == [base + "/"],
            up.stderr[-500:],
        )
        status = cluster("status")
        checks.check(
            "status: every part running, and the replicas' arguments",
            status.returncode == 0 and "serve args --oidc-issuer " + provider.issuer in status.stdout,
            status.stdout,
        )
        again = cluster("up", "--oidc-scopes", "openid")
        checks.check(
            "other arguments while the replicas run are refused (down first)",
            again.returncode != 0 and "down first" in again.stderr,
            again.stderr[-300:],
        )
        for replica in replicas:
            status, config = call(replica, "GET", "/auth/config")
            checks.check(
                "replica on port %d offers sign-in" % replica, status == 200 and config["sign_in"] is True, config
            )

        alice = sign_in("alice")
        logs = [open(os.path.join(cluster_dir, "replica-%d.log" % i)).read() for i in (1, 2)]
        checks.check(
            "the sign-in was begun on one replica and finished on the other (round robin, no affinity)",
            any("/auth/login" in logs[i] and "/auth/callback" in logs[1 - i] for i in (0, 1)),
        )
        csrf = {}
        for replica in replicas:
            status, me = call(replica, "GET", "/v1/me", alice)
            checks.check(
                "alice's cookie, straight to port %d: /v1/me names her" % replica,
                status == 200
                and me["actor"] == "user:alice"
                and me["tenant"] == "acme"
                and me["role"] == "editor"
                and me["via"] == "session",
                me,
            )
            csrf[replica] = (me or {}).get("csrf_token")
        checks.check("one session: the same CSRF token on both", csrf[replicas[0]] == csrf[replicas[1]], csrf)
        token = csrf[replicas[0]]
        for replica in replicas:
            status, body = call(replica, "POST", "/v1/collections", alice, None, {"name": "alice-notes"})
            checks.check(
                "a change without the CSRF token is refused on port %d" % replica,
                status == 403 and body["error"]["code"] == "csrf_failed",
                body,
            )
            status, _ = call(replica, "POST", "/v1/collections", alice, "not-the-token", {"name": "alice-notes"})
            checks.check("and with a wrong one", status == 403, status)
        status, body = call(replicas[0], "POST", "/v1/collections", alice, token, {"name": "alice-notes"})
        checks.check("with it, alice creates a collection through replica 1", status == 201, body)
        listed = until(lambda: "alice-notes" in names(call(replicas[1], "GET", "/v1/collections", alice)[1]), 10)
        checks.check("replica 2 lists it for her", listed is not None, listed)
        status, _ = call(replicas[1], "GET", "/v1/collections/alice-notes", alice)
        checks.check("and describes it", status == 200, status)

        anna = sign_in("anna")
        status, me = call(replicas[1], "GET", "/v1/me", anna)
        checks.check(
            "anna is a reader of acme", status == 200 and me["role"] == "reader" and me["tenant"] == "acme", me
        )
        anna_csrf = (me or {}).get("csrf_token")
        for replica in replicas:
            status, listing = call(replica, "GET", "/v1/collections", anna)
            described, _ = call(replica, "GET", "/v1/collections/alice-notes", anna)
            checks.check(
                "alice's collection is private: 404 for anna on port %d, and not listed" % replica,
                status == 200 and described == 404 and "alice-notes" not in names(listing),
                (status, described, sorted(names(listing))),
            )
        member = {"kind": "user", "id": "anna", "role": "reader"}
        status, _ = call(replicas[1], "PUT", "/v1/collections/alice-notes/members", alice, token, member)
        checks.check("alice shares it with anna through replica 2", status == 200, status)
        for replica in replicas:
            status, _ = call(replica, "GET", "/v1/collections/alice-notes", anna)
            checks.check("anna reads it on port %d" % replica, status == 200, status)

        bob = sign_in("bob")
        for replica in replicas:
            status, me = call(replica, "GET", "/v1/me", bob)
            _, listing = call(replica, "GET", "/v1/collections", bob)
            described, _ = call(replica, "GET", "/v1/collections/alice-notes", bob)
            checks.check(
                "bob (globex) on port %d sees nothing of acme's" % replica,
                status == 200 and me["tenant"] == "globex" and described == 404 and "alice-notes" not in names(listing),
                (me, described, sorted(names(listing))),
            )
            status, _ = call(replica, "PUT", "/v1/collections/alice-notes/members", bob, me.get("csrf_token"), member)
            checks.check("and cannot share it", status in (403, 404), status)

        # A replica restarted by a later `up` without arguments takes the remembered ones.
        with open(os.path.join(cluster_dir, "replica-2.pid")) as f:
            pid = int(f.read())
        os.kill(pid, signal.SIGTERM)
        until(lambda: not os.path.exists("/proc/%d" % pid), 60)
        again = cluster("up")
        checks.check("`scripts/cluster up` restarts the stopped replica", again.returncode == 0, again.stderr[-500:])
        status, me = call(replicas[1], "GET", "/v1/me", alice)
        checks.check(
            "with the remembered provider flags: it knows alice's session (kept in PostgreSQL)",
            status == 200 and me["actor"] == "user:alice" and me["via"] == "session",
            (status, me),
        )

        # Sign-out through replica 1 while replica 2 has just read the session: it ends there within
        # replica 2's session cache of 5 s.
        status, _ = call(replicas[1], "GET", "/v1/me", anna)
        checks.check("anna's session is live on replica 2", status == 200, status)
        status, _ = call(replicas[0], "POST", "/auth/logout", anna, anna_csrf)
        checks.check("anna signs out through replica 1", status == 200, status)
        checks.check("and is signed out there at once", call(replicas[0], "GET", "/v1/me", anna)[0] == 401)
        ended = until(lambda: call(replicas[1], "GET", "/v1/me", anna)[0] == 401, 10)
        checks.check("her session ends on replica 2 within its 5 s cache", ended is not None and ended <= 6, ended)

        # Sign-out through replica 1 when replica 2 last read the session over 5 s ago: the next request
        # on replica 2 is refused.
        time.sleep(5.5)
        status, _ = call(replicas[0], "POST", "/auth/logout", alice, token)
        checks.check("alice signs out through replica 1", status == 200, status)
        status, _ = call(replicas[1], "GET", "/v1/me", alice)
        checks.check("her next request on replica 2 is refused", status == 401, status)
        status, _ = call(replicas[1], "POST", "/v1/collections", alice, token, {"name": "after-sign-out"})
        checks.check("so is a change there, CSRF token and all", status == 401, status)
        status, _ = call(replicas[0], "GET", "/v1/me", alice)
        checks.check("and on replica 1", status == 401, status)
    except Exception:
        checks.check("the test runs to its end", False, traceback.format_exc())
    finally:
        down = cluster("down")
        status = cluster("status")
        checks.check("scripts/cluster down: nothing left running", down.returncode == 0 and status.returncode != 0)
        provider.stop()
        if checks.failed:
            for name in sorted(os.listdir(cluster_dir)) if os.path.isdir(cluster_dir) else []:
                if name.endswith(".log"):
                    tail = open(os.path.join(cluster_dir, name), errors="replace").read()[-2000:]
                    print("--- %s (last lines)\n%s" % (name, tail), file=sys.stderr)
    return checks.finish(work)


if __name__ == "__main__":
    sys.exit(main())
