#pragma once
// A BERT encoder's weights (Hugging Face names, as sentence-transformers saves them) read from a
// model.safetensors file in FP16 or FP32, as FP32 on the host: what the native CUDA encoder uploads
// and its CPU reference computes with. A cross-encoder (BertForSequenceClassification, names with or
// without the "bert." prefix) also has its pooler and classifier. No dependencies beyond the
// standard library.

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace kotae::cuda {

struct DenseWeights {
  std::vector<float> weight;  // [out, in], as torch.nn.Linear stores it
  std::vector<float> bias;    // [out]
  int out = 0, in = 0;
};

struct LayerNormWeights {
  std::vector<float> gamma, beta;
};

struct BertLayerWeights {
  DenseWeights query, key, value, attention_output, intermediate, output;
  LayerNormWeights attention_norm, output_norm;
};

struct BertWeights {
  int hidden = 0, heads = 0, intermediate = 0, vocab = 0, max_positions = 0;
  float norm_epsilon = 1e-12f;
  std::vector<float> word_embeddings, position_embeddings, token_type_embeddings;  // [rows, hidden]
  LayerNormWeights embedding_norm;
  std::vector<BertLayerWeights> layers;
  // A cross-encoder's head: [CLS] state -> pooler dense -> tanh -> classifier (1 or 2 labels).
  DenseWeights pooler, classifier;

  bool is_cross_encoder() const { return classifier.out > 0; }
};

// A cross-encoder's input, [CLS] query [SEP] passage [SEP]: token ids and their segments (0 for the
// query's part, 1 for the passage's), as Kotae's CrossEncoder encodes a pair.
struct PairTokens {
  std::vector<int> ids, types;
};

// Throws std::runtime_error saying what is missing or malformed.
BertWeights load_bert_weights(const std::filesystem::path& safetensors, int heads);

}  // namespace kotae::cuda
