#pragma once
// What POST /v1/ask and grounded chat completions share: the answer options and the back-ends a
// request asks for, read from its JSON body; and the ask request itself. Every reader throws an
// ApiError (400) naming the field.

#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rag/answer_backends.h"
#include "rag/answer_pipeline.h"
#include "server/api_limits.h"

namespace kotae::server {

rag::AnswerOptions answer_options(const nlohmann::json& body, const ApiLimits& limits);
// The configured back-ends in the order the request names them ("backends": ["llama", "openai",
// "extractive"]); all configured ones, in their order, when it names none.
std::vector<rag::AnswerBackend> requested_backends(const nlohmann::json& body,
                                                   std::span<const rag::AnswerBackend> configured);
inline std::vector<rag::AnswerBackend> requested_backends(const nlohmann::json& body,
                                                          const rag::AnswerBackends& configured) {
  return requested_backends(body, configured.order);
}

// POST /v1/ask {question, collection, conversation_id?, backends?, ...answer_options}
struct AskRequest {
  std::string question;
  std::string collection;
  std::string conversation_id;  // empty: start a conversation
  rag::AnswerOptions options;
  std::vector<rag::AnswerBackend> backends;
};
AskRequest read_ask_request(const nlohmann::json& body, const ApiLimits& limits,
                            std::span<const rag::AnswerBackend> configured);

}  // namespace kotae::server
