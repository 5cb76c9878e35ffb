"""A Haystack (2.x and later) retriever component over Kotae's /v1/search
(pip install 'kotae[haystack]')."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from haystack import Document, component

from ..client import Kotae
from ..transport import DEFAULT_BASE_URL
from .hits import hit_id, hit_metadata, search_options


@component
class KotaeRetriever:
    """run(query) -> {"documents": [Document]}, best first; each Document's meta has the source's
    `document` (path), `title`, `page`, byte span `start`/`end` and `heading_path`, and its score
    is the search's."""

    def __init__(
        self,
        collection: str,
        base_url: str = DEFAULT_BASE_URL,
        api_key: Optional[str] = None,
        top_k: int = 4,
        mode: Optional[str] = None,
        rerank: Optional[bool] = None,
        filters: Optional[Dict[str, Any]] = None,
    ) -> None:
        self.collection, self.base_url, self.api_key = collection, base_url, api_key  # Haystack's to_dict reads these
        self.top_k, self.mode, self.rerank, self.filters = top_k, mode, rerank, filters
        self._client = Kotae(base_url, api_key=api_key)

    @component.output_types(documents=List[Document])
    def run(self, query: str, top_k: Optional[int] = None) -> Dict[str, List[Document]]:
        options: Any = search_options(top_k or self.top_k, self.mode, self.rerank, self.filters)
        response = self._client.search(self.collection, query, **options)
        return {
            "documents": [
                Document(
                    id=hit_id(hit, self.collection),
                    content=hit["text"],
                    meta=hit_metadata(hit, self.collection),
                    score=hit["score"],
                )
                for hit in response["hits"]
            ]
        }
