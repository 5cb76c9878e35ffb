"""The shapes of the server's JSON (server/openapi.json), as TypedDicts: responses are the decoded
JSON itself, so a field the server adds later is there too, and options are checked by type
checkers without a runtime layer."""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, Union

from typing_extensions import NotRequired, TypedDict

SearchMode = Literal["hybrid", "bm25", "vector"]
Backend = Literal["llama", "openai", "workers", "extractive"]
JobState = Literal["queued", "running", "succeeded", "partial", "failed", "cancelled"]


class SearchFilters(TypedDict, total=False):
    path_prefix: str
    formats: Union[str, List[str]]


class SearchOptions(TypedDict, total=False):
    mode: SearchMode
    k: int
    rerank: bool
    filters: SearchFilters


class GenerationOptions(TypedDict, total=False):
    min_relevance: float
    max_tokens: int
    temperature: float
    top_p: float
    seed: int
    stop: Union[str, List[str]]
    backends: Union[Backend, List[Backend]]


class AskOptions(SearchOptions, GenerationOptions, total=False):
    conversation_id: str
    cache: bool


class ChatOptions(SearchOptions, GenerationOptions, total=False):
    model: str
    collection: str


class CollectionOptions(TypedDict, total=False):
    embedder: str
    chunk_tokens: int
    overlap_tokens: int


class Collection(TypedDict):
    name: str
    object: str
    embedder: str
    embedder_id: str
    dimension: int
    chunk_tokens: int
    overlap_tokens: int
    documents: int
    chunks: int
    size_bytes: int
    role: NotRequired[str]  # the caller's role over it: reader, editor, owner or admin


class Document(TypedDict):
    id: int
    object: str
    path: str
    title: str
    format: str
    size_bytes: int
    sha256: str
    chunks: int
    metadata: Dict[str, Any]


class JobFile(TypedDict):
    name: str
    status: str
    chunks: int
    bytes: int
    error: NotRequired[str]
    ocr_pages: NotRequired[int]  # only for a file with pages to OCR (a scan, an image)
    ocr_pages_done: NotRequired[int]


class JobProgress(TypedDict):
    files_done: int
    files_total: int
    chunks: int
    bytes_done: int
    bytes_total: int


class Job(TypedDict):
    id: str
    object: str
    collection: str
    state: JobState
    files: List[JobFile]
    progress: JobProgress
    created_at: float
    started_at: Optional[float]
    finished_at: Optional[float]


class SearchHit(TypedDict):
    rank: int
    score: float
    chunk_id: int
    document: str
    title: str
    format: str
    page_first: int
    page_last: int
    heading_path: List[str]
    span: List[int]
    bm25_rank: int
    vector_rank: int
    text: str
    rerank_score: NotRequired[float]
    table: NotRequired[str]  # a piece of a table: the table or sheet, and which rows
    row_first: NotRequired[int]
    row_last: NotRequired[int]


class SearchResponse(TypedDict):
    query: str
    mode: SearchMode
    hits: List[SearchHit]
    timing_ms: Dict[str, float]
    collection: str


class Citation(TypedDict):
    number: int
    chunk_id: int
    document: str
    title: str
    page: Optional[int]
    start: int
    end: int
    text: str
    answer_start: int
    answer_end: int
    table_header: NotRequired[str]  # a cited table row's header lines


class Source(TypedDict):
    number: int
    chunk_id: int
    document: str
    title: str
    page_first: int
    page_last: int
    start: int
    end: int
    relevance: float
    score: float
    heading_path: List[str]
    text: str
    table: NotRequired[str]  # a piece of a table: the table or sheet, and which rows
    row_first: NotRequired[int]
    row_last: NotRequired[int]


class Answer(TypedDict):
    question: str
    answer: str
    backend: str
    covered: bool
    citations: List[Citation]
    sources: List[Source]
    fallbacks: List[Dict[str, Any]]
    timings_ms: Dict[str, float]
    generation: Dict[str, Any]
    conversation_id: str
    collection: str
    cache: str


class ConversationSummary(TypedDict):
    id: str
    object: str
    collection: str
    title: str
    created_at: float  # unix seconds
    updated_at: float
    turns: int  # how many


class ConversationTurn(TypedDict):
    question: str
    answer: str
    covered: bool
    sources: List[Source]
    citations: List[Citation]
    created_at: float


class Conversation(TypedDict):
    id: str
    object: str
    collection: str
    title: str
    created_at: float
    updated_at: float
    turns: List[ConversationTurn]


class Embedding(TypedDict):
    object: str
    index: int
    embedding: List[float]


class EmbeddingList(TypedDict):
    object: str
    data: List[Embedding]
    model: str
    usage: Dict[str, int]


class RerankResult(TypedDict):
    index: int
    relevance_score: float
    document: NotRequired[Dict[str, str]]


class RerankResults(TypedDict):
    object: str
    model: str
    results: List[RerankResult]


class Model(TypedDict):
    id: str
    object: str
    created: int
    owned_by: str
    kind: Literal["embedding", "rerank", "chat"]


class ChatMessage(TypedDict):
    role: Literal["system", "user", "assistant"]
    content: str
