"""Kotae's Python client: `Kotae` (sync) and `AsyncKotae` (async) over the HTTP API, the events of
a streamed answer, and the errors they raise. Retrievers for LangChain, LlamaIndex and Haystack are
in kotae.integrations (install the extra of the framework: kotae[langchain], ...)."""

from importlib.metadata import PackageNotFoundError, version

from .async_client import AsyncKotae
from .client import Kotae
from .errors import APIConnectionError, APIError, KotaeError
from .streaming import AskEvent, Citations, Done, Restart, Sources, Timings, Token

try:
    __version__ = version("kotae")
except PackageNotFoundError:  # run from a source tree that was not installed
    __version__ = "0+unknown"

__all__ = [
    "Kotae",
    "AsyncKotae",
    "KotaeError",
    "APIError",
    "APIConnectionError",
    "AskEvent",
    "Sources",
    "Token",
    "Restart",
    "Citations",
    "Timings",
    "Done",
    "__version__",
]
