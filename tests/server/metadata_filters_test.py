"""Chosen documents and metadata filters (filters.documents, filters.where) on a real `kotae serve`:
POST /v1/search and POST /v1/ask return only the allowed documents' chunks, k of them when the allowed
documents hold k; a filter that does not parse, names a field no document has or compares a field with
a value of another type is 400 invalid_filter naming the column or the field, as is a malformed
documents list. The collection is indexed by the CLI from e-mails (whose headers are their metadata:
from, date, subject) and a note without metadata; the fixture's faq collection has none of those fields.

Usage: metadata_filters_test.py KOTAE_BINARY SERVER_FIXTURE_DATA"""

import os
import subprocess
import sys
import tempfile

from kotae_http import Checks, Server, data_with_faq, json_request

MAILS = {
    "leave-2024.eml": (
        "Alice Martin <alice@example.com>",
        "Fri, 01 Mar 2024 10:00:00 +0100",
        "Leave policy update",
        "The annual leave policy now grants twenty-five days of paid leave per year.\n\n"
        "Unused leave days may be carried over until the end of March.",
    ),
    "leave-2023.eml": (
        "Carol Diaz <carol@example.com>",
        "Mon, 20 Nov 2023 09:30:00 +0000",
        "Leave requests",
        "Leave requests go to your manager at least two weeks before the first day of leave.\n\n"
        "Sick leave is reported on the first morning of absence.",
    ),
    "carry-over.eml": (
        "Alice Martin <alice@example.com>",
        "Sat, 15 Jun 2024 08:00:00 +0000",
        "Carrying leave over",
        "Leave carried over from last year expires at the end of June.\n\n"
        "Ask the people team before booking leave that crosses the deadline.",
    ),
}


def write_mails(folder):
    os.makedirs(folder)
    for name, (sender, date, subject, body) in MAILS.items():
        with open(os.path.join(folder, name), "w") as f:
            f.write(
                "From: %s\nTo: Team <team@example.com>\nSubject: %s\nDate: %s\nMessage-ID: <%s@example.com>\n"
                "Content-Type: text/plain; charset=utf-8\n\n%s\n" % (sender, subject, date, name, body)
            )
    with open(os.path.join(folder, "note.md"), "w") as f:
        f.write("# Leave\n\nA note about leave without any metadata of its own.\n")


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="kotae-filters-")
    checks = Checks()
    data = data_with_faq(fixture, work)
    write_mails(os.path.join(work, "mail"))
    subprocess.run(
        # Small chunks, so that each e-mail holds several.
        [
            binary,
            "index",
            os.path.join(work, "mail"),
            "--collection",
            "mail",
            "--data",
            data,
            "--chunk-tokens",
            "24",
            "--overlap",
            "4",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    server = Server(binary, data, os.path.join(work, "serve.log"))
    server.start()
    try:
        port = server.port
        status, listed = json_request(port, "GET", "/v1/collections/mail/documents")
        documents = {os.path.basename(d["path"]): d for d in listed["data"]} if status == 200 else {}
        checks.check(
            "the collection holds the four documents", sorted(documents) == sorted(list(MAILS) + ["note.md"]), listed
        )
        ids = {name: d["id"] for name, d in documents.items()}
        alice = documents["leave-2024.eml"]["metadata"].get("from", "")
        checks.check("an e-mail's sender is its metadata", "alice@example.com" in alice, documents["leave-2024.eml"])
        name_of = {d["id"]: name for name, d in documents.items()}

        def search(filters, k=50, mode="hybrid", collection="mail"):
            body = {
                "collection": collection,
                "query": "how many days of leave",
                "k": k,
                "mode": mode,
                "filters": filters,
            }
            return json_request(port, "POST", "/v1/search", body)

        def found(answer):
            return sorted({name_of.get(h["document_id"], "?") for h in answer["hits"]})

        # filters.where
        for mode in ("bm25", "vector", "hybrid"):
            status, answer = search({"where": 'from = "%s"' % alice.replace('"', '\\"')}, mode=mode)
            checks.check(
                "%s: from = Alice finds Alice's two e-mails only" % mode,
                status == 200 and found(answer) == ["carry-over.eml", "leave-2024.eml"],
                answer,
            )
        status, answer = search({"where": "date >= 2024-01-01 and date < 2024-06-01"})
        checks.check(
            "a date range finds the March e-mail only", status == 200 and found(answer) == ["leave-2024.eml"], answer
        )
        status, answer = search({"where": "not date >= 2024-01-01"})
        checks.check(
            "not: the 2023 e-mail and the note without a date",
            status == 200 and found(answer) == ["leave-2023.eml", "note.md"],
            answer,
        )
        status, answer = search({"where": 'subject in ("Leave requests", "Carrying leave over")', "formats": ["eml"]})
        checks.check(
            "in, beside formats", status == 200 and found(answer) == ["carry-over.eml", "leave-2023.eml"], answer
        )
        status, answer = search({"where": "   "})
        checks.check("a blank where is no filter", status == 200 and len(found(answer)) == 4, answer)

        # filters.documents: k hits from the chosen documents when they hold k chunks
        chosen = [ids["leave-2023.eml"], ids["carry-over.eml"]]
        checks.check(
            "the two chosen documents hold at least 4 chunks",
            documents["leave-2023.eml"]["chunks"] + documents["carry-over.eml"]["chunks"] >= 4,
            documents,
        )
        for mode in ("bm25", "vector", "hybrid"):
            status, answer = search({"documents": chosen}, k=4, mode=mode)
            checks.check(
                "%s: two chosen documents fill k=4" % mode,
                status == 200 and len(answer["hits"]) == 4 and found(answer) == ["carry-over.eml", "leave-2023.eml"],
                answer,
            )
        status, answer = search({"documents": [ids["note.md"], 987654]})
        checks.check("an unknown id matches nothing", status == 200 and found(answer) == ["note.md"], answer)
        status, answer = search({"documents": chosen, "where": 'from = "%s"' % alice})
        checks.check("documents and where together", status == 200 and found(answer) == ["carry-over.eml"], answer)

        # 400 invalid_filter, naming the column or the field
        def refused(filters, words, name, collection="mail"):
            status, answer = search(filters, collection=collection)
            message = (answer or {}).get("error", {}).get("message", "")
            checks.check(
                name,
                status == 400 and answer["error"]["code"] == "invalid_filter" and all(w in message for w in words),
                (status, answer),
            )

        refused(
            {"where": "date >= "}, ["'filters.where'", "column 9: expected a value"], "a syntax error names its column"
        )
        refused({"where": 'colour = "red"'}, ["colour", "no document"], "an unknown field is named")
        refused({"where": "date > 5"}, ["'date' holds dates", "5"], "a number compared with dates")
        refused({"where": "subject has 'x'"}, ["'subject' holds strings", "has"], "has on a string field")
        refused({"where": 'from = "x"'}, ["'from'"], "the faq collection has no sender", collection="faq")
        refused({"where": 5}, ["'filters.where' must be a string"], "where must be a string")
        refused({"documents": "1"}, ["'filters.documents'"], "documents must be a list")
        refused({"documents": [1, "2"]}, ["integers"], "documents must be integers")
        refused({"documents": []}, ["empty"], "an empty documents list")
        refused({"documents": list(range(1, 1002))}, ["1001", "1000"], "at most 1,000 documents")
        refused({"where": "(" * 40 + "a = 1" + ")" * 40}, ["column 17", "deeper than 16"], "depth limit")

        # POST /v1/ask and grounded chat read the same filters
        ask = {
            "collection": "mail",
            "question": "How many days of leave do we get?",
            "backends": ["extractive"],
            "cache": False,
            "filters": {"where": 'from = "%s"' % alice},
        }
        status, answer = json_request(port, "POST", "/v1/ask", ask)
        sources = sorted({name_of.get(s["document_id"], "?") for s in (answer or {}).get("sources", [])})
        checks.check(
            "ask: sources from Alice's e-mails only",
            status == 200 and sources and set(sources) <= {"carry-over.eml", "leave-2024.eml"},
            (status, sources),
        )
        on_requests = dict(ask, question="Who do leave requests go to?", filters={"documents": [ids["leave-2023.eml"]]})
        status, answer = json_request(port, "POST", "/v1/ask", on_requests)
        sources = sorted({name_of.get(s["document_id"], "?") for s in (answer or {}).get("sources", [])})
        checks.check(
            "ask: sources from the chosen document only",
            status == 200 and sources == ["leave-2023.eml"],
            (status, sources),
        )
        for where, words in (("year >= 2024", ["year"]), ("from = ", ["column 8: expected a value"])):
            status, answer = json_request(port, "POST", "/v1/ask", dict(ask, filters={"where": where}))
            message = (answer or {}).get("error", {}).get("message", "")
            checks.check(
                "ask: %r is 400 invalid_filter" % where,
                status == 400 and answer["error"]["code"] == "invalid_filter" and all(w in message for w in words),
                (status, answer),
            )
        chat = {
            "model": "kotae",
            "collection": "mail",
            "messages": [{"role": "user", "content": "Leave days?"}],
            "filters": {"where": "colour = 'red'"},
        }
        status, answer = json_request(port, "POST", "/v1/chat/completions", chat)
        checks.check(
            "grounded chat: an unknown field is 400 invalid_filter",
            status == 400 and answer["error"]["code"] == "invalid_filter" and "colour" in answer["error"]["message"],
            (status, answer),
        )
    finally:
        server.stop()
    return checks.finish(work)


if __name__ == "__main__":
    sys.exit(main())
