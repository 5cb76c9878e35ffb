#include "model/embedding_reranker.h"

#include <cmath>

#include "core/assert.h"

namespace kotae {
namespace {

float cosine(std::span<const float> a, std::span<const float> b) {
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    dot += double(a[i]) * b[i];
    na += double(a[i]) * a[i];
    nb += double(b[i]) * b[i];
  }
  // Encoders usually return unit vectors, but a manifest may turn normalisation off.
  return na > 0 && nb > 0 ? static_cast<float>(dot / std::sqrt(na * nb)) : 0.0f;
}

}  // namespace

EmbeddingReranker::EmbeddingReranker(std::shared_ptr<const Encoder> encoder) : encoder_(std::move(encoder)) {
  KOTAE_ASSERT(encoder_ != nullptr);
}

Result<std::vector<float>> EmbeddingReranker::score(std::string_view query,
                                                    std::span<const std::string> passages) const {
  if (passages.empty()) return std::vector<float>{};
  // Query and passages in one call, so the encoder batches them together.
  std::vector<text::Encoding> encodings;
  encodings.reserve(passages.size() + 1);
  encodings.push_back(encoder_->tokenize_as(TextRole::query, query));
  for (const auto& passage : passages) encodings.push_back(encoder_->tokenize_as(TextRole::passage, passage));
  auto vectors = encoder_->embed_encoded(encodings);
  if (!vectors) return vectors.error();
  if (vectors->size() != encodings.size()) {
    return make_error(ErrorCode::internal, "encoder " + encoder_->id() + " returned " +
                                               std::to_string(vectors->size()) + " vectors for " +
                                               std::to_string(encodings.size()) + " texts");
  }
  std::vector<float> scores;
  scores.reserve(passages.size());
  for (std::size_t i = 0; i < passages.size(); ++i) scores.push_back(cosine(vectors->row(0), vectors->row(i + 1)));
  return scores;
}

}  // namespace kotae
