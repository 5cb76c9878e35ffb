"""Writes a sentence-transformers folder's model.safetensors as FP16 (half the bytes, so the GPU
benchmark's carried folder stays under its size limit), and checks that these are the weights Kotae's
ONNX model holds: the word embeddings must match the ONNX initializer exactly.

The safetensors format is read and written by scripts/python/bert_safetensors.py: no safetensors or
torch package is needed on the machine that packs.

Usage: fp16_weights.py MODEL_DIR OUT_DIR KOTAE_MODEL.onnx
"""

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "python"))
from bert_safetensors import read_safetensors, write_safetensors  # noqa: E402


def main():
    src, out, onnx_path = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    tensors = read_safetensors(str(src / "model.safetensors"))
    words = next(v for k, v in tensors.items() if k.endswith("word_embeddings.weight"))
    graph = onnx.load(str(onnx_path)).graph
    same = [
        i.name
        for i in graph.initializer
        if tuple(i.dims) == words.shape and np.array_equal(numpy_helper.to_array(i), words.astype(np.float32))
    ]
    if not same:
        sys.exit("the sentence-transformers weights are not the ONNX model's (word embeddings differ)")
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(
        src, out, ignore=shutil.ignore_patterns("model.safetensors", "README.md", ".gitattributes", "data_config.json")
    )
    write_safetensors(out / "model.safetensors", tensors)
    print(
        json.dumps(
            {
                "tensors": len(tensors),
                "matches_onnx_initializer": same[0],
                "bytes": (out / "model.safetensors").stat().st_size,
            }
        )
    )


if __name__ == "__main__":
    main()
