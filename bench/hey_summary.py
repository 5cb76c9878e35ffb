"""Reads `hey -o csv` from stdin; prints one JSON object: requests, non-2xx responses, requests/s
(over the run's span) and latency p50/p95/p99 in milliseconds. Extra key=value arguments are added
to the object (name, endpoint, concurrency, server)."""
import csv
import json
import sys

rows = list(csv.DictReader(sys.stdin))
times = sorted(float(r["response-time"]) for r in rows)
span = max((float(r["offset"]) + float(r["response-time"]) for r in rows), default=0)
failed = sum(1 for r in rows if not r["status-code"].startswith("2"))


def percentile(p):
    return 1000 * times[min(len(times) - 1, max(0, int(round(p * len(times))) - 1))] if times else None


out = dict(arg.split("=", 1) for arg in sys.argv[1:])
if "concurrency" in out:
    out["concurrency"] = int(out["concurrency"])
out.update(requests=len(rows), failed=failed, requests_per_s=len(rows) / span if span else None,
           p50_ms=percentile(0.50), p95_ms=percentile(0.95), p99_ms=percentile(0.99))
print(json.dumps(out))
