"""A signed-in session follows the provider (server/web_sessions: revalidation): every
--session-revalidate-minutes the server refreshes the person at the real oidc-provider with the
session's refresh token (kept sealed in the store, a new one at every refresh). A person removed from
a group loses what the group gave them within that interval; a role taken away by a group is gone; a
person removed at the provider is signed out; both recorded in the audit trail."""

import json
import os
import sqlite3
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "server"))

from kotae_http import Checks, Server, data_with_faq  # noqa: E402
from oidc_provider import Browser, Provider, WebClient, free_port, make_key  # noqa: E402

SECRET = "kotae-web-secret-revalidation-0123"
ACCOUNTS = {
    "alice": {"name": "Alice Adams", "email": "alice@acme.test", "tenant": "acme", "groups": ["staff", "hr"]},
    "anna": {"name": "Anna Berg", "email": "anna@acme.test", "tenant": "acme", "groups": ["hr"]},
}
REVALIDATE_SECONDS = 3


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="kotae-revalidation-")
    checks = Checks()
    port = free_port()
    base = "http://127.0.0.1:%d" % port
    web = WebClient(work, base, SECRET, refresh=True)
    accounts = json.loads(json.dumps(ACCOUNTS))
    provider = Provider(work, "provider", [make_key("ES256", "k1")], [web.client], accounts=accounts).start()

    def at_the_provider(change):
        """An administrator changes the accounts at the provider (it reads them at each use)."""
        change(provider.config["accounts"])
        with open(provider.path + ".new", "w") as f:
            json.dump(provider.config, f)
        os.replace(provider.path + ".new", provider.path)

    data = data_with_faq(fixture, work)
    server = Server(
        binary,
        data,
        os.path.join(work, "serve.log"),
        web.serve_flags(provider.issuer) + ["--session-revalidate-minutes", str(REVALIDATE_SECONDS / 60)],
        port=port,
    )  # fmt: skip
    server.start()

    def sign_in(login):
        browser = Browser()
        status, _, body, _ = browser.sign_in(base, login)
        assert status == 302, (status, body)
        return browser

    def call(browser, method, path, value=None, csrf=None):
        return browser.call(base, method, path, value, csrf)

    def within(seconds, condition):
        """Whether `condition()` holds within `seconds` (asked every half second: each ask is a request)."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            if condition():
                return True
            time.sleep(0.5)
        return condition()

    # A revalidation is due after REVALIDATE_SECONDS; the replica reads the session at most every 5 s
    # (its cache), then the refresh runs beside the request: allow all of it, twice over.
    limit = 2 * (REVALIDATE_SECONDS + 5 + 2)
    try:
        alice, anna = sign_in("alice"), sign_in("anna")
        _, me = call(alice, "GET", "/v1/me")
        csrf = me.get("csrf_token")
        checks.check("alice is an editor by her group staff", me.get("role") == "editor", me)
        status, _ = call(alice, "POST", "/v1/collections", {"name": "payroll"}, csrf)
        checks.check("she creates a collection", status == 201, status)
        status, _ = call(
            alice, "PUT", "/v1/collections/payroll/members", {"kind": "group", "id": "hr", "role": "reader"}, csrf
        )
        checks.check("and shares it with the group hr", status == 200, status)
        checks.check("anna (in hr) reads it", call(anna, "GET", "/v1/collections/payroll")[0] == 200)

        with sqlite3.connect(os.path.join(data, "server.db")) as db:
            stored = db.execute("SELECT refresh_token FROM sessions").fetchall()
        checks.check(
            "each session keeps a refresh token, sealed (not a token the provider could read back)",
            len(stored) == 2 and all(len(r[0]) > 40 and "." not in r[0] for r in stored),
            stored,
        )

        at_the_provider(lambda a: a["anna"].update(groups=[]))
        checks.check(
            "anna, removed from hr at the provider, loses the collection within the revalidation interval",
            within(limit, lambda: call(anna, "GET", "/v1/collections/payroll")[0] == 404),
        )
        status, me = call(anna, "GET", "/v1/me")
        checks.check(
            "her session goes on, with her groups as the provider has them now",
            status == 200 and me["groups"] == [],
            me,
        )

        at_the_provider(lambda a: a["alice"].update(groups=["hr"]))
        checks.check(
            "alice, removed from staff, is a reader within the interval",
            within(limit, lambda: call(alice, "GET", "/v1/me")[1].get("role") == "reader"),
        )
        status, body = call(alice, "POST", "/v1/collections", {"name": "payroll-2"}, csrf)
        checks.check("and can no longer create collections", status == 403, (status, body))
        checks.check(
            "she still owns hers (a member by name, not by group)",
            call(alice, "GET", "/v1/collections/payroll")[0] == 200,
        )

        at_the_provider(lambda a: a.pop("anna"))
        checks.check(
            "anna, removed at the provider, is signed out within the interval",
            within(limit, lambda: call(anna, "GET", "/v1/me")[0] == 401),
        )
        checks.check("alice is still signed in (her refresh tokens rotate)", call(alice, "GET", "/v1/me")[0] == 200)

        # The audit trail: the change and the end, each with its reason.
        events = []
        for _ in range(20):  # rows are written a moment after the log line
            with sqlite3.connect(os.path.join(data, "server.db")) as db:
                events = db.execute(
                    "SELECT actor, action, detail FROM audit_events WHERE action LIKE 'auth.session_%'"
                ).fetchall()
            if len(events) >= 3:
                break
            time.sleep(0.5)
        actions = {(actor, action) for actor, action, _ in events}
        checks.check(
            "the trail records the changes and the end",
            {
                ("user:anna", "auth.session_change"),
                ("user:alice", "auth.session_change"),
                ("user:anna", "auth.session_end"),
            }
            <= actions,
            events,
        )
    finally:
        checks.check("the server exits cleanly", server.stop() == 0)
        provider.stop()
    return checks.finish(work)


if __name__ == "__main__":
    sys.exit(main())
