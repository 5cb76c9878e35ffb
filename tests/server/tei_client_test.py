"""Kotae's TEI- and Cohere-style routes as their clients use them, against a real `kotae serve`:
huggingface_hub's InferenceClient embeds through POST /embed (pointed at that URL, as at a TEI
endpoint); /rerank, /tokenize, /info, /health and /v2/rerank are checked against the shapes TEI
and Cohere answer with. One server has no cross-encoder (TEI's /rerank must refuse, as TEI does
for an embedding model); one has the test cross-encoder (scores are its sigmoid, logits with
raw_scores).

Usage: tei_client_test.py KOTAE_BINARY DATA_DIR CROSS_ENCODER_DIR
"""

import math
import os
import shutil
import sys
import tempfile
import unittest

import httpx
import numpy as np
from huggingface_hub import InferenceClient
from huggingface_hub.errors import HfHubHTTPError

from kotae_http import Server

KOTAE, DATA, CROSS_ENCODER = sys.argv[1], sys.argv[2], sys.argv[3]
TEXTS = ["Use apt install to add packages.", "Bananas are yellow."]


def start_server(data, *flags):
    server = Server(KOTAE, data, os.path.join(tempfile.mkdtemp(), "server.log"), flags)
    server.start()
    return server, "http://127.0.0.1:%d" % server.port


def link_or_copy(source, target):
    try:
        os.link(source, target)  # no 100 MB copy where the file system allows
    except OSError:
        shutil.copy2(source, target)


def data_with_reranker(folder):
    """A data folder with the default embedder and the test cross-encoder. Models are hard-linked or
    copied, not symlinked: the server refuses a model folder that resolves outside its models folder."""
    models = os.path.join(folder, "models")
    os.makedirs(models)
    embedder = os.path.realpath(os.path.join(DATA, "models", "all-minilm-l6-v2"))
    shutil.copytree(embedder, os.path.join(models, "all-minilm-l6-v2"), copy_function=link_or_copy)
    shutil.copytree(CROSS_ENCODER, os.path.join(models, "test-reranker"))
    return folder


class TeiWithoutCrossEncoder(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.process, cls.url = start_server(DATA)
        cls.http = httpx.Client(base_url=cls.url, timeout=60)

    @classmethod
    def tearDownClass(cls):
        assert cls.process.stop() == 0

    def test_inference_client_embeds_through_embed(self):
        client = InferenceClient(model=self.url + "/embed")
        vectors = client.feature_extraction(TEXTS[0])
        self.assertEqual(vectors.shape, (1, 384))
        openai_style = self.http.post("/v1/embeddings", json={"input": TEXTS[0]}).json()["data"][0]["embedding"]
        np.testing.assert_allclose(vectors[0], openai_style, atol=1e-5)
        self.assertAlmostEqual(float(np.linalg.norm(vectors[0])), 1.0, places=4)
        both = client.feature_extraction(TEXTS, normalize=True, truncate=True)
        self.assertEqual(both.shape, (2, 384))

    def test_a_text_longer_than_the_model_is_refused_unless_truncate(self):
        long_text = "packages " * 700
        with self.assertRaises(HfHubHTTPError) as raised:
            InferenceClient(model=self.url + "/embed").feature_extraction(long_text)
        self.assertEqual(raised.exception.response.status_code, 413)
        body = raised.exception.response.json()
        self.assertEqual(body["error_type"], "Validation")
        self.assertIn("must have less than 256 tokens", body["error"])
        cut = self.http.post("/embed", json={"inputs": long_text, "truncate": True})
        self.assertEqual(cut.status_code, 200, cut.text)
        self.assertEqual(len(cut.json()[0]), 384)

    def test_normalize_false_gives_the_pooled_vector_unscaled(self):
        unit = np.array(self.http.post("/embed", json={"inputs": TEXTS[0]}).json()[0])
        raw = np.array(self.http.post("/embed", json={"inputs": TEXTS[0], "normalize": False}).json()[0])
        self.assertGreater(abs(float(np.linalg.norm(raw)) - 1.0), 0.01)
        np.testing.assert_allclose(raw / np.linalg.norm(raw), unit, atol=1e-5)

    def test_errors_are_teis(self):
        for body, status, kind in (
            ({"inputs": []}, 400, "Empty"),
            ({"input": "x"}, 422, "Validation"),
            ({"inputs": "x", "truncation_direction": "left"}, 422, "Validation"),
        ):
            reply = self.http.post("/embed", json=body)
            self.assertEqual(reply.status_code, status, body)
            self.assertEqual(set(reply.json()), {"error", "error_type"})
            self.assertEqual(reply.json()["error_type"], kind)

    def test_tokenize_info_and_health(self):
        tokens = self.http.post("/tokenize", json={"inputs": "apt installs"}).json()
        self.assertEqual([t["text"] for t in tokens[0]], ["[CLS]", "apt", "install", "##s", "[SEP]"])
        first, apt, suffix = tokens[0][0], tokens[0][1], tokens[0][3]
        self.assertEqual((first["special"], first["start"]), (True, None))
        self.assertEqual((apt["special"], apt["start"], apt["stop"]), (False, 0, 3))
        self.assertEqual((suffix["start"], suffix["stop"]), (11, 12))
        self.assertEqual(set(apt), {"id", "text", "special", "start", "stop"})
        bare = self.http.post("/tokenize", json={"inputs": ["apt installs"], "add_special_tokens": False}).json()
        self.assertEqual([t["text"] for t in bare[0]], ["apt", "install", "##s"])

        info = self.http.get("/info").json()
        for field in (
            "model_id",
            "model_dtype",
            "model_type",
            "max_concurrent_requests",
            "max_input_length",
            "max_batch_tokens",
            "max_client_batch_size",
            "tokenization_workers",
            "version",
        ):
            self.assertIn(field, info)
        self.assertEqual(info["model_id"], "all-minilm-l6-v2")
        self.assertEqual(info["model_type"], {"embedding": {"pooling": "mean"}})
        self.assertEqual(info["max_input_length"], 256)
        self.assertEqual(self.http.get("/health").status_code, 200)

    def test_tei_rerank_needs_a_cross_encoder_as_tei_does(self):
        reply = self.http.post("/rerank", json={"query": "install software", "texts": TEXTS})
        self.assertEqual(reply.status_code, 424)
        self.assertEqual(reply.json()["error_type"], "Backend")
        self.assertIn("re-ranker", reply.json()["error"])

    def test_cohere_rerank_falls_back_to_cosine(self):
        reply = self.http.post(
            "/v2/rerank", json={"model": "any", "query": "How do I install software?", "documents": TEXTS[::-1]}
        )
        self.assertEqual(reply.status_code, 200, reply.text)
        body = reply.json()
        self.assertEqual(set(body), {"id", "results", "meta"})
        self.assertEqual(body["results"][0]["index"], 1)
        self.assertEqual(body["meta"]["api_version"]["version"], "2")


class TeiWithCrossEncoder(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.mkdtemp()
        cls.process, cls.url = start_server(data_with_reranker(cls.folder), "--rerank", "test-reranker")
        cls.http = httpx.Client(base_url=cls.url, timeout=60)

    @classmethod
    def tearDownClass(cls):
        assert cls.process.stop() == 0
        shutil.rmtree(cls.folder)

    def test_scores_are_the_sigmoid_of_the_logits_unless_raw(self):
        query = {"query": "How do I install software?", "texts": TEXTS, "return_text": True}
        scored = self.http.post("/rerank", json=query).json()
        raw = self.http.post("/rerank", json=dict(query, raw_scores=True)).json()
        self.assertEqual(len(scored), 2)
        self.assertEqual(set(scored[0]), {"index", "score", "text"})
        self.assertGreaterEqual(scored[0]["score"], scored[1]["score"])
        logits = {r["index"]: r["score"] for r in raw}
        for r in scored:
            self.assertTrue(0 < r["score"] < 1)
            self.assertAlmostEqual(r["score"], 1 / (1 + math.exp(-logits[r["index"]])), places=5)
            self.assertEqual(r["text"], TEXTS[r["index"]])

    def test_a_pair_longer_than_the_model_reads_is_refused_unless_truncate(self):
        query = {"query": "How do I install software?", "texts": [TEXTS[0], "packages " * 700]}
        refused = self.http.post("/rerank", json=query)
        self.assertEqual(refused.status_code, 413, refused.text)
        self.assertEqual(refused.json()["error_type"], "Validation")
        self.assertIn("must have less than", refused.json()["error"])
        self.assertEqual(self.http.post("/rerank", json=dict(query, truncate=True)).status_code, 200)

    def test_cohere_scores_are_probabilities_too(self):
        reply = self.http.post(
            "/v2/rerank", json={"query": "How do I install software?", "documents": TEXTS, "top_n": 1}
        )
        results = reply.json()["results"]
        self.assertEqual(len(results), 1)
        self.assertTrue(0 < results[0]["relevance_score"] < 1)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
