"""A LlamaIndex retriever over Kotae's /v1/search (pip install 'kotae[llamaindex]')."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from ..async_client import AsyncKotae
from ..client import Kotae
from ..transport import DEFAULT_BASE_URL
from ..types import SearchResponse
from .hits import hit_id, hit_metadata, search_options


class KotaeRetriever(BaseRetriever):
    """NodeWithScore for a query from one collection, best first: TextNodes whose metadata has the
    source's `document` (path), `title`, `page`, byte span `start`/`end` and `heading_path`, and
    whose score is the search's."""

    def __init__(
        self,
        collection: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: Optional[str] = None,
        k: int = 4,
        mode: Optional[str] = None,
        rerank: Optional[bool] = None,
        filters: Optional[Dict[str, Any]] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._collection = collection
        self._options: Any = search_options(k, mode, rerank, filters)
        self._client = Kotae(base_url, api_key=api_key)
        self._async_client = AsyncKotae(base_url, api_key=api_key)

    def _retrieve(self, query_bundle: QueryBundle) -> List[NodeWithScore]:
        return self._nodes(self._client.search(self._collection, query_bundle.query_str, **self._options))

    async def _aretrieve(self, query_bundle: QueryBundle) -> List[NodeWithScore]:
        response = await self._async_client.search(self._collection, query_bundle.query_str, **self._options)
        return self._nodes(response)

    def _nodes(self, response: SearchResponse) -> List[NodeWithScore]:
        return [
            NodeWithScore(
                node=TextNode(
                    id_=hit_id(hit, self._collection),
                    text=hit["text"],
                    metadata=hit_metadata(hit, self._collection),
                    start_char_idx=None,
                    end_char_idx=None,
                ),
                score=hit["score"],
            )
            for hit in response["hits"]
        ]
