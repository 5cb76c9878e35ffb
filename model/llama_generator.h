#pragma once
// A local GGUF chat model on llama.cpp as a Generator. The chat template comes from the model's
// metadata (ChatML when it has none, or a named built-in template by option). Requests are answered
// side by side, continuously batched in one context of N slots (model/llama_scheduler.h) whose KV
// caches outlive their requests: a follow-up decodes only what differs from its conversation's tokens
// already there, so a stable prefix (instructions, sources already sent, earlier turns) is computed once.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "model/generator.h"

namespace kotae {

struct LlamaGeneratorOptions {
  int context_length = 4096;    // each slot's, capped at the model's training context
  int parallel = 0;             // slots (requests answered at once); 0: as many as the KV cache budget allows, up to 8
  std::size_t max_queued = 64;  // requests waiting for a slot; more are refused as overloaded (503)
  int batch = 512;              // tokens decoded per step, all slots together
  int threads = 0;              // 0: all cores
  int gpu_layers = -1;          // layers offloaded where llama.cpp has a GPU back-end; -1: all, 0: none
  bool reuse_prefix = true;     // keep slots' KV caches between requests (off: every prompt is decoded from scratch)
  int niceness = 0;             // added to the generation threads' nice value (a server: quick requests first)
  std::string chat_template =
      {};  // a llama.cpp built-in name ("chatml", "gemma", "llama3", ...); empty: the model's own
};

class LlamaGenerator final : public Generator {
 public:
  static Result<std::unique_ptr<LlamaGenerator>> load(const std::filesystem::path& gguf,
                                                      const LlamaGeneratorOptions& options = {});
  ~LlamaGenerator() override;
  LlamaGenerator(const LlamaGenerator&) = delete;
  LlamaGenerator& operator=(const LlamaGenerator&) = delete;

  std::string id() const override;
  std::size_t context_tokens() const override;
  std::size_t count_tokens(std::string_view text) const override;
  std::size_t tokens_per_message() const override;
  Result<Generation> generate(std::span<const ChatMessage> messages, const GenerationOptions& options,
                              const TokenCallback& on_piece = {}) override;
  void start(std::vector<ChatMessage> messages, GenerationOptions options, TokenCallback on_piece,
             GenerationDone on_done) override;
  int slots() const;

  // The messages as the model sees them, with the assistant's turn opened.
  Result<std::string> format_chat(std::span<const ChatMessage> messages) const;
  // Text to token ids; `special` adds BOS and parses control tokens written in the text.
  std::vector<std::int32_t> tokenize(std::string_view text, bool special) const;
  // Forgets the idle slots' KV caches (the next request decodes its whole prompt).
  void reset_cache();

 private:
  struct State;
  explicit LlamaGenerator(std::unique_ptr<State> state);
  Result<std::vector<std::int32_t>> prompt_tokens(std::span<const ChatMessage> messages) const;
  std::unique_ptr<State> state_;
};

}  // namespace kotae
