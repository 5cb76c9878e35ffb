#include "tiny_gguf.h"

#include <ggml.h>
#include <gguf.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace kotae::testing {
namespace {

constexpr const char* kChatMlTemplate =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + "
    "'\\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

struct TinyVocab {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<std::int32_t> types;  // llama_token_type: 1 normal, 2 unknown, 3 control, 6 byte
};

TinyVocab tiny_vocab() {
  TinyVocab v;
  auto add = [&](std::string token, std::int32_t type) {
    v.tokens.push_back(std::move(token));
    v.scores.push_back(0.0f);
    v.types.push_back(type);
  };
  add("<unk>", 2);
  add("<s>", 3);
  add("</s>", 3);
  add("<|im_start|>", 3);
  add("<|im_end|>", 3);
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    add(name, 6);
  }
  add("\xE2\x96\x81", 1);  // "▁", SentencePiece's space
  for (char c = '!'; c <= '~'; ++c) add(std::string(1, c), 1);
  return v;
}

ggml_type ggml_type_of(TinyWeights weights) {
  switch (weights) {
    case TinyWeights::q8_0: return GGML_TYPE_Q8_0;
    case TinyWeights::q4_k: return GGML_TYPE_Q4_K;
    case TinyWeights::f32: break;
  }
  return GGML_TYPE_F32;
}

void set_string_array(gguf_context* gguf, const char* key, const std::vector<std::string>& values) {
  std::vector<const char*> pointers;
  for (const auto& s : values) pointers.push_back(s.c_str());
  gguf_set_arr_str(gguf, key, pointers.data(), pointers.size());
}

}  // namespace

std::uint32_t tiny_tokenizer_size() {
  return static_cast<std::uint32_t>(tiny_vocab().tokens.size());
}

bool write_tiny_llama_gguf(const std::filesystem::path& path, const TinyLlamaShape& shape, std::uint32_t seed) {
  TinyLlamaShape s = shape;
  if (s.with_tokenizer) s.vocab = tiny_tokenizer_size();
  ggml_init_params params{/*mem_size=*/64u << 20, /*mem_buffer=*/nullptr, /*no_alloc=*/false};
  ggml_context* ctx = ggml_init(params);
  gguf_context* gguf = gguf_init_empty();
  std::mt19937 rng(seed);
  std::normal_distribution<float> weight(0.0f, 0.02f);

  gguf_set_val_str(gguf, "general.architecture", "llama");
  gguf_set_val_str(gguf, "general.name", "kotae-tiny-llama");
  gguf_set_val_u32(gguf, "llama.vocab_size", s.vocab);
  gguf_set_val_u32(gguf, "llama.context_length", s.context);
  gguf_set_val_u32(gguf, "llama.embedding_length", s.embedding);
  gguf_set_val_u32(gguf, "llama.block_count", s.layers);
  gguf_set_val_u32(gguf, "llama.feed_forward_length", s.feed_forward);
  gguf_set_val_u32(gguf, "llama.attention.head_count", s.heads);
  gguf_set_val_u32(gguf, "llama.attention.head_count_kv", s.kv_heads);
  gguf_set_val_u32(gguf, "llama.rope.dimension_count", s.embedding / s.heads);
  gguf_set_val_f32(gguf, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
  if (s.with_tokenizer) {
    const TinyVocab v = tiny_vocab();
    gguf_set_val_str(gguf, "tokenizer.ggml.model", "llama");
    set_string_array(gguf, "tokenizer.ggml.tokens", v.tokens);
    gguf_set_arr_data(gguf, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, v.scores.data(), v.scores.size());
    gguf_set_arr_data(gguf, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, v.types.data(), v.types.size());
    gguf_set_val_u32(gguf, "tokenizer.ggml.unknown_token_id", 0);
    gguf_set_val_u32(gguf, "tokenizer.ggml.bos_token_id", 1);
    gguf_set_val_u32(gguf, "tokenizer.ggml.eos_token_id", 4);  // <|im_end|> ends a turn
    gguf_set_val_bool(gguf, "tokenizer.ggml.add_bos_token", true);
    gguf_set_val_str(gguf, "tokenizer.chat_template", kChatMlTemplate);
  } else {
    gguf_set_val_str(gguf, "tokenizer.ggml.model", "no_vocab");
  }

  const ggml_type matrix_type = ggml_type_of(s.weights);
  auto add = [&](const std::string& name, std::int64_t ne0, std::int64_t ne1, bool is_norm) {
    ggml_tensor* t =
        ne1 > 0 ? ggml_new_tensor_2d(ctx, GGML_TYPE_F32, ne0, ne1) : ggml_new_tensor_1d(ctx, GGML_TYPE_F32, ne0);
    auto* data = static_cast<float*>(t->data);
    for (std::int64_t i = 0; i < ggml_nelements(t); ++i) data[i] = is_norm ? 1.0f : weight(rng);
    if (ne1 > 0 && matrix_type != GGML_TYPE_F32) {
      ggml_tensor* quantised = ggml_new_tensor_2d(ctx, matrix_type, ne0, ne1);
      ggml_quantize_chunk(matrix_type, data, quantised->data, 0, ne1, ne0, nullptr);
      t = quantised;
    }
    ggml_set_name(t, name.c_str());
    gguf_add_tensor(gguf, t);
  };
  const std::int64_t head = s.embedding / s.heads, kv = head * s.kv_heads;
  add("token_embd.weight", s.embedding, s.vocab, false);
  add("output_norm.weight", s.embedding, 0, true);
  add("output.weight", s.embedding, s.vocab, false);
  for (std::uint32_t l = 0; l < s.layers; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    add(b + "attn_norm.weight", s.embedding, 0, true);
    add(b + "attn_q.weight", s.embedding, head * s.heads, false);
    add(b + "attn_k.weight", s.embedding, kv, false);
    add(b + "attn_v.weight", s.embedding, kv, false);
    add(b + "attn_output.weight", head * s.heads, s.embedding, false);
    add(b + "ffn_norm.weight", s.embedding, 0, true);
    add(b + "ffn_gate.weight", s.embedding, s.feed_forward, false);
    add(b + "ffn_down.weight", s.feed_forward, s.embedding, false);
    add(b + "ffn_up.weight", s.embedding, s.feed_forward, false);
  }
  const bool written = gguf_write_to_file(gguf, path.c_str(), /*only_meta=*/false);
  gguf_free(gguf);
  ggml_free(ctx);
  return written;
}

}  // namespace kotae::testing
