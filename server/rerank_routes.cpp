// Reranking in the two schemas clients already speak:
//   llama.cpp's server (also Jina's and Cohere's): POST /v1/rerank {query, documents, top_n?, return_documents?}
//     → {"object": "list", "model", "results": [{"index", "relevance_score", "document"?: {"text"}}]}
//   Hugging Face TEI: POST /rerank {query, texts, return_text?} → [{"index", "score", "text"?}]
// Either path accepts either body; results are best first. Scores come from the cross-encoder when the
// server has one, else from cosine similarity of embeddings.

#include <numeric>

#include "server/json_body.h"
#include "server/search_request.h"

namespace kotae::server {
namespace {

std::vector<std::string> passages(const nlohmann::json& list, const char* name, std::size_t max_items) {
  if (!list.is_array()) throw bad_request(std::string("'") + name + "' must be a list");
  if (list.empty()) throw bad_request(std::string("'") + name + "' is empty");
  if (list.size() > max_items) throw bad_request(std::string("'") + name + "' has more than " + std::to_string(max_items) + " items");
  std::vector<std::string> out;
  for (const auto& item : list) {
    if (item.is_string()) {
      out.push_back(item.get<std::string>());
    } else if (item.is_object() && item.contains("text") && item["text"].is_string()) {
      out.push_back(item["text"].get<std::string>());
    } else {
      throw bad_request(std::string("each of '") + name + "' must be a string (or an object with \"text\")");
    }
  }
  return out;
}

void rerank(Call& call, ServerContext& context) {
  const auto body = parse_json_object(call.request);
  const auto query = query_text(body, "query", context.limits);
  const bool tei = body.contains("texts") && !body["texts"].is_null();
  const auto texts = passages(tei ? body["texts"] : body.value("documents", nlohmann::json()), tei ? "texts" : "documents",
                              context.limits.max_rerank_documents);
  const auto top_n = static_cast<std::size_t>(integer_field(body, "top_n", static_cast<long long>(texts.size()), 1, 1000000));
  const auto& reranker = context.models->reranker();
  const auto scores = value_or_throw(reranker.score(query, texts));
  std::vector<std::size_t> order(texts.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  order.resize(std::min(order.size(), top_n));

  if (tei) {
    const bool return_text = bool_field(body, "return_text", false);
    nlohmann::json out = nlohmann::json::array();
    for (auto i : order) {
      nlohmann::json r{{"index", i}, {"score", scores[i]}};
      if (return_text) r["text"] = texts[i];
      out.push_back(std::move(r));
    }
    return call.responder->send(json_response(200, out));
  }
  const bool return_documents = bool_field(body, "return_documents", false);
  nlohmann::json results = nlohmann::json::array();
  for (auto i : order) {
    nlohmann::json r{{"index", i}, {"relevance_score", scores[i]}};
    if (return_documents) r["document"] = {{"text", texts[i]}};
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
