"""Kotae: the synchronous client."""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import httpx
from typing_extensions import Unpack

from . import calls
from .streaming import AskEvent, EventDecoder, ask_event
from .transport import (
    DEFAULT_BASE_URL,
    DEFAULT_TIMEOUT,
    UploadFile,
    connection_error,
    decode,
    file_parts,
    is_finished,
    new_http_client,
)
from .types import (
    Answer,
    AskOptions,
    ChatMessage,
    ChatOptions,
    Collection,
    CollectionOptions,
    Conversation,
    ConversationSummary,
    Document,
    EmbeddingList,
    Job,
    Model,
    RerankResults,
    SearchOptions,
    SearchResponse,
)


class Kotae:
    """A client of one Kotae server. `http_client` replaces the httpx.Client it would create (then
    base_url, api_key and timeout are that client's business)."""

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        *,
        api_key: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        http_client: Optional[httpx.Client] = None,
    ) -> None:
        self._http = http_client or new_http_client(httpx.Client, base_url, api_key, timeout)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Kotae":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- Collections and documents ---------------------------------------------------------------
    def create_collection(self, name: str, **options: Unpack[CollectionOptions]) -> Collection:
        return self._send(calls.create_collection(name, options))

    def collections(self) -> List[Collection]:
        return self._send(calls.list_collections())["data"]

    def collection(self, name: str) -> Collection:
        return self._send(calls.get_collection(name))

    def delete_collection(self, name: str) -> Dict[str, Any]:
        return self._send(calls.delete_collection(name))

    def documents(self, collection: str) -> List[Document]:
        return self._send(calls.list_documents(collection))["data"]

    def delete_document(self, collection: str, document_id: int) -> Dict[str, Any]:
        return self._send(calls.delete_document(collection, document_id))

    def upload(
        self,
        collection: str,
        files: Sequence[UploadFile],
        *,
        wait: bool = True,
        on_progress: Optional[Callable[[Job], None]] = None,
    ) -> Job:
        """Uploads files to be indexed. With wait (the default) returns the job once it is over
        (its `state` says how it went), calling on_progress with each change; else at once."""
        job: Job = self._send(calls.upload_documents(collection), files=file_parts(files))
        return self.wait_for_job(job["id"], on_progress) if wait else job

    # --- Ingestion jobs --------------------------------------------------------------------------
    def jobs(self) -> List[Job]:
        return self._send(calls.list_jobs())["data"]

    def job(self, job_id: str) -> Job:
        return self._send(calls.get_job(job_id))

    def cancel_job(self, job_id: str) -> Job:
        return self._send(calls.cancel_job(job_id))

    def job_events(self, job_id: str) -> Iterator[Job]:
        """The job at once and after every change, until it is over."""
        for _, job in self._stream(calls.job_events(job_id)):
            yield job

    def wait_for_job(self, job_id: str, on_progress: Optional[Callable[[Job], None]] = None) -> Job:
        for job in self.job_events(job_id):
            if on_progress:
                on_progress(job)
            if is_finished(job):
                return job
        return self.job(job_id)  # the stream ended first (it lasts an hour at most)

    # --- Search and answers ----------------------------------------------------------------------
    def search(self, collection: str, query: str, **options: Unpack[SearchOptions]) -> SearchResponse:
        return self._send(calls.search(collection, query, options))

    def ask(self, collection: str, question: str, **options: Unpack[AskOptions]) -> Answer:
        return self._send(calls.ask(collection, question, options))

    def ask_stream(self, collection: str, question: str, **options: Unpack[AskOptions]) -> Iterator[AskEvent]:
        """The answer as it is written: Sources, Token pieces, then Citations, Timings and Done.
        An error after the stream began raises APIError (status_code 200)."""
        for name, data in self._stream(calls.ask(collection, question, options, stream=True)):
            event = ask_event(name, data)
            if event is not None:
                yield event

    def ask_later(self, collection: str, question: str, **options: Unpack[AskOptions]) -> Dict[str, Any]:
        """Asks without waiting (the body's `async`): the task at once; task(id) gives the answer."""
        return self._send(calls.ask(collection, question, options, later=True))

    def task(self, task_id: str) -> Dict[str, Any]:
        """A question asked with async=True: its status, then `answer` or `error`."""
        return self._send(calls.get_task(task_id))

    # --- Conversations (of ask: conversation_id) -------------------------------------------------
    def conversations(
        self, *, collection: Optional[str] = None, limit: Optional[int] = None
    ) -> List[ConversationSummary]:
        """Stored conversations, most recently updated first; `turns` is a count."""
        return (self._send(calls.list_conversations(collection, limit)))["data"]

    def conversation(self, conversation_id: str) -> Conversation:
        """A conversation with every turn: question, answer, sources and citations."""
        return self._send(calls.get_conversation(conversation_id))

    def rename_conversation(self, conversation_id: str, title: str) -> ConversationSummary:
        return self._send(calls.rename_conversation(conversation_id, title))

    def delete_conversation(self, conversation_id: str) -> Dict[str, Any]:
        return self._send(calls.delete_conversation(conversation_id))

    # --- Models: embeddings, reranking, chat -----------------------------------------------------
    def embeddings(
        self, texts: Union[str, Sequence[str]], *, model: Optional[str] = None, input_type: Optional[str] = None
    ) -> EmbeddingList:
        return self._send(calls.embeddings(texts, model, input_type))

    def rerank(
        self,
        query: str,
        documents: Sequence[str],
        *,
        top_n: Optional[int] = None,
        return_documents: Optional[bool] = None,
    ) -> RerankResults:
        return self._send(calls.rerank(query, documents, top_n, return_documents))

    def models(self) -> List[Model]:
        return self._send(calls.list_models())["data"]

    def chat_completions(self, messages: List[ChatMessage], **options: Unpack[ChatOptions]) -> Dict[str, Any]:
        """OpenAI's chat completion; with collection=NAME grounded on it (the answer's `kotae` object
        has its citations). For streaming, OpenAI's own clients work against /v1."""
        return self._send(calls.chat_completions(messages, options))

    def ready(self) -> Dict[str, Any]:
        """/readyz: the loaded models (raises APIError 503 while they load)."""
        return self._send(calls.readiness())

    # --- HTTP ------------------------------------------------------------------------------------
    def _send(self, call: calls.Call, **request: Any) -> Any:
        try:
            response = self._http.request(call.method, call.path, json=call.json, params=call.query, **request)
        except httpx.TransportError as error:
            raise connection_error(error) from error
        return decode(response)

    def _stream(self, call: calls.Call) -> Iterator[Tuple[str, Any]]:
        try:
            with self._http.stream(call.method, call.path, json=call.json) as response:
                if response.status_code >= 400:
                    response.read()
                    decode(response)  # raises the error
                decoder = EventDecoder()
                for line in response.iter_lines():
                    event = decoder.feed(line)
                    if event is not None:
                        yield event
        except httpx.TransportError as error:
            raise connection_error(error) from error
