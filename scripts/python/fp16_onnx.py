"""Writes an ONNX model's FP16 variant (weights and activations in half precision, inputs and outputs
as they were) with ONNX Runtime's converter: for GPUs with tensor cores (compute capability 7.0+),
where `kotae doctor` recommends FP16. Deterministic: setup pins the output's SHA-256.

Usage: fp16_onnx.py INPUT.onnx OUTPUT.onnx
"""

import sys

import onnx
from onnxruntime.transformers.float16 import convert_float_to_float16


def main():
    source, target = sys.argv[1], sys.argv[2]
    onnx.save(convert_float_to_float16(onnx.load(source), keep_io_types=True), target)


if __name__ == "__main__":
    main()
