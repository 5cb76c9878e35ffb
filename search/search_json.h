#pragma once
// Search results as JSON: what `kotae search --json` prints and what POST /v1/search returns.

#include <nlohmann/json.hpp>

#include "search/hybrid_retriever.h"

namespace kotae::search {

// A document's metadata as stored (JSON text) as the object a hit or source shows; {} when unreadable.
nlohmann::json metadata_json(std::string_view stored);
// A hit, with its document's "metadata".
nlohmann::json to_json(const SearchHit& hit, std::size_t rank);
nlohmann::json to_json(const SearchTiming& timing);
// {"query", "mode", "hits", "timing_ms"}
nlohmann::json to_json(const SearchResult& result, std::string_view query, SearchMode mode);

}  // namespace kotae::search
