#include "search/search_json.h"

namespace kotae::search {

nlohmann::json metadata_json(std::string_view stored) {
  auto metadata = nlohmann::json::parse(stored, nullptr, /*allow_exceptions=*/false);
  return metadata.is_object() ? metadata : nlohmann::json::object();
}

nlohmann::json to_json(const SearchHit& h, std::size_t rank) {
  nlohmann::json hit{{"rank", rank},
                     {"score", h.score},
                     {"chunk_id", h.chunk.id},
                     {"document_id", h.chunk.document_id},
                     {"document", h.document_path},
                     {"title", h.document_title},
                     {"format", h.document_format},
                     {"page_first", h.chunk.page_first},
                     {"page_last", h.chunk.page_last},
                     {"heading_path", h.chunk.heading_path},
                     {"span", {h.chunk.begin, h.chunk.end}},
                     {"bm25_rank", h.bm25_rank},
                     {"vector_rank", h.vector_rank},
                     {"text", h.chunk.text}};
  hit["metadata"] = metadata_json(h.document_metadata_json);
  if (h.rerank_score) hit["rerank_score"] = *h.rerank_score;
  if (!h.chunk.table.empty()) {
    hit["table"] = h.chunk.table;
    hit["row_first"] = h.chunk.row_first;
    hit["row_last"] = h.chunk.row_last;
  }
  return hit;
}

nlohmann::json to_json(const SearchTiming& t) {
  return {{"embed", t.embed},   {"bm25", t.bm25},   {"vector", t.vector}, {"fuse", t.fuse},
          {"rerank", t.rerank}, {"fetch", t.fetch}, {"total", t.total}};
}

nlohmann::json to_json(const SearchResult& result, std::string_view query, SearchMode mode) {
  nlohmann::json hits = nlohmann::json::array();
  for (std::size_t i = 0; i < result.hits.size(); ++i) hits.push_back(to_json(result.hits[i], i + 1));
  nlohmann::json fallbacks = nlohmann::json::array();
  for (const auto& f : result.fallbacks) fallbacks.push_back({{"backend", f.backend}, {"error", f.error}});
  return {{"query", query},
          {"mode", to_string(mode)},
          {"hits", hits},
          {"timing_ms", to_json(result.timing)},
          {"fallbacks", fallbacks}};
}

}  // namespace kotae::search
