"""The framework integrations of the Python client against a real `kotae serve` with real models,
each with the framework's own pinned package (scripts/python/integrations.lock): the LangChain,
LlamaIndex and Haystack retrievers over /v1/search, and LangChain's ChatOpenAI and OpenAIEmbeddings
and LlamaIndex's OpenAILike over Kotae's OpenAI-compatible /v1/chat/completions and /v1/embeddings.

Usage: integrations_test.py KOTAE_BINARY DATA_DIR
"""

import asyncio
import os
import re
import subprocess
import sys
import unittest

os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"  # no phoning home from a test

import openai
from haystack import Pipeline
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from llama_index.core.llms import ChatMessage
from llama_index.core.schema import NodeWithScore
from llama_index.llms.openai_like import OpenAILike

from kotae import Kotae
from kotae.integrations import haystack as kotae_haystack
from kotae.integrations import langchain as kotae_langchain
from kotae.integrations import llamaindex as kotae_llamaindex
from kotae_server import ROOT, Server

KOTAE, DATA = sys.argv[1], sys.argv[2]
QUESTION = "Can multiple applications access a single database file at the same time?"
PDF_QUESTION = "Is SQLite a good fit for a website with moderate traffic?"
FAQ_TITLE = "SQLite Frequently Asked Questions"
TOKEN_IDS_ERROR = "check_embedding_ctx_length=False"


class IntegrationsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server(KOTAE, DATA)
        cls.assert_indexed(cls.server.index_examples())
        cls.base = cls.server.url + "/v1"

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    @staticmethod
    def assert_indexed(job):
        if job["state"] != "succeeded":
            raise AssertionError("indexing examples/docs: %s" % job)

    def assert_located(self, metadata, score):
        """What every framework's document says about where its text is and how it ranked."""
        self.assertEqual((metadata["document"], metadata["title"]), ("sqlite-faq.html", FAQ_TITLE))
        self.assertIsNone(metadata["page"])  # HTML has no pages
        self.assertLess(metadata["start"], metadata["end"])
        self.assertEqual(metadata["heading_path"], ["Frequently Asked Questions"])
        self.assertEqual(metadata["score"], score)
        self.assertGreater(score, 0)

    # --- Retrievers --------------------------------------------------------------------------------
    def test_langchain_retriever(self):
        retriever = kotae_langchain.KotaeRetriever(collection="examples", base_url=self.server.url, k=3)
        documents = retriever.invoke(QUESTION)
        self.assertEqual(len(documents), 3)
        self.assert_located(documents[0].metadata, documents[0].metadata["score"])
        self.assertIn("multiple processes", documents[0].page_content.lower())
        scores = [d.metadata["score"] for d in documents]
        self.assertEqual(scores, sorted(scores, reverse=True))
        pdf = asyncio.run(
            kotae_langchain.KotaeRetriever(
                collection="examples", base_url=self.server.url, k=1, filters={"formats": "pdf"}
            ).ainvoke(PDF_QUESTION)
        )
        self.assertEqual(pdf[0].metadata["document"], "sqlite-when-to-use.pdf")
        self.assertGreaterEqual(pdf[0].metadata["page"], 1)

    def test_llamaindex_retriever(self):
        retriever = kotae_llamaindex.KotaeRetriever("examples", base_url=self.server.url, k=3)
        nodes = retriever.retrieve(QUESTION)
        self.assertEqual(len(nodes), 3)
        self.assertIsInstance(nodes[0], NodeWithScore)
        self.assert_located(nodes[0].node.metadata, nodes[0].score)
        self.assertIn("multiple processes", nodes[0].node.get_content().lower())
        same = asyncio.run(retriever.aretrieve(QUESTION))
        self.assertEqual([n.node.node_id for n in same], [n.node.node_id for n in nodes])

    def test_haystack_component_in_a_pipeline(self):
        pipeline = Pipeline()
        pipeline.add_component("retriever", kotae_haystack.KotaeRetriever("examples", base_url=self.server.url))
        documents = pipeline.run({"retriever": {"query": QUESTION, "top_k": 2}})["retriever"]["documents"]
        self.assertEqual(len(documents), 2)
        self.assert_located(documents[0].meta, documents[0].score)
        self.assertIn("multiple processes", documents[0].content.lower())
        again = Pipeline.from_dict(
            pipeline.to_dict(), allowed_modules=["kotae.integrations.haystack"]
        )  # saved and loaded
        self.assertEqual(again.run({"retriever": {"query": QUESTION, "top_k": 2}})["retriever"]["documents"], documents)

    # --- OpenAI-compatible endpoints through the frameworks' OpenAI classes -------------------------
    def test_langchain_chat_openai(self):
        chat = ChatOpenAI(base_url=self.base, api_key="unused", model="kotae", max_tokens=12, max_retries=0)
        self.assertTrue(chat.invoke("Say hello.").content.strip())
        pieces = [chunk.content for chunk in chat.stream("Say hello.")]
        self.assertGreater(len([p for p in pieces if p]), 1)
        grounded = ChatOpenAI(
            base_url=self.base,
            api_key="unused",
            model="kotae",
            max_retries=0,
            extra_body={"collection": "examples", "backends": "extractive"},
        )
        self.assertRegex(grounded.invoke(QUESTION).content, r"\[\d+\]")

    def test_langchain_openai_embeddings(self):
        embeddings = OpenAIEmbeddings(
            base_url=self.base,
            api_key="unused",
            model="all-minilm-l6-v2",
            check_embedding_ctx_length=False,
            max_retries=0,
        )
        query = embeddings.embed_query(QUESTION)
        with Kotae(self.server.url) as client:
            direct = client.embeddings(QUESTION)["data"][0]["embedding"]
        self.assertEqual(len(query), 384)
        for x, y in zip(query, direct):
            self.assertAlmostEqual(x, y, places=5)
        self.assertEqual([len(v) for v in embeddings.embed_documents(["one", "two"])], [384, 384])

    def test_langchain_openai_embeddings_default_is_refused_naming_the_setting(self):
        """By default OpenAIEmbeddings tokenizes with tiktoken and sends token ids. tiktoken fetches
        its encoding from the internet: offline, the default fails before it sends anything; then the
        request it would send (token ids, through its own client) is sent to show what Kotae says."""
        default = OpenAIEmbeddings(base_url=self.base, api_key="unused", model="all-minilm-l6-v2", max_retries=0)
        try:
            default.embed_documents(["one"])
            self.fail("token ids were accepted")
        except openai.BadRequestError as error:
            refused = error
        except Exception as error:  # offline: tiktoken could not fetch its encoding
            self.assertIn("openaipublic.blob.core.windows.net", str(error))
            with self.assertRaises(openai.BadRequestError) as raised:
                default.client.create(input=[[9906, 1917]], model="all-minilm-l6-v2")
            refused = raised.exception
        self.assertEqual(refused.status_code, 400)
        self.assertIn(TOKEN_IDS_ERROR, str(refused))

    def test_llamaindex_openai_like(self):
        llm = OpenAILike(
            model="kotae",
            api_base=self.base,
            api_key="unused",
            is_chat_model=True,
            context_window=4096,
            max_tokens=12,
            max_retries=0,
        )
        self.assertTrue(llm.complete("Say hello.").text.strip())
        self.assertTrue(llm.chat([ChatMessage(role="user", content="Say hello.")]).message.content.strip())
        grounded = OpenAILike(
            model="kotae",
            api_base=self.base,
            api_key="unused",
            is_chat_model=True,
            max_retries=0,
            additional_kwargs={"extra_body": {"collection": "examples", "backends": "extractive"}},
        )
        self.assertRegex(grounded.complete(QUESTION).text, r"\[\d+\]")

    # --- docs/integrations.md ----------------------------------------------------------------------
    def test_the_documented_examples_run_as_written(self):
        """Each python block of docs/integrations.md, run from the repository's root, with only the
        server's address changed (the docs say 127.0.0.1:8080)."""
        blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "integrations.md").read_text(), re.S)
        self.assertGreaterEqual(len(blocks), 6)
        for block in blocks:
            code = block.replace("http://127.0.0.1:8080", self.server.url)
            run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
            self.assertEqual(run.returncode, 0, "this example failed:\n%s\n%s" % (block, run.stderr[-3000:]))
            self.assertTrue(run.stdout.strip(), block)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
