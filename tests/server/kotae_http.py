"""What the Python server tests share: a real `kotae serve` started on a free loopback port, HTTP
requests (JSON or raw bytes over a socket), and a data folder with the fixture's indexed FAQ.
Python standard library only."""

import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time


class Server:
    """`kotae serve --data DATA --port PORT ARGS...` (PORT 0: any free one), its JSON log lines copied to
    `log_path`."""

    def __init__(self, binary, data, log_path, args=(), port=0):
        self.binary, self.data, self.log_path, self.args = binary, data, log_path, list(args)
        self.fixed_port = port
        self.process, self.port, self.drained = None, None, None
        self.preexec = None  # run in the child before exec (e.g. lower its limits)

    def start(self, wait_ready=True):
        log = open(self.log_path, "a", buffering=1)  # line by line: tests read it while it runs
        self.process = subprocess.Popen(
            [self.binary, "serve", "--data", self.data, "--port", str(self.fixed_port)] + self.args,
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            preexec_fn=self.preexec,
        )
        deadline = time.time() + 180
        while time.time() < deadline:
            line = self.process.stderr.readline()
            if not line:
                raise RuntimeError("kotae serve exited during start: %s" % self.process.wait())
            log.write(line)
            event = json.loads(line) if line.startswith("{") else {}
            if event.get("event") == "listening":
                self.port = event["port"]
            if event.get("event") == ("ready" if wait_ready else "listening"):

                def drain():
                    for rest in self.process.stderr:
                        log.write(rest)
                    log.close()

                self.drained = threading.Thread(target=drain, daemon=True)
                self.drained.start()
                return
        raise RuntimeError("kotae serve was not ready in time")

    def alive(self):
        return self.process.poll() is None

    def stop(self):
        """SIGTERM; its exit code once it has exited and its last log lines are copied."""
        self.process.terminate()
        code = self.process.wait(timeout=60)
        if self.drained:
            self.drained.join(timeout=10)
        return code


def request(port, method, path, body=None, headers=None, timeout=120):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read(), dict((k.lower(), v) for k, v in response.getheaders())
    finally:
        connection.close()


def json_request(port, method, path, value=None, headers=None):
    status, body, _ = request(
        port,
        method,
        path,
        None if value is None else json.dumps(value).encode(),
        dict({"Content-Type": "application/json"}, **(headers or {})),
    )
    return status, json.loads(body) if body else None


def raw_exchange(port, data, timeout=60, close_sending=True):
    """Sends raw bytes (a thread writes while this one reads, so an early answer is not lost), closes
    the sending side, and reads until the server closes. Returns the bytes received."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    received = bytearray()

    def send():
        try:
            sock.sendall(data)
            if close_sending:
                sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the server answered and closed before reading everything: expected for refused requests

    sender = threading.Thread(target=send)
    sender.start()
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    except ConnectionResetError:
        pass
    except socket.timeout:
        received += b"<<timeout>>"
    sender.join()
    sock.close()
    return bytes(received)


def parse_raw_response(data):
    if not data or data == b"<<timeout>>":
        return None, None, data
    head, _, body = data.partition(b"\r\n\r\n")
    status_line = head.split(b"\r\n", 1)[0].split(b" ")
    return int(status_line[1]), body, data


def data_with_faq(fixture, work):
    """A data folder of its own with the fixture's models (linked) and its "faq" collection (copied:
    the fixture is shared with other tests)."""
    data = os.path.join(work, "data")
    os.makedirs(os.path.join(data, "collections"))
    os.symlink(os.path.realpath(os.path.join(fixture, "models")), os.path.join(data, "models"))
    shutil.copytree(os.path.join(fixture, "collections", "faq"), os.path.join(data, "collections", "faq"))
    return data


class Checks:
    def __init__(self):
        self.passed, self.failed = 0, []

    def check(self, name, ok, detail=""):
        print("%-4s %-64s %s" % ("ok" if ok else "FAIL", name, str(detail)[:200]), flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed.append("%s: %s" % (name, detail))

    def finish(self, work):
        """Prints the servers' logs in `work` when a check failed, removes `work`, prints the summary;
        returns the exit code."""
        if self.failed:
            for log in sorted(os.listdir(work)):
                if log.endswith(".log"):
                    print(
                        "--- %s (last lines)\n%s" % (log, open(os.path.join(work, log)).read()[-3000:]), file=sys.stderr
                    )
        shutil.rmtree(work, ignore_errors=True)
        print("%d passed, %d failed" % (self.passed, len(self.failed)))
        for failure in self.failed:
            print("FAILED: " + failure)
        return 1 if self.failed else 0


def error_code(body):
    try:
        return json.loads(body)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return None


def multipart(files):
    body = b""
    for name, text in files:
        body += (
            b'--kb\r\nContent-Disposition: form-data; name="files"; filename="'
            + name.encode()
            + b'"\r\nContent-Type: text/markdown\r\n\r\n'
            + text
            + b"\r\n"
        )
    return body + b"--kb--\r\n"


def upload(port, collection, files, headers=None, query=""):
    """A multipart upload of {name: text or bytes}; returns the job id."""
    body = multipart([(name, text if isinstance(text, bytes) else text.encode()) for name, text in files.items()])
    status, answer, _ = request(
        port,
        "POST",
        "/v1/collections/%s/documents%s" % (collection, query),
        body,
        dict({"Content-Type": "multipart/form-data; boundary=kb"}, **(headers or {})),
    )
    assert status == 202, (status, answer)
    return json.loads(answer)["id"]


def wait_job(port, job, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        status, answer = json_request(port, "GET", "/v1/jobs/" + job)
        if status == 200 and answer["state"] not in ("queued", "running"):
            return answer
        time.sleep(0.05)
    return None
