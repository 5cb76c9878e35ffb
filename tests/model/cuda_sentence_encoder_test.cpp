// The native CUDA encoder behind the Encoder interface. Without a GPU (as in CI) it must say why and
// load_best_encoder must fall back to ONNX Runtime; with one, it must give ONNX Runtime's vectors.
#include "model/cuda_sentence_encoder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "model/encoder_loading.h"
#include "platform/gpu_devices.h"
#include "support/test_data.h"

namespace kotae {
namespace {

const std::filesystem::path kPlugin = KOTAE_CUDA_ENCODER_PLUGIN;

TEST(CudaSentenceEncoder, WithoutAGpuSaysWhyAndTheOnnxEncoderIsUsed) {
  if (probe_gpus().present) GTEST_SKIP() << "this machine has a GPU";
  auto cuda = CudaSentenceEncoder::load(testing::model_dir("all-minilm-l6-v2"), kPlugin);
  ASSERT_FALSE(cuda.ok());
  EXPECT_EQ(cuda.error().code, ErrorCode::unsupported);
  EXPECT_NE(cuda.error().message.find("no GPU"), std::string::npos) << cuda.error().message;
  std::string why;
  auto best = load_best_encoder(testing::model_dir("all-minilm-l6-v2"), {}, &why);
  ASSERT_TRUE(best.ok()) << best.error().message;
  EXPECT_EQ((*best)->provider(), "CPUExecutionProvider");
  EXPECT_NE(why.find("no GPU"), std::string::npos);
}

TEST(CudaSentenceEncoder, AnInvalidChoiceIsRefused) {
  ::setenv("KOTAE_ENCODER", "tpu", 1);
  auto best = load_best_encoder(testing::model_dir("all-minilm-l6-v2"));
  ::unsetenv("KOTAE_ENCODER");
  ASSERT_FALSE(best.ok());
  EXPECT_NE(best.error().message.find("tpu"), std::string::npos);
}

TEST(CudaSentenceEncoder, OnAGpuGivesTheOnnxEncodersVectorsAndSentenceRanges) {
  if (!probe_gpus().present) GTEST_SKIP() << "no GPU";
  auto cuda = CudaSentenceEncoder::load(testing::model_dir("all-minilm-l6-v2"), kPlugin);
  ASSERT_TRUE(cuda.ok()) << cuda.error().message;
  auto onnx = SentenceEncoder::load(testing::model_dir("all-minilm-l6-v2"));
  ASSERT_TRUE(onnx.ok());
  const std::vector<std::string> texts = {"Is SQLite threadsafe? Threads are evil.",
                                          "How do I create an AUTOINCREMENT field?"};
  std::vector<text::Encoding> encodings;
  for (const auto& t : texts) encodings.push_back((*cuda)->tokenize(t));
  const std::vector<std::vector<TokenRange>> ranges = {{{1, 6}, {6, encodings[0].ids.size() - 1}}, {{1, 4}}};
  auto a = (*cuda)->embed_encoded_with_ranges(encodings, ranges);
  auto b = (*onnx)->embed_encoded_with_ranges(encodings, ranges);
  ASSERT_TRUE(a.ok() && b.ok());
  auto cosine = [](std::span<const float> x, std::span<const float> y) {
    double dot = 0;
    for (std::size_t i = 0; i < x.size(); ++i) dot += x[i] * y[i];
    return dot;
  };
  for (std::size_t i = 0; i < texts.size(); ++i) EXPECT_GT(cosine(a->inputs.row(i), b->inputs.row(i)), 0.999);
  ASSERT_EQ(a->ranges.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_GT(cosine(a->ranges.row(i), b->ranges.row(i)), 0.999);
}

}  // namespace
}  // namespace kotae
