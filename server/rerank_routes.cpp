// Reranking in the two schemas clients already speak:
//   llama.cpp's server (also Jina's and Cohere's): POST /v1/rerank {query, documents, top_n?, return_documents?}
//     → {"object": "list", "model", "results": [{"index", "relevance_score", "document"?: {"text"}}]}
//   Hugging Face TEI: POST /rerank {query, texts, return_text?} → [{"index", "score", "text"?}]
// Either path accepts either body (read by rerank_request.cpp); results are best first. Scores come
// from the cross-encoder when the server has one, else from cosine similarity of embeddings.

#include <numeric>

#include "server/json_body.h"
#include "server/rerank_request.h"
#include "server/server_context.h"

namespace kotae::server {
namespace {

void rerank(Call& call, ServerContext& context) {
  const auto request = read_rerank_request(parse_json_object(call.request), context.limits);
  const auto& query = request.query;
  const auto& texts = request.texts;
  const auto top_n = request.top_n;
  const auto& reranker = context.models->reranker();
  const auto scores = value_or_throw(reranker.score(query, texts));
  std::vector<std::size_t> order(texts.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  order.resize(std::min(order.size(), top_n));

  if (request.tei) {
    nlohmann::json out = nlohmann::json::array();
    for (auto i : order) {
      nlohmann::json r{{"index", i}, {"score", scores[i]}};
      if (request.return_text) r["text"] = texts[i];
      out.push_back(std::move(r));
    }
    return call.responder->send(json_response(200, out));
  }
  nlohmann::json results = nlohmann::json::array();
  for (auto i : order) {
    nlohmann::json r{{"index", i}, {"relevance_score", scores[i]}};
    if (request.return_text) r["document"] = {{"text", texts[i]}};
    results.push_back(std::move(r));
  }
  call.responder->send(json_response(200, {{"object", "list"}, {"model", reranker.id()}, {"results", results}}));
}

}  // namespace

void add_rerank_routes(Router& router, ServerContext& context) {
  router.add("POST", "/v1/rerank", [&context](Call& call) { rerank(call, context); });
  router.add("POST", "/rerank", [&context](Call& call) { rerank(call, context); });
}

}  // namespace kotae::server
