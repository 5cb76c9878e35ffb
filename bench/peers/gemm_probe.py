#!/usr/bin/env python3
"""fp32 GEMM peak probe: square C = A @ B with numpy (OpenBLAS) at a few sizes, best GFLOP/s over
repeats (2 n^3 flops per product) with OPENBLAS_NUM_THREADS = settings.threads. It is the yardstick
for the embedding cases: how close each engine gets to what this machine's cores can do in fp32.

OpenBLAS picks its kernel when it loads. This workplace may set OPENBLAS_CORETYPE (and
OPENBLAS_L2_SIZE) on some processors for old OpenBLAS builds; a current numpy then runs an older,
slower kernel (e.g. Haswell AVX2 on an AVX-512 machine). The probe measures the machine, so by
default it unsets both in its own process before numpy loads and reports the kernel OpenBLAS then
chose (threadpoolctl); --as-is keeps the environment as given (the kernel is reported either way).

Usage: gemm_probe.py --inputs INPUTS.json | --threads N  [--sizes 1024,1536,2048,3072] [--repeats 5] [--as-is]
Prints {"case":"gemm_peak","impl":"numpy-openblas","gflops":..,"m":..,"n":..,"k":..,...}.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", help="the benchmark's shared input file (settings.threads)")
    parser.add_argument("--threads", type=int, help="overrides settings.threads")
    parser.add_argument("--sizes", default="1024,1536,2048,3072")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--as-is", action="store_true", help="keep OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE from the environment"
    )
    args = parser.parse_args()
    threads = args.threads
    if threads is None and args.inputs:
        with open(args.inputs, encoding="utf-8") as f:
            threads = int((json.load(f).get("settings") or {}).get("threads", 2))
    if threads is None:
        parser.error("give --inputs or --threads")

    removed = {}
    if not args.as_is:
        for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
            if var in os.environ:
                removed[var] = os.environ.pop(var)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)

    import numpy as np
    from threadpoolctl import threadpool_info

    blas = [p for p in threadpool_info() if p.get("user_api") == "blas"]
    kernel = blas[0].get("architecture") if blas else None
    blas_version = f"{blas[0].get('internal_api')} {blas[0].get('version')}" if blas else "unknown"
    version = f"numpy {np.__version__}, {blas_version}"
    print(
        f"[gemm_probe] {version}; kernel {kernel}; OPENBLAS_NUM_THREADS={threads}; "
        f"unset for this process: {removed or 'nothing'}",
        file=sys.stderr,
        flush=True,
    )

    rng = np.random.default_rng(0)
    best = (0.0, 0)
    per_size = {}
    for n in (int(x) for x in args.sizes.split(",") if x):
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        out = np.empty((n, n), dtype=np.float32)
        np.matmul(a, b, out=out)  # warm-up: thread pool and pages
        fastest = float("inf")
        for _ in range(args.repeats):
            t0 = time.perf_counter_ns()
            np.matmul(a, b, out=out)
            fastest = min(fastest, (time.perf_counter_ns() - t0) / 1e9)
        gflops = 2.0 * n**3 / fastest / 1e9
        per_size[str(n)] = round(gflops, 2)
        print(f"[gemm_probe] n={n}: {gflops:.1f} GFLOP/s (best of {args.repeats})", file=sys.stderr, flush=True)
        if gflops > best[0]:
            best = (gflops, n)
    gflops, n = best
    print(
        json.dumps(
            {
                "case": "gemm_peak",
                "impl": "numpy-openblas",
                "gflops": round(gflops, 2),
                "m": n,
                "n": n,
                "k": n,
                "dtype": "float32",
                "threads": threads,
                "kernel": kernel,
                "per_size_gflops": per_size,
                "env_unset": sorted(removed),
                "version": version,
            },
            separators=(",", ":"),
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
