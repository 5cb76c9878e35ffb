#pragma once
// The body of POST /v1/rerank, POST /rerank and POST /v2/rerank, in either schema: llama.cpp's (also
// Jina's and Cohere's) {query, documents, top_n?, return_documents?} or Hugging Face TEI's {query,
// texts, return_text?, raw_scores?, truncate?}. Throws an ApiError (400) naming the field.

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/api_limits.h"

namespace kotae::server {

struct RerankRequest {
  std::string query;
  std::vector<std::string> texts;  // not empty
  std::size_t top_n = 0;           // results returned, at least 1
  bool tei = false;                // the body used TEI's schema: answer in it
  bool return_text = false;        // return_text (TEI) or return_documents
  bool raw_scores = false;         // TEI: the cross-encoder's logits, not their sigmoid
  bool truncate = false;           // TEI: a pair longer than the model reads is cut, not refused
};
// Whether a body is TEI's (it names "texts"), before it is read: TEI's answers and errors differ.
bool is_tei_rerank(const nlohmann::json& body);
RerankRequest read_rerank_request(const nlohmann::json& body, const ApiLimits& limits);

}  // namespace kotae::server
