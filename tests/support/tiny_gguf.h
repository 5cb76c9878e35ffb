#pragma once
// Writes a tiny llama-architecture GGUF with random weights and no tokenizer (token ids are fed
// directly), to test the llama.cpp code paths without a real model. Not for judging quality.

#include <cstdint>
#include <filesystem>

namespace kotae::testing {

struct TinyLlamaShape {
  std::uint32_t vocab = 256;
  std::uint32_t embedding = 64;
  std::uint32_t layers = 2;
  std::uint32_t feed_forward = 128;
  std::uint32_t heads = 4;
  std::uint32_t kv_heads = 2;
  std::uint32_t context = 256;
};

// Returns false when the file cannot be written.
bool write_tiny_llama_gguf(const std::filesystem::path& path, const TinyLlamaShape& shape, std::uint32_t seed = 42);

}  // namespace kotae::testing
