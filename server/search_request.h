#pragma once
// The retrieval settings shared by POST /v1/search, POST /v1/ask and grounded chat completions:
// mode, k, rerank, filters, each checked against the server's limits.

#include <nlohmann/json.hpp>

#include "search/hybrid_retriever.h"
#include "server/server_context.h"

namespace kotae::server {

search::SearchOptions search_options(const nlohmann::json& body, const ApiLimits& limits, std::size_t default_k);
// A required, non-blank string field no longer than the query limit.
std::string query_text(const nlohmann::json& body, const char* name, const ApiLimits& limits);

}  // namespace kotae::server
