"""What a service manager sees of `kotae serve` (systemd's Type=notify and ExecReload): READY=1 on
$NOTIFY_SOCKET once the server answers /readyz (not before), SIGHUP reads the --api-keys file again (a
new key works, a removed one stops working, a broken file keeps the keys in force and says why), and
a key stored with `kotae keygen --store DATA` works without a reload, and STOPPING=1 at SIGTERM. A real server, a real datagram socket; no systemd needed."""

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

from kotae_http import Checks, Server, data_with_faq, request


def write_keys(path, *keys):
    with open(path, "w") as f:
        json.dump(
            {
                "keys": [
                    {"name": k, "tenant": "t%d" % i, "sha256": hashlib.sha256(k.encode()).hexdigest()}
                    for i, k in enumerate(keys)
                ]
            },
            f,
        )


def status_with(port, key):
    return request(port, "GET", "/v1/collections", None, {"Authorization": "Bearer " + key})[0]


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="kotae-notify-")
    checks = Checks()
    data = data_with_faq(fixture, work)
    notify_path = os.path.join(work, "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(notify_path)
    sock.settimeout(0.2)
    keys = os.path.join(work, "keys.json")
    write_keys(keys, "kt_first_key_0001")
    os.environ["NOTIFY_SOCKET"] = notify_path
    server = Server(binary, data, os.path.join(work, "serve.log"), ["--api-keys", keys])
    server.start(wait_ready=False)
    del os.environ["NOTIFY_SOCKET"]
    messages = []

    def receive(until, timeout=120):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                message = sock.recv(4096).decode()
            except socket.timeout:
                continue
            ready_now = request(server.port, "GET", "/readyz")[0]
            messages.append((message, ready_now))
            if until in message:
                return message, ready_now
        return None, None

    try:
        message, ready_now = receive("READY=1")
        checks.check(
            "READY=1 arrives on $NOTIFY_SOCKET",
            message is not None and "STATUS=serving on port %d" % server.port in message,
            messages,
        )
        checks.check("... when the server is ready (/readyz 200)", ready_now == 200, ready_now)
        checks.check("the first key works", status_with(server.port, "kt_first_key_0001") == 200)

        write_keys(keys, "kt_second_key_002")
        os.kill(server.process.pid, signal.SIGHUP)
        ok = lambda: status_with(server.port, "kt_second_key_002") == 200
        deadline = time.time() + 10
        while time.time() < deadline and not ok():
            time.sleep(0.05)
        checks.check("SIGHUP: the key added to the file works", ok())
        checks.check("... the key removed from it no longer does", status_with(server.port, "kt_first_key_0001") == 401)
        with open(keys, "w") as f:
            f.write("{ not json")
        os.kill(server.process.pid, signal.SIGHUP)
        read_log = lambda: open(os.path.join(work, "serve.log")).read()
        deadline = time.time() + 10
        while time.time() < deadline and "api_keys_not_reloaded" not in read_log():
            time.sleep(0.05)
        log = read_log()
        checks.check(
            "a broken keys file: the keys in force stay, and the log says why",
            status_with(server.port, "kt_second_key_002") == 200 and "api_keys_not_reloaded" in log,
            log[-300:],
        )
        checks.check("the server is alive after its reloads", server.alive())

        # A key stored beside the collections (DATA/server.db) while the server runs: heard by its change
        # follower, no reload needed.
        made = subprocess.run(
            [binary, "keygen", "--data", data, "--store", data, "--tenant", "carol"], capture_output=True, text=True
        )
        carol = json.loads(made.stdout)["key"] if made.returncode == 0 else ""
        checks.check("kotae keygen --store DATA: exit 0", carol.startswith("kt_"), made.stderr[-300:])
        deadline = time.time() + 10
        while time.time() < deadline and status_with(server.port, carol) != 200:
            time.sleep(0.05)
        checks.check("... the running server accepts the stored key", status_with(server.port, carol) == 200)
        checks.check("... and still the file's", status_with(server.port, "kt_second_key_002") == 200)
        server.process.send_signal(signal.SIGTERM)
        message = None
        deadline = time.time() + 30
        while message is None and time.time() < deadline:
            try:
                got = sock.recv(4096).decode()
                message = got if "STOPPING=1" in got else None
            except socket.timeout:
                pass
        checks.check("SIGTERM: STOPPING=1", message is not None, messages[-2:])
        checks.check("... and it exits 0", server.process.wait(timeout=60) == 0)
    finally:
        if server.alive():
            server.stop()
        sock.close()
    return checks.finish(work)


if __name__ == "__main__":
    sys.exit(main())
