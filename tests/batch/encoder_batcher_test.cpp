#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "batch/encoder_batcher.h"
#include "model/sentence_encoder.h"
#include "support/test_data.h"

namespace kotae::batch {
namespace {

TEST(EncoderBatcher, ConcurrentCallersGetTheVectorsOfTheirOwnTexts) {
  auto loaded = SentenceEncoder::load(testing::model_dir("all-minilm-l6-v2"));
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  std::shared_ptr<const Encoder> encoder = std::move(*loaded);
  std::vector<std::string> texts;
  for (int i = 0; i < 24; ++i)
    texts.push_back("document number " + std::to_string(i) + std::string(i % 5, '!') + " about Debian packages");
  auto direct = encoder->embed(texts, TextRole::passage);
  ASSERT_TRUE(direct.ok());

  EncoderBatcher batcher(encoder, {.max_items = 8, .window = std::chrono::milliseconds(5)});
  std::vector<std::vector<float>> got(texts.size());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = t; i < texts.size(); i += 4) {
        auto v = batcher.embed(texts[i], TextRole::passage).get();
        if (v.ok()) got[i] = std::move(*v);
      }
    });
  }
  for (auto& t : threads) t.join();
  for (std::size_t i = 0; i < texts.size(); ++i) {
    ASSERT_EQ(got[i].size(), 384u) << i;
    double dot = 0;
    for (std::size_t d = 0; d < 384; ++d) dot += double(got[i][d]) * direct->row(i)[d];
    EXPECT_GT(dot, 0.99999) << "text " << i << " got another text's vector";
  }

  auto all = batcher.embed_all(texts, TextRole::passage);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), texts.size());
}

}  // namespace
}  // namespace kotae::batch
