"""Derives a static INT8 variant of a fused BERT encoder (fuse_bert.py's output): weights quantised per
output channel (ONNX Runtime's quantiser: QAttention and MatMulInteger), and every activation that
enters an INT8 kernel quantised with a range calibrated once, here, instead of measured on every
batch. The calibration texts are RAG-shaped and committed with the repository: chunks of the
documentation in examples/docs and the questions of its FAQ.

Deterministic on every machine: the ranges are rounded outwards to a grid of 2^(1/32) steps, far
coarser than the last-bit differences between CPUs' float arithmetic, so setup can pin the output's
SHA-256 like a download.

Usage: static_int8.py FUSED.onnx TOKENIZER.json OUTPUT.onnx --examples DIR [--max-length 256]
"""

import argparse
import html
import logging
import math
import pathlib
import re
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper
import onnxruntime as ort
from onnxruntime.quantization import QuantType, quantize_dynamic
from tokenizers import Tokenizer

GRID_STEPS = 32  # per octave: ranges grow by at most 2.2%
CHUNK_WORDS = 150  # about 200 tokens, the size of the chunker's chunks


def plain_text(path):
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".html":
        text = re.sub(r"(?s)<(script|style).*?</\1>", " ", text)
        text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    return re.sub(r"\s+", " ", text).strip()


def calibration_texts(examples):
    """Chunks of every HTML and Markdown document, and the FAQ's questions ("(12) Can I ...?")."""
    texts = []
    for path in sorted(examples.glob("*.html")) + sorted(examples.glob("*.md")):
        words = plain_text(path).split()
        texts += [" ".join(words[i : i + CHUNK_WORDS]) for i in range(0, len(words), CHUNK_WORDS)]
        texts += re.findall(r"\(\d+\) ([^?]{10,200}\?)", plain_text(path))
    return texts


def round_out(value):
    """The smallest 2^(k/GRID_STEPS) at least |value| (0 stays 0), with value's sign."""
    if value == 0:
        return 0.0
    return math.copysign(2.0 ** (math.ceil(math.log2(abs(value)) * GRID_STEPS) / GRID_STEPS), value)


def activation_ranges(fused, names, encodings):
    """(low, high) per tensor over the calibration texts, each run alone (no padding). The full range,
    not a percentile: BERT's few huge activations carry meaning, and clipping them costs far more
    (cosine to FP32 0.83 at the 99.99th percentile) than the resolution they take."""
    model = onnx.load(fused)
    model.graph.output.extend(onnx.ValueInfoProto(name=n) for n in names)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    seen = {n: [] for n in names}
    for ids in encodings:
        feed = {
            "input_ids": np.array([ids], np.int64),
            "attention_mask": np.ones((1, len(ids)), np.int64),
            "token_type_ids": np.zeros((1, len(ids)), np.int64),
        }
        for name, value in zip(names, session.run(names, feed)):
            seen[name].append(value.ravel())
    ranges = {}
    for name, values in seen.items():
        values = np.concatenate(values)
        ranges[name] = (round_out(min(float(values.min()), 0.0)), round_out(max(float(values.max()), 0.0)))
    return ranges


def fuse_integer_matmuls(nodes):
    """MatMulInteger -> Cast -> Mul(activation scale x weight scale) as one MatMulIntegerToFloat, the
    kernel ONNX Runtime fuses them into when the scale is measured per batch, and does not recognise
    once the activation's scale is a constant."""
    producer = {o: n for n in nodes for o in n.output}
    consumers = {}
    for n in nodes:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    dropped, fused = set(), {}
    for n in nodes:
        if n.op_type != "MatMulInteger":
            continue
        (cast,) = consumers[n.output[0]]
        (scale_mul,) = consumers[cast.output[0]]
        scales = producer[[i for i in scale_mul.input if i != cast.output[0]][0]]
        assert cast.op_type == "Cast" and scale_mul.op_type == "Mul" and scales.op_type == "Mul"
        a, b, a_zero_point, b_zero_point = n.input
        a_scale, b_scale = scales.input
        fused[n.name] = helper.make_node(
            "MatMulIntegerToFloat",
            [a, b, a_scale, b_scale, a_zero_point, b_zero_point],
            [scale_mul.output[0]],
            name=n.name,
            domain="com.microsoft",
        )
        dropped |= {cast.name, scale_mul.name}
        if len(consumers[scales.output[0]]) == 1:
            dropped.add(scales.name)
    return [fused.get(n.name, n) for n in nodes if n.name not in dropped]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("fused")
    parser.add_argument("tokenizer")
    parser.add_argument("output")
    parser.add_argument("--examples", type=pathlib.Path, required=True)
    parser.add_argument("--max-length", type=int, default=256)
    args = parser.parse_args()
    logging.getLogger().setLevel(logging.ERROR)  # the quantiser's advice to pre-process: not for BERT

    with tempfile.TemporaryDirectory() as tmp:
        dynamic = pathlib.Path(tmp) / "dynamic.onnx"
        quantize_dynamic(
            args.fused,
            dynamic,
            per_channel=True,
            weight_type=QuantType.QInt8,
            op_types_to_quantize=["MatMul", "Attention"],
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
        model = onnx.load(dynamic)

    tokenizer = Tokenizer.from_file(args.tokenizer)
    tokenizer.no_padding()
    tokenizer.enable_truncation(args.max_length)
    encodings = [tokenizer.encode(t).ids for t in calibration_texts(args.examples)]
    dynamic_nodes = [n for n in model.graph.node if n.op_type == "DynamicQuantizeLinear"]
    ranges = activation_ranges(args.fused, [n.input[0] for n in dynamic_nodes], encodings)

    # DynamicQuantizeLinear(x) -> (y, scale, zero point) becomes QuantizeLinear(x, scale, zero point)
    # with the calibrated range's constants: uint8, asymmetric, as ONNX Runtime's kernels expect.
    nodes = []
    for node in model.graph.node:
        if node.op_type != "DynamicQuantizeLinear":
            nodes.append(node)
            continue
        low, high = ranges[node.input[0]]
        scale = np.float32((high - low) / 255.0)
        zero_point = np.uint8(min(255, max(0, round(-low / scale))))
        y, y_scale, y_zero_point = node.output
        model.graph.initializer.extend(
            [
                numpy_helper.from_array(np.array(scale, np.float32), y_scale),
                numpy_helper.from_array(np.array(zero_point, np.uint8), y_zero_point),
            ]
        )
        nodes.append(helper.make_node("QuantizeLinear", [node.input[0], y_scale, y_zero_point], [y], name=node.name))
    del model.graph.node[:]
    model.graph.node.extend(fuse_integer_matmuls(nodes))
    onnx.checker.check_model(model)
    onnx.save(model, args.output)
    print(f"{len(dynamic_nodes)} activations calibrated on {len(encodings)} texts")


if __name__ == "__main__":
    main()
