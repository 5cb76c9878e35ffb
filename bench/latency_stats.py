"""One definition of the latency figures every Python benchmark prints, the twin of core/percentile.h
and bench/latency_stats.h (bench/README.md, "Latency figures"): the p-th percentile (p in 0..100) of n
values is linear interpolation between the closest ranks, rank = p / 100 * (n - 1) over the sorted
values (numpy's default method, "linear"), under the field names p50_ms, p95_ms, p99_ms.

Standard library only: the benchmarks import it from bench/ (their own folder, or bench/ put on
sys.path by bench/peers/_common.py and bench/gpu/st_peer.py).

Check: python3 bench/latency_stats.py (exit 0 and "ok", else the differences and exit 1).
"""

from __future__ import annotations

import math
import sys
from typing import Iterable


def percentile(values: Iterable[float], p: float) -> float | None:
    """The p-th percentile (0 <= p <= 100) of values, in any order; None (JSON null) when there are none."""
    ordered = sorted(values)
    if not ordered:
        return None
    rank = p / 100.0 * (len(ordered) - 1)
    lo = math.floor(rank)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (rank - lo)


def latency(ms: Iterable[float]) -> dict:
    """p50_ms, p95_ms, p99_ms and runs of latencies in milliseconds."""
    ms = list(ms)
    return {
        "p50_ms": percentile(ms, 50),
        "p95_ms": percentile(ms, 95),
        "p99_ms": percentile(ms, 99),
        "runs": len(ms),
    }


def _self_check() -> int:
    # numpy.percentile(values, p) (method="linear", the default) on these values gives the expected
    # figures; written out so that the check needs no numpy.
    values = [15.0, 20.0, 35.0, 40.0, 50.0, 3.0, 7.5, 100.0, 1.0, 42.0]  # unsorted on purpose
    expected = {
        0: 1.0,
        10: 2.8,
        25: 9.375,
        50: 27.5,
        90: 55.0,
        95: 77.5,
        99: 95.5,
        100: 100.0,
    }
    failures = []
    for p, want in expected.items():
        got = percentile(values, p)
        if got is None or abs(got - want) > 1e-9:
            failures.append(f"percentile(values, {p}) = {got}, numpy's linear method gives {want}")
    checks = [
        (percentile([], 50), None),
        (percentile([4.0], 99), 4.0),
        (percentile([1.0, 2.0], 50), 1.5),
        (latency([2.0, 1.0, 4.0, 3.0]), {"p50_ms": 2.5, "p95_ms": 3.85, "p99_ms": 3.97, "runs": 4}),
    ]
    for got, want in checks:
        same = got == want if not isinstance(want, dict) else all(abs(got[k] - want[k]) < 1e-9 for k in want)
        if not same:
            failures.append(f"got {got}, want {want}")
    for failure in failures:
        print(failure, file=sys.stderr)
    if not failures:
        print("ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(_self_check())
