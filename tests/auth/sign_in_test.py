"""Signing in to the web page with a real OpenID provider (server/web_sessions, server/session_routes):
the authorization code flow with PKCE, state and nonce against oidc-provider, through its login form;
a server-side session behind an HttpOnly, SameSite=Lax cookie; /v1/me; two people of one tenant and
one of another, their roles from their groups and their collections private until shared; and the
attacks, each refused and recorded: a replayed state, a callback in another browser, a session cookie
fixed before sign-in, an ID token carrying another sign-in's nonce, a change without the CSRF token
(a cross-site upload or delete with a valid cookie), a session after sign-out."""

import hashlib
import json
import os
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "server"))

from kotae_http import Checks, Server, data_with_faq, json_request, request  # noqa: E402
from oidc_provider import Browser, Provider, WebClient, free_port, make_key  # noqa: E402

SECRET = "kotae-web-secret-0123456789abcdef"
OPERATOR = "kt_sign_in_operator"
ACCOUNTS = {
    "alice": {"name": "Alice Adams", "email": "alice@acme.test", "tenant": "acme", "groups": ["staff", "hr"]},
    "anna": {"name": "Anna Berg", "email": "anna@acme.test", "tenant": "acme", "groups": ["hr"]},
    "bob": {"name": "Bob Cole", "email": "bob@globex.test", "tenant": "globex", "groups": ["staff"]},
}


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="kotae-sign-in-")
    checks = Checks()
    port = free_port()
    base = "http://127.0.0.1:%d" % port
    web = WebClient(work, base, SECRET)
    provider = Provider(work, "provider", [make_key("ES256", "k1")], [web.client], accounts=ACCOUNTS).start()
    keys = os.path.join(work, "keys.json")
    with open(keys, "w") as f:
        json.dump(
            {"keys": [{"name": "ops", "admin": True, "sha256": hashlib.sha256(OPERATOR.encode()).hexdigest()}]}, f
        )
    server = Server(
        binary,
        data_with_faq(fixture, work),
        os.path.join(work, "serve.log"),
        [
            "--api-keys", keys,
        ] + web.serve_flags(provider.issuer),
        port=port,
    )  # fmt: skip
    server.start()

    def sign_in(login, browser=None):
        """A browser signed in as `login`: its cookie jar, and the callback URL it used."""
        browser = browser or Browser()
        status, headers, body, callback = browser.sign_in(base, login, "/?after=sign-in")
        assert status == 302, (status, body)
        checks.check("%s lands where the sign-in began" % login, headers["location"] == "/?after=sign-in", headers)
        return browser, callback

    def call(browser, method, path, value=None, csrf=None):
        return browser.call(base, method, path, value, csrf)

    try:
        status, config = json_request(port, "GET", "/auth/config")
        checks.check("the page learns that it may offer sign-in", status == 200 and config["sign_in"], config)
        status, _ = json_request(port, "GET", "/v1/me")
        checks.check("without a session the API is 401", status == 401)

        alice, callback = sign_in("alice")
        session = next((c for c in alice.jar if c.name == "kotae_session"), None)
        checks.check(
            "the session cookie is HttpOnly and SameSite=Lax",
            session is not None
            and session.has_nonstandard_attr("HttpOnly")
            and session.get_nonstandard_attr("SameSite") == "Lax",
            session,
        )
        status, me = call(alice, "GET", "/v1/me")
        checks.check(
            "/v1/me names alice, her tenant and her role from her group",
            status == 200
            and me["name"] == "Alice Adams"
            and me["tenant"] == "acme"
            and me["role"] == "editor"
            and me["via"] == "session"
            and me["csrf_token"],
            me,
        )
        csrf = me.get("csrf_token")
        status, body = call(alice, "POST", "/v1/collections", {"name": "hr-notes"})
        checks.check(
            "a change without the CSRF token is refused (a cross-site request)",
            status == 403 and body["error"]["code"] == "csrf_failed",
            body,
        )
        status, _, _ = alice.send(
            urllib.request.Request(
                base + "/v1/collections/faq/documents",
                data=b"--kb--\r\n",
                method="POST",
                headers={"Content-Type": "multipart/form-data; boundary=kb"},
            )
        )
        checks.check("so is a cross-site upload with her valid cookie", status == 403, status)
        status, _ = call(alice, "POST", "/v1/collections", {"name": "hr-notes"}, csrf)
        checks.check("with it, alice creates a collection", status == 201, status)

        replay = Browser()
        status, _, body = replay.get(callback)
        checks.check("a callback in another browser is refused", status == 401, body[:200])
        status, _, body = alice.get(callback)
        checks.check("a replayed state is refused", status == 401, body[:200])

        # A replayed nonce: two sign-ins begun in one browser (state S1 with nonce N1, then S2 with N2;
        # its cookie now holds S2), the second completed at the provider with N1 in place of N2. The ID
        # token then carries N1 while the state (S2, this browser's, unused) and the PKCE verifier (S2's)
        # are right: only the nonce check can refuse it.
        mixed = Browser()
        began = [urllib.parse.urlsplit(mixed.get(base + "/auth/login")[1]["Location"]) for _ in range(2)]
        first, second = (urllib.parse.parse_qs(url.query) for url in began)
        swapped = dict(second, nonce=first["nonce"])
        url = began[1]._replace(query=urllib.parse.urlencode(swapped, doseq=True)).geturl()
        mixed_callback = mixed.sign_in_at_provider(url, "alice", base + "/auth/callback")
        returned = urllib.parse.parse_qs(urllib.parse.urlsplit(mixed_callback).query)
        checks.check(
            "the provider answers the second sign-in (its state) with a code",
            returned.get("state") == second["state"] and returned.get("code") and first["nonce"] != second["nonce"],
            returned,
        )
        status, _, body = mixed.get(mixed_callback)
        nonce_refusal = "the ID token's nonce is not the one this sign-in sent"
        checks.check(
            "an ID token with another sign-in's nonce is refused, by the nonce check",
            status == 401 and nonce_refusal in body.decode(errors="replace"),
            (status, body[:200]),
        )
        checks.check("and no session is opened", not any(c.name == "kotae_session" for c in mixed.jar), list(mixed.jar))

        def nonce_logged():
            logged = [json.loads(line) for line in open(os.path.join(work, "serve.log")) if line.startswith("{")]
            return [
                e
                for e in logged
                if e.get("event") == "audit"
                and e.get("action") == "auth.sign_in"
                and e.get("outcome") == "denied"
                and e.get("detail", {}).get("reason") == nonce_refusal
            ]

        for _ in range(50):  # the log is copied to serve.log by a thread of the test
            if nonce_logged():
                break
            time.sleep(0.05)
        checks.check("the refusal is a JSON log line of the audit trail, with the reason", nonce_logged())

        planted = "fixed-by-an-attacker-0123456789"
        victim = Browser()
        status, _, _ = victim.get(base + "/v1/me", {"Cookie": "kotae_session=" + planted})
        sign_in("anna", victim)
        anna_cookie = next((c.value for c in victim.jar if c.name == "kotae_session"), "")
        checks.check("a session cookie fixed before sign-in is not the session", anna_cookie and anna_cookie != planted)
        status, _, _ = request(port, "GET", "/v1/me", None, {"Cookie": "kotae_session=" + planted})
        checks.check("and the planted id opens nothing", status == 401)

        status, me = call(victim, "GET", "/v1/me")
        checks.check(
            "anna is a reader of the same tenant",
            status == 200 and me["role"] == "reader" and me["tenant"] == "acme",
            me,
        )
        anna_csrf = me.get("csrf_token")
        status, _ = call(victim, "GET", "/v1/collections/hr-notes")
        checks.check("alice's new collection is private to her", status == 404, status)
        status, _ = call(
            alice, "PUT", "/v1/collections/hr-notes/members", {"kind": "group", "id": "hr", "role": "reader"}, csrf
        )
        checks.check("alice shares it with her group hr", status == 200, status)
        status, _ = call(victim, "GET", "/v1/collections/hr-notes")
        checks.check("anna (in hr) now reads it", status == 200, status)
        status, _ = call(
            victim, "PUT", "/v1/collections/hr-notes/members", {"kind": "group", "id": "hr", "role": "owner"}, anna_csrf
        )
        checks.check("a reader cannot share it", status == 403, status)
        status, _ = call(victim, "DELETE", "/v1/collections/hr-notes", None, anna_csrf)
        checks.check("or delete it", status == 403, status)

        bob, _ = sign_in("bob")
        status, me = call(bob, "GET", "/v1/me")
        checks.check("bob is in another tenant", status == 200 and me["tenant"] == "globex", me)
        status, _ = call(bob, "GET", "/v1/collections/hr-notes")
        checks.check("and does not see acme's collection", status == 404, status)

        status, out = call(alice, "POST", "/auth/logout", {}, csrf)
        checks.check(
            "sign-out ends the session and names the provider's end-session endpoint",
            status == 200 and out["end_session_url"].startswith(provider.issuer + "/session/end"),
            out,
        )
        status, _ = call(alice, "GET", "/v1/me")
        checks.check("the ended session opens nothing", status == 401, status)
        old = session.value if session else ""
        status, _, _ = request(port, "GET", "/v1/me", None, {"Cookie": "kotae_session=" + old})
        checks.check("not even with its old cookie", status == 401, status)

        status, trail = json_request(
            port, "GET", "/v1/audit?unauthenticated=true", None, {"Authorization": "Bearer " + OPERATOR}
        )
        refusals = [e for e in trail.get("data", []) if e["action"] == "auth.sign_in"] if status == 200 else []
        checks.check(
            "the refused sign-ins are recorded",
            len(refusals) >= 1 and all(e["outcome"] == "denied" for e in refusals),
            refusals,
        )
        checks.check(
            "the replayed nonce among them, with its reason",
            any(e["detail"].get("reason") == nonce_refusal for e in refusals),
            [e["detail"] for e in refusals],
        )
        status, acme = json_request(
            port,
            "GET",
            "/v1/audit?action=auth.sign_in",
            None,
            {"Authorization": "Bearer " + OPERATOR, "X-Kotae-Tenant": "acme"},
        )
        actors = {e["actor"] for e in acme.get("data", [])} if status == 200 else set()
        checks.check("and the sign-ins, with who", {"user:alice", "user:anna"} <= actors, actors)
    finally:
        checks.check("the server exits cleanly", server.stop() == 0)
        provider.stop()
    return checks.finish(work)


if __name__ == "__main__":
    sys.exit(main())
