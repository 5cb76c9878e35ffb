// The default embedding model as GGUF through llama.cpp (CUDA when built so): latency at batch 1,
// throughput at batch 64 (texts of one line each, mean pooling), and the vectors of the first texts
// for the parity check. Built on the GPU machine by bench/gpu/run against llama.h alone; the seed of
// Kotae's llama.cpp encoder. JSON lines on stdout.
//
// Usage: llama_encoder_bench MODEL.gguf TEXTS.txt SECONDS VECTORS_OUT [--cpu]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "bench/gpu/encoder_timing.h"
#include "bench/gpu/ggml_backends.h"
#include "llama.h"

namespace {

constexpr int kBatch = 64;
constexpr int kMaxTokens = 128;

struct Encoder {
  llama_context* ctx;
  llama_batch batch;
  int dim;

  // Encodes texts[first, first + count) and returns their pooled vectors, one after another.
  std::vector<float> encode(const std::vector<std::vector<llama_token>>& texts, std::size_t first, int count) {
    llama_memory_clear(llama_get_memory(ctx), true);
    batch.n_tokens = 0;
    for (int s = 0; s < count; ++s) {
      const auto& tokens = texts[(first + s) % texts.size()];
      for (std::size_t i = 0; i < tokens.size(); ++i) {
        const int at = batch.n_tokens++;
        batch.token[at] = tokens[i];
        batch.pos[at] = static_cast<llama_pos>(i);
        batch.n_seq_id[at] = 1;
        batch.seq_id[at][0] = s;
        batch.logits[at] = true;
      }
    }
    if (llama_decode(ctx, batch) < 0) {
      std::fprintf(stderr, "llama_decode failed\n");
      std::exit(1);
    }
    std::vector<float> out(static_cast<std::size_t>(count) * dim);
    for (int s = 0; s < count; ++s) std::memcpy(&out[s * dim], llama_get_embeddings_seq(ctx, s), dim * sizeof(float));
    return out;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: llama_encoder_bench MODEL.gguf TEXTS.txt SECONDS VECTORS_OUT [--cpu]\n");
    return 2;
  }
  const bool cpu = argc > 5 && std::strcmp(argv[5], "--cpu") == 0;
  const double seconds = std::atof(argv[3]);
  llama_log_set([](ggml_log_level, const char*, void*) {}, nullptr);
  load_ggml_backends();
  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = cpu ? 0 : 999;
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (!model) return std::fprintf(stderr, "cannot load %s\n", argv[1]), 1;
  llama_context_params cp = llama_context_default_params();
  cp.embeddings = true;
  cp.pooling_type = LLAMA_POOLING_TYPE_MEAN;
  cp.n_ctx = cp.n_batch = cp.n_ubatch = kBatch * kMaxTokens;
  cp.n_seq_max = kBatch;
  llama_context* ctx = llama_init_from_model(model, cp);
  if (!ctx) return std::fprintf(stderr, "cannot create a context\n"), 1;
  const llama_vocab* vocab = llama_model_get_vocab(model);

  std::vector<std::vector<llama_token>> texts;
  std::ifstream in(argv[2]);
  std::size_t tokens_total = 0;
  for (std::string line; std::getline(in, line);) {
    std::vector<llama_token> tokens(kMaxTokens + 8);
    int n = llama_tokenize(vocab, line.data(), static_cast<int>(line.size()), tokens.data(),
                           static_cast<int>(tokens.size()), true, false);
    if (n < 0) n = static_cast<int>(tokens.size());
    tokens.resize(std::min(n, kMaxTokens));
    tokens_total += tokens.size();
    texts.push_back(std::move(tokens));
  }
  if (texts.size() < kBatch) return std::fprintf(stderr, "need at least %d texts\n", kBatch), 1;
  Encoder encoder{ctx, llama_batch_init(kBatch * kMaxTokens, 0, 1), llama_model_n_embd(model)};
  const char* engine = cpu ? "llama.cpp-cpu-f16" : "llama.cpp-cuda-f16";

  // The first 64 texts' vectors, for the parity check against sentence-transformers.
  {
    const auto vectors = encoder.encode(texts, 0, kBatch);
    std::ofstream(argv[4], std::ios::binary)
        .write(reinterpret_cast<const char*>(vectors.data()), vectors.size() * sizeof(float));
  }
  for (int i = 0; i < 20; ++i) encoder.encode(texts, i * kBatch, kBatch);

  for (int batch : {1, kBatch}) {
    std::size_t first = 0;
    const auto t = time_encoder(
        seconds, batch, [&](std::size_t done) { first = done; }, [&] { encoder.encode(texts, first, batch); });
    std::printf(
        "{\"name\": \"encoder\", \"engine\": \"%s\", \"batch\": %d, \"calls\": %zu, \"p50_ms\": %.4f, "
        "\"p95_ms\": %.4f, \"p99_ms\": %.4f, \"texts_per_s\": %.1f, \"mean_tokens\": %.1f}\n",
        engine, batch, t.calls, t.p50_ms, t.p95_ms, t.p99_ms, t.texts_per_s,
        static_cast<double>(tokens_total) / texts.size());
  }
  llama_batch_free(encoder.batch);
  llama_free(ctx);
  llama_model_free(model);
  return 0;
}
