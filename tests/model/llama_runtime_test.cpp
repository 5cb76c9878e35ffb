#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "model/llama_runtime.h"
#include "support/test_data.h"
#include "support/tiny_gguf.h"

namespace kotae {
namespace {

TEST(LlamaRuntime, LoadsTheCpuBackend) {
  const LlamaBuildInfo& info = llama_build_info();
  EXPECT_FALSE(info.version.empty());
  EXPECT_NE(std::find(info.backends.begin(), info.backends.end(), "CPU"), info.backends.end());
}

class TinyLlamaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::fresh_temp_dir("kotae-llama");
    ASSERT_TRUE(testing::write_tiny_llama_gguf(dir_ / "tiny.gguf", shape_));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  testing::TinyLlamaShape shape_;
  std::filesystem::path dir_;
};

TEST_F(TinyLlamaTest, ProducesOneRowOfLogitsPerToken) {
  auto model = LlamaModel::load(dir_ / "tiny.gguf", {.context_length = 64, .threads = 2});
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ((*model)->vocab_size(), static_cast<int>(shape_.vocab));
  EXPECT_EQ((*model)->embedding_length(), static_cast<int>(shape_.embedding));

  const std::vector<std::int32_t> tokens = {1, 17, 42, 255, 3};
  auto logits = (*model)->logits(tokens);
  ASSERT_TRUE(logits.ok()) << logits.error().message;
  ASSERT_EQ(logits->size(), tokens.size() * shape_.vocab);
  EXPECT_TRUE(std::all_of(logits->begin(), logits->end(), [](float x) { return std::isfinite(x); }));
  // Random weights still give logits that differ between vocabulary entries and between positions.
  const auto [lo, hi] = std::minmax_element(logits->begin(), logits->begin() + shape_.vocab);
  EXPECT_GT(*hi - *lo, 1e-4f);
  EXPECT_FALSE(std::equal(logits->begin(), logits->begin() + shape_.vocab, logits->begin() + shape_.vocab));

  // Evaluation starts from an empty context each time, so it is repeatable.
  auto again = (*model)->logits(tokens);
  ASSERT_TRUE(again.ok());
  for (size_t i = 0; i < logits->size(); ++i) ASSERT_NEAR((*logits)[i], (*again)[i], 1e-5f) << "at " << i;
}

TEST_F(TinyLlamaTest, RejectsTokensOutsideTheVocabularyAndOverlongInput) {
  auto model = LlamaModel::load(dir_ / "tiny.gguf", {.context_length = 8, .threads = 1});
  ASSERT_TRUE(model.ok()) << model.error().message;
  const std::vector<std::int32_t> bad = {static_cast<std::int32_t>(shape_.vocab)};
  EXPECT_EQ((*model)->logits(bad).error().code, ErrorCode::invalid_argument);
  const std::vector<std::int32_t> long_input(9, 1);
  EXPECT_EQ((*model)->logits(long_input).error().code, ErrorCode::invalid_argument);
}

TEST(LlamaModelLoad, RefusesAFileThatIsNotGguf) {
  const auto dir = testing::fresh_temp_dir("kotae-llama-bad");
  std::ofstream(dir / "bad.gguf") << "GGUF but not really";
  auto model = LlamaModel::load(dir / "bad.gguf");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().code, ErrorCode::model);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kotae
