#pragma once
// The cheap fallback when no cross-encoder is configured: scores each passage by the cosine between
// its embedding and the query's, with any Encoder (usually the collection's own embedder, so no
// second model is loaded). It reorders what fusion produced by semantic similarity alone; a
// cross-encoder, which reads query and passage together, ranks better.

#include <memory>

#include "model/encoder.h"
#include "model/reranker.h"

namespace kotae {

class EmbeddingReranker final : public Reranker {
 public:
  // Shared: the same encoder usually serves ingestion and retrieval too. Must not be null.
  explicit EmbeddingReranker(std::shared_ptr<const Encoder> encoder);

  // Cosines in [-1, 1]; 0 for a text whose vector is all zeros.
  Result<std::vector<float>> score(std::string_view query, std::span<const std::string> passages) const override;
  std::string id() const override { return "embedding:" + encoder_->id(); }

 private:
  std::shared_ptr<const Encoder> encoder_;
};

}  // namespace kotae
