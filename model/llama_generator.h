#pragma once
// A local GGUF chat model on llama.cpp as a Generator. The chat template comes from the model's
// metadata (ChatML when it has none, or a named built-in template by option). The prompt is decoded
// in one context whose KV cache outlives the request: the next request decodes only what differs
// from the tokens already there, so a conversation's stable prefix (instructions, sources already
// sent, earlier turns) is computed once. One request at a time per generator (a mutex): a model's
// context is one stream of work.

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
  int context_length = 4096;  // capped at the model's training context
  int batch = 512;            // prompt tokens decoded per step
  int threads = 0;            // 0: all cores
  int gpu_layers = -1;        // layers offloaded where llama.cpp has a GPU back-end; -1: all, 0: none
  bool reuse_prefix = true;   // keep the KV cache between requests (off: every prompt is decoded from scratch)
  std::string chat_template = {};  // a llama.cpp built-in name ("chatml", "gemma", "llama3", ...); empty: the model's own
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

  // The messages as the model sees them, with the assistant's turn opened.
  Result<std::string> format_chat(std::span<const ChatMessage> messages) const;
  // Text to token ids; `special` adds BOS and parses control tokens written in the text.
  std::vector<std::int32_t> tokenize(std::string_view text, bool special) const;
  // Forgets the kept KV cache (the next request decodes its whole prompt).
  void reset_cache();

 private:
  struct State;
  explicit LlamaGenerator(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace kotae
