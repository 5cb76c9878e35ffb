#pragma once
// An Encoder behind the dynamic batcher: callers on any thread tokenise their own text (so that work
// runs in parallel), then wait on a future while one worker runs the model over everyone's texts.

#include <future>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "batch/dynamic_batcher.h"
#include "model/encoder.h"

namespace kotae::batch {

class EncoderBatcher {
 public:
  EncoderBatcher(std::shared_ptr<const Encoder> encoder, BatchPolicy policy = {});

  std::future<Result<std::vector<float>>> embed(std::string_view text, TextRole role,
                                                Priority priority = Priority::interactive);
  // For callers that tokenised already (BatchedEncoder).
  std::future<Result<std::vector<float>>> embed_encoded(text::Encoding encoding,
                                                        Priority priority = Priority::interactive);
  // The same with a callback, run on the batcher's thread once the vector is made.
  void embed_encoded(text::Encoding encoding, Priority priority, std::function<void(Result<std::vector<float>>)> done);
  // Embeds many texts and waits for all of them; the first failure is returned.
  Result<Embeddings> embed_all(std::span<const std::string> texts, TextRole role, Priority priority = Priority::bulk);

  void set_observer(std::shared_ptr<BatchObserver> observer) { batcher_.set_observer(std::move(observer)); }
  std::size_t queue_depth() const { return batcher_.queue_depth(); }
  const Encoder& encoder() const { return *encoder_; }

 private:
  std::vector<Result<std::vector<float>>> run(std::vector<text::Encoding>& batch) const;

  std::shared_ptr<const Encoder> encoder_;
  DynamicBatcher<text::Encoding, std::vector<float>> batcher_;
};

// Waits for every vector (even after a failure) and returns them row-major, or the first failure.
Result<Embeddings> collect(std::vector<std::future<Result<std::vector<float>>>>& pending, std::size_t dimension);

}  // namespace kotae::batch
