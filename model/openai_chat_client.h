#pragma once
// A Generator that talks to any server speaking OpenAI's chat completions API (llama.cpp's
// llama-server, vLLM, Ollama, OpenAI itself): POST {base_url}/chat/completions, always streamed as
// Server-Sent Events, so pieces reach the caller as the server produces them and a cancelled answer
// stops the server's work (the connection is closed).
//
// Failures before any byte of the answer arrived (connection refused, DNS, timeouts) and overload
// answers (HTTP 429/502/503/504) are retried with exponential backoff, honouring Retry-After; once the
// server has started answering nothing is retried, so the caller never sees a piece twice.
// Connections are kept alive between calls (a pool of idle ones, each used by one call at a time), so
// generate() may run on several threads at once without a TCP and TLS handshake per answer. A request
// whose caller no longer wants it (GenerationOptions::wanted, the server's client gone) is given up:
// the connection is closed, which stops the server's work too.

#include <cstddef>
#include <memory>
#include <string>

#include "model/generator.h"

namespace kotae {

struct OpenAIChatOptions {
  // Everything before "/chat/completions", as the openai Python client's base_url:
  // "http://127.0.0.1:8080/v1" for llama-server, "http://127.0.0.1:11434/v1" for Ollama.
  std::string base_url = {};
  std::string model = {};             // empty: no "model" field (single-model servers such as llama-server ignore it)
  std::string api_key = {};           // empty: no Authorization header
  std::size_t context_tokens = 4096;  // the server's context per request; the API does not tell us
  long connect_timeout_ms = 2000;
  long request_timeout_ms = 120000;       // one attempt, from connecting to the last byte of the answer
  long idle_timeout_ms = 30000;           // once the server has started answering, the longest silence
  int max_retries = 2;                    // attempts after the first
  long retry_backoff_ms = 200;            // before the first retry; doubled for each further one
  long max_retry_after_ms = 10000;        // a server's Retry-After is honoured up to this
  std::size_t max_idle_connections = 16;  // kept alive between calls; more are closed when their call ends
};

class OpenAIChatClient final : public Generator {
 public:
  // Fails (invalid_argument) for a base_url that is not http:// or https://.
  static Result<std::unique_ptr<OpenAIChatClient>> create(OpenAIChatOptions options);
  ~OpenAIChatClient() override;

  std::string id() const override;
  std::size_t context_tokens() const override { return options_.context_tokens; }
  // An estimate: see the definition.
  std::size_t count_tokens(std::string_view text) const override;

  // Errors: io (unreachable, timed out), invalid_argument (HTTP 400/404/422), overloaded (429/503
  // after the retries), model (other HTTP errors, an error event in the stream), corrupt (an answer
  // that is not a well-formed event stream). Cancelling through on_piece is not an error: the result
  // holds the pieces so far and finish_reason "cancelled".
  Result<Generation> generate(std::span<const ChatMessage> messages, const GenerationOptions& options,
                              const TokenCallback& on_piece = {}) override;

  const std::string& endpoint() const { return endpoint_; }

 private:
  explicit OpenAIChatClient(OpenAIChatOptions options);

  OpenAIChatOptions options_;
  std::string endpoint_;  // base_url + "/chat/completions"
  struct Connections;
  std::unique_ptr<Connections> connections_;  // idle, kept alive
};

}  // namespace kotae
