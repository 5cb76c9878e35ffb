"""A cross-encoder of the shape of cross-encoder/ms-marco-MiniLM-L-6-v2 for timing reranking on the
GPU machine, where no cross-encoder can travel (no room in the pack, no network): the carried
MiniLM-L6 encoder weights (6 layers, hidden 384, 12 heads, the same architecture) with its pooler,
plus a seeded random one-label classifier. Its scores rank nothing; the work per pair is exactly a
real MiniLM-L6 cross-encoder's. Written as a Hugging Face BertForSequenceClassification folder (what
sentence-transformers' CrossEncoder loads) whose model.safetensors Kotae's native encoder also loads.
numpy only.

Usage: cross_encoder_weights.py ST_MODEL_DIR OUT_DIR
"""

import json
import shutil
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "python"))
from bert_safetensors import read_safetensors, write_safetensors  # noqa: E402


def main():
    src, out = Path(sys.argv[1]), Path(sys.argv[2])
    tensors = read_safetensors(str(src / "model.safetensors"))
    weights = {
        ("bert." + name if not name.startswith("bert.") else name): value.astype(np.float32)
        for name, value in tensors.items()
        if value.dtype.kind == "f"
    }
    if "bert.pooler.dense.weight" not in weights:
        sys.exit(f"{src} has no pooler weights")
    hidden = weights["bert.embeddings.word_embeddings.weight"].shape[1]
    rng = np.random.default_rng(20261204)
    weights["classifier.weight"] = (rng.standard_normal((1, hidden)) / np.sqrt(hidden)).astype(np.float32)
    weights["classifier.bias"] = np.zeros(1, dtype=np.float32)
    out.mkdir(parents=True, exist_ok=True)
    write_safetensors(out / "model.safetensors", weights)
    config = json.loads((src / "config.json").read_text())
    config.update(
        {
            "architectures": ["BertForSequenceClassification"],
            "num_labels": 1,
            "id2label": {"0": "LABEL_0"},
            "label2id": {"LABEL_0": 0},
        }
    )
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"):
        if (src / name).exists():
            shutil.copy(src / name, out / name)
    print(
        json.dumps(
            {
                "name": "cross_encoder_weights",
                "tensors": len(weights),
                "hidden": hidden,
                "note": "MiniLM-L6 encoder weights + seeded random classifier: for timing only",
            }
        )
    )


if __name__ == "__main__":
    main()
