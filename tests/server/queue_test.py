"""Ingestion through the Redis work queue, against real servers the test starts itself: PostgreSQL
(tests/support/postgres_server), Redis with its append-only file fsynced on every write
(tests/support/redis_server), `kotae serve --queue` replicas and `kotae worker` processes.

Usage: queue_test.py KOTAE_BINARY FIXTURE_DATA_DIR GROUP
GROUP:
  ingestion  uploads acknowledged and indexed by workers, searchable on another replica; the job the
             same on every replica, pushed as Server-Sent Events, cancelled from another replica;
             interactive before bulk; one tenant's flood does not starve another; queue metrics;
             a queue over its bound refuses uploads with 503 and Retry-After
  faults     a worker SIGKILLed at random moments 10 times during a 40-file ingestion (every file
             indexed exactly once, every job finished); Redis SIGKILLed and restarted (no acknowledged
             file lost); a poison file (over its time budget at every attempt) dead-lettered with its
             reason while the other files of its job index
  answers    `kotae worker --answers` generates what replicas queue (a tiny random-weight GGUF written
             by $KOTAE_WRITE_TINY_GGUF): the same Server-Sent Events as /v1/ask, "async": true and
             GET /v1/tasks/{id} on the other replica, a question whose client went away dropped unstarted,
             no worker or a silent one (the next back-end answers), a worker SIGKILLed mid-answer
Python standard library only. Prints a line per check and "N passed, N failed"; exit 1 on a failure.
"""

import json
import os
import random
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib

from cluster_test import Postgres, kotae, log_events, replica, search, wait_for, STARTED
from kotae_http import Checks, json_request, request, upload, wait_job

HERE = os.path.dirname(os.path.abspath(__file__))
REDIS_SERVER = os.path.join(HERE, "..", "support", "redis_server")
WORKERS = []


class Redis:
    """A Redis server of the test's own, on a Unix socket."""

    def __init__(self, work):
        self.dir = os.path.join(work, "redis")
        self.url = None

    def run(self, action):
        done = subprocess.run(
            [REDIS_SERVER, action, self.dir], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
        )
        if done.returncode != 0:
            raise RuntimeError("redis_server %s: %s" % (action, done.stderr))
        return done.stdout.strip()

    def start(self):
        self.url = self.run("start")
        return self.url

    def cli(self, *args):
        done = subprocess.run(
            ["redis-cli", "-s", os.path.join(self.dir, "redis.sock")] + list(args),
            capture_output=True,
            text=True,
            timeout=30,
        )
        return done.stdout.strip()


class Worker:
    """`kotae worker`, its JSON log lines copied to WORK/NAME.log."""

    def __init__(self, binary, data, work, name, store, queue, flags=()):
        self.args = [
            binary,
            "worker",
            "--data",
            data,
            "--store",
            store,
            "--queue",
            queue,
            "--index-cache",
            os.path.join(work, "cache-" + name),
        ] + list(flags)
        self.log_path = os.path.join(work, name + ".log")
        self.process = None

    def start(self):
        log = open(self.log_path, "a", buffering=1)
        self.process = subprocess.Popen(self.args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        deadline = time.time() + 120
        while time.time() < deadline:
            line = self.process.stderr.readline()
            if not line:
                raise RuntimeError("kotae worker exited during start: %s" % self.process.wait())
            log.write(line)
            if '"worker_started"' in line:

                def drain():
                    for rest in self.process.stderr:
                        log.write(rest)
                    log.close()

                threading.Thread(target=drain, daemon=True).start()
                return self
        raise RuntimeError("kotae worker did not start in time")

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def kill(self):
        self.process.kill()
        self.process.wait()

    def stop(self):
        self.process.terminate()
        return self.process.wait(timeout=120)


def worker(binary, data, work, name, pg, redis, flags=()):
    w = Worker(binary, data, work, name, pg.url, redis.url, flags)
    WORKERS.append(w)
    return w.start()


def make_keys(binary, url, *tenants):
    keys = {}
    for tenant in tenants:
        made = kotae(binary, "keygen", "--store", url, "--tenant", tenant, *(["--admin"] if tenant == "ops" else []))
        keys[tenant] = {"Authorization": "Bearer " + json.loads(made.stdout)["key"]}
    return keys


def white_png(width, height):
    """A white 8-bit gray PNG of width x height, made with the standard library."""

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\xff" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def notes(prefix, count, repeat=20):
    return {
        "%s-%02d.md" % (prefix, i): "# %s %d\n\n" % (prefix, i)
        + ("The %s lantern number %d glows. " % (prefix, i)) * repeat
        for i in range(count)
    }


def job_as(port, job, headers):
    status, answer = json_request(port, "GET", "/v1/jobs/" + job, None, headers)
    return answer if status == 200 else None


def wait_job_as(port, job, headers, timeout=180):
    done = wait_for(lambda: (job_as(port, job, headers) or {}).get("state") not in (None, "queued", "running"), timeout)
    return job_as(port, job, headers) if done is not None else None


def exactly_once(pg, collection):
    """(documents, chunks in the table, chunks the documents say, duplicate paths) of a collection."""
    row = pg.sql(
        "SELECT count(*), coalesce(sum(d.chunk_count), 0), "
        "(SELECT count(*) FROM chunks c JOIN collections k ON k.id = c.collection_id WHERE k.name = '%s'), "
        "count(*) - count(DISTINCT d.path) FROM documents d JOIN collections k ON k.id = d.collection_id "
        "WHERE k.name = '%s'" % (collection, collection)
    )
    documents, promised, chunks, duplicates = (int(x) for x in row.split("|"))
    return documents, chunks, promised, duplicates


def sse_events(port, path, headers, timeout=120, method="GET", body=None, on_event=None):
    """The (event, data) pairs of a Server-Sent Events stream, read to its end; on_event(name, data) sees
    each as it comes."""
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    connection.request(method, path, body=body, headers=headers)
    response = connection.getresponse()
    events, name = [], None
    for raw in response:
        line = raw.decode().rstrip("\n")
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            events.append((name, json.loads(line[6:])))
            if on_event:
                on_event(name, events[-1][1])
    connection.close()
    return response.status, events


def ingestion(checks, binary, data, work, pg, redis):
    url, queue = pg.start(), redis.start()
    keys = make_keys(binary, url, "alice", "bob", "ops")
    alice, bob, ops = keys["alice"], keys["bob"], keys["ops"]
    a = replica(binary, data, work, "a", url, ["--queue", queue])
    b = replica(binary, data, work, "b", url, ["--queue", queue])
    for tenant in (alice, bob):
        json_request(a.port, "POST", "/v1/collections", {"name": "notes"}, tenant)

    # Acknowledged with no worker running: the files wait in PostgreSQL and the stream.
    job = upload(a.port, "notes", {"harbour.md": "# Harbour\n\nThe zanzibarite crane lifts the boats."}, alice)
    stored = pg.sql("SELECT count(*) FROM uploads WHERE job_id = '%s'" % job)
    checks.check(
        "acknowledged: the upload's bytes are in PostgreSQL and its entry in Redis",
        stored == "1" and redis.cli("XLEN", "kotae:ingest:interactive:alice") == "1",
        (stored,),
    )
    same = [job_as(p, job, alice) for p in (a.port, b.port)]
    checks.check(
        "GET /v1/jobs/{id}: the same on both replicas, queued",
        same[0] == same[1] and same[0]["state"] == "queued",
        [s and s["state"] for s in same],
    )
    status, metrics, _ = request(b.port, "GET", "/metrics", None, ops)
    text = metrics.decode()
    checks.check(
        "/metrics: waiting entries per stream",
        'kotae_queue_waiting{queue="kotae:ingest",stream="kotae:ingest:interactive:alice"} 1' in text,
        text[-400:],
    )

    # Events from B while a worker (started now) indexes it.
    events = {}
    reader = threading.Thread(
        target=lambda: events.update(zip(("status", "events"), sse_events(b.port, "/v1/jobs/%s/events" % job, alice)))
    )
    reader.start()
    time.sleep(0.3)
    w1 = worker(binary, data, work, "w1", pg, redis, ["--claim-idle", "2", "--listen", "127.0.0.1:0"])
    reader.join(timeout=120)
    states = [e[1]["state"] for e in events.get("events", [])]
    checks.check(
        "GET /v1/jobs/{id}/events on B: job events until it finished",
        events.get("status") == 200 and states[:1] == ["queued"] and states[-1] == "succeeded",
        states,
    )
    seen = wait_for(lambda: bool(search(b.port, "zanzibarite crane", "notes", "bm25", headers=alice)[1]), 10)
    checks.check("indexed by the worker, found on the other replica", seen is not None, seen)
    checks.check(
        "the upload's bytes leave the queue's table once indexed",
        pg.sql("SELECT count(*) FROM uploads WHERE job_id = '%s'" % job) == "0",
    )
    # ... and stay as the document's file, shown by every replica to its tenant only.
    _, listed = json_request(b.port, "GET", "/v1/collections/notes/documents", None, alice)
    harbour = "/v1/collections/notes/documents/%d" % [d for d in listed["data"] if d["path"] == "harbour.md"][0]["id"]
    status, body, _ = request(b.port, "GET", harbour + "/file", None, alice)
    checks.check(
        "the indexed file is kept in PostgreSQL and served by the other replica",
        status == 200 and body == b"# Harbour\n\nThe zanzibarite crane lifts the boats.",
        (status, body[:80]),
    )
    checks.check("... never to another tenant", request(b.port, "GET", harbour + "/file", None, bob)[0] == 404)
    _, described = json_request(a.port, "GET", "/v1/collections/notes", None, alice)
    checks.check(
        "... and counted in the collection's size",
        described["size_bytes"] >= int(pg.sql("SELECT sum(octet_length(bytes)) FROM document_files") or 0) > 0,
        described["size_bytes"],
    )
    status, _ = json_request(a.port, "DELETE", harbour, None, alice)
    checks.check(
        "deleting the document deletes its kept file",
        status == 200
        and pg.sql("SELECT count(*) FROM document_files WHERE path = 'harbour.md'") == "0"
        and request(b.port, "GET", harbour + "/file", None, alice)[0] == 404,
    )
    worker_port = log_events(work, "w1", "listening")[0]["port"]
    status, body, _ = request(worker_port, "GET", "/metrics")
    checks.check(
        "the worker's /metrics: files indexed, queue figures",
        status == 200
        and 'kotae_worker_files_total{outcome="indexed"} 1' in body.decode()
        and "kotae_queue_pending" in body.decode(),
        body.decode()[:300],
    )
    checks.check(
        "the worker's /healthz and /readyz",
        request(worker_port, "GET", "/healthz")[0] == 200 and request(worker_port, "GET", "/readyz")[0] == 200,
    )
    # An upload's metadata travels in the job's record to the worker, and every replica shows it.
    form = (
        b'--kb\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n{"dept": "ops", "year": 2024}\r\n'
        b'--kb\r\nContent-Disposition: form-data; name="metadata[quay.md]"\r\n\r\n{"tags": ["quay"]}\r\n'
        b'--kb\r\nContent-Disposition: form-data; name="files"; filename="quay.md"\r\n\r\n'
        b"# Quay\n\nThe vermilion bollard holds the ferry.\r\n--kb--\r\n"
    )
    status, _, _ = request(
        a.port,
        "POST",
        "/v1/collections/notes/documents",
        form,
        dict({"Content-Type": "multipart/form-data; boundary=kb"}, **alice),
    )

    def quay_metadata(port):
        _, found = json_request(
            port, "POST", "/v1/search", {"collection": "notes", "query": "vermilion bollard"}, alice
        )
        hits = [h for h in (found or {}).get("hits", []) if h["document"] == "quay.md"]
        return hits[0]["metadata"] if hits else None

    wanted = {"dept": "ops", "year": 2024, "tags": ["quay"], "source": "upload"}
    seen = wait_for(lambda: quay_metadata(b.port) == wanted, 30)
    checks.check(
        "an upload's metadata reaches the worker with its job; the other replica's hits show it",
        status == 202 and seen is not None,
        (status, quay_metadata(b.port)),
    )
    # A picture with nothing on it: the worker OCRs its one page, finds no text, and the job's row
    # keeps the page count the loader reported (the same on both replicas).
    blank = upload(a.port, "notes", {"blank.png": white_png(200, 60)}, alice)
    scanned = (wait_job_as(b.port, blank, alice, 60) or {}).get("files", [{}])[0]
    checks.check(
        "a worker's OCR pages are in the job: a blank image, 1 page of 1 read, then no text",
        scanned.get("ocr_pages") == 1
        and scanned.get("ocr_pages_done") == 1
        and scanned.get("status") == "failed"
        and "no text" in scanned.get("error", ""),
        scanned,
    )
    checks.check("SIGTERM: the worker exits 0", w1.stop() == 0)

    # Priority and fairness, with no worker running while they queue: alice floods the bulk band and
    # the interactive one; bob uploads one file after her flood.
    bulk = upload(a.port, "notes", notes("reindex", 6), alice, "?priority=bulk")
    flood = upload(a.port, "notes", notes("flood", 12), alice)
    single = upload(b.port, "notes", {"bob.md": "# Bob\n\nThe quillwort ferry leaves at noon."}, bob)
    w2 = worker(binary, data, work, "w2", pg, redis, ["--claim-idle", "2"])
    finished = {j: wait_job_as(a.port, j, h) for j, h in ((bulk, alice), (flood, alice), (single, bob))}
    checks.check(
        "the three jobs succeeded",
        all(f and f["state"] == "succeeded" for f in finished.values()),
        [f and f["state"] for f in finished.values()],
    )
    order = [e["where"]["job"] for e in log_events(work, "w2", "file_done")]
    bob_at = order.index(single) if single in order else -1
    last_interactive = max(i for i, j in enumerate(order) if j in (flood, single))
    first_bulk = min((i for i, j in enumerate(order) if j == bulk), default=-1)
    checks.check("fairness: bob's one file is among the first two, not behind alice's 12", 0 <= bob_at <= 1, order)
    checks.check("priority: every interactive file before any bulk one", first_bulk > last_interactive, order)

    # Cancel from the other replica: what no worker began is cancelled at once.
    w2.stop()
    long = upload(a.port, "notes", notes("cancel", 8), alice)
    status, answer = json_request(b.port, "DELETE", "/v1/jobs/" + long, None, alice)
    after = job_as(a.port, long, alice)
    checks.check(
        "DELETE on B: the job is cancelled, seen on A",
        status == 202 and after["state"] == "cancelled" and all(f["status"] == "cancelled" for f in after["files"]),
        after and after["state"],
    )
    w1 = worker(binary, data, work, "w1", pg, redis, ["--claim-idle", "2"])
    drained = wait_for(lambda: redis.cli("XLEN", "kotae:ingest:interactive:alice") == "0", 30)
    indexed = pg.sql("SELECT count(*) FROM documents WHERE path LIKE 'cancel-%'")
    checks.check(
        "a worker skips the cancelled job's entries", drained is not None and indexed == "0", (drained, indexed)
    )
    w1.stop()

    # Backpressure: a replica whose queue bound is 3 refuses an upload of 5 files while nothing takes them.
    c = replica(
        binary, data, work, "c", url, ["--queue", queue, "--queue-max-waiting", "3", "--finished-jobs-per-tenant", "1"]
    )
    body = (
        b"".join(
            b'--kb\r\nContent-Disposition: form-data; name="files"; filename="bp-%d.md"\r\n\r\n# x\r\n' % i
            for i in range(5)
        )
        + b"--kb--\r\n"
    )
    status, answer, headers = request(
        c.port,
        "POST",
        "/v1/collections/notes/documents",
        body,
        dict({"Content-Type": "multipart/form-data; boundary=kb"}, **alice),
    )
    checks.check(
        "over the queue's bound: 503 overloaded with Retry-After, nothing stored",
        status == 503
        and "retry-after" in headers
        and pg.sql("SELECT count(*) FROM jobs WHERE record LIKE '%bp-0.md%'") == "0",
        (status, answer[:200]),
    )
    finished = "SELECT count(*) FROM jobs WHERE tenant = 'alice' AND record::json ->> 'finished_at' IS NOT NULL"
    before = pg.sql(finished)
    bounded = upload(c.port, "notes", {"bound.md": "# Bound\n\nOne more job."}, alice)
    after = pg.sql(finished)
    json_request(c.port, "DELETE", "/v1/jobs/" + bounded, None, alice)  # nothing left for a later worker
    checks.check(
        "an upload forgets its tenant's finished jobs beyond --finished-jobs-per-tenant (1), on every replica",
        int(before) > 1 and after == "1" and json_request(b.port, "GET", "/v1/jobs/" + job, None, alice)[0] == 404,
        (before, after),
    )
    checks.check("SIGTERM: the replicas exit 0", a.stop() == 0 and b.stop() == 0 and c.stop() == 0)

    # A worker's readiness follows PostgreSQL: 503 while it is stopped, 200 once it is back.
    w3 = worker(binary, data, work, "w3", pg, redis, ["--listen", "127.0.0.1:0"])
    port = log_events(work, "w3", "listening")[0]["port"]
    ready = lambda: request(port, "GET", "/readyz")[0]
    before = wait_for(lambda: ready() == 200, 10)
    pg.run("stop")
    down = wait_for(lambda: ready() == 503, 10)
    pg.start()
    back = wait_for(lambda: ready() == 200, 20)
    checks.check(
        "the worker's /readyz: 200, 503 while PostgreSQL is stopped, 200 once it is back",
        before is not None and down is not None and back is not None,
        (before, down, back),
    )
    checks.check("SIGTERM: that worker exits 0", w3.stop() == 0)


def faults(checks, binary, data, work, pg, redis):
    url, queue = pg.start(), redis.start()
    a = replica(binary, data, work, "a", url, ["--queue", queue])
    json_request(a.port, "POST", "/v1/collections", {"name": "notes"})

    # A worker SIGKILLed at random moments, 10 times, while 40 files (4 jobs) go through.
    jobs = [upload(a.port, "notes", notes("storm%d" % j, 10, repeat=120)) for j in range(4)]
    flags = ["--claim-idle", "0.5", "--max-attempts", "20", "--concurrency", "2"]
    rng = random.Random(7)
    kills = 0
    for _ in range(10):
        w = worker(binary, data, work, "killed", pg, redis, flags)
        time.sleep(rng.uniform(0.2, 2.5))
        w.kill()
        kills += 1
    survivor = worker(binary, data, work, "survivor", pg, redis, flags)
    done = [wait_job(a.port, job, timeout=300) for job in jobs]
    checks.check(
        "10 SIGKILLs: every job finished and succeeded",
        kills == 10 and all(d and d["state"] == "succeeded" for d in done),
        [d and d["state"] for d in done],
    )
    documents, chunks, promised, duplicates = exactly_once(pg, "notes")
    checks.check(
        "every acknowledged file indexed exactly once, no duplicate chunks",
        documents == 40 and chunks == promised and duplicates == 0,
        (documents, chunks, promised, duplicates),
    )
    checks.check(
        "every file counted as indexed once",
        all(f["status"] == "indexed" and f["chunks"] > 0 for d in done if d for f in d["files"]),
    )
    claimed = log_events(work, "survivor", "file_done") + log_events(work, "killed", "file_done")
    checks.check(
        "some files were taken over from a killed worker", any(e["where"]["attempt"] > 1 for e in claimed), len(claimed)
    )

    # Redis SIGKILLed after acknowledging uploads, then restarted: nothing acknowledged is lost.
    survivor.stop()
    acknowledged = upload(a.port, "notes", notes("aof", 5))
    redis.run("kill")
    redis.start()
    survivor = worker(binary, data, work, "survivor", pg, redis, flags)
    done = wait_job(a.port, acknowledged, timeout=120)
    checks.check(
        "Redis SIGKILLed and restarted: the acknowledged job still indexes",
        done and done["state"] == "succeeded",
        done and done["state"],
    )
    survivor.stop()

    # A poison file: over its time budget at every attempt; after 2 it is dead-lettered with the reason.
    poison = {"poison.md": "# Poison\n\n" + "An endless paragraph of many words goes on. " * 60000}
    poison.update(notes("healthy", 3))
    job = upload(a.port, "notes", poison)
    survivor = worker(
        binary,
        data,
        work,
        "survivor",
        pg,
        redis,
        ["--claim-idle", "0.3", "--max-attempts", "2", "--seconds-per-file", "0.5"],
    )
    done = wait_job(a.port, job, timeout=120)
    files = {f["name"]: f for f in (done or {}).get("files", [])}
    checks.check(
        "the poison file failed, saying it was given up and why",
        files.get("poison.md", {}).get("status") == "failed"
        and "gave up after 2 attempts" in files["poison.md"].get("error", ""),
        files.get("poison.md"),
    )
    checks.check(
        "the other files of its job indexed; the job is partial",
        done
        and done["state"] == "partial"
        and all(f["status"] == "indexed" for n, f in files.items() if n != "poison.md"),
        done and done["state"],
    )
    dead = redis.cli("XRANGE", "kotae:ingest:dead", "-", "+")
    checks.check(
        "the dead-letter stream holds it with its reason",
        "gave up after 2 attempts" in dead and job in dead,
        dead[:300],
    )
    checks.check("SIGTERM: worker and replica exit 0", survivor.stop() == 0 and a.stop() == 0)


def ask_events(port, body, on_event=None):
    """POST /v1/ask with "stream": true: the (event, data) pairs; on_event(name, data) sees each as it comes."""
    return sse_events(
        port,
        "/v1/ask",
        {"Content-Type": "application/json"},
        method="POST",
        body=json.dumps(dict(body, stream=True)),
        on_event=on_event,
    )[1]


def metric(port, line_start):
    """The value of the first /metrics line that starts with `line_start`, or None."""
    text = request(port, "GET", "/metrics")[1].decode()
    for line in text.splitlines():
        if line.startswith(line_start):
            return float(line.rsplit(" ", 1)[1])
    return None


def answers(checks, binary, data, work, pg, redis, fixture):
    url, queue = pg.start(), redis.start()
    copied = kotae(binary, "store", "copy", "--from", fixture, "--to", url, "--collection", "faq")
    checks.check("the faq collection copied into PostgreSQL", copied.returncode == 0, copied.stderr[-300:])
    flags = [
        "--queue",
        queue,
        "--backend",
        "workers",
        "--backend",
        "extractive",
        "--answer-wait",
        "3",
        "--answer-silence",
        "20",
        "--context",
        "4096",
    ]
    a = replica(binary, data, work, "a", url, flags)
    b = replica(binary, data, work, "b", url, flags)
    # The answer workers' own data folder: only the generation model (they need no embedder).
    worker_data = os.path.join(work, "worker-data")
    os.makedirs(worker_data)
    gguf = os.path.join(work, "tiny-chat.gguf")
    subprocess.run([os.environ["KOTAE_WRITE_TINY_GGUF"], gguf, "4", "256", "512"], check=True)
    added = kotae(binary, "model", "add", gguf, "--name", "tiny-chat", "--data", worker_data)
    checks.check("kotae model add: the tiny GGUF installed for the workers", added.returncode == 0, added.stderr[-300:])
    answer_flags = [
        "--answers",
        "--model",
        "tiny-chat",
        "--threads",
        "1",
        "--context",
        "4096",
        "--claim-idle",
        "2",
        "--listen",
        "127.0.0.1:0",
    ]
    # One source: the tiny model's tokens are single characters, so a prompt fitted to the replica's
    # estimate of a real model's tokens (3.5 bytes each) would not fit its 4096 tokens of context.
    question = {
        "collection": "faq",
        "question": "What is a Debian package?",
        "cache": False,
        "temperature": 0,
        "seed": 1,
        "k": 1,
    }

    # No worker yet: the question waits --answer-wait, then the next back-end answers.
    started = time.time()
    status, answer = json_request(a.port, "POST", "/v1/ask", dict(question, max_tokens=16))
    waited = time.time() - started
    fallbacks = {f["backend"]: f["error"] for f in (answer or {}).get("fallbacks", [])}
    checks.check(
        "no answer worker: after --answer-wait the extractive back-end answers, saying why",
        status == 200
        and answer["backend"] == "extractive"
        and 2.5 <= waited < 15
        and "no answer worker started the task" in fallbacks.get("workers", ""),
        (status, waited, fallbacks),
    )

    w1 = worker(binary, worker_data, work, "answers1", pg, redis, answer_flags)
    w1_port = log_events(work, "answers1", "listening")[0]["port"]
    expired = wait_for(lambda: metric(w1_port, 'kotae_answer_tasks_total{outcome="expired"}') == 1, 10)
    checks.check("the worker drops the task no one waits for any more, unstarted (expired)", expired is not None)

    # Streamed: the same events /v1/ask sends, the pieces from the worker.
    events = ask_events(a.port, dict(question, max_tokens=24))
    names = [n for n, _ in events]
    done = events[-1][1] if events else {}
    checks.check(
        "stream through the worker: sources, token..., citations, timings, done",
        names[:1] == ["sources"]
        and "token" in names
        and names[-3:] == ["citations", "timings", "done"]
        and "restart" not in names,
        names,
    )
    tokens = "".join(d["text"] for n, d in events if n == "token")
    checks.check(
        "done: backend workers, its text the tokens streamed, generation figures from the worker",
        done.get("backend") == "workers"
        and done.get("answer")
        and tokens.strip()
        and done["generation"]["generated_tokens"] > 0,
        {k: done.get(k) for k in ("backend", "generation")},
    )

    # Not streamed, on the other replica; then "async": true on A, the result read on B.
    status, whole = json_request(b.port, "POST", "/v1/ask", dict(question, max_tokens=24))
    checks.check(
        "not streamed, on replica B: the same answer from the worker (greedy)",
        status == 200 and whole["backend"] == "workers" and whole["answer"] == done.get("answer"),
        (status, whole and whole.get("backend")),
    )
    status, task = json_request(a.port, "POST", "/v1/ask", dict(question, max_tokens=24, **{"async": True}))
    checks.check(
        "async: 202 with a task id, queued",
        status == 202 and task["id"].startswith("ask_") and task["status"] in ("queued", "running"),
        (status, task),
    )
    finished = wait_for(lambda: json_request(b.port, "GET", "/v1/tasks/" + task["id"])[1]["status"] == "succeeded", 60)
    status, result = json_request(b.port, "GET", "/v1/tasks/" + task["id"])
    checks.check(
        "GET /v1/tasks/{id} on replica B: succeeded, with the answer as /v1/ask gives it",
        finished is not None
        and result["answer"]["backend"] == "workers"
        and result["answer"]["answer"] == done.get("answer")
        and "tenant" not in result,
        result,
    )
    status, missing = json_request(b.port, "GET", "/v1/tasks/ask_nosuchtask")
    checks.check("GET /v1/tasks/{id} of no task: 404", status == 404, status)
    huge = request(b.port, "GET", "/v1/tasks/ask_" + "a" * 100000)[0]
    checks.check(
        "GET /v1/tasks/{id} with a 100 kB id: a clear 4xx, and the replica goes on",
        400 <= huge < 500 and json_request(b.port, "GET", "/v1/tasks/" + task["id"])[0] == 200,
        huge,
    )
    status, refused = json_request(a.port, "POST", "/v1/ask", dict(question, stream=True, **{"async": True}))
    checks.check("stream and async at once: 400", status == 400, status)

    # A question whose client went away is dropped before the worker spends time on it: the worker is
    # stopped (SIGSTOP) while the client gives up, then let go.
    answered = metric(w1_port, 'kotae_answer_tasks_total{outcome="answered"}')
    w1.process.send_signal(signal.SIGSTOP)
    try:
        request(
            a.port,
            "POST",
            "/v1/ask",
            json.dumps(dict(question, max_tokens=400)).encode(),
            {"Content-Type": "application/json"},
            timeout=1,
        )
    except Exception:
        pass  # the client's timeout: it went away
    time.sleep(0.6)  # the replica looks at its client every 200 ms
    w1.process.send_signal(signal.SIGCONT)
    dropped = wait_for(lambda: metric(w1_port, 'kotae_answer_tasks_total{outcome="client_gone"}') == 1, 15)
    checks.check(
        "client gone: the worker drops the task unstarted; nothing generated for it",
        dropped is not None and metric(w1_port, 'kotae_answer_tasks_total{outcome="answered"}') == answered,
        (dropped, answered),
    )
    status, metrics, _ = request(a.port, "GET", "/metrics")
    checks.check(
        "the replica's /metrics: the answer queue's figures",
        'kotae_queue_waiting{queue="kotae:answers",stream="kotae:answers:interactive:local"}' in metrics.decode(),
    )

    # A worker SIGKILLed mid-answer: another claims its task after --claim-idle and says it failed (running
    # it again would repeat what the client has), and the next back-end answers.
    w2 = worker(binary, worker_data, work, "answers2", pg, redis, answer_flags)
    w2_port = log_events(work, "answers2", "listening")[0]["port"]
    by_port = {w1_port: w1, w2_port: w2}

    def kill_the_generating_one(name, _):
        if name == "token" and not killed:
            for port, w in by_port.items():
                if metric(port, "kotae_answer_busy") == 1:
                    w.kill()
                    killed.append(port)
                    return

    killed = []
    started = time.time()
    events = ask_events(a.port, dict(question, max_tokens=1500), on_event=kill_the_generating_one)
    names = [n for n, _ in events]
    done = events[-1][1] if events else {}
    fallbacks = {f["backend"]: f["error"] for f in done.get("fallbacks", [])}
    checks.check(
        "a worker SIGKILLed mid-answer: restart, then the extractive answer, saying why",
        len(killed) == 1
        and "restart" in names
        and done.get("backend") == "extractive"
        and "stopped mid-answer" in fallbacks.get("workers", ""),
        (killed, names[-4:], fallbacks),
    )
    survivor_port = next((p for p in by_port if p not in killed), None)
    survivor = by_port.get(survivor_port)
    checks.check(
        "the other worker claimed the task and marked it abandoned, within seconds",
        metric(survivor_port, 'kotae_answer_tasks_total{outcome="abandoned"}') == 1 and time.time() - started < 20,
    )
    status, after = json_request(b.port, "POST", "/v1/ask", dict(question, max_tokens=8))
    checks.check(
        "the surviving worker answers the next question",
        status == 200 and after["backend"] == "workers",
        (status, after and after.get("backend")),
    )
    checks.check(
        "SIGTERM: the surviving worker and the replicas exit 0",
        survivor and survivor.stop() == 0 and a.stop() == 0 and b.stop() == 0,
    )


def main():
    binary, fixture, group = sys.argv[1], sys.argv[2], sys.argv[3]
    work = tempfile.mkdtemp(prefix="kotae-queue-")
    checks = Checks()
    pg, redis = Postgres(), Redis(work)
    try:
        data = os.path.join(work, "data")
        os.makedirs(data)
        os.symlink(os.path.realpath(os.path.join(fixture, "models")), os.path.join(data, "models"))
        if group == "answers":
            answers(checks, binary, data, work, pg, redis, fixture)
        else:
            {"ingestion": ingestion, "faults": faults}[group](checks, binary, data, work, pg, redis)
    finally:
        for process in STARTED + WORKERS:
            if process.process and process.alive():
                process.process.kill()
        try:
            redis.run("kill")
        except RuntimeError:
            pass
        pg.remove()
        code = checks.finish(work)
    return code


if __name__ == "__main__":
    sys.exit(main())
