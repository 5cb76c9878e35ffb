// A GPU that fails after loading: that call and every later one are answered by the CPU model (loaded
// then), with one report; an input the GPU does not support does not switch; a CPU model that cannot
// load leaves the GPU's error standing. The GPU is a fault-injecting stand-in (no GPU here) over the
// real ONNX models, which answer until it is told to fail as the CUDA plugin would.
#include "model/gpu_failover.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "model/cross_encoder.h"
#include "model/sentence_encoder.h"
#include "support/test_data.h"

namespace kotae {
namespace {

const std::string kGpu = "KotaeCUDA (stand-in)";

// The ONNX model's results under the GPU's provider name, until `fail` is set: then the CUDA plugin's error.
class FailingGpuEncoder final : public Encoder {
 public:
  explicit FailingGpuEncoder(std::unique_ptr<Encoder> real) : real_(std::move(real)) {}
  std::atomic<bool> fail{false};
  mutable std::atomic<int> calls{0};

  std::size_t dimension() const override { return real_->dimension(); }
  std::string id() const override { return real_->id(); }
  std::string precision() const override { return "fp16"; }
  const std::string& provider() const override { return kGpu; }
  text::Encoding tokenize(std::string_view text) const override { return real_->tokenize(text); }
  const text::Tokenizer& tokenizer() const override { return real_->tokenizer(); }
  std::size_t max_length() const override { return real_->max_length(); }
  Result<Embeddings> embed_encoded(std::span<const text::Encoding> encodings) const override {
    ++calls;
    if (fail) return make_error(ErrorCode::model, "CUDA encoder: an illegal memory access was encountered");
    return real_->embed_encoded(encodings);
  }
  Result<Embeddings> embed_encoded_unnormalized(std::span<const text::Encoding>) const override {
    ++calls;
    return make_error(ErrorCode::unsupported, "the CUDA encoder always normalises");
  }

 private:
  std::unique_ptr<Encoder> real_;
};

class FailingGpuScorer final : public PairScorer {
 public:
  explicit FailingGpuScorer(std::unique_ptr<PairScorer> real) : real_(std::move(real)) {}
  std::atomic<bool> fail{false};

  std::string id() const override { return real_->id(); }
  const std::string& provider() const override { return kGpu; }
  text::Encoding encode(std::string_view query, std::string_view passage) const override {
    return real_->encode(query, passage);
  }
  Result<std::vector<float>> score_encoded(std::span<const text::Encoding> pairs) const override {
    if (fail) return make_error(ErrorCode::model, "CUDA cross-encoder: unspecified launch failure");
    return real_->score_encoded(pairs);
  }

 private:
  std::unique_ptr<PairScorer> real_;
};

std::unique_ptr<Encoder> onnx_encoder() {
  auto loaded = SentenceEncoder::load(testing::model_dir("all-minilm-l6-v2"));
  EXPECT_TRUE(loaded.ok()) << loaded.error().message;
  return std::move(*loaded);
}

const std::vector<std::string> kTexts = {"How do I report a bug in Debian?", "dpkg installs packages."};

TEST(GpuFailover, TheFailingCallAndEveryLaterOneRunOnTheCpu) {
  auto gpu = std::make_unique<FailingGpuEncoder>(onnx_encoder());
  auto* stand_in = gpu.get();
  std::atomic<int> cpu_loads{0};
  std::vector<GpuFailure> reports;
  auto model = with_cpu_failover(
      std::move(gpu),
      [&]() -> Result<std::unique_ptr<Encoder>> {
        ++cpu_loads;
        return onnx_encoder();
      },
      [&](const GpuFailure& f) { reports.push_back(f); });
  const auto expected = onnx_encoder()->embed(kTexts, TextRole::passage);
  ASSERT_TRUE(expected.ok());

  auto first = model->embed(kTexts, TextRole::passage);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(model->provider(), kGpu);
  EXPECT_EQ(cpu_loads, 0);  // the CPU twin loads only when needed

  stand_in->fail = true;
  for (int i = 0; i < 3; ++i) {
    auto after = model->embed(kTexts, TextRole::passage);
    ASSERT_TRUE(after.ok()) << after.error().message;  // never failed to the caller
    EXPECT_EQ(after->values, expected->values);
  }
  EXPECT_EQ(model->provider(), "CPUExecutionProvider");
  EXPECT_EQ(model->precision(), "fp32");
  EXPECT_EQ(stand_in->calls, 2);  // the GPU is not asked again after its failure
  EXPECT_EQ(cpu_loads, 1);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].model, model->id());
  EXPECT_EQ(reports[0].from, kGpu);
  EXPECT_EQ(reports[0].to, "CPUExecutionProvider");
  EXPECT_EQ(reports[0].reason, "CUDA encoder: an illegal memory access was encountered");
}

TEST(GpuFailover, ManyCallersFailingAtOnceSwitchOnce) {
  auto gpu = std::make_unique<FailingGpuEncoder>(onnx_encoder());
  gpu->fail = true;
  std::atomic<int> reports{0}, cpu_loads{0}, answered{0};
  auto model = with_cpu_failover(
      std::move(gpu),
      [&]() -> Result<std::unique_ptr<Encoder>> {
        ++cpu_loads;
        return onnx_encoder();
      },
      [&](const GpuFailure&) { ++reports; });
  std::vector<std::thread> callers;
  for (int i = 0; i < 8; ++i) {
    callers.emplace_back([&] {
      if (model->embed(kTexts, TextRole::query).ok()) ++answered;
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(answered, 8);
  EXPECT_EQ(reports, 1);
  EXPECT_EQ(cpu_loads, 1);
}

TEST(GpuFailover, AnUnsupportedInputIsNotAFailureAndACpuThatCannotLoadLeavesTheError) {
  auto gpu = std::make_unique<FailingGpuEncoder>(onnx_encoder());
  auto* stand_in = gpu.get();
  std::atomic<int> cpu_loads{0};
  auto model = with_cpu_failover(std::move(gpu), [&]() -> Result<std::unique_ptr<Encoder>> {
    ++cpu_loads;
    return make_error(ErrorCode::model, "model.onnx is gone");
  });
  std::vector<text::Encoding> encodings = {model->tokenize("hello")};
  auto unsupported = model->embed_encoded_unnormalized(encodings);
  ASSERT_FALSE(unsupported.ok());
  EXPECT_EQ(unsupported.error().code, ErrorCode::unsupported);
  EXPECT_EQ(cpu_loads, 0);
  EXPECT_EQ(model->provider(), kGpu);

  stand_in->fail = true;
  auto failed = model->embed_encoded(encodings);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message, "CUDA encoder: an illegal memory access was encountered");
  EXPECT_EQ(model->provider(), kGpu);
  stand_in->fail = false;  // the GPU came back: it answers again
  EXPECT_TRUE(model->embed_encoded(encodings).ok());
  EXPECT_EQ(cpu_loads, 1);
}

TEST(GpuFailover, ACrossEncoderMovesToTheCpuToo) {
  const auto dir = std::filesystem::path(KOTAE_CROSS_ENCODER_REFERENCE_DIR) / "model-1";
  auto load = [dir]() -> Result<std::unique_ptr<PairScorer>> {
    auto loaded = CrossEncoder::load(dir);
    if (!loaded) return loaded.error();
    return std::unique_ptr<PairScorer>(std::move(*loaded));
  };
  auto real = load();
  ASSERT_TRUE(real.ok()) << real.error().message;
  auto gpu = std::make_unique<FailingGpuScorer>(std::move(*real));
  gpu->fail = true;
  int reports = 0;
  auto model = with_cpu_failover(std::move(gpu), load, [&](const GpuFailure&) { ++reports; });
  const std::vector<std::string> passages = {"FTS5 is a full-text index.", "The quick brown fox."};
  auto scores = model->score("full text search", passages);
  auto expected = (*load())->score("full text search", passages);
  ASSERT_TRUE(scores.ok() && expected.ok());
  EXPECT_EQ(*scores, *expected);
  EXPECT_EQ(model->provider(), "CPUExecutionProvider");
  EXPECT_EQ(reports, 1);
}

}  // namespace
}  // namespace kotae
