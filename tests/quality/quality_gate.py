#!/usr/bin/env python3
"""The quality gate: the default pipeline's retrieval on the golden set must not fall below its floor.

usage: quality_gate.py KOTAE_BINARY FLOOR.json WORK_DIR

Builds the golden set (the Debian FAQ in BEIR layout, bench/make_debian_faq_beir.py, from the
debian-faq and debian-reference-en packages scripts/setup installs), indexes it with the default
embedder and chunking into a fresh data folder (the installed models linked in) and runs
`kotae eval --json` with the default search settings: in FP32, and as the CPU chooses by default
(the static INT8 variant where it has VNNI). Fails when nDCG@10 or recall@10 of any mode is more than
the floor's tolerance below its precision's floor, or when bench/fusion_replay.py, which replays
fusion settings offline, no longer ranks the run exactly as `kotae eval` did. A change to a model,
chunking or fusion default updates FLOOR.json in the same commit, with the reason in its "why".
"""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    binary, floor_file, work = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(floor_file) as f:
        floor = json.load(f)
    subprocess.run(["rm", "-rf", work], check=True)
    os.makedirs(os.path.join(work, "data"))
    data_home = os.environ.get("KOTAE_DATA") or os.path.join(
        os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share"), "kotae"
    )
    os.symlink(os.path.join(data_home, "models"), os.path.join(work, "data", "models"))
    dataset = os.path.join(work, "golden")
    subprocess.run(
        [sys.executable, os.path.join(ROOT, "bench", "make_debian_faq_beir.py"), dataset],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    failures = []
    evaluated = set()
    for choice in ("fp32", "auto"):
        runs = os.path.join(work, f"runs-{choice}.jsonl")
        out = subprocess.run(
            [binary, "eval", "--dataset", dataset, "--data", os.path.join(work, "data"), "--json", "--runs", runs],
            check=True,
            capture_output=True,
            text=True,
            env={**os.environ, "KOTAE_PRECISION": choice},
        ).stdout
        rows = {row["mode"]: row for row in map(json.loads, out.splitlines())}
        precision = next(iter(rows.values()))["precision"]
        if precision in evaluated:
            continue  # this CPU runs FP32 by default
        evaluated.add(precision)
        # The offline replay that chose the fusion must still rank exactly as kotae does.
        replay = subprocess.run(
            [sys.executable, os.path.join(ROOT, "bench", "fusion_replay.py"), "check", dataset, runs],
            capture_output=True,
            text=True,
        )
        print(replay.stdout, end="")
        if replay.returncode != 0:
            failures.append(f"{precision}: {replay.stderr.strip()}")
        for mode, bounds in floor["precisions"][precision].items():
            row = rows.get(mode)
            if row is None:
                failures.append(f"{precision} {mode}: not evaluated")
                continue
            for metric, lowest in bounds.items():
                got = row[metric]
                verdict = "ok" if got >= lowest - floor["tolerance"] else "BELOW THE FLOOR"
                print(f"{precision} {mode:7} {metric:10} {got:.4f} (floor {lowest:.4f}) {verdict}")
                if verdict != "ok":
                    failures.append(
                        f"{precision} {mode} {metric} {got:.4f} < floor {lowest:.4f} - {floor['tolerance']}"
                    )
    if failures:
        sys.exit(
            "quality gate failed: "
            + "; ".join(failures)
            + " (a deliberate change updates tests/quality/floor.json with the reason)"
        )
    subprocess.run(["rm", "-rf", work], check=True)


if __name__ == "__main__":
    main()
