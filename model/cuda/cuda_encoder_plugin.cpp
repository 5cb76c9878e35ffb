// libkotae_cuda_encoder.so: BertCudaEncoder behind the C interface of cuda_encoder_plugin.h.
#include "model/cuda/cuda_encoder_plugin.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "model/cuda/bert_cuda_encoder.h"

#ifndef KOTAE_CUDA_ARCHITECTURES_BUILT
#define KOTAE_CUDA_ARCHITECTURES_BUILT ""  // built outside CMake (bench/gpu/run), for the GPU at hand
#endif

namespace {

struct Plugin {
  std::unique_ptr<kotae::cuda::BertCudaEncoder> encoder;
  std::string device;
};

void report(const std::exception& e, char* error, int size) {
  if (!error || size <= 0) return;
  std::strncpy(error, e.what(), static_cast<std::size_t>(size) - 1);
  error[size - 1] = '\0';
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void* kotae_cuda_encoder_open(const char* safetensors, int heads, int max_batch,
                                                                     int max_tokens, char* error, int error_size) {
  try {
    auto plugin = std::make_unique<Plugin>();
    plugin->encoder = std::make_unique<kotae::cuda::BertCudaEncoder>(kotae::cuda::load_bert_weights(safetensors, heads),
                                                                     max_batch, max_tokens);
    plugin->device = plugin->encoder->device_name();
    return plugin.release();
  } catch (const std::exception& e) {
    report(e, error, error_size);
    return nullptr;
  }
}

__attribute__((visibility("default"))) int kotae_cuda_encoder_embed(void* handle, const int* ids, const int* lengths,
                                                                    int texts, float* vectors, float* states,
                                                                    char* error, int error_size) {
  try {
    auto& encoder = *static_cast<Plugin*>(handle)->encoder;
    std::vector<std::vector<int>> input(texts);
    for (int i = 0, at = 0; i < texts; at += lengths[i], ++i) input[i].assign(ids + at, ids + at + lengths[i]);
    std::vector<std::vector<float>> token_states;
    const auto out = encoder.embed(input, states ? &token_states : nullptr);
    std::memcpy(vectors, out.data(), out.size() * sizeof(float));
    for (const auto& t : token_states) states = std::copy(t.begin(), t.end(), states);
    return 0;
  } catch (const std::exception& e) {
    report(e, error, error_size);
    return 1;
  }
}

__attribute__((visibility("default"))) int kotae_cuda_encoder_score(void* handle, const int* ids, const int* types,
                                                                    const int* lengths, int pairs, float* scores,
                                                                    char* error, int error_size) {
  try {
    std::vector<kotae::cuda::PairTokens> input(pairs);
    for (int i = 0, at = 0; i < pairs; at += lengths[i], ++i) {
      input[i].ids.assign(ids + at, ids + at + lengths[i]);
      input[i].types.assign(types + at, types + at + lengths[i]);
    }
    const auto out = static_cast<Plugin*>(handle)->encoder->score(input);
    std::copy(out.begin(), out.end(), scores);
    return 0;
  } catch (const std::exception& e) {
    report(e, error, error_size);
    return 1;
  }
}

__attribute__((visibility("default"))) int kotae_cuda_encoder_hidden(void* handle) {
  return static_cast<Plugin*>(handle)->encoder->hidden();
}

__attribute__((visibility("default"))) const char* kotae_cuda_encoder_device(void* handle) {
  return static_cast<Plugin*>(handle)->device.c_str();
}

__attribute__((visibility("default"))) const char* kotae_cuda_encoder_architectures() {
  return KOTAE_CUDA_ARCHITECTURES_BUILT;
}

__attribute__((visibility("default"))) void kotae_cuda_encoder_close(void* handle) {
  delete static_cast<Plugin*>(handle);
}
}
