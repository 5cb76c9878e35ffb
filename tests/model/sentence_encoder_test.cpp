#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <span>

#include "model/sentence_encoder.h"
#include "support/test_data.h"

namespace kotae {
namespace {

double cosine(std::span<const float> a, std::span<const float> b) {
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    dot += double(a[i]) * b[i];
    na += double(a[i]) * a[i];
    nb += double(b[i]) * b[i];
  }
  return dot / std::sqrt(na * nb);
}

double norm(std::span<const float> v) {
  double sum = 0;
  for (float x : v) sum += double(x) * x;
  return std::sqrt(sum);
}

class SentenceEncoderTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SentenceEncoderTest, ParaphraseIsCloserThanAnUnrelatedSentence) {
  auto encoder = SentenceEncoder::load(testing::model_dir(GetParam()));
  ASSERT_TRUE(encoder.ok()) << encoder.error().message;
  EXPECT_EQ((*encoder)->provider(), "CPUExecutionProvider");
  const std::vector<std::string> texts = {
      "How do I upgrade my Debian system to the next release?",
      "What is the procedure for moving a Debian installation to a newer version?",
      "The recipe needs two eggs, flour and a pinch of salt.",
  };
  auto vectors = (*encoder)->embed(texts, TextRole::passage);
  ASSERT_TRUE(vectors.ok()) << vectors.error().message;
  ASSERT_EQ(vectors->size(), 3u);
  ASSERT_EQ(vectors->dimension, 384u);
  for (size_t i = 0; i < vectors->size(); ++i) EXPECT_NEAR(norm(vectors->row(i)), 1.0, 1e-5);
  const double paraphrase = cosine(vectors->row(0), vectors->row(1));
  const double unrelated = cosine(vectors->row(0), vectors->row(2));
  EXPECT_GT(paraphrase, 0.6);
  EXPECT_LT(unrelated, 0.2);
  EXPECT_GT(paraphrase, unrelated + 0.4);
}

TEST_P(SentenceEncoderTest, PaddingInABatchDoesNotChangeAVector) {
  auto encoder = SentenceEncoder::load(testing::model_dir(GetParam()));
  ASSERT_TRUE(encoder.ok()) << encoder.error().message;
  const std::vector<std::string> alone = {"short text"};
  const std::vector<std::string> batch = {"short text",
                                          "a much longer text that forces padding of the short one in the batch"};
  auto a = (*encoder)->embed(alone, TextRole::passage);
  auto b = (*encoder)->embed(batch, TextRole::passage);
  ASSERT_TRUE(a.ok() && b.ok());
  // fp32 is exact up to rounding. The int8 model quantises activations dynamically with one scale per
  // tensor, so the other rows of a batch move its result slightly (measured: cosine 0.9935).
  const bool int8 = (*encoder)->manifest().precision == "int8";
  EXPECT_GT(cosine(a->row(0), b->row(0)), int8 ? 0.99 : 0.99999);
}

INSTANTIATE_TEST_SUITE_P(DefaultModels, SentenceEncoderTest,
                         ::testing::Values("all-minilm-l6-v2", "all-minilm-l6-v2-int8"));

TEST(SentenceEncoderLoad, RefusesAModelWhoseFileWasTamperedWith) {
  const auto source = testing::model_dir("all-minilm-l6-v2");
  const auto dir = testing::fresh_temp_dir("kotae-tampered");
  std::filesystem::copy_file(source / "manifest.json", dir / "manifest.json");
  std::filesystem::copy_file(source / "tokenizer.json", dir / "tokenizer.json");
  std::ofstream(dir / "model.onnx") << "not an onnx model";
  auto encoder = SentenceEncoder::load(dir);
  ASSERT_FALSE(encoder.ok());
  EXPECT_EQ(encoder.error().code, ErrorCode::corrupt);
  EXPECT_NE(encoder.error().message.find("model.onnx"), std::string::npos) << encoder.error().message;
  std::filesystem::remove_all(dir);
}

TEST(SentenceEncoderLoad, MissingModelIsNotFound) {
  auto encoder = SentenceEncoder::load("/nonexistent/kotae/model");
  ASSERT_FALSE(encoder.ok());
  EXPECT_EQ(encoder.error().code, ErrorCode::not_found);
}

}  // namespace
}  // namespace kotae

namespace kotae {
namespace {

// The FP16 variant setup derives for GPUs with tensor cores: the same vectors within FP16's precision.
TEST(SentenceEncoderPrecision, TheFp16VariantAgreesWithFp32) {
  EncoderOptions fp16;
  fp16.precision = EncoderOptions::Precision::fp16;
  auto half = SentenceEncoder::load(testing::model_dir("all-minilm-l6-v2"), fp16);
  ASSERT_TRUE(half.ok()) << half.error().message;
  auto full = SentenceEncoder::load(testing::model_dir("all-minilm-l6-v2"));
  ASSERT_TRUE(full.ok()) << full.error().message;
  const std::vector<std::string> texts = {"Is SQLite threadsafe?", "How do I create an AUTOINCREMENT field?",
                                          "A much longer sentence about databases, files, locks and the journal, "
                                          "repeated to make the sequence a little longer than the others."};
  auto a = (*half)->embed(texts, TextRole::passage);
  auto b = (*full)->embed(texts, TextRole::passage);
  ASSERT_TRUE(a.ok() && b.ok());
  for (std::size_t i = 0; i < texts.size(); ++i) EXPECT_GE(cosine(a->row(i), b->row(i)), 0.999) << texts[i];
}

TEST(SentenceEncoderPrecision, AModelWithoutAnFp16VariantSaysSo) {
  EncoderOptions fp16;
  fp16.precision = EncoderOptions::Precision::fp16;
  auto encoder = SentenceEncoder::load(testing::model_dir("all-minilm-l6-v2-int8"), fp16);
  ASSERT_FALSE(encoder.ok());
  EXPECT_NE(encoder.error().message.find("onnx-fp16"), std::string::npos) << encoder.error().message;
}

}  // namespace
}  // namespace kotae
