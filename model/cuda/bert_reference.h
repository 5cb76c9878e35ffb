#pragma once
// The BERT forward pass in plain FP32 C++ on the CPU, one text at a time: embeddings + LayerNorm, then
// per layer self-attention (padding-free), add & LayerNorm, GELU feed-forward, add & LayerNorm; mean
// pooling and L2 normalisation; or, for a cross-encoder, the [CLS] state through the pooler and the
// classifier. The reference the CUDA encoder is checked against.

#include <vector>

#include "model/cuda/bert_weights.h"

namespace kotae::cuda {

// One unit vector of weights.hidden floats per text of token ids.
std::vector<std::vector<float>> bert_reference_embed(const BertWeights& weights,
                                                     const std::vector<std::vector<int>>& texts);

// One relevance score per pair: the logit of a one-label classifier, logit[1] - logit[0] of a
// two-label one (what Kotae's CrossEncoder returns). Throws std::invalid_argument without a head.
std::vector<float> bert_reference_score(const BertWeights& weights, const std::vector<PairTokens>& pairs);

}  // namespace kotae::cuda
