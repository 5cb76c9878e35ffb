#!/usr/bin/env python3
"""The load generator of bench/soak: starts `kotae serve` on a loopback port over DATA (which holds a
collection "faq"), measures the capacity of the request mix (closed loop, all clients busy), then
sends the mix open-loop at a fraction of it for N minutes from several clients (one keep-alive
connection each): POST /v1/search, /v1/ask (extractive, cache off), /v1/embeddings and uploads of
small documents (POST /v1/collections/soak/documents, each job followed to its end). Every request's
latency and status is recorded. JSON lines on stdout: one per window (requests, p99 per kind, errors,
resident memory), then the summary with the verdict.

The verdict passes when: no errors but deliberate 429/503 (overload and rate limits are the server
saying so, and are counted apart); every ingestion job succeeded; the server is alive and healthy at
the end and exits 0 on SIGTERM; and its resident memory at the end is at most 1.2 x + 64 MiB what it
was after the first window (models warm, caches filling): more is a leak, not a cache.

Python standard library only.
"""

import argparse
import http.client
import json
import os
import random
import subprocess
import sys
import threading
import time

from kotae_server import KotaeServer
from latency_stats import percentile

MIX = [("search", 0.34), ("ask", 0.32), ("embeddings", 0.32), ("upload", 0.02)]
QUESTIONS = [
    "How do I upgrade Debian?",
    "What is the difference between testing and unstable?",
    "How do I install a package from the command line?",
    "What is a virtual package?",
    "How can I keep my Debian system up to date?",
    "What is a Debian source package?",
    "What does the package status 'essential' mean?",
    "How do I find which package a file belongs to?",
]
TEXTS = [
    "How do I upgrade Debian?",
    "A package manager installs software.",
    "Kernel modules and firmware",
    "Where are the configuration files kept?",
    "Security updates for the stable release",
]
BOUNDARY = "kotae-soak-boundary"
UPLOAD_NAMES = 40  # uploads cycle through this many names: each replaces an earlier version


def log(message):
    print("[soak] " + message, file=sys.stderr, flush=True)


def rss_bytes(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def ms(seconds):
    return None if seconds is None else round(seconds * 1000, 2)


class Client:
    """One keep-alive connection; reconnects after an error."""

    def __init__(self, port):
        self.port, self.connection = port, None

    def send(self, method, path, body=None, content_type="application/json"):
        """(status, body bytes) or raises OSError/HTTPException."""
        if self.connection is None:
            self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            headers = {"Content-Type": content_type} if body is not None else {}
            self.connection.request(method, path, body=body, headers=headers)
            response = self.connection.getresponse()
            data = response.read()
            if response.getheader("Connection", "").lower() == "close":
                self.connection.close()
                self.connection = None
            return response.status, data
        except (OSError, http.client.HTTPException):
            self.connection.close()
            self.connection = None
            raise


class Load:
    """Builds and sends the requests of the mix and records every outcome."""

    def __init__(self, port, seed):
        self.port = port
        self.lock = threading.Lock()
        self.records = []  # (end time, kind, seconds, outcome), outcome "ok" or an error key
        self.upload_counter = 0
        self.jobs = {}  # id -> (kind, submitted at)
        self.job_results = []  # (seconds to finish, state, error)
        self.random = random.Random(seed)

    def pick(self):
        with self.lock:
            x = self.random.random()
        for kind, weight in MIX:
            x -= weight
            if x < 0:
                return kind
        return MIX[-1][0]

    def request(self, kind):
        with self.lock:
            i = self.upload_counter = self.upload_counter + 1
        if kind == "search":
            return (
                "POST",
                "/v1/search",
                json.dumps({"collection": "faq", "query": QUESTIONS[i % len(QUESTIONS)], "k": 10}).encode(),
                "application/json",
                200,
            )
        if kind == "ask":
            return (
                "POST",
                "/v1/ask",
                json.dumps({"collection": "faq", "question": QUESTIONS[i % len(QUESTIONS)], "cache": False}).encode(),
                "application/json",
                200,
            )
        if kind == "embeddings":
            return (
                "POST",
                "/v1/embeddings",
                json.dumps({"input": [TEXTS[i % len(TEXTS)]]}).encode(),
                "application/json",
                200,
            )
        name = "note-%02d.md" % (i % UPLOAD_NAMES)
        text = (
            "# Soak note %d\n\nThe lighthouse keeper wrote entry %d in the blue notebook: %d quokkas were counted "
            "on the island, the wind came from the %s and the supply boat was %s.\n"
        ) % (i, i, i % 97, ["north", "south", "east", "west"][i % 4], ["late", "early", "on time"][i % 3])
        body = (
            '--%s\r\nContent-Disposition: form-data; name="files"; filename="%s"\r\nContent-Type: text/markdown'
            "\r\n\r\n%s\r\n--%s--\r\n" % (BOUNDARY, name, text, BOUNDARY)
        ).encode()
        return "POST", "/v1/collections/soak/documents", body, "multipart/form-data; boundary=" + BOUNDARY, 202

    def send(self, client, kind):
        method, path, body, content_type, expected = self.request(kind)
        start = time.time()
        try:
            status, data = client.send(method, path, body, content_type)
            outcome = "ok"
            if status != expected:
                try:
                    code = json.loads(data)["error"]["code"]
                except (ValueError, KeyError, TypeError):
                    code = "-"
                outcome = "%d:%s" % (status, code)
            elif kind == "upload":
                with self.lock:
                    self.jobs[json.loads(data)["id"]] = time.time()
        except (OSError, http.client.HTTPException) as e:
            outcome = "connection:" + type(e).__name__
        end = time.time()
        with self.lock:
            self.records.append((end, kind, end - start, outcome))

    def follow_jobs(self, stop):
        """Polls the upload jobs until each ends (one connection, twice a second)."""
        client = Client(self.port)
        while not stop.is_set() or self.jobs:
            with self.lock:
                pending = list(self.jobs.items())
            for job_id, submitted in pending:
                try:
                    status, data = client.send("GET", "/v1/jobs/" + job_id)
                except (OSError, http.client.HTTPException):
                    continue
                job = json.loads(data) if status == 200 else None
                if status != 200 or job["state"] in ("succeeded", "failed", "partial", "cancelled"):
                    error = (
                        ""
                        if status == 200 and job["state"] == "succeeded"
                        else (
                            "job %s: %s" % (job["state"], [f.get("error") for f in job["files"]])
                            if job
                            else "GET job %d" % status
                        )
                    )
                    with self.lock:
                        self.jobs.pop(job_id, None)
                        self.job_results.append((time.time() - submitted, job["state"] if job else "lost", error))
            if stop.is_set() and time.time() > self.stop_deadline:
                break
            time.sleep(0.5)


def closed_loop(load, clients, seconds):
    """All clients busy for `seconds`: requests completed per second."""
    stop = threading.Event()

    def run():
        client = Client(load.port)
        while not stop.is_set():
            load.send(client, load.pick())

    threads = [threading.Thread(target=run, daemon=True) for _ in range(clients)]
    begin = len(load.records)
    start = time.time()
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    done = load.records[begin:]
    elapsed = time.time() - start
    return sum(1 for r in done if r[3] == "ok") / elapsed, done


def open_loop(load, clients, rate, seconds, on_window, window_seconds):
    """Requests at `rate` per second (evenly spaced tickets, taken by whichever client is free) for
    `seconds`; calls on_window(index, start, end) after each window. Returns the largest lag (a
    request sent later than its time because every client was busy)."""
    start = time.time() + 0.5
    total = int(rate * seconds)
    next_ticket = [0]
    lag = [0.0]
    lock = threading.Lock()

    def run():
        client = Client(load.port)
        while True:
            with lock:
                ticket = next_ticket[0]
                next_ticket[0] += 1
            if ticket >= total:
                return
            due = start + ticket / rate
            now = time.time()
            if due > now:
                time.sleep(due - now)
            else:
                with lock:
                    lag[0] = max(lag[0], now - due)
            load.send(client, load.pick())

    threads = [threading.Thread(target=run, daemon=True) for _ in range(clients)]
    for t in threads:
        t.start()
    window = 0
    while any(t.is_alive() for t in threads):
        window_end = start + (window + 1) * window_seconds
        while time.time() < window_end and any(t.is_alive() for t in threads):
            time.sleep(0.2)
        on_window(window, start + window * window_seconds, min(time.time(), window_end))
        window += 1
    return lag[0]


def summarize(records, kinds=None):
    out = {}
    for kind in kinds or [k for k, _ in MIX]:
        mine = [r for r in records if r[1] == kind]
        ok = [r[2] for r in mine if r[3] == "ok"]
        out[kind] = {
            "requests": len(mine),
            "ok": len(ok),
            "p50_ms": ms(percentile(ok, 50)),
            "p99_ms": ms(percentile(ok, 99)),
        }
    return out


def errors_by_kind(records):
    deliberate, errors = {}, {}
    for _, kind, _, outcome in records:
        if outcome == "ok":
            continue
        target = deliberate if outcome.startswith(("429:", "503:")) else errors
        key = "%s %s" % (kind, outcome)
        target[key] = target.get(key, 0) + 1
    return errors, deliberate


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--data", required=True, help="data folder with models/ and a collection 'faq'")
    parser.add_argument("--work", required=True, help="folder for the server log")
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--rate-fraction", type=float, default=0.7)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--capacity", type=float, default=0, help="requests/s of the mix; 0: measure it")
    parser.add_argument("--calibrate-seconds", type=float, default=20)
    parser.add_argument(
        "--window-seconds", type=float, default=0, help="report window (default: 30 s, 60 s past 10 minutes)"
    )
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    window_seconds = args.window_seconds or (60 if args.minutes > 10 else 30)

    server = KotaeServer(args.binary, args.data, os.path.join(args.work, "kotae-serve.log"))
    pid, port = server.process.pid, server.port
    load = Load(port, args.seed)
    client = Client(port)
    status, data = client.send("POST", "/v1/collections", json.dumps({"name": "soak"}).encode())
    if status != 201:
        raise SystemExit("cannot create the collection 'soak': %d %s" % (status, data[:200]))
    rss_start = rss_bytes(pid)
    log("kotae serve pid %d on port %d, resident %.0f MiB" % (pid, port, rss_start / 2**20))

    stop_jobs = threading.Event()
    load.stop_deadline = float("inf")
    jobs_thread = threading.Thread(target=load.follow_jobs, args=(stop_jobs,), daemon=True)
    jobs_thread.start()

    closed_loop(load, args.clients, 5)  # warm-up: first batches, caches, lazily built state
    if args.capacity > 0:
        capacity, calibration = args.capacity, []
    else:
        log("measuring the mix's capacity: %d clients, closed loop, %.0f s" % (args.clients, args.calibrate_seconds))
        capacity, calibration = closed_loop(load, args.clients, args.calibrate_seconds)
    rate = capacity * args.rate_fraction
    calibration_errors, calibration_deliberate = errors_by_kind(calibration)
    print(
        json.dumps(
            {
                "name": "capacity",
                "requests_per_s": round(capacity, 1),
                "clients": args.clients,
                "seconds": args.calibrate_seconds if not args.capacity else 0,
                "mix": dict(MIX),
                "by_kind": summarize(calibration) if calibration else None,
                "deliberate_429_503": calibration_deliberate,
                "errors": calibration_errors,
            }
        ),
        flush=True,
    )
    log(
        "capacity %.0f requests/s; soak at %.0f requests/s (%.0f%%) for %g minutes"
        % (capacity, rate, args.rate_fraction * 100, args.minutes)
    )

    begin = len(load.records)
    rss_samples = []  # (seconds since start, bytes)
    windows = []
    soak_start = time.time()
    sampling = threading.Event()

    def sample_rss():
        while not sampling.is_set():
            value = rss_bytes(pid)
            if value:
                rss_samples.append((time.time() - soak_start, value))
            sampling.wait(5)

    threading.Thread(target=sample_rss, daemon=True).start()

    def on_window(index, start, end):
        with load.lock:
            mine = [r for r in load.records[begin:] if start <= r[0] < end]
        errors, deliberate = errors_by_kind(mine)
        ok = [r[2] for r in mine if r[3] == "ok"]
        rss = rss_bytes(pid)
        line = {
            "name": "window",
            "index": index,
            "t_s": round(end - soak_start, 1),
            "requests": len(mine),
            "requests_per_s": round(len(mine) / max(end - start, 1e-9), 1),
            "p50_ms": ms(percentile(ok, 50)),
            "p99_ms": ms(percentile(ok, 99)),
            "p99_ms_by_kind": {k: v["p99_ms"] for k, v in summarize(mine).items()},
            "errors": errors,
            "deliberate_429_503": deliberate,
            "jobs_pending": len(load.jobs),
            "rss_mib": round(rss / 2**20, 1) if rss else None,
            "server_alive": server.process.poll() is None,
        }
        windows.append(line)
        print(json.dumps(line), flush=True)

    max_lag = open_loop(load, args.clients, rate, args.minutes * 60, on_window, window_seconds)
    elapsed = time.time() - soak_start
    soak = load.records[begin:]
    # Let the last jobs finish (up to two minutes), then look at the server.
    load.stop_deadline = time.time() + 120
    stop_jobs.set()
    jobs_thread.join()
    sampling.set()
    alive = server.process.poll() is None
    rss_end = rss_bytes(pid) if alive else None
    healthy = False
    if alive:
        try:
            healthy = Client(port).send("GET", "/healthz")[0] == 200
        except (OSError, http.client.HTTPException):
            healthy = False
    exit_code = None
    if alive:
        server.process.terminate()
        try:
            exit_code = server.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.process.kill()
            exit_code = "timeout"

    errors, deliberate = errors_by_kind(soak)
    job_failures = [r for r in load.job_results if r[1] != "succeeded"]
    rss_warm = windows[0]["rss_mib"] * 2**20 if windows and windows[0]["rss_mib"] else rss_start
    rss_bound = rss_warm * 1.2 + 64 * 2**20
    rss_max = max([v for _, v in rss_samples] + [rss_end or 0])
    reasons = []
    if errors:
        reasons.append("errors other than 429/503: %s" % errors)
    if job_failures:
        reasons.append("%d ingestion jobs did not succeed: %s" % (len(job_failures), job_failures[:3]))
    if load.jobs:
        reasons.append("%d ingestion jobs still unfinished two minutes after the load" % len(load.jobs))
    if not alive:
        reasons.append("the server died (exit %s)" % server.process.returncode)
    elif not healthy:
        reasons.append("/healthz is not 200 at the end")
    if exit_code not in (None, 0):
        reasons.append("kotae serve exited with %s after SIGTERM" % exit_code)
    if rss_end and rss_end > rss_bound:
        reasons.append(
            "resident memory grew from %.0f MiB (after the first window) to %.0f MiB (bound %.0f MiB)"
            % (rss_warm / 2**20, rss_end / 2**20, rss_bound / 2**20)
        )
    ok = [r[2] for r in soak if r[3] == "ok"]
    job_seconds = [r[0] for r in load.job_results if r[1] == "succeeded"]
    print(
        json.dumps(
            {
                "name": "soak_summary",
                "minutes": args.minutes,
                "clients": args.clients,
                "capacity_rps": round(capacity, 1),
                "rate_fraction": args.rate_fraction,
                "target_rps": round(rate, 1),
                "achieved_rps": round(len(soak) / elapsed, 1),
                "max_send_lag_ms": ms(max_lag),
                "requests": len(soak),
                "served_ok": len(ok),
                "by_kind": summarize(soak),
                "errors": errors,
                "deliberate_429_503": deliberate,
                "ingestion_jobs": {
                    "finished": len(load.job_results),
                    "succeeded": len(load.job_results) - len(job_failures),
                    "p50_s": round(percentile(job_seconds, 50) or 0, 3),
                    "p99_s": round(percentile(job_seconds, 99) or 0, 3),
                    "note": "warm-up and calibration uploads included",
                },
                "p50_ms": ms(percentile(ok, 50)),
                "p99_ms": ms(percentile(ok, 99)),
                "p99_ms_over_time": [[w["t_s"], w["p99_ms"]] for w in windows],
                "rss_mib": {
                    "start": round(rss_start / 2**20, 1),
                    "after_first_window": round(rss_warm / 2**20, 1),
                    "max": round(rss_max / 2**20, 1),
                    "end": round(rss_end / 2**20, 1) if rss_end else None,
                    "bound": round(rss_bound / 2**20, 1),
                },
                "server_alive": alive,
                "healthz": healthy,
                "exit_code_after_sigterm": exit_code,
                "pass": not reasons,
                "reasons": reasons,
            }
        ),
        flush=True,
    )
    return 0 if not reasons else 1


if __name__ == "__main__":
    sys.exit(main())
