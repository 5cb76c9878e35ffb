#include "batch/batched_encoder.h"

#include <algorithm>
#include <mutex>
#include <optional>

namespace kotae::batch {

Result<Embeddings> BatchedEncoder::embed_encoded(std::span<const text::Encoding> encodings) const {
  std::vector<std::future<Result<std::vector<float>>>> pending;
  pending.reserve(encodings.size());
  for (const auto& e : encodings) pending.push_back(batcher_->embed_encoded(e, priority_));
  return collect(pending, dimension());
}

// Each input is a request of its own in the batcher (it may share a batch with anyone's); the last
// vector to arrive, on the batcher's thread, hands over the whole.
void BatchedEncoder::embed_encoded_async(std::vector<text::Encoding> encodings, EmbeddingsDone done) const {
  struct Gather {
    std::mutex mutex;
    Embeddings out;
    std::size_t left = 0;
    std::optional<Error> failure;
    EmbeddingsDone done;
  };
  const std::size_t n = encodings.size();
  auto gather = std::make_shared<Gather>();
  gather->out = {dimension(), std::vector<float>(n * dimension())};
  gather->left = n;
  gather->done = std::move(done);
  if (n == 0) return gather->done(std::move(gather->out));
  for (std::size_t i = 0; i < n; ++i) {
    batcher_->embed_encoded(std::move(encodings[i]), priority_, [gather, i](Result<std::vector<float>> vector) {
      std::unique_lock lock(gather->mutex);
      if (!vector) {
        if (!gather->failure) gather->failure = vector.error();
      } else if (vector->size() == gather->out.dimension) {
        std::copy(vector->begin(), vector->end(), gather->out.values.begin() + static_cast<std::ptrdiff_t>(i * gather->out.dimension));
      }
      if (--gather->left > 0) return;
      lock.unlock();
      if (gather->failure) return gather->done(*gather->failure);
      gather->done(std::move(gather->out));
    });
  }
}

}  // namespace kotae::batch
