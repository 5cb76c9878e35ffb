#!/usr/bin/env python3
"""Peer "fastembed": Qdrant's fastembed (ONNX Runtime + `tokenizers`, numpy pooling) on Kotae's own
model files. The model is registered as a custom model (TextEmbedding.add_custom_model: mean
pooling, L2 normalisation, 384 dimensions) and loaded with specific_model_path = a folder built at
run time in a temporary directory (symlinks to the input's model.onnx and tokenizer.json plus a
tokenizer_config.json with model_max_length 256, which fastembed takes as its truncation length; it
always pads to the batch's longest), with local_files_only and HF_HUB_OFFLINE=1, so nothing is
fetched. threads = settings.threads (fastembed sets intra- and inter-op threads to it, graph
optimisation ALL), providers = CPUExecutionProvider, embed(batch_size = settings.batch_size,
parallel=None: one process). rerank50: TextCrossEncoder, registered and loaded the same way
(model_max_length 512; fastembed truncates pairs longest_first, not only_second).

Usage: fastembed_peer.py --inputs INPUTS.json [--precision fp32,int8] [--cases ...] [--dump FILE]
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as c  # noqa: E402

IMPL = "fastembed"
TOKENIZER_CONFIG = {
    "tokenizer_class": "BertTokenizer",
    "do_lower_case": True,
    "model_max_length": c.MAX_LENGTH,
    "cls_token": "[CLS]",
    "sep_token": "[SEP]",
    "pad_token": "[PAD]",
    "unk_token": "[UNK]",
    "mask_token": "[MASK]",
}


def model_folder(root: str, model_dir: str, name: str) -> str:
    out = os.path.join(root, name)
    os.makedirs(out)
    for f in ("model.onnx", "tokenizer.json"):
        os.symlink(os.path.abspath(os.path.join(model_dir, f)), os.path.join(out, f))
    with open(os.path.join(out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(TOKENIZER_CONFIG, f)
    return out


def main() -> int:
    args = c.parse_args(__doc__.split("\n\n")[0])
    inputs = c.load_inputs(args.inputs)
    s = inputs["settings"]
    threads = int(s["threads"])
    c.set_thread_env(threads)

    try:
        import fastembed
        import numpy as np
        import onnxruntime as ort
        from fastembed import TextEmbedding
        from fastembed.common.model_description import ModelSource, PoolingType
    except ImportError as exc:
        for p in args.precisions:
            c.skipped(IMPL, f"{p} embedding", f"fastembed is not installed: {exc}")
        return 0

    version = f"fastembed {fastembed.__version__}, onnxruntime {ort.__version__}, numpy {np.__version__}"
    c.log(
        f"[{IMPL}] {version}; threads={threads} (intra- and inter-op), CPUExecutionProvider, "
        f"batch_size={s['batch_size']}, parallel=None"
    )
    common = {"version": version, "threads": threads, "same_files": True}
    dump = c.Dump(args.dump, IMPL)
    query, chunks = inputs["query"], inputs["chunks"]
    bs = int(s["batch_size"])
    root = tempfile.mkdtemp(prefix="kotae-fastembed-")
    try:
        for precision in args.precisions:
            model_dir = inputs["models"].get(precision)
            if not model_dir:
                c.skipped(IMPL, f"{precision} embedding", "no model directory in the input file", version)
                continue
            name = f"kotae-local/all-minilm-l6-v2-{precision}"
            model = None

            def load():
                nonlocal model
                # The source is never consulted: specific_model_path wins and local_files_only forbids
                # any download; fastembed only insists that a model description names one.
                TextEmbedding.add_custom_model(
                    model=name,
                    pooling=PoolingType.MEAN,
                    normalization=True,
                    sources=ModelSource(hf=name),
                    dim=384,
                    model_file="model.onnx",
                    output_name="last_hidden_state",
                )
                model = TextEmbedding(
                    model_name=name,
                    threads=threads,
                    providers=["CPUExecutionProvider"],
                    local_files_only=True,
                    specific_model_path=model_folder(root, model_dir, precision),
                )

            if not c.guarded(IMPL, f"{precision} load", load, version):
                continue
            embed = lambda texts: np.stack(list(model.embed(list(texts), batch_size=bs)))  # noqa: E731
            if "single_query" in args.case_list:
                c.guarded(
                    IMPL,
                    f"single_query {precision}",
                    lambda: c.emit(
                        {
                            "case": "single_query",
                            "impl": IMPL,
                            "precision": precision,
                            **c.time_single(
                                lambda: list(model.query_embed(query)), int(s["warmup"]), int(s["single_runs"])
                            ),
                            **common,
                        }
                    ),
                    version,
                )
            if "bulk" in args.case_list:

                def bulk():
                    seconds = c.time_bulk(embed, chunks, len(chunks), int(s["bulk_repeats"]))
                    tokens = c.count_tokens(os.path.join(model_dir, "tokenizer.json"), chunks)
                    c.emit(c.bulk_record(IMPL, precision, chunks, seconds, tokens, batch_size=bs, **common))

                c.guarded(IMPL, f"bulk {precision}", bulk, version)
            c.guarded(IMPL, f"dump {precision}", lambda: dump.add(precision, embed, query, chunks), version)
            model = None  # frees it before the next precision loads
    finally:
        shutil.rmtree(root, ignore_errors=True)

    if "rerank50" in args.case_list:
        cross, rerank = inputs["models"].get("cross_encoder"), inputs.get("rerank")
        if not cross:
            c.skipped(IMPL, "rerank50", "no cross-encoder directory in the input file", version)
        elif not rerank:
            c.skipped(IMPL, "rerank50", "no rerank query and passages in the input file", version)
        else:

            def run_rerank():
                from fastembed.rerank.cross_encoder import TextCrossEncoder

                name = "kotae-local/cross-encoder"
                TextCrossEncoder.add_custom_model(model=name, sources=ModelSource(hf=name), model_file="model.onnx")
                folder = os.path.join(root, "cross-encoder")
                os.makedirs(folder)
                for f in ("model.onnx", "tokenizer.json"):
                    os.symlink(os.path.abspath(os.path.join(cross, f)), os.path.join(folder, f))
                with open(os.path.join(folder, "tokenizer_config.json"), "w", encoding="utf-8") as f:
                    json.dump({**TOKENIZER_CONFIG, "model_max_length": c.RERANK_MAX_LENGTH}, f)
                ce = TextCrossEncoder(
                    model_name=name,
                    threads=threads,
                    providers=["CPUExecutionProvider"],
                    local_files_only=True,
                    specific_model_path=folder,
                )
                q, passages = rerank["query"], list(rerank["passages"])
                stats = c.time_single(
                    lambda: list(ce.rerank(q, passages, batch_size=bs)), c.RERANK_WARMUP, int(s["rerank_runs"])
                )
                # fastembed truncates pairs longest_first (not only_second) at model_max_length.
                c.emit(
                    {
                        "case": "rerank50",
                        "impl": IMPL,
                        "precision": "fp32",
                        "passages": len(passages),
                        "batch_size": bs,
                        "truncation": "longest_first",
                        **stats,
                        **common,
                    }
                )
                if args.dump:
                    dump.data["rerank_scores"] = [float(x) for x in ce.rerank(q, passages, batch_size=bs)]

            root = tempfile.mkdtemp(prefix="kotae-fastembed-")
            try:
                c.guarded(IMPL, "rerank50", run_rerank, version)
            finally:
                shutil.rmtree(root, ignore_errors=True)
    dump.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
