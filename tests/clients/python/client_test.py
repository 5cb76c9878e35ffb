"""The Python client (clients/python, installed with pip) against a real `kotae serve` with real
models: uploads with job progress, search, answers (whole, streamed, later), conversations, errors as
exceptions with the server's code and message, embeddings, reranking, models and chat completions; the
sync client and the async one.

Usage: client_test.py KOTAE_BINARY DATA_DIR
"""

import asyncio
import sys
import time
import unittest

from kotae import APIConnectionError, APIError, AsyncKotae, Citations, Done, Kotae, Sources, Timings, Token
from kotae_server import EXAMPLES, Server

KOTAE, DATA = sys.argv[1], sys.argv[2]
QUESTION = "Can multiple applications access a single database file at the same time?"
NOTE = b"# Lighthouse keeping\n\nThe keeper of the Tarrow lighthouse winds the lamp's clockwork every four hours.\n"


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server(KOTAE, DATA)
        cls.client = Kotae(cls.server.url)
        cls.client.create_collection("examples")
        cls.progress = []
        cls.job = cls.client.upload("examples", [str(p) for p in EXAMPLES], on_progress=cls.progress.append)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.server.stop()

    def test_an_upload_reports_its_progress_until_the_job_is_over(self):
        self.assertEqual(self.job["state"], "succeeded")
        self.assertEqual(self.job["progress"]["files_done"], len(EXAMPLES))
        self.assertEqual(sorted(f["name"] for f in self.job["files"]), [p.name for p in EXAMPLES])
        self.assertTrue(all(f["status"] == "indexed" and f["chunks"] > 0 for f in self.job["files"]))
        self.assertEqual(self.progress[-1], self.job)
        self.assertIn(self.job["id"], [job["id"] for job in self.client.jobs()])
        self.assertEqual(self.client.job(self.job["id"])["state"], "succeeded")

    def test_collections_and_documents_are_listed(self):
        collection = self.client.collection("examples")
        self.assertEqual(collection["documents"], len(EXAMPLES))
        self.assertGreater(collection["chunks"], 50)
        self.assertIn("examples", [c["name"] for c in self.client.collections()])
        self.assertEqual(sorted(d["path"] for d in self.client.documents("examples")), [p.name for p in EXAMPLES])

    def test_search_finds_the_passage_and_where_it_is(self):
        hits = self.client.search("examples", QUESTION, k=3)["hits"]
        self.assertEqual(len(hits), 3)
        best = hits[0]
        self.assertEqual(best["document"], "sqlite-faq.html")
        self.assertIn("multiple processes", best["text"].lower())
        begin, end = best["span"]
        self.assertGreater(end, begin)
        bm25 = self.client.search("examples", "malformed", mode="bm25", k=1)
        self.assertEqual(bm25["mode"], "bm25")
        self.assertIn("malformed", bm25["hits"][0]["text"])

    def test_an_answer_cites_the_documents(self):
        answer = self.client.ask("examples", QUESTION, backends="extractive")
        self.assertEqual(answer["backend"], "extractive")
        self.assertTrue(answer["citations"])
        self.assertIn("sqlite-faq.html", [c["document"] for c in answer["citations"]])
        self.assertRegex(answer["answer"], r"\[\d+\]")

    def test_a_streamed_answer_yields_tokens_then_the_citations(self):
        events = list(self.client.ask_stream("examples", QUESTION, max_tokens=24, cache=False))
        kinds = [type(e) for e in events]
        self.assertIs(kinds[0], Sources)
        self.assertIn(Token, kinds)
        first_citations = kinds.index(Citations)
        self.assertLess(max(i for i, kind in enumerate(kinds) if kind is Token), first_citations)
        self.assertEqual(kinds[-2:], [Timings, Done])
        done, citations = events[-1], events[first_citations]
        self.assertEqual(done.answer["answer"], citations.answer)
        self.assertEqual(done.answer["backend"], "llama.cpp")
        self.assertTrue("".join(e.text for e in events if isinstance(e, Token)).strip())
        self.assertTrue(events[0].sources)

    def test_a_question_asked_for_later_is_answered_by_its_task(self):
        task = self.client.ask_later("examples", QUESTION, backends="extractive")
        deadline = time.time() + 60
        while task["status"] not in ("succeeded", "failed") and time.time() < deadline:
            time.sleep(0.1)
            task = self.client.task(task["id"])
        self.assertEqual(task["status"], "succeeded")
        self.assertTrue(task["answer"]["citations"])

    def test_errors_carry_the_servers_code_and_message(self):
        with self.assertRaises(APIError) as raised:
            self.client.search("no-such-collection", "anything")
        self.assertEqual((raised.exception.status_code, raised.exception.code), (404, "not_found"))
        self.assertIn("no-such-collection", raised.exception.message)
        with self.assertRaises(APIError) as raised:
            self.client.create_collection("examples")
        self.assertEqual((raised.exception.status_code, raised.exception.code), (409, "already_exists"))
        with self.assertRaises(APIError) as raised:
            self.client.search("examples", "anything", k=1000)
        self.assertEqual((raised.exception.status_code, raised.exception.code), (400, "invalid_request"))
        self.assertIn("k", raised.exception.message)
        with self.assertRaises(APIError) as raised:
            list(self.client.ask_stream("no-such-collection", QUESTION))
        self.assertEqual(raised.exception.code, "not_found")
        with Kotae("http://127.0.0.1:1") as unreachable, self.assertRaises(APIConnectionError):
            unreachable.models()

    def test_embeddings_reranking_and_models(self):
        vectors = self.client.embeddings(["a lighthouse", "a database file"])["data"]
        self.assertEqual([len(v["embedding"]) for v in vectors], [384, 384])
        self.assertAlmostEqual(sum(x * x for x in vectors[0]["embedding"]), 1.0, places=3)
        ranked = self.client.rerank("Who winds the lamp?", ["SQLite stores tables in one file.", NOTE.decode()])
        self.assertEqual(ranked["results"][0]["index"], 1)
        kinds = {m["id"]: m["kind"] for m in self.client.models()}
        self.assertEqual(kinds["all-minilm-l6-v2"], "embedding")
        self.assertIn("chat", kinds.values())

    def test_chat_completions_grounded_on_a_collection(self):
        completion = self.client.chat_completions(
            [{"role": "user", "content": QUESTION}], collection="examples", backends="extractive"
        )
        self.assertRegex(completion["choices"][0]["message"]["content"], r"\[\d+\]")
        self.assertTrue(completion["kotae"]["citations"])

    def test_documents_uploaded_from_bytes_can_be_deleted(self):
        self.client.create_collection("notes", chunk_tokens=64)
        job = self.client.upload("notes", [("lighthouse.md", NOTE)], wait=False)
        self.assertIn(job["state"], ("queued", "running", "succeeded"))
        self.assertEqual(self.client.wait_for_job(job["id"])["state"], "succeeded")
        [document] = self.client.documents("notes")
        self.assertEqual(document["title"], "Lighthouse keeping")
        self.assertIn("Tarrow", self.client.search("notes", "Who winds the lamp?")["hits"][0]["text"])
        self.client.delete_document("notes", document["id"])
        self.assertEqual(self.client.documents("notes"), [])
        self.client.delete_collection("notes")
        self.assertNotIn("notes", [c["name"] for c in self.client.collections()])

    def test_conversations_are_listed_read_renamed_and_deleted(self):
        first = self.client.ask("examples", QUESTION, backends="extractive", cache=False)
        conversation = first["conversation_id"]
        self.client.ask(
            "examples", "What is a malformed database?", backends="extractive", conversation_id=conversation
        )
        listed = self.client.conversations(collection="examples", limit=1000)
        self.assertIn((conversation, QUESTION, 2), [(c["id"], c["title"], c["turns"]) for c in listed])
        self.assertEqual(self.client.conversations(collection="no-such-collection"), [])
        stored = self.client.conversation(conversation)
        self.assertEqual([t["question"] for t in stored["turns"]], [QUESTION, "What is a malformed database?"])
        self.assertEqual(stored["turns"][0]["citations"], first["citations"])
        self.assertEqual(self.client.rename_conversation(conversation, "SQLite")["title"], "SQLite")
        self.assertEqual(self.client.delete_conversation(conversation)["deleted"], True)
        with self.assertRaises(APIError) as raised:
            self.client.conversation(conversation)
        self.assertEqual((raised.exception.status_code, raised.exception.code), (404, "not_found"))
        with self.assertRaises(APIError) as raised:
            self.client.conversations(limit=0)
        self.assertEqual(raised.exception.status_code, 400)

    def test_the_async_client(self):
        async def run():
            progress = []

            async def record(job):
                progress.append(job["state"])

            async with AsyncKotae(self.server.url) as client:
                hits = (await client.search("examples", QUESTION, k=2))["hits"]
                events = [e async for e in client.ask_stream("examples", QUESTION, backends="extractive")]
                await client.create_collection("async-notes")
                job = await client.upload("async-notes", [("lighthouse.md", NOTE)], on_progress=record)
                with self.assertRaises(APIError) as raised:
                    await client.collection("no-such-collection")
                await client.delete_collection("async-notes")
                conversation = events[-1].answer["conversation_id"]
                renamed = await client.rename_conversation(conversation, "Async")
                listed = await client.conversations(limit=5)
                turns = (await client.conversation(conversation))["turns"]
                deleted = await client.delete_conversation(conversation)
                self.assertEqual(renamed["title"], "Async")
                self.assertIn(conversation, [c["id"] for c in listed])
                self.assertEqual(len(turns), 1)
                self.assertTrue(deleted["deleted"])
                return hits, events, job, progress, raised.exception

        hits, events, job, progress, error = asyncio.run(run())
        self.assertEqual(hits[0]["document"], "sqlite-faq.html")
        self.assertIsInstance(events[-1], Done)
        self.assertEqual(events[-1].answer["backend"], "extractive")
        self.assertEqual(job["state"], "succeeded")
        self.assertEqual(progress[-1], "succeeded")
        self.assertEqual(error.code, "not_found")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
