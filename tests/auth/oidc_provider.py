"""The test OpenID provider (provider/provider.mjs: the npm package oidc-provider) started on a
loopback port, with keys made by provider/make_key.mjs; and tokens from it."""

import base64
import http.cookiejar
import json
import os
import re
import socket
import subprocess
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
PROVIDER = os.path.join(HERE, "provider")
AUDIENCE = "https://kotae.test/api"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_key(alg, kid):
    made = subprocess.run(
        ["node", os.path.join(PROVIDER, "make_key.mjs"), alg, kid], check=True, capture_output=True, text=True
    )
    return json.loads(made.stdout)


def public_jwk(key):
    return {name: value for name, value in key.items() if name not in ("d", "p", "q", "dp", "dq", "qi")}


class Provider:
    """node provider.mjs CONFIG; `issuer` once it listens."""

    def __init__(self, work, name, keys, clients, services=None, accounts=None, port=None):
        self.port = port or free_port()
        self.config = {
            "port": self.port,
            "keys": keys,
            "audience": AUDIENCE,
            "clients": clients,
            "services": services or {},
            "accounts": accounts or {},
        }
        self.path = os.path.join(work, name + ".json")
        self.log = os.path.join(work, name + ".log")
        self.process = None

    @property
    def issuer(self):
        return "http://127.0.0.1:%d" % self.port

    def start(self):
        with open(self.path, "w") as f:
            json.dump(self.config, f)
        log = open(self.log, "a")
        self.process = subprocess.Popen(
            ["node", os.path.join(PROVIDER, "provider.mjs"), self.path], stdout=subprocess.PIPE, stderr=log, text=True
        )
        line = self.process.stdout.readline()
        if '"listening"' not in line:
            raise RuntimeError("the OpenID provider did not start: %s %s" % (line, open(self.log).read()[-2000:]))
        return self

    def stop(self):
        if self.process:
            self.process.terminate()
            self.process.wait(timeout=30)
            self.process = None

    def client_token(self, client_id, secret, resource=AUDIENCE):
        """A client-credentials access token (a JWT for `resource`)."""
        form = urllib.parse.urlencode({"grant_type": "client_credentials", "scope": "api", "resource": resource})
        request = urllib.request.Request(self.issuer + "/token", data=form.encode())
        basic = base64.b64encode(("%s:%s" % (client_id, secret)).encode()).decode()
        request.add_header("Authorization", "Basic " + basic)
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())["access_token"]


def sign_token(key, header, claims):
    """A compact JWS of `claims` signed by `key` (a private JWK from make_key) with `header`: the
    provider's own signature over claims it would never issue (provider/sign_token.mjs, with jose)."""
    made = subprocess.run(
        ["node", os.path.join(PROVIDER, "sign_token.mjs"), json.dumps(key), json.dumps(header), json.dumps(claims)],
        check=True,
        capture_output=True,
        text=True,
    )
    return made.stdout.strip()


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class WebClient:
    """Kotae's web page as the provider knows it: client `kotae-web` with its secret (also written to
    a file for --oidc-client-secret-file), redirecting to `base` (the address browsers use)."""

    def __init__(self, work, base, secret, refresh=False):
        self.base = base
        self.secret_file = os.path.join(work, "client-secret")
        with open(self.secret_file, "w") as f:
            f.write(secret + "\n")
        self.client = {
            "client_id": "kotae-web",
            "client_secret": secret,
            "redirect_uris": [base + "/auth/callback"],
            "post_logout_redirect_uris": [base + "/"],
            "grant_types": ["authorization_code"] + (["refresh_token"] if refresh else []),
            "response_types": ["code"],
        }

    def serve_flags(self, issuer, scopes="openid profile email groups tenant"):
        """`kotae serve` flags signing people in through this client: the tenant from the accounts'
        `tenant` claim, the group staff editors."""
        return [
            "--oidc-issuer", issuer,
            "--oidc-tenant-claim", "tenant",
            "--group-role", "staff=editor",
            "--oidc-client-id", "kotae-web",
            "--oidc-client-secret-file", self.secret_file,
            "--oidc-redirect-url", self.base + "/auth/callback",
            "--oidc-scopes", scopes,
        ]  # fmt: skip


def token_parts(token):
    header, payload, signature = token.split(".")
    decode = lambda part: json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))  # noqa: E731
    return decode(header), decode(payload), signature


class Browser:
    """Cookies per host and redirects followed by hand, as a browser would, to sign in through the
    provider's login form (oidc-provider's development form: any password) without a real browser."""

    def __init__(self):
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), _NoRedirect())

    def get(self, url, headers=None):
        return self.send(urllib.request.Request(url, headers=headers or {}))

    def post(self, url, fields, headers=None):
        data = urllib.parse.urlencode(fields).encode()
        return self.send(urllib.request.Request(url, data=data, headers=headers or {}))

    def send(self, request):
        """(status, headers, body), redirects not followed."""
        try:
            response = self.opener.open(request, timeout=30)
        except urllib.error.HTTPError as error:
            response = error
        return response.status, dict(response.headers.items()), response.read()

    def sign_in(self, base, login, return_to="/"):
        """Signs in to Kotae at `base` as `login`: (status, headers with lowercase names, body) of the
        callback, and the callback's URL."""
        status, headers, _ = self.get(base + "/auth/login?" + urllib.parse.urlencode({"return_to": return_to}))
        headers = {name.lower(): value for name, value in headers.items()}  # HAProxy sends them lowercase
        if status != 302:
            raise RuntimeError("/auth/login answered %d" % status)
        callback = self.sign_in_at_provider(headers["location"], login, base + "/auth/callback")
        status, headers, body = self.get(callback)
        return status, {name.lower(): value for name, value in headers.items()}, body, callback

    def call(self, base, method, path, value=None, csrf=None):
        """A JSON call to Kotae with this browser's cookies (and the session's CSRF token): (status, JSON)."""
        headers = {"Content-Type": "application/json"}
        if csrf:
            headers["X-CSRF-Token"] = csrf
        data = None if method == "GET" else json.dumps(value or {}).encode()
        status, _, body = self.send(urllib.request.Request(base + path, data=data, headers=headers, method=method))
        return status, json.loads(body) if body else None

    def sign_in_at_provider(self, url, login, stop_prefix):
        """Follows `url` through the provider's login (and consent) forms until a redirect to
        `stop_prefix` (Kotae's callback); returns that URL."""
        for _ in range(20):
            if url.startswith(stop_prefix):
                return url
            status, headers, body = self.get(url)
            if status in (302, 303):
                url = urllib.parse.urljoin(url, headers["Location"])
                continue
            page = body.decode(errors="replace")
            action = urllib.parse.urljoin(url, _form_action(page))
            prompt = "login" if 'name="login"' in page else "consent"
            fields = {"prompt": prompt, "login": login, "password": "any"} if prompt == "login" else {"prompt": prompt}
            status, headers, body = self.post(action, fields)
            if status not in (302, 303):
                raise RuntimeError("the provider's form answered %d: %s" % (status, body[:300]))
            url = urllib.parse.urljoin(action, headers["Location"])
        raise RuntimeError("too many redirects at the provider")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def _form_action(page):
    found = re.search(r'<form[^>]*action="([^"]+)"', page)
    if not found:
        raise RuntimeError("no form on the provider's page: %s" % page[:300])
    return found.group(1)
