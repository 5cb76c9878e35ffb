#pragma once
// The native CUDA BERT encoder: FP16 weights and activations, FP32 accumulation; cuBLAS for the
// GEMMs (Q/K/V fused into one), own kernels for embeddings + LayerNorm, attention (one pass, online
// softmax, padding masked), bias + residual + LayerNorm, bias + GELU, and mean pooling with L2
// normalisation; for a cross-encoder, the [CLS] row through the pooler (cuBLAS) and a fused tanh +
// classifier kernel. Plain C++ interface: callers need no CUDA headers.

#include <memory>
#include <string>
#include <vector>

#include "model/cuda/bert_weights.h"

namespace kotae::cuda {

class BertCudaEncoder {
 public:
  // Uploads the weights and sizes the work buffers for `max_batch` texts of up to `max_tokens`
  // tokens. Throws std::runtime_error with CUDA's or cuBLAS's message.
  BertCudaEncoder(const BertWeights& weights, int max_batch, int max_tokens);
  ~BertCudaEncoder();
  BertCudaEncoder(const BertCudaEncoder&) = delete;
  BertCudaEncoder& operator=(const BertCudaEncoder&) = delete;

  // Unit vectors, hidden floats per text, one after another. Texts longer than max_tokens are cut.
  // With `states`, also each text's final token states (its tokens x hidden floats), for pooling parts.
  std::vector<float> embed(const std::vector<std::vector<int>>& texts,
                           std::vector<std::vector<float>>* states = nullptr);
  // One relevance score per pair (see bert_reference_score); needs weights with a classifier head.
  std::vector<float> score(const std::vector<PairTokens>& pairs);
  bool is_cross_encoder() const;
  int hidden() const;
  std::string device_name() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kotae::cuda
