"""The official `openai` Python package against a real `kotae serve`: embeddings (its default base64
encoding and floats), chat completions grounded on a collection (streamed and not, with the usage
chunk), the model list with an alias, and errors raised as the package's own exception types.

Usage: openai_client_test.py KOTAE_BINARY DATA_DIR
"""

import json
import subprocess
import sys
import threading
import time
import unittest

import openai

KOTAE, DATA = sys.argv[1], sys.argv[2]


def start_server():
    process = subprocess.Popen(
        [KOTAE, "serve", "--data", DATA, "--port", "0", "--alias", "text-embedding-3-small=all-minilm-l6-v2"],
        stderr=subprocess.PIPE,
        text=True,
    )
    port, deadline = None, time.time() + 120
    while time.time() < deadline:
        line = process.stderr.readline()
        if not line:
            raise RuntimeError("kotae serve exited: %s" % process.wait())
        event = json.loads(line)
        if event["event"] == "listening":
            port = event["port"]
        if event["event"] == "ready":
            threading.Thread(target=process.stderr.read, daemon=True).start()  # keep draining its log
            return process, port
    raise RuntimeError("kotae serve was not ready in time")


class OpenAIClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.process, port = start_server()
        cls.client = openai.OpenAI(base_url="http://127.0.0.1:%d/v1" % port, api_key="unused", max_retries=0)

    @classmethod
    def tearDownClass(cls):
        cls.process.terminate()
        code = cls.process.wait(timeout=30)
        if code != 0:
            raise AssertionError("kotae serve exited with %d after SIGTERM" % code)

    def test_embeddings_in_base64_and_floats_agree(self):
        texts = ["How do I install a package?", "Debian is a free operating system."]
        default = self.client.embeddings.create(model="all-minilm-l6-v2", input=texts)  # the package asks for base64
        floats = self.client.embeddings.create(model="all-minilm-l6-v2", input=texts, encoding_format="float")
        self.assertEqual(len(default.data), 2)
        self.assertEqual([d.index for d in default.data], [0, 1])
        for a, b in zip(default.data, floats.data):
            self.assertEqual(len(a.embedding), 384)
            for x, y in zip(a.embedding, b.embedding):
                self.assertAlmostEqual(x, y, places=6)
        norm = sum(x * x for x in default.data[0].embedding) ** 0.5
        self.assertAlmostEqual(norm, 1.0, places=4)
        self.assertGreater(default.usage.prompt_tokens, 8)

    def test_an_unknown_model_is_not_found(self):
        with self.assertRaises(openai.NotFoundError):
            self.client.embeddings.create(model="no-such-model", input="x")

    def test_a_bad_request_is_a_bad_request(self):
        with self.assertRaises(openai.BadRequestError) as raised:
            self.client.chat.completions.create(model="kotae", messages=[])
        self.assertIn("messages", str(raised.exception))

    def test_models_are_listed_with_their_aliases(self):
        models = {m.id: m for m in self.client.models.list()}
        self.assertIn("all-minilm-l6-v2", models)
        self.assertEqual(models["all-minilm-l6-v2"].model_extra["aliases"], ["text-embedding-3-small"])
        self.assertEqual(models["text-embedding-3-small"].model_extra["alias_of"], "all-minilm-l6-v2")

    def test_an_alias_embeds_with_the_model_it_names(self):
        text = "How do I install a package?"
        by_alias = self.client.embeddings.create(model="text-embedding-3-small", input=text, encoding_format="float")
        by_name = self.client.embeddings.create(model="all-minilm-l6-v2", input=text, encoding_format="float")
        self.assertEqual(by_alias.model, "text-embedding-3-small")
        self.assertEqual(by_alias.data[0].embedding, by_name.data[0].embedding)

    def test_fields_that_change_the_answer_are_refused_not_ignored(self):
        messages = [{"role": "user", "content": "What is a virtual package?"}]
        tool = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {}}}}
        for extra in ({"tools": [tool]}, {"n": 2}, {"response_format": {"type": "json_object"}}):
            with self.assertRaises(openai.BadRequestError, msg=str(extra)) as raised:
                self.client.chat.completions.create(
                    model="kotae", messages=messages, extra_body={"collection": "faq"}, **extra
                )
            self.assertIn(next(iter(extra)), str(raised.exception))

    def test_grounded_chat_completions_streamed_and_not(self):
        messages = [{"role": "user", "content": "What is a virtual package?"}]
        whole = self.client.chat.completions.create(model="kotae", messages=messages, extra_body={"collection": "faq"})
        content = whole.choices[0].message.content
        self.assertIn("virtual package", content)
        self.assertRegex(content, r"\[\d+\]")
        self.assertEqual(whole.choices[0].finish_reason, "stop")
        extra = whole.model_extra["kotae"]
        self.assertEqual(extra["backend"], "extractive")
        self.assertTrue(any("pkg-basics" in c["document"] for c in extra["citations"]))

        self.assertIsNotNone(whole.usage)

        stream = self.client.chat.completions.create(
            model="kotae",
            messages=messages,
            stream=True,
            stream_options={"include_usage": True},
            extra_body={"collection": "faq"},
        )
        pieces, finish, usage = [], None, []
        for chunk in stream:
            if chunk.usage is not None:  # the last chunk before [DONE], with no choices
                self.assertEqual(chunk.choices, [])
                usage.append(chunk.usage)
                continue
            self.assertEqual(usage, [], "the usage chunk comes last")
            pieces.append(chunk.choices[0].delta.content or "")
            finish = chunk.choices[0].finish_reason or finish
        self.assertEqual("".join(pieces), content)
        self.assertEqual(finish, "stop")
        self.assertEqual(len(usage), 1)
        self.assertEqual(usage[0].total_tokens, usage[0].prompt_tokens + usage[0].completion_tokens)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
