"""Bearer tokens from a real OpenID provider on a real `kotae serve` (server/auth/openid_provider):
services call the API with client-credentials tokens, their tenant and role from the token's claims
and --group-role, a collection shared with a group the token names; the provider's keys are fetched from its JWKS and fetched again when it
rotates them; and the attacks on tokens are refused, recorded for the operator and logged: alg none,
the provider's public key used as an HMAC secret, another issuer, another audience, a tampered
payload, an ID-token-shaped token, the provider's own signature over an expired or not-yet-valid token
(while one just inside the clock skew is accepted); a reader uploading; another tenant's collection."""

import hashlib
import hmac
import http.client
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "server"))

from kotae_http import Checks, Server, data_with_faq, json_request, request, upload  # noqa: E402
from oidc_provider import AUDIENCE, Provider, b64url, make_key, public_jwk, sign_token, token_parts  # noqa: E402

OPERATOR = "kt_bearer_operator"
ADMIN_ACME = "kt_bearer_admin_acme"
SERVICES = {
    "indexer": ("indexer-secret-0123456789abcdef", {"tenant": "acme", "groups": ["bots"]}),
    "viewer": ("viewer-secret-0123456789abcdef", {"tenant": "acme", "groups": ["staff"]}),
    "rival": ("rival-secret-0123456789abcdef", {"tenant": "globex", "groups": ["bots"]}),
}


def clients():
    return [
        {
            "client_id": name,
            "client_secret": secret,
            "grant_types": ["client_credentials"],
            "response_types": [],
            "redirect_uris": [],
        }
        for name, (secret, _) in SERVICES.items()
    ]


def keys_file(work):
    digest = lambda key: hashlib.sha256(key.encode()).hexdigest()  # noqa: E731
    path = os.path.join(work, "keys.json")
    with open(path, "w") as f:
        json.dump(
            {
                "keys": [
                    {"name": "ops", "admin": True, "sha256": digest(OPERATOR)},
                    {"name": "acme-admin", "tenant": "acme", "sha256": digest(ADMIN_ACME)},
                ]
            },
            f,
        )
    return path


def bearer(token):
    return {"Authorization": "Bearer " + token}


def forged(token, header=None, payload=None, signature=None, key=b""):
    """`token` with its header or payload replaced; signed with HMAC-SHA256 by `key` when given."""
    old_header, old_payload, old_signature = token_parts(token)
    head = b64url(json.dumps(header if header is not None else old_header).encode())
    body = b64url(json.dumps(payload if payload is not None else old_payload).encode())
    if key:
        signature = b64url(hmac.new(key, (head + "." + body).encode(), hashlib.sha256).digest())
    return head + "." + body + "." + (old_signature if signature is None else signature)


def request_from(address, port, headers):
    """GET /v1/collections from a loopback address of its own (127.0.0.N): (status, body, headers)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60, source_address=(address, 0))
    try:
        connection.request("GET", "/v1/collections", headers=headers)
        response = connection.getresponse()
        return response.status, response.read(), dict((k.lower(), v) for k, v in response.getheaders())
    finally:
        connection.close()


def refusals_from(port, address):
    """The unauthenticated refusals from `address` in the audit trail (stored within a second)."""
    events = []
    for _ in range(50):
        status, trail = json_request(port, "GET", "/v1/audit?unauthenticated=true", None, bearer(OPERATOR))
        events = [e for e in trail.get("data", []) if e.get("address") == address] if status == 200 else []
        if events:
            break
        time.sleep(0.1)
    return events


def wait_job(port, job, headers):
    deadline = time.time() + 120
    while time.time() < deadline:
        status, answer = json_request(port, "GET", "/v1/jobs/" + job, None, headers)
        if status == 200 and answer["state"] not in ("queued", "running"):
            return answer["state"]
        time.sleep(0.05)
    return None


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="kotae-bearer-")
    checks = Checks()
    k1 = make_key("ES256", "k1")
    services = {name: claims for name, (_, claims) in SERVICES.items()}
    provider = Provider(work, "provider", [k1], clients(), services).start()
    stranger = Provider(work, "stranger", [make_key("ES256", "k1")], clients(), services).start()
    server = Server(
        binary,
        data_with_faq(fixture, work),
        os.path.join(work, "serve.log"),
        [
            "--api-keys", keys_file(work),
            "--oidc-issuer", provider.issuer,
            "--oidc-audience", AUDIENCE,
            "--oidc-tenant-claim", "tenant",
            "--group-role", "bots=editor",
            "--oidc-keys-min-interval", "5",
        ],
    )  # fmt: skip
    server.start()
    try:
        port = server.port
        indexer = provider.client_token("indexer", SERVICES["indexer"][0])
        status, _ = json_request(port, "POST", "/v1/collections", {"name": "handbook"}, bearer(indexer))
        checks.check("a service's token creates a collection (editor by its group)", status == 201, status)
        job = upload(
            port, "handbook", {"leave.md": "# Leave\n\nStaff get thirty days of paid leave.\n"}, bearer(indexer)
        )
        checks.check("and uploads", job.startswith("job_"), job)
        checks.check("the upload is indexed", wait_job(port, job, bearer(indexer)) == "succeeded")
        member = {"kind": "group", "id": "staff", "role": "reader"}
        status, _ = json_request(port, "PUT", "/v1/collections/handbook/members", member, bearer(indexer))
        checks.check("its creator shares it with a group of the token", status == 200, status)
        viewer = provider.client_token("viewer", SERVICES["viewer"][0])
        query = {"collection": "handbook", "query": "paid leave"}
        status, found = json_request(port, "POST", "/v1/search", query, bearer(viewer))
        checks.check("a reader's token searches", status == 200 and found["hits"], status)
        status, body, _ = request(
            port, "POST", "/v1/collections/handbook/documents", b"x", dict(bearer(viewer), **{"Content-Type": "x/y"})
        )
        checks.check("a reader's token cannot upload", status == 403, body[:200])
        checks.check(
            "a token cannot read the audit trail below admin",
            json_request(port, "GET", "/v1/audit", None, bearer(indexer))[0] == 403,
        )
        rival = provider.client_token("rival", SERVICES["rival"][0])
        checks.check(
            "another tenant's token does not see the collection",
            json_request(port, "GET", "/v1/collections/handbook", None, bearer(rival))[0] == 404,
        )

        def refused(name, token):
            status, body, headers = request(port, "GET", "/v1/collections", None, bearer(token))
            checks.check(
                "refused: " + name,
                status == 401 and "invalid_token" in headers.get("www-authenticate", ""),
                (status, body[:200]),
            )

        header, claims, _ = token_parts(indexer)
        refused("alg none", forged(indexer, header=dict(header, alg="none"), signature=""))
        for secret in (json.dumps(public_jwk(k1)).encode(), json.dumps(public_jwk(k1), separators=(",", ":")).encode()):
            refused(
                "the provider's public key as an HMAC secret", forged(indexer, dict(header, alg="HS256"), key=secret)
            )
        refused("another issuer", stranger.client_token("indexer", SERVICES["indexer"][0]))
        refused("another audience", provider.client_token("indexer", SERVICES["indexer"][0], "https://other.test/api"))
        refused("a tampered payload", forged(indexer, payload=dict(claims, tenant="globex")))
        refused("an ID token's nonce", forged(indexer, payload=dict(claims, nonce="n")))
        refused("garbage", "eyJ" + "A" * 40 + ".eyJ" + "B" * 40 + ".CCCC")

        # The provider's own token with its times moved, signed again with the provider's key (k1, still
        # in its JWKS): the signature verifies, so only the time checks (60 s of clock skew) can refuse
        # it. Each is sent from a loopback address of its own: refusals are recorded once a minute per
        # address.
        now, lifetime = int(time.time()), claims["exp"] - claims["iat"]
        timed = {
            "expired 5 minutes ago": (dict(claims, iat=now - 300 - lifetime, exp=now - 300), "has expired"),
            "valid only in 5 minutes (nbf, iat)": (
                dict(claims, iat=now + 300, nbf=now + 300, exp=now + 300 + lifetime),
                "is not valid yet (nbf)",
            ),
            "issued 5 minutes from now (iat)": (
                dict(claims, iat=now + 300, exp=now + 300 + lifetime),
                "was issued in the future (iat)",
            ),
        }
        for number, (name, (times, reason)) in enumerate(timed.items(), start=2):
            address = "127.0.0.%d" % number
            status, body, headers = request_from(address, port, bearer(sign_token(k1, header, times)))
            checks.check(
                "refused by its time: a token " + name,
                status == 401
                and "invalid_token" in headers.get("www-authenticate", "")
                and reason in json.loads(body)["error"]["message"],
                (status, body[:200]),
            )
            recorded = refusals_from(port, address)
            checks.check(
                "and recorded with its reason (%s)" % reason,
                any(reason in e["detail"].get("reason", "") for e in recorded),
                recorded,
            )
        skewed = sign_token(k1, header, dict(claims, iat=now - 30 - lifetime, exp=now - 30))
        status, body, _ = request_from("127.0.0.5", port, bearer(skewed))
        checks.check(
            "the same re-signed token expired 30 s ago is accepted (within the skew): the signature is good",
            status == 200,
            (status, body[:200]),
        )

        # The provider rotates its keys: the new one signs, the old one is still published.
        provider.stop()
        provider.config["keys"] = [make_key("ES256", "k2"), k1]
        provider.start()
        rotated = provider.client_token("indexer", SERVICES["indexer"][0])
        time.sleep(5.2)  # --oidc-keys-min-interval since the first fetch
        checks.check("the provider signs with the new key", token_parts(rotated)[0]["kid"] == "k2")
        status, answer = json_request(port, "GET", "/v1/collections", None, bearer(rotated))
        checks.check("a token signed by a rotated-in key is accepted (JWKS fetched again)", status == 200, answer)
        status, _ = json_request(port, "GET", "/v1/collections", None, bearer(indexer))
        checks.check("a token by the old key still is, while it is published", status == 200, status)
        unknown = [forged(rotated, header=dict(token_parts(rotated)[0], kid="nope-%d" % i)) for i in range(5)]
        checks.check(
            "tokens naming unknown keys are refused",
            all(json_request(port, "GET", "/v1/collections", None, bearer(t))[0] == 401 for t in unknown),
        )

        status, trail = json_request(port, "GET", "/v1/audit", None, bearer(ADMIN_ACME))
        actors = {(e["action"], e["actor"]) for e in trail.get("data", [])} if status == 200 else set()
        checks.check(
            "the audit trail names the services by their id",
            ("token.use", "user:indexer") in actors
            and ("collection.create", "user:indexer") in actors
            and ("document.upload", "user:viewer") in actors,
            sorted(actors),
        )
        status, refusals = json_request(port, "GET", "/v1/audit?unauthenticated=true", None, bearer(OPERATOR))
        reasons = [e["detail"].get("reason", "") for e in refusals.get("data", [])] if status == 200 else []
        checks.check("a refused token is recorded with its reason", any("token" in r for r in reasons), reasons)
    finally:
        checks.check("the server exits cleanly", server.stop() == 0)
        provider.stop()
        stranger.stop()
    log = [json.loads(line) for line in open(os.path.join(work, "serve.log")) if line.startswith("{")]
    fetches = sum(1 for e in log if e.get("event") == "oidc_keys_fetched")
    checks.check(
        "the keys were fetched twice: at first, and once after the rotation (not per unknown kid)",
        fetches == 2,
        fetches,
    )
    return checks.finish(work)


if __name__ == "__main__":
    sys.exit(main())
