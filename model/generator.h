#pragma once
// What the rest of Kotae sees of a text generator (a local llama.cpp model, or any server speaking
// OpenAI's chat completions): chat messages in, text out, streamed piece by piece. Prompt assembly
// asks it how many tokens a text costs and how many it may spend, so prompts are fitted before they
// are sent, never truncated by the back-end.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace kotae {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

struct GenerationOptions {
  int max_tokens = 512;
  float temperature = 0.2f;  // 0: greedy
  float top_p = 0.95f;
  std::optional<std::uint32_t> seed = {};  // unset: a random seed per request
  std::vector<std::string> stop = {};      // generation ends before the first of these; they are not returned
  bool ignore_end_of_turn = false;         // generate max_tokens whatever the model says (benchmarks; local models)
  // Whose the KV cache this request leaves is: a later request reuses a prefix only where the same owner
  // left it (the server: the tenant), so no tenant's timing or reused_prompt_tokens tells what another
  // asked. Empty requests share with each other (one user: the CLI, benchmarks).
  std::string cache_owner = {};
  std::string tenant = {};  // whose request it is, where a queue keeps tenants' turns (answer workers)
  // Asked now and then while the answer is awaited (a queued request before its first piece): false
  // means no one wants it any more (its client went away), and the request is given up.
  std::function<bool()> wanted = {};
};

// Receives the answer as it is produced: whole UTF-8 characters, never text that might turn out to
// be the start of a stop sequence. Returning false cancels the generation.
using TokenCallback = std::function<bool(std::string_view piece)>;

struct GenerationStats {
  std::size_t prompt_tokens = 0;
  std::size_t reused_prompt_tokens = 0;  // prompt tokens whose KV cache was kept from the previous turn
  std::size_t generated_tokens = 0;
  double prompt_ms = 0;       // until the first generated token (time to first token)
  double generation_ms = 0;   // after it
  std::string finish_reason;  // "stop" (end of turn or a stop sequence), "length", "cancelled"
};

struct Generation {
  std::string text;
  GenerationStats stats;
};

// Called exactly once, with the whole answer or why there is none.
using GenerationDone = std::function<void(Result<Generation>)>;

class Generator {
 public:
  virtual ~Generator() = default;

  // Names the back-end and its model, e.g. "llama.cpp:gemma-3-270m" or "openai:http://host/v1 qwen2.5".
  virtual std::string id() const = 0;
  // Tokens a request may use in all: the chat-formatted prompt plus the answer.
  virtual std::size_t context_tokens() const = 0;
  // Tokens `text` costs in a prompt (exact for a local model, an estimate for a remote one).
  virtual std::size_t count_tokens(std::string_view text) const = 0;
  // Tokens the chat format adds around each message, for budgeting.
  virtual std::size_t tokens_per_message() const { return 8; }

  // Blocks the calling thread until the answer is whole; `on_piece` runs on the calling thread.
  virtual Result<Generation> generate(std::span<const ChatMessage> messages, const GenerationOptions& options,
                                      const TokenCallback& on_piece = {}) = 0;

  // Starts the answer and returns at once where the back-end has a thread of its own (a local model's
  // scheduler): `on_piece` and `on_done` then run on that thread, so they must not block. A back-end
  // without one answers before returning (this default).
  virtual void start(std::vector<ChatMessage> messages, GenerationOptions options, TokenCallback on_piece,
                     GenerationDone on_done) {
    on_done(generate(messages, options, on_piece));
  }
};

}  // namespace kotae
