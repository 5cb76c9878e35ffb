"""Parity of the llama.cpp encoder (GGUF converted from the same weights) with sentence-transformers
in FP32: the cosine of each of the first 64 texts' vectors. Prints one JSON line.

Usage: parity.py MODEL_DIR TEXTS.txt VECTORS.f32 ENGINE
"""

import json
import sys

import numpy as np
import torch
from sentence_transformers import SentenceTransformer

model_dir, texts_file, vectors_file, engine = sys.argv[1:5]
texts = open(texts_file, encoding="utf-8").read().split("\n")[:64]
theirs = np.fromfile(vectors_file, dtype=np.float32).reshape(64, -1)
model = SentenceTransformer(model_dir, device="cuda" if torch.cuda.is_available() else "cpu").float()
ours = model.encode(texts, batch_size=64, normalize_embeddings=True)
theirs = theirs / np.linalg.norm(theirs, axis=1, keepdims=True)
cosines = (ours * theirs).sum(axis=1)
print(
    json.dumps(
        {
            "name": "parity",
            "engine": engine,
            "reference": "sentence-transformers-fp32",
            "texts": len(texts),
            "min_cosine": float(cosines.min()),
            "mean_cosine": float(cosines.mean()),
        }
    )
)
