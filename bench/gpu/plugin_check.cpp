// Checks libkotae_cuda_encoder.so through its C interface, as Kotae's binary uses it: the vectors of
// two texts against the FP32 CPU reference, and the token states it returns (what sentence vectors
// are pooled from) against the vectors themselves. One JSON line; exit 1 when a check fails.
//
// Usage: plugin_check PLUGIN.so MODEL.safetensors
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "model/cuda/bert_reference.h"
#include "model/cuda/cuda_encoder_plugin.h"

int main(int argc, char** argv) {
  if (argc < 3) return std::fprintf(stderr, "usage: plugin_check PLUGIN.so MODEL.safetensors\n"), 2;
  void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!library) return std::fprintf(stderr, "%s\n", dlerror()), 1;
  auto open = reinterpret_cast<KotaeCudaEncoderOpen>(dlsym(library, "kotae_cuda_encoder_open"));
  auto embed = reinterpret_cast<KotaeCudaEncoderEmbed>(dlsym(library, "kotae_cuda_encoder_embed"));
  auto close = reinterpret_cast<KotaeCudaEncoderClose>(dlsym(library, "kotae_cuda_encoder_close"));
  if (!open || !embed || !close) return std::fprintf(stderr, "not a Kotae CUDA encoder plugin\n"), 1;
  char error[512] = {};
  void* encoder = open(argv[2], 12, 64, 256, error, sizeof error);
  if (!encoder) return std::fprintf(stderr, "%s\n", error), 1;
  // "Is SQLite threadsafe? Threads are evil." and "How do I create an AUTOINCREMENT field?"
  const std::vector<std::vector<int>> texts = {
      {101, 2003, 29296, 4221, 16457, 10354, 2063, 1029, 16457, 2024, 4763, 1012, 102},
      {101, 2129, 2079, 1045, 3443, 2019, 8285, 2378, 16748, 3672, 2492, 1029, 102}};
  std::vector<int> ids, lengths;
  for (const auto& t : texts) {
    ids.insert(ids.end(), t.begin(), t.end());
    lengths.push_back(static_cast<int>(t.size()));
  }
  const int hidden = 384;
  std::vector<float> vectors(texts.size() * hidden), states(ids.size() * hidden);
  if (embed(encoder, ids.data(), lengths.data(), 2, vectors.data(), states.data(), error, sizeof error) != 0) {
    return std::fprintf(stderr, "%s\n", error), 1;
  }
  const auto reference = kotae::cuda::bert_reference_embed(kotae::cuda::load_bert_weights(argv[2], 12), texts);
  double worst_reference = 1, worst_states = 1;
  for (std::size_t i = 0, first = 0; i < texts.size(); first += texts[i].size(), ++i) {
    std::vector<double> mean(hidden, 0.0);
    for (std::size_t t = 0; t < texts[i].size(); ++t) {
      for (int c = 0; c < hidden; ++c) mean[c] += states[(first + t) * hidden + c];
    }
    double norm = 0, to_reference = 0, to_states = 0;
    for (double v : mean) norm += v * v;
    for (int c = 0; c < hidden; ++c) {
      to_reference += reference[i][c] * vectors[i * hidden + c];
      to_states += mean[c] / std::sqrt(norm) * vectors[i * hidden + c];
    }
    worst_reference = std::min(worst_reference, to_reference);
    worst_states = std::min(worst_states, to_states);
  }
  close(encoder);
  const bool ok = worst_reference > 0.999 && worst_states > 0.999;
  std::printf(
      "{\"name\": \"cuda_plugin_check\", \"ok\": %s, \"vectors_vs_cpu_reference_min_cosine\": %.7f, "
      "\"pooled_states_vs_vectors_min_cosine\": %.7f}\n",
      ok ? "true" : "false", worst_reference, worst_states);
  return ok ? 0 : 1;
}
