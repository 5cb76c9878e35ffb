"""What every framework's document gets from a /v1/search hit: its text, and metadata naming where
it is (document path and title, pages, byte span, headings) and how it ranked."""

from __future__ import annotations

from typing import Any, Dict, Optional

from ..types import SearchHit, SearchOptions


def hit_metadata(hit: SearchHit, collection: str) -> Dict[str, Any]:
    return {
        "collection": collection,
        "document": hit["document"],
        "title": hit["title"],
        "format": hit["format"],
        "page": hit["page_first"] or None,  # 0: the document has no pages
        "page_last": hit["page_last"] or None,
        "start": hit["span"][0],
        "end": hit["span"][1],
        "heading_path": list(hit["heading_path"]),
        "chunk_id": hit["chunk_id"],
        "rank": hit["rank"],
        "score": hit["score"],
    }


def hit_id(hit: SearchHit, collection: str) -> str:
    return "%s:%d" % (collection, hit["chunk_id"])


def search_options(
    k: int, mode: Optional[str], rerank: Optional[bool], filters: Optional[Dict[str, Any]]
) -> SearchOptions:
    options: Dict[str, Any] = {"k": k, "mode": mode, "rerank": rerank, "filters": filters}
    return {key: value for key, value in options.items() if value is not None}  # type: ignore[return-value]
