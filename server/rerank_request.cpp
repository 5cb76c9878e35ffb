#include "server/rerank_request.h"

#include "server/json_body.h"
#include "server/search_request.h"

namespace kotae::server {
namespace {

std::vector<std::string> passages(const nlohmann::json& list, const char* name, const ApiLimits& limits) {
  const std::size_t max_items = limits.max_rerank_documents;
  if (!list.is_array()) throw bad_request(std::string("'") + name + "' must be a list");
  if (list.empty()) throw bad_request(std::string("'") + name + "' is empty");
  if (list.size() > max_items)
    throw bad_request(std::string("'") + name + "' has more than " + std::to_string(max_items) + " items");
  std::vector<std::string> out;
  for (const auto& item : list) {
    if (item.is_string()) {
      out.push_back(item.get<std::string>());
    } else if (item.is_object() && item.contains("text") && item["text"].is_string()) {
      out.push_back(item["text"].get<std::string>());
    } else {
      throw bad_request(std::string("each of '") + name + "' must be a string (or an object with \"text\")");
    }
    if (out.back().size() > limits.max_text_bytes) {
      throw bad_request(std::string("'") + name + "' holds a text longer than " +
                        std::to_string(limits.max_text_bytes) + " bytes");
    }
  }
  return out;
}

}  // namespace

bool is_tei_rerank(const nlohmann::json& body) {
  return body.contains("texts") && !body["texts"].is_null();
}

RerankRequest read_rerank_request(const nlohmann::json& body, const ApiLimits& limits) {
  RerankRequest request;
  request.query = query_text(body, "query", limits);
  request.tei = is_tei_rerank(body);
  request.texts = passages(request.tei ? body["texts"] : body.value("documents", nlohmann::json()),
                           request.tei ? "texts" : "documents", limits);
  request.top_n =
      static_cast<std::size_t>(integer_field(body, "top_n", static_cast<long long>(request.texts.size()), 1, 1000000));
  request.return_text = bool_field(body, request.tei ? "return_text" : "return_documents", false);
  if (request.tei) {
    request.raw_scores = bool_field(body, "raw_scores", false);
    request.truncate = bool_field(body, "truncate", false);
    if (const auto direction = string_field(body, "truncation_direction", "right");
        direction != "right" && direction != "Right") {
      throw bad_request("'truncation_direction' must be right: Kotae keeps a text's beginning");
    }
  }
  return request;
}

}  // namespace kotae::server
