#include "batch/batched_encoder.h"

namespace kotae::batch {

Result<Embeddings> BatchedEncoder::embed_encoded(std::span<const text::Encoding> encodings) const {
  std::vector<std::future<Result<std::vector<float>>>> pending;
  pending.reserve(encodings.size());
  for (const auto& e : encodings) pending.push_back(batcher_->embed_encoded(e, priority_));
  return collect(pending, dimension());
}

}  // namespace kotae::batch
