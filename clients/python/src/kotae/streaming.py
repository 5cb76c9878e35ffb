"""Server-Sent Events: the decoder both clients feed line by line, and the events of a streamed
`/v1/ask` (sources, tokens, then citations, timings and the whole answer)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple, Union

from .errors import APIError, api_error
from .types import Answer, Citation, Source


class EventDecoder:
    """Turns the lines of a text/event-stream into (event name, decoded JSON data) pairs."""

    def __init__(self) -> None:
        self._name = "message"
        self._data: List[str] = []

    def feed(self, line: str) -> Optional[Tuple[str, Any]]:
        """Takes one line (without its end); returns the event a blank line completes."""
        if line == "":
            if not self._data:
                return None
            event = (self._name, json.loads("\n".join(self._data)))
            self._name, self._data = "message", []
            return event
        if line.startswith(":"):
            return None  # a comment (keep-alive)
        key, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if key == "event":
            self._name = value
        elif key == "data":
            self._data.append(value)
        return None


@dataclass(frozen=True)
class Sources:
    """The passages the answer draws on; sent first (and again after a Restart)."""

    conversation_id: str
    sources: List[Source]


@dataclass(frozen=True)
class Token:
    """A piece of the answer's text."""

    text: str


@dataclass(frozen=True)
class Restart:
    """A back-end failed mid-answer: drop the tokens so far; the next back-end answers."""


@dataclass(frozen=True)
class Citations:
    """The whole answer's text and what its [n] markers cite."""

    answer: str
    citations: List[Citation]


@dataclass(frozen=True)
class Timings:
    timings_ms: Dict[str, float]


@dataclass(frozen=True)
class Done:
    """The last event: the answer as a non-streamed /v1/ask returns it."""

    answer: Answer


AskEvent = Union[Sources, Token, Restart, Citations, Timings, Done]


def ask_event(name: str, data: Any) -> Optional[AskEvent]:
    """The typed event for one SSE event of /v1/ask; None for an event this client does not know
    (a newer server's); an `error` event raises APIError."""
    if name == "error":
        raise stream_error(data)
    if name == "sources":
        return Sources(data["conversation_id"], data["sources"])
    if name == "token":
        return Token(data["text"])
    if name == "restart":
        return Restart()
    if name == "citations":
        return Citations(data["answer"], data["citations"])
    if name == "timings":
        return Timings(data["timings_ms"])
    if name == "done":
        return Done(data)
    return None


def stream_error(data: Any) -> APIError:
    # The stream's status was 200 when it began; the error event carries the code and message.
    return api_error(200, data)
