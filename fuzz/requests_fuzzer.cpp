// The request decoding of every JSON endpoint, through the functions the routes call (server/*_request.h).
// The first byte picks the endpoint, the rest is the body (or, for a document or conversation id, the
// path segment).
// Bad input must come back as an ApiError with a 4xx status; any other exception is what the
// dispatcher would turn into a 500, so it escapes and libFuzzer reports it.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/assert.h"
#include "server/api_error.h"
#include "server/ask_request.h"
#include "server/collection_request.h"
#include "server/conversation_request.h"
#include "server/json_body.h"
#include "server/member_request.h"
#include "server/openai_request.h"
#include "server/rerank_request.h"
#include "server/search_request.h"

namespace {

using namespace kotae::server;

enum class Endpoint : std::uint8_t {
  search,
  ask,
  chat,
  embeddings,
  rerank,
  collections,
  document_id,
  conversation_title,
  conversation_id,
  member,
  count
};

void decode(Endpoint endpoint, std::string_view rest) {
  const ApiLimits limits;
  if (endpoint == Endpoint::document_id) {
    KOTAE_ASSERT(document_id(std::string(rest)) > 0);
    return;
  }
  if (endpoint == Endpoint::conversation_id) {
    const std::string id(rest);
    KOTAE_ASSERT(conversation_id(id).size() == 37);
    return;
  }
  HttpRequest request;
  request.method = "POST";
  request.headers = {{"content-type", "application/json"}};
  request.body = std::string(rest);
  const auto body = parse_json_object(request);
  KOTAE_ASSERT(body.is_object());
  // The back-ends a server may have: generators are not called, only named.
  const std::vector<kotae::rag::AnswerBackend> configured{{"llama.cpp", nullptr, {}}, {"extractive", nullptr, {}}};
  switch (endpoint) {
    case Endpoint::search: {
      const auto r = read_search_request(body, limits);
      KOTAE_ASSERT(!r.query.empty() && r.query.size() <= limits.max_query_bytes);
      KOTAE_ASSERT(r.options.k >= 1 && r.options.k <= limits.max_k && r.options.candidates >= r.options.k);
      break;
    }
    case Endpoint::ask: {
      const auto r = read_ask_request(body, limits, configured);
      KOTAE_ASSERT(!r.question.empty() && !r.backends.empty() && r.backends.size() <= 3);
      KOTAE_ASSERT(r.options.generation.max_tokens >= 1 && r.options.generation.stop.size() <= 8);
      break;
    }
    case Endpoint::chat: {
      const auto r = read_chat_request(body, limits);
      KOTAE_ASSERT(!r.messages.empty() && r.messages.size() <= limits.max_messages);
      for (const auto& m : r.messages) KOTAE_ASSERT(m.content.size() <= limits.max_text_bytes);
      KOTAE_ASSERT(!r.grounded || r.messages.back().role != "user" ||
                   r.messages.back().content.size() <= limits.max_query_bytes);
      const auto options = answer_options(r.options, limits);
      KOTAE_ASSERT(options.generation.top_p >= 0 && options.generation.top_p <= 1);
      if (r.grounded) requested_backends(r.options, configured);
      break;
    }
    case Endpoint::embeddings: {
      const auto r = read_embeddings_request(body, limits, "all-minilm-l6-v2");
      KOTAE_ASSERT(!r.texts.empty() && r.texts.size() <= limits.max_embedding_inputs);
      for (const auto& t : r.texts) KOTAE_ASSERT(!t.empty() && t.size() <= limits.max_text_bytes);
      break;
    }
    case Endpoint::rerank: {
      const auto r = read_rerank_request(body, limits);
      KOTAE_ASSERT(!r.texts.empty() && r.texts.size() <= limits.max_rerank_documents && r.top_n >= 1);
      for (const auto& t : r.texts) KOTAE_ASSERT(t.size() <= limits.max_text_bytes);
      break;
    }
    case Endpoint::collections: {
      const auto spec = read_new_collection(body);
      KOTAE_ASSERT(spec.overlap_tokens * 2 < (spec.chunk_tokens ? spec.chunk_tokens : 256));
      break;
    }
    case Endpoint::conversation_title: {
      const auto title = read_conversation_title(body);
      KOTAE_ASSERT(!title.empty() && title.size() <= 4 * kMaxTitleCharacters);
      KOTAE_ASSERT(title.front() != ' ' && title.back() != ' ');
      KOTAE_ASSERT(title_of_question(title) == title);  // a valid title is its own title
      break;
    }
    case Endpoint::member: {
      const auto m = read_member(body);
      KOTAE_ASSERT(m.kind == "user" || m.kind == "group" || m.kind == "key" || m.kind == "tenant");
      KOTAE_ASSERT(m.role == "reader" || m.role == "editor" || m.role == "owner");
      KOTAE_ASSERT(m.kind == "tenant" ? m.id.empty() : !m.id.empty() && m.id.size() <= kMaxMemberIdBytes);
      break;
    }
    case Endpoint::document_id:
    case Endpoint::conversation_id:
    case Endpoint::count: break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto endpoint = static_cast<Endpoint>(data[0] % static_cast<std::uint8_t>(Endpoint::count));
  try {
    decode(endpoint, std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  } catch (const ApiError& e) {
    KOTAE_ASSERT(e.status >= 400 && e.status < 500 && !e.message.empty());
    // The error response must serialise whatever bytes the message quotes from the request.
    KOTAE_ASSERT(!error_response(e).body.empty());
  }
  return 0;
}
