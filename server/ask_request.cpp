#include "server/ask_request.h"

#include <algorithm>

#include "server/json_body.h"
#include "server/search_request.h"

namespace kotae::server {

rag::AnswerOptions answer_options(const nlohmann::json& body, const ApiLimits& limits) {
  rag::AnswerOptions options;
  options.search = search_options(body, limits, 5);
  options.min_relevance = number_field(body, "min_relevance", options.min_relevance, -1.0, 1.0);
  auto& g = options.generation;
  g.max_tokens = static_cast<int>(integer_field(body, "max_tokens", 512, 1, 32768));
  g.temperature = static_cast<float>(number_field(body, "temperature", 0.2, 0.0, 2.0));
  g.top_p = static_cast<float>(number_field(body, "top_p", 0.95, 0.0, 1.0));
  if (auto seed = optional_integer(body, "seed", 0, 0xffffffffLL)) g.seed = static_cast<std::uint32_t>(*seed);
  g.stop = strings_field(body, "stop", 8);
  return options;
}

std::vector<rag::AnswerBackend> requested_backends(const nlohmann::json& body,
                                                   std::span<const rag::AnswerBackend> configured) {
  const auto names = strings_field(body, "backends", 4);
  if (names.empty()) return {configured.begin(), configured.end()};
  std::vector<rag::AnswerBackend> out;
  for (const auto& name : names) {
    const std::string internal = name == "llama" ? "llama.cpp" : name;
    auto it = std::find_if(configured.begin(), configured.end(), [&](const auto& b) { return b.name == internal; });
    if (it != configured.end()) {
      out.push_back(*it);
    } else if (name == "llama" || name == "openai" || name == "workers" || name == "extractive") {
      out.push_back({internal, nullptr, "not configured on this server"});
    } else {
      throw bad_request("unknown back-end '" + name + "' (llama, openai, workers or extractive)");
    }
  }
  return out;
}

AskRequest read_ask_request(const nlohmann::json& body, const ApiLimits& limits,
                            std::span<const rag::AnswerBackend> configured) {
  AskRequest request;
  request.question = query_text(body, "question", limits);
  request.collection = string_field(body, "collection");
  request.options = answer_options(body, limits);
  request.backends = requested_backends(body, configured);
  request.conversation_id = string_field(body, "conversation_id", "");
  return request;
}

}  // namespace kotae::server
