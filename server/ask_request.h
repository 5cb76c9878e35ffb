#pragma once
// What POST /v1/ask and grounded chat completions share: the answer options and the back-ends a
// request asks for, read from its JSON body.

#include <nlohmann/json.hpp>

#include "rag/answer_pipeline.h"
#include "server/server_context.h"

namespace kotae::server {

rag::AnswerOptions answer_options(const nlohmann::json& body, const ApiLimits& limits);
// The configured back-ends in the order the request names them ("backends": ["llama", "openai",
// "extractive"]); all configured ones, in their order, when it names none.
std::vector<rag::AnswerBackend> requested_backends(const nlohmann::json& body, const rag::AnswerBackends& configured);

}  // namespace kotae::server
