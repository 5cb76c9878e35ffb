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

// Quantised matrices take llama.cpp's quantised kernels for a batch of more than one token (AMX tiles on
// Xeons that have them, AVX-512 VNNI, AVX2 repacking): the logits must follow those of the same weights
// in F32. Broken kernels crash here or give rows that point elsewhere.
double worst_row_cosine(const std::vector<float>& a, const std::vector<float>& b, std::size_t row) {
  double worst = 1.0;
  for (std::size_t start = 0; start + row <= a.size(); start += row) {
    double ab = 0, aa = 0, bb = 0;
    for (std::size_t i = start; i < start + row; ++i) {
      ab += double(a[i]) * b[i];
      aa += double(a[i]) * a[i];
      bb += double(b[i]) * b[i];
    }
    worst = std::min(worst, ab / std::sqrt(aa * bb));
  }
  return worst;
}

TEST(QuantisedTinyLlama, LogitsFollowTheSameWeightsInF32) {
  const auto dir = testing::fresh_temp_dir("kotae-llama-quantised");
  const testing::TinyLlamaShape f32{.vocab = 512, .embedding = 256, .feed_forward = 512, .context = 64};
  std::vector<std::int32_t> tokens(48);
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<std::int32_t>((i * 37 + 5) % f32.vocab);
  auto logits_of = [&](testing::TinyWeights weights) -> std::vector<float> {
    testing::TinyLlamaShape shape = f32;
    shape.weights = weights;
    const auto path = dir / ("tiny-" + std::to_string(static_cast<int>(weights)) + ".gguf");
    EXPECT_TRUE(testing::write_tiny_llama_gguf(path, shape));
    auto model = LlamaModel::load(path, {.context_length = 64, .threads = 2});
    EXPECT_TRUE(model.ok()) << model.error().message;
    if (!model.ok()) return {};
    auto logits = (*model)->logits(tokens);
    EXPECT_TRUE(logits.ok()) << logits.error().message;
    return logits.ok() ? *logits : std::vector<float>{};
  };
  const auto reference = logits_of(testing::TinyWeights::f32);
  ASSERT_EQ(reference.size(), tokens.size() * f32.vocab);
  for (const auto& [weights, at_least] :
       {std::pair{testing::TinyWeights::q8_0, 0.999}, std::pair{testing::TinyWeights::q4_k, 0.9}}) {
    const auto logits = logits_of(weights);
    ASSERT_EQ(logits.size(), reference.size());
    EXPECT_TRUE(std::all_of(logits.begin(), logits.end(), [](float x) { return std::isfinite(x); }));
    EXPECT_GT(worst_row_cosine(logits, reference, f32.vocab), at_least) << "weights type " << static_cast<int>(weights);
  }
  std::filesystem::remove_all(dir);
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
