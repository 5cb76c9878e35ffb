// POST /v1/search {collection, query, mode?, k?, rerank?, filters?: {path_prefix?, formats?, documents?, where?}}
// The body is read by read_search_request (search_request.cpp).

#include <chrono>
#include <optional>

#include "search/search_json.h"
#include "server/json_body.h"
#include "server/search_request.h"
#include "server/server_context.h"

namespace kotae::server {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// One search from its request to its response. The models' answers (the query's vector, the rerank
// scores) come back on their batchers' threads; each next stage goes to the work pool.
struct SearchInFlight {
  SearchRequest request;
  std::shared_ptr<assembly::ServedCollection> collection;
  std::optional<search::HybridRetriever> retriever;
  std::shared_ptr<Responder> out;
  Clock::time_point start = Clock::now();
  double embed_ms = 0;

  void fail(const Error& error) const { out->send(error_response(from_error(error))); }

  void respond(ServerContext& context, search::SearchResult result) const {
    result.timing.embed = embed_ms;
    result.timing.total = ms_since(start);
    context.metrics.search(result);
    auto json = search::to_json(result, request.query, request.options.mode);
    json["collection"] = collection->name;
    out->send(json_response(200, json));
  }

  // Retrieval and fusion here; the rerank on the reranker's thread (its batcher, or the reranking
  // service's client), then the response.
  void retrieve(ServerContext& context, const std::shared_ptr<SearchInFlight>& self,
                std::span<const float> vector) const {
    auto lists = retriever->retrieve(request.query, vector, request.options);
    if (!lists) return fail(lists.error());
    auto fused = retriever->fuse(std::move(*lists), request.options);
    if (!fused) return fail(fused.error());
    if (!retriever->reranks(request.options) || fused->hits.empty()) return respond(context, std::move(*fused));
    auto passages = search::HybridRetriever::rerank_passages(*fused, request.options);
    const auto rerank_start = Clock::now();
    context.models->cross_encoder()->score_async(
        request.query, std::move(passages),
        [&context, self, fused = std::make_shared<search::SearchResult>(std::move(*fused)),
         rerank_start](Result<std::vector<float>> scores) {
          context.continuations()([&context, self, fused, rerank_start, scores = std::move(scores)] {
            // A failed rerank (its service down, slow or talking nonsense) leaves the fused order: the
            // search still answers, and says so in "fallbacks".
            if (scores) {
              search::HybridRetriever::rerank_by(*fused, *scores, self->request.options);
            } else {
              search::HybridRetriever::skip_rerank(*fused, scores.error(), self->request.options);
            }
            fused->timing.rerank = ms_since(rerank_start);
            self->respond(context, std::move(*fused));
          });
        });
  }
};

}  // namespace

void add_search_routes(Router& router, ServerContext& context) {
  router.add(
      "POST", "/v1/search",
      [&context](Call& call) {
        auto q = std::make_shared<SearchInFlight>();
        q->request = read_search_request(parse_json_object(call.request), context.limits);
        q->collection = value_or_throw(context.collections->get(call.tenant, q->request.collection));
        check_filter_fields(q->collection->store->check_filter(q->request.options.filter));
        q->retriever.emplace(value_or_throw(search::HybridRetriever::create(
            *q->collection->store, q->collection->encoder.get(), context.models->cross_encoder())));
        q->out = call.responder;
        if (q->request.options.k == 0) return q->respond(context, {});
        if (q->request.options.mode == search::SearchMode::bm25) return q->retrieve(context, q, {});
        std::vector<text::Encoding> query{q->collection->encoder->tokenize_as(TextRole::query, q->request.query)};
        q->collection->encoder->embed_encoded_async(std::move(query), [&context, q](Result<Embeddings> vector) {
          q->embed_ms = ms_since(q->start);
          context.continuations()([&context, q, vector = std::move(vector)] {
            if (!vector) return q->fail(vector.error());
            q->retrieve(context, q, vector->row(0));
          });
        });
      },
      {.audit = "search", .collection = collection_in_body()});
}

}  // namespace kotae::server
