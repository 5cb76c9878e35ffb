#!/usr/bin/env python3
"""Embeds documentation sentences with ONNX Runtime's Python API and Hugging Face `tokenizers`, for
tests/model/encoder_parity_test.

    make_encoder_reference.py OUT.jsonl [--models DIR]

DIR defaults to the installed models, found as the kotae binary finds them ($KOTAE_DATA, else
$XDG_DATA_HOME/kotae, else ~/.local/share/kotae; then models/). For each of all-minilm-l6-v2 (fp32) and
all-minilm-l6-v2-int8, on the CPU: tokenise with the model's tokenizer.json (truncation at the
manifest's max_length, no padding), run model.onnx one sentence at a time (the int8 model quantises
activations with one scale per tensor, so a batch would move each row), mean-pool last_hidden_state
over the attention mask, L2-normalise. One JSON object a line: a header (models, their SHA-256,
dimension, max_length), then per sentence its text, source, token count and one vector per model.
"""

import argparse
import concurrent.futures
import hashlib
import json
import pathlib
import sys

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import corpus  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts/python"))
import kotae_paths  # noqa: E402

MODELS = ["all-minilm-l6-v2", "all-minilm-l6-v2-int8"]
LONG_PASSAGES = 25  # documentation passages past 256 tokens: truncation is part of what is compared
EVERY_NTH_TEXT = 21  # of the documentation texts: about 1,000 sentences, table rows and paragraphs
EVERY_NTH_EDGE = 10  # of the Unicode edge cases
THREADS = 1  # a sentence at a time is too little work to share out


def default_models():
    return kotae_paths.models_dir()


def sentences():
    docs = corpus.documentation_texts()
    short = [t for t in docs if len(t) <= 2500]
    chosen = [(t, "doc") for t in short[::EVERY_NTH_TEXT]]
    chosen += [(t, "doc-long") for t in corpus.long_documentation_texts(LONG_PASSAGES)]
    chosen += [(t, "edge") for t in corpus.edge_cases()[::EVERY_NTH_EDGE]]
    return chosen


class Embedder:
    def __init__(self, model_dir):
        manifest = json.loads((model_dir / "manifest.json").read_text())
        assert manifest["pooling"] == "mean" and manifest["normalize"], manifest
        self.max_length = manifest["max_length"]
        self.output = manifest["output"]
        files = {f["role"]: f for f in manifest["files"]}
        self.onnx = model_dir / files["onnx"]["path"]
        self.tokenizer = Tokenizer.from_file(str(model_dir / files["tokenizer"]["path"]))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_length, strategy="longest_first")
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = THREADS
        self.session = ort.InferenceSession(str(self.onnx), options, providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.session.get_inputs()]

    def sha256(self):
        return hashlib.sha256(self.onnx.read_bytes()).hexdigest()

    def embed(self, text):
        e = self.tokenizer.encode(text)
        feeds = {
            "input_ids": np.array([e.ids], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids], dtype=np.int64),
        }
        (states,) = self.session.run([self.output], {name: feeds[name] for name in self.inputs})
        mask = feeds["attention_mask"][0].astype(np.float32)[:, None]
        pooled = (states[0] * mask).sum(axis=0) / mask.sum()
        return pooled / np.linalg.norm(pooled), len(e.ids)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--models", type=pathlib.Path, default=default_models())
    args = parser.parse_args()

    embedders = {name: Embedder(args.models / name) for name in MODELS}
    texts = sentences()
    # One thread per model (ONNX Runtime lets go of the GIL while it runs).
    with concurrent.futures.ThreadPoolExecutor(len(MODELS)) as pool:
        futures = {name: pool.submit(lambda e: [e.embed(t) for t, _ in texts], e) for name, e in embedders.items()}
        results = {name: f.result() for name, f in futures.items()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as out:
        header = {
            "kind": "header",
            "onnxruntime": ort.__version__,
            "max_length": embedders[MODELS[0]].max_length,
            "models": {name: {"onnx": str(e.onnx), "sha256": e.sha256()} for name, e in embedders.items()},
        }
        out.write(json.dumps(header) + "\n")
        for i, (text, source) in enumerate(texts):
            record = {"kind": "sentence", "source": source, "text": text, "tokens": results[MODELS[0]][i][1]}
            for name in MODELS:
                record[name] = [float(f"{x:.8g}") for x in results[name][i][0]]
            out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
    tmp.replace(args.out)
    counts = {s: sum(1 for _, src in texts if src == s) for s in ("doc", "doc-long", "edge")}
    print(f"{args.out}: {len(texts)} sentences {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
