// Reranking in the schemas clients already speak:
//   llama.cpp's server (also Jina's): POST /v1/rerank or /rerank {query, documents, top_n?, return_documents?}
//     → {"object": "list", "model", "results": [{"index", "relevance_score", "document"?: {"text"}}]}
//     Scores: the cross-encoder's logits when the server has one, else embedding cosines.
//   Hugging Face TEI: POST /rerank (or /v1/rerank) {query, texts, return_text?, raw_scores?, truncate?}
//     → [{"index", "score", "text"?}], as TEI answers: the cross-encoder's sigmoid (its logit with
//     raw_scores), a pair longer than the model reads refused (413) unless truncate, and, as TEI
//     does, an error (424) when the server has no cross-encoder.
//   Cohere v2: POST /v2/rerank {model?, query, documents, top_n?, return_documents?}
//     → {"id", "results": [{"index", "relevance_score"}], "meta"}; the cross-encoder's sigmoid (0..1, as
//     Cohere's), else embedding cosines.
// Results are best first; the bodies are read by rerank_request.cpp.

#include <numeric>

#include "core/random_id.h"
#include "server/json_body.h"
#include "server/rerank_request.h"
#include "server/server_context.h"
#include "server/tei_api.h"

namespace kotae::server {
namespace {

enum class Schema { llama, tei, cohere };

nlohmann::json ranked(const RerankRequest& request, const std::vector<float>& scores, const std::string& model,
                      Schema schema) {
  const auto& texts = request.texts;
  std::vector<std::size_t> order(texts.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  order.resize(std::min(order.size(), request.top_n));

  if (schema == Schema::tei) {
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
  if (schema == Schema::cohere) {
    return {{"id", random_id("rerank-")},
            {"results", results},
            {"meta", {{"api_version", {{"version", "2"}}}, {"billed_units", {{"search_units", 1}}}}}};
  }
  return {{"object", "list"}, {"model", model}, {"results", results}};
}

// The scores come back on the reranker's batcher thread; the response is written on the work pool.
void rerank(Call& call, ServerContext& context, bool cohere) {
  const auto body = parse_json_object(call.request);
  const Schema schema = cohere ? Schema::cohere : is_tei_rerank(body) ? Schema::tei : Schema::llama;
  std::shared_ptr<const RerankRequest> request;
  try {
    request = std::make_shared<const RerankRequest>(read_rerank_request(body, context.limits));
  } catch (const ApiError& error) {
    if (schema != Schema::tei) throw;
    return call.responder->send(tei_error(error));
  }
  if (schema == Schema::tei && !context.models->cross_encoder()) {
    return call.responder->send(
        tei_error(424, "Backend", "model is not a re-ranker model: start kotae serve with --rerank MODEL"));
  }
  if (schema == Schema::tei && !request->truncate) {  // as TEI: a pair the model would read in part is refused
    const auto* cross = context.models->cross_encoder();
    for (const auto& text : request->texts) {
      const std::size_t tokens = cross->untruncated_pair_tokens(request->query, text), limit = cross->max_pair_tokens();
      if (limit > 0 && tokens > limit) {
        return call.responder->send(tei_error(413, "Validation",
                                              "Input validation error: `inputs` must have less than " +
                                                  std::to_string(limit) + " tokens. Given: " + std::to_string(tokens)));
      }
    }
  }
  // TEI's and Cohere's scores are probabilities: the single-logit cross-encoder's sigmoid. A reranking
  // service's (--rerank-url) are passed on as it gave them.
  const bool sigmoid_scores = context.models->cross_encoder() && !context.models->rerank_service() &&
                              (schema == Schema::cohere || (schema == Schema::tei && !request->raw_scores));
  const auto& reranker = context.models->reranker();
  reranker.score_async(
      request->query, request->texts,
      [&context, request, schema, sigmoid_scores, out = call.responder,
       model = reranker.id()](Result<std::vector<float>> scores) {
        context.continuations()([request, schema, sigmoid_scores, out, model, scores = std::move(scores)]() mutable {
          if (!scores) {
            const auto error = from_error(scores.error());
            return out->send(schema == Schema::tei ? tei_error(error) : error_response(error));
          }
          if (sigmoid_scores) {
            for (auto& s : *scores) s = sigmoid(s);
          }
          out->send(json_response(200, ranked(*request, *scores, model, schema)));
        });
      });
}

}  // namespace

void add_rerank_routes(Router& router, ServerContext& context) {
  router.add("POST", "/v1/rerank", [&context](Call& call) { rerank(call, context, false); });
  router.add("POST", "/rerank", [&context](Call& call) { rerank(call, context, false); });
  router.add("POST", "/v2/rerank", [&context](Call& call) { rerank(call, context, true); });
}

}  // namespace kotae::server
