"""AsyncKotae: the asynchronous client (asyncio or trio, through httpx); the same methods as Kotae."""

from __future__ import annotations

from typing import Any, AsyncIterator, Awaitable, Callable, Dict, List, Optional, Sequence, Tuple, Union

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


class AsyncKotae:
    """Kotae's methods, each to await (ask_stream and job_events are async iterators); on_progress
    may be a coroutine function. `http_client`: an httpx.AsyncClient to use instead of a new one."""

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        *,
        api_key: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        http_client: Optional[httpx.AsyncClient] = None,
    ) -> None:
        self._http = http_client or new_http_client(httpx.AsyncClient, base_url, api_key, timeout)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncKotae":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # --- Collections and documents ---------------------------------------------------------------
    async def create_collection(self, name: str, **options: Unpack[CollectionOptions]) -> Collection:
        return await self._send(calls.create_collection(name, options))

    async def collections(self) -> List[Collection]:
        return (await self._send(calls.list_collections()))["data"]

    async def collection(self, name: str) -> Collection:
        return await self._send(calls.get_collection(name))

    async def delete_collection(self, name: str) -> Dict[str, Any]:
        return await self._send(calls.delete_collection(name))

    async def documents(self, collection: str) -> List[Document]:
        return (await self._send(calls.list_documents(collection)))["data"]

    async def delete_document(self, collection: str, document_id: int) -> Dict[str, Any]:
        return await self._send(calls.delete_document(collection, document_id))

    async def upload(
        self,
        collection: str,
        files: Sequence[UploadFile],
        *,
        wait: bool = True,
        on_progress: Optional[Callable[[Job], Optional[Awaitable[None]]]] = None,
    ) -> Job:
        """Uploads files to be indexed. With wait (the default) returns the job once it is over
        (its `state` says how it went), calling on_progress with each change; else at once."""
        job: Job = await self._send(calls.upload_documents(collection), files=file_parts(files))
        return await self.wait_for_job(job["id"], on_progress) if wait else job

    # --- Ingestion jobs --------------------------------------------------------------------------
    async def jobs(self) -> List[Job]:
        return (await self._send(calls.list_jobs()))["data"]

    async def job(self, job_id: str) -> Job:
        return await self._send(calls.get_job(job_id))

    async def cancel_job(self, job_id: str) -> Job:
        return await self._send(calls.cancel_job(job_id))

    async def job_events(self, job_id: str) -> AsyncIterator[Job]:
        """The job at once and after every change, until it is over."""
        async for _, job in self._stream(calls.job_events(job_id)):
            yield job

    async def wait_for_job(
        self, job_id: str, on_progress: Optional[Callable[[Job], Optional[Awaitable[None]]]] = None
    ) -> Job:
        async for job in self.job_events(job_id):
            if on_progress:
                result = on_progress(job)
                if result is not None:
                    await result  # a coroutine function is awaited
            if is_finished(job):
                return job
        return await self.job(job_id)  # the stream ended first (it lasts an hour at most)

    # --- Search and answers ----------------------------------------------------------------------
    async def search(self, collection: str, query: str, **options: Unpack[SearchOptions]) -> SearchResponse:
        return await self._send(calls.search(collection, query, options))

    async def ask(self, collection: str, question: str, **options: Unpack[AskOptions]) -> Answer:
        return await self._send(calls.ask(collection, question, options))

    async def ask_stream(
        self, collection: str, question: str, **options: Unpack[AskOptions]
    ) -> AsyncIterator[AskEvent]:
        """The answer as it is written: Sources, Token pieces, then Citations, Timings and Done.
        An error after the stream began raises APIError (status_code 200)."""
        async for name, data in self._stream(calls.ask(collection, question, options, stream=True)):
            event = ask_event(name, data)
            if event is not None:
                yield event

    async def ask_later(self, collection: str, question: str, **options: Unpack[AskOptions]) -> Dict[str, Any]:
        """Asks without waiting (the body's `async`): the task at once; task(id) gives the answer."""
        return await self._send(calls.ask(collection, question, options, later=True))

    async def task(self, task_id: str) -> Dict[str, Any]:
        """A question asked with async=True: its status, then `answer` or `error`."""
        return await self._send(calls.get_task(task_id))

    # --- Conversations (of ask: conversation_id) -------------------------------------------------
    async def conversations(
        self, *, collection: Optional[str] = None, limit: Optional[int] = None
    ) -> List[ConversationSummary]:
        """Stored conversations, most recently updated first; `turns` is a count."""
        return (await self._send(calls.list_conversations(collection, limit)))["data"]

    async def conversation(self, conversation_id: str) -> Conversation:
        """A conversation with every turn: question, answer, sources and citations."""
        return await self._send(calls.get_conversation(conversation_id))

    async def rename_conversation(self, conversation_id: str, title: str) -> ConversationSummary:
        return await self._send(calls.rename_conversation(conversation_id, title))

    async def delete_conversation(self, conversation_id: str) -> Dict[str, Any]:
        return await self._send(calls.delete_conversation(conversation_id))

    # --- Models: embeddings, reranking, chat -----------------------------------------------------
    async def embeddings(
        self, texts: Union[str, Sequence[str]], *, model: Optional[str] = None, input_type: Optional[str] = None
    ) -> EmbeddingList:
        return await self._send(calls.embeddings(texts, model, input_type))

    async def rerank(
        self,
        query: str,
        documents: Sequence[str],
        *,
        top_n: Optional[int] = None,
        return_documents: Optional[bool] = None,
    ) -> RerankResults:
        return await self._send(calls.rerank(query, documents, top_n, return_documents))

    async def models(self) -> List[Model]:
        return (await self._send(calls.list_models()))["data"]

    async def chat_completions(self, messages: List[ChatMessage], **options: Unpack[ChatOptions]) -> Dict[str, Any]:
        """OpenAI's chat completion; with collection=NAME grounded on it (the answer's `kotae` object
        has its citations). For streaming, OpenAI's own clients work against /v1."""
        return await self._send(calls.chat_completions(messages, options))

    async def ready(self) -> Dict[str, Any]:
        """/readyz: the loaded models (raises APIError 503 while they load)."""
        return await self._send(calls.readiness())

    # --- HTTP ------------------------------------------------------------------------------------
    async def _send(self, call: calls.Call, **request: Any) -> Any:
        try:
            response = await self._http.request(call.method, call.path, json=call.json, params=call.query, **request)
        except httpx.TransportError as error:
            raise connection_error(error) from error
        return decode(response)

    async def _stream(self, call: calls.Call) -> AsyncIterator[Tuple[str, Any]]:
        try:
            async with self._http.stream(call.method, call.path, json=call.json) as response:
                if response.status_code >= 400:
                    await response.aread()
                    decode(response)  # raises the error
                decoder = EventDecoder()
                async for line in response.aiter_lines():
                    event = decoder.feed(line)
                    if event is not None:
                        yield event
        except httpx.TransportError as error:
            raise connection_error(error) from error
