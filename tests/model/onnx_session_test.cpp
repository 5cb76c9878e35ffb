#include <gtest/gtest.h>

#include <fstream>

#include "model/onnx_session.h"
#include "model/sentence_encoder.h"
#include "support/test_data.h"

namespace kotae {
namespace {

const std::filesystem::path kModel = testing::model_dir("all-minilm-l6-v2-int8") / "model.onnx";

TEST(OnnxSession, UnavailableProvidersAreSkippedInPriorityOrder) {
  const auto empty_dir = testing::fresh_temp_dir("kotae-providers");
  OnnxSessionOptions options;
  options.providers = {"tensorrt", "cuda", "cpu"};
  options.provider_dir = empty_dir.string();
  auto session = OnnxSession::open(kModel, options);
  ASSERT_TRUE(session.ok()) << session.error().message;
  EXPECT_EQ((*session)->provider(), "CPUExecutionProvider");
  const auto& skipped = (*session)->skipped_providers();
  ASSERT_EQ(skipped.size(), 2u);
  EXPECT_EQ(skipped[0].rfind("tensorrt: provider library", 0), 0u) << skipped[0];
  EXPECT_EQ(skipped[1].rfind("cuda: provider library", 0), 0u) << skipped[1];
  std::filesystem::remove_all(empty_dir);
}

TEST(OnnxSession, ABrokenProviderLibraryFallsBackToCpu) {
  const auto dir = testing::fresh_temp_dir("kotae-broken-provider");
  std::ofstream(dir / "libonnxruntime_providers_cuda.so") << "not a shared library";
  OnnxSessionOptions options;
  options.providers = {"cuda", "bogus"};  // no explicit cpu: it is the last resort anyway
  options.provider_dir = dir.string();
  auto session = OnnxSession::open(kModel, options);
  ASSERT_TRUE(session.ok()) << session.error().message;
  EXPECT_EQ((*session)->provider(), "CPUExecutionProvider");
  ASSERT_EQ((*session)->skipped_providers().size(), 2u);
  EXPECT_EQ((*session)->skipped_providers()[0].rfind("cuda: cannot load", 0), 0u) << (*session)->skipped_providers()[0];
  EXPECT_EQ((*session)->skipped_providers()[1], "bogus: unknown provider");
  std::filesystem::remove_all(dir);
}

TEST(OnnxSession, ReportsTheInputsAndOutputsTheModelDeclares) {
  auto session = OnnxSession::open(kModel, {});
  ASSERT_TRUE(session.ok());
  EXPECT_EQ((*session)->input_names(), (std::vector<std::string>{"input_ids", "attention_mask", "token_type_ids"}));
  EXPECT_EQ((*session)->output_shape("last_hidden_state"), (std::vector<std::int64_t>{-1, -1, 384}));
  EXPECT_TRUE((*session)->output_shape("no_such_output").empty());
}

TEST(OnnxSession, AFileThatIsNotAModelGivesAClearError) {
  const auto dir = testing::fresh_temp_dir("kotae-not-onnx");
  std::ofstream(dir / "model.onnx") << "garbage";
  auto session = OnnxSession::open(dir / "model.onnx", {});
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.error().code, ErrorCode::model);
  EXPECT_NE(session.error().message.find((dir / "model.onnx").string()), std::string::npos);
  std::filesystem::remove_all(dir);
}

// Graph optimisation changes how the model is computed, not what it computes.
TEST(OnnxSession, OptimisationLevelsAndDeterministicModeAgree) {
  const std::vector<std::string> texts = {"graph optimisation must not change results", "second text"};
  std::vector<Embeddings> results;
  for (auto level : {GraphOptimization::none, GraphOptimization::basic, GraphOptimization::all}) {
    EncoderOptions options;
    options.session.optimization = level;
    options.session.deterministic = true;
    auto encoder = SentenceEncoder::load(testing::model_dir("all-minilm-l6-v2"), options);
    ASSERT_TRUE(encoder.ok()) << encoder.error().message;
    auto first = (*encoder)->embed(texts, TextRole::passage);
    auto second = (*encoder)->embed(texts, TextRole::passage);
    ASSERT_TRUE(first.ok() && second.ok());
    EXPECT_EQ(first->values, second->values) << "deterministic mode gave two different answers";
    results.push_back(std::move(*first));
  }
  for (std::size_t i = 0; i < results[0].values.size(); ++i) {
    ASSERT_NEAR(results[0].values[i], results[2].values[i], 2e-5) << "at " << i;
    ASSERT_NEAR(results[1].values[i], results[2].values[i], 2e-5) << "at " << i;
  }
}

}  // namespace
}  // namespace kotae
