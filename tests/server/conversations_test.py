"""Conversations stored on the server, against a real `kotae serve` (extractive answers, no LLM): a
conversation asked and followed up, listed and read back with its turns' sources and citations; the
server restarted on the same data folder still lists it and answers a follow-up that keeps its source
numbering; rename, delete; another tenant sees none of it (404 as for an unknown id); bad queries,
titles and ids get clear errors; the per-tenant bound drops the least recently updated; a deleted
collection takes its conversations along.

Usage: conversations_test.py KOTAE_BINARY FIXTURE_DATA_DIR GROUP
GROUP: embedded
Python standard library only. Prints a line per check and "N passed, N failed"; exit 1 on a failure.
"""

import hashlib
import json
import os
import sys
import tempfile

from kotae_http import Checks, Server, data_with_faq, json_request

# The fixture's faq collection is the local tenant's: one key acts for it, another for tenant "bob".
LOCAL_KEY, BOB_KEY = "kt_conversations_local_key", "kt_conversations_bob_key"
LOCAL, BOB = {"Authorization": "Bearer " + LOCAL_KEY}, {"Authorization": "Bearer " + BOB_KEY}
QUESTIONS = ["What is a virtual package?", "Which packages provide a mail transport agent?", "How do I upgrade Debian?"]
UNKNOWN = "conv_" + "0" * 32


def keys_file(work):
    path = os.path.join(work, "keys.json")
    digest = lambda key: hashlib.sha256(key.encode()).hexdigest()
    with open(path, "w") as f:
        json.dump(
            {
                "keys": [
                    {"name": "local", "tenant": "local", "sha256": digest(LOCAL_KEY)},
                    {"name": "bob", "tenant": "bob", "sha256": digest(BOB_KEY)},
                ]
            },
            f,
        )
    return path


def ask(port, question, conversation=None, headers=LOCAL, collection="faq"):
    body = {"collection": collection, "question": question, "backends": ["extractive"], "cache": False}
    if conversation:
        body["conversation_id"] = conversation
    return json_request(port, "POST", "/v1/ask", body, headers)


def listed(port, query="", headers=LOCAL):
    status, answer = json_request(port, "GET", "/v1/conversations" + query, None, headers)
    return status, answer["data"] if status == 200 else answer


def message(answer):
    return (answer or {}).get("error", {}).get("message", "") if isinstance(answer, dict) else ""


def embedded(checks, binary, data, work):
    keys = keys_file(work)
    server = Server(binary, data, os.path.join(work, "serve.log"), ["--api-keys", keys])
    server.start()
    port = server.port

    # A question and a follow-up.
    status, first = ask(port, QUESTIONS[0])
    checks.check(
        "a first question is answered with a conversation id",
        status == 200 and first["covered"] and first["conversation_id"].startswith("conv_"),
        (status, first if status != 200 else ""),
    )
    conversation = first["conversation_id"]
    status, second = ask(port, QUESTIONS[1], conversation)
    checks.check(
        "the follow-up is answered in the same conversation",
        status == 200 and second["conversation_id"] == conversation,
        status,
    )
    numbers = [[s["number"] for s in answer["sources"]] for answer in (first, second)]
    checks.check(
        "the follow-up's sources are numbered after the first's", min(numbers[1]) == max(numbers[0]) + 1, numbers
    )

    status, data_listed = listed(port)
    summary = data_listed[0] if status == 200 and len(data_listed) == 1 else {}
    checks.check(
        "the list shows it: title = the first question, 2 turns",
        summary.get("id") == conversation
        and summary.get("title") == QUESTIONS[0]
        and summary.get("turns") == 2
        and summary.get("collection") == "faq"
        and summary.get("object") == "conversation",
        data_listed,
    )
    checks.check(
        "... created_at <= updated_at, unix seconds",
        1.6e9 < summary.get("created_at", 0) <= summary.get("updated_at", 0),
        summary,
    )

    status, stored = json_request(port, "GET", "/v1/conversations/" + conversation, None, LOCAL)
    turns = stored.get("turns", []) if status == 200 else []
    checks.check("GET has both turns", len(turns) == 2 and [t["question"] for t in turns] == QUESTIONS[:2], status)
    checks.check(
        "... with the answers, sources and citations /v1/ask returned",
        all(
            t["answer"] == a["answer"]
            and t["sources"] == a["sources"]
            and t["citations"] == a["citations"]
            and t["covered"] is True
            for t, a in zip(turns, (first, second))
        )
        and turns
        and turns[0]["citations"],
        [len(t["citations"]) for t in turns],
    )
    before_restart = stored

    # A restart on the same data folder: still listed, and a follow-up goes on from it.
    checks.check("SIGTERM: exit 0", server.stop() == 0)
    server = Server(binary, data, os.path.join(work, "serve-2.log"), ["--api-keys", keys])
    server.start()
    port = server.port
    status, data_listed = listed(port)
    checks.check(
        "after a restart the conversation is still listed",
        status == 200 and len(data_listed) == 1 and data_listed[0] == summary,
        data_listed,
    )
    status, third = ask(port, QUESTIONS[2], conversation)
    checks.check(
        "after a restart a follow-up with its id is answered",
        status == 200 and third["conversation_id"] == conversation,
        (status, message(third)),
    )
    third_numbers = [s["number"] for s in third.get("sources", [])]
    checks.check(
        "... its sources numbered after the earlier turns' (the history was stored)",
        bool(third_numbers) and min(third_numbers) == max(numbers[1]) + 1,
        third_numbers,
    )
    status, stored = json_request(port, "GET", "/v1/conversations/" + conversation, None, LOCAL)
    checks.check(
        "... and it is the third turn",
        status == 200
        and len(stored["turns"]) == 3
        and stored["turns"][2]["question"] == QUESTIONS[2]
        and stored["updated_at"] > summary["updated_at"],
        status,
    )
    first_sources = lambda record: [(s["number"], s["document"], s["chunk_id"]) for s in record["turns"][0]["sources"]]
    checks.check(
        "... while source [1] of the first turn is still the same document",
        status == 200 and first_sources(stored) == first_sources(before_restart) and first_sources(stored)[0][0] == 1,
        first_sources(stored)[:1],
    )

    # Rename.
    status, renamed = json_request(
        port, "PATCH", "/v1/conversations/" + conversation, {"title": "  Packages\tand upgrades \n"}, LOCAL
    )
    checks.check(
        "PATCH renames (control characters as spaces, trimmed) and returns the summary",
        status == 200
        and renamed["title"] == "Packages and upgrades"
        and renamed["turns"] == 3
        and renamed["id"] == conversation,
        (status, renamed),
    )
    status, data_listed = listed(port)
    checks.check("the list shows the new title", status == 200 and data_listed[0]["title"] == "Packages and upgrades")
    for label, body, words in [
        ("an empty title", {"title": " \n "}, "empty"),
        ("201 characters", {"title": "\u00e9" * 201}, "at most 200 characters"),
        ("a number", {"title": 5}, "'title'"),
        ("no title", {}, "'title'"),
    ]:
        status, answer = json_request(port, "PATCH", "/v1/conversations/" + conversation, body, LOCAL)
        checks.check(
            "rename with %s -> 400 saying why" % label,
            status == 400 and words in message(answer),
            (status, message(answer)),
        )
    status, answer = json_request(port, "PATCH", "/v1/conversations/" + conversation, {"title": "\u00e9" * 200}, LOCAL)
    checks.check(
        "200 two-byte characters are a valid title", status == 200 and answer["title"] == "\u00e9" * 200, status
    )

    # A first question's title: cut to 200 characters at a character's boundary; an uncovered answer
    # is a turn too.
    long_question = "\u00e9t\u00e9 " * 80
    status, other = ask(port, long_question)
    status, got = json_request(port, "GET", "/v1/conversations/" + other["conversation_id"], None, LOCAL)
    checks.check(
        "a long first question is its title cut to 200 characters",
        status == 200 and got["title"] == long_question.strip()[:200].strip(),
        got.get("title", "")[-10:],
    )

    # Queries and ids.
    status, data_listed = listed(port, "?limit=1")
    checks.check(
        "?limit=1 -> the most recently updated only",
        status == 200 and [c["id"] for c in data_listed] == [other["conversation_id"]],
        data_listed,
    )
    checks.check(
        "?collection=faq -> both; ?collection=none -> none",
        len(listed(port, "?collection=faq")[1]) == 2 and listed(port, "?collection=none")[1] == [],
    )
    for query in ["?limit=0", "?limit=1001", "?limit=ten", "?limit=", "?limit=-5"]:
        status, answer = listed(port, query)
        checks.check(
            "%s -> 400 naming limit" % query,
            status == 400 and message(answer) == "'limit' must be an integer from 1 to 1000",
            (status, message(answer)),
        )
    for bad in ["nope", "conv_" + "A" * 32, "conv_" + "0" * 31, "conv_" + "0" * 33]:
        status, answer = json_request(port, "GET", "/v1/conversations/" + bad, None, LOCAL)
        checks.check(
            "GET with id %r -> 404 saying what an id is" % bad[:12],
            status == 404 and "an id is 'conv_' and 32 hex digits" in message(answer),
            (status, message(answer)),
        )
    status, answer = ask(port, "Why?", "conv_nope")
    checks.check("a follow-up with a malformed id -> 404", status == 404, status)

    # Another tenant: the conversation is as absent as an unknown one.
    status, _ = json_request(port, "POST", "/v1/collections", {"name": "faq"}, BOB)
    checks.check("bob makes a collection 'faq' of his own", status == 201, status)
    checks.check("bob's list is empty", listed(port, headers=BOB) == (200, []))
    unknown = {
        method: json_request(port, method, "/v1/conversations/" + UNKNOWN, body, LOCAL)
        for method, body in (("GET", None), ("PATCH", {"title": "x"}), ("DELETE", None))
    }
    for method, body in (("GET", None), ("PATCH", {"title": "mine"}), ("DELETE", None)):
        status, answer = json_request(port, method, "/v1/conversations/" + conversation, body, BOB)
        expected = unknown[method][1]["error"]["message"].replace(UNKNOWN, conversation)
        checks.check(
            "bob: %s of local's conversation -> 404 as an unknown one" % method,
            status == 404 and unknown[method][0] == 404 and message(answer) == expected,
            (status, message(answer)),
        )
    status, answer = ask(port, "What is a virtual package?", conversation, BOB)
    checks.check(
        "bob: a follow-up with local's conversation id -> 404",
        status == 404 and message(answer) == "no conversation '%s'" % conversation,
        (status, message(answer)),
    )
    status, stored = json_request(port, "GET", "/v1/conversations/" + conversation, None, LOCAL)
    checks.check(
        "... and local's conversation is untouched",
        status == 200 and len(stored["turns"]) == 3 and stored["title"] == "\u00e9" * 200,
        status,
    )

    # Delete.
    status, answer = json_request(port, "DELETE", "/v1/conversations/" + conversation, None, LOCAL)
    deleted = {"id": conversation, "object": "conversation", "deleted": True}
    checks.check("DELETE -> {id, object, deleted}", (status, answer) == (200, deleted), (status, answer))
    checks.check(
        "afterwards GET, PATCH, DELETE and a follow-up -> 404",
        json_request(port, "GET", "/v1/conversations/" + conversation, None, LOCAL)[0] == 404
        and json_request(port, "PATCH", "/v1/conversations/" + conversation, {"title": "x"}, LOCAL)[0] == 404
        and json_request(port, "DELETE", "/v1/conversations/" + conversation, None, LOCAL)[0] == 404
        and ask(port, QUESTIONS[0], conversation)[0] == 404,
    )
    checks.check("SIGTERM: exit 0", server.stop() == 0)

    # The bound: 3 per tenant; a tenant's least recently updated go, never another's.
    server = Server(
        binary, data, os.path.join(work, "serve-3.log"), ["--api-keys", keys, "--conversations-per-tenant", "3"]
    )
    server.start()
    port = server.port
    status, bobs = ask(port, "Anything?", None, BOB)
    checks.check(
        "bob's question in his empty collection is a conversation too",
        status == 200 and [c["id"] for c in listed(port, headers=BOB)[1]] == [bobs["conversation_id"]],
        status,
    )
    ids = [ask(port, q)[1]["conversation_id"] for q in QUESTIONS]
    ask(port, "And then?", ids[0])  # the oldest answered again: now the second is the least recently updated
    newest = ask(port, "What is the difference between testing and unstable?")[1]["conversation_id"]
    status, data_listed = listed(port)
    checks.check(
        "a fourth conversation drops the least recently updated (3 kept)",
        status == 200 and [c["id"] for c in data_listed] == [newest, ids[0], ids[2]],
        [c["id"][:12] for c in data_listed],
    )
    checks.check(
        "... which is gone (404)", json_request(port, "GET", "/v1/conversations/" + ids[1], None, LOCAL)[0] == 404
    )
    checks.check(
        "... and bob's conversation stays", [c["id"] for c in listed(port, headers=BOB)[1]] == [bobs["conversation_id"]]
    )
    status, _ = json_request(port, "DELETE", "/v1/collections/faq", None, BOB)
    checks.check(
        "bob deletes his collection: his conversations go with it",
        status == 200 and listed(port, headers=BOB) == (200, []),
        status,
    )
    checks.check("SIGTERM: exit 0", server.stop() == 0)


def main():
    binary, fixture, group = sys.argv[1], sys.argv[2], sys.argv[3]
    work = tempfile.mkdtemp(prefix="kotae-conversations-")
    checks = Checks()
    try:
        data = data_with_faq(fixture, work)
        {"embedded": embedded}[group](checks, binary, data, work)
    finally:
        code = checks.finish(work)
    return code


if __name__ == "__main__":
    sys.exit(main())
