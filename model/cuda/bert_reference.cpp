#include "model/cuda/bert_reference.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kotae::cuda {
namespace {

using Matrix = std::vector<float>;  // row-major [rows, cols]

// y[rows, out] = x[rows, in] W^T + b
Matrix dense(const Matrix& x, int rows, const DenseWeights& d) {
  Matrix y(static_cast<std::size_t>(rows) * d.out);
  for (int r = 0; r < rows; ++r) {
    for (int o = 0; o < d.out; ++o) {
      double sum = d.bias[o];
      const float* w = &d.weight[static_cast<std::size_t>(o) * d.in];
      const float* v = &x[static_cast<std::size_t>(r) * d.in];
      for (int i = 0; i < d.in; ++i) sum += static_cast<double>(w[i]) * v[i];
      y[static_cast<std::size_t>(r) * d.out + o] = static_cast<float>(sum);
    }
  }
  return y;
}

void layer_norm(Matrix& x, int rows, int cols, const LayerNormWeights& n, float epsilon) {
  for (int r = 0; r < rows; ++r) {
    float* v = &x[static_cast<std::size_t>(r) * cols];
    double mean = 0, var = 0;
    for (int c = 0; c < cols; ++c) mean += v[c];
    mean /= cols;
    for (int c = 0; c < cols; ++c) var += (v[c] - mean) * (v[c] - mean);
    const double scale = 1.0 / std::sqrt(var / cols + epsilon);
    for (int c = 0; c < cols; ++c) v[c] = static_cast<float>((v[c] - mean) * scale * n.gamma[c] + n.beta[c]);
  }
}

// The final token states [n, hidden] of one text; `types` empty means segment 0 throughout.
Matrix forward(const BertWeights& w, const std::vector<int>& ids, const std::vector<int>& types) {
  const int h = w.hidden, heads = w.heads, head_dim = h / heads;
  const int n = static_cast<int>(ids.size());
  if (n == 0 || n > w.max_positions)
    throw std::invalid_argument("a text has no tokens or more than the model's positions");
  if (!types.empty() && types.size() != ids.size()) throw std::invalid_argument("token types and ids differ in length");
  const int type_rows = static_cast<int>(w.token_type_embeddings.size() / h);
  Matrix x(static_cast<std::size_t>(n) * h);
  for (int t = 0; t < n; ++t) {
    const int type = types.empty() ? 0 : types[t];
    if (ids[t] < 0 || ids[t] >= w.vocab) throw std::invalid_argument("token id out of the vocabulary");
    if (type < 0 || type >= type_rows) throw std::invalid_argument("token type out of the model's types");
    for (int c = 0; c < h; ++c) {
      x[static_cast<std::size_t>(t) * h + c] = w.word_embeddings[static_cast<std::size_t>(ids[t]) * h + c] +
                                               w.position_embeddings[static_cast<std::size_t>(t) * h + c] +
                                               w.token_type_embeddings[static_cast<std::size_t>(type) * h + c];
    }
  }
  layer_norm(x, n, h, w.embedding_norm, w.norm_epsilon);
  for (const auto& layer : w.layers) {
    const Matrix q = dense(x, n, layer.query), k = dense(x, n, layer.key), v = dense(x, n, layer.value);
    Matrix context(static_cast<std::size_t>(n) * h, 0.0f);
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    std::vector<double> scores(n);
    for (int head = 0; head < heads; ++head) {
      const int o = head * head_dim;
      for (int i = 0; i < n; ++i) {
        double top = -1e30;
        for (int j = 0; j < n; ++j) {
          double s = 0;
          for (int d = 0; d < head_dim; ++d) s += q[i * h + o + d] * k[j * h + o + d];
          scores[j] = s * scale;
          top = std::max(top, scores[j]);
        }
        double total = 0;
        for (int j = 0; j < n; ++j) total += scores[j] = std::exp(scores[j] - top);
        for (int d = 0; d < head_dim; ++d) {
          double sum = 0;
          for (int j = 0; j < n; ++j) sum += scores[j] * v[j * h + o + d];
          context[i * h + o + d] = static_cast<float>(sum / total);
        }
      }
    }
    Matrix attended = dense(context, n, layer.attention_output);
    for (std::size_t i = 0; i < x.size(); ++i) attended[i] += x[i];
    layer_norm(attended, n, h, layer.attention_norm, w.norm_epsilon);
    Matrix inner = dense(attended, n, layer.intermediate);
    for (float& value : inner) value = 0.5f * value * (1.0f + std::erf(value / std::sqrt(2.0f)));
    x = dense(inner, n, layer.output);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += attended[i];
    layer_norm(x, n, h, layer.output_norm, w.norm_epsilon);
  }
  return x;
}

}  // namespace

std::vector<std::vector<float>> bert_reference_embed(const BertWeights& w, const std::vector<std::vector<int>>& texts) {
  const int h = w.hidden;
  std::vector<std::vector<float>> out;
  for (const auto& ids : texts) {
    const int n = static_cast<int>(ids.size());
    const Matrix x = forward(w, ids, {});
    std::vector<float> pooled(h, 0.0f);
    for (int t = 0; t < n; ++t) {
      for (int c = 0; c < h; ++c) pooled[c] += x[static_cast<std::size_t>(t) * h + c] / n;
    }
    double norm = 0;
    for (float value : pooled) norm += value * value;
    norm = std::sqrt(norm);
    for (float& value : pooled) value = static_cast<float>(value / norm);
    out.push_back(std::move(pooled));
  }
  return out;
}

std::vector<float> bert_reference_score(const BertWeights& w, const std::vector<PairTokens>& pairs) {
  if (!w.is_cross_encoder()) throw std::invalid_argument("these weights have no classifier head");
  std::vector<float> scores;
  for (const auto& pair : pairs) {
    const Matrix x = forward(w, pair.ids, pair.types);
    Matrix pooled = dense(Matrix(x.begin(), x.begin() + w.hidden), 1, w.pooler);  // the [CLS] row
    for (float& value : pooled) value = std::tanh(value);
    const Matrix logits = dense(pooled, 1, w.classifier);
    scores.push_back(logits.size() == 1 ? logits[0] : logits[1] - logits[0]);
  }
  return scores;
}

}  // namespace kotae::cuda
