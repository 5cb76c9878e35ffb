"""Reads `hey -o csv` from stdin, or from the .csv files named among the arguments (several runs of one
case: requests/s is then all requests over the runs' summed spans); prints one JSON object: requests,
non-2xx responses, requests/s and latency p50/p95/p99 in milliseconds. Extra key=value arguments are
added to the object (name, endpoint, concurrency, server)."""

import csv
import json
import sys

from latency_stats import percentile

files = [a for a in sys.argv[1:] if a.endswith(".csv") and "=" not in a]
runs = [list(csv.DictReader(open(f))) for f in files] if files else [list(csv.DictReader(sys.stdin))]
rows = [r for run in runs for r in run]
ms = [1000 * float(r["response-time"]) for r in rows]
span = sum(max((float(r["offset"]) + float(r["response-time"]) for r in run), default=0) for run in runs)
failed = sum(1 for r in rows if not r["status-code"].startswith("2"))


out = dict(arg.split("=", 1) for arg in sys.argv[1:] if "=" in arg)
for key in ("concurrency", "target_rate", "chunks"):
    if key in out:
        out[key] = int(out[key])
out.update(
    requests=len(rows),
    failed=failed,
    requests_per_s=len(rows) / span if span else None,
    p50_ms=percentile(ms, 50),
    p95_ms=percentile(ms, 95),
    p99_ms=percentile(ms, 99),
)
print(json.dumps(out))
