#pragma once
// The BERT forward pass in plain FP32 C++ on the CPU, one text at a time: embeddings + LayerNorm, then
// per layer self-attention (padding-free), add & LayerNorm, GELU feed-forward, add & LayerNorm; mean
// pooling and L2 normalisation. The reference the CUDA encoder is checked against.

#include <vector>

#include "model/cuda/bert_weights.h"

namespace kotae::cuda {

// One unit vector of weights.hidden floats per text of token ids.
std::vector<std::vector<float>> bert_reference_embed(const BertWeights& weights, const std::vector<std::vector<int>>& texts);

}  // namespace kotae::cuda
