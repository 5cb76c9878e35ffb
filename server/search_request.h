#pragma once
// The retrieval settings shared by POST /v1/search, POST /v1/ask and grounded chat completions:
// mode, k, rerank, filters, each checked against the server's limits; and the search request itself.
// Like json_body.h, every reader throws an ApiError (400) naming the field.

#include <string>

#include <nlohmann/json.hpp>

#include "search/hybrid_retriever.h"
#include "server/api_error.h"
#include "server/api_limits.h"

namespace kotae::server {

// filters: {path_prefix?, formats?, documents?: [ids], where?: "metadata filter"}; a malformed
// documents list or a where that does not parse is 400 invalid_filter, naming the column.
search::SearchOptions search_options(const nlohmann::json& body, const ApiLimits& limits, std::size_t default_k);
// 400 invalid_filter: what is wrong with the request's filters.
ApiError invalid_filter(std::string message);
// Throws invalid_filter for the collection's verdict on a filter (store::Collection::check_filter: a
// field no document has, a value of a type the field does not hold), which the routes ask before
// searching.
void check_filter_fields(const Result<void>& checked);
// A required, non-blank string field no longer than the query limit.
std::string query_text(const nlohmann::json& body, const char* name, const ApiLimits& limits);

// POST /v1/search {collection, query, mode?, k?, rerank?, filters?: {path_prefix?, formats?, documents?, where?}}
struct SearchRequest {
  std::string collection;
  std::string query;
  search::SearchOptions options;
};
SearchRequest read_search_request(const nlohmann::json& body, const ApiLimits& limits);

}  // namespace kotae::server
