"""Writes a sentence-transformers folder's model.safetensors as FP16 (half the bytes, so the GPU
benchmark's carried folder stays under its size limit), and checks that these are the weights Kotae's
ONNX model holds: the word embeddings must match the ONNX initializer exactly.

The safetensors format is read and written directly (8-byte header length, JSON header, raw data):
no safetensors or torch package is needed on the machine that packs.

Usage: fp16_weights.py MODEL_DIR OUT_DIR KOTAE_MODEL.onnx
"""
import json
import shutil
import struct
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper


def read_safetensors(path):
    data = path.read_bytes()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    body = memoryview(data)[8 + size:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = {"F32": "<f4", "I64": "<i8"}[info["dtype"]]
        start, end = info["data_offsets"]
        tensors[name] = np.frombuffer(body[start:end], dtype=dtype).reshape(info["shape"])
    return tensors


def write_safetensors(path, tensors):
    header, chunks, offset = {}, [], 0
    for name in sorted(tensors):
        tensor = tensors[name]
        floating = tensor.dtype.kind == "f"  # position ids stay integers
        raw = (tensor.astype("<f2") if floating else tensor).tobytes()
        header[name] = {"dtype": "F16" if floating else "I64", "shape": list(tensors[name].shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    encoded = json.dumps(header, separators=(",", ":")).encode()
    encoded += b" " * (-len(encoded) % 8)
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(encoded)))
        out.write(encoded)
        for chunk in chunks:
            out.write(chunk)


def main():
    src, out, onnx_path = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    tensors = read_safetensors(src / "model.safetensors")
    words = next(v for k, v in tensors.items() if k.endswith("word_embeddings.weight"))
    graph = onnx.load(str(onnx_path)).graph
    same = [i.name for i in graph.initializer if tuple(i.dims) == words.shape
            and np.array_equal(numpy_helper.to_array(i), words)]
    if not same:
        sys.exit("the sentence-transformers weights are not the ONNX model's (word embeddings differ)")
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(src, out, ignore=shutil.ignore_patterns("model.safetensors", "README.md", ".gitattributes", "data_config.json"))
    write_safetensors(out / "model.safetensors", tensors)
    print(json.dumps({"tensors": len(tensors), "matches_onnx_initializer": same[0],
                      "bytes": (out / "model.safetensors").stat().st_size}))


if __name__ == "__main__":
    main()
