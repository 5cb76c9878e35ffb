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

nlohmann::json ranked(const RerankRequest& request, const std::vector<float>& scores, const std::string& model) {
  const auto& texts = request.texts;
  std::vector<std::size_t> order(texts.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  order.resize(std::min(order.size(), request.top_n));

  if (request.tei) {
    nlohmann::json out = nlohmann::json::array();
    for (auto i : order) {
      nlohmann::json r{{"index", i}, {"score", scores[i]}};
      if (request.return_text) r["text"] = texts[i];
      out.push_back(std::move(r));
    }
    return out;
  }
  nlohmann::json results = nlohmann::json::array();
  for (auto i : order) {
    nlohmann::json r{{"index", i}, {"relevance_score", scores[i]}};
    if (request.return_text) r["document"] = {{"text", texts[i]}};
    results.push_back(std::move(r));
  }
  return {{"object", "list"}, {"model", model}, {"results", results}};
}

// The scores come back on the reranker's batcher thread; the response is written on the work pool.
void rerank(Call& call, ServerContext& context) {
  auto request = std::make_shared<const RerankRequest>(read_rerank_request(parse_json_object(call.request), context.limits));
  const auto& reranker = context.models->reranker();
  reranker.score_async(request->query, request->texts,
                       [&context, request, out = call.responder, model = reranker.id()](Result<std::vector<float>> scores) {
                         context.continuations()([request, out, model, scores = std::move(scores)] {
                           if (!scores) return out->send(error_response(from_error(scores.error())));
                           out->send(json_response(200, ranked(*request, *scores, model)));
                         });
                       });
}

}  // namespace

void add_rerank_routes(Router& router, ServerContext& context) {
  router.add("POST", "/v1/rerank", [&context](Call& call) { rerank(call, context); });
  router.add("POST", "/rerank", [&context](Call& call) { rerank(call, context); });
}

}  // namespace kotae::server
