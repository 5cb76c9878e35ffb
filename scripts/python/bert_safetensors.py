"""A BERT encoder's weights as FP16 safetensors, with Hugging Face's names: what Kotae's native CUDA
encoder (model/cuda) loads. From an ONNX export (setup: `"derive": {"tool": "bert-safetensors"}`):
named initializers are copied, and each MatMul's weight is named after the module its output comes
from ("/encoder/layer.0/attention/self/query/MatMul_output_0" -> "encoder.layer.0.attention.self.query
.weight") and transposed back to torch's [out, in]. The safetensors format is written directly
(8-byte header length, JSON header, raw data), names sorted, so the bytes are the same on every run.

Usage: bert_safetensors.py MODEL.onnx OUT.safetensors
"""

import json
import struct
import sys

import numpy as np


def write_safetensors(path, tensors, float_type="<f2"):
    """Floating tensors as F16 (or F32 with float_type "<f4"), integer ones as I64."""
    header, chunks, offset = {}, [], 0
    for name in sorted(tensors):
        tensor = tensors[name]
        floating = tensor.dtype.kind == "f"
        raw = np.ascontiguousarray(tensor.astype(float_type) if floating else tensor.astype("<i8")).tobytes()
        header[name] = {
            "dtype": {"<f2": "F16", "<f4": "F32"}[float_type] if floating else "I64",
            "shape": list(tensor.shape),
            "data_offsets": [offset, offset + len(raw)],
        }
        chunks.append(raw)
        offset += len(raw)
    encoded = json.dumps(header, separators=(",", ":")).encode()
    encoded += b" " * (-len(encoded) % 8)
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(encoded)))
        out.write(encoded)
        for chunk in chunks:
            out.write(chunk)


def read_safetensors(path):
    data = open(path, "rb").read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + size])
    body = memoryview(data)[8 + size :]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = {"F32": "<f4", "F16": "<f2", "I64": "<i8"}[info["dtype"]]
        start, end = info["data_offsets"]
        tensors[name] = np.frombuffer(body[start:end], dtype=dtype).reshape(info["shape"])
    return tensors


def weights_from_onnx(path):
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(path).graph
    initializers = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    tensors = {
        name: value for name, value in initializers.items() if not name.startswith("onnx::") and value.dtype.kind == "f"
    }
    for node in graph.node:
        if node.op_type != "MatMul" or node.input[1] not in initializers:
            continue
        module = node.output[0].strip("/").rsplit("/", 1)[0].replace("/", ".")
        tensors[module + ".weight"] = initializers[node.input[1]].T
    return tensors


def main():
    write_safetensors(sys.argv[2], weights_from_onnx(sys.argv[1]))


if __name__ == "__main__":
    main()
