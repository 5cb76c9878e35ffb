#pragma once
// The bodies of the OpenAI-compatible endpoints, read into typed requests. Every reader throws an
// ApiError (400) naming the field; the generation and retrieval settings of a chat are read by
// answer_options (ask_request.h) from ChatRequest::options.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/encoder.h"
#include "model/generator.h"
#include "server/api_limits.h"

namespace kotae::server {

// POST /v1/embeddings {input: string | [string], model?, encoding_format?: float | base64,
//                     input_type?: query | passage | document}
struct EmbeddingsRequest {
  std::vector<std::string> texts;  // not empty, none of them empty
  std::string model;
  bool base64 = false;
  // "input_type" (as NVIDIA's and Voyage's embedding APIs name it): "query" marks search queries for
  // models that want them marked (e5, bge); "passage" (or "document", the default) the texts searched.
  TextRole role = TextRole::passage;
};
EmbeddingsRequest read_embeddings_request(const nlohmann::json& body, const ApiLimits& limits,
                                          const std::string& default_model);

// POST /v1/chat/completions {messages, model?, stream?, collection?, max_tokens? | max_completion_tokens?, ...}
struct ChatRequest {
  std::vector<ChatMessage> messages;  // not empty; "developer" is read as "system"
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage: a last chunk with the token counts
  std::string model;           // echoed in the response; picks the generator when it names one (or its alias)
  bool grounded = false;       // names a "collection": answered from it, with citations
  nlohmann::json options;      // the body, with max_completion_tokens as max_tokens when that is unset
};
// Fields that change the answer's meaning and are not supported (tools, response_format other than
// text, n > 1, logprobs) are refused, not ignored. At most limits.max_messages messages of limits.max_text_bytes each;
// a grounded chat's last user message is its question and has the same limit as /v1/ask's (max_query_bytes).
ChatRequest read_chat_request(const nlohmann::json& body, const ApiLimits& limits);

}  // namespace kotae::server
