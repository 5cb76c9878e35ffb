"""The server's log as an operator reads it: every line of stderr one JSON object with an ISO-8601
time and a level, ONNX Runtime's and llama.cpp's messages among them (at --log-level debug), and a
line per request with its request id (the client's X-Request-Id, or one made and returned), tenant,
route template and status. --log-level warn leaves the request lines of successful calls out, not the lifecycle ones.

Usage: logs_test.py KOTAE_BINARY DATA_DIR
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from kotae_http import Server, request

KOTAE, DATA = sys.argv[1], sys.argv[2]
ISO_8601 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def log_lines(path):
    with open(path) as f:
        return [line for line in f.read().splitlines() if line]


class ServerLogs(unittest.TestCase):
    def run_server(self, *flags):
        folder = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, folder)
        log = os.path.join(folder, "serve.log")
        server = Server(KOTAE, DATA, log, ["--model", "smollm2-135m-instruct", *flags])
        server.start()
        return server, log

    def test_every_line_is_json_and_requests_carry_their_id_tenant_and_route(self):
        server, log = self.run_server("--log-level", "debug")
        try:
            status, _, headers = request(
                server.port, "GET", "/v1/collections/faq", headers={"X-Request-Id": "trace-42"}
            )
            self.assertEqual(status, 200)
            self.assertEqual(headers["x-request-id"], "trace-42")
            status, _, headers = request(server.port, "GET", "/v1/collections/nowhere")
            self.assertEqual(status, 404)
            made = headers["x-request-id"]
            self.assertTrue(made.startswith("req-"), made)
            for unfit in ("has spaces in it", "x" * 200):  # not an id to copy into logs: a new one instead
                status, _, headers = request(server.port, "GET", "/v1/models", headers={"X-Request-Id": unfit})
                self.assertTrue(headers["x-request-id"].startswith("req-"), headers["x-request-id"])
        finally:
            self.assertEqual(server.stop(), 0)
        lines = [json.loads(line) for line in log_lines(log)]  # raises on a line that is not JSON
        for line in lines:
            self.assertRegex(line["time"], ISO_8601)
            self.assertIn(line["level"], ("debug", "info", "warn", "error"))
        sources = {line.get("source") for line in lines if line["event"] == "library"}
        self.assertIn("llama.cpp", sources, "llama.cpp's messages go through Kotae's log")
        self.assertIn("onnxruntime", sources, "and ONNX Runtime's")
        requests = {line["request_id"]: line for line in lines if line["event"] == "request"}
        self.assertEqual(requests["trace-42"]["route"], "/v1/collections/{name}")
        self.assertEqual(requests["trace-42"]["path"], "/v1/collections/faq")
        self.assertEqual((requests["trace-42"]["status"], requests["trace-42"]["tenant"]), (200, "local"))
        self.assertEqual(requests[made]["status"], 404)

    def test_a_server_that_cannot_start_says_why_in_a_json_line(self):
        run = subprocess.run(
            [KOTAE, "serve", "--data", DATA, "--port", "0", "--model", "a-typo"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        self.assertEqual(run.returncode, 2)
        lines = [json.loads(line) for line in run.stderr.splitlines() if line]
        self.assertEqual([(line["event"], line["level"]) for line in lines], [("failed", "error")])
        self.assertIn("--model a-typo", lines[0]["error"])

    def test_warn_leaves_out_the_lines_of_successful_requests(self):
        server, log = self.run_server("--log-level", "warn")
        try:
            self.assertEqual(request(server.port, "GET", "/v1/collections")[0], 200)
        finally:
            server.stop()
        lines = [json.loads(line) for line in log_lines(log)]
        self.assertFalse([line for line in lines if line["event"] == "request"], lines)
        self.assertEqual(
            [line["event"] for line in lines if line["level"] == "info"],
            ["listening", "ready", "shutting_down", "stopped"],
            "lifecycle lines are written at any level",
        )


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
