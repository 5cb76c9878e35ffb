"""Several `kotae serve` replicas over one PostgreSQL database, against real servers: a PostgreSQL 15
that the test starts itself (tests/support/postgres_server: initdb + pg_ctl on a Unix socket in a
folder of its own, so it can stop and kill it) and two or three real `kotae serve` processes.

Usage: cluster_test.py KOTAE_BINARY FIXTURE_DATA_DIR GROUP
GROUP:
  replicas  store copy from the embedded default and back, the same results everywhere, a commit on
            one replica found on the other (the 1 s target is bench/cluster's), a conversation begun on one
            replica listed and followed up on the other, answer caches invalidated across
            replicas, `kotae index --store`, tenant isolation, renaming and deletion across replicas
  faults    PostgreSQL stopped mid-ingestion (whole documents or none, 503 with Retry-After, back by
            itself), a replica SIGKILLed and restarted, a damaged snapshot, two replicas ingesting
            into one collection at once
Python standard library only. Prints a line per check and "N passed, N failed"; exit 1 on a failure.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from kotae_http import Checks, Server, data_with_faq, json_request, request, upload, wait_job

HERE = os.path.dirname(os.path.abspath(__file__))
POSTGRES_SERVER = os.path.join(HERE, "..", "support", "postgres_server")
STARTED = []  # every kotae serve a group starts: main() kills what is left
QUERIES = [
    "What is a virtual package?",
    "How do I upgrade Debian?",
    "Which architectures are supported?",
    "Where do I report a bug?",
    "What is the difference between testing and unstable?",
]


class Postgres:
    """A PostgreSQL server of the test's own."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="kotae-pg-")
        os.chmod(self.dir, 0o755)  # the server runs as `postgres` when the test runs as root
        self.url = None

    def run(self, action):
        done = subprocess.run([POSTGRES_SERVER, action, self.dir], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError("postgres_server %s: %s" % (action, done.stderr))
        return done.stdout.strip()

    def start(self):
        self.url = self.run("start")
        return self.url

    def sql(self, statement):
        done = subprocess.run(["psql", self.url, "-Atqc", statement], capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise RuntimeError("psql: " + done.stderr)
        return done.stdout.strip()

    def remove(self):
        try:
            self.run("kill")
        except RuntimeError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


def replica(binary, data, work, name, url, flags=()):
    server = Server(
        binary,
        data,
        os.path.join(work, name + ".log"),
        ["--store", url, "--index-cache", os.path.join(work, "cache-" + name)] + list(flags),
    )
    STARTED.append(server)
    server.start()
    return server


def search(port, query, collection="faq", mode="hybrid", k=5, headers=None):
    status, answer = json_request(
        port, "POST", "/v1/search", {"collection": collection, "query": query, "mode": mode, "k": k}, headers
    )
    if status != 200:
        return status, None
    return status, [(hit["document"], hit["text"], round(hit["score"], 5)) for hit in answer["hits"]]


def hits_everywhere(ports, queries=QUERIES, mode="hybrid"):
    return [[search(port, query, mode=mode)[1] for query in queries] for port in ports]


def wait_for(predicate, timeout):
    """Seconds until predicate() held, or None."""
    started = time.time()
    while time.time() - started < timeout:
        if predicate():
            return time.time() - started
        time.sleep(0.01)
    return None


def log_lines(work, name):
    return len(open(os.path.join(work, name + ".log")).readlines())


def log_events(work, name, event, since=0):
    """The events of one kind in a server's log, after its first `since` lines."""
    events = []
    for line in open(os.path.join(work, name + ".log")).readlines()[since:]:
        if line.startswith("{"):
            entry = json.loads(line)
            if entry.get("event") == event:
                events.append(entry)
    return events


def kotae(binary, *args):
    return subprocess.run([binary] + list(args), capture_output=True, text=True, timeout=600)


def replicas(checks, binary, data, work, pg):
    url = pg.start()
    # From the embedded default into PostgreSQL, without embedding anything again.
    copied = kotae(binary, "store", "copy", "--from", data, "--to", url, "--json")
    lines = [json.loads(line) for line in copied.stdout.splitlines() if line.startswith("{")]
    checks.check(
        "kotae store copy DATA -> postgres: exit 0, faq copied",
        copied.returncode == 0 and any(l["collection"] == "faq" and l["documents"] > 0 for l in lines),
        copied.stderr[-300:] or lines,
    )
    embedded = Server(binary, data, os.path.join(work, "embedded.log"))
    STARTED.append(embedded)
    embedded.start()
    a = replica(binary, data, work, "a", url)
    b = replica(binary, data, work, "b", url)
    expected = hits_everywhere([embedded.port])[0]
    on_a, on_b = hits_everywhere([a.port, b.port])
    checks.check(
        "replica A answers as the embedded collection did (5 queries, hybrid)",
        on_a == expected,
        (on_a[0][:1], expected[0][:1]),
    )
    checks.check("replica B answers as replica A", on_b == on_a)
    bm25 = hits_everywhere([embedded.port, a.port], mode="bm25")
    checks.check("bm25 too", bm25[0] == bm25[1])
    embedded.stop()

    # ... and back into a folder: the same again.
    back = os.path.join(work, "back")
    os.makedirs(back)
    os.symlink(os.path.realpath(os.path.join(data, "models")), os.path.join(back, "models"))
    copied_back = kotae(binary, "store", "copy", "--from", url, "--to", back, "--collection", "faq")
    checks.check(
        "kotae store copy postgres -> a folder: exit 0", copied_back.returncode == 0, copied_back.stderr[-300:]
    )
    returned = Server(binary, back, os.path.join(work, "back.log"))
    STARTED.append(returned)
    returned.start()
    checks.check("the collection copied back answers as before", hits_everywhere([returned.port])[0] == expected)
    returned.stop()

    # A commit on A is found on B within a second (PostgreSQL notifies B).
    job = upload(
        a.port, "faq", {"lighthouse.md": "# Lighthouse\n\nThe zyxwarble lens of the lighthouse turns nightly."}
    )
    finished = wait_job(a.port, job)
    checks.check("upload to A: the job finished", finished is not None and finished["state"] == "succeeded", finished)
    seen = wait_for(
        lambda: (search(b.port, "zyxwarble lens", mode="bm25")[1] or [("",)])[0][0].endswith("lighthouse.md"), 10
    )
    # Within a second is bench/cluster's target (propagation p99); a test only bounds it loosely, so a
    # slow or loaded machine does not fail it, while a replica that does not follow does.
    checks.check("B finds what A committed (within 5 s; measured)", seen is not None and seen <= 5.0, "%s s" % seen)
    _, listed = json_request(b.port, "GET", "/v1/collections/faq/documents")
    kept = [d["id"] for d in listed["data"] if d["path"] == "lighthouse.md"]
    status, body, _ = (
        request(b.port, "GET", "/v1/collections/faq/documents/%d/file" % kept[0]) if kept else (None, b"", {})
    )
    checks.check(
        "B serves the file A indexed (kept in PostgreSQL)",
        status == 200 and body == b"# Lighthouse\n\nThe zyxwarble lens of the lighthouse turns nightly.",
        (status, body[:80]),
    )

    # Jobs: a job submitted to A is seen, and can be cancelled, through B (a load balancer may send the
    # poll anywhere).
    status, seen_on_b = json_request(b.port, "GET", "/v1/jobs/" + job)
    checks.check(
        "B reports A's finished job",
        status == 200 and seen_on_b["state"] == "succeeded" and seen_on_b["files"] == finished["files"],
        (status, seen_on_b),
    )
    status, listed = json_request(b.port, "GET", "/v1/jobs")
    checks.check("B lists A's job", status == 200 and any(j["id"] == job for j in listed["data"]), status)
    many = {
        "wave-%02d.md" % i: "# Wave %d\n\n" % i + ("Wave number %d broke on the pier. " % i) * 200 for i in range(30)
    }
    long_job = upload(a.port, "faq", many)
    status, _ = json_request(b.port, "DELETE", "/v1/jobs/" + long_job)
    checks.check("B accepts a cancel of A's running job", status == 202, status)
    ended = wait_job(a.port, long_job)
    indexed = sum(1 for f in (ended or {}).get("files", []) if f["status"] == "indexed")
    checks.check(
        "... which A hears before its next file: the job ends cancelled",
        ended is not None and ended["state"] == "cancelled" and indexed < 30,
        (ended and ended["state"], indexed),
    )
    # A publishes the record right after its job ends: B may see it a moment later.
    seen = wait_for(lambda: json_request(b.port, "GET", "/v1/jobs/" + long_job)[1]["state"] == "cancelled", 5)
    checks.check(
        "B reports it cancelled", seen is not None, json_request(b.port, "GET", "/v1/jobs/" + long_job)[1]["state"]
    )
    status, _ = json_request(b.port, "GET", "/v1/jobs/job_doesnotexist")
    checks.check("an unknown job is 404 on B", status == 404, status)

    # Conversations: one begun on A is listed on B, and B answers its follow-up from the stored turns.
    ask = {"collection": "faq", "question": QUERIES[0], "backends": ["extractive"], "cache": False}
    status, first = json_request(a.port, "POST", "/v1/ask", ask)
    conversation = first["conversation_id"] if status == 200 else ""
    status, listed = json_request(b.port, "GET", "/v1/conversations")
    checks.check(
        "a conversation begun on A is listed on B",
        status == 200
        and [(c["id"], c["turns"], c["title"]) for c in listed["data"]] == [(conversation, 1, QUERIES[0])],
        listed,
    )
    status, follow_up = json_request(
        b.port, "POST", "/v1/ask", dict(ask, question=QUERIES[1], conversation_id=conversation)
    )
    first_numbers = [s["number"] for s in first.get("sources", [])]
    numbers = [s["number"] for s in follow_up.get("sources", [])] if status == 200 else []
    checks.check(
        "B answers its follow-up, numbering sources after A's turn",
        status == 200 and first_numbers and numbers and min(numbers) == max(first_numbers) + 1,
        (status, first_numbers, numbers),
    )
    status, stored = json_request(a.port, "GET", "/v1/conversations/" + conversation)
    checks.check(
        "A reads both turns back",
        status == 200
        and [t["question"] for t in stored["turns"]] == QUERIES[:2]
        and stored["turns"][1]["sources"] == follow_up.get("sources"),
        status,
    )
    checks.check(
        "B deletes it; A answers 404 for it",
        json_request(b.port, "DELETE", "/v1/conversations/" + conversation)[0] == 200
        and json_request(a.port, "GET", "/v1/conversations/" + conversation)[0] == 404,
    )
    checks.check(
        "each part of the store records its schema version, conversations and document_files among them",
        pg.sql("SELECT string_agg(component || '=' || version, ',' ORDER BY component) FROM kotae_schema_versions")
        == "api_keys=1,audit=1,conversations=2,document_files=1,jobs=1,members=1,records=3,sessions=2"
        and pg.sql(
            "SELECT count(*) FROM information_schema.tables WHERE table_name IN ('conversations', 'document_files')"
        )
        == "2",
    )

    # Answer caches: B's cached answer is not served again once A changed the collection.
    ask = {"collection": "faq", "question": "What does the zyxwarble lens do?"}
    json_request(b.port, "POST", "/v1/ask", ask)
    status, cached, headers = request(
        b.port, "POST", "/v1/ask", json.dumps(ask).encode(), {"Content-Type": "application/json"}
    )
    checks.check(
        "B answers a repeated question from its cache",
        headers.get("x-kotae-cache") == "hit",
        headers.get("x-kotae-cache"),
    )
    job = upload(a.port, "faq", {"lens.md": "# Lens\n\nThe zyxwarble lens focuses the beam of the lamp."})
    wait_job(a.port, job)
    wait_for(
        lambda: (search(b.port, "zyxwarble focuses beam", mode="bm25")[1] or [("",)])[0][0].endswith("lens.md"), 10
    )
    _, _, headers = request(b.port, "POST", "/v1/ask", json.dumps(ask).encode(), {"Content-Type": "application/json"})
    checks.check(
        "... and not after A changed the collection",
        headers.get("x-kotae-cache") == "miss",
        headers.get("x-kotae-cache"),
    )

    # The CLI indexes straight into the shared store; both replicas find it.
    docs = os.path.join(work, "docs")
    os.makedirs(docs)
    with open(os.path.join(docs, "tide.md"), "w") as f:
        f.write("# Tides\n\nThe qwertide table lists the spring tides of the harbour.\n")
    indexed = kotae(
        binary,
        "index",
        docs,
        "--collection",
        "faq",
        "--store",
        url,
        "--index-cache",
        os.path.join(work, "cache-cli"),
        "--data",
        data,
    )
    checks.check("kotae index --store postgres: exit 0", indexed.returncode == 0, indexed.stderr[-300:])
    for name, server in (("A", a), ("B", b)):
        seen = wait_for(
            lambda: (search(server.port, "qwertide table", mode="bm25")[1] or [("",)])[0][0].endswith("tide.md"), 10
        )
        checks.check("%s finds what kotae index committed" % name, seen is not None, seen)
    a.stop()
    b.stop()

    # Tenants: what one tenant keeps on A is invisible to another on B; deletion reaches every replica.
    keys = os.path.join(work, "keys.json")
    digest = lambda key: hashlib.sha256(key.encode()).hexdigest()
    with open(keys, "w") as f:
        json.dump(
            {
                "keys": [
                    {"name": "alice", "tenant": "alice", "sha256": digest("kt_alice_key")},
                    {"name": "bob", "tenant": "bob", "sha256": digest("kt_bob_key")},
                ]
            },
            f,
        )
    a = replica(binary, data, work, "a", url, ["--api-keys", keys])
    b = replica(binary, data, work, "b", url, ["--api-keys", keys])
    alice, bob = {"Authorization": "Bearer kt_alice_key"}, {"Authorization": "Bearer kt_bob_key"}
    status, _ = json_request(a.port, "POST", "/v1/collections", {"name": "private"}, alice)
    checks.check("alice creates 'private' on A", status == 201, status)
    job = upload(a.port, "private", {"secret.md": "# Secret\n\nThe vault code is plughxyzzy."}, alice)
    wait_job_as = wait_for(
        lambda: json_request(a.port, "GET", "/v1/jobs/" + job, None, alice)[1]["state"] == "succeeded", 60
    )
    checks.check("alice's upload finished", wait_job_as is not None)
    checks.check(
        "alice sees her job through B; bob gets 404 for it",
        json_request(b.port, "GET", "/v1/jobs/" + job, None, alice)[0] == 200
        and json_request(b.port, "GET", "/v1/jobs/" + job, None, bob)[0] == 404
        and json_request(b.port, "DELETE", "/v1/jobs/" + job, None, bob)[0] == 404,
    )
    seen = wait_for(lambda: search(b.port, "plughxyzzy", "private", "bm25", headers=alice)[0] == 200, 10)
    checks.check(
        "alice finds it on B",
        seen is not None and bool(search(b.port, "plughxyzzy", "private", "bm25", headers=alice)[1]),
    )
    checks.check("bob gets 404 for it on B", search(b.port, "plughxyzzy", "private", "bm25", headers=bob)[0] == 404)
    status, listed = json_request(b.port, "GET", "/v1/collections", None, bob)
    checks.check(
        "bob's list on B does not show it",
        status == 200 and all(c["name"] != "private" for c in listed["data"]),
        listed,
    )
    status, _ = json_request(b.port, "POST", "/v1/collections", {"name": "private"}, bob)
    checks.check("bob may have a 'private' of his own", status == 201, status)
    checks.check(
        "... which leaves alice's alone",
        bool(search(a.port, "plughxyzzy", "private", "bm25", headers=alice)[1])
        and not search(a.port, "plughxyzzy", "private", "bm25", headers=bob)[1],
    )
    # A key made with `kotae keygen --store` while the replicas run: both know it within seconds, and its
    # quota counts what the tenant stored through either.
    made = kotae(binary, "keygen", "--store", url, "--tenant", "carol", "--quota-documents", "1")
    carol_key = json.loads(made.stdout)["key"] if made.returncode == 0 else ""
    checks.check(
        "kotae keygen --store: exit 0", made.returncode == 0 and carol_key.startswith("kt_"), made.stderr[-300:]
    )
    carol = {"Authorization": "Bearer " + carol_key}
    known = [
        wait_for(lambda s=server: json_request(s.port, "GET", "/v1/collections", None, carol)[0] == 200, 10)
        for server in (a, b)
    ]
    checks.check("both replicas accept carol's new key", all(k is not None for k in known), known)
    json_request(a.port, "POST", "/v1/collections", {"name": "notes"}, carol)
    job = upload(a.port, "notes", {"one.md": "# One\n\nThe first note."}, carol)
    wait_for(lambda: json_request(a.port, "GET", "/v1/jobs/" + job, None, carol)[1]["state"] == "succeeded", 60)
    body = (
        b'--kb\r\nContent-Disposition: form-data; name="files"; filename="two.md"\r\n\r\nThe second note.\r\n--kb--\r\n'
    )
    status, answer, _ = request(
        b.port,
        "POST",
        "/v1/collections/notes/documents",
        body,
        dict({"Content-Type": "multipart/form-data; boundary=kb"}, **carol),
    )
    checks.check(
        "carol's quota (1 document) holds across replicas: 413 on B",
        status == 413 and b"quota_exceeded" in answer,
        (status, answer[:200]),
    )

    # A rename on A: B hears it (the change channel), closes the old name and opens the new one on demand.
    b_lines, a_lines = log_lines(work, "b"), log_lines(work, "a")
    status, renamed = json_request(a.port, "PATCH", "/v1/collections/private", {"name": "vault"}, alice)
    checks.check("alice renames 'private' to 'vault' on A", status == 200 and renamed["name"] == "vault", renamed)
    checks.check("A: the old name is 404", search(a.port, "plughxyzzy", "private", "bm25", headers=alice)[0] == 404)
    closed = lambda server, name, since: any(
        e.get("tenant") == "alice" and e.get("collection") == name
        for e in log_events(work, server, "collection_closed", since)
    )
    gone = wait_for(lambda: closed("b", "private", b_lines), 10)
    checks.check("B closes the old name (within 5 s; measured)", gone is not None and gone <= 5.0, gone)
    checks.check("B: the old name is 404", search(b.port, "plughxyzzy", "private", "bm25", headers=alice)[0] == 404)
    status, hits = search(b.port, "plughxyzzy", "vault", "bm25", headers=alice)
    checks.check("B serves the new name, with its documents", status == 200 and bool(hits), (status, hits))
    status, members = json_request(b.port, "GET", "/v1/collections/vault/members", None, alice)
    checks.check(
        "its members followed it: alice owns it on B, bob gets 404",
        status == 200
        and [(m["kind"], m["id"], m["role"]) for m in members["data"]] == [("key", "alice", "owner")]
        and search(b.port, "plughxyzzy", "vault", "bm25", headers=bob)[0] == 404,
        members,
    )
    checks.check(
        "bob's own 'private' is untouched",
        json_request(b.port, "GET", "/v1/collections/private", None, bob)[0] == 200,
    )
    status, back = json_request(b.port, "PATCH", "/v1/collections/vault", {"name": "private"}, alice)
    checks.check("renamed back through B", status == 200 and back["name"] == "private", back)
    seen = wait_for(lambda: closed("a", "vault", a_lines), 10)
    checks.check(
        "A closes 'vault' and serves it under its old name again",
        seen is not None
        and bool(search(a.port, "plughxyzzy", "private", "bm25", headers=alice)[1])
        and search(a.port, "plughxyzzy", "vault", "bm25", headers=alice)[0] == 404,
        seen,
    )

    status, _, _ = request(b.port, "DELETE", "/v1/collections/private", None, alice)
    checks.check("alice deletes it through B", status in (200, 204), status)
    gone = wait_for(lambda: search(a.port, "plughxyzzy", "private", "bm25", headers=alice)[0] == 404, 10)
    checks.check("A stops serving it (within 5 s; measured)", gone is not None and gone <= 5.0, gone)
    checks.check("SIGTERM: both replicas exit 0", a.stop() == 0 and b.stop() == 0)


def chunk_counts(pg):
    """(documents, chunks in table, chunks the documents say they have) of collection faq."""
    row = pg.sql(
        "SELECT count(*), (SELECT count(*) FROM chunks c JOIN collections k ON k.id = c.collection_id "
        "WHERE k.name = 'faq'), coalesce(sum(d.chunk_count), 0) FROM documents d JOIN collections k "
        "ON k.id = d.collection_id WHERE k.name = 'faq'"
    )
    return tuple(int(x) for x in row.split("|"))


def faults(checks, binary, data, work, pg):
    url = pg.start()
    copied = kotae(binary, "store", "copy", "--from", data, "--to", url, "--collection", "faq")
    checks.check("kotae store copy: exit 0", copied.returncode == 0, copied.stderr[-300:])
    a = replica(binary, data, work, "a", url)
    b = replica(binary, data, work, "b", url)

    # Two replicas ingesting into one collection at once: 10 files each, 4 of the names on both.
    def files(tag):
        return {
            ("shared-%d.md" % i if i < 4 else "%s-%d.md" % (tag, i)): "# %s %d\n\n" % (tag, i)
            + ("The %s beacon number %d shines. " % (tag, i)) * 40
            for i in range(10)
        }

    jobs = {}
    threads = [
        threading.Thread(target=lambda s=s, t=t: jobs.__setitem__(t, upload(s.port, "faq", files(t))))
        for s, t in ((a, "alpha"), (b, "bravo"))
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done = [wait_job(a.port, jobs["alpha"]), wait_job(b.port, jobs["bravo"])]
    checks.check(
        "both jobs finished", all(d and d["state"] == "succeeded" for d in done), [d and d["state"] for d in done]
    )
    documents, chunks, promised = chunk_counts(pg)
    checks.check(
        "no chunk lost or duplicated: chunks in the table = the documents' counts",
        chunks == promised,
        (documents, chunks, promised),
    )
    described = []
    for server in (a, b):
        wait_for(lambda: json_request(server.port, "GET", "/v1/collections/faq")[1]["chunks"] == chunks, 10)
        described.append(json_request(server.port, "GET", "/v1/collections/faq")[1])
    checks.check(
        "both replicas hold every document and chunk",
        all(d["documents"] == documents and d["chunks"] == chunks for d in described),
        [(d["documents"], d["chunks"]) for d in described] + [(documents, chunks)],
    )

    # PostgreSQL stopped in the middle of an ingestion.
    many = {
        "storm-%02d.md" % i: "# Storm %d\n\n" % i + ("Storm number %d crossed the bay at night. " % i) * 300
        for i in range(40)
    }
    job = upload(a.port, "faq", many)
    wait_for(lambda: json_request(a.port, "GET", "/v1/jobs/" + job)[1]["progress"]["files_done"] >= 3, 60)
    pg.run("stop")
    status, body, headers = request(
        a.port,
        "POST",
        "/v1/search",
        json.dumps({"collection": "faq", "query": "storm bay", "k": 3}).encode(),
        {"Content-Type": "application/json"},
    )
    checks.check(
        "with PostgreSQL down: 503 unavailable with Retry-After",
        status == 503 and b"unavailable" in body and "retry-after" in headers,
        (status, body[:200]),
    )
    finished = wait_job(a.port, job, timeout=120)
    checks.check("the job ends (its remaining files failed, nothing hangs)", finished is not None, finished)
    pg.run("start")
    back = wait_for(lambda: search(a.port, "storm bay")[0] == 200, 20)
    checks.check("A serves again by itself once PostgreSQL is back", back is not None, back)
    documents, chunks, promised = chunk_counts(pg)
    storms = int(pg.sql("SELECT count(*) FROM documents WHERE path LIKE 'storm-%'"))
    whole = pg.sql(
        "SELECT count(*) FROM documents d WHERE path LIKE 'storm-%' AND chunk_count = "
        "(SELECT count(*) FROM chunks c WHERE c.document_id = d.id)"
    )
    checks.check(
        "every document is whole or absent",
        chunks == promised and int(whole) == storms,
        (storms, whole, chunks, promised),
    )
    checks.check("some storms were stored before the stop and some not", 0 < storms < 40, storms)

    # A replica SIGKILLed and restarted serves what it served plus what was committed meanwhile (as A
    # does, which never stopped).
    b.process.kill()
    b.process.wait()
    job = upload(a.port, "faq", {"gale.md": "# Gale\n\nThe vorpalgale warning flag is red."})
    wait_job(a.port, job)
    since = log_lines(work, "b")
    b = replica(binary, data, work, "b", url)
    rebuilt = log_events(work, "b", "vector_index_rebuilt", since)
    opened = log_events(work, "b", "collection_opened", since)
    checks.check(
        "restarted B loads its snapshot (no rebuild)",
        not rebuilt and opened and opened[0]["vectors"] == "loaded",
        (rebuilt + opened)[-1:],
    )
    checks.check("restarted B answers as A does", hits_everywhere([b.port]) == hits_everywhere([a.port]))
    found = search(b.port, "vorpalgale warning", mode="bm25")[1]
    checks.check(
        "... and finds what A committed while it was down", bool(found) and found[0][0].endswith("gale.md"), found
    )

    # A damaged snapshot is rebuilt from the records, with a log line.
    b.stop()
    snapshots = [
        os.path.join(dirpath, f)
        for dirpath, _, names in os.walk(os.path.join(work, "cache-b"))
        for f in names
        if f.endswith(".index")
    ]
    for path in snapshots:
        with open(path, "r+b") as f:
            f.seek(100)
            f.write(b"damage!!")
    since = log_lines(work, "b")
    b = replica(binary, data, work, "b", url)
    rebuilt = log_events(work, "b", "vector_index_rebuilt", since)
    checks.check("B rebuilds a damaged snapshot and says why", len(rebuilt) >= 1 and snapshots, rebuilt[-1:])
    checks.check("... and answers as A does", hits_everywhere([b.port]) == hits_everywhere([a.port]))
    checks.check("SIGTERM: both replicas exit 0", a.stop() == 0 and b.stop() == 0)


def main():
    binary, fixture, group = sys.argv[1], sys.argv[2], sys.argv[3]
    work = tempfile.mkdtemp(prefix="kotae-cluster-")
    checks = Checks()
    pg = Postgres()
    try:
        data = data_with_faq(fixture, work)
        {"replicas": replicas, "faults": faults}[group](checks, binary, data, work, pg)
    finally:
        for server in STARTED:
            if server.process and server.alive():
                server.process.kill()
        pg.remove()
        code = checks.finish(work)
    return code


if __name__ == "__main__":
    sys.exit(main())
