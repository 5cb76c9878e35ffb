#pragma once
// The limits the server was started with, which request decoding checks bodies against.

#include <cstddef>

namespace kotae::server {

struct ApiLimits {
  std::size_t max_embedding_inputs = 2048;  // items in one POST /v1/embeddings
  std::size_t max_rerank_documents = 1000;
  std::size_t max_query_bytes = 16 * 1024;   // a question or a search query
  std::size_t max_k = 100;                   // hits per search
  std::size_t max_text_bytes = 64 * 1024;    // one embeddings input, one rerank text, one chat message
  std::size_t max_messages = 256;            // messages in one chat completion
  std::size_t max_json_bytes = 1024 * 1024;  // a JSON request body (uploads have --max-body-bytes)
};

}  // namespace kotae::server
