// The precision an embedding model runs at: the default model's static INT8 variant where the CPU has
// VNNI, FP32 elsewhere, KOTAE_PRECISION choosing over both; one model, one id, close vectors.

#include <gtest/gtest.h>

#include <cstdlib>

#include "model/encoder_loading.h"
#include "platform/cpu_features.h"
#include "support/test_data.h"

namespace kotae {
namespace {

using Precision = EncoderOptions::Precision;

class KotaePrecision {
 public:
  explicit KotaePrecision(const char* value) {
    if (value) {
      setenv("KOTAE_PRECISION", value, 1);
    } else {
      unsetenv("KOTAE_PRECISION");
    }
  }
  ~KotaePrecision() { unsetenv("KOTAE_PRECISION"); }
};

TEST(EncoderPrecision, StaticInt8WhereTheCpuHasVnniUnlessKotaePrecisionSays) {
  const auto model = testing::model_dir(kDefaultEmbeddingModel);
  const CpuFeatures cpu = detect_cpu_features();
  {
    KotaePrecision unset(nullptr);
    const bool vnni = cpu.avx512_vnni || cpu.avx_vnni || cpu.amx_int8;
    EXPECT_EQ(*cpu_precision(model), vnni ? Precision::int8 : Precision::fp32) << "CPU " << cpu.brand;
  }
  {
    KotaePrecision fp32("fp32");
    EXPECT_EQ(*cpu_precision(model), Precision::fp32);
  }
  {
    KotaePrecision int8("int8");
    EXPECT_EQ(*cpu_precision(model), Precision::int8);
    // A model without a static INT8 variant runs its own file.
    EXPECT_EQ(*cpu_precision(testing::model_dir("e5-small-v2-int8")), Precision::fp32);
    auto loaded = load_best_encoder(model);
    ASSERT_TRUE(loaded) << loaded.error().message;
    if ((*loaded)->provider() == "CPUExecutionProvider") {
      EXPECT_EQ((*loaded)->precision(), "int8");
    }
    EXPECT_EQ((*loaded)->id(), "all-minilm-l6-v2/fp32") << "one model at two precisions: collections are shared";
  }
  {
    KotaePrecision wrong("fp8");
    EXPECT_EQ(cpu_precision(model).error().code, ErrorCode::invalid_argument);
    EXPECT_FALSE(load_best_encoder(model));
  }
}

TEST(EncoderPrecision, TheStaticInt8VariantStaysCloseToFp32) {
  EncoderOptions fp32_options, int8_options;
  int8_options.precision = Precision::int8;
  auto fp32 = SentenceEncoder::load(testing::model_dir(kDefaultEmbeddingModel), fp32_options);
  auto int8 = SentenceEncoder::load(testing::model_dir(kDefaultEmbeddingModel), int8_options);
  ASSERT_TRUE(fp32 && int8);
  EXPECT_EQ((*int8)->precision(), "int8");
  const std::string texts[] = {
      "How do I install a package?",
      "Debian's package manager resolves dependencies and installs every package a program needs.",
      "SQLite works great as the database engine for most low to medium traffic websites."};
  auto a = (*fp32)->embed(texts, TextRole::passage);
  auto b = (*int8)->embed(texts, TextRole::passage);
  ASSERT_TRUE(a && b);
  for (std::size_t i = 0; i < a->size(); ++i) {
    double cosine = 0;
    for (std::size_t d = 0; d < a->dimension; ++d) cosine += double(a->row(i)[d]) * b->row(i)[d];
    EXPECT_GT(cosine, 0.97) << texts[i];
    EXPECT_LT(cosine, 0.99999) << "the INT8 file ran, not the FP32 one";
  }
}

}  // namespace
}  // namespace kotae
