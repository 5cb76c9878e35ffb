// Generation speed through llama.cpp with every layer offloaded (as Kotae's LlamaGenerator does with
// --gpu-layers -1 on a CUDA build): a prompt decoded in one batch, then tokens generated one at a time
// (greedy), each run from an empty KV cache; the runs' median prompt and generation tokens/s (p50,
// core/percentile.h). Built on the GPU machine by bench/gpu/run against llama.h and that header
// alone. One JSON line on stdout.
//
// Usage: llama_generate_bench MODEL.gguf PROMPT_TOKENS GENERATED_TOKENS RUNS [--cpu]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/gpu/ggml_backends.h"
#include "core/percentile.h"
#include "llama.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

void decode(llama_context* ctx, llama_batch batch) {
  if (llama_decode(ctx, batch) != 0) {
    std::fprintf(stderr, "llama_decode failed\n");
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: llama_generate_bench MODEL.gguf PROMPT_TOKENS GENERATED_TOKENS RUNS [--cpu]\n");
    return 2;
  }
  const int prompt_tokens = std::atoi(argv[2]), generated = std::atoi(argv[3]), runs = std::max(1, std::atoi(argv[4]));
  const bool cpu = argc > 5 && std::strcmp(argv[5], "--cpu") == 0;
  llama_log_set([](ggml_log_level, const char*, void*) {}, nullptr);
  load_ggml_backends();
  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = cpu ? 0 : -1;
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (!model) return std::fprintf(stderr, "cannot load %s\n", argv[1]), 1;
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = static_cast<uint32_t>(prompt_tokens + generated + 16);
  cp.n_batch = cp.n_ubatch = static_cast<uint32_t>(prompt_tokens);
  llama_context* ctx = llama_init_from_model(model, cp);
  if (!ctx) return std::fprintf(stderr, "cannot create a context\n"), 1;
  const llama_vocab* vocab = llama_model_get_vocab(model);
  const int vocab_size = llama_vocab_n_tokens(vocab);

  // The prompt: English text through the model's own tokenizer, repeated to the length asked for.
  const std::string text = "Kotae answers questions about your documents with citations that point at exact spans. ";
  std::vector<llama_token> prompt;
  while (static_cast<int>(prompt.size()) < prompt_tokens) {
    std::vector<llama_token> piece(256);
    const int n =
        llama_tokenize(vocab, text.data(), static_cast<int>(text.size()), piece.data(), 256, prompt.empty(), false);
    if (n <= 0) return std::fprintf(stderr, "cannot tokenize\n"), 1;
    prompt.insert(prompt.end(), piece.begin(), piece.begin() + n);
  }
  prompt.resize(prompt_tokens);

  std::vector<double> prompt_rates, generation_rates;
  for (int run = 0; run <= runs; ++run) {  // run 0 warms up
    llama_memory_clear(llama_get_memory(ctx), true);
    auto start = Clock::now();
    decode(ctx, llama_batch_get_one(prompt.data(), static_cast<int32_t>(prompt.size())));
    const float* logits = llama_get_logits_ith(ctx, -1);
    const double prompt_s = seconds_since(start);
    start = Clock::now();
    for (int i = 0; i < generated; ++i) {
      llama_token next = static_cast<llama_token>(std::max_element(logits, logits + vocab_size) - logits);
      decode(ctx, llama_batch_get_one(&next, 1));
      logits = llama_get_logits_ith(ctx, -1);
    }
    if (run > 0) {
      prompt_rates.push_back(prompt_tokens / prompt_s);
      generation_rates.push_back(generated / seconds_since(start));
    }
  }
  std::string devices;
  for (size_t i = 0; i < ggml_backend_dev_count(); ++i) {
    ggml_backend_dev_t dev = ggml_backend_dev_get(i);
    if (ggml_backend_dev_type(dev) == GGML_BACKEND_DEVICE_TYPE_CPU) continue;
    devices += std::string(devices.empty() ? "" : ", ") + ggml_backend_dev_description(dev);
  }
  char description[256];
  llama_model_desc(model, description, sizeof description);
  std::printf(
      "{\"name\": \"generation\", \"engine\": \"llama.cpp-%s\", \"model\": \"%s\", \"layers\": %d, "
      "\"gpu_offload\": %s, \"gpu_devices\": \"%s\", \"prompt_tokens\": %d, \"prompt_tokens_per_s\": %.1f, "
      "\"generated_tokens\": %d, \"tokens_per_s\": %.1f, \"runs\": %d}\n",
      cpu ? "cpu" : "gpu", description, llama_model_n_layer(model),
      llama_supports_gpu_offload() && !cpu ? "true" : "false", devices.c_str(), prompt_tokens,
      kotae::percentile(prompt_rates, 50), generated, kotae::percentile(generation_rates, 50), runs);
  llama_free(ctx);
  llama_model_free(model);
  return 0;
}
