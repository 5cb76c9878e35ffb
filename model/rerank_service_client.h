#pragma once
// A Reranker that asks a reranking service over HTTP instead of running a model here: Hugging Face
// TEI's POST /rerank, Cohere's v1 (also Jina's, llama.cpp's and Kotae's) POST /v1/rerank, or Cohere's
// v2 POST /v2/rerank. score() posts the query and its passages in the API's JSON, at most
// `max_batch` passages a request; a longer list goes out as several requests at once (concurrently,
// on one libcurl multi handle), and their answers are put back in the passages' order.
//
// Every answer is checked before it is believed: HTTP 2xx, at most `max_response_bytes`, JSON at most
// a few levels deep, one result per passage sent, each index an integer in range and present once,
// each score a finite number (as a float too). Anything else is an error, never a partial ranking.
//
// Requests run on one thread of the client's own (callers never wait on the network: score_async
// returns at once and `done` runs on that thread). Each request has its own deadline
// (`timeout_ms`, from connecting to the last byte). A circuit breaker spares callers a dead service:
// after `failures_to_open` failed calls in a row the service is skipped (score fails at once) for
// `cool_down_ms`; then one call goes through, and its success closes the circuit again.
// The API key is sent as a bearer token and never logged or put in an error.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "model/reranker.h"

namespace kotae {

enum class RerankApi {
  tei,        // {query, texts, truncate} → [{index, score}]
  cohere_v1,  // {model?, query, documents, top_n, return_documents} → {results: [{index, relevance_score}]}
  cohere_v2,  // {model?, query, documents, top_n} → {results: [{index, relevance_score}]}
};

// "tei", "cohere" (also "jina-v1", "cohere-v1"), "cohere-v2"; invalid_argument for anything else.
Result<RerankApi> parse_rerank_api(std::string_view name);
const char* to_string(RerankApi api);
// The API a URL's path names: ending in /v2/rerank → cohere_v2, /v1/rerank → cohere_v1, /rerank → tei.
// invalid_argument when the path ends otherwise (then --rerank-api must say).
Result<RerankApi> rerank_api_from_url(std::string_view url);

// One request's body (passages in their order) and the scores its answer gives them, in that order.
// The parser is the whole check described above; `expected` is how many passages were sent.
std::string rerank_request_body(RerankApi api, const std::string& model, std::string_view query,
                                std::span<const std::string> passages);
Result<std::vector<float>> parse_rerank_response(RerankApi api, std::string_view body, std::size_t expected);

struct RerankServiceOptions {
  std::string url = {};  // the full endpoint, e.g. http://127.0.0.1:8080/rerank
  RerankApi api = RerankApi::tei;
  std::string model = {};          // the body's "model"; empty: none sent
  std::string api_key = {};        // empty: no Authorization header
  long timeout_ms = 2000;          // one request, from connecting to its last byte
  long connect_timeout_ms = 1000;  // at most timeout_ms
  std::size_t max_batch = 32;      // passages per request (TEI's default max_client_batch_size is 32)
  std::size_t max_response_bytes = 1 << 20;
  int failures_to_open = 3;        // failed calls in a row that open the circuit
  long cool_down_ms = 30000;       // how long an open circuit skips the service
  std::size_t max_pending = 1024;  // calls waiting or in flight; more fail at once (overloaded)
};

struct RerankServiceStats {
  std::uint64_t calls = 0;     // score calls that reached the service
  std::uint64_t requests = 0;  // HTTP requests sent (a call of more than max_batch passages sends several)
  std::uint64_t failures = 0;  // calls that failed (error, timeout, a refused answer)
  std::uint64_t skipped = 0;   // calls failed at once by the open circuit
  bool circuit_open = false;
};

class RerankServiceClient final : public Reranker {
 public:
  // invalid_argument for a URL that is not http:// or https:// with a host, or limits out of range.
  static Result<std::unique_ptr<RerankServiceClient>> create(RerankServiceOptions options);
  ~RerankServiceClient() override;

  // Errors: unavailable (refused, timed out, the circuit open, HTTP 5xx), corrupt (an answer that fails
  // the checks), invalid_argument (HTTP 4xx), overloaded (max_pending calls already waiting).
  Result<std::vector<float>> score(std::string_view query, std::span<const std::string> passages) const override;
  void score_async(std::string query, std::vector<std::string> passages, ScoresDone done) const override;
  // "rerank-service:API[:MODEL]" (never the URL, which may carry credentials).
  std::string id() const override;

  RerankServiceStats stats() const;
  const RerankServiceOptions& options() const { return options_; }

 private:
  explicit RerankServiceClient(RerankServiceOptions options);
  struct Worker;
  RerankServiceOptions options_;
  std::unique_ptr<Worker> worker_;
};

}  // namespace kotae
