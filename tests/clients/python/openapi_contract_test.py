"""The Python client kept in step with the server: its version is the server's (CMakeLists.txt),
and every request each of its methods sends, sync and async (recorded by an httpx mock transport,
every option set), is a route of server/openapi.json with that method, a body whose fields the
route's schema has and query parameters it declares. The routes a user needs are all covered. Needs no server.

Usage: openapi_contract_test.py [KOTAE_BINARY DATA_DIR] (ignored: the arguments of the other tests)
"""

import asyncio
import inspect
import json
import re
import sys
import unittest
from pathlib import Path

import httpx

import kotae
from kotae import AsyncKotae, Kotae

ROOT = Path(__file__).resolve().parents[3]
OPENAPI = json.loads((ROOT / "server" / "openapi.json").read_text())

FILTERS = {"path_prefix": "docs/", "formats": ["md", "pdf"]}
SEARCH = {"mode": "hybrid", "k": 3, "rerank": True, "filters": FILTERS}
ANSWER = {
    **SEARCH,
    "min_relevance": 0.1,
    "max_tokens": 64,
    "temperature": 0.0,
    "top_p": 0.9,
    "seed": 7,
    "stop": ["\n\n"],
    "backends": ["llama", "extractive"],
}
# Each public method, called with every option it has.
CALLS = {
    "create_collection": (("docs",), {"embedder": "all-minilm-l6-v2", "chunk_tokens": 128, "overlap_tokens": 16}),
    "collections": ((), {}),
    "collection": (("docs",), {}),
    "delete_collection": (("docs",), {}),
    "documents": (("docs",), {}),
    "delete_document": (("docs", 3), {}),
    "upload": (("docs", [("a.md", b"# A\n")]), {"wait": True}),
    "jobs": ((), {}),
    "job": (("job_1",), {}),
    "cancel_job": (("job_1",), {}),
    "job_events": (("job_1",), {}),
    "wait_for_job": (("job_1",), {}),
    "search": (("docs", "query"), SEARCH),
    "ask": (("docs", "question"), {**ANSWER, "conversation_id": "conv_1", "cache": False}),
    "ask_stream": (("docs", "question"), ANSWER),
    "ask_later": (("docs", "question"), ANSWER),
    "task": (("ask_1",), {}),
    "conversations": ((), {"collection": "docs", "limit": 10}),
    "conversation": (("conv_1",), {}),
    "rename_conversation": (("conv_1", "Upgrades"), {}),
    "delete_conversation": (("conv_1",), {}),
    "embeddings": ((["a", "b"],), {"model": "all-minilm-l6-v2", "input_type": "query"}),
    "rerank": (("query", ["a", "b"]), {"top_n": 1, "return_documents": True}),
    "models": ((), {}),
    "chat_completions": (([{"role": "user", "content": "hi"}],), {**ANSWER, "model": "kotae", "collection": "docs"}),
    "ready": ((), {}),
}
# What a user needs, each as (method, route).
NEEDED = {
    ("POST", "/v1/search"),
    ("POST", "/v1/ask"),
    ("GET", "/v1/collections"),
    ("POST", "/v1/collections"),
    ("POST", "/v1/collections/{name}/documents"),
    ("GET", "/v1/jobs/{id}"),
    ("GET", "/v1/jobs/{id}/events"),
    ("POST", "/v1/embeddings"),
    ("POST", "/v1/rerank"),
    ("GET", "/v1/models"),
    ("POST", "/v1/chat/completions"),
}

JOB = {"id": "job_1", "object": "job", "state": "succeeded", "files": [], "progress": {}}
EVENTS = 'event: job\ndata: %s\n\nevent: done\ndata: {"answer": "x"}\n\n' % json.dumps(JOB)


def answer(request):
    """Plausible enough for the client to finish the call: a job, a list, or an event stream."""
    body = json.loads(request.content) if request.headers.get("content-type") == "application/json" else {}
    if request.url.path.endswith("/events") or body.get("stream"):
        return httpx.Response(200, text=EVENTS, headers={"content-type": "text/event-stream"})
    return httpx.Response(200, json={**JOB, "object": "list", "data": []})


def recorded(make_client, run):
    requests = []

    def handler(request):
        requests.append(request)
        return answer(request)

    run(make_client(httpx.MockTransport(handler)))
    return requests


def call_sync(client):
    for name, (args, kwargs) in CALLS.items():
        result = getattr(client, name)(*args, **kwargs)
        if inspect.isgenerator(result):
            list(result)


def call_async(client):
    async def run():
        for name, (args, kwargs) in CALLS.items():
            result = getattr(client, name)(*args, **kwargs)
            if inspect.isasyncgen(result):
                [_ async for _ in result]
            else:
                await result

    asyncio.run(run())


def schema(ref_or_schema):
    while "$ref" in ref_or_schema:
        ref_or_schema = OPENAPI["components"]["schemas"][ref_or_schema["$ref"].rsplit("/", 1)[1]]
    return ref_or_schema


def properties(of):
    """The fields an object schema (or any of a oneOf's) allows."""
    of = schema(of)
    fields = dict(of.get("properties", {}))
    for alternative in of.get("oneOf", []):
        fields.update(properties(alternative))
    return fields


def route_of(method, path):
    for route, operations in OPENAPI["paths"].items():
        if re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", route), path) and method.lower() in operations:
            return route, operations[method.lower()]
    return None, None


class OpenApiContractTest(unittest.TestCase):
    def test_the_version_is_the_servers(self):
        cmake = (ROOT / "CMakeLists.txt").read_text()
        server = re.search(r"project\(kotae\s+VERSION\s+([0-9.]+)", cmake).group(1)
        self.assertEqual(kotae.__version__, server)
        self.assertEqual(OPENAPI["info"]["version"], server)
        self.assertIn('version = "%s"' % server, (ROOT / "clients" / "python" / "pyproject.toml").read_text())

    def test_every_public_method_is_checked_and_both_clients_have_them(self):
        def public(cls):
            return {name for name, _ in inspect.getmembers(cls, inspect.isfunction) if not name.startswith("_")}

        self.assertEqual(public(Kotae) - {"close"}, set(CALLS))
        self.assertEqual(public(AsyncKotae) - {"aclose"}, set(CALLS))

    def test_every_request_is_a_route_of_openapi_json_with_fields_of_its_schema(self):
        requests = recorded(lambda t: Kotae(http_client=httpx.Client(transport=t, base_url="http://kotae")), call_sync)
        used = set()
        for request in requests:
            route, operation = route_of(request.method, request.url.path)
            self.assertIsNotNone(route, "%s %s is not in openapi.json" % (request.method, request.url.path))
            used.add((request.method, route))
            declared_query = {p["name"] for p in operation.get("parameters", []) if p.get("in") == "query"}
            for name in request.url.params:
                self.assertIn(
                    name,
                    declared_query,
                    "%s %s sends ?%s, which openapi.json does not declare" % (request.method, route, name),
                )
            content_type = request.headers.get("content-type", "")
            if content_type == "application/json":
                body = json.loads(request.content)
                declared = operation["requestBody"]["content"]["application/json"]["schema"]
                self.assert_fields_declared(body, declared, "%s %s" % (request.method, route))
            elif request.content:
                self.assertTrue(content_type.startswith("multipart/form-data"))
                self.assertIn("multipart/form-data", operation["requestBody"]["content"])
        self.assertEqual(NEEDED - used, set(), "routes a user needs that the client does not call")

    def test_the_async_client_sends_what_the_sync_client_sends(self):
        def shape(requests):
            return [
                (
                    r.method,
                    r.url.path,
                    r.content if not r.headers.get("content-type", "").startswith("multipart") else b"multipart",
                )
                for r in requests
            ]

        sync = recorded(lambda t: Kotae(http_client=httpx.Client(transport=t, base_url="http://kotae")), call_sync)
        asynchronous = recorded(
            lambda t: AsyncKotae(http_client=httpx.AsyncClient(transport=t, base_url="http://kotae")), call_async
        )
        self.assertEqual(shape(sync), shape(asynchronous))

    def assert_fields_declared(self, body, declared, where):
        fields = properties(declared)
        for key, value in body.items():
            self.assertIn(key, fields, "%s sends '%s', which openapi.json does not declare" % (where, key))
            if isinstance(value, dict):
                self.assert_fields_declared(value, fields[key], where + "." + key)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
