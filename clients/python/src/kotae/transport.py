"""What the sync and async clients share around httpx: headers, turning a response into JSON or
an APIError, the multipart parts of an upload, and when a job is over."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, List, Optional, Sequence, Tuple, Type, TypeVar, Union

import httpx

from .errors import APIConnectionError, api_error
from .types import Job

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
DEFAULT_TIMEOUT = 120.0  # a cold answer from a local generator can take a while

# A file to upload: a path (uploaded under its file name), or (file name, bytes).
UploadFile = Union[str, "os.PathLike[str]", Tuple[str, bytes]]

FINISHED_STATES = frozenset({"succeeded", "partial", "failed", "cancelled"})


HttpClient = TypeVar("HttpClient", httpx.Client, httpx.AsyncClient)


def new_http_client(cls: Type[HttpClient], base_url: str, api_key: Optional[str], timeout: float) -> HttpClient:
    """The httpx client both Kotae clients make when they are not given one."""
    return cls(base_url=base_url, headers={"Authorization": "Bearer %s" % api_key} if api_key else {}, timeout=timeout)


def connection_error(error: httpx.TransportError) -> APIConnectionError:
    return APIConnectionError(str(error) or type(error).__name__)


def decode(response: httpx.Response) -> Any:
    """The JSON body of a successful response; raises APIError for a 4xx or 5xx."""
    try:
        body = response.json() if response.content else None
    except ValueError:
        body = response.text
    if response.status_code >= 400:
        raise api_error(response.status_code, body)
    return body


def file_parts(files: Sequence[UploadFile]) -> List[Tuple[str, Tuple[str, bytes]]]:
    """multipart parts named `files`; the server indexes each under its file name."""
    parts = []
    for item in files:
        name, content = item if isinstance(item, tuple) else (Path(item).name, Path(item).read_bytes())
        parts.append(("files", (name, content)))
    return parts


def is_finished(job: Job) -> bool:
    return job["state"] in FINISHED_STATES
