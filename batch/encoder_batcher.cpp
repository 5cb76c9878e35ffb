#include "batch/encoder_batcher.h"

namespace kotae::batch {

EncoderBatcher::EncoderBatcher(std::shared_ptr<const Encoder> encoder, BatchPolicy policy)
    : encoder_(std::move(encoder)),
      batcher_("encoder " + encoder_->id(), policy, [this](std::vector<text::Encoding>& batch) { return run(batch); }) {
}

std::future<Result<std::vector<float>>> EncoderBatcher::embed(std::string_view text, TextRole role, Priority priority) {
  return embed_encoded(encoder_->tokenize_as(role, text), priority);
}

std::future<Result<std::vector<float>>> EncoderBatcher::embed_encoded(text::Encoding encoding, Priority priority) {
  const std::size_t cost = encoding.size();
  return batcher_.submit(std::move(encoding), cost, priority);
}

void EncoderBatcher::embed_encoded(text::Encoding encoding, Priority priority,
                                   std::function<void(Result<std::vector<float>>)> done) {
  const std::size_t cost = encoding.size();
  batcher_.submit(std::move(encoding), cost, priority, std::move(done));
}

Result<Embeddings> EncoderBatcher::embed_all(std::span<const std::string> texts, TextRole role, Priority priority) {
  std::vector<std::future<Result<std::vector<float>>>> pending;
  pending.reserve(texts.size());
  for (const auto& t : texts) pending.push_back(embed(t, role, priority));
  return collect(pending, encoder_->dimension());
}

Result<Embeddings> collect(std::vector<std::future<Result<std::vector<float>>>>& pending, std::size_t dimension) {
  Embeddings out{dimension, {}};
  out.values.reserve(pending.size() * dimension);
  std::optional<Error> failure;
  for (auto& f : pending) {
    auto vector = f.get();  // wait for every future, even after a failure
    if (!vector) {
      if (!failure) failure = vector.error();
      continue;
    }
    out.values.insert(out.values.end(), vector->begin(), vector->end());
  }
  if (failure) return *failure;
  return out;
}

std::vector<Result<std::vector<float>>> EncoderBatcher::run(std::vector<text::Encoding>& batch) const {
  auto vectors = encoder_->embed_encoded(batch);
  std::vector<Result<std::vector<float>>> results;
  results.reserve(batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (vectors) {
      results.emplace_back(vectors->row_copy(i));
    } else {
      results.emplace_back(vectors.error());
    }
  }
  return results;
}

}  // namespace kotae::batch
