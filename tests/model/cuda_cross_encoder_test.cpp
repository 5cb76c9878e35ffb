// The native CUDA cross-encoder behind the PairScorer interface. Without a GPU (as in CI) it must say
// why and load_best_cross_encoder must give the ONNX CrossEncoder's scores; with one, it must score
// as the ONNX model does (a minilm-l6-sized random test cross-encoder, written here on demand).
#include "model/cuda_cross_encoder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "model/encoder_loading.h"
#include "platform/gpu_devices.h"
#include "support/test_data.h"

namespace kotae {
namespace {

const std::filesystem::path kPlugin = KOTAE_CUDA_ENCODER_PLUGIN;
const std::filesystem::path kTinyModel = std::filesystem::path(KOTAE_CROSS_ENCODER_REFERENCE_DIR) / "model-1";
const std::string kQuery = "how does sqlite store full text indexes?";
const std::vector<std::string> kPassages = {
    "FTS5 is an SQLite virtual table module that provides full-text search functionality.",
    "The quick brown fox jumps over the lazy dog.", "sqlite", "Ünïcödé passage, with 12345 numbers."};

TEST(CudaCrossEncoder, WithoutAGpuSaysWhyAndTheOnnxCrossEncoderScores) {
  if (probe_gpus().present) GTEST_SKIP() << "this machine has a GPU";
  auto cuda = CudaCrossEncoder::load(kTinyModel, kPlugin);
  ASSERT_FALSE(cuda.ok());
  EXPECT_EQ(cuda.error().code, ErrorCode::unsupported);
  EXPECT_NE(cuda.error().message.find("no GPU"), std::string::npos) << cuda.error().message;
  std::string why;
  auto best = load_best_cross_encoder(kTinyModel, {}, &why);
  ASSERT_TRUE(best.ok()) << best.error().message;
  EXPECT_EQ((*best)->provider(), "CPUExecutionProvider");
  EXPECT_NE(why.find("no GPU"), std::string::npos) << why;
  auto onnx = CrossEncoder::load(kTinyModel);
  ASSERT_TRUE(onnx.ok()) << onnx.error().message;
  auto expected = (*onnx)->score(kQuery, kPassages);
  auto got = (*best)->score(kQuery, kPassages);
  ASSERT_TRUE(expected.ok() && got.ok());
  EXPECT_EQ(*got, *expected);
  // Asked for CUDA and none: an error, not a silent fallback.
  ::setenv("KOTAE_ENCODER", "cuda", 1);
  auto forced = load_best_cross_encoder(kTinyModel);
  ::unsetenv("KOTAE_ENCODER");
  ASSERT_FALSE(forced.ok());
  EXPECT_NE(forced.error().message.find("no GPU"), std::string::npos);
}

TEST(CudaCrossEncoder, OnAGpuScoresAsTheOnnxCrossEncoder) {
  if (!probe_gpus().present) GTEST_SKIP() << "no GPU";
  const auto dir = testing::fresh_temp_dir("kotae-cuda-cross-encoder") / "minilm-l6-cross-encoder";
  const std::string make =
      std::string(KOTAE_MAKE_TEST_CROSS_ENCODER) + " " + dir.string() + " --size minilm-l6 >/dev/null";
  ASSERT_EQ(std::system(make.c_str()), 0) << make;
  auto cuda = CudaCrossEncoder::load(dir, kPlugin);
  ASSERT_TRUE(cuda.ok()) << cuda.error().message;
  EXPECT_EQ((*cuda)->provider().rfind("KotaeCUDA (", 0), 0u) << (*cuda)->provider();
  auto onnx = CrossEncoder::load(dir);
  ASSERT_TRUE(onnx.ok()) << onnx.error().message;
  // Pairs past 256 tokens too (the attention kernel's tiles), up to the model's 512, cut as ONNX cuts.
  std::vector<std::string> passages = kPassages;
  std::string long_passage, longer_passage;
  for (int i = 0; i < 40; ++i) long_passage += "FTS5 tables keep their index in shadow tables of the database. ";
  for (int i = 0; i < 90; ++i) longer_passage += "Each token of a long passage still counts. ";
  passages.push_back(long_passage);
  passages.push_back(longer_passage);
  ASSERT_GT((*cuda)->encode(kQuery, long_passage).ids.size(), 300u);
  ASSERT_EQ((*cuda)->encode(kQuery, longer_passage).ids.size(), 512u);
  auto expected = (*onnx)->score(kQuery, passages);
  auto got = (*cuda)->score(kQuery, passages);
  ASSERT_TRUE(expected.ok() && got.ok()) << (got.ok() ? expected.error().message : got.error().message);
  for (std::size_t i = 0; i < passages.size(); ++i) {  // FP16 activations against FP32
    EXPECT_NEAR((*got)[i], (*expected)[i], 0.02 * (1 + std::abs((*expected)[i]))) << passages[i].substr(0, 80);
  }
}

}  // namespace
}  // namespace kotae
