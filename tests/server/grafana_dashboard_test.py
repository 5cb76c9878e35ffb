"""deploy/grafana/kotae.json uses only metrics Kotae exports: a real `kotae serve` (with the small
local generator) is given a little of every kind of work, then every metric each panel's query names
must be in its /metrics, and every label a query selects or groups by must be on that metric.

Usage: grafana_dashboard_test.py KOTAE_BINARY DATA_DIR
"""

import json
import os
import re
import shutil
import sys
import tempfile
import unittest

from kotae_http import Server, data_with_faq, json_request, request, upload, wait_job

KOTAE, FIXTURE = sys.argv[1], sys.argv[2]
DASHBOARD = os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "grafana", "kotae.json")
METRIC = re.compile(r"\b((?:kotae|process)_[a-z0-9_]+)")
ADDED_BY_PROMETHEUS = {"job", "instance"}
# Series that exist only on a machine with a GPU (server/gpu_metrics.cpp; tests/server/gpu_metrics_test.cpp
# checks their names and labels) or after a GPU failed over (server/server_metrics.cpp), with their labels.
GPU_ONLY = {
    name: {"gpu", "name", "uuid"}
    for name in (
        "kotae_gpu_utilization_ratio",
        "kotae_gpu_memory_used_bytes",
        "kotae_gpu_memory_total_bytes",
        "kotae_gpu_temperature_celsius",
    )
}
GPU_ONLY["kotae_gpu_failovers_total"] = {"model"}


def exposition(text):
    """{metric name: set of label names} from the text format."""
    metrics = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name, _, rest = line.partition("{")
        name = name.split(" ")[0]
        labels = set(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', rest)) if rest else set()
        metrics.setdefault(name, set()).update(labels)
    return metrics


def queries(dashboard):
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            yield panel["title"], target["expr"]
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            yield "variable " + variable["name"], variable["query"]


class GrafanaDashboard(unittest.TestCase):
    def test_every_query_names_metrics_and_labels_kotae_exports(self):
        work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, work)
        server = Server(
            KOTAE, data_with_faq(FIXTURE, work), os.path.join(work, "serve.log"), ["--model", "smollm2-135m-instruct"]
        )
        server.start()
        try:
            port = server.port
            for _ in range(2):  # the second is a cache hit
                json_request(
                    port,
                    "POST",
                    "/v1/ask",
                    {"collection": "faq", "question": "What is a virtual package?", "backends": "extractive"},
                )
            json_request(port, "POST", "/v1/search", {"collection": "faq", "query": "dpkg"})
            json_request(port, "POST", "/v1/embeddings", {"input": "hello"})
            status, _ = json_request(
                port,
                "POST",
                "/v1/chat/completions",
                {"messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 4},
            )
            self.assertEqual(status, 200)
            json_request(port, "POST", "/v1/collections", {"name": "notes"})
            self.assertEqual(
                wait_job(port, upload(port, "notes", {"a.md": "# Notes\n\nKotae answers questions."}))["state"],
                "succeeded",
            )
            status, body, _ = request(port, "GET", "/metrics")
            self.assertEqual(status, 200)
        finally:
            server.stop()
        live = exposition(body.decode())
        for name, labels in GPU_ONLY.items():
            live.setdefault(name, labels)  # here: no GPU, no failover
        with open(DASHBOARD) as f:
            dashboard = json.load(f)
        checked = 0
        for where, expr in queries(dashboard):
            names = set(METRIC.findall(expr))
            self.assertTrue(names, "%s: %s names no Kotae metric" % (where, expr))
            for name in names:
                self.assertIn(name, live, "%s: %s is not exported" % (where, name))
                checked += 1
            labels = set(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*=~?"', expr))
            for group in re.findall(r"by \(([^)]*)\)", expr):
                labels.update(label.strip() for label in group.split(","))
            on_metrics = set().union(*(live[name] for name in names))
            for label in labels - ADDED_BY_PROMETHEUS:
                self.assertIn(label, on_metrics, "%s: no metric in %s has label %s" % (where, expr, label))
        self.assertGreater(checked, 20)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
