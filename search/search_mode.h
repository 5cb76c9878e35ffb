#pragma once
// Which retrievers a search runs. Inline, so request decoding (server/search_request.h) reads a mode
// without linking the retrievers.

#include <optional>
#include <string_view>

namespace kotae::search {

enum class SearchMode { bm25, vector, hybrid };

inline const char* to_string(SearchMode mode) {
  switch (mode) {
    case SearchMode::bm25: return "bm25";
    case SearchMode::vector: return "vector";
    case SearchMode::hybrid: return "hybrid";
  }
  return "?";
}

inline std::optional<SearchMode> parse_search_mode(std::string_view name) {
  for (auto mode : {SearchMode::bm25, SearchMode::vector, SearchMode::hybrid})
    if (name == to_string(mode)) return mode;
  return std::nullopt;
}

}  // namespace kotae::search
