"""What each API operation sends: method, route (as server/openapi.json names it), path, JSON body
and query. The sync and async clients send these, so the two cannot drift apart, and the contract
test checks every route and body field against openapi.json."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union
from urllib.parse import quote

from .types import AskOptions, ChatMessage, ChatOptions, CollectionOptions, SearchOptions


@dataclass(frozen=True)
class Call:
    method: str
    route: str
    path_params: Dict[str, str] = field(default_factory=dict)
    json: Optional[Dict[str, Any]] = None
    query: Optional[Dict[str, Any]] = None  # the query string's parameters; None values left out

    @property
    def path(self) -> str:
        # Names and ids are quoted: a collection name may hold '.', never '/'.
        return self.route.format(**{k: quote(v, safe="") for k, v in self.path_params.items()})


def _body(required: Mapping[str, Any], options: Mapping[str, Any]) -> Dict[str, Any]:
    # None means "the server's default": the key is left out (the server reads null as absent too).
    return {**required, **{k: v for k, v in options.items() if v is not None}}


def readiness() -> Call:
    return Call("GET", "/readyz")


def create_collection(name: str, options: CollectionOptions) -> Call:
    return Call("POST", "/v1/collections", json=_body({"name": name}, options))


def list_collections() -> Call:
    return Call("GET", "/v1/collections")


def get_collection(name: str) -> Call:
    return Call("GET", "/v1/collections/{name}", {"name": name})


def delete_collection(name: str) -> Call:
    return Call("DELETE", "/v1/collections/{name}", {"name": name})


def list_documents(collection: str) -> Call:
    return Call("GET", "/v1/collections/{name}/documents", {"name": collection})


def upload_documents(collection: str) -> Call:
    """The files go as multipart/form-data parts named `files` (UploadForm), added by the client."""
    return Call("POST", "/v1/collections/{name}/documents", {"name": collection})


def delete_document(collection: str, document_id: int) -> Call:
    return Call("DELETE", "/v1/collections/{name}/documents/{id}", {"name": collection, "id": str(document_id)})


def list_jobs() -> Call:
    return Call("GET", "/v1/jobs")


def get_job(job_id: str) -> Call:
    return Call("GET", "/v1/jobs/{id}", {"id": job_id})


def cancel_job(job_id: str) -> Call:
    return Call("DELETE", "/v1/jobs/{id}", {"id": job_id})


def job_events(job_id: str) -> Call:
    return Call("GET", "/v1/jobs/{id}/events", {"id": job_id})


def search(collection: str, query: str, options: SearchOptions) -> Call:
    return Call("POST", "/v1/search", json=_body({"collection": collection, "query": query}, options))


def ask(collection: str, question: str, options: AskOptions, *, stream: bool = False, later: bool = False) -> Call:
    """stream: as Server-Sent Events; later: 202 with a task to poll (the body's `async`)."""
    required: Dict[str, Any] = {"collection": collection, "question": question}
    if stream:
        required["stream"] = True
    if later:
        required["async"] = True
    return Call("POST", "/v1/ask", json=_body(required, options))


def get_task(task_id: str) -> Call:
    return Call("GET", "/v1/tasks/{id}", {"id": task_id})


def list_conversations(collection: Optional[str], limit: Optional[int]) -> Call:
    return Call("GET", "/v1/conversations", query=_body({}, {"collection": collection, "limit": limit}))


def get_conversation(conversation_id: str) -> Call:
    return Call("GET", "/v1/conversations/{id}", {"id": conversation_id})


def rename_conversation(conversation_id: str, title: str) -> Call:
    return Call("PATCH", "/v1/conversations/{id}", {"id": conversation_id}, json={"title": title})


def delete_conversation(conversation_id: str) -> Call:
    return Call("DELETE", "/v1/conversations/{id}", {"id": conversation_id})


def embeddings(texts: Union[str, Sequence[str]], model: Optional[str], input_type: Optional[str]) -> Call:
    text_input = texts if isinstance(texts, str) else list(texts)
    options = {"model": model, "input_type": input_type}
    return Call("POST", "/v1/embeddings", json=_body({"input": text_input, "encoding_format": "float"}, options))


def rerank(query: str, documents: Sequence[str], top_n: Optional[int], return_documents: Optional[bool]) -> Call:
    options = {"top_n": top_n, "return_documents": return_documents}
    return Call("POST", "/v1/rerank", json=_body({"query": query, "documents": list(documents)}, options))


def list_models() -> Call:
    return Call("GET", "/v1/models")


def chat_completions(messages: List[ChatMessage], options: ChatOptions) -> Call:
    return Call("POST", "/v1/chat/completions", json=_body({"messages": list(messages)}, options))
