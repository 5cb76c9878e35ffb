#pragma once
// Writes a tiny llama-architecture GGUF with random weights, to test the llama.cpp code paths without
// a real model. Not for judging quality. Without a tokenizer token ids are fed directly; with one
// (SentencePiece-style: printable ASCII, byte fallback, ChatML control tokens and chat template) it
// loads in llama.cpp's server and tools like any chat model, and its output is random text. Its
// matrices can be quantised (Q8_0, Q4_K) to take llama.cpp's quantised kernels (AMX, VNNI, repacking):
// then every matrix dimension must be a multiple of 256 except the vocabulary.

#include <cstdint>
#include <filesystem>

namespace kotae::testing {

enum class TinyWeights { f32, q8_0, q4_k };

struct TinyLlamaShape {
  std::uint32_t vocab = 256;
  std::uint32_t embedding = 64;
  std::uint32_t layers = 2;
  std::uint32_t feed_forward = 128;
  std::uint32_t heads = 4;
  std::uint32_t kv_heads = 2;
  std::uint32_t context = 256;
  bool with_tokenizer = false;  // sets vocab to tiny_tokenizer_size()
  TinyWeights weights =
      TinyWeights::f32;  // the matrices' type; norms stay F32. Same seed, same values before quantising
};

// Tokens of the tokenizer: <unk> <s> </s> <|im_start|> <|im_end|>, 256 bytes, "▁" and printable ASCII.
std::uint32_t tiny_tokenizer_size();

// Returns false when the file cannot be written.
bool write_tiny_llama_gguf(const std::filesystem::path& path, const TinyLlamaShape& shape, std::uint32_t seed = 42);

}  // namespace kotae::testing
