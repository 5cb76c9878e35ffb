"""A LangChain retriever over Kotae's /v1/search (pip install 'kotae[langchain]')."""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import PrivateAttr

from ..async_client import AsyncKotae
from ..client import Kotae
from ..transport import DEFAULT_BASE_URL
from ..types import SearchResponse
from .hits import hit_id, hit_metadata, search_options


class KotaeRetriever(BaseRetriever):
    """Documents for a query from one collection, best first. Each Document's metadata has the
    source's `document` (path), `title`, `page` (None without pages), byte span `start`/`end`,
    `heading_path` and `score`."""

    collection: str
    base_url: str = DEFAULT_BASE_URL
    api_key: Optional[str] = None
    k: int = 4
    mode: Optional[Literal["hybrid", "bm25", "vector"]] = None
    rerank: Optional[bool] = None
    filters: Optional[Dict[str, Any]] = None

    _client: Optional[Kotae] = PrivateAttr(default=None)
    _async_client: Optional[AsyncKotae] = PrivateAttr(default=None)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> List[Document]:
        if self._client is None:
            self._client = Kotae(self.base_url, api_key=self.api_key)
        return self._documents(self._client.search(self.collection, query, **self._options()))

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> List[Document]:
        if self._async_client is None:
            self._async_client = AsyncKotae(self.base_url, api_key=self.api_key)
        return self._documents(await self._async_client.search(self.collection, query, **self._options()))

    def _options(self) -> Any:
        return search_options(self.k, self.mode, self.rerank, self.filters)

    def _documents(self, response: SearchResponse) -> List[Document]:
        return [
            Document(
                page_content=hit["text"], id=hit_id(hit, self.collection), metadata=hit_metadata(hit, self.collection)
            )
            for hit in response["hits"]
        ]
