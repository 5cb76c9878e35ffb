"""The exceptions the client raises: the server's JSON errors keep their code and message."""

from __future__ import annotations

from typing import Any, Optional


class KotaeError(Exception):
    """Every error this package raises."""


class APIError(KotaeError):
    """The server answered with an error (`{"error": {"code", "type", "message"}}`), either as the
    response's status, or as an `error` event after a stream began (status 200 then)."""

    def __init__(self, status_code: int, code: str, message: str, body: Optional[Any] = None) -> None:
        super().__init__("%d %s: %s" % (status_code, code, message))
        self.status_code = status_code
        self.code = code
        self.message = message
        self.body = body


class APIConnectionError(KotaeError):
    """The request did not get an answer: the server could not be reached, or it timed out."""


def api_error(status_code: int, body: Any) -> APIError:
    """The APIError for an error body; a body that is not Kotae's envelope (a proxy's page, say)
    still gives one, with the code `http_STATUS`."""
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("code"), str):
        return APIError(status_code, error["code"], str(error.get("message", "")), body)
    return APIError(status_code, "http_%d" % status_code, str(body)[:500], body)
