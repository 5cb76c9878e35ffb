// Kotae's native CUDA encoder (model/cuda) on the default model's FP16 weights: latency at batch 1,
// throughput at batch 64, its agreement with the FP32 CPU reference, and the first 64 texts' vectors
// for the parity check against sentence-transformers. Token ids come prepared (tokens.bin: int32
// count, then per text int32 length and ids), so this times the encoder alone. JSON lines.
//
// Usage: cuda_encoder_bench MODEL.safetensors TOKENS.bin SECONDS VECTORS_OUT
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

#include "bench/gpu/encoder_timing.h"
#include "model/cuda/bert_cuda_encoder.h"
#include "model/cuda/bert_reference.h"

namespace {

std::vector<std::vector<int>> read_tokens(const char* path) {
  std::ifstream in(path, std::ios::binary);
  int count = 0;
  in.read(reinterpret_cast<char*>(&count), 4);
  std::vector<std::vector<int>> texts(count);
  for (auto& t : texts) {
    int length = 0;
    in.read(reinterpret_cast<char*>(&length), 4);
    t.resize(length);
    in.read(reinterpret_cast<char*>(t.data()), 4 * static_cast<std::streamsize>(length));
  }
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path);
    std::exit(1);
  }
  return texts;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: cuda_encoder_bench MODEL.safetensors TOKENS.bin SECONDS VECTORS_OUT\n");
    return 2;
  }
  const double seconds = std::atof(argv[3]);
  const auto weights = kotae::cuda::load_bert_weights(argv[1], 12);
  const auto texts = read_tokens(argv[2]);
  constexpr int kBatch = 64;
  if (texts.size() < kBatch) return std::fprintf(stderr, "need at least %d texts\n", kBatch), 1;
  kotae::cuda::BertCudaEncoder encoder(weights, kBatch, 256);
  const int hidden = encoder.hidden();

  const std::vector<std::vector<int>> first(texts.begin(), texts.begin() + kBatch);
  const auto vectors = encoder.embed(first);
  std::ofstream(argv[4], std::ios::binary)
      .write(reinterpret_cast<const char*>(vectors.data()), vectors.size() * sizeof(float));
  const std::vector<std::vector<int>> few(texts.begin(), texts.begin() + 8);
  const auto reference = kotae::cuda::bert_reference_embed(weights, few);
  double worst = 1.0;
  for (std::size_t i = 0; i < few.size(); ++i) {
    double cosine = 0;
    for (int c = 0; c < hidden; ++c) cosine += reference[i][c] * vectors[i * hidden + c];
    worst = std::min(worst, cosine);
  }
  std::printf("{\"name\": \"cpu_reference\", \"engine\": \"kotae-cuda-fp16\", \"texts\": %zu, \"min_cosine\": %.7f}\n",
              few.size(), worst);

  for (int i = 0; i < 20; ++i) encoder.embed(first);
  std::size_t tokens_total = 0;
  for (const auto& t : texts) tokens_total += t.size();
  for (int batch : {1, kBatch}) {
    std::vector<std::vector<int>> group(batch);
    const auto t = time_encoder(
        seconds, batch,
        [&](std::size_t done) {
          for (int b = 0; b < batch; ++b) group[b] = texts[(done + b) % texts.size()];
        },
        [&] { encoder.embed(group); });
    std::printf(
        "{\"name\": \"encoder\", \"engine\": \"kotae-cuda-fp16\", \"batch\": %d, \"calls\": %zu, \"p50_ms\": %.4f, "
        "\"p95_ms\": %.4f, \"p99_ms\": %.4f, \"texts_per_s\": %.1f, \"mean_tokens\": %.1f, \"device\": \"%s\"}\n",
        batch, t.calls, t.p50_ms, t.p95_ms, t.p99_ms, t.texts_per_s, static_cast<double>(tokens_total) / texts.size(),
        encoder.device_name().c_str());
  }
  return 0;
}
