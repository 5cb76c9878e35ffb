#!/usr/bin/env python3
"""Scores fixed (query, passage) pairs with ONNX Runtime's Python API, as the C++ CrossEncoder must.

    make_cross_encoder_reference.py MODEL_DIR OUT.json

MODEL_DIR holds a cross-encoder as Kotae loads it (manifest.json, model.onnx, tokenizer.json), e.g.
the one scripts/python/make_test_cross_encoder.py writes. Tokenisation is Hugging Face `tokenizers`
on the same tokenizer.json with the same truncation as the C++ side: the query stays whole and only
the passage is cut, by tokens (`only_second`); when the query alone leaves no room for a passage
token, `longest_first`. Each pair runs alone (batch of one), so the reference owes nothing to the
C++ side's batching. OUT.json keeps the texts, the token ids, the strategy used and the raw logit.
"""

import json
import pathlib
import sys

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

# Long texts are built from these so that a passage runs far past 512 tokens (about 1,400).
UPGRADE = (
    "Before upgrading Debian to the next stable release, read the release notes, back up /etc and your "
    "home directories, and make sure the current system is fully up to date with apt update and apt "
    "full-upgrade. Then replace the codename in /etc/apt/sources.list and every file below "
    "/etc/apt/sources.list.d, run apt update again, and perform a minimal upgrade first with "
    "apt upgrade --without-new-pkgs before the full upgrade. Reboot into the new kernel, check that "
    "services came back, and remove obsolete packages with apt autoremove. "
)
KITCHEN = (
    "Whisk two eggs with a pinch of salt, fold in 200 g of flour and enough milk for a smooth batter, "
    "then let it rest for half an hour; a hot, lightly buttered pan gives the thinnest crêpes. "
)
LONG_PASSAGE = " ".join([UPGRADE, KITCHEN] * 9)
LONG_QUERY = (
    "Why does my system fail after I "
    + " and then ".join(
        ["edited sources.list", "ran apt full-upgrade", "rebooted into the new kernel", "removed old packages"] * 40
    )
    + "?"
)
# A query that nearly fills the window: only_second leaves the passage a handful of tokens.
NEAR_LIMIT_QUERY = " ".join([UPGRADE] * 4)

CASES = [
    {
        "query": "How do I upgrade Debian to the next stable release?",
        "passages": [
            "The recipe needs two eggs, flour and a pinch of salt.",
            UPGRADE,
            LONG_PASSAGE,
            "",
            "Debian upgrades: edit sources.list, then run apt full-upgrade.",
            "Zürich's café serves crème brûlée; 東京の天気は晴れです。 naïve résumé — “quoted” ☕ 🙂",
        ],
    },
    {
        "query": "Qu'est-ce qu'un café crème à Zürich ? 東京 ☕",
        "passages": [
            "Un café crème est un expresso allongé avec de la crème ou du lait chaud, servi en tasse.",
            LONG_PASSAGE,
            "Der Zürichsee liegt südöstlich der Stadt Zürich.",
        ],
    },
    {"query": LONG_QUERY, "passages": ["apt full-upgrade failed with a dependency error.", LONG_PASSAGE, ""]},
    {
        "query": NEAR_LIMIT_QUERY,
        "passages": ["Short passage.", LONG_PASSAGE, "One more sentence about apt and the new kernel."],
    },
    {"query": "", "passages": ["An empty query still scores a passage.", ""]},
]


def encode(tokenizer: Tokenizer, max_length: int, query: str, passage: str):
    tokenizer.enable_truncation(max_length, strategy="only_second")
    try:
        return tokenizer.encode(query, passage), "only_second"
    except Exception as error:  # tokenizers raises a bare Exception when the query leaves no room
        if "Truncation error" not in str(error):
            raise
    tokenizer.enable_truncation(max_length, strategy="longest_first")
    return tokenizer.encode(query, passage), "longest_first"


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    model_dir, out_path = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    manifest = json.loads((model_dir / "manifest.json").read_text(encoding="utf-8"))
    files = {f["role"]: model_dir / f["path"] for f in manifest["files"]}
    max_length = int(manifest["max_length"])
    output = manifest["output"]

    tokenizer = Tokenizer.from_file(str(files["tokenizer"]))
    tokenizer.no_padding()  # the file may ask for fixed padding; the C++ side pads per batch
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(str(files["onnx"]), options, providers=["CPUExecutionProvider"])
    input_names = [i.name for i in session.get_inputs()]

    cases = []
    for case in CASES:
        rows = {
            "query": case["query"],
            "passages": case["passages"],
            "strategy": [],
            "ids": [],
            "type_ids": [],
            "scores": [],
        }
        for passage in case["passages"]:
            encoding, strategy = encode(tokenizer, max_length, case["query"], passage)
            tensors = {
                "input_ids": np.array([encoding.ids], dtype=np.int64),
                "attention_mask": np.array([encoding.attention_mask], dtype=np.int64),
                "token_type_ids": np.array([encoding.type_ids], dtype=np.int64),
            }
            (logits,) = session.run([output], {name: tensors[name] for name in input_names})
            if logits.ndim != 2 or logits.shape[0] != 1 or logits.shape[1] not in (1, 2):
                raise SystemExit(f"{files['onnx']}: output '{output}' has shape {logits.shape}, not [batch, 1|2]")
            # The C++ scores: the logit for one label, the log-odds of the last label for two.
            score = logits[0, 0] if logits.shape[1] == 1 else logits[0, 1] - logits[0, 0]
            rows["strategy"].append(strategy)
            rows["ids"].append(encoding.ids)
            rows["type_ids"].append(encoding.type_ids)
            rows["scores"].append(float(score))
        cases.append(rows)

    out_path.parent.mkdir(parents=True, exist_ok=True)
    reference = {"model": manifest["name"], "max_length": max_length, "output": output, "cases": cases}
    out_path.write_text(json.dumps(reference, ensure_ascii=False) + "\n", encoding="utf-8")
    lengths = [len(ids) for case in cases for ids in case["ids"]]
    strategies = sorted({s for case in cases for s in case["strategy"]})
    print(f"wrote {out_path}: {len(lengths)} pairs, {min(lengths)}..{max(lengths)} tokens, strategies {strategies}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
