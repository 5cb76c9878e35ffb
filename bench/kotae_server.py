"""A real `kotae serve` on a free loopback port, and plain HTTP to it, for the Python benchmarks that
need a server (bench/scanned_retrieval.py, bench/ocr_fairness.py). Standard library only."""

import http.client
import json
import subprocess
import threading
import time


class KotaeServer:
    """`kotae serve --data DATA --port 0 ARGS...`; its log lines go to `log_path`, minus requests."""

    def __init__(self, binary, data, log_path, args=()):
        self.log = open(log_path, "w", buffering=1)
        self.process = subprocess.Popen(
            [binary, "serve", "--data", data, "--port", "0", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.port = None
        deadline = time.time() + 300
        while time.time() < deadline:
            line = self.process.stderr.readline()
            if not line:
                raise SystemExit("kotae serve exited during start (%s); see %s" % (self.process.wait(), log_path))
            self.log.write(line)
            event = json.loads(line) if line.startswith("{") else {}
            if event.get("event") == "listening":
                self.port = event["port"]
            if event.get("event") == "ready":
                threading.Thread(target=self._drain, daemon=True).start()
                return
        raise SystemExit("kotae serve was not ready in time; see %s" % log_path)

    def _drain(self):
        for line in self.process.stderr:
            if '"event":"request"' not in line:
                self.log.write(line)

    def request(self, method, path, body=None, headers=None, timeout=600):
        """(status, body bytes)."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def json(self, method, path, value=None, headers=None):
        """(status, parsed JSON body or None)."""
        body = None if value is None else json.dumps(value).encode()
        status, data = self.request(method, path, body, dict({"Content-Type": "application/json"}, **(headers or {})))
        return status, json.loads(data) if data else None

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=120)
