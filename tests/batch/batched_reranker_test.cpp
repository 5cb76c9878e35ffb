// The cross-encoder behind the dynamic batcher scores each caller's pairs exactly as the model alone
// does, while concurrent callers share model runs. The model is the fixture's tiny random cross-encoder.

#include <gtest/gtest.h>

#include <thread>

#include "batch/batched_reranker.h"
#include "model/cross_encoder.h"

namespace kotae::batch {
namespace {

class RecordingObserver final : public BatchObserver {
 public:
  void on_batch(const BatchRecord& record) override { largest = std::max(largest.load(), record.items); }
  std::atomic<std::size_t> largest{0};
};

TEST(BatchedReranker, ConcurrentQueriesGetTheModelsOwnScoresAndShareBatches) {
  auto loaded = CrossEncoder::load(std::filesystem::path(KOTAE_CROSS_ENCODER_REFERENCE_DIR) / "model-1");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  std::shared_ptr<const CrossEncoder> model = std::move(*loaded);
  const std::vector<std::string> passages = {"apt installs packages", "dpkg is the low-level tool",
                                             "bananas are yellow", "the kernel boots first"};
  const std::vector<std::string> queries = {"how to install", "what is dpkg",  "fruit colours",
                                            "boot order",     "package tools", "system start"};
  std::vector<std::vector<float>> direct;
  for (const auto& q : queries) {
    auto s = model->score(q, passages);
    ASSERT_TRUE(s.ok());
    direct.push_back(*s);
  }

  BatchedReranker reranker(model, {.max_items = 64, .window = std::chrono::milliseconds(20), .adaptive_window = false});
  auto observer = std::make_shared<RecordingObserver>();
  reranker.set_observer(observer);
  std::vector<std::vector<float>> got(queries.size());
  std::vector<std::thread> callers;
  for (std::size_t i = 0; i < queries.size(); ++i) {
    callers.emplace_back([&, i] {
      auto s = reranker.score(queries[i], passages);
      if (s.ok()) got[i] = *s;
    });
  }
  for (auto& c : callers) c.join();
  for (std::size_t i = 0; i < queries.size(); ++i) {
    ASSERT_EQ(got[i].size(), passages.size());
    for (std::size_t j = 0; j < passages.size(); ++j) EXPECT_NEAR(got[i][j], direct[i][j], 1e-4) << i << "," << j;
  }
  EXPECT_GT(observer->largest.load(), passages.size());  // pairs of more than one query in a model run
  EXPECT_EQ(reranker.id(), model->id());
}

}  // namespace
}  // namespace kotae::batch
