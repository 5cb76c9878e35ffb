#include "batch/batched_encoder.h"

#include "batch/gather.h"

namespace kotae::batch {

Result<Embeddings> BatchedEncoder::embed_encoded(std::span<const text::Encoding> encodings) const {
  std::vector<std::future<Result<std::vector<float>>>> pending;
  pending.reserve(encodings.size());
  for (const auto& e : encodings) pending.push_back(batcher_->embed_encoded(e, priority_));
  return collect(pending, dimension());
}

// Each input is a request of its own in the batcher (it may share a batch with anyone's).
void BatchedEncoder::embed_encoded_async(std::vector<text::Encoding> encodings, EmbeddingsDone done) const {
  auto part = gather<std::vector<float>>(encodings.size(), [done = std::move(done), dimension = dimension()](
                                                               Result<std::vector<std::vector<float>>> rows) {
    if (!rows) return done(rows.error());
    Embeddings out{dimension, {}};
    out.values.reserve(rows->size() * dimension);
    for (const auto& row : *rows) out.values.insert(out.values.end(), row.begin(), row.end());
    done(std::move(out));
  });
  for (std::size_t i = 0; i < encodings.size(); ++i) {
    batcher_->embed_encoded(std::move(encodings[i]), priority_,
                            [part, i](Result<std::vector<float>> vector) { part(i, std::move(vector)); });
  }
}

}  // namespace kotae::batch
