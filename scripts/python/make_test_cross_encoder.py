#!/usr/bin/env python3
"""Writes a tiny BERT cross-encoder with random (seeded) weights to OUT_DIR, for tests only.

    make_test_cross_encoder.py OUT_DIR [--seed N] [--labels 1|2] [--size tiny|minilm-l6] [--tokenizer PATH]

The graph is the one Hugging Face's BertForSequenceClassification exports to ONNX, only small:
word + position + token-type embeddings and LayerNorm, 2 encoder layers (hidden 32, 2 heads,
intermediate 64, exact GELU via Erf), attention masked with the attention mask as HF does, the pooler
(first token -> dense -> tanh) and a classifier giving `logits` [batch, labels] (1 by default, as
ms-marco cross-encoders; 2 for binary classifiers). The vocabulary size comes
from the tokenizer.json it copies (by default the installed all-MiniLM-L6-v2's, BERT uncased).

Writes model.onnx, model.safetensors (the same weights in FP32 under Hugging Face's names, torch's
[out, in] layout: what the native CUDA cross-encoder and its CPU reference load), tokenizer.json and
manifest.json (kind reranker, heads, sha256 and size of each file).
Its scores mean nothing: it exists to test code paths (tokenisation, truncation, batching, output
handling) against ONNX Runtime's Python API. Same seed and tokenizer -> byte-identical files.
"""

import argparse
import hashlib
import json
import pathlib
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kotae_paths  # noqa: E402

# hidden, heads, intermediate, layers. "tiny" tests code paths quickly; "minilm-l6" has the shape of
# cross-encoder/ms-marco-MiniLM-L-6-v2, so that benchmarks time a realistic amount of work.
SIZES = {"tiny": (32, 2, 64, 2), "minilm-l6": (384, 12, 1536, 6)}
MAX_POSITIONS = 512
TYPE_VOCAB = 2
LAYER_NORM_EPS = 1e-12
OPSET = 17  # first opset with LayerNormalization
IR_VERSION = 8  # opset 17's IR; old enough for every ONNX Runtime that knows opset 17


def default_tokenizer():
    return kotae_paths.data_dir() / "models/all-minilm-l6-v2/tokenizer.json"


class GraphBuilder:
    """Collects nodes and initializers; names every intermediate value uniquely."""

    def __init__(self, rng: np.random.Generator, hidden: int):
        self.rng = rng
        self.hidden = hidden
        self.nodes = []
        self.initializers = []
        self.count = 0

    def fresh(self, hint: str) -> str:
        self.count += 1
        return f"{hint}_{self.count}"

    def const(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(value, name))
        return name

    def weight(self, name: str, shape, scale: float) -> str:
        # Large enough that scores move with the input (HF's 0.02 would make every score the same).
        return self.const(name, (self.rng.standard_normal(shape) * scale).astype(np.float32))

    def op(self, op_type: str, inputs, hint: str = None, **attrs) -> str:
        out = self.fresh(hint or op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=out, **attrs))
        return out

    def dense(self, x: str, prefix: str, fan_in: int, fan_out: int) -> str:
        w = self.weight(f"{prefix}.weight", (fan_in, fan_out), 1.0 / np.sqrt(fan_in))
        b = self.weight(f"{prefix}.bias", (fan_out,), 0.1)
        return self.op("Add", [self.op("MatMul", [x, w]), b], hint=prefix)

    def layer_norm(self, x: str, prefix: str) -> str:
        gamma = self.const(f"{prefix}.weight", (1.0 + 0.1 * self.rng.standard_normal(self.hidden)).astype(np.float32))
        beta = self.weight(f"{prefix}.bias", (self.hidden,), 0.1)
        return self.op("LayerNormalization", [x, gamma, beta], hint=prefix, axis=-1, epsilon=LAYER_NORM_EPS)


def build_model(vocab_size: int, seed: int, labels: int, size: str = "tiny") -> onnx.ModelProto:
    HIDDEN, HEADS, INTERMEDIATE, LAYERS = SIZES[size]  # noqa: N806 (constants of this model)
    g = GraphBuilder(np.random.default_rng(seed), HIDDEN)
    head_dim = HIDDEN // HEADS

    # Embeddings: word + position (0..seq-1) + token type, then LayerNorm.
    words = g.op("Gather", [g.weight("embeddings.word_embeddings.weight", (vocab_size, HIDDEN), 1.0), "input_ids"])
    shape = g.op("Shape", ["input_ids"])
    seq_len = g.op("Gather", [shape, g.const("one_index", np.array(1, dtype=np.int64))], axis=0)
    positions = g.op(
        "Range",
        [g.const("zero_i64", np.array(0, dtype=np.int64)), seq_len, g.const("one_i64", np.array(1, dtype=np.int64))],
    )
    pos_emb = g.op(
        "Gather", [g.weight("embeddings.position_embeddings.weight", (MAX_POSITIONS, HIDDEN), 1.0), positions]
    )
    types = g.op(
        "Gather", [g.weight("embeddings.token_type_embeddings.weight", (TYPE_VOCAB, HIDDEN), 1.0), "token_type_ids"]
    )
    x = g.op("Add", [g.op("Add", [words, pos_emb]), types])
    x = g.layer_norm(x, "embeddings.LayerNorm")

    # Extended attention mask as HF builds it: (1 - mask) * float32 min, shaped [batch, 1, 1, seq].
    mask = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    mask = g.op("Sub", [g.const("one_f32", np.array(1.0, dtype=np.float32)), mask])
    mask = g.op("Mul", [mask, g.const("float_min", np.array(np.finfo(np.float32).min, dtype=np.float32))])
    mask = g.op("Unsqueeze", [mask, g.const("mask_axes", np.array([1, 2], dtype=np.int64))])

    split_heads = g.const("split_heads_shape", np.array([0, 0, HEADS, head_dim], dtype=np.int64))
    merge_heads = g.const("merge_heads_shape", np.array([0, 0, HIDDEN], dtype=np.int64))
    scale = g.const("attention_scale", np.array(1.0 / np.sqrt(head_dim), dtype=np.float32))
    for layer in range(LAYERS):
        p = f"encoder.layer.{layer}"

        def heads(name, perm):
            projected = g.dense(x, f"{p}.attention.self.{name}", HIDDEN, HIDDEN)
            return g.op("Transpose", [g.op("Reshape", [projected, split_heads])], perm=perm)

        q = heads("query", [0, 2, 1, 3])  # [batch, heads, seq, head_dim]
        k = heads("key", [0, 2, 3, 1])  # [batch, heads, head_dim, seq]
        v = heads("value", [0, 2, 1, 3])
        scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), scale]), mask])
        probs = g.op("Softmax", [scores], axis=-1)
        context = g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
        context = g.op("Reshape", [context, merge_heads])
        attended = g.dense(context, f"{p}.attention.output.dense", HIDDEN, HIDDEN)
        x = g.layer_norm(g.op("Add", [attended, x]), f"{p}.attention.output.LayerNorm")

        inner = g.dense(x, f"{p}.intermediate.dense", HIDDEN, INTERMEDIATE)
        # Exact GELU: x * 0.5 * (1 + erf(x / sqrt(2))).
        erf = g.op("Erf", [g.op("Div", [inner, g.const(f"{p}.sqrt2", np.array(np.sqrt(2.0), dtype=np.float32))])])
        gelu = g.op(
            "Mul",
            [
                g.op("Mul", [inner, g.op("Add", [erf, "one_f32"])]),
                g.const(f"{p}.half", np.array(0.5, dtype=np.float32)),
            ],
        )
        out = g.dense(gelu, f"{p}.output.dense", INTERMEDIATE, HIDDEN)
        x = g.layer_norm(g.op("Add", [out, x]), f"{p}.output.LayerNorm")

    # Pooler on the first ([CLS]) token, then the one-label classifier.
    first = g.op("Gather", [x, g.const("zero_index", np.array(0, dtype=np.int64))], axis=1)  # [batch, hidden]
    pooled = g.op("Tanh", [g.dense(first, "pooler.dense", HIDDEN, HIDDEN)])
    w = g.weight("classifier.weight", (HIDDEN, labels), 1.0 / np.sqrt(HIDDEN))
    b = g.weight("classifier.bias", (labels,), 0.1)
    g.nodes.append(helper.make_node("Gemm", [pooled, w, b], ["logits"], name="classifier"))

    def int_input(name):
        return helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])

    graph = helper.make_graph(
        g.nodes,
        "test_cross_encoder",
        [int_input("input_ids"), int_input("attention_mask"), int_input("token_type_ids")],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", labels])],
        initializer=g.initializers,
    )
    model = helper.make_model(
        graph,
        producer_name="kotae make_test_cross_encoder.py",
        opset_imports=[helper.make_opsetid("", OPSET)],
        ir_version=IR_VERSION,
    )
    onnx.checker.check_model(model, full_check=True)
    return model


def hf_weights(model: onnx.ModelProto) -> dict:
    """The model's weights as BertForSequenceClassification names them, Linear weights as [out, in]."""
    matmul_weights = {n.input[1] for n in model.graph.node if n.op_type in ("MatMul", "Gemm")}
    weights = {}
    for init in model.graph.initializer:
        if not (init.name.startswith(("embeddings.", "encoder.", "pooler.", "classifier."))):
            continue
        value = numpy_helper.to_array(init)
        if value.ndim == 0:  # the graph's own constants (sqrt 2, one half)
            continue
        weights[init.name] = value.T if init.name in matmul_weights else value
    return weights


def file_entry(path: pathlib.Path, role: str) -> dict:
    data = path.read_bytes()
    return {"path": path.name, "role": role, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=pathlib.Path)
    parser.add_argument("--seed", type=int, default=20240611)
    parser.add_argument("--labels", type=int, choices=(1, 2), default=1)
    parser.add_argument("--size", choices=sorted(SIZES), default="tiny")
    parser.add_argument(
        "--tokenizer",
        type=pathlib.Path,
        default=None,
        help="tokenizer.json to copy (default: the installed all-minilm-l6-v2's)",
    )
    args = parser.parse_args()
    tokenizer = args.tokenizer or default_tokenizer()
    if not tokenizer.is_file():
        print(f"no tokenizer at {tokenizer} (run scripts/setup, or pass --tokenizer)", file=sys.stderr)
        return 1
    vocab = json.loads(tokenizer.read_text(encoding="utf-8"))["model"]["vocab"]

    args.out_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(tokenizer, args.out_dir / "tokenizer.json")
    model = build_model(len(vocab), args.seed, args.labels, args.size)
    HIDDEN, HEADS, _, LAYERS = SIZES[args.size]  # noqa: N806
    (args.out_dir / "model.onnx").write_bytes(model.SerializeToString(deterministic=True))
    from bert_safetensors import write_safetensors

    write_safetensors(args.out_dir / "model.safetensors", hf_weights(model), float_type="<f4")

    manifest = {
        "format": 1,
        "name": "test-cross-encoder" if args.labels == 1 else f"test-cross-encoder-{args.labels}-labels",
        "kind": "reranker",
        "required": False,
        "description": f"{args.size} BERT cross-encoder (hidden {HIDDEN}, {LAYERS} layers, {HEADS} heads, {args.labels} "
        f"label{'s' if args.labels > 1 else ''}), random weights, "
        f"seed {args.seed}; written by scripts/python/make_test_cross_encoder.py",
        "license": "test-only, random weights",
        "precision": "fp32",
        "architecture": "bert",
        "pooling": "none",
        "normalize": False,
        "max_length": MAX_POSITIONS,
        "heads": HEADS,
        "inputs": ["input_ids", "attention_mask", "token_type_ids"],
        "output": "logits",
        "files": [
            file_entry(args.out_dir / "model.onnx", "onnx"),
            file_entry(args.out_dir / "model.safetensors", "safetensors"),
            file_entry(args.out_dir / "tokenizer.json", "tokenizer"),
        ],
    }
    (args.out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out_dir}: vocabulary {len(vocab)}, {len(model.graph.node)} nodes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
