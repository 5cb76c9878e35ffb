#include "batch/batched_reranker.h"

#include <optional>

#include "batch/gather.h"

namespace kotae::batch {

BatchedReranker::BatchedReranker(std::shared_ptr<const PairScorer> model, BatchPolicy policy)
    : model_(std::move(model)) {
  batcher_ = std::make_unique<DynamicBatcher<text::Encoding, float>>("reranker " + model_->id(), policy,
                                                                     [m = model_](std::vector<text::Encoding>& pairs) {
                                                                       auto scores = m->score_encoded(pairs);
                                                                       std::vector<Result<float>> out;
                                                                       out.reserve(pairs.size());
                                                                       for (std::size_t i = 0; i < pairs.size(); ++i) {
                                                                         if (scores) {
                                                                           out.emplace_back((*scores)[i]);
                                                                         } else {
                                                                           out.emplace_back(scores.error());
                                                                         }
                                                                       }
                                                                       return out;
                                                                     });
}

Result<std::vector<float>> BatchedReranker::score(std::string_view query, std::span<const std::string> passages) const {
  std::vector<std::future<Result<float>>> pending;
  pending.reserve(passages.size());
  for (const auto& p : passages) {
    auto pair = model_->encode(query, p);
    const std::size_t cost = pair.size();
    pending.push_back(batcher_->submit(std::move(pair), cost, Priority::interactive));
  }
  std::vector<float> scores;
  scores.reserve(passages.size());
  std::optional<Error> failure;
  for (auto& f : pending) {
    auto s = f.get();  // every future is waited for, even after a failure
    if (!s) {
      if (!failure) failure = s.error();
      continue;
    }
    scores.push_back(*s);
  }
  if (failure) return *failure;
  return scores;
}

void BatchedReranker::score_async(std::string query, std::vector<std::string> passages, ScoresDone done) const {
  auto part = gather<float>(passages.size(), std::move(done));
  for (std::size_t i = 0; i < passages.size(); ++i) {
    auto pair = model_->encode(query, passages[i]);
    const std::size_t cost = pair.size();
    batcher_->submit(std::move(pair), cost, Priority::interactive,
                     [part, i](Result<float> score) { part(i, std::move(score)); });
  }
}

}  // namespace kotae::batch
