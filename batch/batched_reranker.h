#pragma once
// A cross-encoder (ONNX or CUDA) behind the dynamic batcher: each caller encodes its own (query, passage) pairs, then
// one worker scores the pairs of every concurrent request together, so rerank stages of simultaneous
// questions share model runs.

#include <memory>

#include "batch/dynamic_batcher.h"
#include "model/reranker.h"

namespace kotae::batch {

class BatchedReranker final : public Reranker {
 public:
  BatchedReranker(std::shared_ptr<const PairScorer> model, BatchPolicy policy = {});

  Result<std::vector<float>> score(std::string_view query, std::span<const std::string> passages) const override;
  void score_async(std::string query, std::vector<std::string> passages, ScoresDone done) const override;
  std::string id() const override { return model_->id(); }
  std::size_t max_pair_tokens() const override { return model_->max_pair_tokens(); }
  std::size_t untruncated_pair_tokens(std::string_view query, std::string_view passage) const override {
    return model_->untruncated_pair_tokens(query, passage);
  }

  void set_observer(std::shared_ptr<BatchObserver> observer) { batcher_->set_observer(std::move(observer)); }
  std::size_t queue_depth() const { return batcher_->queue_depth(); }

 private:
  std::shared_ptr<const PairScorer> model_;
  std::unique_ptr<DynamicBatcher<text::Encoding, float>> batcher_;
};

}  // namespace kotae::batch
