"""A real `kotae serve` for the Python client's tests: a fresh data folder (DATA) linked to the
installed models, the server on a free loopback port with the small local generator, and the
example documents (examples/docs) uploaded through the client into the collection "examples"."""

import os
import shutil
import sys
from pathlib import Path

from kotae import Kotae

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "server"))
from kotae_http import Server as ServerProcess  # noqa: E402 (the server tests' own helper)

EXAMPLES = sorted((ROOT / "examples" / "docs").iterdir())
GENERATOR = "smollm2-135m-instruct"  # required by scripts/setup; small enough for a CPU


def installed_models():
    data = os.environ.get("KOTAE_DATA") or os.path.join(
        os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share"), "kotae"
    )
    return os.path.join(data, "models")


class Server(ServerProcess):
    def __init__(self, binary, data):
        shutil.rmtree(data, ignore_errors=True)
        os.makedirs(data)
        os.symlink(installed_models(), os.path.join(data, "models"))
        super().__init__(binary, data, os.path.join(data, "serve.log"), ["--model", GENERATOR])
        self.start()
        self.url = "http://127.0.0.1:%d" % self.port

    def index_examples(self, collection="examples"):
        """Uploads examples/docs through the client; returns the finished job."""
        with Kotae(self.url) as client:
            client.create_collection(collection)
            return client.upload(collection, [str(path) for path in EXAMPLES])

    def stop(self):
        code = super().stop()
        if code != 0:
            raise AssertionError("kotae serve exited with %d after SIGTERM" % code)
