#pragma once
// Hugging Face text-embeddings-inference (TEI) speaks its own error dialect: {"error", "error_type"}
// with its own status codes. Its clients read that shape, so the TEI-style routes answer in it.

#include <cmath>
#include <string>

#include "server/api_error.h"
#include "server/router.h"

namespace kotae::server {

// error_type is TEI's: "Validation", "Tokenizer", "Empty", "Backend", "Overloaded", "Unhealthy".
HttpResponse tei_error(int status, const std::string& error_type, const std::string& message);
// Kotae's error as TEI reports its kind: code "empty" 400 "Empty", a request that does not parse or check 422
// "Validation" (as TEI's JSON extractor answers), overloaded 429, another 4xx its own status as "Validation", not ready
// 503, the rest 424 "Backend".
HttpResponse tei_error(const ApiError& error);
// The handler, with an ApiError it throws answered in TEI's shape.
Handler tei_errors(Handler handler);

// TEI's classifier activation for a single-logit cross-encoder.
inline float sigmoid(float logit) {
  return 1.0f / (1.0f + std::exp(-logit));
}

}  // namespace kotae::server
