// POST /v1/search {collection, query, mode?, k?, rerank?, filters?: {path_prefix?, formats?}}
// The body is read by read_search_request (search_request.cpp).

#include "search/search_json.h"
#include "server/json_body.h"
#include "server/search_request.h"
#include "server/server_context.h"

namespace kotae::server {

void add_search_routes(Router& router, ServerContext& context) {
  router.add("POST", "/v1/search", [&context](Call& call) {
    const auto request = read_search_request(parse_json_object(call.request), context.limits);
    const auto& query = request.query;
    const auto& options = request.options;
    auto c = value_or_throw(context.collections->get(call.tenant, request.collection));
    auto retriever = value_or_throw(search::HybridRetriever::create(*c->store, c->encoder.get(), context.models->cross_encoder()));
    auto result = value_or_throw(retriever.search(query, options));
    context.metrics.search(result);
    auto json = search::to_json(result, query, options.mode);
    json["collection"] = c->name;
    call.responder->send(json_response(200, json));
  });
}

}  // namespace kotae::server
