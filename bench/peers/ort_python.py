#!/usr/bin/env python3
"""Peer "onnxruntime-python": the raw baseline a careful user writes by hand. ONNX Runtime's Python
API on the same model.onnx (graph optimisation ALL, intra-op threads = settings.threads, sequential
execution), the `tokenizers` library on the same tokenizer.json (its fixed padding to 128 replaced by
padding to the batch's longest, truncation at 256), mean pooling over the attention mask and L2
normalisation in numpy. fp32 and int8; rerank50 when the input names a cross-encoder directory
(pairs, truncation only_second at 512, output `logits`).

Usage: ort_python.py --inputs INPUTS.json [--precision fp32,int8] [--cases ...] [--dump FILE]
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as c  # noqa: E402

IMPL = "onnxruntime-python"


def make_session(ort, model_path: str, threads: int):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(model_path, sess_options=so, providers=["CPUExecutionProvider"])


class Embedder:
    def __init__(self, ort, np, model_dir: str, threads: int):
        from tokenizers import Tokenizer

        self.np = np
        self.session = make_session(ort, os.path.join(model_dir, "model.onnx"), threads)
        self.input_names = {i.name for i in self.session.get_inputs()}
        self.tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
        self.tokenizer.enable_truncation(c.MAX_LENGTH)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the batch's longest

    def feeds(self, encodings):
        np = self.np
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.input_names:
            feeds["token_type_ids"] = np.array([e.type_ids for e in encodings], dtype=np.int64)
        return feeds, mask

    def __call__(self, texts):
        np = self.np
        encodings = self.tokenizer.encode_batch(list(texts))
        feeds, mask = self.feeds(encodings)
        hidden = self.session.run(["last_hidden_state"], feeds)[0]  # (batch, seq, 384)
        m = mask[:, :, None].astype(hidden.dtype)
        pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)


class Reranker:
    def __init__(self, ort, np, model_dir: str, threads: int):
        from tokenizers import Tokenizer

        self.np = np
        self.session = make_session(ort, os.path.join(model_dir, "model.onnx"), threads)
        self.input_names = {i.name for i in self.session.get_inputs()}
        outputs = [o.name for o in self.session.get_outputs()]
        self.output = "logits" if "logits" in outputs else outputs[0]
        self.tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
        self.tokenizer.enable_truncation(c.RERANK_MAX_LENGTH, strategy="only_second")
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

    def __call__(self, query, passages, batch_size):
        np = self.np
        scores = []
        for i in range(0, len(passages), batch_size):
            enc = self.tokenizer.encode_batch([(query, p) for p in passages[i : i + batch_size]])
            feeds = {
                "input_ids": np.array([e.ids for e in enc], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
            }
            if "token_type_ids" in self.input_names:
                feeds["token_type_ids"] = np.array([e.type_ids for e in enc], dtype=np.int64)
            logits = self.session.run([self.output], feeds)[0]
            scores.append(logits.reshape(len(enc), -1)[:, 0])
        return np.concatenate(scores)


def main() -> int:
    args = c.parse_args(__doc__.split("\n\n")[0])
    inputs = c.load_inputs(args.inputs)
    s = inputs["settings"]
    threads = int(s["threads"])
    c.set_thread_env(threads)

    import numpy as np
    import onnxruntime as ort
    import tokenizers

    version = f"onnxruntime {ort.__version__}, tokenizers {tokenizers.__version__}, numpy {np.__version__}"
    c.log(
        f"[{IMPL}] {version}; intra_op_num_threads={threads}, inter_op_num_threads=1, "
        f"graph_optimization_level=ORT_ENABLE_ALL, providers={ort.get_available_providers()}"
    )
    common = {"version": version, "threads": threads, "same_files": True}
    dump = c.Dump(args.dump, IMPL)

    for precision in args.precisions:
        model_dir = inputs["models"].get(precision)
        if not model_dir:
            c.skipped(IMPL, f"{precision} embedding", "no model directory in the input file", version)
            continue
        embedder = None

        def load():
            nonlocal embedder
            embedder = Embedder(ort, np, model_dir, threads)

        if not c.guarded(IMPL, f"{precision} load", load, version):
            continue
        query, chunks = inputs["query"], inputs["chunks"]
        if "single_query" in args.case_list:
            c.guarded(
                IMPL,
                f"single_query {precision}",
                lambda: c.emit(
                    {
                        "case": "single_query",
                        "impl": IMPL,
                        "precision": precision,
                        **c.time_single(lambda: embedder([query]), int(s["warmup"]), int(s["single_runs"])),
                        **common,
                    }
                ),
                version,
            )
        if "bulk" in args.case_list:

            def bulk():
                seconds = c.time_bulk(embedder, chunks, int(s["batch_size"]), int(s["bulk_repeats"]))
                tokens = c.count_tokens(os.path.join(model_dir, "tokenizer.json"), chunks)
                c.emit(
                    c.bulk_record(IMPL, precision, chunks, seconds, tokens, batch_size=int(s["batch_size"]), **common)
                )

            c.guarded(IMPL, f"bulk {precision}", bulk, version)
        c.guarded(IMPL, f"dump {precision}", lambda: dump.add(precision, embedder, query, chunks), version)
        embedder = None  # frees it before the next precision loads

    if "rerank50" in args.case_list:
        cross = inputs["models"].get("cross_encoder")
        rerank = inputs.get("rerank")
        if not cross:
            c.skipped(IMPL, "rerank50", "no cross-encoder directory in the input file", version)
        elif not rerank:
            c.skipped(IMPL, "rerank50", "no rerank query and passages in the input file", version)
        else:

            def run_rerank():
                reranker = Reranker(ort, np, cross, threads)
                passages = list(rerank["passages"])
                fn = lambda: reranker(rerank["query"], passages, int(s["batch_size"]))  # noqa: E731
                stats = c.time_single(fn, c.RERANK_WARMUP, int(s["rerank_runs"]))
                c.emit(
                    {
                        "case": "rerank50",
                        "impl": IMPL,
                        "precision": "fp32",
                        "passages": len(passages),
                        "batch_size": int(s["batch_size"]),
                        "truncation": "only_second",
                        **stats,
                        **common,
                    }
                )
                if args.dump:
                    dump.data["rerank_scores"] = [float(x) for x in fn()]

            c.guarded(IMPL, "rerank50", run_rerank, version)
    dump.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
