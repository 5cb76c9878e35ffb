#pragma once
// The model the retrieval bench drives: Kotae's native CUDA encoder, or, built with
// -DKOTAE_BENCH_CPU_REFERENCE (the dry run, machines without a GPU), the FP32 CPU reference that
// encoder is checked against. One call at a time: the batchers' worker threads are its only callers.
#include <string>
#include <vector>

#include "model/cuda/bert_reference.h"
#include "model/cuda/bert_weights.h"
#ifndef KOTAE_BENCH_CPU_REFERENCE
#include "model/cuda/bert_cuda_encoder.h"
#endif

namespace kotae::bench {

#ifdef KOTAE_BENCH_CPU_REFERENCE
class BertEngine {
 public:
  BertEngine(const cuda::BertWeights& weights, int /*max_batch*/, int /*max_tokens*/) : weights_(weights) {}
  std::vector<float> embed(const std::vector<std::vector<int>>& texts) {
    std::vector<float> flat;
    for (const auto& v : cuda::bert_reference_embed(weights_, texts)) flat.insert(flat.end(), v.begin(), v.end());
    return flat;
  }
  std::vector<float> score(const std::vector<cuda::PairTokens>& pairs) {
    return cuda::bert_reference_score(weights_, pairs);
  }
  std::string name() const { return "kotae-cpu-reference-fp32"; }
  std::string device() const { return "CPU"; }

 private:
  const cuda::BertWeights& weights_;
};
#else
class BertEngine {
 public:
  BertEngine(const cuda::BertWeights& weights, int max_batch, int max_tokens)
      : encoder_(weights, max_batch, max_tokens) {}
  std::vector<float> embed(const std::vector<std::vector<int>>& texts) { return encoder_.embed(texts); }
  std::vector<float> score(const std::vector<cuda::PairTokens>& pairs) { return encoder_.score(pairs); }
  std::string name() const { return "kotae-cuda-fp16"; }
  std::string device() const { return encoder_.device_name(); }

 private:
  cuda::BertCudaEncoder encoder_;
};
#endif

}  // namespace kotae::bench
