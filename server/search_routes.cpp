// POST /v1/search {collection, query, mode?, k?, rerank?, filters?: {path_prefix?, formats?}}

#include "search/search_json.h"
#include "server/json_body.h"
#include "server/search_request.h"
#include "server/server_context.h"

namespace kotae::server {

search::SearchOptions search_options(const nlohmann::json& body, const ApiLimits& limits, std::size_t default_k) {
  search::SearchOptions options;
  const auto mode = search::parse_search_mode(string_field(body, "mode", "hybrid"));
  if (!mode) throw bad_request("'mode' must be bm25, vector or hybrid");
  options.mode = *mode;
  options.k = static_cast<std::size_t>(integer_field(body, "k", static_cast<long long>(default_k), 1,
                                                     static_cast<long long>(limits.max_k)));
  options.candidates = std::max(options.candidates, options.k);
  options.rerank_candidates = std::max(options.rerank_candidates, options.k);
  options.rerank = bool_field(body, "rerank", true);
  if (const auto it = body.find("filters"); it != body.end() && !it->is_null()) {
    if (!it->is_object()) throw bad_request("'filters' must be an object");
    options.filter.path_prefix = string_field(*it, "path_prefix", "");
    options.filter.formats = strings_field(*it, "formats", 16);
  }
  return options;
}

std::string query_text(const nlohmann::json& body, const char* name, const ApiLimits& limits) {
  auto text = string_field(body, name);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw bad_request(std::string("'") + name + "' is empty");
  if (text.size() > limits.max_query_bytes) {
    throw bad_request(std::string("'") + name + "' is longer than " + std::to_string(limits.max_query_bytes) + " bytes");
  }
  return text;
}

void add_search_routes(Router& router, ServerContext& context) {
  router.add("POST", "/v1/search", [&context](Call& call) {
    const auto body = parse_json_object(call.request);
    const auto query = query_text(body, "query", context.limits);
    auto c = value_or_throw(context.collections->get(call.tenant, string_field(body, "collection")));
    const auto options = search_options(body, context.limits, 10);
    auto retriever = value_or_throw(search::HybridRetriever::create(*c->store, c->encoder.get(), context.models->cross_encoder()));
    auto result = value_or_throw(retriever.search(query, options));
    context.metrics.search(result);
    auto json = search::to_json(result, query, options.mode);
    json["collection"] = c->name;
    call.responder->send(json_response(200, json));
  });
}

}  // namespace kotae::server
