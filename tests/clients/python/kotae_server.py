"""A real `kotae serve` for the Python client's tests: a fresh data folder (DATA) linked to the
installed models, the server on a free loopback port with the small local generator, and the
example documents (examples/docs) uploaded through the client into the collection "examples"."""
import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

from kotae import Kotae

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted((ROOT / "examples" / "docs").iterdir())
GENERATOR = "smollm2-135m-instruct"  # required by scripts/setup; small enough for a CPU


def installed_models():
    data = os.environ.get("KOTAE_DATA") or os.path.join(os.environ.get("XDG_DATA_HOME") or
                                                        os.path.expanduser("~/.local/share"), "kotae")
    return os.path.join(data, "models")


class Server:
    def __init__(self, binary, data):
        shutil.rmtree(data, ignore_errors=True)
        os.makedirs(data)
        os.symlink(installed_models(), os.path.join(data, "models"))
        self.log = open(os.path.join(data, "serve.log"), "w", buffering=1)
        self.process = subprocess.Popen([binary, "serve", "--data", data, "--port", "0", "--model", GENERATOR],
                                        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        port, deadline = None, time.time() + 180
        while time.time() < deadline:
            line = self.process.stderr.readline()
            if not line:
                raise RuntimeError("kotae serve exited: %s (log in %s)" % (self.process.wait(), self.log.name))
            self.log.write(line)
            event = json.loads(line) if line.startswith("{") else {}
            if event.get("event") == "listening":
                port = event["port"]
            if event.get("event") == "ready":
                threading.Thread(target=self._drain, daemon=True).start()
                self.url = "http://127.0.0.1:%d" % port
                return
        raise RuntimeError("kotae serve was not ready in time")

    def _drain(self):
        for line in self.process.stderr:
            self.log.write(line)

    def index_examples(self, collection="examples"):
        """Uploads examples/docs through the client; returns the finished job."""
        with Kotae(self.url) as client:
            client.create_collection(collection)
            return client.upload(collection, [str(path) for path in EXAMPLES])

    def stop(self):
        self.process.terminate()
        code = self.process.wait(timeout=60)
        if code != 0:
            raise AssertionError("kotae serve exited with %d after SIGTERM" % code)
