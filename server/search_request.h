#pragma once
// The retrieval settings shared by POST /v1/search, POST /v1/ask and grounded chat completions:
// mode, k, rerank, filters, each checked against the server's limits; and the search request itself.
// Like json_body.h, every reader throws an ApiError (400) naming the field.

#include <string>

#include <nlohmann/json.hpp>

#include "search/hybrid_retriever.h"
#include "server/api_limits.h"

namespace kotae::server {

search::SearchOptions search_options(const nlohmann::json& body, const ApiLimits& limits, std::size_t default_k);
// A required, non-blank string field no longer than the query limit.
std::string query_text(const nlohmann::json& body, const char* name, const ApiLimits& limits);

// POST /v1/search {collection, query, mode?, k?, rerank?, filters?: {path_prefix?, formats?}}
struct SearchRequest {
  std::string collection;
  std::string query;
  search::SearchOptions options;
};
SearchRequest read_search_request(const nlohmann::json& body, const ApiLimits& limits);

}  // namespace kotae::server
