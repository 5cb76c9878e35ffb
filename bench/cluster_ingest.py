"""Ingestion rate of one server as a client sees it: uploads FILES to COLLECTION in one job and waits
for it; chunks/s runs from the job's creation to its end (whoever indexes it: the server itself, or
the workers its queue feeds). Prints one JSON line: name=ingest, mode=MODE, files, chunks, seconds,
chunks_per_s, state.

Usage: cluster_ingest.py URL COLLECTION MODE FILE... Python standard library only."""

import json
import os
import sys
import time
import urllib.request


def call(url, method="GET", body=None, content_type="application/json"):
    request = urllib.request.Request(url, data=body, method=method, headers={"Content-Type": content_type})
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.loads(response.read())


def main():
    url, collection, mode, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    call(url + "/v1/collections", "POST", json.dumps({"name": collection}).encode())
    body = b""
    for i, path in enumerate(files):
        name = "%03d-%s" % (i, os.path.basename(path))
        with open(path, "rb") as f:
            body += (
                b'--kb\r\nContent-Disposition: form-data; name="files"; filename="%s"\r\n\r\n' % name.encode()
                + f.read()
                + b"\r\n"
            )
    job = call(
        url + "/v1/collections/%s/documents" % collection,
        "POST",
        body + b"--kb--\r\n",
        "multipart/form-data; boundary=kb",
    )
    while job["state"] in ("queued", "running"):
        time.sleep(0.05)
        job = call(url + "/v1/jobs/" + job["id"])
    seconds = job["finished_at"] - job["created_at"]
    chunks = job["progress"]["chunks"]
    print(
        json.dumps(
            {
                "name": "ingest",
                "mode": mode,
                "files": len(files),
                "chunks": chunks,
                "seconds": seconds,
                "chunks_per_s": chunks / seconds if seconds > 0 else None,
                "state": job["state"],
            }
        )
    )


if __name__ == "__main__":
    main()
